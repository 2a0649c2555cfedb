#!/usr/bin/env bash
# CTest driver for h5_examples/plot_error.py: makes a compressed file from
# the embedded field (from-raw + h5repack), then runs the example as a user
# would, checking its exit status and its PNG:
#   --abs at the bound the file was written with      -> 0, a PNG
#   --pw-rel on a pw_rel file                          -> 0, a PNG
#   --abs far below the error the file really has      -> 1 (bound broken)
# Usage: run_plot_error.sh OUT_DIR   (the PNGs are left there to look at)
# Environment: H5FZ_TEST_ENV (HDF5_PLUGIN_PATH, H5FZ_BIN), H5FZ_PYTHON.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=${1:?usage: run_plot_error.sh OUT_DIR}
py=${H5FZ_PYTHON:-/usr/bin/python3}
h5fz=${H5FZ_BIN:?H5FZ_BIN not set}
: "${HDF5_PLUGIN_PATH:?HDF5_PLUGIN_PATH not set}"

"$py" -c 'import h5py, numpy, matplotlib' ||
  { echo "run_plot_error: $py lacks h5py/numpy/matplotlib (Debian: python3-h5py python3-numpy python3-matplotlib)" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"
rm -f "$out"/plot_error_*.png

field=$repo/tests/data/mitgcm_deep_convection_theta_float32_50x100x100.f32
"$h5fz" from-raw "$field" "$work/orig.h5" --shape 50x100x100 --chunk 10x100x100 --quiet
h5repack -f "$("$h5fz" cd-values --ud abs=1e-4)" "$work/orig.h5" "$work/abs.h5"
h5repack -f "$("$h5fz" cd-values --ud pw_rel=1e-3)" "$work/orig.h5" "$work/pw.h5"

is_png() { [ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ]; }

echo "== plot_error.py --abs 1e-4"
"$py" "$repo/h5_examples/plot_error.py" "$work/orig.h5" "$work/abs.h5" \
  --dataset /data --abs 1e-4 --out "$out/plot_error_abs.png"
is_png "$out/plot_error_abs.png" || { echo "run_plot_error: no PNG written" >&2; exit 1; }

echo "== plot_error.py --pw-rel 1e-3"
"$py" "$repo/h5_examples/plot_error.py" "$work/orig.h5" "$work/pw.h5" \
  --dataset /data --pw-rel 1e-3 --out "$out/plot_error_pw_rel.png"
is_png "$out/plot_error_pw_rel.png" || { echo "run_plot_error: no PNG written" >&2; exit 1; }

echo "== plot_error.py --abs 1e-7 (must fail: the file's error is ~1e-4)"
rc=0
"$py" "$repo/h5_examples/plot_error.py" "$work/orig.h5" "$work/abs.h5" \
  --dataset /data --abs 1e-7 --out "$work/broken.png" || rc=$?
[ "$rc" -eq 1 ] || { echo "run_plot_error: a broken bound gave exit $rc, want 1" >&2; exit 1; }

echo "run_plot_error: OK (PNGs in $out)"
