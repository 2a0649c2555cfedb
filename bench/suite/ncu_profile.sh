#!/usr/bin/env bash
# Nsight Compute view of the fused encode and decode kernels on the tiled
# >= 1 GiB array of h5fz_bench_gpu --tiled-kernels (default chain, ABS 1e-4
# of the range), on a machine with an NVIDIA GPU and ncu:
#   bench/suite/ncu_profile.sh [BUILD_DIR]    (data: $H5FZ_DATA_DIR)
# One report per kernel (the second launch, after the warm-up) in
# $OUT or BUILD_DIR/logs: ncu_h5fz_encode.txt, ncu_h5fz_decode.txt.
set -uo pipefail
build=${1:-build-gpu}
out=${OUT:-$build/logs}
mkdir -p "$out"
ncu=$(command -v ncu || ls -d /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
if [ -z "$ncu" ]; then echo "ncu not found"; exit 77; fi
status=0
for k in h5fz_encode h5fz_decode; do
  "$ncu" -k "$k" --launch-skip 1 --launch-count 1 --section SpeedOfLight --section Occupancy \
    --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis \
    "$build/bin/h5fz_bench_gpu" --data "${H5FZ_DATA_DIR:?set H5FZ_DATA_DIR}" --tiled-kernels --reps 1 \
    > "$out/ncu_$k.txt" 2>&1 || status=1
  grep -E "Duration|Memory Throughput|DRAM Throughput|Compute \(SM\)|Achieved Occupancy|Issued Ipc|No Eligible|Stall|Bank" "$out/ncu_$k.txt" | head -20
done
exit $status
