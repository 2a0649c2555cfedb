"""How tests/golden/golden_v1.h5 was made (format version 1). Kept as a
record: do NOT run it to "refresh" the golden files. They exist to prove
that files written by this version keep decoding in every later version; a
regenerated file proves nothing. See README.md.

    HDF5_PLUGIN_PATH=build/plugin /usr/bin/python3 tests/golden/make_golden_v1.py OUTDIR
"""
import numpy as np

import golden_common as g

# name -> (spec, chunks, dtype); the values are built below.
DATASETS = {
    "f32_abs": ("abs=1e-05", (16, 16), "<f4"),
    "f64_abs_negabinary": ("abs=1e-06 delta negabinary bitshuffle rze", (300,), "<f8"),
    "f32_rel": ("rel=0.001", (10, 100), "<f4"),
}


def values():
    t = g.field()
    f32 = g.plant_specials(t[0, 30:67, 25:78].copy())
    f64 = g.plant_specials(t[0:2, 45:50, :].astype(np.float64).reshape(-1) * 1.000001)
    rel = t[0:3].reshape(30, 1000)[:, :100].copy()
    return {"f32_abs": f32, "f64_abs_negabinary": f64, "f32_rel": rel}


def check(name, d, dtype):
    mask, raw = d.id.read_direct_chunk((0,) * d.ndim)
    assert mask == 0 and len(raw) < np.prod(d.chunks) * d.dtype.itemsize, name


if __name__ == "__main__":
    g.write(g.outdir_argument(), "golden_v1", DATASETS, values(), check)
