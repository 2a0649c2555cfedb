"""How tests/golden/golden_v2.h5 was made (format version 2: version 1 plus
the byte-order flag, written for big-endian datasets). Kept as a record: do
NOT run it to "refresh" the golden files. They exist to prove that files
written by this version keep decoding in every later version; a
regenerated file proves nothing. See README.md.

    HDF5_PLUGIN_PATH=build/plugin /usr/bin/python3 tests/golden/make_golden_v2.py OUTDIR
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

# name -> (spec, chunks, dtype); the values are built below.
DATASETS = {
    "f32_be_abs": ("abs=1e-05", (16, 16), ">f4"),
    "f64_be_pw_rel": ("pw_rel=0.0001", (300,), ">f8"),
    "f32_be_rel_lorenzo_nd": ("rel=0.001 lorenzo_nd zigzag bitshuffle rze", (10, 100), ">f4"),
    "f32_be_stored_raw": ("abs=1e-30", (256,), ">f4"),
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
    f32 = plant_specials(t[0, 30:67, 25:78].astype(">f4"))
    f64 = plant_specials((t[0:2, 45:50, :].astype(np.float64).reshape(-1) * 1.000001).astype(">f8"))
    rel = t[0:3].reshape(30, 1000)[:, :100].astype(">f4")
    bits = np.random.default_rng(16).integers(0, 2 ** 32, 600, dtype=np.uint64).astype("<u4")
    raw = bits.view("<f4").astype(">f4")  # random bit patterns: no chunk shrinks, each is stored raw
    return {"f32_be_abs": f32, "f64_be_pw_rel": f64, "f32_be_rel_lorenzo_nd": rel, "f32_be_stored_raw": raw}


def cd_values(spec):
    out = subprocess.run([H5FZ, "cd-values", "--json", spec], check=True, capture_output=True,
                         text=True).stdout
    return tuple(json.loads(out)["cd_values"])


def main(outdir):
    import h5py
    outdir = pathlib.Path(outdir)
    vals = values()
    np.savez(outdir / "golden_v2_values.npz", **vals)
    with h5py.File(outdir / "golden_v2.h5", "w") as f:
        for name, (spec, chunks, dtype) in DATASETS.items():
            assert vals[name].dtype == np.dtype(dtype), name
            d = f.create_dataset(name, data=vals[name], chunks=chunks, compression=FILTER_ID,
                                 compression_opts=cd_values(spec))
            d.attrs["h5fz_spec"] = spec
            mask, raw = d.id.read_direct_chunk((0,) * d.ndim)
            assert mask == 0 and raw[4] == 2 and raw[7] & 2, name  # version 2, big-endian
            assert (raw[7] & 1) == (name == "f32_be_stored_raw"), name  # only that one stored raw


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else HERE)
