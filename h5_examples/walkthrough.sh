#!/usr/bin/env bash
# A walkthrough of h5fz, top to bottom: take a real field, store it in HDF5,
# compress it three ways with the stock `h5repack` through the h5fz plugin,
# look at what was stored, check the bound, and print a summary table.
#
# Read it, copy the parts you need. Every step is a command you can type.
#
#   h5_examples/walkthrough.sh
#
# Environment (all optional):
#   H5FZ_BUILD_DIR   build folder (default: <repo>/build)
#   H5FZ_DATA_DIR    real fields (default: <repo>/../shared/data; the field
#                    embedded in tests/data is used when it is absent)
#   H5FZ_REL         the ABS bound is H5FZ_REL x the field's value range
#                    (default 1e-3)
#   H5FZ_WORK_DIR    write the .h5 files here and keep them (default: a
#                    temporary folder, removed at exit)
#
# Needs: the build (h5fz CLI and plugin), hdf5-tools (h5repack, h5dump).
# Exits non-zero as soon as any step fails.

# -e: stop at the first failing command; -u: an unset variable is an error
# (an empty spec would silently mean "the defaults"); pipefail: a failure
# inside a pipeline (h5dump | grep) is not hidden by the last command.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${H5FZ_BUILD_DIR:-$repo/build}
data_dir=${H5FZ_DATA_DIR:-$repo/../shared/data}
h5fz=${H5FZ_BIN:-$build/bin/h5fz}
rel=${H5FZ_REL:-1e-3}

say() { printf '\n== %s\n' "$*"; }
die() { echo "walkthrough: $*" >&2; exit 1; }

# ---------------------------------------------------------------------------
# 0. Tell HDF5 where the plugin is. Every HDF5 program (h5repack, h5dump,
#    h5py, your own C code) finds libh5fz.so through this variable; without
#    it, reading a compressed dataset fails ("can't open directory" / "required
#    filter is not registered").
# ---------------------------------------------------------------------------
export HDF5_PLUGIN_PATH=${HDF5_PLUGIN_PATH:-$build/plugin}
[ -x "$h5fz" ] || die "no h5fz CLI at $h5fz: build first (cmake -S . -B build && cmake --build build -j), or set H5FZ_BUILD_DIR"
[ -f "$HDF5_PLUGIN_PATH/libh5fz.so" ] || die "no plugin at $HDF5_PLUGIN_PATH/libh5fz.so: build first"
command -v h5repack >/dev/null || die "h5repack not found: install hdf5-tools"
command -v h5dump >/dev/null || die "h5dump not found: install hdf5-tools"

# Work in a temporary folder so nothing is left behind (unless asked to keep).
work=${H5FZ_WORK_DIR:-}
if [ -z "$work" ]; then
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
else
  mkdir -p "$work"
fi

# ---------------------------------------------------------------------------
# 1. Pick a real field: a raw little-endian array, shape in the file name
#    (<what>_<dtype>_<shape>.f32). A shared field when there is one, else
#    the small ocean temperature field embedded in the repository.
# ---------------------------------------------------------------------------
field=$data_dir/glosea4_surface_temperature_float32_13x6x145x192.f32
if [ ! -f "$field" ]; then
  field=$repo/tests/data/mitgcm_deep_convection_theta_float32_50x100x100.f32
  echo "walkthrough: no shared data at $data_dir; using the embedded field"
fi
base=$(basename "$field")
shape=${base%.*}
shape=${shape##*_}                       # 50x100x100
[[ $shape =~ ^[0-9]+(x[0-9]+)*$ ]] || die "cannot read a shape from $base"

# ---------------------------------------------------------------------------
# 2. Raw -> uncompressed, chunked HDF5. Filters work per chunk, so the
#    dataset must be chunked; 1 MiB chunks give a few chunks to inspect.
#    from-raw prints the finite min/max/range and NaN/Inf counts.
# ---------------------------------------------------------------------------
orig=$work/original.h5
say "h5fz from-raw $base -> original.h5"
summary=$("$h5fz" from-raw "$field" "$orig" --shape "$shape" --chunk-bytes 1048576 --force)
echo "$summary"

# An absolute bound means "every value within B of the original". B depends
# on the field's units, so derive it from the value range printed above:
# B = H5FZ_REL x range, rounded to 2 significant digits for readability.
range=$(sed -n 's/.* range \([^,]*\),.*/\1/p' <<<"$summary")
[ -n "$range" ] || die "from-raw printed no value range"
abs=$(awk -v r="$range" -v f="$rel" 'BEGIN { printf "%.2g", r * f }')
echo "ABS bound: $abs (= $rel x range $range)"

# ---------------------------------------------------------------------------
# 3. A spec -> the cd_values HDF5 wants. `cd-values` prints them for every
#    interface (h5repack, C, h5py); `--ud` prints only h5repack's UD= string.
# ---------------------------------------------------------------------------
say "h5fz cd-values abs=$abs"
"$h5fz" cd-values "abs=$abs"

# ---------------------------------------------------------------------------
# 4. Compress three ways with h5repack -f UD=..., each followed by the check
#    you should always run after h5repack: h5repack silently copies a
#    dataset uncompressed when the filter refuses it, so `verify` gets
#    --require-filter (fails unless every chunk went through h5fz) and the
#    bound option matching the spec:
#      abs=B        every |x - x'| <= B                    -> verify --abs B
#      pw_rel=E     every |x - x'| <= E |x| (signs, zeros) -> verify --pw-rel E
#      lossless     bit-exact                              -> verify --lossless
# ---------------------------------------------------------------------------
specs=("abs=$abs" "pw_rel=1e-3" "lossless")
raw_bytes=""
rows=()
# One number from verify's JSON (in $json), by key.
field_of() { sed -n "s/.*\"$1\": \([^,}]*\).*/\1/p" <<<"$json" | head -n 1; }

for spec in "${specs[@]}"; do
  name=${spec%%=*}                         # abs, pw_rel, lossless
  # The verify option that checks this spec's bound, and what its error is.
  case $name in
    abs)    check=(--abs "$abs");   kind="|x-x'|" ;;
    pw_rel) check=(--pw-rel 1e-3);  kind="|x-x'|/|x|" ;;
    *)      check=(--lossless);     kind="bit-exact" ;;
  esac
  comp=$work/$name.h5
  ud=$("$h5fz" cd-values --ud "$spec")     # UD=32770,0,<n>,<words...>

  say "h5repack -f $ud original.h5 $name.h5    ($spec)"
  h5repack -f "$ud" "$orig" "$comp"

  # h5dump -p shows each dataset's storage and filter pipeline; -H skips the
  # data. Note h5dump prints cd_values as *signed* ints, so a bound word
  # above 2^31 looks negative: that is the same number.
  say "h5dump -pH $name.h5 (filter lines)"
  h5dump -pH "$comp" | grep -E 'SIZE|FILTER_ID|COMMENT|PARAMS'

  # inspect reads the stored chunks (no decoding): per-chunk ratio, values
  # stored exactly (outliers), the op chain recorded in each chunk.
  say "h5fz inspect $name.h5"
  "$h5fz" inspect "$comp"

  # verify decodes everything through the plugin and compares with the
  # original; exit status 1 (and so this script stops) when the bound is
  # broken, NaN/Inf moved, or h5fz did not really compress every chunk.
  say "h5fz verify original.h5 $name.h5 ${check[*]} --require-filter"
  "$h5fz" verify "$orig" "$comp" "${check[@]}" --require-filter
  json=$("$h5fz" verify "$orig" "$comp" "${check[@]}" --require-filter --json)

  # Pick the figures for the table out of the JSON (one dataset: /data).
  raw_bytes=$(field_of raw_bytes)
  err=$(field_of max_abs_error)           # for --pw-rel: the max |x-x'|/|x|
  rows+=("$(printf '%-14s %12s %9.2f %12.4e %12.4e  %s' "$spec" "$(field_of stored_bytes)" \
            "$(field_of ratio)" "$err" "$(field_of bound)" "$kind")")
done

# ---------------------------------------------------------------------------
# 5. Summary. pw_rel's max error is relative (|x - x'| / |x|); the others are
#    absolute. Lossless is the baseline every lossy bound is paid against.
# ---------------------------------------------------------------------------
say "summary: $base, $raw_bytes bytes uncompressed"
printf '%-14s %12s %9s %12s %12s  %s\n' spec "stored bytes" ratio "max error" bound "error is"
printf '%s\n' "${rows[@]}"

echo
if [ -n "${H5FZ_WORK_DIR:-}" ]; then
  echo "walkthrough: OK (files kept in $work: original.h5 abs.h5 pw_rel.h5 lossless.h5)"
  # Next: look at the error of the abs= file with h5py and matplotlib.
  echo "next: HDF5_PLUGIN_PATH=$HDF5_PLUGIN_PATH /usr/bin/python3 $repo/h5_examples/plot_error.py" \
       "$work/original.h5 $work/abs.h5 --abs $abs --out $work/plot.png"
else
  # The temporary folder goes at exit: do not name a path that will not exist.
  echo "walkthrough: OK (the files were in a temporary folder, removed on exit; set H5FZ_WORK_DIR=DIR to keep them)"
fi
