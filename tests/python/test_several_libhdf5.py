"""Several libhdf5 copies in one process, each reading and writing h5fz data
(docs/filter.md, "Several libhdf5 copies in one process").

The common case is xarray: h5py's PyPI wheel carries one private libhdf5,
the netCDF4 wheel (xarray's default engine) another, both loaded
RTLD_LOCAL; a C library linked to the system libhdf5 adds a third. All of
them get the one loaded plugin file (one dlopen handle per path), so the
plugin must give each copy a filter class that calls that copy only
(filter/h5fz_plugin_slots.h). Before that, the second copy was told the
filter was unavailable: "NetCDF: Filter error: undefined filter
encountered".

A venv with pinned PyPI wheels (h5py, netCDF4, xarray, h5netcdf) is made
once under the build folder. In one process of it, four writers (h5py,
netCDF4 through nc_def_var_filter, xarray's h5netcdf engine, and the system
libhdf5 through a small C library) each write the embedded field through
the filter, and four readers (h5py, netCDF4, xarray's netcdf4 engine, the
C library) read every file back; every element is checked against the
bound, and every file must hold h5fz-compressed chunks. Three set-ups:
`import h5fz` first with HDF5_PLUGIN_PATH=h5fz.PLUGIN_PATH (the issue's),
netCDF4 loading the plugin first and `import h5fz` after, and no h5fz
import at all (HDF5_PLUGIN_PATH only).

Skipped (with the reason) only when PyPI cannot be reached (under CI=true
that fails too: .ci/run runs it with PyPI); any other pip failure is a test
failure. The C library needs cc and pkg-config's hdf5-serial (Debian:
build-essential pkg-config libhdf5-dev).
"""
import json
import os
import pathlib

import numpy as np
import pytest

import h5fz_testlib as lib
import pypi_venv as pv

# The PyPI wheels tested (the package tests' h5py and numpy pins; netCDF4
# 1.7.5.1.post1 carries libnetcdf 4.10.1 and its own libhdf5 2.2.0).
PINS = ["h5py==3.16.0", "numpy==2.2.6", "netCDF4==1.7.5.1.post1", "cftime==1.6.6.1",
        "xarray==2026.9.0", "pandas==3.1.1", "h5netcdf==1.8.2"]

BUILD = pathlib.Path(os.environ["H5FZ_BUILD_DIR"])
PACKAGE_TREE = BUILD / "python"  # the CMake layout of the Python package (PYTHONPATH)
PACKAGE_PLUGIN_DIR = PACKAGE_TREE / "h5fz" / "plugin"
BUILD_PLUGIN_DIR = pathlib.Path(os.environ["HDF5_PLUGIN_PATH"])
VENV = BUILD / "pypi-venv" / "several-libhdf5"
CHUNKS = (12, 100, 100)  # 50 planes: the last chunk is an edge chunk
REL = 1e-3

# The system libhdf5's side, as a C library would do it: write and read one
# float32 dataset "/t" through the filter. Returns 0, or -1 on any HDF5
# failure (HDF5 prints its error stack).
HELPER_C = r'''
#include <hdf5.h>

int c_write(const char *path, const float *data, const hsize_t dims[3], const hsize_t chunks[3],
            unsigned filter_id, size_t n_cd, const unsigned *cd)
{
  int rc = -1;
  hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  hid_t s = H5Screate_simple(3, dims, NULL);
  hid_t p = H5Pcreate(H5P_DATASET_CREATE);
  if (f < 0 || s < 0 || p < 0) goto done;
  if (H5Pset_chunk(p, 3, chunks) < 0 || H5Pset_filter(p, filter_id, H5Z_FLAG_MANDATORY, n_cd, cd) < 0) goto done;
  hid_t d = H5Dcreate2(f, "t", H5T_IEEE_F32LE, s, H5P_DEFAULT, p, H5P_DEFAULT);
  if (d < 0) goto done;
  rc = H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0 ? -1 : 0;
  if (H5Dclose(d) < 0) rc = -1;
done:
  if (p >= 0) H5Pclose(p);
  if (s >= 0) H5Sclose(s);
  if (f >= 0 && H5Fclose(f) < 0) rc = -1;
  return rc;
}

/* out: n floats; *first_filter: the id of the pipeline's first filter (-1
 * none); *stored: bytes on disk. */
int c_read(const char *path, float *out, size_t n, int *first_filter, unsigned long long *stored)
{
  int rc = -1;
  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f < 0) return -1;
  hid_t d = H5Dopen2(f, "t", H5P_DEFAULT);
  if (d >= 0) {
    hid_t s = H5Dget_space(d);
    hid_t p = H5Dget_create_plist(d);
    unsigned flags, cfg;
    size_t nc = 0;
    *first_filter = H5Pget_nfilters(p) > 0 ? (int)H5Pget_filter2(p, 0, &flags, &nc, NULL, 0, NULL, &cfg) : -1;
    *stored = (unsigned long long)H5Dget_storage_size(d);
    if (s >= 0 && (size_t)H5Sget_simple_extent_npoints(s) == n)
      rc = H5Dread(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, out) < 0 ? -1 : 0;
    if (s >= 0) H5Sclose(s);
    if (p >= 0) H5Pclose(p);
    H5Dclose(d);
  }
  H5Fclose(f);
  return rc;
}
'''

# Runs inside the venv: argv = setup, work folder, JSON {fid, cd, bound,
# chunks, helper, package_tree, plugin_dir}. Writes <writer>.h5 per writer
# and <writer>-<reader>.npy per pair; prints one JSON line.
WORKER = r'''
import ctypes, json, os, sys
import numpy as np

setup, work, cfg = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
fid, cd, chunks = cfg["fid"], cfg["cd"], tuple(cfg["chunks"])
data = np.load(os.path.join(work, "field.npy"))
out = {"setup": setup, "files": {}, "errors": {}}

if setup == "import_first":           # the issue's order
    sys.path.insert(0, cfg["package_tree"])
    import h5fz
    os.environ["HDF5_PLUGIN_PATH"] = h5fz.PLUGIN_PATH
    import netCDF4
elif setup == "netcdf_first":         # netCDF4's libhdf5 loads the package's plugin file first
    os.environ["HDF5_PLUGIN_PATH"] = os.path.join(cfg["package_tree"], "h5fz", "plugin")
    import netCDF4
    nc = ctypes.CDLL([l.split()[-1] for l in open("/proc/self/maps") if "libnetcdf" in l][0])
    with netCDF4.Dataset(os.path.join(work, "probe.nc"), "w") as probe:
        # H5Zfilter_avail in netCDF4's libhdf5: it loads the plugin file now
        out["netcdf_avail_before_import"] = nc.nc_inq_filter_avail(ctypes.c_int(probe._grpid),
                                                                    ctypes.c_uint(fid))
    sys.path.insert(0, cfg["package_tree"])
    import h5fz
elif setup == "plugin_path_only":     # no h5fz package at all
    os.environ["HDF5_PLUGIN_PATH"] = cfg["plugin_dir"]
    import netCDF4
else:
    sys.exit("unknown setup " + setup)

import h5py
import xarray as xr
if setup == "plugin_path_only":
    out["h5py_avail"] = bool(h5py.h5z.filter_avail(fid))   # makes h5py's libhdf5 load the plugin
else:
    out["registered"] = h5fz.get_config()["registered"]

helper = ctypes.CDLL(cfg["helper"])
nc_lib = ctypes.CDLL([l.split()[-1] for l in open("/proc/self/maps") if "libnetcdf" in l][0])
maps = sorted({l.split()[-1] for l in open("/proc/self/maps")
               if "libhdf5" in l and "_hl" not in l and "/" in l})
out["libhdf5s"] = maps

u3 = ctypes.c_ulonglong * 3
cd_arr = (ctypes.c_uint * len(cd))(*cd)

def w_h5py(path):
    with h5py.File(path, "w") as f:
        f.create_dataset("t", data=data, chunks=chunks, compression=fid, compression_opts=tuple(cd))

def w_netcdf4(path):
    with netCDF4.Dataset(path, "w") as ds:
        for name, n in zip("zyx", data.shape):
            ds.createDimension(name, n)
        v = ds.createVariable("t", "f4", ("z", "y", "x"), chunksizes=chunks)
        rc = nc_lib.nc_def_var_filter(ctypes.c_int(ds._grpid), ctypes.c_int(v._varid), ctypes.c_uint(fid),
                                      ctypes.c_size_t(len(cd)), cd_arr)
        if rc != 0:
            raise RuntimeError("nc_def_var_filter: %s" % nc_lib_strerror(rc))
        v[:] = data

def nc_lib_strerror(rc):
    nc_lib.nc_strerror.restype = ctypes.c_char_p
    return nc_lib.nc_strerror(ctypes.c_int(rc)).decode()

def w_xarray(path):
    ds = xr.Dataset({"t": (("z", "y", "x"), data)})
    ds.to_netcdf(path, engine="h5netcdf",
                 encoding={"t": {"compression": fid, "compression_opts": tuple(cd), "chunksizes": chunks}})

def w_c(path):
    a = np.ascontiguousarray(data, dtype="<f4")
    rc = helper.c_write(path.encode(), a.ctypes.data_as(ctypes.c_void_p), u3(*data.shape), u3(*chunks),
                        ctypes.c_uint(fid), ctypes.c_size_t(len(cd)), cd_arr)
    if rc != 0:
        raise RuntimeError("c_write failed")

def r_h5py(path):
    with h5py.File(path, "r") as f:
        d = f["t"]
        plist = d.id.get_create_plist()
        ids = [plist.get_filter(i)[0] for i in range(plist.get_nfilters())]
        return d[...], {"filters": ids, "stored": d.id.get_storage_size()}

def r_netcdf4(path):
    with netCDF4.Dataset(path) as ds:
        v = ds["t"]
        v.set_auto_mask(False)
        return np.asarray(v[:]), {}

def r_xarray(path):
    with xr.open_dataset(path, engine="netcdf4", mask_and_scale=False) as ds:
        return ds["t"].values, {}

def r_c(path):
    a = np.empty(data.shape, "<f4")
    first = ctypes.c_int(-1)
    stored = ctypes.c_ulonglong(0)
    rc = helper.c_read(path.encode(), a.ctypes.data_as(ctypes.c_void_p), ctypes.c_size_t(a.size),
                       ctypes.byref(first), ctypes.byref(stored))
    if rc != 0:
        raise RuntimeError("c_read failed")
    return a, {"filters": [first.value], "stored": stored.value}

writers = {"h5py": w_h5py, "netcdf4": w_netcdf4, "xarray_h5netcdf": w_xarray, "c_system": w_c}
readers = {"h5py": r_h5py, "netcdf4": r_netcdf4, "xarray_netcdf4": r_xarray, "c_system": r_c}
for wn, w in writers.items():
    path = os.path.join(work, wn + ".h5")
    try:
        w(path)
    except Exception as e:
        out["errors"][wn] = "%s: %s" % (type(e).__name__, e)
        continue
    out["files"][wn] = {}
    for rn, r in readers.items():
        try:
            a, info = r(path)
            np.save(os.path.join(work, "%s-%s.npy" % (wn, rn)), a)
            out["files"][wn][rn] = info
        except Exception as e:
            out["errors"]["%s-%s" % (wn, rn)] = "%s: %s" % (type(e).__name__, e)
print(json.dumps(out))
'''


@pytest.fixture(scope="module")
def venv_python():
    """The venv's python with PINS from PyPI wheels; made once under the
    build folder."""
    return pv.pinned_venv(VENV, PINS)


@pytest.fixture(scope="module")
def helper(tmp_path_factory):
    """The C library linked to the system libhdf5 (pkg-config hdf5-serial,
    Debian's libhdf5-dev)."""
    d = tmp_path_factory.mktemp("helper")
    src = d / "several_libhdf5_helper.c"
    src.write_text(HELPER_C)
    so = d / "libseveral_libhdf5_helper.so"
    flags = pv.run(["pkg-config", "--cflags", "--libs", "hdf5-serial"])
    assert flags.returncode == 0, "pkg-config hdf5-serial: %s" % flags.stderr
    p = pv.run(["cc", "-shared", "-fPIC", "-Wall", "-Wextra", "-Werror", "-o", so, src, *flags.stdout.split()])
    assert p.returncode == 0, "cannot build the C helper:\n%s%s" % (p.stdout, p.stderr)
    return so


@pytest.fixture(scope="module")
def field():
    f = lib.embedded_field()
    data = f.load()
    bound = REL * lib.value_range(f, data)
    cd, _ = lib.cd_values(lib.spec_abs(bound))
    return data, bound, cd


WRITERS = ("h5py", "netcdf4", "xarray_h5netcdf", "c_system")
READERS = ("h5py", "netcdf4", "xarray_netcdf4", "c_system")


def _run_setup(setup, venv_python, helper, field, tmp_path):
    data, bound, cd = field
    assert (PACKAGE_PLUGIN_DIR / "libh5fz.so").is_file(), "the build has no package tree"
    np.save(tmp_path / "field.npy", data)
    cfg = {"fid": lib.FILTER_ID, "cd": cd, "chunks": CHUNKS, "helper": str(helper),
           "package_tree": str(PACKAGE_TREE), "plugin_dir": str(BUILD_PLUGIN_DIR)}
    env = {k: v for k, v in os.environ.items() if k not in ("HDF5_PLUGIN_PATH", "PYTHONPATH")}
    p = pv.run([venv_python, "-c", WORKER, setup, tmp_path, json.dumps(cfg)], env=env, cwd=tmp_path)
    assert p.returncode == 0, "worker %s failed (%d):\n%s%s" % (setup, p.returncode, p.stdout, p.stderr)
    info = json.loads(p.stdout.strip().splitlines()[-1])
    assert not info["errors"], "%s: %s\nstderr:\n%s" % (setup, json.dumps(info["errors"], indent=1),
                                                        p.stderr[-4000:])
    # three libhdf5 copies really are in the process: h5py's, netCDF4's, the system's
    libs = info["libhdf5s"]
    assert any("h5py.libs" in l for l in libs) and any("netcdf4.libs" in l for l in libs) and \
        any(l.startswith("/usr/lib") for l in libs), libs
    raw = int(np.prod(data.shape)) * data.dtype.itemsize
    for w in WRITERS:
        files = info["files"][w]
        for via in ("h5py", "c_system"):  # the file's pipeline, seen by two libhdf5 copies
            assert files[via]["filters"][0] == lib.FILTER_ID, (setup, w, via, files[via])
            assert files[via]["stored"] < raw / 2, "%s: %s's file is not compressed (%d of %d bytes)" % (
                setup, w, files[via]["stored"], raw)
        for r in READERS:
            back = np.load(tmp_path / ("%s-%s.npy" % (w, r)))
            lib.check_bound(data, back, bound, "%s: written by %s, read by %s" % (setup, w, r))
    return info


def test_import_h5fz_then_netcdf4(venv_python, helper, field, tmp_path):
    """The issue's case: import h5fz (bound to h5py's libhdf5), then the
    netCDF4 wheel with HDF5_PLUGIN_PATH=h5fz.PLUGIN_PATH: the same plugin
    file, a second slot."""
    info = _run_setup("import_first", venv_python, helper, field, tmp_path)
    assert info["registered"] is True, info


def test_netcdf4_first_then_import_h5fz(venv_python, helper, field, tmp_path):
    """netCDF4's libhdf5 loads the package's plugin file first; import h5fz
    afterwards still registers with h5py's (init_filter takes a new slot)."""
    info = _run_setup("netcdf_first", venv_python, helper, field, tmp_path)
    assert info["netcdf_avail_before_import"] == 0, info  # NC_NOERR: netCDF4's copy had the filter first
    assert info["registered"] is True, info


def test_plugin_path_only(venv_python, helper, field, tmp_path):
    """No h5fz package: each libhdf5 finds the build's plugin on
    HDF5_PLUGIN_PATH and gets its own class by the caller's address."""
    info = _run_setup("plugin_path_only", venv_python, helper, field, tmp_path)
    assert info["h5py_avail"] is True, info
