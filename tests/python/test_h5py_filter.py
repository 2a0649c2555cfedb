"""Writing through the filter from h5py, as a Python user does:
compression=<id>, compression_opts=<cd_values from `h5fz cd-values`>.

h5py adds third-party filters as optional, so a failing filter would store
chunks raw without an error: every write here also checks that the stored
chunk really is smaller than the raw one.
"""
import os
import subprocess
import sys

import h5py
import numpy as np
import pytest

import h5fz_testlib as lib


@pytest.fixture(scope="module")
def field_data():
    field = lib.embedded_field()
    return field, field.load()


def _write_read(path, data, chunks, **filter_kw):
    with h5py.File(path, "w") as f:
        f.create_dataset("data", data=data, chunks=chunks, **filter_kw)
    f = h5py.File(path, "r")
    return f, f["data"]


def _first_chunk_bytes(dset):
    mask, raw = dset.id.read_direct_chunk((0,) * dset.ndim)
    return mask, len(raw)


def test_plugin_is_found():
    assert h5py.h5z.filter_avail(lib.FILTER_ID), (
        "HDF5 cannot load the h5fz filter: HDF5_PLUGIN_PATH=%s" % lib.os.environ.get(
            "HDF5_PLUGIN_PATH"))


@pytest.mark.parametrize("rel", [1e-2, 1e-4, 1e-6])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_h5py_roundtrip(field_data, tmp_path, rel, dtype):
    field, data = field_data
    data = data.astype(dtype)
    bound = rel * lib.value_range(field, data)
    cd, _ = lib.cd_values(lib.spec_abs(bound))
    chunks = (12, 100, 100)  # 50 planes: the last chunk is an edge chunk
    f, dset = _write_read(tmp_path / "w.h5", data, chunks, compression=lib.FILTER_ID,
                          compression_opts=tuple(cd))
    with f:
        assert lib.FILTER_ID in lib.filter_ids(dset)
        dec = dset[...]
        mask, stored = _first_chunk_bytes(dset)
        total = dset.id.get_storage_size()
    assert mask == 0, "the filter was skipped for chunk 0 (mask %#x)" % mask
    raw = int(np.prod(chunks)) * data.dtype.itemsize
    assert stored < raw, "chunk 0 stored %d bytes, raw is %d: not compressed" % (stored, raw)
    lib.check_bound(data, dec, bound, "h5py %s rel %g" % (dtype, rel))
    print("h5py %s rel %g: ratio %.3f" % (dtype, rel, data.nbytes / total))


def test_h5py_partial_reads(field_data, tmp_path):
    """Hyperslab reads across chunk borders decode the right chunks."""
    field, data = field_data
    bound = 1e-3 * lib.value_range(field, data)
    cd, _ = lib.cd_values(lib.spec_abs(bound))
    f, dset = _write_read(tmp_path / "p.h5", data, (12, 30, 40), compression=lib.FILTER_ID,
                          compression_opts=tuple(cd))
    with f:
        for sl in [np.s_[11:13, 29:31, 39:41], np.s_[48:, 90:, 80:], np.s_[5, :, 7]]:
            lib.check_bound(data[sl], dset[sl], bound, "slice %s" % (sl,))


def test_h5py_default_options(field_data, tmp_path):
    """compression=<id> with no options means the documented defaults (REL
    1e-4 of each chunk's range, so within 1e-4 of the field's range)."""
    field, data = field_data
    f, dset = _write_read(tmp_path / "d.h5", data, (12, 100, 100), compression=lib.FILTER_ID)
    with f:
        dec = dset[...]
        mask, stored = _first_chunk_bytes(dset)
    assert mask == 0 and stored < 12 * 100 * 100 * 4
    lib.check_bound(data, dec, 1e-4 * lib.value_range(field, data), "defaults")


def test_h5py_written_file_verifies(field_data, tmp_path):
    """A file written by h5py is checked by `h5fz verify` (C libhdf5)."""
    field, data = field_data
    bound = 1e-4 * lib.value_range(field, data)
    cd, _ = lib.cd_values(lib.spec_abs(bound))
    with h5py.File(tmp_path / "o.h5", "w") as f:
        f.create_dataset("grp/data", data=data, chunks=(12, 100, 100))
    with h5py.File(tmp_path / "c.h5", "w") as f:
        f.create_dataset("grp/data", data=data, chunks=(12, 100, 100),
                         compression=lib.FILTER_ID, compression_opts=tuple(cd))
    lib.cli("verify", tmp_path / "o.h5", tmp_path / "c.h5", "--abs", repr(bound),
            "--require-filter")


def _create_with_device(path, device):
    """Create a small compressed dataset in a fresh interpreter with
    H5FZ_DEVICE=device: (returncode, stdout). The child reports what
    create_dataset did; the return code shows that nothing crashed at exit."""
    code = (
        "import h5py, numpy as np, sys\n"
        "try:\n"
        "    with h5py.File(sys.argv[1], 'w') as f:\n"
        "        f.create_dataset('x', data=np.sin(np.arange(10000) / 50.0).astype('f4'), chunks=(1000,),\n"
        "                         compression=%d, compression_opts=tuple(%r))\n"
        "    print('created')\n"
        "except Exception as e:\n"
        "    print('refused:', e)\n" % (lib.FILTER_ID, list(lib.cd_values("abs=1e-3")[0])))
    p = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True,
                           env={**os.environ, "H5FZ_DEVICE": device})
    return p.returncode, p.stdout + p.stderr


def test_bad_device_setting_fails_at_create(tmp_path):
    # HDF5 caches small chunks and filters them at close, where h5py only
    # warns (and HDF5 1.10 has crashed at exit): set_local refuses instead
    rc, out = _create_with_device(tmp_path / "b.h5", "banana")
    assert rc == 0 and "refused:" in out and 'H5FZ_DEVICE="banana": want auto, gpu or cpu' in out, out
    rc, out = _create_with_device(tmp_path / "t.h5", "cpu ")  # the quotes show the space
    assert rc == 0 and 'H5FZ_DEVICE="cpu ": want' in out, out
    rc, out = _create_with_device(tmp_path / "c.h5", "cpu")
    assert rc == 0 and "created" in out, out
    rc, out = _create_with_device(tmp_path / "u.h5", "CPU")  # any case
    assert rc == 0 and "created" in out, out


def test_gpu_asked_for_without_one_fails_at_create(tmp_path):
    if subprocess.run(["sh", "-c", "nvidia-smi -L"], capture_output=True).returncode == 0:
        pytest.skip("a GPU is present: H5FZ_DEVICE=gpu is satisfied")
    rc, out = _create_with_device(tmp_path / "g.h5", "gpu")
    assert rc == 0 and "refused:" in out and "GPU executor is not usable" in out, out


@pytest.mark.parametrize("spec", ["rel=1e-4", "abs=1e-3", "pw_rel=1e-3"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("fill", [-999.0, 5.0, np.nan])
def test_h5py_fill_values_come_back_exactly(field_data, tmp_path, spec, dtype, fill):
    """A netCDF-style mask: values equal to the dataset's fill value (h5py
    fillvalue=, which set_local passes to the filter) are kept bit for bit
    (docs/spec.md §7), so `data == fill` finds them after a lossy round
    trip; the rest keeps the bound."""
    field, data = field_data
    data = data.astype(dtype)
    masked = data.copy()
    masked[:, 10:30, 40:90] = fill          # a block of them
    masked.reshape(-1)[::37] = fill          # and scattered ones
    cd, _ = lib.cd_values(spec)
    f, dset = _write_read(tmp_path / "fill.h5", masked, (12, 100, 100), compression=lib.FILTER_ID,
                          compression_opts=tuple(cd), fillvalue=fill)
    with f:
        dec = dset[...]
    want_mask = np.isnan(masked) if np.isnan(fill) else masked == fill
    got_mask = np.isnan(dec) if np.isnan(fill) else dec == fill
    assert np.array_equal(want_mask, got_mask), "%d of %d fill values came back changed" % (
        int((want_mask & ~got_mask).sum()), int(want_mask.sum()))
    assert np.array_equal(masked[want_mask].view("u%d" % masked.itemsize),
                          dec[want_mask].view("u%d" % dec.itemsize)), "fill values not bit for bit"
    keep = ~want_mask
    x, y = masked[keep].astype(np.float64), dec[keep].astype(np.float64)
    if spec.startswith("abs="):
        assert np.all(np.abs(x - y) <= 1e-3)
    elif spec.startswith("pw_rel="):
        assert np.all(np.abs(x - y) <= 1e-3 * np.abs(x))
    else:  # REL: within 1e-4 of the dataset's range of non-fill values, at most
        assert np.all(np.abs(x - y) <= 1e-4 * (x.max() - x.min()))


def _near_fill_cases():
    """(field, fill, spec): a fill value inside the data's range. The
    embedded field (19.93 .. 20.007) with a fill near 20.0 always; glosea4
    with a fill near 280.5 (the tester's case, 280.5: 690 values masked at
    abs=0.01) when the shared data is there."""
    cases = [(lib.embedded_field(), 20.0, s) for s in ("abs=1e-4", "rel=1e-3", "pw_rel=1e-5")]
    for fld in lib.shared_fields():
        if fld.stem.startswith("glosea4"):
            cases += [(fld, 280.5, s) for s in ("abs=0.01", "rel=1e-4", "pw_rel=1e-4")]
    return cases


@pytest.mark.parametrize("field,fill,spec", _near_fill_cases(),
                         ids=lambda v: getattr(v, "stem", str(v)))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_h5py_real_values_near_the_fill_are_not_masked(tmp_path, field, fill, spec, dtype):
    """A mask by equality (`data == fill`) after a lossy round trip finds
    exactly the fill values written, not real values within the bound of an
    in-range fill value (docs/spec.md §7): those escape too. Every element
    is checked against the bound."""
    data = field.load().astype(dtype)
    cd, _ = lib.cd_values(spec)
    chunks = tuple(min(n, c) for n, c in zip(data.shape, (1,) * (data.ndim - 2) + (100, 100)))
    # The fill: the decoded value nearest the wanted one, a reconstruction of
    # its bin, so that real values of that bin would read back as the fill
    # (under PW_REL and REL the round numbers are not reconstructions).
    f, dset = _write_read(tmp_path / "probe.h5", data, chunks, compression=lib.FILTER_ID,
                          compression_opts=tuple(cd))
    with f:
        probe = dset[...].reshape(-1)
    fill = float(probe[np.argmin(np.abs(probe.astype(np.float64) - fill))])
    x = data.copy()
    x.reshape(-1)[::101] = fill
    f, dset = _write_read(tmp_path / "near.h5", x, chunks, compression=lib.FILTER_ID,
                          compression_opts=tuple(cd), fillvalue=fill)
    with f:
        y = dset[...]
        masks = {dset.id.get_chunk_info(i).filter_mask for i in range(dset.id.get_num_chunks())}
    assert masks == {0}, "chunks stored without the filter: masks %s" % masks
    want, got = x == x.dtype.type(fill), y == y.dtype.type(fill)
    assert np.array_equal(want, got), "%d real values read back as the fill %r, %d fill values changed" % (
        int((got & ~want).sum()), fill, int((want & ~got).sum()))
    a, b = x[~want].astype(np.float64), y[~want].astype(np.float64)
    if spec.startswith("abs="):
        assert np.all(np.abs(a - b) <= float(spec[4:]))
    elif spec.startswith("pw_rel="):
        assert np.all(np.abs(a - b) <= float(spec[7:]) * np.abs(a))
    else:  # REL: each chunk's bound is at most R x the dataset's range of non-fill values
        assert np.all(np.abs(a - b) <= float(spec[4:]) * (a.max() - a.min()))


@pytest.mark.parametrize("spec", ["rel=1e-4", "abs=1e-3", "pw_rel=1e-3"])
@pytest.mark.parametrize("fill", [3.4028235677973366e38, 1.0 + 2.0 ** -24, -999.0 - 2.0 ** -15, 1.5 * 2.0 ** -149])
def test_fill_value_set_in_another_type(tmp_path, spec, fill):
    """A float32 dataset whose fill value is set as a big-endian double
    halfway between two floats: HDF5 converts it with its own rounding, and
    the filter must use the bits HDF5 writes (set_local reads the fill in
    the dataset's type), or the edge chunk's padding counts in a REL range
    (FLT_MAX's tie: the chunk decoded as zeros) and fill values are not kept
    (a tester's finding)."""
    cd, _ = lib.cd_values(spec)
    x = np.linspace(100, 101, 100).astype("f4")
    path = str(tmp_path / "fillconv.h5")
    with h5py.File(path, "w") as f:
        dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        dcpl.set_chunk((64,))
        dcpl.set_fill_value(np.array(fill, ">f8"))
        dcpl.set_filter(lib.FILTER_ID, h5py.h5z.FLAG_MANDATORY, tuple(cd))
        d = h5py.Dataset(h5py.h5d.create(f.id, b"d", h5py.h5t.IEEE_F32LE, h5py.h5s.create_simple((100,)), dcpl=dcpl))
        hdf5_fill = np.array(d.fillvalue, "f4")
        x[::7] = hdf5_fill  # the values equal to the fill HDF5 writes into the padding
        d[...] = x
    with h5py.File(path, "r") as f:
        y = f["d"][...]
    is_fill = x.view("u4") == hdf5_fill.view("u4")
    assert np.array_equal(y[is_fill].view("u4"), x[is_fill].view("u4")), "fill values changed"
    rest, got = x[~is_fill].astype(np.float64), y[~is_fill].astype(np.float64)
    if spec.startswith("pw_rel="):
        assert np.all(np.abs(rest - got) <= 1e-3 * np.abs(rest))
    elif spec.startswith("abs="):
        assert np.all(np.abs(rest - got) <= 1e-3)
    else:  # each chunk's range of non-fill values is at most 1
        assert np.all(np.abs(rest - got) <= 1e-4 * 1.0)
