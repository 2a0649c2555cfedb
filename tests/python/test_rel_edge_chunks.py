"""REL bounds and edge chunks: HDF5 pads an edge chunk with the dataset's
fill value, and the chunk's range must leave that padding out, or the bound
of the real values widens (a tester saw 273x the bound before the fix).
Every element is checked against rel x the range of the whole dataset."""
import h5py
import numpy as np
import pytest

import h5fz_testlib as lib

REL = 1e-4


@pytest.mark.parametrize("fillvalue", [0.0, 1e30, -1073741824.0, float("nan")])
@pytest.mark.parametrize("dtype", ["<f4", "<f8"])
def test_rel_bound_holds_on_edge_chunks(tmp_path, fillvalue, dtype):
    rng = np.random.default_rng(7)
    x = (1000 + rng.random((100, 100))).astype(dtype)
    cd, _ = lib.cd_values(f"rel={REL}")
    path = tmp_path / "rel.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("d", data=x, chunks=(64, 64), fillvalue=fillvalue, compression=lib.FILTER_ID,
                         compression_opts=tuple(cd))
    with h5py.File(path, "r") as f:
        y = f["d"][...]
    bound = REL * float(x.max() - x.min())
    err = float(np.max(np.abs(x.astype(np.float64) - y.astype(np.float64))))
    assert err <= bound, f"fill {fillvalue}: max error {err} > {bound}"


def _never_dataset(f, name, cd, shape, chunks, dtype, fill=None):
    """A dataset whose fill value HDF5 never writes (fill time NEVER, as
    netCDF's NOFILL makes them: nccopy, ncgen _NoFill, NCO)."""
    dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
    dcpl.set_chunk(chunks)
    dcpl.set_fill_time(h5py.h5d.FILL_TIME_NEVER)
    if fill is not None:
        dcpl.set_fill_value(np.array(fill, dtype))
    dcpl.set_filter(lib.FILTER_ID, h5py.h5z.FLAG_MANDATORY, tuple(cd))
    space = h5py.h5s.create_simple(shape, tuple(h5py.h5s.UNLIMITED for _ in shape))
    tid = h5py.h5t.py_create(np.dtype(dtype))
    return h5py.Dataset(h5py.h5d.create(f.id, name.encode(), tid, space, dcpl=dcpl))


@pytest.mark.parametrize("dtype", ["<f4", "<f8"])
def test_rel_under_fill_time_never(tmp_path, dtype):
    """Fill time NEVER: HDF5 hands the parts of a chunk never written as
    zero bytes (the padding of edge chunks, steps not written yet), so
    REL's range leaves +0.0 out. Refused before; data around 1000 in edge
    chunks and written one row of chunks at a time, each chunk's values
    within rel x their own range (the zeros would have made it 1000)."""
    rng = np.random.default_rng(11)
    x = (1000 + rng.random((100, 100))).astype(dtype)
    x[::7, ::5] = 0.0  # real zeros come back exactly and do not count either way
    cd, _ = lib.cd_values(f"rel={REL}")
    path = tmp_path / "never.h5"
    with h5py.File(path, "w", rdcc_nbytes=0) as f:
        d = _never_dataset(f, "d", cd, (100, 100), (64, 64), dtype)
        for r in range(0, 100, 10):  # a chunk written in parts, re-encoded each time
            d[r:r + 10] = x[r:r + 10]
    with h5py.File(path, "r") as f:
        y = f["d"][...]
    assert np.array_equal(y[x == 0], x[x == 0])
    for i in range(0, 100, 64):
        for j in range(0, 100, 64):
            a, b = x[i:i + 64, j:j + 64], y[i:i + 64, j:j + 64]
            real = a[a != 0]
            bound = REL * float(real.max() - real.min())
            err = float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64))))
            assert err <= bound, f"chunk {i},{j}: max error {err} > {bound}"


def test_fill_value_never_written_is_kept_exactly(tmp_path):
    """A fill value set with fill time NEVER is never padding (HDF5 writes
    zeros); set_local makes it the missing value: -999 in the data comes
    back exactly and stays out of REL's range."""
    rng = np.random.default_rng(3)
    x = (280 + 10 * rng.random((100, 100))).astype("<f4")
    x[rng.random(x.shape) < 0.3] = -999.0
    cd, _ = lib.cd_values(f"rel={REL}")
    with h5py.File(tmp_path / "m.h5", "w") as f:
        d = _never_dataset(f, "d", cd, (100, 100), (64, 64), "<f4", fill=-999.0)
        d[...] = x
        y = d[...]
    miss = x == -999
    assert np.array_equal(y[miss], x[miss]) and not np.any(y[~miss] == -999)
    real = x[~miss]
    lib.check_bound(real, y[~miss], REL * float(real.max() - real.min()), "rel, missing kept")
    assert "missing=-999" in lib.cli("inspect", tmp_path / "m.h5", "/d").stdout
