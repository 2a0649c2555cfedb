"""The plugin under a PyPI h5py wheel, whose private libhdf5 is loaded
RTLD_LOCAL next to (not instead of) the system one: the case self-binding
exists for (docs/filter.md, "Self-binding").

A venv with a pinned h5py wheel is made once under the build folder and
reused. In it a real field is written through the filter (compression=<id>,
compression_opts from `h5fz cd-values`), read back and checked against the
bound; the file crosses over to the Debian h5py of this process and back;
and the explicit init_filter(path) binding is used once through ctypes.

Skipped (with the reason) only when PyPI cannot be reached (under CI=true
that fails too: pypi_venv.py); any other pip
failure is a test failure. Pins can be changed with H5FZ_PYPI_H5PY and
H5FZ_PYPI_NUMPY (e.g. H5FZ_PYPI_H5PY=3.12.1 for an HDF5 1.14 wheel).
"""
import json
import os
import pathlib
import sys

import h5py
import numpy as np
import pytest

import h5fz_testlib as lib
import pypi_venv as pv

# h5py 3.16.0 carries HDF5 2.0.0 (the GPU machine's h5py); numpy with a
# manylinux wheel for CPython 3.11.
H5PY_PIN = os.environ.get("H5FZ_PYPI_H5PY", "3.16.0")
NUMPY_PIN = os.environ.get("H5FZ_PYPI_NUMPY", "2.2.6")

BUILD = pathlib.Path(os.environ["H5FZ_BUILD_DIR"])
PLUGIN_DIR = pathlib.Path(os.environ["HDF5_PLUGIN_PATH"])
PLUGIN = PLUGIN_DIR / "libh5fz.so"
VENV = BUILD / "pypi-venv" / ("h5py-%s-numpy-%s" % (H5PY_PIN, NUMPY_PIN))
CHUNKS = (12, 100, 100)  # 50 planes: the last chunk is an edge chunk
REL = 1e-3

# Runs inside the venv (the wheel's h5py). argv: mode, then mode arguments;
# prints one JSON line.
WORKER = r'''
import ctypes, json, os, sys
import numpy as np
import h5py

mode = sys.argv[1]
out = {"h5py": h5py.version.version, "hdf5": h5py.version.hdf5_version,
       "h5py_file": h5py.__file__}

def first_chunk(dset):
    mask, raw = dset.id.read_direct_chunk((0,) * dset.ndim)
    return mask, len(raw)

def write(path, data, fid, cd, chunks):
    with h5py.File(path, "w") as f:
        f.create_dataset("data", data=data, chunks=chunks, compression=fid,
                         compression_opts=tuple(cd))

def read(path, npy):
    with h5py.File(path, "r") as f:
        d = f["data"]
        np.save(npy, d[...])
        plist = d.id.get_create_plist()
        out["filters"] = [plist.get_filter(i)[0] for i in range(plist.get_nfilters())]
        out["mask"], out["chunk0_bytes"] = first_chunk(d)
        out["storage"] = d.id.get_storage_size()

def libhdf5_of_h5py():
    """The libhdf5 this process's h5py loaded (the wheel's private copy)."""
    with open("/proc/self/maps") as m:
        paths = {l.split()[-1] for l in m if "/" in l}
    libs = sorted(p for p in paths if os.path.basename(p).startswith("libhdf5")
                  and "_hl" not in os.path.basename(p))
    return libs

if mode in ("write", "write_be"):
    raw, shape, fid, cd, path, npy = sys.argv[2:8]
    shape = tuple(int(n) for n in shape.split("x"))
    fid = int(fid)
    out["avail"] = bool(h5py.h5z.filter_avail(fid))
    data = np.fromfile(raw, "<f4").reshape(shape)
    if mode == "write_be":  # a big-endian dataset (">f4")
        data = data.astype(">f4")
    write(path, data, fid, json.loads(cd), tuple(json.loads(sys.argv[8])))
    read(path, npy)
elif mode == "read":
    path, npy = sys.argv[2:4]
    read(path, npy)
elif mode == "init_filter":
    raw, shape, fid, cd, path, npy, plugin = sys.argv[2:9]
    shape = tuple(int(n) for n in shape.split("x"))
    fid = int(fid)
    out["avail_before"] = bool(h5py.h5z.filter_avail(fid))
    libs = libhdf5_of_h5py()
    out["libhdf5"] = libs
    lib = ctypes.CDLL(plugin)
    lib.init_filter.argtypes = [ctypes.c_char_p]
    lib.init_filter.restype = ctypes.c_int
    lib.H5PLget_plugin_info.restype = ctypes.c_void_p
    out["init_bogus"] = lib.init_filter(b"/nonexistent/libhdf5.so")
    out["init_not_hdf5"] = lib.init_filter(b"libm.so.6")
    out["init"] = lib.init_filter(libs[0].encode()) if len(libs) == 1 else None
    out["init_again"] = lib.init_filter(libs[0].encode()) if len(libs) == 1 else None
    info = lib.H5PLget_plugin_info()
    out["info"] = bool(info)
    if out["init"] == 0 and info:
        h5py.h5z.register_filter(info)
        out["avail"] = bool(h5py.h5z.filter_avail(fid))
        data = np.fromfile(raw, "<f4").reshape(shape)
        write(path, data, fid, json.loads(cd), tuple(json.loads(sys.argv[9])))
        read(path, npy)
elif mode == "limit":
    # Another libhdf5 (Debian's, RTLD_LOCAL) loads the plugin file first.
    other = ctypes.CDLL(sys.argv[2])
    fid = int(sys.argv[3])
    other.H5open()
    out["other_avail"] = other.H5Zfilter_avail(fid)
    out["avail"] = bool(h5py.h5z.filter_avail(fid))
print(json.dumps(out))
'''


@pytest.fixture(scope="module")
def wheel_python():
    """The venv's python, with h5py==H5PY_PIN and numpy==NUMPY_PIN from PyPI
    wheels. Made once per pin under the build folder."""
    return pv.pinned_venv(VENV, ["h5py==%s" % H5PY_PIN, "numpy==%s" % NUMPY_PIN])


def _worker(py, *args, env=None):
    e = dict(os.environ)
    e.update(env or {})
    p = pv.run([py, "-c", WORKER, *args], env=e)
    assert p.returncode == 0, "wheel h5py worker %s failed (%d):\n%s%s" % (
        args[0], p.returncode, p.stdout, p.stderr)
    return json.loads(p.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def field():
    f = lib.embedded_field()
    data = f.load()
    bound = REL * lib.value_range(f, data)
    cd, _ = lib.cd_values(lib.spec_abs(bound))
    return f, data, bound, cd


def _check_read(info, data, npy, bound, what):
    assert lib.FILTER_ID in info["filters"], "%s: h5fz is not in the pipeline" % what
    assert info["mask"] == 0, "%s: the filter was skipped for chunk 0 (mask %#x)" % (
        what, info["mask"])
    raw = int(np.prod(CHUNKS)) * data.dtype.itemsize
    assert info["chunk0_bytes"] < raw, "%s: chunk 0 stored %d bytes, raw is %d" % (
        what, info["chunk0_bytes"], raw)
    lib.check_bound(data, np.load(npy), bound, what)


def _debian_read(path, data, bound, what):
    with h5py.File(path, "r") as f:
        d = f["data"]
        assert lib.FILTER_ID in lib.filter_ids(d), what
        mask, raw = d.id.read_direct_chunk((0, 0, 0))
        dec = d[...]
    assert mask == 0, "%s: chunk 0 stored unfiltered" % what
    assert len(raw) < int(np.prod(CHUNKS)) * 4, what
    lib.check_bound(data, dec, bound, what)


def test_wheel_writes_and_reads(wheel_python, field, tmp_path):
    f, data, bound, cd = field
    h5, npy = tmp_path / "wheel.h5", tmp_path / "wheel.npy"
    info = _worker(wheel_python, "write", f.path, f.shape_text, lib.FILTER_ID, json.dumps(cd),
                   h5, npy, json.dumps(CHUNKS))
    print("wheel: h5py %s, HDF5 %s" % (info["h5py"], info["hdf5"]))
    assert info["h5py"] == H5PY_PIN, info
    assert info["avail"], "the wheel's HDF5 cannot load the plugin from %s" % PLUGIN_DIR
    _check_read(info, data, npy, bound, "wheel h5py %s (HDF5 %s) write+read" % (
        info["h5py"], info["hdf5"]))
    print("wheel ratio %.3f" % (data.nbytes / info["storage"]))
    # The system libhdf5 (Debian h5py in this process) reads what the wheel wrote.
    _debian_read(h5, data, bound, "Debian h5py %s reading the wheel's file" % h5py.version.version)


def test_wheel_writes_big_endian(wheel_python, field, tmp_path):
    """A big-endian (">f4") dataset written by the wheel's HDF5 through the
    filter: compressed (mask 0), read back big-endian within the bound by the
    wheel and by Debian's h5py (the binding's H5Tcopy/H5Tset_order path)."""
    f, data, bound, cd = field
    h5, npy = tmp_path / "wheel_be.h5", tmp_path / "wheel_be.npy"
    info = _worker(wheel_python, "write_be", f.path, f.shape_text, lib.FILTER_ID, json.dumps(cd),
                   h5, npy, json.dumps(CHUNKS))
    _check_read(info, data, npy, bound, "wheel h5py %s (HDF5 %s) big-endian write+read" % (
        info["h5py"], info["hdf5"]))
    assert np.load(npy).dtype == np.dtype(">f4")
    _debian_read(h5, data, bound, "Debian h5py reading the wheel's big-endian file")


def test_debian_writes_wheel_reads(wheel_python, field, tmp_path):
    f, data, bound, cd = field
    h5, npy = tmp_path / "debian.h5", tmp_path / "debian.npy"
    with h5py.File(h5, "w") as out:
        out.create_dataset("data", data=data, chunks=CHUNKS, compression=lib.FILTER_ID,
                           compression_opts=tuple(cd))
    _debian_read(h5, data, bound, "Debian h5py write+read")
    info = _worker(wheel_python, "read", h5, npy)
    _check_read(info, data, npy, bound, "wheel h5py %s (HDF5 %s) reading Debian's file" % (
        info["h5py"], info["hdf5"]))


def test_init_filter_through_ctypes(wheel_python, field, tmp_path):
    """The explicit binding: HDF5 does not find the plugin (empty plugin
    path); the caller loads it with ctypes, binds it to h5py's libhdf5 with
    init_filter(path) and registers the class through h5py."""
    f, data, bound, cd = field
    empty = tmp_path / "no-plugins"
    empty.mkdir()
    h5, npy = tmp_path / "ctypes.h5", tmp_path / "ctypes.npy"
    info = _worker(wheel_python, "init_filter", f.path, f.shape_text, lib.FILTER_ID,
                   json.dumps(cd), h5, npy, PLUGIN, json.dumps(CHUNKS),
                   env={"HDF5_PLUGIN_PATH": str(empty)})
    assert not info["avail_before"], "the plugin was found without HDF5_PLUGIN_PATH: %s" % info
    assert len(info["libhdf5"]) == 1, "expected one libhdf5 in the wheel process: %s" % info
    assert info["init_bogus"] == -1 and info["init_not_hdf5"] == -1, info
    assert info["init"] == 0 and info["init_again"] == 0, info
    assert info["info"] and info["avail"], info
    _check_read(info, data, npy, bound, "wheel h5py via init_filter + register_filter")
    _debian_read(h5, data, bound, "Debian h5py reading the init_filter file")


UNBOUND = r'''
import ctypes, sys
hid_t = ctypes.c_int64
CAN = ctypes.CFUNCTYPE(ctypes.c_int, hid_t, hid_t, hid_t)
FILT = ctypes.CFUNCTYPE(ctypes.c_size_t, ctypes.c_uint, ctypes.c_size_t,
                        ctypes.POINTER(ctypes.c_uint), ctypes.c_size_t,
                        ctypes.POINTER(ctypes.c_size_t), ctypes.POINTER(ctypes.c_void_p))
class H5Z_class2_t(ctypes.Structure):
    _fields_ = [("version", ctypes.c_int), ("id", ctypes.c_int),
                ("encoder_present", ctypes.c_uint), ("decoder_present", ctypes.c_uint),
                ("name", ctypes.c_char_p), ("can_apply", CAN), ("set_local", CAN),
                ("filter", FILT)]
lib = ctypes.CDLL(sys.argv[1])
lib.H5PLget_plugin_info.restype = ctypes.POINTER(H5Z_class2_t)
lib.H5PLget_plugin_type.restype = ctypes.c_int
assert lib.H5PLget_plugin_type() == 0
cls = lib.H5PLget_plugin_info().contents
assert cls.name == b"h5fz" and cls.id == int(sys.argv[2]), (cls.name, cls.id)
assert cls.can_apply(1, 2, 3) == -1
assert cls.set_local(1, 2, 3) == -1
buf = ctypes.create_string_buffer(64)
p = ctypes.c_void_p(ctypes.addressof(buf))
size = ctypes.c_size_t(64)
cd = (ctypes.c_uint * 4)()
assert cls.filter(0, 0, cd, 64, ctypes.byref(size), ctypes.byref(p)) == 0
assert p.value == ctypes.addressof(buf) and size.value == 64
print("unbound: callbacks failed cleanly")
'''


def test_unbound_callbacks_fail_cleanly():
    """No libhdf5 in the process and no init_filter: the class is returned,
    and every callback fails with HDF5's error values without calling
    anything (no crash)."""
    p = pv.run([sys.executable, "-c", UNBOUND, PLUGIN, lib.FILTER_ID])
    assert p.returncode == 0, "%s%s" % (p.stdout, p.stderr)
    assert "failed cleanly" in p.stdout


def _debian_libhdf5():
    """The libhdf5 Debian's h5py loaded into this process."""
    with open("/proc/self/maps") as m:
        paths = {l.split()[-1] for l in m if "/" in l}
    libs = sorted(p for p in paths if os.path.basename(p).startswith("libhdf5")
                  and "_hl" not in os.path.basename(p))
    assert len(libs) == 1, libs
    return libs[0]


def test_second_libhdf5_gets_its_own_filter(wheel_python):
    """Debian's libhdf5 (RTLD_LOCAL) loads the plugin file first; the wheel's
    libhdf5 then gets the filter too, from its own slot (a class calling it
    alone; the plugin used to tell it the filter was unavailable). Reading and
    writing under several copies: test_several_libhdf5.py."""
    info = _worker(wheel_python, "limit", _debian_libhdf5(), lib.FILTER_ID)
    assert info["other_avail"] > 0, info
    assert info["avail"] is True, info
