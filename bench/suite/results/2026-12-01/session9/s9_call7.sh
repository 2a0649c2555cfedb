#!/usr/bin/env bash
# ninth session, device call 7: the API's write with 8 ranks, one independent MPI-IO write per rank (default) vs collective buffering
# chunk) and MPI-IO component (OMPIO vs ROMIO), after the early allocation
t0=$(date +%s); root=$PWD; b=$root/build-mpi-bench; log=/tmp/c7; rm -rf $log; mkdir -p $log
. bench/mpi/phdf5_env.sh; h5fz_phdf5_setup .devrun/phdf5 $b > $log/phdf5.txt || { cat $log/phdf5.txt; exit 1; }
. tests/gpu/devdata.sh; h5fz_use_devdata "$root"; data=${H5FZ_DATA_DIR}
cmake -S . -B $b -DCMAKE_BUILD_TYPE=Release -DH5FZ_MPI=ON -DH5FZ_DATA_DIR="$data" -DH5FZ_EMBED_KERNELS=OFF "${h5fz_phdf5_cmake_args[@]}" > $log/cmake.log 2>&1 || { tail $log/cmake.log; exit 1; }
cmake --build $b -j16 --target h5fz_bench_mpi h5fz_plugin > $log/build.log 2>&1 || { tail $log/build.log; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
export H5FZ_CACHE_DIR=$b/jit-cache HDF5_PLUGIN_PATH=$b/plugin H5FZ_MPI_PROFILE=1
mpirun -n 1 $b/bin/h5fz_bench_mpi --data "$data" --gib-per-rank 0.01 --reps 1 --dir /dev/shm > /dev/null 2>&1
echo "built+warm after $(( $(date +%s) - t0 )) s"
one() { local label=$1 n=$2; shift 2
  env "$@" timeout 100 mpirun -n $n $b/bin/h5fz_bench_mpi --data "$data" --gib-per-rank 1 --reps 1 --dir /dev/shm --label $label --paths api_host,api_pinned,api_device ${ARGS:-} > $log/$label.json 2> $log/$label.err
  echo "== $label ($n ranks, rc $?): $(grep -o '"path": "[a-z_]*", "write_s": [0-9.]*, "read_s": [0-9.]*, "write_GBps": [0-9.]*' $log/$label.json | sed 's/"write_s.*"write_GBps"/w/' | tr '\n' ' ')"
  grep profile $log/$label.err | sed -n '2p;4p;6p' | sed 's/.*s): //' | cut -c1-80; }
one independent_io_8 8 X=1
one collective_io_8 8 H5FZ_MPI_IO=collective
one independent_io_4 4 X=1
export CUDA_MPS_PIPE_DIRECTORY=/tmp/h5fz-mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/h5fz-mps-log; mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY
nvidia-cuda-mps-control -d && { one independent_io_8_mps 8 X=1; echo quit | nvidia-cuda-mps-control; }
echo "total $(( $(date +%s) - t0 )) s"
tar czf $OUT/c7.tgz -C $log .
