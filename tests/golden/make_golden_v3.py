"""How tests/golden/golden_v3.h5 was made (format version 3: version 2 plus
op 33, the huff coder of the ratio chain). Kept as a record: do NOT run it
to "refresh" the golden files. They exist to prove that files written by
this version keep decoding in every later version; a regenerated file
proves nothing. See README.md.

    HDF5_PLUGIN_PATH=build/plugin /usr/bin/python3 tests/golden/make_golden_v3.py OUTDIR
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

# name -> (spec, chunks, dtype); the values are built below. Chunks of
# several thousand values: huff streams of several groups of 1024 words.
DATASETS = {
    "f32_abs_ratio": ("abs=1e-05 ratio", (24, 100), "<f4"),
    "f64_pw_rel_ratio": ("pw_rel=0.0001 ratio", (1100,), "<f8"),
    "f32_rel_ratio": ("rel=0.001 ratio", (15, 100), "<f4"),
    "f64_lossless_ratio": ("lossless ratio", (1100,), "<f8"),
    "f32_be_abs_delta_huff": ("abs=1e-05 delta zigzag huff", (24, 100), ">f4"),
}


def plant_specials(a):
    flat = a.reshape(-1)
    specials = [np.nan, np.inf, -np.inf, -0.0, 1e-40 if a.dtype.itemsize == 4 else 1e-310,
                -1073741824.0, 3e38]
    for k, v in enumerate(specials):
        flat[17 + 61 * k] = v
    return a


def values():
    t = np.fromfile(FIELD, "<f4").reshape(50, 100, 100)
    # Only the top levels vary (the deep ones are still uniform at t = 2 h).
    f32 = plant_specials(t[0, 30:67, :].astype("<f4"))
    f64 = plant_specials((t[0, 40:55, :].astype(np.float64).reshape(-1) * 1.000001).astype("<f8"))
    rel = t[0:3].reshape(30, 1000)[:, :100].astype("<f4")
    lossless = plant_specials((t[1, 20:35, :].astype(np.float64).reshape(-1) * 1.000001).astype("<f8"))
    be = plant_specials(t[1, 30:67, :].astype(">f4"))
    return {"f32_abs_ratio": f32, "f64_pw_rel_ratio": f64, "f32_rel_ratio": rel,
            "f64_lossless_ratio": lossless, "f32_be_abs_delta_huff": be}


def cd_values(spec):
    out = subprocess.run([H5FZ, "cd-values", "--json", spec], check=True, capture_output=True,
                         text=True).stdout
    return tuple(json.loads(out)["cd_values"])


def main(outdir):
    import h5py
    outdir = pathlib.Path(outdir)
    vals = values()
    np.savez(outdir / "golden_v3_values.npz", **vals)
    with h5py.File(outdir / "golden_v3.h5", "w") as f:
        for name, (spec, chunks, dtype) in DATASETS.items():
            assert vals[name].dtype == np.dtype(dtype), name
            d = f.create_dataset(name, data=vals[name], chunks=chunks, compression=FILTER_ID,
                                 compression_opts=cd_values(spec))
            d.attrs["h5fz_spec"] = spec
            for i in range(d.id.get_num_chunks()):
                mask, raw = d.id.read_direct_chunk(d.id.get_chunk_info(i).chunk_offset)
                assert mask == 0 and raw[4] == 3, name  # version 3
                assert not raw[7] & 1, name  # coded, not stored raw
                assert bool(raw[7] & 2) == (dtype[0] == ">"), name  # big-endian flag
                assert raw[48 + raw[33] - 1] == 33, name  # the chain ends in huff


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else HERE)
