#!/usr/bin/env bash
# h5fz_embed_kernels --archs: the modules planned for a list of compute
# capabilities are those of devices of exactly those architectures (a
# subset of --archs all), and a bad list is refused. --list plans and
# generates without compiling: needs NVRTC (for its architectures), no GPU;
# skips (77) without NVRTC.
# usage: embed_archs_list.sh EMBEDDER CHAINS_FILE
set -uo pipefail
embed=$1 chains=$2
all=$("$embed" --chains "$chains" --list 2>/dev/null)
rc=$?
if [ $rc -ne 0 ]; then
  if "$embed" --chains "$chains" --list 2>&1 | grep -q -i nvrtc; then
    echo "SKIP: no NVRTC here: $("$embed" --chains "$chains" --list 2>&1 | head -1)"
    exit 77
  fi
  echo "FAIL: --list (all) exited $rc"; exit 1
fi
fail=0
n_all=$(printf '%s\n' "$all" | grep -c .)
h200=$("$embed" --chains "$chains" --archs 90 --list) || { echo "FAIL: --archs 90 --list"; exit 1; }
n90=$(printf '%s\n' "$h200" | grep -c .)
two=$("$embed" --chains "$chains" --archs 90,80 --list) || { echo "FAIL: --archs 90,80 --list"; exit 1; }
n2=$(printf '%s\n' "$two" | grep -c .)
echo "modules: all $n_all, sm_90 $n90, sm_90+sm_80 $n2"
[ "$n90" -gt 0 ] || { echo "FAIL: nothing planned for sm_90"; fail=1; }
[ "$n90" -lt "$n_all" ] || { echo "FAIL: --archs 90 planned as many modules as all ($n90)"; fail=1; }
[ "$n2" -gt "$n90" ] && [ "$n2" -le "$n_all" ] || { echo "FAIL: --archs 90,80 planned $n2 (sm_90 alone $n90, all $n_all)"; fail=1; }
# every module of a list is one of all's (same key), and the sm_90 list names sm_90 or a PTX arch only.
# Here-strings, not pipes: under pipefail, grep -q exiting at its first
# match makes printf's next write fail (SIGPIPE), a false FAIL.
while read -r key rest; do
  grep -q "^$key " <<<"$all" || { echo "FAIL: $key ($rest) is not one of all's modules"; fail=1; }
done <<<"$two"
if grep -q -v -E ' (sm_90|compute_[0-9]+) ' <<<"$h200"; then
  echo "FAIL: --archs 90 planned modules of another cubin arch:"; printf '%s\n' "$h200" | grep -v ' sm_90 ' | head -3; fail=1
fi
for bad in "sm_90" "9.0" "90,,80" "" "1000"; do
  if "$embed" --chains "$chains" --archs "$bad" --list >/dev/null 2>&1; then
    echo "FAIL: --archs '$bad' accepted"; fail=1
  fi
done
[ $fail -eq 0 ] && echo "embed_archs_list: OK"
exit $fail
