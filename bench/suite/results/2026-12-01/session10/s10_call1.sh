#!/usr/bin/env bash
# tenth session, device call 1: the collective API's write with the part in pieces
# (the next piece encoded while HDF5 writes the last), H5FZ_MPI_PIECE_BYTES 0 (before) / 256 / 128 / 64 MiB,
# 8 ranks x 1 GiB, with and without MPS; 1 rank; and the MPI tests with the GPU
t0=$(date +%s); root=$PWD; b=$root/build-mpi-bench; log=/tmp/c1; rm -rf $log; mkdir -p $log
. bench/mpi/phdf5_env.sh; h5fz_phdf5_setup .devrun/phdf5 $b > $log/phdf5.txt || { cat $log/phdf5.txt; exit 1; }
. tests/gpu/devdata.sh; h5fz_use_devdata "$root"; data=${H5FZ_DATA_DIR}
cmake -S . -B $b -DCMAKE_BUILD_TYPE=Release -DH5FZ_MPI=ON -DH5FZ_DATA_DIR="$data" -DH5FZ_EMBED_KERNELS=OFF "${h5fz_phdf5_cmake_args[@]}" > $log/cmake.log 2>&1 || { tail $log/cmake.log; exit 1; }
cmake --build $b -j16 --target h5fz_bench_mpi h5fz_plugin h5fz_mpi_tests > $log/build.log 2>&1 || { tail $log/build.log; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
export H5FZ_CACHE_DIR=$b/jit-cache HDF5_PLUGIN_PATH=$b/plugin H5FZ_MPI_PROFILE=1
mpirun -n 1 $b/bin/h5fz_bench_mpi --data "$data" --gib-per-rank 0.01 --reps 1 --dir /dev/shm > /dev/null 2>&1
echo "built+warm after $(( $(date +%s) - t0 )) s"
one() { local label=$1 n=$2; shift 2
  env "$@" timeout 100 mpirun -n $n $b/bin/h5fz_bench_mpi --data "$data" --gib-per-rank 1 --reps ${REPS:-2} --dir /dev/shm --label $label --paths api_host,api_pinned,api_device > $log/$label.json 2> $log/$label.err
  echo "== $label ($n ranks, rc $?, $(( $(date +%s) - t0 )) s): $(grep -o '"path": "[a-z_]*", "write_s": [0-9.]*, "read_s": [0-9.]*, "write_GBps": [0-9.]*' $log/$label.json | sed 's/"write_s.*"write_GBps"/w/' | tr '\n' ' ')"
  grep profile $log/$label.err | sed 's/.*s): //' | cut -c1-150; }
one pieces0_8 8 H5FZ_MPI_PIECE_BYTES=0
one pieces256_8 8 X=1
one pieces128_8 8 H5FZ_MPI_PIECE_BYTES=134217728
one pieces64_8 8 H5FZ_MPI_PIECE_BYTES=67108864
one pieces256_1 1 X=1
export CUDA_MPS_PIPE_DIRECTORY=/tmp/h5fz-mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/h5fz-mps-log; mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY
nvidia-cuda-mps-control -d && { one pieces0_8_mps 8 H5FZ_MPI_PIECE_BYTES=0; one pieces256_8_mps 8 X=1; one pieces64_8_mps 8 H5FZ_MPI_PIECE_BYTES=67108864; echo quit | nvidia-cuda-mps-control; }
unset H5FZ_MPI_PROFILE
H5FZ_DEVICE=gpu timeout 150 ctest --test-dir $b -L mpi -R '^mpi[.]api_' --output-on-failure -V > $log/ctest-mpi-api.log 2>&1
echo "ctest api (GPU) rc $?: $(grep -c ' Passed ' $log/ctest-mpi-api.log) passed; $(grep -o 'abs_slabs_device[a-z_]*: [^,]*' $log/ctest-mpi-api.log | sort -u | tr '\n' ';')"
grep -h '\*\*\*\|FAIL' $log/ctest-mpi-api.log | head -5
echo "total $(( $(date +%s) - t0 )) s"
tar czf $OUT/c1.tgz -C $log .
