#!/usr/bin/env python3
"""h5fz's CPU executor beside PFPL's OpenMP build on the realistic array, in
one run, interleaved: for a shared machine, where two runs minutes apart
can differ by 2-3x, only figures taken side by side compare.

Each round runs every h5fz_bench_cpu given (--bench LABEL=PATH, e.g. the
build before a change and the build after it) with --realistic-only at one
bound, then PFPL's decompressor, then (with --pfpl-comp) its compressor,
each with the same thread count, and records the load average around each
run. The array is written once by the first bench (--write-realistic);
PFPL compresses it once before the rounds, and its decompressed output is
checked on every element (finite values within R, NaN still NaN, Inf
exact), as bench/suite/peers.py checks it; h5fz_bench_cpu checks its own.
Figures: h5fz_bench_cpu's medians of --runs runs; PFPL's own timer, the
median of its runs in the round. Output: one JSON line per run (--out
FILE, also printed) and a summary line per build and peer: the median over
the rounds.

  cpu_vs_pfpl.py --bench base=build-base/h5fz_bench_cpu --bench new=build/bin/h5fz_bench_cpu
                 --pfpl build-peers --data ../shared/data --threads 2 --rounds 5 --out FILE
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peers import check  # noqa: E402  (the same element check as peers.py)


def load():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def pfpl_median(text, what):
    t = [float(m) for m in re.findall(rf"lc {what} ecltime,\s*([0-9.eE+-]+)", text)]
    return (statistics.median(t), len(t)) if t else (None, 0)


def run_bench(path, a, env):
    cmd = [path, "--data", a.data, "--realistic-only", "--realistic-gib", str(a.gib), "--realistic-rel",
           repr(a.rel), "--runs", str(a.runs)]
    l0 = load()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    rows = [json.loads(x) for x in p.stdout.splitlines() if x.startswith("{\"field\"")]
    if p.returncode or not rows or "error" in rows[0]:
        sys.exit(f"cpu_vs_pfpl: {path} failed: {p.stdout[-400:]} {p.stderr[-400:]}")
    return rows[0], l0, load()


def run_pfpl(binary, args, env, what):
    l0 = load()
    p = subprocess.run([binary] + args, capture_output=True, text=True, env=env)
    t, n = pfpl_median(p.stdout, what)
    if p.returncode or t is None:
        sys.exit(f"cpu_vs_pfpl: {binary} failed: {p.stdout[-400:]} {p.stderr[-400:]}")
    return t, n, l0, load()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", action="append", required=True, help="LABEL=path of an h5fz_bench_cpu")
    ap.add_argument("--pfpl", required=True, help="folder of PFPL's OpenMP binaries (build_peers.sh)")
    ap.add_argument("--pfpl-suffix", default="", help="binary name suffix, e.g. _r3 for a build with fewer runs")
    ap.add_argument("--pfpl-comp", action="store_true", help="time PFPL's compressor too each round")
    ap.add_argument("--data", required=True)
    ap.add_argument("--gib", type=float, default=1.0)
    ap.add_argument("--rel", type=float, default=1e-4)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runs", type=int, default=3, help="h5fz_bench_cpu --runs")
    ap.add_argument("--out", help="JSON lines file")
    ap.add_argument("--work", default="/dev/shm" if os.path.isdir("/dev/shm") else None)
    a = ap.parse_args()
    benches = [b.split("=", 1) for b in a.bench]
    out = open(a.out, "w") if a.out else None

    rows = []

    def emit(row):
        rows.append(row)
        line = json.dumps(row)
        print(line, flush=True)
        if out:
            out.write(line + "\n")
            out.flush()

    env = dict(os.environ, H5FZ_THREADS=str(a.threads), H5FZ_DEVICE="cpu")
    omp = dict(os.environ, OMP_NUM_THREADS=str(a.threads), OMP_WAIT_POLICY="PASSIVE")
    comp = os.path.join(a.pfpl, "pfpl_f32_abs_comp_omp" + a.pfpl_suffix)
    decomp = os.path.join(a.pfpl, "pfpl_f32_abs_decomp_omp" + a.pfpl_suffix)
    with tempfile.TemporaryDirectory(dir=a.work, prefix="h5fz-cpu-vs-pfpl-") as work:
        raw, cmp_path, dec = (os.path.join(work, n) for n in ("realistic.f32", "pfpl.cmp", "pfpl.dec"))
        p = subprocess.run([benches[0][1], "--data", a.data, "--realistic-gib", str(a.gib), "--write-realistic", raw],
                           capture_output=True, text=True)
        if p.returncode:
            sys.exit(f"cpu_vs_pfpl: cannot write the realistic array: {p.stdout} {p.stderr}")
        info = json.loads(p.stdout.strip().splitlines()[-1])
        nbytes = info["bytes"]
        uname = os.uname()
        emit({"machine": {"cpu_count": os.cpu_count(), "kernel": f"{uname.sysname} {uname.release}",
                          "arch": uname.machine}, "array": info, "rel": a.rel, "threads": a.threads,
              "h5fz_runs": a.runs, "pfpl": os.path.basename(decomp)})
        t, n, l0, l1 = run_pfpl(comp, [raw, cmp_path, repr(a.rel)], omp, "comp")
        ratio = nbytes / os.path.getsize(cmp_path)
        emit({"round": 0, "who": "PFPL", "op": "compress", "GBps": nbytes / t / 1e9, "runs": n, "ratio": ratio,
              "load_before": l0, "load_after": l1})
        orig = np.fromfile(raw, dtype="<f4")
        checked = False
        for r in range(1, a.rounds + 1):
            for label, path in benches:
                row, l0, l1 = run_bench(path, a, env)
                emit({"round": r, "who": f"h5fz {label}", "compress_GBps": row["compress_gbps"],
                      "decompress_GBps": row["decompress_gbps"], "compress_GBps_per_cpu_s":
                      row["compress_gbps_per_cpu_s"], "decompress_GBps_per_cpu_s": row["decompress_gbps_per_cpu_s"],
                      "ratio": row["ratio"], "bound_held": row["bound_held"],
                      "special_values_exact": row["special_values_exact"], "load_before": l0, "load_after": l1})
            t, n, l0, l1 = run_pfpl(decomp, [cmp_path, dec], omp, "decomp")
            row = {"round": r, "who": "PFPL", "op": "decompress", "GBps": nbytes / t / 1e9, "runs": n,
                   "load_before": l0, "load_after": l1}
            if not checked:
                row.update(check(orig, np.fromfile(dec, dtype="<f4"), a.rel))
                checked = True
            emit(row)
            if a.pfpl_comp:
                t, n, l0, l1 = run_pfpl(comp, [raw, cmp_path, repr(a.rel)], omp, "comp")
                emit({"round": r, "who": "PFPL", "op": "compress", "GBps": nbytes / t / 1e9, "runs": n,
                      "load_before": l0, "load_after": l1})
    # the medians over the rounds (round 0, PFPL's first compress, left out when rounds timed it)
    med = lambda v: statistics.median(v) if v else None  # noqa: E731
    timed = [x for x in rows if x.get("round", 0) > 0]
    loads = [x[k] for x in timed for k in ("load_before", "load_after")]
    summary = {"summary": "median over rounds", "rounds": a.rounds, "threads": a.threads,
               "load_median": med(loads), "load_min": min(loads), "load_max": max(loads)}
    for label, _ in benches:
        mine = [x for x in timed if x["who"] == f"h5fz {label}"]
        for k in ("compress_GBps", "decompress_GBps", "compress_GBps_per_cpu_s", "decompress_GBps_per_cpu_s"):
            summary[f"h5fz {label} {k}"] = med([x[k] for x in mine])
    for op in ("compress", "decompress"):
        v = [x["GBps"] for x in timed if x["who"] == "PFPL" and x["op"] == op]
        if not v and op == "compress":
            v = [x["GBps"] for x in rows if x.get("who") == "PFPL" and x["op"] == op]
        summary[f"PFPL {op}_GBps"] = med(v)
    emit(summary)
    if out:
        out.close()


if __name__ == "__main__":
    main()
