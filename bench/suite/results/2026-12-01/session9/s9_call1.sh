#!/usr/bin/env bash
# ninth session, device call 1: bench/mpi/run.sh (MPI tests with the GPU, 1/2/4/8 ranks, MPS,
# the API's direct way for comparison) with the collective filtered write of the API
t0=$(date +%s); log=/tmp/mpi9; rm -rf $log; mkdir -p $log
OUT=$log timeout ${S9_LIMIT:-520} bash bench/mpi/run.sh --gib-per-rank ${S9_GIB:-1} --reps 1 > /dev/null 2>&1
echo "run.sh rc=$? after $(( $(date +%s) - t0 )) s"
grep -E "^-- \[|ctest -L mpi|exit [0-9]" $log/run.log | cut -c1-300 | head -40
grep -h "Failed\|\*\*\*Failed\|FAIL" $log/ctest-mpi.log $log/ctest-mpi-api.log 2>/dev/null | head -10
grep -c "collective filtered H5Dwrite" $log/ctest-mpi-api.log 2>/dev/null
cat $log/summary.md 2>/dev/null | head -50
awk '/^== mpi layout/ {h=$0} /write_part/ && h ~ /8 ranks/ {print h " :: " $0}' $log/run.log | cut -c1-330 | tail -14
tar czf $OUT/mpi9.tgz -C $log . && ls -la $OUT
