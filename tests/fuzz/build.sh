#!/usr/bin/env bash
# build.sh - build the libFuzzer targets of tests/fuzz with clang, straight
# from the sources of fusion/ and planner/ (no CMake hook needed).
#
#   tests/fuzz/build.sh [OUTDIR]     (default: build-fuzz in the repo root)
#
# Needs clang with the libFuzzer runtime (Debian 12: clang libclang-rt-14-dev),
# cmake (for the two generated sources) and zlib1g-dev. Produces
# OUTDIR/fuzz_chunk_decode, fuzz_cd_values, fuzz_spec_parse, built with
# -fsanitize=fuzzer,address,undefined (UB aborts).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${1:-$root/build-fuzz}"
mkdir -p "$out/obj"
out="$(cd "$out" && pwd)"
gen="$out/gen"
CC="${CC:-clang}"
. "$here/common_srcs.sh"
h5fz_fuzz_gen_sources

SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
CFLAGS="-std=c11 -g -O1 -fno-omit-frame-pointer -ffp-contract=off -fno-fast-math -Wall \
  -Wno-unused-function $H5FZ_FUZZ_DEFS $H5FZ_FUZZ_INC"

# library objects, instrumented for coverage (fuzzer-no-link), in parallel;
# rebuilt when any source or header is newer than the object
objs=()
pids=()
newest_hdr="$(ls -t "$root"/fusion/*.h "$root"/fusion/*/*.h "$root"/device_ops/*.h "$root"/planner/*.h "$0" | head -1)"
for s in "${H5FZ_FUZZ_SRCS[@]}"; do
  o="$out/obj/$(basename "${s%.c}").o"
  objs+=("$o")
  if [ ! -e "$o" ] || [ "$s" -nt "$o" ] || [ "$newest_hdr" -nt "$o" ]; then
    $CC $CFLAGS $SAN -fsanitize=fuzzer-no-link -c "$s" -o "$o" &
    pids+=($!)
  fi
done
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=1; done
[ "$rc" -eq 0 ] || { echo "build.sh: compiling the library failed" >&2; exit 1; }

for t in chunk_decode cd_values spec_parse; do
  $CC $CFLAGS $SAN -fsanitize=fuzzer "$here/fuzz_$t.c" "${objs[@]}" -o "$out/fuzz_$t" -lz -lm -ldl -lpthread
done
echo "built: $out/fuzz_chunk_decode $out/fuzz_cd_values $out/fuzz_spec_parse"
