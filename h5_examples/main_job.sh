#!/usr/bin/env bash
# The main job of h5fz, end to end on a real field:
#   raw field -> uncompressed chunked HDF5 (h5fz from-raw)
#             -> compressed copy through the plugin (h5repack -f UD=...)
#             -> h5fz verify: every element within the bound, NaN/Inf exact
# and print the compression ratio and the max error. Exits non-zero when
# anything fails.
#
# Environment (all optional):
#   H5FZ_BUILD_DIR    build folder (default: <repo>/build)
#   H5FZ_DATA_DIR     real fields (default: <repo>/../shared/data; the field
#                     embedded in tests/data is used when it is absent)
#   H5FZ_FIELD        file name of the field to use in H5FZ_DATA_DIR
#   H5FZ_REL          bound relative to the field's value range (default 1e-4)
#   H5FZ_WORK_DIR     where the .h5 files go (default: a temporary folder)
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${H5FZ_BUILD_DIR:-$repo/build}
data_dir=${H5FZ_DATA_DIR:-$repo/../shared/data}
rel=${H5FZ_REL:-1e-4}
h5fz=${H5FZ_BIN:-$build/bin/h5fz}
export HDF5_PLUGIN_PATH=${HDF5_PLUGIN_PATH:-$build/plugin}

die() { echo "main_job: $*" >&2; exit 1; }

[ -x "$h5fz" ] || die "no h5fz CLI at $h5fz: build first (cmake -S . -B build && cmake --build build -j\"\$(nproc)\")"
[ -f "$HDF5_PLUGIN_PATH/libh5fz.so" ] || die "no plugin at $HDF5_PLUGIN_PATH/libh5fz.so: build first"
command -v h5repack >/dev/null || die "h5repack not found: install hdf5-tools"

# Prefer a large smooth real field; fall back to the embedded one.
field=""
if [ -n "${H5FZ_FIELD:-}" ]; then
  field=$data_dir/$H5FZ_FIELD
  [ -f "$field" ] || die "H5FZ_FIELD=$H5FZ_FIELD not found in $data_dir"
else
  for name in glosea4_surface_temperature_float32_13x6x145x192.f32 \
              um_sea_ice_northward_velocity_float32_120x215x360.f32; do
    if [ -f "$data_dir/$name" ]; then field=$data_dir/$name; break; fi
  done
fi
if [ -z "$field" ]; then
  field=$repo/tests/data/mitgcm_deep_convection_theta_float32_50x100x100.f32
  echo "main_job: no shared data at $data_dir; using the embedded field"
fi

# The shape is the last _-separated part of the name: <what>_<dtype>_<shape>.<ext>
base=$(basename "$field")
shape=${base%.*}
shape=${shape##*_}
[[ $shape =~ ^[0-9]+(x[0-9]+)*$ ]] || die "cannot read a shape from $base"

work=${H5FZ_WORK_DIR:-}
if [ -z "$work" ]; then
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
fi
orig=$work/original.h5
comp=$work/compressed.h5

echo "== field: $base (shape $shape)"
summary=$("$h5fz" from-raw "$field" "$orig" --shape "$shape" --force)
echo "$summary"

# The bound is REL x the finite value range of the whole field, given to the
# filter as an absolute bound (from-raw printed the range).
range=$(sed -n 's/.* range \([^,]*\),.*/\1/p' <<<"$summary")
[ -n "$range" ] || die "from-raw printed no value range"
bound=$(awk -v r="$range" -v f="$rel" 'BEGIN { printf "%.17g", r * f }')

echo "== spec: abs=$bound (rel $rel of the range $range)"
"$h5fz" cd-values "abs=$bound"
ud=$("$h5fz" cd-values --ud "abs=$bound")

echo "== h5repack -f $ud"
h5repack -f "$ud" "$orig" "$comp"
ls -l "$orig" "$comp"

echo "== h5fz inspect (summary)"
"$h5fz" inspect "$comp" --summary

echo "== h5fz verify --abs $bound"
"$h5fz" verify "$orig" "$comp" --abs "$bound" --require-filter
json=$("$h5fz" verify "$orig" "$comp" --abs "$bound" --require-filter --json)
ratio=$(sed -n 's/.*"ratio": \([^,]*\),.*/\1/p' <<<"$json" | head -n 1)
max_err=$(sed -n 's/.*"max_abs_error": \([^,]*\),.*/\1/p' <<<"$json" | head -n 1)
printf 'main_job: OK  %s  ratio %.3f  max error %.6g <= bound %.6g\n' \
  "$base" "$ratio" "$max_err" "$bound"
