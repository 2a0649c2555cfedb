#!/usr/bin/env python3
"""PFPL and cuSZp beside h5fz on the realistic array, every output checked.

The realistic array is written by h5fz_bench_cpu --write-realistic (one
definition, bench/realistic_array.h: every real float32 field scaled to its
own finite range [0, 1], NaN and fill values kept, tiled whole to >= G GiB),
so ABS R is R times every field's own range. The peers are the binaries
bench/suite/build_peers.sh builds from their public sources:

- PFPL's OpenMP CPU build (f32 ABS; its own timer, 9 runs, median),
- PFPL's GPU build (its own CUDA-event timer around the kernels, data on the GPU),
- cuSZp through bench/suite/peers/cuszp_bench.cu (plain and outlier modes, 1-D,
  CUDA events around cuSZp_compress/decompress, data on the GPU).

Each decompressed array is read back and checked on every element: finite
values within R, NaN still NaN, Inf exact. A peer that breaks the bound is
reported with its count of violations, never dropped. h5fz's own rows come
from h5fz_bench_gpu's JSON (--h5fz-gpu) and h5fz_bench_cpu's JSON lines
(--h5fz-cpu) of the same array; the script writes peers.json, peers.md and,
with matplotlib, peers.png (GB/s against ratio).

  peers.py --bench-cpu BUILD/bin/h5fz_bench_cpu --data DIR --peers build-peers --out DIR
           [--gib 1] [--rel 1e-2,1e-3,1e-4] [--no-gpu] [--reps 9]
           [--h5fz-gpu bench_gpu.json] [--h5fz-cpu bench_cpu.jsonl] [--work DIR]
"""
import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile

import numpy as np


def check(orig, dec, bound):
    """Element-by-element check; returns a dict (violations counts every broken value)."""
    if dec.size != orig.size:
        return {"checked": 0, "violations": int(orig.size), "error": f"decoded {dec.size} values, expected {orig.size}"}
    violations = nan_lost = 0
    max_err = 0.0
    step = 1 << 24
    for i in range(0, orig.size, step):
        x = orig[i:i + step]
        y = dec[i:i + step]
        nan = np.isnan(x)
        inf = np.isinf(x)
        fin = ~(nan | inf)
        lost = int(np.count_nonzero(nan & ~np.isnan(y)))
        nan_lost += lost
        bad_inf = int(np.count_nonzero(inf & (x != y)))
        err = np.abs(x[fin].astype(np.float64) - y[fin].astype(np.float64))
        bad = int(np.count_nonzero(~(err <= bound)))  # NaN errors count as broken
        if err.size:
            m = float(np.nanmax(np.where(np.isnan(err), np.inf, err)))
            max_err = max(max_err, m)
        violations += lost + bad_inf + bad
    return {"checked": int(orig.size), "violations": violations, "nan_lost": nan_lost,
            "max_error": max_err, "bound_held": violations == 0}


def run(cmd, env=None, timeout=1800):
    return run_cpu(cmd, env, timeout)[:2]


def run_cpu(cmd, env=None, timeout=1800):
    """(exit status, output, CPU seconds of the child: user + system, all its threads)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return p.returncode, p.stdout + p.stderr, cpu


def pfpl_times(text, what):
    """Median of PFPL's own timings and how many runs it made."""
    t = [float(m) for m in re.findall(rf"lc {what} ecltime,\s*([0-9.eE+-]+)", text)]
    return (statistics.median(t), len(t)) if t else (None, 0)


def pfpl_row(where, comp, decomp, raw, orig, bound, work, threads):
    cmp_path = os.path.join(work, f"pfpl_{where}.cmp")
    dec_path = os.path.join(work, f"pfpl_{where}.dec")
    row = {"peer": "PFPL", "where": where, "variant": "f32 ABS", "rel": bound}
    if threads:
        row["threads"] = threads
    # passive waits: an OpenMP thread spinning at a barrier would count as work in the CPU time
    env = dict(os.environ, OMP_WAIT_POLICY="PASSIVE", OMP_NUM_THREADS=str(threads)) if where == "cpu" else None
    rc, out, cpu_c = run_cpu([comp, raw, cmp_path, repr(bound)], env)
    tc, nc = pfpl_times(out, "comp")
    if rc or tc is None:
        row["error"] = f"compress exit {rc}: {out.strip()[-300:]}"
        return row
    rc, out, cpu_d = run_cpu([decomp, cmp_path, dec_path], env)
    td, nd = pfpl_times(out, "decomp")
    if rc or td is None:
        row["error"] = f"decompress exit {rc}: {out.strip()[-300:]}"
        return row
    nbytes = orig.nbytes
    row.update({"ratio": nbytes / os.path.getsize(cmp_path), "compress_GBps": nbytes / tc / 1e9,
                "decompress_GBps": nbytes / td / 1e9, "timer": f"PFPL's own (median of its {nc} runs)"})
    if where == "cpu":  # per CPU second: the process's CPU time over its runs (its file I/O included)
        row.update({"compress_GBps_per_cpu_s": nc * nbytes / cpu_c / 1e9,
                    "decompress_GBps_per_cpu_s": nd * nbytes / cpu_d / 1e9})
    row.update(check(orig, np.fromfile(dec_path, dtype="<f4"), bound))
    for p in (cmp_path, dec_path):
        os.unlink(p)
    return row


def cuszp_row(binary, raw, orig, bound, mode, reps, work):
    dec_path = os.path.join(work, "cuszp.dec")
    row = {"peer": "cuSZp", "where": "gpu", "variant": f"f32 ABS {mode} 1-D", "rel": bound}
    rc, out = run([binary, raw, repr(bound), mode, str(reps), dec_path])
    try:
        res = json.loads(out.strip().splitlines()[-1])
    except (ValueError, IndexError):
        res = {"error": f"exit {rc}: {out.strip()[-300:]}"}
    if rc or "error" in res:
        row["error"] = res.get("error", f"exit {rc}")
        return row
    row.update({"ratio": res["ratio"], "compress_GBps": res["compress_GBps"],
                "decompress_GBps": res["decompress_GBps"], "timer": "CUDA events around the API calls, median"})
    row.update(check(orig, np.fromfile(dec_path, dtype="<f4"), bound))
    os.unlink(dec_path)
    return row


def h5fz_rows(gpu_json, cpu_jsonl):
    rows = []
    if gpu_json and os.path.exists(gpu_json):
        with open(gpu_json) as f:
            g = json.load(f)
        kern = g.get("realistic", {}).get("kernel", [])
        checks = {r["field"][:-len(" check")]: r for r in kern if r.get("field", "").endswith(" check")}
        for r in kern:
            name = r.get("field", "")
            if name.endswith(" check") or "encode_GBps" not in r:
                continue
            # "realistic R=0.001", "realistic fast R=0.001", "realistic R=0.001 ratio" (a chain of
            # H5FZ_BENCH_REALISTIC_CHAINS after the bound)
            rel_text, _, chain = name.split("R=")[1].partition(" ")
            rel = float(rel_text)
            c = checks.get(name, {})
            variant = ("fast chain (delta zigzag bitpack), kernels" if " fast " in name
                       else f"{chain} chain, kernels" if chain else "default chain, kernels")
            rows.append({"peer": "h5fz", "where": "gpu", "variant": variant, "rel": rel,
                         "ratio": c.get("container_ratio", r.get("payload_ratio")),
                         "payload_ratio": r.get("payload_ratio"), "compress_GBps": r["encode_GBps"],
                         "decompress_GBps": r["decode_GBps"], "checked": c.get("checked", 0),
                         "violations": c.get("violations"), "bound_held": c.get("bound_held"),
                         "max_error": c.get("max_error"), "timer": "CUDA events around the kernels, median"})
    if cpu_jsonl and os.path.exists(cpu_jsonl):
        threads = None
        with open(cpu_jsonl) as f:
            for line in f:
                try:
                    r = json.loads(line)
                except ValueError:
                    continue
                if "machine" in r:
                    threads = r["machine"].get("executor_threads", r["machine"].get("online_cpus"))
                if r.get("field") != "realistic" or "ratio" not in r:
                    continue
                rows.append({"peer": "h5fz", "where": "cpu", "variant": "default chain, CPU executor",
                             "rel": r["rel_bound"], "ratio": r["ratio"], "compress_GBps": r["compress_gbps"],
                             "decompress_GBps": r["decompress_gbps"], "threads": threads,
                             "compress_GBps_per_cpu_s": r.get("compress_gbps_per_cpu_s"),
                             "decompress_GBps_per_cpu_s": r.get("decompress_gbps_per_cpu_s"),
                             "checked": r["bytes"] // 4, "bound_held": r["bound_held"] and r["special_values_exact"],
                             "max_error": r["max_error"], "timer": "wall clock, 4 MiB chunks, median"})
    return rows


def markdown(rows):
    lines = ["| compressor | where | variant | R | ratio | compress GB/s | decompress GB/s | "
             "per CPU second (CPU rows): compress / decompress GB/s | bound held (checked) |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in sorted(rows, key=lambda r: (r["where"], -r["rel"], r["peer"], r["variant"])):
        if "error" in r:
            err = " ".join(r["error"].split()).replace("|", "/")[-160:]  # one table row: no newlines or bars
            lines.append(f"| {r['peer']} | {r['where']} | {r['variant']} | {r['rel']:g} | - | - | - | - | error: {err} |")
            continue
        held = "yes" if r.get("bound_held") else f"**no: {r.get('violations')} values off, {r.get('nan_lost', 0)} NaN lost**"
        who = r["where"] + (f" ({r['threads']} threads)" if r.get("threads") else "")
        pc = (f"{r['compress_GBps_per_cpu_s']:.2f} / {r['decompress_GBps_per_cpu_s']:.2f}"
              if r.get("compress_GBps_per_cpu_s") else "-")
        lines.append(f"| {r['peer']} | {who} | {r['variant']} | {r['rel']:g} | {r['ratio']:.2f} | "
                     f"{r['compress_GBps']:.2f} | {r['decompress_GBps']:.2f} | {pc} | {held} ({r.get('checked', 0):,}) |")
    return "\n".join(lines) + "\n"


def plot(rows, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, axes = plt.subplots(1, 2, figsize=(12, 5))
    for ax, key, title in ((axes[0], "compress_GBps", "compress"), (axes[1], "decompress_GBps", "decompress")):
        groups = {}
        for r in rows:
            if "error" not in r:
                groups.setdefault((r["peer"], r["where"], r["variant"], r.get("threads") or 0), []).append(r)
        for (peer, where, variant, nt), rs in sorted(groups.items()):
            rs.sort(key=lambda r: r["ratio"])
            label = f"{peer} {where}{f' {nt} threads' if nt else ''} {variant}" + (
                "" if all(r.get("bound_held") for r in rs) else " (bound broken)")
            ax.plot([r["ratio"] for r in rs], [r[key] for r in rs], marker="o" if where == "gpu" else "s", label=label)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("compression ratio")
        ax.set_ylabel("GB/s (uncompressed bytes)")
        ax.set_title(f"realistic array, {title}, R = 1e-2 .. 1e-4 (wall clock)")
        ax.grid(True, which="both", alpha=0.3)
    axes[1].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench-cpu", required=True, help="h5fz_bench_cpu (writes the realistic array)")
    ap.add_argument("--data", required=True)
    ap.add_argument("--peers", default="build-peers", help="folder of build_peers.sh's binaries")
    ap.add_argument("--out", required=True)
    ap.add_argument("--gib", type=float, default=1.0)
    ap.add_argument("--rel", default="1e-2,1e-3,1e-4")
    ap.add_argument("--reps", type=int, default=9)
    ap.add_argument("--no-gpu", action="store_true", help="CPU peers only")
    ap.add_argument("--cpu-threads", default="all,1",
                    help="PFPL OpenMP thread counts, comma-separated ('all' = every core; '' = no CPU peer rows)")
    ap.add_argument("--h5fz-gpu", help="h5fz_bench_gpu JSON of the same run")
    ap.add_argument("--h5fz-cpu", help="h5fz_bench_cpu JSON lines of the same run")
    ap.add_argument("--work", default="/dev/shm" if os.path.isdir("/dev/shm") else None)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    rels = [float(x) for x in a.rel.split(",")]
    rows = []
    with tempfile.TemporaryDirectory(dir=a.work, prefix="h5fz-peers-") as work:
        raw = os.path.join(work, "realistic.f32")
        rc, out = run([a.bench_cpu, "--data", a.data, "--realistic-gib", str(a.gib), "--write-realistic", raw])
        if rc:
            sys.exit(f"peers.py: cannot write the realistic array: {out}")
        info = json.loads(out.strip().splitlines()[-1])
        orig = np.fromfile(raw, dtype="<f4")
        threads = os.cpu_count()
        cpu_threads = sorted({threads if t == "all" else int(t) for t in a.cpu_threads.split(",") if t.strip()},
                             reverse=True)
        for rel in rels:
            b = os.path.join(a.peers, "pfpl_f32_abs_comp_omp")
            if os.access(b, os.X_OK):  # every core, and one (OpenMP's scaling on a shared machine varies)
                for nt in cpu_threads:
                    rows.append(pfpl_row("cpu", b, os.path.join(a.peers, "pfpl_f32_abs_decomp_omp"), raw, orig, rel,
                                         work, nt))
            if a.no_gpu:
                continue
            b = os.path.join(a.peers, "pfpl_f32_abs_comp_gpu")
            if os.access(b, os.X_OK):
                rows.append(pfpl_row("gpu", b, os.path.join(a.peers, "pfpl_f32_abs_decomp_gpu"), raw, orig, rel,
                                     work, None))
            b = os.path.join(a.peers, "cuszp_bench")
            if os.access(b, os.X_OK):
                for mode in ("plain", "outlier"):
                    rows.append(cuszp_row(b, raw, orig, rel, mode, a.reps, work))
            for r in rows:
                if r.get("rel") == rel:
                    print(json.dumps(r), flush=True)
    rows += h5fz_rows(a.h5fz_gpu, a.h5fz_cpu)
    res = {"array": info, "note": "realistic array (bench/realistic_array.h); ABS R = R x every field's own range; "
           "every output checked element by element", "rows": rows}
    with open(os.path.join(a.out, "peers.json"), "w") as f:
        json.dump(res, f, indent=1)
    md = markdown(rows)
    with open(os.path.join(a.out, "peers.md"), "w") as f:
        f.write(f"# Realistic array ({info['bytes']:,} bytes), h5fz beside PFPL and cuSZp\n\n" + md)
    print(md)
    if plot(rows, os.path.join(a.out, "peers.png")):
        print(f"plot: {os.path.join(a.out, 'peers.png')}")
    broken = [r for r in rows if r["peer"] == "h5fz" and not r.get("bound_held", False)]
    sys.exit(1 if broken else 0)


if __name__ == "__main__":
    main()
