"""PW_REL on subnormal values (docs/spec.md §6, §7).

Every finite non-zero value must come back within E x |x| with its sign.
The encoder's check `|x - x'| <= E |x|` used to round the product E |x|,
which for a float64 subnormal has only a few bits: a tester found
2.85857e-319 back as 2.8557e-319, 1.0025 E (1.75 E at pw_rel=1e-9). The
check is now exact (device_ops/op_quant.h, h5fz_pwrel_within). Random
subnormal bit patterns of both signs, the tester's values, float32 and
float64, four bounds; every element checked.
"""
import h5py
import numpy as np
import pytest

import h5fz_testlib as lib


def _subnormals(dtype, rng):
    if dtype == "<f8":
        bits = rng.integers(1, 2**52, 4000, dtype=np.uint64)
        x = bits.view(np.float64)
        x = np.concatenate([x, np.array([5e-324, 1e-323, 2.85857e-319, 8.870894e-318, 2.81871878e-315] * 200)])
    else:
        bits = rng.integers(1, 2**23, 4000, dtype=np.uint32)
        x = bits.view(np.float32).astype(np.float64)
    sign = np.where(rng.random(x.size) < 0.5, -1.0, 1.0)
    return (x * sign).astype(dtype)


@pytest.mark.parametrize("bound", [0.3, 1e-3, 1e-6, 1e-9])
@pytest.mark.parametrize("dtype", ["<f4", "<f8"])
def test_pw_rel_holds_on_subnormals(tmp_path, dtype, bound):
    x = _subnormals(dtype, np.random.default_rng(7))
    cd, _ = lib.cd_values(f"pw_rel={bound}")
    path = tmp_path / "sub.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("d", data=x, chunks=(1000,), compression=lib.FILTER_ID, compression_opts=tuple(cd))
    with h5py.File(path, "r") as f:
        d = f["d"]
        assert d._filters and str(lib.FILTER_ID) in map(str, d._filters)
        y = d[...]
    a, b = x.astype(np.float64), y.astype(np.float64)
    assert np.array_equal(np.signbit(a), np.signbit(b)), "a sign changed"
    rel = np.abs(a - b) / np.abs(a)
    over = int((rel > bound).sum())
    assert over == 0, "%s pw_rel=%g: %d of %d values over, worst %.9g = %.6f x the bound" % (
        dtype, bound, over, x.size, rel.max(), rel.max() / bound)
    print("%s pw_rel=%g: max |x - x'| / |x| = %.6f x the bound" % (dtype, bound, rel.max() / bound))
