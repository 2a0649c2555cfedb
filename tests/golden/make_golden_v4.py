"""How tests/golden/golden_v4.h5 was made (format version 4: version 3 plus
op 34, huffctx, the coder of the ratio chain since 2026-12-02): the
datasets and values of make_golden_v3.py, with today's `ratio` (huffctx)
and huffctx for the big-endian one. Kept as a record: do NOT run it to
"refresh" the golden files. See README.md.

    HDF5_PLUGIN_PATH=build/plugin /usr/bin/python3 tests/golden/make_golden_v4.py OUTDIR
"""
import golden_common as g
import make_golden_v3 as v3

BE_V3, BE = "f32_be_abs_delta_huff", "f32_be_abs_delta_huffctx"
DATASETS = {(BE if k == BE_V3 else k): ((spec + "ctx", c, t) if k == BE_V3 else (spec, c, t))
            for k, (spec, c, t) in v3.DATASETS.items()}


def values():
    return {(BE if k == BE_V3 else k): v for k, v in v3.values().items()}


def check(name, d, dtype):
    v3.check_chunks(name, d, dtype, version=4, coder=34)


if __name__ == "__main__":
    g.write(g.outdir_argument(), "golden_v4", DATASETS, values(), check, g.RATIO_UNTIL_2026_12_02)
