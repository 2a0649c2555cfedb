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


def test_rel_refused_when_padding_is_undefined(tmp_path):
    cd, _ = lib.cd_values(f"rel={REL}")
    with h5py.File(tmp_path / "never.h5", "w") as f:
        dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        dcpl.set_chunk((64, 64))
        dcpl.set_fill_time(h5py.h5d.FILL_TIME_NEVER)
        dcpl.set_filter(lib.FILTER_ID, h5py.h5z.FLAG_MANDATORY, tuple(cd))
        space = h5py.h5s.create_simple((100, 100))
        with pytest.raises(Exception):
            h5py.h5d.create(f.id, b"d", h5py.h5t.IEEE_F32LE, space, dcpl=dcpl)
        # abs= does not depend on the padding: accepted
        cd_abs, _ = lib.cd_values("abs=1e-3")
        dcpl2 = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        dcpl2.set_chunk((64, 64))
        dcpl2.set_fill_time(h5py.h5d.FILL_TIME_NEVER)
        dcpl2.set_filter(lib.FILTER_ID, h5py.h5z.FLAG_MANDATORY, tuple(cd_abs))
        h5py.h5d.create(f.id, b"e", h5py.h5t.IEEE_F32LE, space, dcpl=dcpl2)
