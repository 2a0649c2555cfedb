#!/usr/bin/env bash
# ninth session, device call 3: where the collective filtered write's time goes on the H200 (8 ranks):
# malloc kept, MPS, ROMIO instead of OMPIO, 1 rank forced through the filtered write, 2/4 ranks
t0=$(date +%s); root=$PWD; b=$root/build-mpi-bench; log=/tmp/c3; rm -rf $log; mkdir -p $log
. bench/mpi/phdf5_env.sh; h5fz_phdf5_setup .devrun/phdf5 $b > $log/phdf5.txt || { cat $log/phdf5.txt; exit 1; }
. tests/gpu/devdata.sh; h5fz_use_devdata "$root"; data=${H5FZ_DATA_DIR}
cmake -S . -B $b -DCMAKE_BUILD_TYPE=Release -DH5FZ_MPI=ON -DH5FZ_DATA_DIR="$data" -DH5FZ_EMBED_KERNELS=OFF "${h5fz_phdf5_cmake_args[@]}" > $log/cmake.log 2>&1 || { tail $log/cmake.log; exit 1; }
cmake --build $b -j16 --target h5fz_bench_mpi h5fz_plugin > $log/build.log 2>&1 || { tail $log/build.log; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
export H5FZ_CACHE_DIR=$b/jit-cache HDF5_PLUGIN_PATH=$b/plugin H5FZ_MPI_PROFILE=1
K=glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=17179869184
mpirun -n 1 $b/bin/h5fz_bench_mpi --data "$data" --gib-per-rank 0.01 --reps 1 --dir /dev/shm > /dev/null 2>&1
echo "built+warm after $(( $(date +%s) - t0 )) s"
one() { # label n env... : api paths
  local label=$1 n=$2; shift 2
  env "$@" timeout 120 mpirun -n $n $b/bin/h5fz_bench_mpi --data "$data" --gib-per-rank 1 --reps 1 --dir /dev/shm --chunk-planes ${CP:-16} --paths ${PATHS:-api_host,api_pinned,api_device} --label $label > $log/$label.json 2> $log/$label.err
  echo "== $label ($n ranks, rc $?): $(grep -o '"path": "[a-z_]*", "write_s": [0-9.]*, "read_s": [0-9.]*, "write_GBps": [0-9.]*' $log/$label.json | sed 's/"write_s.*write_GBps"//' | tr '\n' ' ')"
  grep profile $log/$label.err | tail -2 | sed 's/.*s): //' | cut -c1-110
}
one filtered_1rank_kept 1 GLIBC_TUNABLES=$K H5FZ_MPI_WRITE=filtered
one kept_2 2 GLIBC_TUNABLES=$K
one kept_4 4 GLIBC_TUNABLES=$K
one kept_8 8 GLIBC_TUNABLES=$K
one kept_8_romio 8 GLIBC_TUNABLES=$K OMPI_MCA_io=romio321
one kept_8_thp 8 GLIBC_TUNABLES=$K:glibc.malloc.hugetlb=1
CP=48 one kept_8_48planes 8 GLIBC_TUNABLES=$K
export CUDA_MPS_PIPE_DIRECTORY=/tmp/h5fz-mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/h5fz-mps-log; mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY
nvidia-cuda-mps-control -d && { one kept_8_mps 8 GLIBC_TUNABLES=$K; PATHS=filter one kept_8_mps_filter 8 GLIBC_TUNABLES=$K; echo quit | nvidia-cuda-mps-control; }
echo "total $(( $(date +%s) - t0 )) s"
tar czf $OUT/c3.tgz -C $log .
