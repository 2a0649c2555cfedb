#!/usr/bin/env bash
# format.sh [--check] - apply the repository's .clang-format (clang-format
# 14 or newer) to every tracked C source, except the headers NVRTC is
# handed (device_ops/ and fusion/gpu/h5fz_gpu_tail.h, h5fz_gpu_batch.h,
# h5fz_gpu_huff_groups.h):
# their bytes are the JIT's input and key its cache (docs/gpu.md), so they
# change only with the kernels. --check: list the files that would change
# and exit 1 if any would.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
mapfile -t files < <(git ls-files '*.c' '*.h' | grep -v -e '^device_ops/' -e '^fusion/gpu/h5fz_gpu_tail\.h$' \
  -e '^fusion/gpu/h5fz_gpu_batch\.h$' -e '^fusion/gpu/h5fz_gpu_huff_groups\.h$')
if [ "${1:-}" = "--check" ]; then
  bad=0
  for f in "${files[@]}"; do
    if ! clang-format --style=file "$f" | cmp -s - "$f"; then echo "$f"; bad=1; fi
  done
  exit $bad
fi
clang-format --style=file -i "${files[@]}"
