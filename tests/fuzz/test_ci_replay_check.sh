#!/usr/bin/env bash
# test_ci_replay_check.sh SOURCE_DIR - .ci/run's "are the fuzz replays in
# the suite already?" step, run as CI runs it (bash -euo pipefail) against a
# stub ctest whose listing names the replays and goes on long after (as
# `ctest -N` does: the match, then more lines): the step must find them
# every time and never rebuild them. `ctest -N | grep -q` failed here:
# grep -q leaves at the first match, ctest dies of SIGPIPE and pipefail
# turns the found replays into "missing" (24 of 40 CI runs).
set -euo pipefail
src=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# the step: from .ci/run's fuzzing comment to the end of its first `if`
awk '/^# Bounded fuzzing/ {on = 1} on {print} on && /^fi$/ {exit}' "$src/.ci/run" >"$work/step.sh"
grep -q 'run_regressions.sh' "$work/step.sh" || { echo "the replay step was not found in .ci/run" >&2; exit 1; }

mkdir -p "$work/bin" "$work/tests/fuzz"
cat >"$work/bin/ctest" <<'STUB'
#!/usr/bin/env bash
echo "  Test  #1: fuzz.replay_chunk_decode"
for i in $(seq 1 20000); do echo "  Test #$((i + 1)): padding_line_$i"; done
STUB
cat >"$work/tests/fuzz/run_regressions.sh" <<'STUB'
#!/usr/bin/env bash
touch "$(dirname "$0")/rebuilt"
STUB
chmod +x "$work/bin/ctest" "$work/tests/fuzz/run_regressions.sh"

for try in 1 2 3 4 5; do
  (cd "$work" && PATH="$work/bin:$PATH" bash -euo pipefail step.sh)
  if [ -e "$work/tests/fuzz/rebuilt" ]; then
    echo "try $try: the replays were listed, yet the step rebuilt them" >&2
    exit 1
  fi
done
echo "the replay step found the listed replays 5 times out of 5"
