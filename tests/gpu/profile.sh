#!/usr/bin/env bash
# Profile the fused encode/decode kernels with Nsight Compute on one real
# field (default: the sea-ice field), or with --tiled on the >= 1 GiB array
# of h5fz_bench_gpu --tiled-kernels (all fields of $H5FZ_DATA_DIR tiled; the
# second launch of each kernel, after the warm-up), or with --realistic on
# the realistic array of h5fz_bench_gpu --realistic-kernels at one bound
# ($H5FZ_PROFILE_R: 1e-2, 1e-3 or 1e-4, default 1e-4; the default chain's
# rows and the fast chain's).
#   tests/gpu/profile.sh [FIELD | --tiled | --realistic]
# Report to $OUT/ncu.txt (--tiled, --realistic: ncu_KERNEL.txt for each
# kernel of $H5FZ_PROFILE_KERNELS, default "h5fz_encode h5fz_decode"; the
# default chain's warp-fused ones are h5fz_encode_wf and h5fz_decode_wf, the
# fast chain's h5fz_encode_wfp and h5fz_decode_wfp).
set -uo pipefail
if ! nvidia-smi -L > /dev/null 2>&1; then
  echo "tests/gpu/profile.sh: no NVIDIA GPU here (nvidia-smi -L failed); profiling needs one and ncu" >&2
  exit 77
fi
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
case "$field" in --tiled | --realistic) array=1 ;; *) array=0 ;; esac
[ $array = 1 ] || [ -f "$src" ] || gunzip -c "$root/.devdata/$field.gz" > /tmp/h5fz-prof/$field
[ $array = 1 ] || [ ! -f "$src" ] || cp "$src" /tmp/h5fz-prof/
export H5FZ_CACHE_DIR=/tmp/h5fz-prof-cache
ncu=$(command -v ncu || ls -d /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
[ -n "$ncu" ] || { echo "ncu not found"; exit 77; }
if [ $array = 1 ]; then
  bench_args=(--tiled-kernels)
  [ "$field" = --realistic ] && bench_args=(--realistic-kernels --realistic-r "${H5FZ_PROFILE_R:-1e-4}")
  # the fields to tile: $H5FZ_DATA_DIR, else those run.sh unpacked, else ../shared/data
  tiled_data=${H5FZ_DATA_DIR:-}
  [ -n "$tiled_data" ] || { [ -d /tmp/h5fz-devdata ] && tiled_data=/tmp/h5fz-devdata; } || tiled_data=$root/../shared/data
  status=0
  for k in ${H5FZ_PROFILE_KERNELS:-h5fz_encode h5fz_decode}; do
    "$ncu" -k "$k" --launch-skip 1 --launch-count 1 --section SpeedOfLight --section Occupancy \
      --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis \
      --section ComputeWorkloadAnalysis --section InstructionStats "$build/bin/h5fz_bench_gpu" --data "$tiled_data" \
      "${bench_args[@]}" --reps 1 > "$out/ncu_$k.txt" 2>&1 || status=1
    grep -E "Duration|Memory Throughput|DRAM Throughput|Compute \(SM\)|Achieved Occupancy|Issued Ipc|No Eligible" \
      "$out/ncu_$k.txt" | head -12 | grep . || { echo "no ncu report for $k: see $out/ncu_$k.txt"; tail -5 "$out/ncu_$k.txt"; status=1; }
  done
  exit $status
fi
"$ncu" --clock-control none -k regex:'h5fz_(encode|decode)' -c 2 \
  --section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats \
  --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis \
  "$build/bin/h5fz_bench_gpu" --data /tmp/h5fz-prof --reps 1 --kernels-only > "$out/ncu.txt" 2>&1
grep -E "h5fz_(en|de)code|Duration|Registers Per|Achieved Occupancy|Theoretical Occupancy|Block Limit|Memory Throughput|Compute \(SM\)|Stall|Warp Cycles Per Issued|Dynamic Shared|Static Shared|Issue Slots|Executed Ipc" "$out/ncu.txt" | head -60
