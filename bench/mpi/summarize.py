"""Summarise bench/mpi/run.sh's JSON files (h5fz_bench_mpi: one shared
file; h5fz_bench_node: a file per process): aggregate GB/s per layout,
label, path and rank count, each beside the one-rank figure of the same
layout, label and path.

    summarize.py OUT_DIR     (writes OUT_DIR/summary.json; prints Markdown)

Also the direct chunk write patterns (h5fz_bench_mpi_direct_chunk,
direct_chunk_n<N>.jsonl), when run.sh ran them: a second table, and
OUT_DIR/direct_chunk.json.
"""
import glob
import json
import os
import sys


def main(out):
    runs = {}
    for path in sorted(glob.glob(os.path.join(out, "bench_mpi_*_n*.json")) +
                       glob.glob(os.path.join(out, "bench_node_*_n*.json"))):
        try:
            j = json.load(open(path))
        except (OSError, ValueError) as e:
            print("skipped %s: %s" % (path, e), file=sys.stderr)
            continue
        for r in j["results"]:
            layout = "node" if j["benchmark"] == "h5fz_bench_node" else "mpi"
            key = (layout, j["label"], r["path"])
            runs.setdefault(key, {})[j["ranks"]] = dict(r, all_checks_passed=j["all_checks_passed"],
                                                        total_bytes=j["total_bytes"])
    summary = []
    lines = ["| layout | label | path | ranks | write GB/s (x one rank) | read GB/s (x one rank) | ratio | checks |",
             "|---|---|---|---|---|---|---|---|"]
    for (layout, label, path), by_n in sorted(runs.items()):
        one = by_n.get(1)
        for n in sorted(by_n):
            r = by_n[n]
            row = {"layout": layout, "label": label, "path": path, "ranks": n, "write_GBps": r["write_GBps"],
                   "read_GBps": r["read_GBps"], "ratio": r["ratio"],
                   "write_x_one_rank": r["write_GBps"] / one["write_GBps"] if one else None,
                   "read_x_one_rank": r["read_GBps"] / one["read_GBps"] if one else None,
                   "bound_ok": r["bound_ok"], "chunks_identical_to_filter": r["chunks_identical_to_filter"],
                   "api_ranks_on_gpu": r["api_ranks_on_gpu"]}
            summary.append(row)
            fx = lambda v: "" if v is None else " (%.2fx)" % v
            lines.append("| %s | %s | %s | %d | %.2f%s | %.2f%s | %.2f | %s |" % (
                layout, label, path, n, r["write_GBps"], fx(row["write_x_one_rank"]), r["read_GBps"],
                fx(row["read_x_one_rank"]), r["ratio"],
                "ok" if r["bound_ok"] and r["chunks_identical_to_filter"] is not False else "FAILED"))
    direct = direct_chunk_rows(out)
    json.dump(summary, open(os.path.join(out, "summary.json"), "w"), indent=1)
    print("\n".join(lines))
    if direct:
        json.dump(direct, open(os.path.join(out, "direct_chunk.json"), "w"), indent=1)
        print("\nH5Dwrite_chunk under MPI-IO (h5fz_bench_mpi_direct_chunk; hung: killed after 10 s)\n")
        print("| HDF5 | ranks | mode | pattern | H5Dwrite_chunk | file reads back | s | MB | chunks stored |")
        print("|---|---|---|---|---|---|---|---|---|")
        for r in direct:
            if r.get("hung_or_failed"):
                print("| | %d | %d | | hung or failed (exit %d) | | | | |" % (r["ranks"], r["mode"], r["exit"]))
                continue
            print("| %s | %d | %d | %s | %s | %s | %.4f | %.1f | %d |" % (
                r["hdf5"], r["ranks"], r["mode"], r["what"], "ok" if r["write_chunk_ok"] else "FAILED",
                "yes" if r["reads_back"] else "NO", r["seconds"], r["compressed_bytes"] / 1e6, r["chunks_stored"]))


def direct_chunk_rows(out):
    rows = []
    for path in sorted(glob.glob(os.path.join(out, "direct_chunk_n*.jsonl"))):
        for line in open(path):
            try:
                rows.append(json.loads(line))
            except ValueError:
                print("skipped a line of %s: %r" % (path, line[:200]), file=sys.stderr)
    return rows


if __name__ == "__main__":
    main(sys.argv[1])
