#!/usr/bin/env bash
# Profile the fused encode/decode kernels with Nsight Compute on one real
# field (default: the sea-ice field). Needs a build from tests/gpu/run.sh.
# Report to $OUT/ncu.txt.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${H5FZ_GPU_BUILD:-$root/build-gpu}
out=${OUT:-$build/logs}
field=${1:-um_sea_ice_northward_velocity_float32_120x215x360.f32}
mkdir -p "$out" /tmp/h5fz-prof
if [ ! -x "$build/bin/h5fz_bench_gpu" ]; then
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo > "$out/configure.log" 2>&1
  cmake --build "$build" --target h5fz_bench_gpu -j"$(nproc)" > "$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
fi
src=${H5FZ_DATA_DIR:-/tmp/h5fz-devdata}/$field
[ -f "$src" ] || gunzip -c "$root/.devdata/$field.gz" > /tmp/h5fz-prof/$field
[ -f "$src" ] && cp "$src" /tmp/h5fz-prof/
export H5FZ_CACHE_DIR=/tmp/h5fz-prof-cache
ncu --clock-control none -k regex:'h5fz_(encode|decode)' -c 2 \
  --section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats \
  --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis \
  "$build/bin/h5fz_bench_gpu" --data /tmp/h5fz-prof --reps 1 --kernels-only > "$out/ncu.txt" 2>&1
grep -E "h5fz_(en|de)code|Duration|Registers Per|Achieved Occupancy|Theoretical Occupancy|Block Limit|Memory Throughput|Compute \(SM\)|Stall|Warp Cycles Per Issued|Dynamic Shared|Static Shared|Issue Slots|Executed Ipc" "$out/ncu.txt" | head -60
