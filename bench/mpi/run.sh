#!/usr/bin/env bash
# The MPI benchmark and GPU checks on one GPU machine (the H200 node case):
# N = 1, 2, 4, 8 ranks sharing the GPU, without and with the MPS daemon,
# filter path and collective API (host, page-locked host and device
# arrays), then 8 ranks under a small H5FZ_GPU_MEMORY_LIMIT (the GPU "runs
# out": every chunk must still be written, by the CPU). Before that, the MPI
# tests (tests/mpi, with the device-array case) in the same build.
#
#   bench/mpi/run.sh [--gib-per-rank G] [--reps R] [--layout mpi|node|both] [--phdf5 DIR] [--embed]
#   (from the repository root)
#
# Layouts: mpi = one shared file through parallel HDF5 (h5fz_bench_mpi,
# mpirun; needs an MPI with mpicc and a parallel HDF5: h5pcc, or pkg-config
# hdf5-openmpi / hdf5-mpich); node = N plain processes, a file each, through
# the serial HDF5 (h5fz_bench_node; no MPI at all), for a machine without a
# parallel HDF5. Default: mpi where it can build, else node (saying what is
# missing).
# A self-built parallel HDF5 (docs/mpi.md "A self-built parallel HDF5"):
# --phdf5 DIR, else $H5FZ_PHDF5, else .devrun/phdf5 in the repository when
# it is there (an install prefix carried to the machine: bench/mpi/phdf5_env.sh
# copies it into the build folder and makes it usable there, with a stand-in
# mpicc where the machine's cannot include mpi.h). The mpi layout then also
# runs h5fz_bench_mpi_direct_chunk (which H5Dwrite_chunk patterns that HDF5
# allows under MPI-IO: direct_chunk_n8.jsonl; H5FZ_DIRECT_CHUNK_RANKS="2 8"
# for other rank counts) and heat3d_mpi on 8 ranks.
# The GPU kernels are compiled by the JIT into one disk cache the ranks share
# (H5FZ_CACHE_DIR), warmed by a small untimed run first; --embed builds them
# into the library instead (H5FZ_EMBED_KERNELS=ON: minutes of NVRTC at build).
# Data: $H5FZ_DATA_DIR, else .devdata/ in the repository (files or .gz,
# as for tests/gpu/run.sh), else ../shared/data. Writes to $OUT (else
# build-mpi-bench/out): run.log (with each phase's start time), nvidia-smi.txt,
# cmake.log, build.log, warmup.json, ctest-mpi.log and ctest-mpi-api.log,
# direct_chunk_n8.jsonl, heat3d_mpi_n8.log, bench_mpi_<label>_n<N>.json,
# summary.json and summary.md (each figure beside the one-rank figure;
# bench/mpi/summarize.py), direct_chunk.json, shared_file_write.txt.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${H5FZ_BENCH_BUILD:-$root/build-mpi-bench}
out=${OUT:-$build/out}
mkdir -p "$out"
exec > >(tee "$out/run.log") 2>&1
gib=1
reps=2
layout=""
phdf5=${H5FZ_PHDF5:-}
embed=OFF
while [ $# -gt 0 ]; do
  case "$1" in
    --gib-per-rank) gib=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --layout) layout=$2; shift 2 ;;
    --phdf5) phdf5=$2; shift 2 ;;
    --embed) embed=ON; shift ;;
    *) echo "usage: bench/mpi/run.sh [--gib-per-rank G] [--reps R] [--layout mpi|node|both] [--phdf5 DIR] [--embed]" >&2; exit 2 ;;
  esac
done
SECONDS=0
phase() { echo "-- [$SECONDS s] $*"; }
# glibc's malloc: large blocks from the heap (up to 32 MiB) and freed memory kept (up to 16 GiB)
H5FZ_MALLOC_TUNABLES=${H5FZ_MALLOC_TUNABLES:-glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=17179869184}
if [ -z "$phdf5" ] && [ -f "$root/.devrun/phdf5/include/hdf5.h" ]; then phdf5=$root/.devrun/phdf5; fi
missing=""
h5fz_phdf5_cmake_args=()
h5fz_phdf5_prefix=""
if [ -n "$phdf5" ]; then
  . "$root/bench/mpi/phdf5_env.sh"
  h5fz_phdf5_setup "$phdf5" "$build" || missing="$missing parallel-HDF5($phdf5: see the line above)"
else
  command -v mpicc > /dev/null || missing="$missing mpicc"
  if ! command -v h5pcc > /dev/null && ! pkg-config --exists hdf5-openmpi 2> /dev/null && ! pkg-config --exists hdf5-mpich 2> /dev/null; then
    missing="$missing parallel-HDF5(h5pcc; or carry one: --phdf5 DIR, docs/mpi.md)"
  fi
fi
command -v mpirun > /dev/null || missing="$missing mpirun"
if [ -n "$missing" ]; then
  echo "bench/mpi/run.sh: no parallel HDF5 build here, missing:$missing (Debian/Ubuntu: libhdf5-openmpi-dev openmpi-bin)" | tee "$out/missing.txt"
  if [ -n "$layout" ] && [ "$layout" != node ]; then exit 3; fi
  layout=node
fi
layout=${layout:-mpi}
echo "layout: $layout"
. "$root/tests/gpu/devdata.sh"
h5fz_use_devdata "$root"
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
mpi_opt=ON
targets="h5fz_bench_mpi h5fz_mpi_tests h5fz_bench_node h5fz_bench_mpi_direct_chunk"
if [ "$layout" = node ]; then mpi_opt=AUTO targets="h5fz_bench_node h5fz_plugin" h5fz_phdf5_cmake_args=(); fi
phase "configure (H5FZ_MPI=$mpi_opt, H5FZ_EMBED_KERNELS=$embed)"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DH5FZ_MPI=$mpi_opt -DH5FZ_DATA_DIR="$data" \
  -DH5FZ_EMBED_KERNELS=$embed "${h5fz_phdf5_cmake_args[@]}" \
  -DH5FZ_PYTHON="${H5FZ_PYTHON:-$(command -v python3)}" > "$out/cmake.log" 2>&1 || { tail -30 "$out/cmake.log"; exit 1; }
grep -m1 'h5fz: parallel HDF5\|h5fz: serial build' "$out/cmake.log"
phase "build"
# shellcheck disable=SC2086
cmake --build "$build" -j"$(nproc)" --target $targets > "$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
gpu=0
nvidia-smi -L > /dev/null 2>&1 && gpu=1
if [ "$layout" != node ]; then
  # the JIT's modules for the benchmark's chain, once, before anything is timed
  phase "warm the JIT cache ($H5FZ_CACHE_DIR): 1 rank, 0.01 GiB"
  timeout 300 mpirun -n 1 "$build/bin/h5fz_bench_mpi" --data "$data" --gib-per-rank 0.01 --reps 1 --dir "$filedir" \
    --label warmup > "$out/warmup.json" 2> "$out/warmup.log"
  echo "   exit $?"
  phase "ctest -L mpi"
  # on a GPU every chunk on it (H5FZ_DEVICE_STRICT: a CPU fallback fails the
  # test), except the API test, whose GPU-memory-limit case must fall back
  strict=()
  if [ $gpu = 1 ]; then strict=(env H5FZ_DEVICE=gpu H5FZ_DEVICE_STRICT=1); fi
  "${strict[@]}" ctest --test-dir "$build" -L mpi -E '^mpi[.]api_' --output-on-failure -V > "$out/ctest-mpi.log" 2>&1
  rc1=$?
  if [ $gpu = 1 ]; then strict=(env H5FZ_DEVICE=gpu); fi
  "${strict[@]}" ctest --test-dir "$build" -L mpi -R '^mpi[.]api_' --output-on-failure -V > "$out/ctest-mpi-api.log" 2>&1
  rc2=$?
  echo "ctest -L mpi (GPU: $gpu): exit $rc1 / $rc2 ($(cat "$out/ctest-mpi.log" "$out/ctest-mpi-api.log" | grep -c ' Passed ') passed," \
    "$(cat "$out/ctest-mpi.log" "$out/ctest-mpi-api.log" | grep -c '\*\*\*Skipped\|Not Run') skipped; device case:" \
    "$(grep -m1 -o 'abs_slabs_device: [^,]*' "$out/ctest-mpi-api.log" || echo none))"
  grep -h 'Failed\|\*\*\*' "$out/ctest-mpi.log" "$out/ctest-mpi-api.log" | grep -v '^ *[0-9]*% tests' | head -20
  phase "direct chunk write patterns of HDF5 $(sed -n 's/^#define H5_VERSION "\(.*\)"/\1/p' "${h5fz_phdf5_prefix:-/nonexistent}/include/H5pubconf.h" 2> /dev/null)"
  for n in ${H5FZ_DIRECT_CHUNK_RANKS:-8}; do
    : > "$out/direct_chunk_n$n.jsonl"
    for m in 0 1 2 3 4 5; do
      # a pattern whose ranks' metadata differ may hang in H5Fclose (the working
      # ones take well under a second): 10 s, then "hung"
      timeout 10 mpirun -n "$n" "$build/bin/h5fz_bench_mpi_direct_chunk" --mode "$m" --chunks 256 --dir "$filedir" \
        >> "$out/direct_chunk_n$n.jsonl" 2>> "$out/direct_chunk.log"
      rc=$?
      [ $rc = 0 ] || echo "{\"ranks\": $n, \"mode\": $m, \"hung_or_failed\": true, \"exit\": $rc}" >> "$out/direct_chunk_n$n.jsonl"
    done
    sed 's/^/   /' "$out/direct_chunk_n$n.jsonl" | cut -c1-300
  done
  rm -f "$filedir"/h5fz_direct_chunk_probe_*.h5
  phase "heat3d_mpi, 8 ranks"
  mkdir -p "$build/heat3d_n8"
  (cd "$build/heat3d_n8" && "${strict[@]}" timeout 300 mpirun -n 8 "$build/bin/heat3d_mpi" "$filedir/heat3d_mpi_n8.h5" abs=1e-3) \
    > "$out/heat3d_mpi_n8.log" 2>&1
  echo "   exit $?; $(tail -1 "$out/heat3d_mpi_n8.log")"
  rm -f "$filedir"/heat3d_mpi_n8.h5 "$filedir"/heat3d_mpi_n8_ref.h5
fi

bench_mpi() { # bench_mpi LABEL N [ARGS...]: one shared file, mpirun
  local label=$1 n=$2
  shift 2
  echo "== mpi layout, $label, $n ranks"
  # shellcheck disable=SC2086
  H5FZ_MPI_PROFILE=1 timeout 300 mpirun -n "$n" ${MPIEXEC_FLAGS:-} "$build/bin/h5fz_bench_mpi" --data "$data" \
    --gib-per-rank "$gib" --reps "$reps" --dir "$filedir" --label "$label" "$@" > "$out/bench_mpi_${label}_n$n.json"
  echo "   exit $?; $(grep -o '"path": "[a-z_]*", "write_s[^}]*' "$out/bench_mpi_${label}_n$n.json" | tr '\n' ' ' | cut -c1-900)"
}
bench_node() { # bench_node LABEL N [ARGS...]: N processes, a file each
  local label=$1 n=$2 sync pids=() rc=0
  shift 2
  echo "== node layout, $label, $n processes"
  sync=/dev/shm/h5fz_bench_node_$$_${label}_$n
  rm -f "$sync"
  for ((r = 0; r < n; r++)); do
    timeout 300 "$build/bin/h5fz_bench_node" --rank "$r" --ranks "$n" --sync "$sync" --data "$data" --gib-per-rank "$gib" \
      --reps "$reps" --dir "$filedir" --label "$label" "$@" > "$out/node_r$r.tmp" &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || rc=$?; done
  mv "$out/node_r0.tmp" "$out/bench_node_${label}_n$n.json"
  rm -f "$out"/node_r*.tmp "$sync"
  echo "   exit $rc; $(grep -o '"path": "[a-z_]*", "write_s[^}]*' "$out/bench_node_${label}_n$n.json" | tr '\n' ' ' | cut -c1-900)"
}
bench() { # bench LABEL N [ARGS...] in the chosen layout(s)
  if [ "$layout" != node ]; then bench_mpi "$@"; fi
  if [ "$layout" != mpi ]; then bench_node "$@"; fi
}
phase "benchmark, no MPS"
for n in 1 2 4 8; do bench no_mps "$n"; done
if [ "$layout" != node ]; then
  # the API's other way to store its chunks, for comparison: every rank
  # H5Dwrite_chunk's every chunk (docs/mpi.md, "How the collective write stores its chunks")
  phase "benchmark, API with H5FZ_MPI_WRITE=direct"
  for n in 8; do H5FZ_MPI_WRITE=direct bench_mpi direct_no_mps "$n" --paths api_host,api_pinned,api_device; done
  # glibc keeping the chunk buffers HDF5 allocates for each collective
  # filtered write (the filter path copies every chunk into one: fresh pages
  # each time by default): docs/mpi.md, "Speed"
  phase "benchmark, glibc malloc keeping freed memory ($H5FZ_MALLOC_TUNABLES)"
  GLIBC_TUNABLES=$H5FZ_MALLOC_TUNABLES bench_mpi malloc_kept 8
fi
export CUDA_MPS_PIPE_DIRECTORY=/tmp/h5fz-mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/h5fz-mps-log
mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
phase "benchmark, MPS"
if nvidia-cuda-mps-control -d; then
  for n in 1 2 4 8; do bench mps "$n"; done
  echo quit | nvidia-cuda-mps-control
else
  echo "nvidia-cuda-mps-control -d failed: no MPS figures"
fi
unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
# a GPU that "runs out of memory": 64 MiB allowed, host arrays must still be written (by the CPU)
phase "benchmark, 64 MiB GPU memory limit"
H5FZ_GPU_MEMORY_LIMIT=67108864 H5FZ_QUIET=1 bench gpu_memory_limit_64MiB 8 --paths filter,api_host
# the floor under any write into one shared file in the files' folder
# (docs/mpi.md "Speed"): N processes writing what 8 ranks store
phase "one file vs a file each, $filedir"
python3 "$root/bench/mpi/shared_file_write.py" 331 "$filedir" | tee "$out/shared_file_write.txt"
python3 "$root/bench/mpi/summarize.py" "$out" | tee "$out/summary.md"
phase "done"
