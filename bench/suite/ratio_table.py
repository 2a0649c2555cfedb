#!/usr/bin/env python3
"""The ratio table of docs/ratio.md from a filters_bench.py run with
--chunks capped (the field's shape, its last three dims capped at
64 x 64 x 256): ratio per field, filter and bound, and geometric means.

  python3 ratio_table.py RUN.json [RUN2.json ...] --out DIR [--rd RD_RUN.json]
                         [--compare FILTER:V1,V2,V3]

`bench/suite/run.sh --ratio-table` makes the run and calls this (README.md).

Geometric means, each over the fields named:
- "common": the fields every filter of the table handled within its bound
  (a field one filter broke or crashed on is left out of these means, so
  they compare the same fields);
- "own": each filter over every field it handled within its bound (its
  count is given: with no failure, every field);
- "leave one out": each filter over every set of all fields but one (the
  way to find which subset a figure quoted "over N-1 fields" was taken on);
  --compare FILTER:V1,V2,V3 names the subset whose means are nearest to
  quoted figures V1.. (one per bound, loosest first).

Several RUN files are merged (rows of one (field, filter, bound) must not
repeat). Writes DIR/ratio_table.md, DIR/ratio_table.json, DIR/ratio_table.png
(geomean against R) and, with --rd, DIR/rate_distortion.png (ratio against
PSNR of a few fields). Every element was checked by filters_bench.py
(common.error_metrics); a row that broke its bound or failed is listed,
never dropped.
"""
import argparse
import json
import math
import os
import sys
from collections import defaultdict


def load(paths):
    """(the first run's document, every run's documents, the rows with a bound)."""
    docs, rows, seen = [], [], {}
    for p in paths:
        with open(p) as f:
            doc = json.load(f)
        docs.append(doc)
        for r in doc["results"]:
            if not r.get("rel"):
                continue
            key = (r["field"], r["filter"], r["rel"])
            if key in seen:
                raise SystemExit("ratio_table.py: %s %s R=%g is in %s and in %s" % (key + (seen[key], p)))
            seen[key] = p
            rows.append(r)
    if not rows:
        raise SystemExit("ratio_table.py: no lossy rows in %s" % ", ".join(paths))
    return docs, rows


def table(rows):
    """{(filter, rel): {field: record}} and the list of filters, bounds, fields."""
    t = defaultdict(dict)
    for r in rows:
        t[(r["filter"], r["rel"])][r["field"]] = r
    filters = sorted({k[0] for k in t}, key=lambda f: (not f.startswith("sz3"), not f.startswith("zfp"), f))
    rels = sorted({k[1] for k in t}, reverse=True)
    fields = sorted({r["field"] for r in rows})
    return t, filters, rels, fields


def usable(r):
    return r is not None and "error" not in r and r.get("bound_ok") and r.get("ratio")


def gmean(vals):
    return math.exp(sum(map(math.log, vals)) / len(vals)) if vals else None


def verdict(r):
    """One line on a row that is not usable: the error, or how the bound broke."""
    if r is None:
        return "missing (not run)"
    if "error" in r:
        return r["error"]
    parts = []
    if r.get("over_bound"):
        parts.append("%d values over the bound (max err %.6g > %.6g)" % (r["over_bound"], r["max_err"], r["bound"]))
    for k, what in (("nan_lost", "NaN not kept"), ("finite_lost", "finite values not finite"),
                    ("inf_changed", "Inf changed")):
        if r.get(k):
            parts.append("%d %s" % (r[k], what))
    return "bound broken: " + ("; ".join(parts) or "bound_ok false") + (
        " (ratio %.2f)" % r["ratio"] if r.get("ratio") else "")


def summarize(rows):
    t, filters, rels, fields = table(rows)
    left_out = sorted({f for f in fields for flt in filters for rel in rels if not usable(t[(flt, rel)].get(f))})
    common = [f for f in fields if f not in left_out]
    geo, own, loo = {}, {}, {}
    for flt in filters:
        for rel in rels:
            cell = t[(flt, rel)]
            geo[(flt, rel)] = gmean([cell[f]["ratio"] for f in common])
            ok = [f for f in fields if usable(cell.get(f))]
            own[(flt, rel)] = (gmean([cell[f]["ratio"] for f in ok]), ok)
            for out in fields:  # every field but `out`, where the filter handled all of them
                rest = [f for f in fields if f != out]
                loo[(flt, rel, out)] = gmean([cell[f]["ratio"] for f in rest]) if set(rest) <= set(ok) else None
    bad = [(flt, rel, f, verdict(t[(flt, rel)].get(f))) for flt in filters for rel in rels for f in fields
           if not usable(t[(flt, rel)].get(f))]
    return t, filters, rels, fields, left_out, common, geo, own, loo, bad


def nearest_subset(loo, flt, rels, fields, quoted):
    """The left-out field whose leave-one-out means are nearest to `quoted` (largest relative deviation)."""
    best = None
    for out in fields:
        vals = [loo.get((flt, rel, out)) for rel in rels]
        if None in vals:
            continue
        dev = max(abs(v / q - 1) for v, q in zip(vals, quoted))
        if best is None or dev < best[1]:
            best = (out, dev, vals)
    return best


def fmt(v):
    return "%.2f" % v if v else "-"


def run_lines(docs):
    out = []
    for d in docs:
        m = d.get("machine", {})
        out.append("- run `%s`: %s, commit %s, %s (%s CPUs, load %s at start), Python %s, h5py %s, HDF5 %s, "
                   "hdf5plugin %s, h5fz executor %s; command: `%s`" % (
                       d.get("label", ""), d.get("date_utc", "date not recorded"), d.get("git_commit") or "not recorded",
                       m.get("cpu", "CPU ?"), m.get("cpus", "?"),
                       "/".join("%.1f" % x for x in m.get("loadavg_start", [])) or "?",
                       d.get("python", "?"), d.get("h5py", "?"), d.get("hdf5", "?"), d.get("hdf5plugin", "?"),
                       d.get("h5fz_executor", "?"), d.get("command", "not recorded")))
    return out


def markdown(docs, rows, compare=None):
    t, filters, rels, fields, left_out, common, geo, own, loo, bad = summarize(rows)
    heads = " | ".join("R = %g" % r for r in rels)
    out = ["# Ratio table", "",
           "Ratio = uncompressed bytes / stored chunk bytes; chunks: each field's shape with the last three dims "
           "capped at 64 x 64 x 256; bound = R x the field's finite range (ABS for every filter); every element "
           "checked (`filters_bench.py`, common.error_metrics).", ""] + run_lines(docs) + [""]
    n_rows = sum(1 for flt in filters for rel in rels for f in fields if t[(flt, rel)].get(f) is not None)
    n_broken = sum(1 for b in bad if b[3].startswith("bound broken"))
    n_failed = sum(1 for b in bad if not b[3].startswith(("bound broken", "missing")))
    out.append("Bound check: %d rows: %d within the bound, %d broke it, %d gave no result (crash, timeout or "
               "refusal)%s" % (n_rows, n_rows - n_broken - n_failed, n_broken, n_failed,
                               "." if not bad else "; every row not used:"))
    out.append("")
    for flt, rel, f, why in bad:
        out.append("- **%s**, %s, R = %g: %s" % (flt, f, rel, why))
    if bad:
        out.append("")
    out.append("Geometric mean over the %d fields every filter handled within its bound%s:" % (
        len(common), " (left out: %s)" % ", ".join(left_out) if left_out else ""))
    out += ["", "| filter | " + heads + " |", "|---|" + "---|" * len(rels)]
    for flt in filters:
        out.append("| %s | " % flt + " | ".join(fmt(geo[(flt, r)]) for r in rels) + " |")
    base = next((f for f in filters if f.startswith("sz3")), None)
    if base:
        for flt in filters:
            if flt.startswith("h5fz"):
                out.append("| %s / SZ3 | " % flt + " | ".join(
                    "%.2fx" % (geo[(flt, r)] / geo[(base, r)]) if geo[(flt, r)] and geo[(base, r)] else "-"
                    for r in rels) + " |")
    if left_out:
        out += ["", "Geometric mean of each filter over every field it handled within its bound (n = fields):", "",
                "| filter | " + heads + " |", "|---|" + "---|" * len(rels)]
        for flt in filters:
            out.append("| %s | " % flt + " | ".join(
                "%s (n = %d)" % (fmt(own[(flt, r)][0]), len(own[(flt, r)][1])) for r in rels) + " |")
    out += ["", "Leave one out: geometric mean over the %d fields other than the one named, R = %s (`-`: the "
            "filter failed on one of them):" % (len(fields) - 1, " / ".join("%g" % r for r in rels)), "",
            "| left out | " + " | ".join(filters) + " |", "|---|" + "---|" * len(filters)]
    for f in fields:
        out.append("| %s | " % f + " | ".join(
            " / ".join(fmt(loo[(flt, r, f)]) for r in rels) if all(loo[(flt, r, f)] for r in rels) else "-"
            for flt in filters) + " |")
    best = nearest_subset(loo, compare[0], rels, fields, compare[1]) if compare else None
    if compare:
        flt, quoted = compare
        out.append("")
        if best:
            out.append("Quoted %s figures %s: nearest leave-one-out set is without **%s** (%s here; largest "
                       "deviation %.1f %%)." % (flt, " / ".join("%g" % q for q in quoted), best[0],
                                                 " / ".join("%.2f" % v for v in best[2]), 100 * best[1]))
        else:
            out.append("Quoted %s figures: no leave-one-out set where %s handled every field." % (flt, flt))
    if best:  # every filter over that set (a filter that failed on some of it: over those it handled, n given)
        subset = [f for f in fields if f != best[0]]
        sub = {}
        for flt in filters:
            for rel in rels:
                ok = [f for f in subset if usable(t[(flt, rel)].get(f))]
                sub[(flt, rel)] = (gmean([t[(flt, rel)][f]["ratio"] for f in ok]), len(ok))
        out += ["", "Geometric mean over the %d fields without %s (the set of the quoted figures; n < %d: the "
                "filter failed or broke its bound on some of them, see above):" % (len(subset), best[0], len(subset)),
                "", "| filter | " + heads + " |", "|---|" + "---|" * len(rels)]
        for flt in filters:
            out.append("| %s | " % flt + " | ".join(
                fmt(sub[(flt, r)][0]) + ("" if sub[(flt, r)][1] == len(subset) else " (n = %d)" % sub[(flt, r)][1])
                for r in rels) + " |")
        if compare[0] in filters:
            for flt in filters:
                if flt.startswith("h5fz"):
                    out.append("| %s / %s | " % (flt, compare[0]) + " | ".join(
                        "%.2fx" % (sub[(flt, r)][0] / sub[(compare[0], r)][0])
                        if sub[(flt, r)][0] and sub[(compare[0], r)][0] and sub[(flt, r)][1] == len(subset)
                        and sub[(compare[0], r)][1] == len(subset) else "-" for r in rels) + " |")
    out += ["", "Per field (`!` = bound broken or error, left out of the common means; details above):", "",
            "| field | R | " + " | ".join(filters) + " |", "|---|---|" + "---|" * len(filters)]
    for f in fields:
        for rel in rels:
            cells = []
            for flt in filters:
                r = t[(flt, rel)].get(f)
                cells.append("-" if r is None else fmt(r["ratio"]) if usable(r) else
                             "! bound broken (%s)" % fmt(r.get("ratio")) if "error" not in r else
                             "! timed out" if r["error"].startswith("timed out") else
                             "! " + r["error"].split(":")[0][:40])
            out.append("| %s | %g | " % (f, rel) + " | ".join(cells) + " |")
    js = {"runs": [{k: d.get(k) for k in ("label", "date_utc", "git_commit", "command", "machine", "python", "h5py",
                                          "hdf5", "hdf5plugin", "h5fz_executor")} for d in docs],
          "filters": filters, "rels": rels, "fields": fields, "left_out": left_out, "common": common,
          "geomean": {"%s@%g" % k: v for k, v in geo.items()},
          "geomean_own": {"%s@%g" % k: {"geomean": v[0], "fields": v[1]} for k, v in own.items()},
          "leave_one_out": {"%s@%g" % (flt, rel): {f: loo[(flt, rel, f)] for f in fields}
                            for flt in filters for rel in rels},
          "not_usable": [{"filter": b[0], "rel": b[1], "field": b[2], "why": b[3]} for b in bad],
          "rows": n_rows, "rows_within_bound": n_rows - n_broken - n_failed, "rows_bound_broken": n_broken,
          "rows_no_result": n_failed}
    if compare:
        js["compare"] = {"filter": compare[0], "quoted": compare[1],
                         "nearest_left_out": best[0] if best else None,
                         "max_rel_deviation": best[1] if best else None, "values": best[2] if best else None}
        if best:
            js["compare"]["geomean_subset"] = {"%s@%g" % k: {"geomean": v[0], "n": v[1]} for k, v in sub.items()}
    return "\n".join(out) + "\n", js


def geo_plot(rows, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    t, filters, rels, fields, left_out, common, geo, own, loo, bad = summarize(rows)
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for flt in filters:
        pts = [(r, geo[(flt, r)]) for r in rels if geo[(flt, r)]]
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=flt,
                    ls="--" if not flt.startswith("h5fz") else "-")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.invert_xaxis()
    ax.set_xlabel("R (ABS bound = R x field range)")
    ax.set_ylabel("geometric mean ratio")
    ax.set_title("%d fields%s" % (len(common), " (without %s)" % ", ".join(left_out) if left_out else ""), fontsize=9)
    ax.grid(alpha=0.3, which="both")
    if ax.lines:
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def rd_plot(rows, path, fields_wanted=4):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    t, filters, rels, fields = table(rows)
    every = [f for f in fields if all(usable(t[(flt, r)].get(f)) for flt in filters for r in rels)]
    fields = (every + [f for f in fields if f not in every])[:fields_wanted]  # fields every filter handled first
    fig, axes = plt.subplots(1, len(fields), figsize=(4.2 * len(fields), 3.6), squeeze=False)
    for ax, f in zip(axes[0], fields):
        for flt in filters:
            pts = [(t[(flt, r)][f]["psnr_db"], t[(flt, r)][f]["ratio"]) for r in rels
                   if usable(t[(flt, r)].get(f)) and isinstance(t[(flt, r)][f].get("psnr_db"), (int, float))]
            if pts:
                pts.sort()
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", ms=3, label=flt)
        ax.set_yscale("log")
        ax.set_xlabel("PSNR (dB)")
        ax.set_ylabel("ratio")
        ax.set_title(f, fontsize=9)
        ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def parse_compare(text):
    flt, sep, vals = text.rpartition(":")
    try:
        quoted = [float(v) for v in vals.split(",")]
    except ValueError:
        quoted = None
    if not sep or not flt or not quoted or any(q <= 0 for q in quoted):
        raise argparse.ArgumentTypeError("--compare wants FILTER:V1,V2,... (positive numbers), not %r" % text)
    return flt, quoted


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run", nargs="+", help="filters_bench.py JSON (--chunks capped); several are merged")
    ap.add_argument("--out", required=True)
    ap.add_argument("--rd", help="a run (maybe over more bounds) for the rate-distortion plot")
    ap.add_argument("--compare", type=parse_compare, metavar="FILTER:V1,V2,V3",
                    help="quoted geomeans of FILTER, one per bound (loosest first): name the nearest leave-one-out set")
    ap.add_argument("--no-plots", action="store_true")
    a = ap.parse_args()
    docs, rows = load(a.run)
    if a.compare:
        _, filters, rels, _ = table(rows)
        if a.compare[0] not in filters:
            ap.error("--compare: no filter %r in the run (filters: %s)" % (a.compare[0], ", ".join(filters)))
        if len(a.compare[1]) != len(rels):
            ap.error("--compare: %d figures for %d bounds" % (len(a.compare[1]), len(rels)))
    os.makedirs(a.out, exist_ok=True)
    md, js = markdown(docs, rows, a.compare)
    with open(os.path.join(a.out, "ratio_table.md"), "w") as f:
        f.write(md)
    with open(os.path.join(a.out, "ratio_table.json"), "w") as f:
        json.dump(js, f, indent=1)
    if not a.no_plots:
        geo_plot(rows, os.path.join(a.out, "ratio_table.png"))
        if a.rd:
            rd_plot(load([a.rd])[1], os.path.join(a.out, "rate_distortion.png"))
    sys.stdout.write(md)


if __name__ == "__main__":
    main()
