#!/usr/bin/env bash
# gen_seeds.sh - (re)generate tests/fuzz/corpus/ from chunks the library
# makes (gen_seeds.c), with the system C compiler. Rerun after a format
# change; the corpus is committed.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
work="${1:-$root/build-fuzz-seeds}"
mkdir -p "$work"
gen="$work/gen"
. "$here/common_srcs.sh"
h5fz_fuzz_gen_sources
${CC:-cc} -std=c11 -O1 -g $H5FZ_FUZZ_DEFS $H5FZ_FUZZ_INC "$here/gen_seeds.c" "${H5FZ_FUZZ_SRCS[@]}" \
  -o "$work/gen_seeds" -lz -lm -ldl -lpthread
rm -rf "$here/corpus"
mkdir -p "$here/corpus/chunk_decode" "$here/corpus/cd_values" "$here/corpus/spec_parse"
"$work/gen_seeds" "$here/corpus"
