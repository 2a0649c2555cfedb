"""Files written by format version 1 must decode in every later version
(tests/golden/README.md). The bounds are written here, not read from the
file, so a damaged file cannot loosen its own check."""
import json
import pathlib

import h5py
import numpy as np
import pytest

import h5fz_testlib as lib

GOLDEN = lib.REPO / "tests" / "golden"
H5 = GOLDEN / "golden_v1.h5"
VALUES = GOLDEN / "golden_v1_values.npz"

# dataset -> (bound mode, bound); REL is relative to each chunk's range.
EXPECTED = {
    "f32_abs": ("abs", 1e-5),
    "f64_abs_negabinary": ("abs", 1e-6),
    "f32_rel": ("rel", 1e-3),
}

pytestmark = pytest.mark.skipif(not H5.exists(), reason="golden_v1.h5 not generated yet")


@pytest.fixture(scope="module")
def originals():
    with np.load(VALUES) as z:
        return {k: z[k] for k in z.files}


def _bounds(name, orig, chunks):
    mode, b = EXPECTED[name]
    if mode == "abs":
        return np.full(orig.shape, b)
    # Per-chunk REL: bound = b * (max - min) of the chunk's finite values.
    out = np.empty(orig.shape)
    for start in np.ndindex(*[-(-n // c) for n, c in zip(orig.shape, chunks)]):
        sl = tuple(slice(s * c, (s + 1) * c) for s, c in zip(start, chunks))
        blk = orig[sl][np.isfinite(orig[sl])].astype(np.float64)
        out[sl] = b * (blk.max() - blk.min()) if blk.size else 0.0
    return out


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_golden_decodes(name, originals):
    orig = originals[name]
    with h5py.File(H5, "r") as f:
        d = f[name]
        assert lib.FILTER_ID in lib.filter_ids(d)
        dec = d[...]
        chunks = d.chunks
    assert dec.dtype == orig.dtype and dec.shape == orig.shape
    a, b = orig.astype(np.float64), dec.astype(np.float64)
    assert np.array_equal(np.isnan(a), np.isnan(b))
    special = ~np.isfinite(a) | ((a == 0) & np.signbit(a))
    assert orig[special & ~np.isnan(a)].tobytes() == dec[special & ~np.isnan(a)].tobytes()
    fin = np.isfinite(a)
    over = np.abs(a[fin] - b[fin]) > _bounds(name, orig, chunks)[fin]
    assert not over.any(), "%s: %d values outside the bound" % (name, over.sum())


def test_golden_h5dump_and_inspect():
    p = lib.run_tool("h5dump", "-d", "/f32_abs", "-c", "2,4", H5)
    assert p.returncode == 0 and "DATA" in p.stdout, p.stderr
    j = json.loads(lib.cli("inspect", H5, "--json").stdout)
    for d in j["datasets"]:
        assert d["filter_found"], d["dataset"]
        assert d["chunks"] and all("error" not in c for c in d["chunks"]), d
        assert all(c["input_bytes"] > 0 for c in d["chunks"])
