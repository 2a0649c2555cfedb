#!/usr/bin/env bash
# Issue 20's device run in one call, without the rest of the suite: on a
# machine with an NVIDIA GPU and no network, build h5fz (with the kernels
# embedded at build time when NVRTC is there), run h5fz_bench_gpu (JIT
# cold-cache probes, the realistic array's kernel rows checked element by
# element, the tiled array), h5fz_bench_cpu on the realistic array (every
# core, then one), build PFPL and cuSZp from .peers/ (bench/suite/README.md)
# and run bench/suite/peers.py on the same array. Needs in the repository
# root: .peers/PFPL, .peers/cuSZp, and .devdata/ (as tests/gpu/run.sh) unless
# H5FZ_DATA_DIR is set. Writes to $OUT (else build-peers-gpu/out):
# bench_gpu.json, bench_cpu_realistic.jsonl, peers.{json,md,png}, logs.
# H5FZ_PEERS_ARGS: more peers.py options (e.g. "--cpu-threads all --reps 5").
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${H5FZ_BENCH_BUILD:-$root/build-peers-gpu}
out=${OUT:-$build/out}
mkdir -p "$out"
exec > >(tee "$out/run.log") 2>&1
. "$root/tests/gpu/devdata.sh"
h5fz_use_devdata "$root"
data=${H5FZ_DATA_DIR:-$root/../shared/data}
export H5FZ_CACHE_DIR=${H5FZ_CACHE_DIR:-$build/jit-cache}
status=0
nvidia-smi > "$out/nvidia-smi.txt" 2>&1
echo "== build ($build)"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBUILD_TESTING=OFF > "$out/configure.log" 2>&1 \
  || { tail -20 "$out/configure.log"; exit 1; }
cmake --build "$build" -j"$(nproc)" --target h5fz_bench_gpu h5fz_bench_cpu > "$out/build.log" 2>&1 \
  || { grep -E -A5 "error" "$out/build.log" | head -40; exit 1; }
grep -h "h5fz_embed_kernels:" "$out/build.log" | tail -1
echo "== h5fz_bench_gpu"
"$build/bin/h5fz_bench_gpu" --data "$data" > "$out/bench_gpu.json" 2> "$out/bench_gpu.err" || status=1
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(json.dumps(d.get('jit'), indent=1)); [print(r) for r in d.get('realistic',{}).get('kernel',[])]" "$out/bench_gpu.json" || status=1
echo "== h5fz_bench_cpu, realistic array (every core, then one)"
"$build/bin/h5fz_bench_cpu" --data "$data" --realistic-only --runs 3 > "$out/bench_cpu_realistic.jsonl" || status=1
# H5FZ_PEERS_ONE_THREAD=0 leaves the one-thread rows out (a short device call)
if [ "${H5FZ_PEERS_ONE_THREAD:-1}" != 0 ]; then
  H5FZ_THREADS=1 "$build/bin/h5fz_bench_cpu" --data "$data" --realistic-only --runs 3 >> "$out/bench_cpu_realistic.jsonl" || status=1
fi
echo "== peers"
"$root/bench/suite/build_peers.sh" "$root/.peers" "$build/peers" > "$out/build_peers.log" 2>&1 \
  || { tail -20 "$out/build_peers.log"; exit 1; }
python3 "$root/bench/suite/peers.py" --bench-cpu "$build/bin/h5fz_bench_cpu" --data "$data" --peers "$build/peers" \
  --out "$out" --h5fz-gpu "$out/bench_gpu.json" --h5fz-cpu "$out/bench_cpu_realistic.jsonl" ${H5FZ_PEERS_ARGS:-} || status=1
exit $status
