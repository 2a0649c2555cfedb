"""kerchunk references to an HDF5 file written through the h5fz filter,
read by xarray as a Zarr store through the numcodecs codec
(h5fz.kerchunk.SingleHdf5ToZarr; docs/python.md, "Zarr, Dask and
kerchunk"): the values are h5py's own read through the filter, bit for
bit, so every element is within the bound; a new process reads the saved
references after `import h5fz`. Skipped without kerchunk, xarray, zarr 3
and numcodecs."""
import json

import numpy as np
import pytest

import codec_testlib as ct

MISSING = ct.missing("kerchunk", "xarray", "numcodecs", "zarr", "fsspec")
pytestmark = pytest.mark.skipif(MISSING is not None, reason=str(MISSING))
if MISSING is None:
    import h5py
    import xarray as xr
    from kerchunk.hdf import Hdf5FeatureNotSupported
    from kerchunk.hdf import SingleHdf5ToZarr as PlainSingleHdf5ToZarr
    import h5fz
    import h5fz.kerchunk


CHUNKS = (10, 64, 100)  # edge chunks along the second dim


def _open(refs):
    return xr.open_dataset("reference://", engine="zarr", backend_kwargs={
        "consolidated": False, "storage_options": {"fo": refs, "remote_protocol": "file"}})


def _write(path, a):
    with h5py.File(path, "w") as f:
        f.create_dataset("theta_rel", data=a, chunks=CHUNKS, **h5fz.Filter(rel=1e-3))
        f.create_dataset("theta_abs64", data=a.astype("f8"), chunks=CHUNKS, fillvalue=-1.0,
                         **h5fz.Filter(abs=1e-4, chain="lorenzo_nd zigzag bitshuffle rze"))
        f.create_dataset("theta_gzip", data=a, chunks=CHUNKS, compression="gzip")


def test_xarray_reads_the_references_within_the_bound(tmp_path):
    a = ct.real_field()
    path = tmp_path / "fields.h5"
    _write(path, a)
    refs = h5fz.kerchunk.SingleHdf5ToZarr(str(path), inline_threshold=0).translate()
    meta = json.loads(refs["refs"]["theta_rel/.zarray"])
    assert meta["compressor"] is None and meta["filters"][0]["id"] == "h5fz", meta
    assert meta["filters"][0]["spec"].startswith("rel=0.001"), meta
    ds = _open(refs)
    with h5py.File(path, "r") as f:
        for name in ("theta_rel", "theta_abs64", "theta_gzip"):
            via_refs = ds[name].values
            assert via_refs.dtype == f[name].dtype
            assert via_refs.tobytes() == f[name][:].tobytes(), "%s: not h5py's read through the filter" % name
    ct.check_mode(a, ds["theta_rel"].values, "rel", 1e-3, CHUNKS, what="theta_rel")
    ct.check_mode(a.astype("f8"), ds["theta_abs64"].values, "abs", 1e-4, CHUNKS, what="theta_abs64")
    assert np.array_equal(ds["theta_gzip"].values, a)


def test_plain_kerchunk_refuses_and_a_new_process_reads_saved_references(tmp_path):
    """kerchunk alone does not know filter 32770 (why h5fz.kerchunk exists);
    references saved as JSON are read in a new process by the codec's id
    after `import h5fz`."""
    a = ct.real_field()
    path = tmp_path / "fields.h5"
    _write(path, a)
    with pytest.raises(Hdf5FeatureNotSupported, match="32770"):
        PlainSingleHdf5ToZarr(str(path), error="raise").translate()
    refs_file = tmp_path / "refs.json"
    refs_file.write_text(json.dumps(h5fz.kerchunk.SingleHdf5ToZarr(str(path)).translate()))
    np.save(tmp_path / "orig.npy", a)
    out = ct.run_python(
        "import json, numpy as np, xarray as xr, h5fz\n"
        "refs = json.load(open(%r))\n"
        "ds = xr.open_dataset('reference://', engine='zarr', backend_kwargs={'consolidated': False,\n"
        "    'storage_options': {'fo': refs, 'remote_protocol': 'file'}})\n"
        "a = np.load(%r).astype('f8')\n"
        "err = np.abs(ds['theta_abs64'].values - a).max()\n"
        "assert err <= 1e-4, err\n"
        "print('max error', err)\n" % (str(refs_file), str(tmp_path / "orig.npy")))
    assert "max error" in out


def test_datasets_it_cannot_index(tmp_path):
    """h5fz with another filter after it: a clear refusal, not wrong bytes."""
    with h5py.File(tmp_path / "two.h5", "w") as f:
        d = f.create_dataset("t", data=ct.real_field(), chunks=CHUNKS, fletcher32=True, **h5fz.Filter(abs=1e-3))
        with pytest.raises(ValueError, match="only h5fz alone"):
            h5fz.kerchunk.codec_for(d)
        plain = f.create_dataset("plain", data=np.zeros(10, "f4"), chunks=(5,))
        assert h5fz.kerchunk.codec_for(plain) is None
