"""What the make_golden_v*.py scripts share: the embedded field they take
their values from, the special values they plant, a spec's cd_values (from
`h5fz cd-values`), and the writing of one version's pair of files,
OUTDIR/<stem>_values.npz (the originals) and OUTDIR/<stem>.h5 (through the
plugin), into a folder made when it is missing.

Kept as a record of how the golden files were made, like the scripts: do
NOT use it to "refresh" them (README.md). The scripts, run into another
folder, write golden_v2.h5 byte for byte as committed (HDF5 1.10.8, h5py
3.7, the CPU executor); golden_v1/v3/v4.h5 come out as other, equally valid
chunks (later encoder rules).
"""
import json
import os
import pathlib
import subprocess
import sys

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[1]
FIELD = REPO / "tests" / "data" / "mitgcm_deep_convection_theta_float32_50x100x100.f32"
H5FZ = os.environ.get("H5FZ_BIN", str(REPO / "build" / "bin" / "h5fz"))
FILTER_ID = int(os.environ.get("H5FZ_FILTER_ID", "32770"))


def field():
    """The embedded MITgcm field, 50 x 100 x 100 float32 (only the top
    levels vary: the deep ones are still uniform at t = 2 h)."""
    return np.fromfile(FIELD, "<f4").reshape(50, 100, 100)


def plant_specials(a):
    """a with NaN, +-Inf, -0.0, a subnormal, -2^30 and 3e38 planted every
    61 elements from element 17 (in place; returns a)."""
    flat = a.reshape(-1)
    specials = [np.nan, np.inf, -np.inf, -0.0, 1e-40 if a.dtype.itemsize == 4 else 1e-310,
                -1073741824.0, 3e38]
    for k, v in enumerate(specials):
        flat[17 + 61 * k] = v
    return a


# What a named chain stood for when an older golden file was written, so
# its script still makes the same bytes: `ratio` named `huff` (format 3)
# until 2026-12-01, `huffctx` (format 4) since; golden_v5's script names
# lorenzo_interp by the chain it wrote with `ratio` (on 2026-12-03, before
# the preset went back to lorenzo_nd: docs/ratio.md, session 21).
RATIO_UNTIL_2026_12_01 = "lorenzo_nd zigzag huff subchunk=65536"
RATIO_UNTIL_2026_12_02 = "lorenzo_nd zigzag huffctx subchunk=65536"
RATIO_AS_GOLDEN_V5_WROTE = "lorenzo_interp zigzag huffctx subchunk=65536"


def cd_values(spec, ratio_was=None):
    """The user cd_values of spec, as `h5fz cd-values --json` gives them;
    ratio_was: what the word `ratio` is to mean instead of today's chain."""
    if ratio_was:
        spec = " ".join(ratio_was if w == "ratio" else w for w in spec.split())
    out = subprocess.run([H5FZ, "cd-values", "--json", spec], check=True, capture_output=True,
                         text=True).stdout
    return tuple(json.loads(out)["cd_values"])


def outdir_argument():
    """The output folder: the first argument, else this folder."""
    return sys.argv[1] if len(sys.argv) > 1 else HERE


def write(outdir, stem, datasets, vals, check, ratio_was=None):
    """Write OUTDIR/<stem>_values.npz (vals) and OUTDIR/<stem>.h5, making
    OUTDIR (and its parents) when missing. datasets: name -> (spec, chunks,
    dtype), in the order written; each dataset gets vals[name] (which must
    have that dtype) through the filter with spec's cd_values and the spec
    in its h5fz_spec attribute; check(name, dataset, dtype) then asserts
    what its stored chunks must be."""
    import h5py
    outdir = pathlib.Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    np.savez(outdir / (stem + "_values.npz"), **vals)
    with h5py.File(outdir / (stem + ".h5"), "w") as f:
        for name, (spec, chunks, dtype) in datasets.items():
            assert vals[name].dtype == np.dtype(dtype), name
            d = f.create_dataset(name, data=vals[name], chunks=chunks, compression=FILTER_ID,
                                 compression_opts=cd_values(spec, ratio_was))
            d.attrs["h5fz_spec"] = spec
            check(name, d, dtype)
