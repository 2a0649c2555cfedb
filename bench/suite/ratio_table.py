#!/usr/bin/env python3
"""The ratio table of docs/ratio.md from a filters_bench.py run with
--chunks capped (the field's shape, its last three dims capped at
64 x 64 x 256): ratio per field, filter and bound, and the geometric mean
over the fields every filter of the table handled within its bound
(a field one filter broke or crashed on is named and left out of every
geomean, so the means compare the same fields); optionally a
rate-distortion plot (ratio against PSNR, a few fields) of a second run
over more bounds.

  python3 ratio_table.py RUN.json --out DIR [--rd RD_RUN.json]

Writes DIR/ratio_table.md and DIR/ratio_table.json (and
DIR/rate_distortion.png with --rd). Every element was checked by
filters_bench.py (common.error_metrics); a row that broke its bound is
marked, never dropped.
"""
import argparse
import json
import math
import os
import sys
from collections import defaultdict


def load(path):
    with open(path) as f:
        doc = json.load(f)
    return doc, [r for r in doc["results"] if r.get("rel")]


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


def summarize(rows):
    t, filters, rels, fields = table(rows)
    left_out = sorted({f for f in fields for flt in filters for rel in rels if not usable(t[(flt, rel)].get(f))})
    common = [f for f in fields if f not in left_out]
    geo = {}
    for flt in filters:
        for rel in rels:
            vals = [t[(flt, rel)][f]["ratio"] for f in common]
            geo[(flt, rel)] = math.exp(sum(map(math.log, vals)) / len(vals)) if vals else None
    return t, filters, rels, fields, left_out, common, geo


def markdown(doc, rows):
    t, filters, rels, fields, left_out, common, geo = summarize(rows)
    out = ["# Ratio table", "",
           "Ratio = uncompressed bytes / stored chunk bytes; chunks: each field's shape with the last three dims "
           "capped at 64 x 64 x 256; bound = R x the field's finite range (ABS for every filter); every element "
           "checked (%s). Run: %s." % ("`filters_bench.py`, common.error_metrics", doc.get("label", "")), ""]
    out.append("Geometric mean over the %d fields every filter handled within its bound%s:" % (
        len(common), " (left out: %s)" % ", ".join(left_out) if left_out else ""))
    out.append("")
    out.append("| filter | " + " | ".join("R = %g" % r for r in rels) + " |")
    out.append("|---|" + "---|" * len(rels))
    for flt in filters:
        out.append("| %s | " % flt + " | ".join("%.2f" % geo[(flt, r)] if geo[(flt, r)] else "-" for r in rels) + " |")
    base = next((f for f in filters if f.startswith("sz3")), None)
    if base:
        for flt in filters:
            if flt.startswith("h5fz"):
                out.append("| %s / SZ3 | " % flt + " | ".join(
                    "%.2fx" % (geo[(flt, r)] / geo[(base, r)]) if geo[(flt, r)] and geo[(base, r)] else "-"
                    for r in rels) + " |")
    out += ["", "Per field (`!` = bound broken or error, left out of the means):", ""]
    out.append("| field | R | " + " | ".join(filters) + " |")
    out.append("|---|---|" + "---|" * len(filters))
    for f in fields:
        for rel in rels:
            cells = []
            for flt in filters:
                r = t[(flt, rel)].get(f)
                cells.append("-" if r is None else ("%.2f" % r["ratio"] if usable(r) else
                                                     "! " + (r.get("error", "bound broken")[:40])))
            out.append("| %s | %g | " % (f, rel) + " | ".join(cells) + " |")
    return "\n".join(out) + "\n", {"filters": filters, "rels": rels, "fields": fields, "left_out": left_out,
                                   "geomean": {"%s@%g" % k: v for k, v in geo.items()}}


def rd_plot(rows, path, fields_wanted=4):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    t, filters, rels, fields = table(rows)
    fields = fields[:fields_wanted]
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


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run", help="filters_bench.py JSON (--chunks capped)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--rd", help="a second run over more bounds for the rate-distortion plot")
    a = ap.parse_args()
    doc, rows = load(a.run)
    os.makedirs(a.out, exist_ok=True)
    md, js = markdown(doc, rows)
    with open(os.path.join(a.out, "ratio_table.md"), "w") as f:
        f.write(md)
    with open(os.path.join(a.out, "ratio_table.json"), "w") as f:
        json.dump(js, f, indent=1)
    if a.rd:
        rd_plot(load(a.rd)[1], os.path.join(a.out, "rate_distortion.png"))
    sys.stdout.write(md)


if __name__ == "__main__":
    main()
