#!/usr/bin/env bash
# tenth session, device call 5: is one shared file's write the ceiling? N processes writing 331 MB into one file vs a file each (/dev/shm, /tmp); the API's 8-rank write with its files in /tmp (the VM's disk) vs /dev/shm
# (the next piece encoded while HDF5 writes the last), H5FZ_MPI_PIECE_BYTES 0 (before) / 256 / 128 / 64 MiB,
# 8 ranks x 1 GiB, with and without MPS; 1 rank; and the MPI tests with the GPU
t0=$(date +%s); root=$PWD; b=$root/build-mpi-bench; log=/tmp/c5; rm -rf $log; mkdir -p $log
. bench/mpi/phdf5_env.sh; h5fz_phdf5_setup .devrun/phdf5 $b > $log/phdf5.txt || { cat $log/phdf5.txt; exit 1; }
. tests/gpu/devdata.sh; h5fz_use_devdata "$root"; data=${H5FZ_DATA_DIR}
cmake -S . -B $b -DCMAKE_BUILD_TYPE=Release -DH5FZ_MPI=ON -DH5FZ_DATA_DIR="$data" -DH5FZ_EMBED_KERNELS=OFF "${h5fz_phdf5_cmake_args[@]}" -DH5FZ_PYTHON="$(command -v python3)" > $log/cmake.log 2>&1 || { tail $log/cmake.log; exit 1; }
cmake --build $b -j16 --target h5fz_bench_mpi h5fz_plugin h5fz_mpi_tests > $log/build.log 2>&1 || { tail $log/build.log; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
export H5FZ_CACHE_DIR=$b/jit-cache HDF5_PLUGIN_PATH=$b/plugin H5FZ_MPI_PROFILE=1
mpirun -n 1 $b/bin/h5fz_bench_mpi --data "$data" --gib-per-rank 0.01 --reps 1 --dir /dev/shm > /dev/null 2>&1
echo "built+warm after $(( $(date +%s) - t0 )) s"
one() { local label=$1 n=$2; shift 2
  env "$@" timeout 100 mpirun -n $n $b/bin/h5fz_bench_mpi --data "$data" --gib-per-rank 1 --reps ${REPS:-3} --dir /dev/shm --label $label --paths api_host,api_pinned,api_device ${ARGS:-} > $log/$label.json 2> $log/$label.err
  echo "== $label ($n ranks, rc $?, $(( $(date +%s) - t0 )) s): $(grep -o '"path": "[a-z_]*", "write_s": [0-9.]*, "read_s": [0-9.]*, "write_GBps": [0-9.]*' $log/$label.json | sed 's/"write_s.*"write_GBps"/w/' | tr '\n' ' ')"
  :; }
df -hT /dev/shm /tmp | tee $log/df.txt
python3 .devrun/shared_write.py 331 /dev/shm /tmp 2>&1 | tee $log/shared_write.txt
mkdir -p /tmp/h5fz-bench
for round in 1 2; do one shm_8_r$round 8 X=1; ARGS="--dir /tmp/h5fz-bench" one disk_8_r$round 8 X=1; done
echo "total $(( $(date +%s) - t0 )) s"
tar czf $OUT/c5.tgz -C $log .
