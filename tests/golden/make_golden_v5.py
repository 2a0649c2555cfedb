"""How tests/golden/golden_v5.h5 was made (format version 5: version 4 plus
op 16, lorenzo_interp): the chain `ratio` named when it was written
(`quant lorenzo_interp zigzag huffctx subchunk=65536`; `ratio` in the specs
below stands for it, golden_common.RATIO_AS_GOLDEN_V5_WROTE) and
`lorenzo_interp zigzag bitshuffle rze`, float32 and float64, ABS, REL and
PW_REL, 2-D and 3-D chunks, one big-endian dataset; chunks whose predictor
byte is 4 (interpolation) next to chunks of predictors 1..3. Kept as a
record: do NOT run it to "refresh" the golden files. See README.md.

    HDF5_PLUGIN_PATH=build/plugin /usr/bin/python3 tests/golden/make_golden_v5.py OUTDIR
"""
import pathlib

import h5py
import numpy as np

import golden_common as g

LORENZO_INTERP, HUFFCTX, RZE = 16, 34, 30

# name -> (spec, chunks, dtype); the values are built below.
DATASETS = {
    "f32_abs_ratio_3d": ("abs=0.001 ratio", (4, 32, 48), "<f4"),
    "f64_abs_interp_3d": ("abs=0.01 lorenzo_interp zigzag bitshuffle rze", (4, 32, 48), "<f8"),
    "f32_rel_interp_2d": ("rel=0.01 lorenzo_interp zigzag bitshuffle rze", (25, 64), "<f4"),
    "f64_rel_ratio_2d": ("rel=0.005 ratio", (25, 64), "<f8"),
    "f32_pw_rel_ratio_3d": ("pw_rel=0.001 ratio", (4, 32, 48), "<f4"),
    "f32_be_abs_ratio_2d": ("abs=0.05 ratio", (25, 64), ">f4"),
}


def sines(shape):
    """A sum of sines, smooth along every axis (interpolation's case)."""
    idx = np.indices(shape).astype(np.float64)
    return 280.0 + sum((k + 1) * np.sin(0.02 * (k + 2) * idx[k] + k) for k in range(len(shape)))


def values():
    t = g.field()
    # 3-D, 8 x 32 x 48 in chunks of 4 planes: four planes of sines, then the
    # top four levels of the embedded field (rows 0..31, columns 0..47)
    cube = np.concatenate([sines((4, 32, 48)), t[0:4, :32, :48].astype(np.float64)])
    # 2-D, 85 x 64 in chunks of 25 rows: sines, the field's top level (rows
    # 0..24, columns 0..63), one ramp repeated down the rows, then rows
    # 25..34 of the top level (an edge chunk)
    plane = np.concatenate([sines((25, 64)), t[0, :25, :64].astype(np.float64),
                            np.tile(20.0 + 0.001 * np.arange(64), (25, 1)), t[0, 25:35, :64].astype(np.float64)])
    return {
        "f32_abs_ratio_3d": g.plant_specials(cube.astype("<f4")),
        "f64_abs_interp_3d": g.plant_specials(cube.astype("<f8")),
        "f32_rel_interp_2d": plane.astype("<f4"),
        "f64_rel_ratio_2d": plane.astype("<f8"),
        "f32_pw_rel_ratio_3d": g.plant_specials(cube.astype("<f4")),
        "f32_be_abs_ratio_2d": g.plant_specials(plane.astype("<f4")).astype(">f4"),
    }


def predictors(d):
    """The predictor byte (header byte 35) of each of d's stored chunks."""
    out = []
    for i in range(d.id.get_num_chunks()):
        mask, raw = d.id.read_direct_chunk(d.id.get_chunk_info(i).chunk_offset)
        assert mask == 0
        out.append(raw[35])
    return out


def check(name, d, dtype):
    """Every chunk of d: version 5, coded (not stored raw), the big-endian
    flag of dtype, ops[1] lorenzo_interp, the chain's coder, a predictor of
    lorenzo_interp (1 .. Dmax of the rank, or 4)."""
    coder = HUFFCTX if d.attrs["h5fz_spec"].endswith("ratio") else RZE
    for i in range(d.id.get_num_chunks()):
        mask, raw = d.id.read_direct_chunk(d.id.get_chunk_info(i).chunk_offset)
        assert mask == 0 and raw[4] == 5, name
        assert not raw[7] & 1, name  # coded, not stored raw
        assert bool(raw[7] & 2) == (dtype[0] == ">"), name  # big-endian flag
        assert raw[49] == LORENZO_INTERP and raw[48 + raw[33] - 1] == coder, name
        dmax = 1 if raw[34] <= 1 else 2 if raw[34] == 2 else 3
        assert raw[35] == 4 or 1 <= raw[35] <= dmax, name


def check_file(path):
    """The file holds chunks of interpolation (predictor 4) and of Lorenzo
    (1..3), in 2-D and in 3-D chunks."""
    seen = {}
    with h5py.File(path, "r") as f:
        for name in f:
            for p in predictors(f[name]):
                seen.setdefault(f[name].ndim, set()).add(p)
    for ndim in (2, 3):
        assert 4 in seen[ndim] and seen[ndim] & {1, 2, 3}, seen


if __name__ == "__main__":
    out = g.outdir_argument()
    g.write(out, "golden_v5", DATASETS, values(), check, g.RATIO_AS_GOLDEN_V5_WROTE)
    check_file(pathlib.Path(out) / "golden_v5.h5")
