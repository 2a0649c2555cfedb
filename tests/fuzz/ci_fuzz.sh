#!/usr/bin/env bash
# ci_fuzz.sh - bounded fuzzing for CI: build the libFuzzer targets
# (build.sh), then run each for SECONDS (default 60) on a scratch copy of
# its seed corpus plus its regression inputs, the three in parallel. Exit 1
# on any finding (crash, sanitizer report, invariant, timeout, OOM), with the
# input kept under WORKDIR/artifacts and printed in base64.
#
#   tests/fuzz/ci_fuzz.sh [SECONDS] [WORKDIR]    (default 60, build-fuzz-ci)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
secs="${1:-60}"
work="${2:-$root/build-fuzz-ci}"
"$here/build.sh" "$work"
work="$(cd "$work" && pwd)"
mkdir -p "$work/artifacts"
pids=()
for t in chunk_decode cd_values spec_parse; do
  rm -rf "$work/corpus_$t"
  mkdir -p "$work/corpus_$t"
  cp "$here/corpus/$t/"* "$work/corpus_$t/"
  [ -d "$here/regressions/$t" ] && find "$here/regressions/$t" -type f ! -name '.*' -exec cp {} "$work/corpus_$t/" \;
  # -max_len 4096 with -malloc_limit_mb 256: a chunk of at most 4 KiB never
  # makes the decoder allocate more than 256 MiB at once (it may decode to
  # 16384 x its size, never to what a corrupt header claims)
  ( cd "$work" && "./fuzz_$t" -max_total_time="$secs" -timeout=30 -max_len=4096 -malloc_limit_mb=256 \
      -rss_limit_mb=2560 -print_final_stats=1 \
      -artifact_prefix="$work/artifacts/$t-" "corpus_$t" >"$work/fuzz_$t.log" 2>&1 ) &
  pids+=($!)
done
fail=0
i=0
for t in chunk_decode cd_values spec_parse; do
  if wait "${pids[$i]}"; then
    echo "fuzz $t: $(grep -E '^stat::number_of_executed_units' "$work/fuzz_$t.log" | awk '{print $2}') runs in ${secs} s, no finding"
  else
    fail=1
    echo "fuzz $t: FINDING (log $work/fuzz_$t.log)" >&2
    grep -v -E '^#[0-9]+' "$work/fuzz_$t.log" | tail -n 60 >&2
  fi
  i=$((i + 1))
done
exit "$fail"
