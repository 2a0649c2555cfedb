"""Summarise bench/mpi/run.sh's JSON files (h5fz_bench_mpi: one shared
file; h5fz_bench_node: a file per process): aggregate GB/s per layout,
label, path and rank count, each beside the one-rank figure of the same
layout, label and path.

    summarize.py OUT_DIR     (writes OUT_DIR/summary.json; prints Markdown)
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
    json.dump(summary, open(os.path.join(out, "summary.json"), "w"), indent=1)
    print("\n".join(lines))


if __name__ == "__main__":
    main(sys.argv[1])
