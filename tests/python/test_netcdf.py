"""netCDF-4 files through h5fz (README "netCDF / xarray"): ncdump reads
them, nccopy -F writes them, netCDF4-python and xarray (both engines) read
them within the bound, xarray writes them with the h5netcdf engine, and
h5fz verify / h5fz compress handle netCDF's coordinates and dimensions.

Needs Debian's netcdf-bin, python3-netcdf4, python3-xarray and
python3-h5netcdf; each test says which one it misses and is skipped
without it (.ci/run installs them)."""
import json
import re
import shutil
import subprocess

import h5py
import numpy as np
import pytest

import h5fz_testlib as lib

BOUND = 1e-3
SPEC = "abs=1e-3"


def _need_tool(name):
    if shutil.which(name) is None:
        pytest.skip("%s not found: install Debian's netcdf-bin for the netCDF-4 tests" % name)


def _need_module(name, package):
    try:
        return __import__(name)
    except ImportError:
        pytest.skip("Python module %s not found: install Debian's %s for the netCDF-4 tests"
                    % (name, package))


def _field(shape=(6, 45, 60), seed=0):
    g = np.indices(shape).astype(np.float64)
    a = 280 + 10 * np.sin(0.11 * g[2]) * np.cos(0.07 * g[1]) + 0.5 * g[0]
    return (a + np.random.default_rng(seed).normal(0, 0.05, shape)).astype("f4")


@pytest.fixture
def plain_nc(tmp_path):
    """An uncompressed netCDF-4 file as a model writes it: coordinate
    variables lat, lon (float), time (unlimited, float64), a dimension
    without a variable (nv), bounds, and t(time, lat, lon) float32 with a
    fill value and attributes."""
    netCDF4 = _need_module("netCDF4", "python3-netcdf4")
    path = tmp_path / "plain.nc"
    t = _field()
    with netCDF4.Dataset(path, "w", format="NETCDF4") as d:
        d.createDimension("time", None)
        d.createDimension("lat", t.shape[1])
        d.createDimension("lon", t.shape[2])
        d.createDimension("nv", 2)
        v = d.createVariable("time", "f8", ("time",))
        v[:] = np.arange(t.shape[0]) * 6.0
        v.units = "hours since 2000-01-01"
        v = d.createVariable("lat", "f4", ("lat",))
        v[:] = np.linspace(-89.5, 89.5, t.shape[1])
        v.units = "degrees_north"
        v = d.createVariable("lon", "f4", ("lon",))
        v[:] = np.linspace(0, 354, t.shape[2])
        v = d.createVariable("lat_bnds", "f4", ("lat", "nv"))
        v[:] = np.stack([np.linspace(-90, 89, t.shape[1]), np.linspace(-89, 90, t.shape[1])], 1)
        v = d.createVariable("t", "f4", ("time", "lat", "lon"), chunksizes=(2, t.shape[1], t.shape[2]),
                             fill_value=np.float32(-9999.0))
        v[:] = t
        v.units = "K"
        v.long_name = "air temperature"
        d.title = "h5fz netCDF test"
    return path, t


def _nccopy_filtered(src, dst, variables=("t", "lat_bnds")):
    """nccopy -F VAR,ID,W1,W2,... once per variable (the words of `h5fz
    cd-values`); the coordinates are left as they are."""
    _need_tool("nccopy")
    cd, _ = lib.cd_values(SPEC)
    args = []
    for var in variables:
        args += ["-F", "%s,%d,%s" % (var, lib.FILTER_ID, ",".join(map(str, cd)))]
    p = subprocess.run(["nccopy", "-4", *args, str(src), str(dst)], capture_output=True, text=True)
    assert p.returncode == 0, "nccopy %s failed:\n%s%s" % (" ".join(args), p.stdout, p.stderr)
    return args


def _filtered(path, var):
    with h5py.File(path, "r") as f:
        d = f[var]
        return lib.filter_ids(d), d.id.get_storage_size(), d.size * d.dtype.itemsize


def test_nccopy_writes_and_ncdump_reads(plain_nc, tmp_path):
    src, t = plain_nc
    out = tmp_path / "nccopy.nc"
    _nccopy_filtered(src, out)
    ids, stored, raw = _filtered(out, "t")
    assert ids == [lib.FILTER_ID] and stored < raw
    _need_tool("ncdump")
    p = subprocess.run(["ncdump", "-hs", str(out)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert re.search(r't:_Filter = "%d,' % lib.FILTER_ID, p.stdout), p.stdout
    p = subprocess.run(["ncdump", "-p", "9", "-v", "t", str(out)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    data = p.stdout[p.stdout.index("\ndata:"):]
    body = data[data.index(" t =") + 4:data.rindex(";")]
    values = np.array([float(v) for v in body.replace(";", " ").replace(",", " ").split()])
    assert values.size == t.size
    lib.check_bound(t.reshape(-1), values, BOUND + 1e-4, "ncdump -v t")  # 9 digits printed
    # verify --require-filter on the whole file: the dimension scales (lat,
    # lon, time, and nv, netCDF's dataset for a dimension without a
    # variable) need no filter; the data variables must have it
    j = json.loads(lib.cli("verify", src, out, "--abs", str(BOUND), "--require-filter",
                           "--json").stdout)
    assert j["ok"], j
    rows = {d["dataset"]: d for d in j["datasets"]}
    assert set(rows) == {"/t", "/lat_bnds", "/lat", "/lon", "/time", "/nv"}
    assert rows["/t"]["filter_applied"] and rows["/lat_bnds"]["filter_applied"]
    for scale in ["/lat", "/lon", "/time", "/nv"]:
        assert rows[scale]["dimension_scale"] and not rows[scale]["filter_found"], scale
    # a data variable left unfiltered still fails the check
    half = tmp_path / "half.nc"
    _nccopy_filtered(src, half, variables=("t",))
    p = lib.cli("verify", src, half, "--abs", str(BOUND), "--require-filter", check=False)
    assert p.returncode == 1 and re.search(r"^/lat_bnds: .*MISSING.*FAIL$", p.stdout, re.M), p.stdout


def test_netcdf4_python_and_xarray_read_within_the_bound(plain_nc, tmp_path):
    src, t = plain_nc
    out = tmp_path / "nccopy.nc"
    _nccopy_filtered(src, out)
    netCDF4 = _need_module("netCDF4", "python3-netcdf4")
    with netCDF4.Dataset(out) as d:
        v = d["t"]
        v.set_auto_mask(False)
        lib.check_bound(t, v[:], BOUND, "netCDF4-python")
        assert v.filters() is not None
    xr = _need_module("xarray", "python3-xarray")
    _need_module("h5netcdf", "python3-h5netcdf")
    for engine in ["netcdf4", "h5netcdf"]:
        with xr.open_dataset(out, engine=engine, mask_and_scale=False) as ds:
            lib.check_bound(t, ds["t"].values, BOUND, "xarray %s" % engine)
            assert np.array_equal(ds["lat"].values, np.linspace(-89.5, 89.5, t.shape[1]).astype("f4"))


def test_xarray_h5netcdf_writes_with_encoding(plain_nc, tmp_path):
    src, t = plain_nc
    xr = _need_module("xarray", "python3-xarray")
    _need_module("h5netcdf", "python3-h5netcdf")
    cd, _ = lib.cd_values(SPEC)
    out = tmp_path / "xr.nc"
    with xr.open_dataset(src, engine="h5netcdf", mask_and_scale=False) as ds:
        ds.to_netcdf(out, engine="h5netcdf",
                     encoding={"t": {"compression": lib.FILTER_ID, "compression_opts": tuple(cd),
                                     "chunksizes": (2, t.shape[1], t.shape[2])}})
    ids, stored, raw = _filtered(out, "t")
    assert ids == [lib.FILTER_ID] and stored < raw
    with xr.open_dataset(out, engine="netcdf4", mask_and_scale=False) as ds:
        lib.check_bound(t, ds["t"].values, BOUND, "written by xarray h5netcdf")
    _need_tool("ncdump")
    assert subprocess.run(["ncdump", "-h", str(out)], capture_output=True).returncode == 0
    lib.cli("verify", src, out, "--abs", str(BOUND), "--require-filter", "--dataset", "/t")


def test_xarray_netcdf4_engine_refuses_compression_opts(plain_nc, tmp_path):
    """docs: the netcdf4 engine has no way to pass cd_values; use h5netcdf
    (or nccopy -F, or h5fz compress)."""
    src, _ = plain_nc
    xr = _need_module("xarray", "python3-xarray")
    cd, _ = lib.cd_values(SPEC)
    with xr.open_dataset(src, engine="netcdf4") as ds:
        with pytest.raises(ValueError, match="compression_opts|unexpected encoding"):
            ds.to_netcdf(tmp_path / "no.nc", engine="netcdf4",
                         encoding={"t": {"compression": lib.FILTER_ID, "compression_opts": tuple(cd)}})


def test_resaving_drops_the_filter_unless_the_encoding_is_given(plain_nc, tmp_path):
    """docs: xarray does not carry a third-party filter from the file it read
    to the file it writes; the encoding must be given again."""
    src, t = plain_nc
    xr = _need_module("xarray", "python3-xarray")
    _need_module("h5netcdf", "python3-h5netcdf")
    comp = tmp_path / "comp.nc"
    _nccopy_filtered(src, comp)
    again = tmp_path / "again.nc"
    with xr.open_dataset(comp, engine="h5netcdf") as ds:
        ds.to_netcdf(again, engine="h5netcdf")
    ids, stored, raw = _filtered(again, "t")
    assert lib.FILTER_ID not in ids


def test_h5fz_compress_keeps_coordinates_exact(plain_nc, tmp_path):
    src, t = plain_nc
    out = tmp_path / "compressed.nc"
    j = json.loads(lib.cli("compress", src, out, SPEC, "--json").stdout)
    assert j["ok"]
    rows = {d["path"]: d for d in j["datasets"]}
    for coord in ["/lat", "/lon", "/time", "/nv"]:
        assert rows[coord]["action"] == "copied" and "dimension scale" in rows[coord]["reason"], coord
    assert rows["/t"]["action"] == "compressed" and rows["/lat_bnds"]["action"] == "compressed"
    with h5py.File(src, "r") as a, h5py.File(out, "r") as b:
        for coord in ["lat", "lon", "time"]:
            assert a[coord].dtype == b[coord].dtype
            assert a[coord][...].tobytes() == b[coord][...].tobytes(), coord   # bit-exact
        lib.check_bound(a["t"][...], b["t"][...], BOUND, "t")
        assert lib.filter_ids(b["t"]) == [lib.FILTER_ID]
        assert b["t"].fillvalue == np.float32(-9999.0)
    # netCDF sees the same file: header identical, dimensions attached
    _need_tool("ncdump")
    head = [subprocess.run(["ncdump", "-h", str(p)], capture_output=True, text=True).stdout
            .split("\n", 1)[1] for p in (src, out)]
    assert head[0] == head[1]
    netCDF4 = _need_module("netCDF4", "python3-netcdf4")
    with netCDF4.Dataset(out) as d:
        assert d["t"].dimensions == ("time", "lat", "lon")
        assert d["lat_bnds"].dimensions == ("lat", "nv")
        assert d.dimensions["time"].isunlimited() and len(d.dimensions["time"]) == t.shape[0]
        v = d["t"]
        v.set_auto_mask(False)
        lib.check_bound(t, v[:], BOUND, "netCDF4-python after h5fz compress")
    lib.cli("verify", src, out, "--abs", str(BOUND), "--require-filter")
    # --only names a coordinate: then it is compressed too
    out2 = tmp_path / "lat_too.nc"
    j = json.loads(lib.cli("compress", src, out2, SPEC, "--only", "/lat", "--only", "/t",
                           "--json").stdout)
    rows = {d["path"]: d for d in j["datasets"]}
    assert rows["/lat"]["action"] == "compressed" and rows["/lon"]["action"] == "copied"


def test_h5fz_compress_groups_and_string_variables(tmp_path):
    """A netCDF-4 group with its own dimension, a string variable (a fill
    value of a variable-length type, which H5Ocopy left pointing into the
    input: ncdump and h5py then failed on the copy) and an integer
    variable: ncdump prints the copy exactly as the original, strings and
    all."""
    netCDF4 = _need_module("netCDF4", "python3-netcdf4")
    _need_tool("ncdump")
    src = tmp_path / "groups.nc"
    with netCDF4.Dataset(src, "w") as d:
        d.createDimension("y", 20)
        d.createVariable("y", "f8", ("y",))[:] = np.arange(20.0)
        g = d.createGroup("grp")
        g.createDimension("x", 30)
        g.createVariable("x", "f4", ("x",))[:] = np.arange(30) * 0.5
        g.createVariable("v", "f4", ("y", "x"))[:] = _field((1, 20, 30))[0]
        g.createVariable("s", str, ("x",))[:] = np.array(["a%d" % i for i in range(30)], dtype=object)
        g.note = "in a group"
        d.createVariable("iv", "i4", ("y",))[:] = np.arange(20)
    out = tmp_path / "groups_c.nc"
    j = json.loads(lib.cli("compress", src, out, SPEC, "--json").stdout)
    rows = {r["path"]: r for r in j["datasets"]}
    assert rows["/grp/v"]["action"] == "compressed" and rows["/grp/s"]["action"] == "copied"
    dump = [subprocess.run(["ncdump", str(p)], capture_output=True, text=True) for p in (src, out)]
    assert dump[1].returncode == 0, dump[1].stderr
    texts = [d.stdout.split("\n", 1)[1] for d in dump]
    # everything but v's values is identical
    cut = [t[:t.index(" v =")] + t[t.index(" s ="):] for t in texts]
    assert cut[0] == cut[1]
    with h5py.File(out, "r") as f:
        assert f["grp/s"].fillvalue == b"" and f["grp/s"][0] == b"a0"
