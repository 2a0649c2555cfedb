"""Big-endian float datasets (`>f4`, `>f8`, H5T_IEEE_F*BE) are compressed
like little-endian ones: the filter swaps each chunk to little-endian, codes
it exactly as it codes little-endian values, and the container records the
byte order (format version 2, docs/format.md §3) so the decoder gives the
chunk back big-endian. Before, can_apply refused them and h5py's optional
filter stored every chunk raw, silently (issue 16).

Every test checks every element: within the bound, NaN/Inf/-0.0 bit for
bit, and every chunk stored with filter mask 0.
"""
import shutil
import subprocess

import h5py
import numpy as np
import pytest

import h5fz_testlib as lib


def _field(dtype, huge=True):
    """The embedded real field with NaN, +-Inf, -0.0 and (huge) a huge value
    sprinkled in, as dtype (any byte order)."""
    data = lib.embedded_field().load().astype(np.float64)
    flat = data.reshape(-1)
    flat[::997] = np.nan
    flat[5::1499] = np.inf
    flat[7::1733] = -np.inf
    flat[11::2003] = -0.0
    if huge:  # an outlier of every chunk (REL: it widens the chunk's range, so left out there)
        flat[13::4001] = 1e30
    return data.astype(dtype)


def _chunk_masks(dset):
    return {dset.id.get_chunk_info(i).filter_mask for i in range(dset.id.get_num_chunks())}


def _check(orig, dec, spec, what):
    """Every element of dec against orig under spec (abs=, pw_rel=, rel=,
    lossless); non-finite values and -0.0 bit for bit."""
    assert dec.dtype == orig.dtype, "%s: read back as %s, written as %s" % (what, dec.dtype, orig.dtype)
    bits = "u%d" % orig.itemsize
    special = ~np.isfinite(orig) | ((orig == 0) & np.signbit(orig))
    assert np.array_equal(orig[special].view(bits), dec[special].view(bits)), \
        "%s: NaN/Inf/-0.0 not bit for bit" % what
    a, b = orig[~special].astype(np.float64), dec[~special].astype(np.float64)
    if spec == "lossless":
        assert np.array_equal(orig.view(bits), dec.view(bits)), "%s: lossless not exact" % what
        return
    kind, value = spec.split("=")
    bound = float(value)
    if kind == "abs":
        err = np.abs(a - b).max()
        assert err <= bound, "%s: max error %g > %g" % (what, err, bound)
    elif kind == "pw_rel":
        assert np.all(np.abs(a - b) <= bound * np.abs(a)), "%s: pointwise bound broken" % what
    else:  # rel: within R x the range of the finite values (each chunk's range is smaller)
        err = np.abs(a - b).max()
        assert err <= bound * (a.max() - a.min()), "%s: max error %g" % (what, err)


@pytest.mark.parametrize("spec", ["abs=1e-4", "rel=1e-3", "pw_rel=1e-4", "lossless"])
@pytest.mark.parametrize("dtype", [">f4", ">f8"])
def test_h5py_big_endian_is_compressed(tmp_path, dtype, spec):
    """h5py `>f4`/`>f8` through the filter (added as optional, as h5py does):
    every chunk filtered, smaller than raw, every element within the bound,
    read back big-endian."""
    data = _field(dtype, huge=not spec.startswith("rel="))
    cd, _ = lib.cd_values(spec)
    path = tmp_path / "be.h5"
    with h5py.File(path, "w") as f:
        d = f.create_dataset("x", data=data, chunks=(12, 100, 100), compression=lib.FILTER_ID,
                             compression_opts=tuple(cd))
        assert d.dtype == np.dtype(dtype)
    with h5py.File(path, "r") as f:
        d = f["x"]
        assert d.dtype.byteorder == ">"
        masks = _chunk_masks(d)
        stored = d.id.get_storage_size()
        dec = d[...]
        mask, container = d.id.read_direct_chunk((0, 0, 0))
    assert masks == {0}, "chunks stored without the filter (masks %s)" % masks
    assert stored < data.nbytes, "stored %d bytes of %d: not compressed" % (stored, data.nbytes)
    assert container[:4] == b"H5FZ" and container[4] == 2 and container[7] & 2, \
        "chunk 0 does not record big-endian values (version %d, flags %#x)" % (container[4], container[7])
    _check(data, dec, spec, "h5py %s %s" % (dtype, spec))


@pytest.mark.parametrize("dtype", ["f4", "f8"])
def test_big_endian_chunks_code_the_little_endian_bytes(tmp_path, dtype):
    """The same values stored `<` and `>` give the same container apart from
    the version byte, the byte-order flag and the checksum: the codec codes
    the little-endian values either way (so CPU and GPU agree on both)."""
    data = _field("<" + dtype)
    cd, _ = lib.cd_values("abs=1e-4")
    path = tmp_path / "both.h5"
    with h5py.File(path, "w") as f:
        for name, order in (("le", "<"), ("be", ">")):
            f.create_dataset(name, data=data.astype(order + dtype), chunks=(12, 100, 100),
                             compression=lib.FILTER_ID, compression_opts=tuple(cd))
    with h5py.File(path, "r") as f:
        n = f["le"].id.get_num_chunks()
        for i in range(n):
            off = f["le"].id.get_chunk_info(i).chunk_offset
            _, le = f["le"].id.read_direct_chunk(off)
            _, be = f["be"].id.read_direct_chunk(off)
            assert len(le) == len(be), "chunk %s: %d vs %d bytes" % (off, len(le), len(be))
            assert (le[4], le[7] & 2, be[4], be[7] & 2) == (1, 0, 2, 2), "chunk %s: headers" % (off,)
            assert le[:4] + le[5:7] + le[8:-4] == be[:4] + be[5:7] + be[8:-4], \
                "chunk %s: coded bytes differ" % (off,)
        np.testing.assert_array_equal(f["le"][...], f["be"][...].astype("<" + dtype))


def test_big_endian_fill_value_and_edge_chunks(tmp_path):
    """A big-endian dataset with a fill value and edge chunks: the fill
    value (read by set_local in the dataset's own precision) comes back
    exactly, REL leaves the padding out of each chunk's range."""
    data = _field(">f4", huge=False)[:, :90, :95]  # edge chunks on two axes
    x = data.copy()
    x.reshape(-1)[3::101] = -999.0
    cd, _ = lib.cd_values("rel=1e-4")
    path = tmp_path / "fill.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("x", data=x, chunks=(12, 64, 64), compression=lib.FILTER_ID,
                         compression_opts=tuple(cd), fillvalue=np.float32(-999.0))
    with h5py.File(path, "r") as f:
        assert _chunk_masks(f["x"]) == {0}
        y = f["x"][...]
    is_fill = x == np.float32(-999.0)
    assert np.array_equal(y == np.float32(-999.0), is_fill), "fill values changed or invented"
    keep = ~is_fill & np.isfinite(x)
    a = x[keep].astype(np.float64)
    assert np.abs(a - y[keep].astype(np.float64)).max() <= 1e-4 * (a.max() - a.min())


@pytest.mark.skipif(shutil.which("h5repack") is None, reason="h5repack not installed")
def test_h5repack_of_a_big_endian_file(tmp_path):
    """`h5repack -f UD=...` of a big-endian file made with h5py: the
    repacked datasets stay big-endian, every chunk is filtered, and
    `h5fz verify --require-filter` finds every element within the bound."""
    src, dst = tmp_path / "be_orig.h5", tmp_path / "be_comp.h5"
    with h5py.File(src, "w") as f:
        f.create_dataset("f32", data=_field(">f4"), chunks=(10, 100, 100))
        f.create_dataset("f64", data=_field(">f8"), chunks=(10, 50, 100))
    _, ud = lib.cd_values("abs=1e-3")
    lib.h5repack(src, dst, ud)
    with h5py.File(src, "r") as a, h5py.File(dst, "r") as b:
        for name in ("f32", "f64"):
            assert b[name].dtype.byteorder == ">", name
            assert _chunk_masks(b[name]) == {0}, name
            assert b[name].id.get_storage_size() < a[name].id.get_storage_size(), name
            _check(a[name][...], b[name][...], "abs=1e-3", "h5repack " + name)
    lib.cli("verify", src, dst, "--abs", "1e-3", "--require-filter")


def test_inspect_names_the_byte_order(tmp_path):
    path = tmp_path / "be.h5"
    cd, _ = lib.cd_values("abs=1e-3")
    with h5py.File(path, "w") as f:
        f.create_dataset("x", data=_field(">f8"), chunks=(25, 100, 100), compression=lib.FILTER_ID,
                         compression_opts=tuple(cd))
    out = lib.cli("inspect", path, "/x").stdout
    assert "big-endian" in out, out


@pytest.mark.parametrize("ext,dtype", [("f32", ">f4"), ("f64", ">f8")])
def test_from_raw_big_endian_input(tmp_path, ext, dtype):
    """`from-raw --byte-order big` reads a big-endian raw file (as Fortran
    codes on big-endian systems write them) into a big-endian dataset,
    compressed through the filter."""
    data = _field(dtype)
    raw = tmp_path / ("field." + ext)
    data.tofile(raw)
    out = tmp_path / "fr.h5"
    lib.cli("from-raw", raw, out, "--shape", "x".join(map(str, data.shape)), "--chunk", "10x100x100",
            "--byte-order", "big", "--spec", "abs=1e-3", "--quiet")
    with h5py.File(out, "r") as f:
        d = f["data"]
        assert d.dtype == np.dtype(dtype)
        assert _chunk_masks(d) == {0}
        _check(data, d[...], "abs=1e-3", "from-raw " + dtype)
    # without the option the same bytes are read little-endian: other values
    lib.cli("from-raw", raw, tmp_path / "le.h5", "--shape", "x".join(map(str, data.shape)), "--quiet")
    with h5py.File(tmp_path / "le.h5", "r") as f:
        assert f["data"].dtype.byteorder in "<="
        assert not np.array_equal(f["data"][...], data.astype(data.dtype.newbyteorder("<")), equal_nan=True)


def test_from_raw_refuses_an_unknown_byte_order(tmp_path):
    raw = tmp_path / "x.f32"
    np.zeros(16, "<f4").tofile(raw)
    p = lib.cli("from-raw", raw, tmp_path / "o.h5", "--shape", "16", "--byte-order", "middle", check=False)
    assert p.returncode != 0 and "--byte-order" in p.stderr and "big" in p.stderr, p.stderr


def test_little_endian_chunk_in_a_big_endian_dataset_is_refused(tmp_path):
    """A valid container of the right type, size and shape but the other
    byte order would read back byte-swapped: the filter refuses it, and
    inspect counts it unreadable."""
    path = tmp_path / "mixed.h5"
    cd, _ = lib.cd_values("abs=1e-3")
    x = np.random.default_rng(3).random((10, 20)).astype("f4")
    with h5py.File(path, "w") as f:
        le = f.create_dataset("le", data=x, chunks=(10, 20), compression=lib.FILTER_ID, compression_opts=tuple(cd))
        be = f.create_dataset("be", data=x.astype(">f4"), chunks=(10, 20), compression=lib.FILTER_ID,
                              compression_opts=tuple(cd))
        mask, container = le.id.read_direct_chunk((0, 0))
        be.id.write_direct_chunk((0, 0), container, mask)
    with h5py.File(path, "r") as f:
        with pytest.raises(OSError):
            f["be"][...]
    run = subprocess.run([lib.BIN, "inspect", str(path), "/be"], capture_output=True, text=True)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "little-endian values, the dataset is big-endian" in run.stdout, run.stdout


def test_spec_order_word():
    """order=big is the dataset part's, as fill= is: printed in the spec,
    not carried by the user cd_values, said on stderr; a bad value is
    refused."""
    p = lib.cli("cd-values", "abs=1e-3 order=big")
    assert "order=big" in p.stdout and "order= is not carried" in p.stderr, p.stdout + p.stderr
    assert lib.cd_values("abs=1e-3 order=big")[0] == lib.cd_values("abs=1e-3")[0]
    p = lib.cli("cd-values", "abs=1e-3 order=middle", check=False)
    assert p.returncode == 2 and "order is big or little" in p.stderr, p.stderr


@pytest.mark.skipif(shutil.which("h5repack") is None, reason="h5repack not installed")
def test_netcdf_big_endian_variable_through_h5repack(tmp_path):
    """A netCDF-4 variable written with endian='big' (netCDF4-python),
    compressed by `h5repack -f VAR:UD=...`, reads back through netCDF4 as
    big-endian values within the bound (skipped without netCDF4-python)."""
    netCDF4 = pytest.importorskip("netCDF4")
    x = lib.embedded_field().load()
    src, dst = tmp_path / "be.nc", tmp_path / "be_h5fz.nc"
    with netCDF4.Dataset(src, "w") as ds:
        for name, n in zip("zyx", x.shape):
            ds.createDimension(name, n)
        v = ds.createVariable("theta", np.dtype(">f4"), ("z", "y", "x"), endian="big", chunksizes=(10, 100, 100))
        v[:] = x
    _, ud = lib.cd_values("abs=1e-4")
    lib.h5repack(src, dst, "theta:" + ud)
    with h5py.File(dst, "r") as f:
        assert f["theta"].dtype == np.dtype(">f4") and _chunk_masks(f["theta"]) == {0}
        assert f["theta"].id.get_storage_size() < x.nbytes
    with netCDF4.Dataset(dst) as ds:
        assert ds["theta"].endian() == "big"
        y = ds["theta"][:]
    _check(x, np.asarray(y, np.float32), "abs=1e-4", "netCDF endian='big' via h5repack")
