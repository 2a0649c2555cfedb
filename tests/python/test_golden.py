"""Files written by format versions 1 to 5 must decode in every later
version (tests/golden/README.md). The bounds are written here, not read from
the file, so a damaged file cannot loosen its own check."""
import json
import os
import pathlib
import subprocess
import sys

import h5py
import numpy as np
import pytest

import h5fz_testlib as lib

GOLDEN = lib.REPO / "tests" / "golden"
H5 = GOLDEN / "golden_v1.h5"

# (file, dataset) -> (bound mode, bound); REL is relative to each chunk's
# range, PW_REL to each value; LOSSLESS: bit for bit. golden_v2.h5:
# big-endian datasets (version 2); golden_v3.h5: the huff coder (version 3);
# golden_v4.h5: huffctx (version 4); golden_v5.h5: lorenzo_interp (version 5).
EXPECTED = {
    ("golden_v1", "f32_abs"): ("abs", 1e-5),
    ("golden_v1", "f64_abs_negabinary"): ("abs", 1e-6),
    ("golden_v1", "f32_rel"): ("rel", 1e-3),
    ("golden_v2", "f32_be_abs"): ("abs", 1e-5),
    ("golden_v2", "f64_be_pw_rel"): ("pw_rel", 1e-4),
    ("golden_v2", "f32_be_rel_lorenzo_nd"): ("rel", 1e-3),
    ("golden_v2", "f32_be_stored_raw"): ("abs", 1e-30),  # two chunks stored raw, the edge chunk coded
    ("golden_v3", "f32_abs_ratio"): ("abs", 1e-5),
    ("golden_v3", "f64_pw_rel_ratio"): ("pw_rel", 1e-4),
    ("golden_v3", "f32_rel_ratio"): ("rel", 1e-3),
    ("golden_v3", "f64_lossless_ratio"): ("lossless", 0.0),
    ("golden_v3", "f32_be_abs_delta_huff"): ("abs", 1e-5),
    ("golden_v4", "f32_abs_ratio"): ("abs", 1e-5),
    ("golden_v4", "f64_pw_rel_ratio"): ("pw_rel", 1e-4),
    ("golden_v4", "f32_rel_ratio"): ("rel", 1e-3),
    ("golden_v4", "f64_lossless_ratio"): ("lossless", 0.0),
    ("golden_v4", "f32_be_abs_delta_huffctx"): ("abs", 1e-5),
    ("golden_v5", "f32_abs_ratio_3d"): ("abs", 1e-3),
    ("golden_v5", "f64_abs_interp_3d"): ("abs", 1e-2),
    ("golden_v5", "f32_rel_interp_2d"): ("rel", 1e-2),
    ("golden_v5", "f64_rel_ratio_2d"): ("rel", 5e-3),
    ("golden_v5", "f32_pw_rel_ratio_3d"): ("pw_rel", 1e-3),
    ("golden_v5", "f32_be_abs_ratio_2d"): ("abs", 5e-2),
}


@pytest.fixture(scope="module")
def originals():
    out = {}
    for stem in ("golden_v1", "golden_v2", "golden_v3", "golden_v4", "golden_v5"):
        with np.load(GOLDEN / (stem + "_values.npz")) as z:
            out.update({(stem, k): z[k] for k in z.files})
    return out


def _bounds(key, orig, chunks):
    mode, b = EXPECTED[key]
    if mode in ("abs", "lossless"):
        return np.full(orig.shape, b)
    if mode == "pw_rel":
        return b * np.abs(orig.astype(np.float64))
    # Per-chunk REL: bound = b * (max - min) of the chunk's finite values.
    out = np.empty(orig.shape)
    for start in np.ndindex(*[-(-n // c) for n, c in zip(orig.shape, chunks)]):
        sl = tuple(slice(s * c, (s + 1) * c) for s, c in zip(start, chunks))
        blk = orig[sl][np.isfinite(orig[sl])].astype(np.float64)
        out[sl] = b * (blk.max() - blk.min()) if blk.size else 0.0
    return out


@pytest.mark.parametrize("key", sorted(EXPECTED), ids=lambda k: "%s:%s" % k)
def test_golden_decodes(key, originals):
    stem, name = key
    orig = originals[key]
    with h5py.File(GOLDEN / (stem + ".h5"), "r") as f:
        d = f[name]
        assert lib.FILTER_ID in lib.filter_ids(d)
        dec = d[...]
        chunks = d.chunks
        version = d.id.read_direct_chunk((0,) * d.ndim)[1][4]
    assert version == int(stem[-1]), "%s: chunk 0 has format version %d" % (key, version)
    assert dec.dtype == orig.dtype and dec.shape == orig.shape
    with np.errstate(invalid="ignore"):  # signalling NaN payloads raise the invalid flag when widened
        a, b = orig.astype(np.float64), dec.astype(np.float64)
    assert np.array_equal(np.isnan(a), np.isnan(b))
    special = ~np.isfinite(a) | ((a == 0) & np.signbit(a))
    assert orig[special & ~np.isnan(a)].tobytes() == dec[special & ~np.isnan(a)].tobytes()
    fin = np.isfinite(a)
    over = np.abs(a[fin] - b[fin]) > _bounds(key, orig, chunks)[fin]
    assert not over.any(), "%s: %d values outside the bound" % (key, over.sum())
    if EXPECTED[key][0] == "lossless":
        assert dec.tobytes() == orig.tobytes(), key


@pytest.mark.parametrize("stem,dset", [("golden_v1", "/f32_abs"), ("golden_v2", "/f32_be_abs"),
                                       ("golden_v3", "/f32_abs_ratio"), ("golden_v4", "/f32_abs_ratio"),
                                       ("golden_v5", "/f32_abs_ratio_3d")])
def test_golden_h5dump_and_inspect(stem, dset):
    path = GOLDEN / (stem + ".h5")
    p = lib.run_tool("h5dump", "-d", dset, "-c", "2,4", path)
    assert p.returncode == 0 and "DATA" in p.stdout, p.stderr
    j = json.loads(lib.cli("inspect", path, "--json").stdout)
    for d in j["datasets"]:
        assert d["filter_found"], d["dataset"]
        assert d["chunks"] and all("error" not in c for c in d["chunks"]), d
        assert all(c["input_bytes"] > 0 for c in d["chunks"])


@pytest.mark.parametrize("version", [1, 2, 3, 4, 5])
def test_make_golden_into_a_new_folder(version, tmp_path):
    """The scripts that made the golden files (tests/golden/make_golden_v*.py,
    over golden_common.py) run into a folder that does not exist yet, make
    it, and write the committed originals with the committed datasets. The
    .h5 bytes are the encoder's of the day, so they are not compared here
    (golden_v2.h5 and golden_v3.h5 came out byte-identical when the scripts
    were given their shared module)."""
    stem = "golden_v%d" % version
    out = tmp_path / "not" / "there"
    r = subprocess.run([sys.executable, str(GOLDEN / ("make_" + stem + ".py")), str(out)],
                       env=dict(os.environ, H5FZ_DEVICE="cpu"), capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    with np.load(out / (stem + "_values.npz")) as made, np.load(GOLDEN / (stem + "_values.npz")) as kept:
        assert sorted(made.files) == sorted(kept.files)
        for k in kept.files:
            assert made[k].dtype == kept[k].dtype and made[k].tobytes() == kept[k].tobytes(), k
    with h5py.File(out / (stem + ".h5"), "r") as made, h5py.File(GOLDEN / (stem + ".h5"), "r") as kept:
        assert sorted(made) == sorted(kept)
        for name in kept:
            assert made[name].attrs["h5fz_spec"] == kept[name].attrs["h5fz_spec"], name
            assert made[name].chunks == kept[name].chunks and made[name].dtype == kept[name].dtype, name
