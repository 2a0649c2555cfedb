#!/usr/bin/env bash
# tenth session, device call 6: tests/gpu/run.sh at the final code (GPU tests, filter tests under strict GPU,
# Python, install tree), benchmarks skipped; then the MPI tests with the GPU (against .devrun/phdf5)
t0=$(date +%s); log=/tmp/c6; rm -rf $log; mkdir -p $log
OUT=$log H5FZ_SKIP_DATASET_BENCH=1 H5FZ_SKIP_BENCH=1 timeout 420 bash tests/gpu/run.sh > $log/run.txt 2>&1
echo "tests/gpu/run.sh rc=$? after $(( $(date +%s) - t0 )) s"
grep -E "tests passed|tests failed|FAIL|Failed|\*\*\*" $log/run.txt | head -30
grep -E "^[0-9]+% tests passed|tests failed out" $log/*.log | head -20
tar czf $OUT/c6.tgz -C $log . && echo "total $(( $(date +%s) - t0 )) s"
