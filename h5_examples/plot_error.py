#!/usr/bin/python3
"""Plot the error of an h5fz-compressed dataset against the original.

h5py reads the compressed file *transparently*: the h5fz plugin decodes
every chunk, as long as HDF5_PLUGIN_PATH points at the folder holding
libh5fz.so before h5py is imported. This script reads both datasets,
prints the max error, the PSNR and the compression ratio, and writes one
PNG with three panels: a 2-D slice of the original, the same slice
reconstructed, and the histogram of the error with the bound marked.

    HDF5_PLUGIN_PATH=build/plugin /usr/bin/python3 h5_examples/plot_error.py \\
        original.h5 compressed.h5 --dataset /data --abs 0.12 --out plot.png

--abs B:     every |x - x'| <= B          (spec abs=B; histogram of x - x')
--pw-rel E:  every |x - x'| <= E |x|      (spec pw_rel=E; histogram of
             (x - x') / |x|, since the bound is relative to each value)

Exit status: 0 within the bound, 1 when the bound is broken (or NaN/Inf
moved), 2 on bad arguments or an unreadable file (e.g. the plugin is not
found). Needs h5py, numpy and matplotlib (Debian: python3-h5py
python3-numpy python3-matplotlib).
"""

import argparse
import math
import os
import sys
import warnings

import numpy as np

H5FZ_FILTER_ID = int(os.environ.get("H5FZ_FILTER_ID", "32770"))


def parse_args():
    p = argparse.ArgumentParser(
        description="Compare an h5fz-compressed dataset with the original "
                    "and plot the error (one PNG, three panels).")
    p.add_argument("orig", help="original (uncompressed) HDF5 file")
    p.add_argument("comp", help="compressed HDF5 file (same dataset path)")
    p.add_argument("--dataset", default="/data", help="dataset path (default /data)")
    bound = p.add_mutually_exclusive_group(required=True)
    bound.add_argument("--abs", type=float, metavar="B", help="absolute bound")
    bound.add_argument("--pw-rel", type=float, metavar="E", help="point-wise relative bound")
    p.add_argument("--out", default="plot.png", help="PNG to write (default plot.png)")
    p.add_argument("--index", type=int, default=None,
                   help="index along each leading axis of the 2-D slice shown "
                        "(default: the slice whose values vary most)")
    a = p.parse_args()
    b = a.abs if a.abs is not None else a.pw_rel
    if not (b >= 0 and math.isfinite(b)):
        p.error("the bound must be a finite number >= 0")
    return a


def pipeline(dset):
    """The filters in the dataset's pipeline, as [(id, name), ...]."""
    dcpl = dset.id.get_create_plist()
    out = []
    for i in range(dcpl.get_nfilters()):
        code, _flags, _values, name = dcpl.get_filter(i)
        name = name.decode(errors="replace") if isinstance(name, bytes) else str(name)
        out.append((code, name or "?"))
    return out


def main():
    args = parse_args()
    if not os.environ.get("HDF5_PLUGIN_PATH"):
        print("plot_error: warning: HDF5_PLUGIN_PATH is not set; reading an "
              "h5fz dataset will fail unless the plugin is installed in HDF5's "
              "default plugin folder", file=sys.stderr)

    # Import after the environment is set: HDF5 reads HDF5_PLUGIN_PATH once.
    import h5py
    import matplotlib
    matplotlib.use("Agg")            # no display needed: write a file
    import matplotlib.pyplot as plt

    try:
        with h5py.File(args.orig, "r") as f:
            x = f[args.dataset][()]
        with h5py.File(args.comp, "r") as f:
            d = f[args.dataset]
            filters = pipeline(d)
            y = d[()]                    # decoded by the plugin, transparently
            stored = d.id.get_storage_size()
    except (OSError, KeyError) as e:
        print(f"plot_error: cannot read {args.dataset}: {e}", file=sys.stderr)
        return 2

    if x.shape != y.shape:
        print(f"plot_error: shapes differ: {x.shape} vs {y.shape}", file=sys.stderr)
        return 2
    if x.dtype.kind != "f":
        print(f"plot_error: {args.dataset} is {x.dtype}, not floating point", file=sys.stderr)
        return 2

    # Compare in float64 (exact for float32 and float64 inputs).
    x64 = x.astype(np.float64)
    y64 = y.astype(np.float64)
    fin = np.isfinite(x64)
    diff = x64 - y64                                      # x - x'
    nan_ok = np.array_equal(np.isnan(x64), np.isnan(y64))
    inf_ok = np.array_equal(np.where(np.isinf(x64), x64, 0), np.where(np.isinf(y64), y64, 0))

    if args.abs is not None:
        bound, what = args.abs, "x - x'"
        err = diff[fin]
        # A finite value decoded as NaN/Inf is an infinite error.
        max_err = float(np.max(np.abs(np.nan_to_num(err, nan=np.inf)))) if err.size else 0.0
    else:
        bound, what = args.pw_rel, "(x - x') / |x|"
        xv, yv = x64[fin], y64[fin]
        with np.errstate(divide="ignore", invalid="ignore"):
            err = np.where(xv != 0, (xv - yv) / np.abs(xv), 0.0)
        # Zeros must stay zeros and signs must not flip: count those as inf.
        broken = ((xv == 0) & (yv != 0)) | (np.signbit(xv) != np.signbit(yv)) | ~np.isfinite(yv)
        err = np.where(broken, np.inf, err)
        max_err = float(np.max(np.abs(err))) if err.size else 0.0

    # PSNR over the finite values, against the value range (as h5fz verify).
    xf = x64[fin]
    rng = float(xf.max() - xf.min()) if xf.size else 0.0
    mse = float(np.mean(diff[fin] ** 2)) if xf.size else 0.0
    if mse == 0:
        psnr = math.inf
    elif rng == 0:
        psnr = -math.inf
    else:
        psnr = 20 * math.log10(rng) - 10 * math.log10(mse)
    ratio = x.nbytes / stored if stored else math.inf
    ok = max_err <= bound and nan_ok and inf_ok

    print(f"{args.comp}:{args.dataset}  {x.dtype} {'x'.join(map(str, x.shape))}")
    has_h5fz = any(code == H5FZ_FILTER_ID for code, _ in filters)
    print(f"filters:   {', '.join(f'{n} ({c})' for c, n in filters) or 'none'}"
          + ("" if has_h5fz else "   (h5fz is NOT in the pipeline: not compressed by h5fz)"))
    print(f"max error: {max_err:.6g}  ({what}; bound {bound:g})")
    print(f"PSNR:      {psnr:.2f} dB")
    print(f"ratio:     {ratio:.3f}  ({x.nbytes} bytes / {stored} stored)")
    print(f"NaN/Inf:   {'match' if nan_ok and inf_ok else 'DIFFER'}")

    # --- the figure: a 2-D slice (the last two axes), by default the one
    # whose finite values vary most (a flat slice shows nothing), or the
    # whole line for 1-D data.
    if x.ndim >= 2:
        lead = x.shape[:-2]
        if args.index is None:
            flat = np.where(fin, x64, np.nan).reshape(int(np.prod(lead)), -1)
            with np.errstate(invalid="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)   # all-NaN slices
                spread = np.nan_to_num(np.nanstd(flat, axis=1), nan=-1.0)
            idx = np.unravel_index(int(np.argmax(spread)), lead) if lead else ()
            idx = tuple(int(i) for i in idx)
        else:
            idx = tuple(min(max(args.index, 0), s - 1) for s in lead)
        xs, ys = x64[idx], y64[idx]
        where = "[" + ", ".join([str(i) for i in idx] + [":", ":"]) + "]"
    else:
        xs, ys, where = x64, y64, "[:]"

    fig, ax = plt.subplots(1, 3, figsize=(15, 4.6), constrained_layout=True)
    if x.ndim >= 2:
        lo, hi = np.nanmin(np.where(np.isfinite(xs), xs, np.nan)), np.nanmax(np.where(np.isfinite(xs), xs, np.nan))
        for a_, img, title in ((ax[0], xs, "original"), (ax[1], ys, "reconstructed")):
            im = a_.imshow(img, cmap="viridis", vmin=lo, vmax=hi, origin="lower",
                           aspect="auto", interpolation="nearest")
            a_.set_title(f"{title} {args.dataset}{where}")
            fig.colorbar(im, ax=a_, shrink=0.85)
    else:
        ax[0].plot(xs, lw=0.6)
        ax[0].set_title(f"original {args.dataset}")
        ax[1].plot(ys, lw=0.6, color="tab:orange")
        ax[1].set_title(f"reconstructed {args.dataset}")

    # Histogram of the finite errors; the x axis spans a little more than
    # +-bound (or the errors, when they break it) so the red lines show.
    h = err[np.isfinite(err)]
    span = max(bound, float(np.max(np.abs(h))) if h.size else 0.0) * 1.1 or 1.0
    ax[2].hist(h, bins=101, range=(-span, span), color="tab:blue", log=True)
    for s in (-bound, bound):
        ax[2].axvline(s, color="red", ls="--", lw=1.2, label="bound" if s > 0 else None)
    ax[2].set_title(f"{what}: max |error| {max_err:.4g}, bound ±{bound:g}")
    ax[2].legend(loc="upper right")
    ax[2].set_xlabel(what)
    ax[2].set_ylabel("count (log)")
    ax[2].ticklabel_format(axis="x", style="sci", scilimits=(-2, 3))
    fig.suptitle(f"{os.path.basename(args.comp)}: ratio {ratio:.2f}, PSNR {psnr:.1f} dB, "
                 f"{'within' if ok else 'BREAKS'} the bound")
    fig.savefig(args.out, dpi=100)
    print(f"wrote {args.out}")

    if not ok:
        print("plot_error: BOUND BROKEN" if max_err > bound else "plot_error: NaN/Inf differ",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
