"""How tests/golden/golden_v2.h5 was made (format version 2: version 1 plus
the byte-order flag, written for big-endian datasets). Kept as a record: do
NOT run it to "refresh" the golden files. They exist to prove that files
written by this version keep decoding in every later version; a
regenerated file proves nothing. See README.md.

    HDF5_PLUGIN_PATH=build/plugin /usr/bin/python3 tests/golden/make_golden_v2.py OUTDIR
"""
import numpy as np

import golden_common as g

# name -> (spec, chunks, dtype); the values are built below.
DATASETS = {
    "f32_be_abs": ("abs=1e-05", (16, 16), ">f4"),
    "f64_be_pw_rel": ("pw_rel=0.0001", (300,), ">f8"),
    "f32_be_rel_lorenzo_nd": ("rel=0.001 lorenzo_nd zigzag bitshuffle rze", (10, 100), ">f4"),
    "f32_be_stored_raw": ("abs=1e-30", (256,), ">f4"),
}


def values():
    t = g.field()
    f32 = g.plant_specials(t[0, 30:67, 25:78].astype(">f4"))
    f64 = g.plant_specials((t[0:2, 45:50, :].astype(np.float64).reshape(-1) * 1.000001).astype(">f8"))
    rel = t[0:3].reshape(30, 1000)[:, :100].astype(">f4")
    bits = np.random.default_rng(16).integers(0, 2 ** 32, 600, dtype=np.uint64).astype("<u4")
    raw = bits.view("<f4").astype(">f4")  # random bit patterns: no chunk shrinks, each is stored raw
    return {"f32_be_abs": f32, "f64_be_pw_rel": f64, "f32_be_rel_lorenzo_nd": rel, "f32_be_stored_raw": raw}


def check(name, d, dtype):
    mask, raw = d.id.read_direct_chunk((0,) * d.ndim)
    assert mask == 0 and raw[4] == 2 and raw[7] & 2, name  # version 2, big-endian
    assert (raw[7] & 1) == (name == "f32_be_stored_raw"), name  # only that one stored raw


if __name__ == "__main__":
    g.write(g.outdir_argument(), "golden_v2", DATASETS, values(), check)
