#!/usr/bin/env bash
# run_regressions.sh - replay tests/fuzz/corpus/<target> and
# tests/fuzz/regressions/<target> through the three fuzz targets, built
# without libFuzzer (replay_main.c) by the system C compiler (gcc is fine),
# with AddressSanitizer + UBSan when the compiler can link them.
#
#   tests/fuzz/run_regressions.sh [WORKDIR]      (default: build-fuzz-replay)
#
# Exit 0 when every input passes. The CTest tests fuzz.replay_* (tests/fuzz/
# CMakeLists.txt) do the same through the normal CMake build.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
work="${1:-$root/build-fuzz-replay}"
mkdir -p "$work"
work="$(cd "$work" && pwd)"
gen="$work/gen"
CC="${CC:-cc}"
. "$here/common_srcs.sh"
h5fz_fuzz_gen_sources

SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
echo 'int main(void){return 0;}' > "$work/probe.c"
if ! $CC $SAN "$work/probe.c" -o "$work/probe" 2>/dev/null; then
  echo "run_regressions.sh: $CC cannot link the sanitizers; replaying without them" >&2
  SAN=""
fi
CFLAGS="-std=c11 -O1 -g -ffp-contract=off -fno-fast-math -Wall -Wextra -Werror $H5FZ_FUZZ_DEFS $H5FZ_FUZZ_INC"
# compile the library once (objects shared by the three targets)
mkdir -p "$work/obj"
objs=()
pids=()
for s in "${H5FZ_FUZZ_SRCS[@]}"; do
  o="$work/obj/$(basename "${s%.c}").o"
  objs+=("$o")
  $CC $CFLAGS -Wno-error $SAN -c "$s" -o "$o" &
  pids+=($!)
done
fail=0
for p in "${pids[@]}"; do wait "$p" || fail=1; done
[ "$fail" -eq 0 ] || { echo "run_regressions.sh: compiling the library failed" >&2; exit 1; }

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
for t in chunk_decode cd_values spec_parse; do
  $CC $CFLAGS $SAN "$here/fuzz_$t.c" "$here/replay_main.c" "${objs[@]}" -o "$work/replay_$t" \
      -lz -lm -ldl -lpthread
  dirs=()
  for d in "$here/corpus/$t" "$here/regressions/$t"; do [ -d "$d" ] && dirs+=("$d"); done
  if ! "$work/replay_$t" "${dirs[@]}" 2>"$work/replay_$t.log"; then
    tail -n 40 "$work/replay_$t.log" >&2
    echo "run_regressions.sh: FAILED: $t (full log: $work/replay_$t.log)" >&2
    fail=1
  fi
done
exit "$fail"
