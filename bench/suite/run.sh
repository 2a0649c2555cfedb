#!/usr/bin/env bash
# h5fz benchmark suite, one command:
#   bench/suite/run.sh [--tiled] [--gpu] [--no-cpu] [--out DIR] [--data DIR] [--runs N] [--reuse]
# CPU part: HDF5 filter path (h5py) of every real field with h5fz (CPU executor) and the
# hdf5plugin filters (SZ3, ZFP accuracy, Zstd, Blosc2) at matched bounds.
# --tiled adds the tiled >= 1 GiB array; --gpu adds the GPU part (GPU executor through HDF5,
# h5fz_bench_gpu kernel-only figures, nvCOMP, HBM and pinned PCIe bandwidth).
# Writes results.json, results.md and PNG plots to --out (default: $build/suite).
# Environment: H5FZ_BENCH_BUILD (build folder, default build-bench), H5FZ_BENCH_PYTHON (use this
# python, no virtual environment: the device machine), H5FZ_DATA_DIR (fields).
#   bench/suite/run.sh --ratio-table [--chain "WORDS"]... [--out DIR] [--data DIR]
# only the ratio table of docs/ratio.md (CPU): h5fz chains, SZ3 and ZFP on chunks capped at
# 64 x 64 x 256, R = 1e-2, 1e-3, 1e-4, every element checked; writes ratio_run.json,
# ratio_table.{md,json,png} and rate_distortion.png to --out (default: $build/suite/ratio_table).
# The chains: H5FZ_RATIO_CHAINS (';'-separated; default: default;ratio;lorenzo_nd zigzag huff
# subchunk=16384;lorenzo_nd zigzag bitshuffle rze subchunk=65536); each --chain adds one.
# H5FZ_RATIO_CASE_TIMEOUT: seconds before a case is killed (default 120; SZ3 on the NaN field
# crashes or runs for over 10 minutes a case, the longest other case takes seconds).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${H5FZ_BENCH_BUILD:-$root/build-bench}
tiled=0 gpu=0 cpu=1 reuse=0 runs=3 out="" data=${H5FZ_DATA_DIR:-} ratio=0
chains=${H5FZ_RATIO_CHAINS:-default;ratio;lorenzo_nd zigzag huff subchunk=16384;lorenzo_nd zigzag bitshuffle rze subchunk=65536}
while [ $# -gt 0 ]; do
  case "$1" in
    --tiled) tiled=1 ;;
    --gpu) gpu=1 ;;
    --no-cpu) cpu=0 ;;                   # only the GPU part (the device machine)
    --reuse) reuse=1 ;;                  # keep parts already measured in the parts folder
    --out) out=$2; shift ;;
    --data) data=$2; shift ;;
    --runs) runs=$2; shift ;;
    --ratio-table) ratio=1 ;;            # only the ratio table (docs/ratio.md)
    --chain) [ -n "${2:-}" ] || { echo "--chain wants the chain's words" >&2; exit 2; }
             chains="$chains;$2"; shift ;;
    -h|--help) sed -n 2,18p "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
[ $ratio = 1 ] && { [ $tiled = 1 ] || [ $gpu = 1 ] || [ $reuse = 1 ]; } \
  && { echo "--ratio-table runs alone (no --tiled, --gpu, --reuse)" >&2; exit 2; }
if [ $ratio = 1 ]; then out=${out:-$build/suite/ratio_table}; else out=${out:-$build/suite}; fi
parts=${H5FZ_BENCH_PARTS:-$build/suite/parts}   # the measured JSON parts
logs=$build/suite/logs
mkdir -p "$out" "$parts" "$logs"
data_args=(); [ -n "$data" ] && data_args=(--data "$data")
targets="h5fz_cli h5fz_plugin h5fz_bench_cpu"; [ $gpu = 1 ] && targets="$targets h5fz_bench_gpu"

echo "== build ($build)"
if [ ! -f "$build/CMakeCache.txt" ]; then
  # RelWithDebInfo as the other builds: Release (-O3) trips -Werror=maybe-uninitialized in gcc 12
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo > "$logs/configure.log" 2>&1 \
    || { tail -20 "$logs/configure.log"; exit 1; }
fi
cmake --build "$build" -j"$(nproc)" --target $targets > "$logs/build.log" 2>&1 \
  || { grep -E -A5 "error" "$logs/build.log" | head -40; exit 1; }

echo "== python"
if [ -n "${H5FZ_BENCH_PYTHON:-}" ]; then
  py=$H5FZ_BENCH_PYTHON
else
  py=$build/venv/bin/python
  if [ ! -x "$py" ] || ! "$py" -c "import h5py, hdf5plugin, matplotlib, tqdm, numpy" 2>/dev/null; then
    /usr/bin/python3 -m venv "$build/venv" && "$build/venv/bin/pip" install -q numpy h5py hdf5plugin matplotlib tqdm \
      || { echo "could not set up the venv $build/venv (pip install from PyPI)" >&2; exit 1; }
  fi
fi
"$py" -c "import h5py, numpy; print('python', __import__('sys').version.split()[0], 'h5py', h5py.version.version, 'HDF5', h5py.version.hdf5_version)"

# Does the h5fz plugin load under this h5py (self-binding)? Else the h5fz rows run under
# Debian's /usr/bin/python3 h5py and the others under $py (said in results.json).
h5fz_py=$py
if ! HDF5_PLUGIN_PATH="$build/plugin" "$py" "$here/plugin_check.py" "$build/bin/h5fz" > "$logs/plugin_check.log" 2>&1; then
  echo "h5fz plugin does not load under $py's h5py:"; tail -3 "$logs/plugin_check.log"
  if [ -x /usr/bin/python3 ] && HDF5_PLUGIN_PATH="$build/plugin" /usr/bin/python3 "$here/plugin_check.py" "$build/bin/h5fz" >> "$logs/plugin_check.log" 2>&1; then
    h5fz_py=/usr/bin/python3; echo "h5fz rows: /usr/bin/python3 (system h5py)"
  else
    echo "and not under /usr/bin/python3 either: no h5fz rows" >&2; h5fz_py=""
  fi
fi

if [ $ratio = 1 ]; then
  # One run: every chain, SZ3 and ZFP on the same chunks (one timed run each: the ratio is what counts)
  [ "$h5fz_py" = "$py" ] || { echo "--ratio-table needs the h5fz plugin to load under $py (see $logs/plugin_check.log)" >&2; exit 1; }
  echo "== ratio table: chains: $chains"
  "$py" "$here/filters_bench.py" --build "$build" "${data_args[@]}" --out "$out/ratio_run.json" --executor cpu \
    --filters h5fz,sz3,zfp --chunks capped --runs 1 --case-timeout "${H5FZ_RATIO_CASE_TIMEOUT:-120}" \
    --h5fz-chains "$chains" --label ratio-table || exit 1
  "$py" "$here/ratio_table.py" "$out/ratio_run.json" --out "$out" --rd "$out/ratio_run.json" \
    ${H5FZ_RATIO_COMPARE:+--compare "$H5FZ_RATIO_COMPARE"} > /dev/null || exit 1
  echo "wrote $out/ratio_table.md, ratio_table.json, ratio_table.png, rate_distortion.png (from ratio_run.json)"
  exit 0
fi

status=0
fb() { # filters_bench: name executor filters python [extra]
  local name=$1 exe=$2 filters=$3 p=$4; shift 4
  [ $reuse = 1 ] && [ -s "$parts/$name.json" ] && { echo "(reusing $parts/$name.json)"; return; }
  echo "== $name"
  "$p" "$here/filters_bench.py" --build "$build" "${data_args[@]}" --out "$parts/$name.json" --executor "$exe" \
    --filters "$filters" --runs "$runs" --label "$name" "$@" || status=1
}
tiled_arg=(); [ $tiled = 1 ] && tiled_arg=(--tiled)
if [ $cpu = 0 ]; then
  :
elif [ "$h5fz_py" = "$py" ]; then
  fb filters_cpu cpu h5fz,sz3,zfp,zstd,blosc2,none "$py" "${tiled_arg[@]}"
else
  fb filters_cpu cpu sz3,zfp,zstd,blosc2,none "$py" "${tiled_arg[@]}"
  [ -n "$h5fz_py" ] && fb filters_cpu_h5fz cpu h5fz "$h5fz_py" "${tiled_arg[@]}"
fi

if [ $gpu = 1 ]; then
  echo "== h5fz_bench_gpu (kernel-only, JIT, end to end per chunk)"
  gdata=${data:-$("$py" -c "import sys; sys.path.insert(0,'$here'); from common import default_data_dir; print(default_data_dir('$root'))")}
  "$build/bin/h5fz_bench_gpu" --data "$gdata" > "$parts/bench_gpu.json" 2> "$logs/bench_gpu.err" || status=1
  tail -3 "$logs/bench_gpu.err"
  [ -n "$h5fz_py" ] && fb filters_gpu gpu h5fz,none "$h5fz_py" "${tiled_arg[@]}"
  echo "== GPU baselines: HBM and pinned PCIe bandwidth, nvCOMP"
  "$py" "$here/gpu_bench.py" "${data_args[@]}" --out "$parts/gpu_baselines.json" || status=1
fi

# The realistic array (bench/realistic_array.h) beside PFPL and cuSZp, built from their
# public sources in .peers/ (README.md, "Peers"); every output checked element by element.
gdata=${data:-$("$py" -c "import sys; sys.path.insert(0,'$here'); from common import default_data_dir; print(default_data_dir('$root'))")}
if [ $cpu = 1 ] || [ $gpu = 1 ]; then
  echo "== realistic array: h5fz CPU executor"
  # every core, then one (the per-core figure; GB/s per CPU second is in both)
  "$build/bin/h5fz_bench_cpu" --data "$gdata" --realistic-only --runs "$runs" > "$parts/bench_cpu_realistic.jsonl" \
    2> "$logs/bench_cpu_realistic.err" || status=1
  H5FZ_THREADS=1 "$build/bin/h5fz_bench_cpu" --data "$gdata" --realistic-only --runs "$runs" \
    >> "$parts/bench_cpu_realistic.jsonl" 2>> "$logs/bench_cpu_realistic.err" || status=1
  cat "$parts/bench_cpu_realistic.jsonl"
fi
if [ -d "$root/.peers/PFPL" ] && [ -d "$root/.peers/cuSZp" ]; then
  echo "== peers: build PFPL and cuSZp from .peers/"
  if "$here/build_peers.sh" "$root/.peers" "$build/peers" > "$logs/build_peers.log" 2>&1; then
    peer_args=(--h5fz-cpu "$parts/bench_cpu_realistic.jsonl")
    [ $gpu = 1 ] && peer_args+=(--h5fz-gpu "$parts/bench_gpu.json") || peer_args+=(--no-gpu)
    "$py" "$here/peers.py" --bench-cpu "$build/bin/h5fz_bench_cpu" --data "$gdata" --peers "$build/peers" \
      --out "$out" "${peer_args[@]}" || status=1
    cp "$out/peers.json" "$parts/peers.json" 2> /dev/null || true
  else
    echo "build_peers.sh failed:"; tail -20 "$logs/build_peers.log"; status=1
  fi
else
  echo "(no .peers/PFPL and .peers/cuSZp: PFPL and cuSZp rows skipped; bench/suite/README.md says how to get them)"
fi

echo "== report"
"$py" "$here/report.py" --parts "$parts" --out "$out" ${H5FZ_BENCH_NO_PLOTS:+--no-plots} || status=1
exit $status
