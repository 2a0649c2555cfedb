"""dask.array.to_zarr through a dask.distributed LocalCluster of worker
processes with the h5fz codecs (docs/python.md, "Zarr, Dask and
kerchunk"): the workers unpickle the codec and encode the chunks; every
element within the bound, the chunks the HDF5 filter's bytes. Skipped
without dask[distributed], zarr 3 and numcodecs."""
import os
import sys

import numpy as np
import pytest

import codec_testlib as ct

MISSING = ct.missing("dask", "distributed", "numcodecs", "zarr")
pytestmark = pytest.mark.skipif(MISSING is not None, reason=str(MISSING))
if MISSING is None:
    import dask.array as da
    import h5py
    import zarr
    from distributed import Client, LocalCluster
    import h5fz
    import h5fz.numcodecs
    import h5fz.zarr


CHUNKS = (10, 50, 50)
WORKERS = 2


def _worker_state():
    """Run on each worker: its process, and whether it loaded the codec."""
    return os.getpid(), "h5fz.zarr" in sys.modules or "h5fz.numcodecs" in sys.modules


def test_to_zarr_on_a_local_cluster(tmp_path):
    a = ct.real_field()
    # spawned workers get the build's package from PYTHONPATH as the test has it
    os.environ["PYTHONPATH"] = os.pathsep.join([str(ct.PACKAGE_DIR), os.environ.get("PYTHONPATH", "")])
    x = da.from_array(a, chunks=CHUNKS)
    with LocalCluster(n_workers=WORKERS, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        da.to_zarr(x, str(tmp_path / "v3.zarr"), compressors=[h5fz.zarr.H5fz(rel=1e-3)])
        da.to_zarr(x, str(tmp_path / "v2.zarr"), zarr_format=2, compressors=h5fz.numcodecs.H5fz(abs=1e-3))
        v3 = da.from_zarr(str(tmp_path / "v3.zarr")).compute()
        v2 = da.from_zarr(str(tmp_path / "v2.zarr")).compute()
        states = client.run(_worker_state)
    assert len(states) == WORKERS
    assert all(pid != os.getpid() and loaded for pid, loaded in states.values()), \
        "the chunks were not coded in the worker processes: %s" % states
    ct.check_mode(a, v3, "rel", 1e-3, CHUNKS, what="v3")
    ct.check_mode(a, v2, "abs", 1e-3, CHUNKS, what="v2")
    # what the workers stored is what the HDF5 filter stores for these chunks
    with h5py.File(tmp_path / "filter.h5", "w") as f:
        f.create_dataset("rel", data=a, chunks=CHUNKS, **h5fz.Filter(rel=1e-3))
        f.create_dataset("abs", data=a, chunks=CHUNKS, **h5fz.Filter(abs=1e-3))
    for name, store, sep in (("rel", "v3.zarr/c/", "/"), ("abs", "v2.zarr/", ".")):
        for off, data in ct.hdf5_chunks(tmp_path / "filter.h5", name).items():
            key = sep.join(str(o // c) for o, c in zip(off, CHUNKS))
            assert (tmp_path / (store + key)).read_bytes() == data, "%s chunk %s is not the filter's" % (store, key)
    assert np.array_equal(zarr.open_array(str(tmp_path / "v3.zarr"), mode="r")[:], v3)
