#!/usr/bin/env bash
# Build the GPU and CPU peers the suite runs beside h5fz on the realistic
# array (bench/suite/peers.py): PFPL (github:burtscher/PFPL: its OpenMP CPU
# build and, with nvcc, its GPU build) and cuSZp (github:szcompressor/cuSZp,
# through bench/suite/peers/cuszp_bench.cu), from their public sources in a
# git-ignored folder (default .peers/: .peers/PFPL, .peers/cuSZp; how to get
# them there and carry them to the device: bench/suite/README.md). Their code
# is never committed here.
#   bench/suite/build_peers.sh [SRC_DIR] [OUT_DIR]
# Environment: H5FZ_PEERS_SM (default: the GPU's compute capability from
# nvidia-smi, else 90), NVCC (default nvcc on PATH, else /usr/local/cuda/bin/nvcc).
# Prints what it built; exit 1 when a source folder is missing or a build fails.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
src=$(realpath -m "${1:-$root/.peers}")
out=$(realpath -m "${2:-$root/build-peers}")
mkdir -p "$out"
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
sm=${H5FZ_PEERS_SM:-}
if [ -z "$sm" ] && command -v nvidia-smi > /dev/null 2>&1; then
  sm=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2> /dev/null | head -1 | tr -d '. ' || true)
fi
sm=${sm:-90}
for d in PFPL cuSZp; do
  [ -d "$src/$d" ] || { echo "build_peers: no $src/$d (see bench/suite/README.md, 'Peers')" >&2; exit 1; }
done
# PFPL's own flags (its makefile): no FMA anywhere, so CPU and GPU agree
pfpl_cxx=(-O3 -march=native -mno-fma -ffp-contract=off -std=c++17 -I"$src/PFPL/src")
for op in comp decomp; do
  g++ "${pfpl_cxx[@]}" -fopenmp -o "$out/pfpl_f32_abs_${op}_omp" "$src/PFPL/src/f32_abs_${op}_cpu.cpp"
  echo "built $out/pfpl_f32_abs_${op}_omp"
done
if [ -x "$nvcc" ]; then
  for op in comp decomp; do
    "$nvcc" -O3 -arch="sm_$sm" -fmad=false -Xcompiler "-O3 -march=native -fopenmp -mno-fma -ffp-contract=off" \
      -I"$src/PFPL/src" -o "$out/pfpl_f32_abs_${op}_gpu" "$src/PFPL/src/f32_abs_${op}_gpu.cu"
    echo "built $out/pfpl_f32_abs_${op}_gpu (sm_$sm)"
  done
  # cuSZp as its CMake builds it (relocatable device code), with our driver
  "$nvcc" -O3 -arch="sm_$sm" -std=c++17 -rdc=true -Xcompiler -Wno-unused-result \
    -I"$src/cuSZp/include" -I"$src/cuSZp/include/cuSZp" -o "$out/cuszp_bench" "$root/bench/suite/peers/cuszp_bench.cu" "$src"/cuSZp/src/*.cu
  echo "built $out/cuszp_bench (sm_$sm)"
else
  echo "build_peers: no nvcc ($nvcc): GPU peers not built" >&2
fi
