#!/usr/bin/env bash
# The MPI benchmark and GPU checks on one GPU machine (the H200 node case):
# N = 1, 2, 4, 8 ranks sharing the GPU, without and with the MPS daemon,
# filter path and collective API (host, page-locked host and device
# arrays), then 8 ranks under a small H5FZ_GPU_MEMORY_LIMIT (the GPU "runs
# out": every chunk must still be written, by the CPU). Before that, the MPI
# tests (tests/mpi, with the device-array case) in the same build.
#
#   bench/mpi/run.sh [--gib-per-rank G] [--reps R]        (from the repository root)
#
# Needs an MPI (mpicc, mpirun) and a parallel HDF5 (h5pcc, or pkg-config
# hdf5-openmpi / hdf5-mpich), else it says what is missing and exits 3.
# Data: $H5FZ_DATA_DIR, else .devdata/ in the repository (files or .gz,
# as for tests/gpu/run.sh), else ../shared/data. Writes to $OUT (else
# build-mpi-bench/out): run.log, nvidia-smi.txt, ctest-mpi.log,
# bench_mpi_<label>_n<N>.json, summary.json and summary.md (each figure
# beside the one-rank figure; bench/mpi/summarize.py).
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${H5FZ_BENCH_BUILD:-$root/build-mpi-bench}
out=${OUT:-$build/out}
mkdir -p "$out"
exec > >(tee "$out/run.log") 2>&1
gib=1
reps=2
while [ $# -gt 0 ]; do
  case "$1" in
    --gib-per-rank) gib=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    *) echo "usage: bench/mpi/run.sh [--gib-per-rank G] [--reps R]" >&2; exit 2 ;;
  esac
done
missing=""
command -v mpicc > /dev/null || missing="$missing mpicc"
command -v mpirun > /dev/null || missing="$missing mpirun"
if ! command -v h5pcc > /dev/null && ! pkg-config --exists hdf5-openmpi 2> /dev/null && ! pkg-config --exists hdf5-mpich 2> /dev/null; then
  missing="$missing parallel-HDF5(h5pcc)"
fi
if [ -n "$missing" ]; then
  echo "bench/mpi/run.sh: missing:$missing (Debian/Ubuntu: libhdf5-openmpi-dev openmpi-bin); nothing run" | tee "$out/missing.txt"
  exit 3
fi
if [ -z "${H5FZ_DATA_DIR:-}" ] && [ -d "$root/.devdata" ]; then
  export H5FZ_DATA_DIR=/tmp/h5fz-devdata
  mkdir -p "$H5FZ_DATA_DIR"
  for f in "$root"/.devdata/*; do
    case "$f" in
      *.gz) gunzip -c "$f" > "$H5FZ_DATA_DIR/$(basename "${f%.gz}")" ;;
      *) cp "$f" "$H5FZ_DATA_DIR/" ;;
    esac
  done
fi
data=${H5FZ_DATA_DIR:-$root/../shared/data}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
# containers often forbid the cross-process copies Open MPI's shared-memory transport tries first
export OMPI_MCA_btl_vader_single_copy_mechanism=none
# the files (compressed, all paths kept until the chunk comparison): /dev/shm when it has room
filedir=$build/files
if [ "$(df --output=avail -B1 /dev/shm 2> /dev/null | tail -1)" -gt $((16 * 1024 * 1024 * 1024)) ] 2> /dev/null; then
  filedir=/dev/shm
fi
mkdir -p "$filedir"
echo "files in $filedir"
export H5FZ_CACHE_DIR=${H5FZ_CACHE_DIR:-$build/jit-cache} HDF5_PLUGIN_PATH=$build/plugin
{ nvidia-smi; nvidia-smi --query-gpu=name,memory.total,clocks.max.memory --format=csv; } > "$out/nvidia-smi.txt" 2>&1
mpirun --version 2>&1 | head -2
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DH5FZ_MPI=ON -DH5FZ_DATA_DIR="$data" \
  -DH5FZ_PYTHON="${H5FZ_PYTHON:-$(command -v python3)}" > "$out/cmake.log" 2>&1 || { tail -30 "$out/cmake.log"; exit 1; }
cmake --build "$build" -j"$(nproc)" --target h5fz_bench_mpi h5fz_mpi_tests > "$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
ctest --test-dir "$build" -L mpi --output-on-failure -V > "$out/ctest-mpi.log" 2>&1
echo "ctest -L mpi: exit $? ($(grep -c 'Passed' "$out/ctest-mpi.log") passed lines; device case:" \
  "$(grep -m1 -o 'abs_slabs_device: [^,]*' "$out/ctest-mpi.log" || echo none))"

bench() { # bench LABEL N [ARGS...]
  local label=$1 n=$2
  shift 2
  echo "== $label, $n ranks"
  H5FZ_MPI_PROFILE=1 timeout 900 mpirun -n "$n" ${MPIEXEC_FLAGS:-} "$build/bin/h5fz_bench_mpi" --data "$data" \
    --gib-per-rank "$gib" --reps "$reps" --dir "$filedir" --label "$label" "$@" > "$out/bench_mpi_${label}_n$n.json"
  echo "   exit $?; $(grep -o '"path": "[a-z_]*", "write_s[^}]*' "$out/bench_mpi_${label}_n$n.json" | tr '\n' ' ' | cut -c1-900)"
}
for n in 1 2 4 8; do bench no_mps "$n"; done
export CUDA_MPS_PIPE_DIRECTORY=/tmp/h5fz-mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/h5fz-mps-log
mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
if nvidia-cuda-mps-control -d; then
  for n in 1 2 4 8; do bench mps "$n"; done
  echo quit | nvidia-cuda-mps-control
else
  echo "nvidia-cuda-mps-control -d failed: no MPS figures"
fi
unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
# a GPU that "runs out of memory": 64 MiB allowed, host arrays must still be written (by the CPU)
H5FZ_GPU_MEMORY_LIMIT=67108864 H5FZ_QUIET=1 bench gpu_memory_limit_64MiB 8 --paths filter,api_host
python3 "$root/bench/mpi/summarize.py" "$out" | tee "$out/summary.md"
