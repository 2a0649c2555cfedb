#!/usr/bin/env python3
"""Merge the suite's JSON parts into results.json and write results.md (Markdown tables) and the
PNG plots (ratio vs bound per field; write/read throughput per field; GPU throughput against the
HBM limit) next to them.
  report.py --parts DIR --out DIR [--no-plots]
  report.py --results results.json --out DIR      (plots/tables again from a merged results.json)"""
import argparse
import json
import sys
import math
import os

ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
ap.add_argument("--parts", action="append", default=[], help="folder of parts (*.json); may repeat")
ap.add_argument("--results", action="append", default=[], help="merged results.json to read; may repeat")
ap.add_argument("--out", required=True)
ap.add_argument("--no-plots", action="store_true")
args = ap.parse_args()

PART_NAMES = ["filters_cpu", "filters_cpu_h5fz", "filters_gpu", "bench_gpu", "gpu_baselines", "peers"]
parts = {}
for r in args.results:
    with open(r) as f:
        parts.update(json.load(f)["parts"])
for d in args.parts:
    for n in PART_NAMES:
        p = os.path.join(d, n + ".json")
        if os.path.exists(p) and os.path.getsize(p):
            try:
                with open(p) as f:
                    parts[n] = json.load(f)
            except json.JSONDecodeError as e:
                parts[n] = {"error": "unreadable: %s" % e}
os.makedirs(args.out, exist_ok=True)
with open(os.path.join(args.out, "results.json"), "w") as f:
    json.dump({"suite": "h5fz bench/suite", "parts": parts}, f, indent=1)

filter_rows = []
for n in ("filters_cpu", "filters_cpu_h5fz"):
    filter_rows += parts.get(n, {}).get("results", [])
gpu_rows = parts.get("filters_gpu", {}).get("results", [])
NAMES = {"h5fz": "h5fz", "sz3": "SZ3", "zfp": "ZFP", "zstd": "Zstd", "blosc2": "Blosc2", "none": "none"}


def fmt(x, nd=3):
    if x is None:
        return "-"
    if isinstance(x, str):
        return x
    if x == 0:
        return "0"
    if abs(x) >= 1000 or abs(x) < 1e-3:
        return "%.3g" % x
    return ("%%.%dg" % nd) % x


def verdict(r):
    if r.get("error"):
        return "**ERROR**"
    if r.get("bound_ok"):
        return "yes"
    why = []
    if r.get("over_bound"):
        why.append("%d values over bound (max %.3g x bound)" % (r["over_bound"], r["max_err"] / r["bound"])
                   if r["bound"] else "not bit-exact")
    if r.get("nan_lost"):
        why.append("%d NaN lost" % r["nan_lost"])
    if r.get("finite_lost"):
        why.append("%d finite became NaN/Inf" % r["finite_lost"])
    if r["bound"] == 0 and not r.get("bit_exact"):
        why.append("not bit-exact")
    return "**NO**: " + ", ".join(why)


def short(field):
    return field.split("_")[0] + "_" + field.split("_")[1] if "_" in field else field


md = ["# h5fz benchmark suite results", ""]
fc = parts.get("filters_cpu") or parts.get("filters_cpu_h5fz")
if fc:
    m = fc.get("machine", {})
    md += ["## HDF5 filter path, CPU (%s)" % fc.get("label", ""), "",
           "Machine: %s CPUs (%s), %s GiB RAM; load average at start %s, at end %s. Python %s, h5py %s, HDF5 %s, "
           "hdf5plugin %s." % (m.get("cpus"), m.get("cpu", "?"), m.get("mem_GiB"),
                               ", ".join("%.1f" % x for x in m.get("loadavg_start", [])),
                               ", ".join("%.1f" % x for x in m.get("loadavg_end", [])), fc.get("python"),
                               fc.get("h5py"), fc.get("hdf5"), fc.get("hdf5plugin")), "",
           "Timing: " + fc.get("timing", ""), "", "Bounds: " + fc.get("bounds", ""), "",
           "Bound check: " + fc.get("bound_check", ""), ""]
    for n in ("filters_cpu", "filters_cpu_h5fz"):
        for note in parts.get(n, {}).get("notes", []):
            md.append("Note: " + note + "  ")
    if "filters_cpu_h5fz" in parts:
        md.append("Note: the h5fz rows ran under %s (its h5py), the others under %s.  " %
                  (parts["filters_cpu_h5fz"].get("python"), parts.get("filters_cpu", {}).get("python")))
    md.append("")
    # summary: ratio per field x filter x rel
    rels = sorted({r["rel"] for r in filter_rows if r["rel"]}, reverse=True)
    fields = list(dict.fromkeys(r["field"] for r in filter_rows))
    lossy = [f for f in ("h5fz", "sz3", "zfp") if any(r["filter"] == f for r in filter_rows)]
    lossless = [f for f in ("zstd", "blosc2") if any(r["filter"] == f for r in filter_rows)]
    md += ["### Ratio at matched bounds (x = bound broken, E = error/crash)", "",
           "| field | " + " | ".join("%s %g" % (NAMES[f], rel) for rel in rels for f in lossy) + " | " +
           " | ".join(NAMES[f] for f in lossless) + " |",
           "|---" * (1 + len(rels) * len(lossy) + len(lossless)) + "|"]
    idx = {(r["field"], r["filter"], r["rel"]): r for r in filter_rows}

    def cell(r):
        if r is None:
            return "-"
        if r.get("error"):
            return "E"
        return fmt(r["ratio"], 3) + ("" if r["bound_ok"] else " x")

    for fld in fields:
        md.append("| %s | " % fld + " | ".join(cell(idx.get((fld, f, rel))) for rel in rels for f in lossy) + " | " +
                  " | ".join(cell(idx.get((fld, f, 0.0))) for f in lossless) + " |")
    md += ["", "### All fields together (total bytes / total stored bytes or total seconds)", "",
           "| filter | rel | ratio | write GB/s | read GB/s | bound held | errors |", "|---|---|---|---|---|---|---|"]
    for flt in lossy + lossless + [f for f in ("none",) if any(r["filter"] == f for r in filter_rows)]:
        for rel in (rels if flt in lossy else [0.0]):
            rs = [r for r in filter_rows if r["filter"] == flt and r["rel"] == rel and not r["field"].startswith("tiled")]
            ok = [r for r in rs if not r.get("error")]
            if not ok:
                continue
            nb = sum(r["bytes"] for r in ok)
            md.append("| %s | %g | %s | %s | %s | %d of %d | %d |" % (
                NAMES[flt], rel, fmt(nb / sum(r["stored_bytes"] for r in ok), 3),
                fmt(nb / sum(r["write_s"] for r in ok) / 1e9, 3), fmt(nb / sum(r["read_s"] for r in ok) / 1e9, 3),
                sum(1 for r in ok if r["bound_ok"]), len(rs), len(rs) - len(ok)))
    md += ["", "### Every case", "",
           "| field | filter | rel | abs bound | ratio | max error | bound held | PSNR dB | write GB/s | read GB/s | note |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in filter_rows:
        if r.get("error"):
            md.append("| %s | %s | %g | %s | - | - | **ERROR**: %s | - | - | - | |" %
                      (r["field"], NAMES.get(r["filter"], r["filter"]), r["rel"], fmt(r["bound"], 4),
                       r["error"].replace("|", "/")[:160]))
            continue
        md.append("| %s | %s | %g | %s | %s | %s | %s | %s | %s | %s |" % (
            r["field"], NAMES.get(r["filter"], r["filter"]), r["rel"], fmt(r["bound"], 4), fmt(r["ratio"], 4),
            fmt(r["max_err"], 4), verdict(r), fmt(r.get("psnr_db"), 4), fmt(r["write_GBps"], 3),
            fmt(r["read_GBps"], 3)) + " %s |" % r.get("note", ""))
    md.append("")

bw = parts.get("gpu_baselines", {}).get("bandwidth")
bg = parts.get("bench_gpu")
if bw or bg or gpu_rows:
    md += ["## GPU", ""]
    hbm = bw["hbm_copy"]["traffic_GBps"] if bw else None
    if bw:
        md += ["Device: %s, %s SMs, %s GiB." % (bw["device"], bw["sm_count"], bw["memory_GiB"]), "",
               "| physical limit, measured in this run | GB/s |", "|---|---|",
               "| HBM device-to-device copy (bytes copied / s) | %.0f |" % bw["hbm_copy"]["copy_GBps"],
               "| HBM traffic of that copy (read + write) | %.0f |" % hbm,
               "| PCIe host-to-device, pinned, 1 GiB | %.1f |" % bw["pcie_pinned"]["h2d_GBps"],
               "| PCIe device-to-host, pinned, 1 GiB | %.1f |" % bw["pcie_pinned"]["d2h_GBps"], ""]
    if bg and isinstance(bg, dict) and "kernel_per_field_rel_1e-4" in bg:
        real = bg.get("realistic", {})
        kern = real.get("kernel", [])
        if kern:
            checks = {r["field"][:-6]: r for r in kern if r.get("field", "").endswith(" check")}
            md += ["### Headline: the realistic array (%s bytes; every float32 field scaled to its own range [0, 1], "
                   "NaN and fill kept; ABS R = R x every field's range), kernels only, every element checked" %
                   real.get("bytes"), "",
                   "| R | encode GB/s | decode GB/s | payload ratio | container ratio | bound held (values checked) |",
                   "|---|---|---|---|---|---|"]
            for r in kern:
                if r.get("field", "").endswith(" check"):
                    continue
                c = checks.get(r.get("field"), {})
                if "error" in r:
                    md.append("| %s | ERROR %s | | | | |" % (r.get("field"), r["error"]))
                    continue
                held = ("yes" if c.get("bound_held") else "**NO: %s values off**" % c.get("violations")) \
                    if "bound_held" in c else "not checked: %s" % c.get("error", "-")
                md.append("| %s | %.1f | %.1f | %.2f | %s | %s (%s) |" % (
                    ("fast chain " if " fast " in r["field"] else "") + r["field"].split("R=")[-1], r["encode_GBps"], r["decode_GBps"], r["payload_ratio"],
                    "%.2f" % c["container_ratio"] if "container_ratio" in c else "-", held, c.get("checked", 0)))
            md.append("")
        md += ["### h5fz kernels only (h5fz_bench_gpu; data on the GPU; bound 1e-4 x range)", "",
               "| input | bytes | encode GB/s | decode GB/s | payload ratio | encode / HBM traffic | decode / HBM traffic |",
               "|---|---|---|---|---|---|---|"]
        rows = list(bg["kernel_per_field_rel_1e-4"]) + [dict(r, field="tiled (%s)" % bg["tiled"].get("bytes"))
                                                        for r in bg.get("tiled", {}).get("kernel", [])]
        for r in rows:
            if "error" in r:
                md.append("| %s | - | ERROR %s | | | | |" % (r["field"], r["error"]))
                continue
            md.append("| %s | %d | %.1f | %.1f | %.2f | %s | %s |" % (
                r["field"], r["bytes"], r["encode_GBps"], r["decode_GBps"], r["payload_ratio"],
                "%.1f %%" % (100 * r["encode_GBps"] / hbm) if hbm else "-",
                "%.1f %%" % (100 * r["decode_GBps"] / hbm) if hbm else "-"))
        md.append("")
        if bg.get("end_to_end_per_chunk"):
            h2d = bw["pcie_pinned"]["h2d_GBps"] if bw else None
            d2h = bw["pcie_pinned"]["d2h_GBps"] if bw else None
            md += ["### h5fz end to end per chunk (h5fz_chunk_encode/decode, host buffers; tiled array)", "",
                   "| chunk MiB | encode GB/s | decode GB/s | ratio | encode / PCIe H2D | decode / PCIe D2H |",
                   "|---|---|---|---|---|---|"]
            for r in bg["end_to_end_per_chunk"]:
                md.append("| %d | %.2f | %.2f | %.1f | %s | %s |" % (
                    r["chunk_MiB"], r["encode_GBps"], r["decode_GBps"], r["ratio"],
                    "%.1f %%" % (100 * r["encode_GBps"] / h2d) if h2d else "-",
                    "%.1f %%" % (100 * r["decode_GBps"] / d2h) if d2h else "-"))
            md.append("")
        if bg.get("jit"):
            md += ["### First chunk of a fresh process (JIT cache empty unless said)", "",
                   "| probe | first chunk s | module from | JIT ms |", "|---|---|---|---|"]
            for k, v in bg["jit"].items():
                if isinstance(v, dict):
                    md.append("| %s | %s | %s | %s |" % (k, v.get("first_chunk_s", "-"), v.get("module_from", v.get("error", "-")),
                                                     v.get("jit_ms", "-")))
            md.append("")
    elif bg:
        md += ["h5fz_bench_gpu: no usable output (%s)" % str(bg)[:200], ""]
    if gpu_rows:
        h2d = bw["pcie_pinned"]["h2d_GBps"] if bw else None
        d2h = bw["pcie_pinned"]["d2h_GBps"] if bw else None
        md += ["### HDF5 filter path with the GPU executor (H5FZ_DEVICE=gpu, h5py of the device machine)", "",
               "| field | filter | rel | ratio | max error | bound held | write GB/s | read GB/s | write / PCIe H2D | read / PCIe D2H |",
               "|---|---|---|---|---|---|---|---|---|---|"]
        for r in gpu_rows:
            if r.get("error"):
                md.append("| %s | %s | %g | - | - | **ERROR**: %s | - | - | - | - |" % (
                    r["field"], NAMES.get(r["filter"]), r["rel"], r["error"][:160].replace("|", "/")))
                continue
            md.append("| %s | %s | %g | %s | %s | %s | %.3f | %.3f | %s | %s |" % (
                r["field"], NAMES.get(r["filter"]), r["rel"], fmt(r["ratio"], 4), fmt(r["max_err"], 4), verdict(r),
                r["write_GBps"], r["read_GBps"], "%.1f %%" % (100 * r["write_GBps"] / h2d) if h2d else "-",
                "%.1f %%" % (100 * r["read_GBps"] / d2h) if d2h else "-"))
        md.append("")
    nv = parts.get("gpu_baselines", {}).get("nvcomp")
    if nv:
        md += ["### nvCOMP %s on the same arrays (data on the GPU; CUDA events around encode/decode calls)" %
               parts["gpu_baselines"].get("nvcomp_version", ""), "",
               "| field | codec | rel | ratio | encode GB/s | decode GB/s | encode / HBM | max error | bound held |",
               "|---|---|---|---|---|---|---|---|---|"]
        for r in nv:
            if r.get("error"):
                md.append("| %s | %s | %g | - | - | - | - | - | **ERROR**: %s |" % (
                    r["field"], r["codec"], r["rel"], r["error"][:160].replace("|", "/")))
                continue
            md.append("| %s | %s | %g | %s | %.1f | %.1f | %s | %s | %s |" % (
                r["field"], r["codec"], r["rel"], fmt(r["ratio"], 4), r["encode_GBps"], r["decode_GBps"],
                "%.1f %%" % (100 * r["encode_GBps"] / hbm) if hbm else "-", fmt(r["max_err"], 4), verdict(r)))
        md.append("")
    if parts.get("gpu_baselines", {}).get("recovered"):
        md += ["Note: " + parts["gpu_baselines"]["recovered"], ""]
    for e in parts.get("gpu_baselines", {}).get("errors", []):
        md += ["GPU baseline error: `%s`" % e.strip().splitlines()[-1], ""]
    gb = parts.get("gpu_baselines", {})
    if gb.get("nvcomp") and "seconds" not in gb and not gb.get("recovered"):
        md += ["Note: gpu_baselines.json has no `seconds`: gpu_bench.py stopped (crashed) before its final "
               "save. It saves after every field: the nvCOMP rows above are those saved before it stopped.", ""]

pe = parts.get("peers")
if pe and pe.get("rows"):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from peers import markdown as peers_markdown
    md += ["## The realistic array beside PFPL and cuSZp (bench/suite/peers.py)", "",
           "%s; %s bytes." % (pe.get("note", ""), pe.get("array", {}).get("bytes")), "",
           peers_markdown(pe["rows"])]
with open(os.path.join(args.out, "results.md"), "w") as f:
    f.write("\n".join(md) + "\n")
print("wrote", os.path.join(args.out, "results.md"))

if args.no_plots:
    raise SystemExit(0)
import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402,F401

COL = {"h5fz": "C0", "sz3": "C1", "zfp": "C2", "zstd": "C3", "blosc2": "C4", "none": "C7", "Bitcomp-lossy": "C5",
       "h5fz-gpu": "C9"}
if filter_rows:
    fields = list(dict.fromkeys(r["field"] for r in filter_rows))
    nc = 3
    nr = math.ceil(len(fields) / nc)
    fig, axs = plt.subplots(nr, nc, figsize=(5 * nc, 3.6 * nr), squeeze=False)
    nvl = [r for r in (parts.get("gpu_baselines", {}).get("nvcomp") or []) if r["codec"] == "Bitcomp-lossy"]
    for ax, fld in zip(axs.flat, fields):
        for flt in ("h5fz", "sz3", "zfp"):
            rs = sorted([r for r in filter_rows if r["field"] == fld and r["filter"] == flt and not r.get("error")],
                        key=lambda r: r["rel"])
            if rs:
                ax.plot([r["rel"] for r in rs], [r["ratio"] for r in rs], "o-", color=COL[flt], label=NAMES[flt])
                bad = [r for r in rs if not r["bound_ok"]]
                if bad:
                    ax.plot([r["rel"] for r in bad], [r["ratio"] for r in bad], "x", color="red", ms=12, mew=2.5,
                            label="bound broken")
        errs = [r for r in filter_rows if r["field"] == fld and r.get("error")]
        if errs:
            ax.text(0.02, 0.03, "; ".join("%s %g: %s" % (NAMES[r["filter"]], r["rel"], "crash" if "crash" in r["error"]
                                                         else "error") for r in errs),
                    transform=ax.transAxes, color="red", fontsize=8)
        rs = sorted([r for r in nvl if r["field"] == fld and not r.get("error")], key=lambda r: r["rel"])
        if rs:
            ax.plot([r["rel"] for r in rs], [r["ratio"] for r in rs], "s--", color=COL["Bitcomp-lossy"],
                    label="nvCOMP Bitcomp lossy (GPU)")
        for flt in ("zstd", "blosc2"):
            rs = [r for r in filter_rows if r["field"] == fld and r["filter"] == flt and not r.get("error")]
            if rs:
                ax.axhline(rs[0]["ratio"], ls=":", color=COL[flt], label=NAMES[flt] + " (lossless)")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.invert_xaxis()
        ax.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: "%g" % v))
        ax.set_title(fld, fontsize=9)
        ax.set_xlabel("bound / field range")
        ax.set_ylabel("compression ratio")
        ax.grid(True, which="both", alpha=0.3)
    for ax in list(axs.flat)[len(fields):]:
        ax.axis("off")
    h, l = [], []
    for ax in axs.flat:
        for hh, ll in zip(*ax.get_legend_handles_labels()):
            if ll not in l:
                h.append(hh)
                l.append(ll)
    fig.legend(h, l, loc="lower center", ncol=len(l), fontsize=9)
    fig.suptitle("Compression ratio vs error bound (HDF5 filter path; red x = bound broken)")
    fig.tight_layout(rect=(0, 0.04, 1, 0.97))
    fig.savefig(os.path.join(args.out, "ratio_vs_bound.png"), dpi=90)
    plt.close(fig)

    # throughput per field at rel 1e-3 (lossy) and lossless
    fig, axs = plt.subplots(2, 1, figsize=(14, 8), sharex=True)
    cases = [("h5fz", 1e-3), ("sz3", 1e-3), ("zfp", 1e-3), ("zstd", 0.0), ("blosc2", 0.0), ("none", 0.0)]
    cases = [c for c in cases if any(r["filter"] == c[0] for r in filter_rows)]
    if gpu_rows:
        cases.append(("h5fz-gpu", 1e-3))
    idx = {(r["field"], r["filter"], r["rel"]): r for r in filter_rows}
    idx.update({(r["field"], "h5fz-gpu" if r["filter"] == "h5fz" else r["filter"] + "-gpu", r["rel"]): r
                for r in gpu_rows})
    w = 0.8 / len(cases)
    for ax, key, lab in ((axs[0], "write_GBps", "write GB/s"), (axs[1], "read_GBps", "read GB/s")):
        for k, (flt, rel) in enumerate(cases):
            ys = []
            for fld in fields:
                r = idx.get((fld, flt, rel))
                ys.append(r[key] if r and not r.get("error") else 0)
            ax.bar([i + (k - len(cases) / 2 + 0.5) * w for i in range(len(fields))], ys, w, color=COL[flt],
                   label=("%s @%g" % (NAMES.get(flt, "h5fz GPU executor (H200 machine)"), rel)) if rel else NAMES.get(flt, flt))
        ax.set_yscale("log")
        ax.set_ylabel(lab)
        ax.grid(True, axis="y", which="both", alpha=0.3)
    axs[0].legend(ncol=len(cases), fontsize=9)
    axs[1].set_xticks(range(len(fields)))
    axs[1].set_xticklabels([short(f) for f in fields], rotation=20, fontsize=9)
    fig.suptitle("HDF5 write (H5Dwrite + close) and read (open + H5Dread) throughput, uncompressed GB/s, "
                 "median of 3 (lossy at 1e-3 x range; 0 = error)")
    fig.tight_layout()
    fig.savefig(os.path.join(args.out, "throughput.png"), dpi=90)
    plt.close(fig)

nv = parts.get("gpu_baselines", {}).get("nvcomp")
if bg and isinstance(bg, dict) and "kernel_per_field_rel_1e-4" in bg and nv:
    ks = list(bg["kernel_per_field_rel_1e-4"]) + [dict(r, field=r["field"]) for r in bg.get("tiled", {}).get("kernel", [])]
    def norm(n):
        return "tiled" if n.startswith("tiled") else n.split("_float")[0]

    kf = {norm(r["field"]): r for r in ks if "error" not in r}
    fields = [f["name"] for f in parts["gpu_baselines"].get("fields", [])] or list(kf)
    names = {f: norm(f) for f in fields}
    codecs = [("h5fz", 1e-4), ("Bitcomp-lossy", 1e-4), ("Bitcomp", 0.0), ("ANS", 0.0), ("LZ4", 0.0)]
    nidx = {(r["field"], r["codec"], r["rel"]): r for r in nv if not r.get("error")}
    fig, axs = plt.subplots(2, 1, figsize=(14, 8), sharex=True)
    w = 0.8 / len(codecs)
    for ax, key, kkey, lab in ((axs[0], "encode_GBps", "encode_GBps", "encode GB/s"),
                               (axs[1], "decode_GBps", "decode_GBps", "decode GB/s")):
        for k, (c, rel) in enumerate(codecs):
            ys = []
            for f in fields:
                if c == "h5fz":
                    r = kf.get(names[f])
                    ys.append(r[kkey] if r else 0)
                else:
                    r = nidx.get((f, c, rel))
                    ys.append(r[key] if r else 0)
            ax.bar([i + (k - len(codecs) / 2 + 0.5) * w for i in range(len(fields))], ys, w, color="C%d" % k,
                   label="%s%s" % ("h5fz kernels" if c == "h5fz" else "nvCOMP " + c, " @%g" % rel if rel else ""))
        if bw:
            ax.axhline(bw["hbm_copy"]["traffic_GBps"], color="k", ls="--", label="HBM traffic of a D2D copy")
            ax.axhline(bw["pcie_pinned"]["h2d_GBps"], color="gray", ls=":", label="PCIe H2D pinned")
        ax.set_yscale("log")
        ax.set_ylabel(lab)
        ax.grid(True, axis="y", which="both", alpha=0.3)
    axs[0].legend(ncol=4, fontsize=9, loc="upper left")
    axs[1].set_xticks(range(len(fields)))
    axs[1].set_xticklabels([short(f) for f in fields], rotation=20, fontsize=9)
    fig.suptitle("GPU: h5fz kernels vs nvCOMP, data on the GPU (uncompressed GB/s; missing bar = not measured)")
    fig.tight_layout()
    fig.savefig(os.path.join(args.out, "gpu_throughput.png"), dpi=90)
    plt.close(fig)
print("plots in", args.out)
