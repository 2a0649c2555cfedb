"""How tests/golden/golden_v3.h5 was made (format version 3: version 2 plus
op 33, the huff coder of the ratio chain). Kept as a record: do NOT run it
to "refresh" the golden files. They exist to prove that files written by
this version keep decoding in every later version; a regenerated file
proves nothing. See README.md.

    HDF5_PLUGIN_PATH=build/plugin /usr/bin/python3 tests/golden/make_golden_v3.py OUTDIR
"""
import numpy as np

import golden_common as g

# name -> (spec, chunks, dtype); the values are built below. Chunks of
# several thousand values: huff streams of several groups of 1024 words.
DATASETS = {
    "f32_abs_ratio": ("abs=1e-05 ratio", (24, 100), "<f4"),
    "f64_pw_rel_ratio": ("pw_rel=0.0001 ratio", (1100,), "<f8"),
    "f32_rel_ratio": ("rel=0.001 ratio", (15, 100), "<f4"),
    "f64_lossless_ratio": ("lossless ratio", (1100,), "<f8"),
    "f32_be_abs_delta_huff": ("abs=1e-05 delta zigzag huff", (24, 100), ">f4"),
}


def values():
    t = g.field()
    f32 = g.plant_specials(t[0, 30:67, :].astype("<f4"))
    f64 = g.plant_specials((t[0, 40:55, :].astype(np.float64).reshape(-1) * 1.000001).astype("<f8"))
    rel = t[0:3].reshape(30, 1000)[:, :100].astype("<f4")
    lossless = g.plant_specials((t[1, 20:35, :].astype(np.float64).reshape(-1) * 1.000001).astype("<f8"))
    be = g.plant_specials(t[1, 30:67, :].astype(">f4"))
    return {"f32_abs_ratio": f32, "f64_pw_rel_ratio": f64, "f32_rel_ratio": rel,
            "f64_lossless_ratio": lossless, "f32_be_abs_delta_huff": be}


def check_chunks(name, d, dtype, version, coder):
    """Every chunk of d: this version, coded (not stored raw), the
    big-endian flag of dtype, the chain ending in op `coder`."""
    for i in range(d.id.get_num_chunks()):
        mask, raw = d.id.read_direct_chunk(d.id.get_chunk_info(i).chunk_offset)
        assert mask == 0 and raw[4] == version, name
        assert not raw[7] & 1, name  # coded, not stored raw
        assert bool(raw[7] & 2) == (dtype[0] == ">"), name  # big-endian flag
        assert raw[48 + raw[33] - 1] == coder, name


def check(name, d, dtype):
    check_chunks(name, d, dtype, version=3, coder=33)  # huff


if __name__ == "__main__":
    g.write(g.outdir_argument(), "golden_v3", DATASETS, values(), check, g.RATIO_UNTIL_2026_12_01)
