"""Appending to an h5fz dataset in a new process (docs/filter.md, "Appending
in a new process"), and device settings that must never cost a row.

Every step runs in a fresh process, as a simulation that writes one time
step per run does: its libhdf5 has not loaded the plugin yet. HDF5 checks a
mandatory filter in H5Dset_extent and in H5Dwrite of new chunks without
loading plugins, so those calls need the filter registered first: the
dataset API (h5fz_dataset_register_filter, and every h5fz_dataset_* call),
`h5py.h5z.filter_avail(id)` or `H5Zfilter_avail(id)`. Without it HDF5
refuses the call loudly; in no case is a chunk stored without the filter.

A device setting the process cannot honour (H5FZ_DEVICE=gpu without a GPU,
or a mistyped value) sends the chunks to the CPU executor with one warning:
set_local does not run for an existing dataset, so the chunks are first
filtered when HDF5 flushes its chunk cache at close, where an error would
lose them.
"""
import os
import pathlib
import shutil
import subprocess
import sys

import h5py
import numpy as np
import pytest

import h5fz_testlib as lib

STEP = pathlib.Path(os.environ["H5FZ_BUILD_DIR"]) / "bin" / "append_step"
BOUND = 1e-3
COLS = 64


def _step(*args, env=None):
    return subprocess.run([str(STEP), *map(str, args)], capture_output=True, text=True,
                          env={**os.environ, **(env or {})})


def _check(path, newchunks_done=False):
    p = _step("check", path, *(["newchunks-done"] if newchunks_done else []))
    assert p.returncode == 0, p.stdout + p.stderr
    return p.stdout


@pytest.mark.parametrize("step", ["extend", "newchunks", "shrink", "swmr"])
def test_c_step_after_register_call(tmp_path, step):
    path = tmp_path / "sim.h5"
    assert _step("create", path).returncode == 0
    p = _step(step, path, "reg")
    assert p.returncode == 0, p.stderr
    out = _check(path, step == "newchunks")
    assert "all filtered" in out


@pytest.mark.parametrize("step", ["extend", "newchunks", "shrink", "swmr"])
def test_c_step_without_register_call_fails_loudly(tmp_path, step):
    """HDF5 (1.10 here; 2.0 too) refuses before writing anything: the file
    keeps its earlier steps, every stored chunk filtered."""
    path = tmp_path / "sim.h5"
    assert _step("create", path).returncode == 0
    p = _step(step, path)
    if p.returncode == 0:  # a libhdf5 that loads the plugin itself there
        _check(path, step == "newchunks")
        return
    assert "required filter %d is not registered" % lib.FILTER_ID in p.stderr, p.stderr
    _check(path)


def _no_plugin_env(tmp_path):
    """A plugin path with no plugin in it: HDF5 finds no libh5fz.so."""
    empty = tmp_path / "no-plugins"
    empty.mkdir(exist_ok=True)
    return {"HDF5_PLUGIN_PATH": str(empty)}


def test_c_without_plugin_nor_library_mode_fails(tmp_path):
    """The control of the library-mode tests: with no plugin to load, the
    create itself fails (so they really run without the plugin)."""
    p = _step("create", tmp_path / "sim.h5", env=_no_plugin_env(tmp_path))
    assert p.returncode != 0
    assert "filter" in p.stderr


@pytest.mark.parametrize("step", ["extend", "newchunks", "shrink", "swmr"])
def test_c_library_mode_without_plugin(tmp_path, step):
    """h5fz_register_filter (the library mode): create through
    h5fz_set_filter, then append in a fresh process, each with no plugin
    on the plugin path; the plugin reads the file back (same format), and
    a library-mode process does too."""
    path = tmp_path / "sim.h5"
    env = _no_plugin_env(tmp_path)
    p = _step("create", path, "lib", env=env)
    assert p.returncode == 0, p.stderr
    p = _step(step, path, "lib", env=env)
    assert p.returncode == 0, p.stderr
    assert "all filtered" in _check(path, step == "newchunks")
    p = _step("check", path, *(["newchunks-done"] if step == "newchunks" else []), "lib", env=env)
    assert p.returncode == 0, p.stdout + p.stderr


def test_c_library_mode_chunks_are_the_plugins(tmp_path):
    """The library mode runs the plugin's own code: the chunks it stores
    are byte for byte those the plugin stores for the same writes."""
    lib_path, plugin_path = tmp_path / "lib.h5", tmp_path / "plugin.h5"
    assert _step("create", lib_path, "lib", env=_no_plugin_env(tmp_path)).returncode == 0
    assert _step("create", plugin_path).returncode == 0
    for path, extra, env in ((lib_path, "lib", _no_plugin_env(tmp_path)), (plugin_path, "reg", None)):
        p = _step("extend", path, extra, env=env)
        assert p.returncode == 0, p.stderr
    with h5py.File(lib_path, "r") as a, h5py.File(plugin_path, "r") as b:
        for name in ("x", "full"):
            da, db = a[name].id, b[name].id
            assert da.get_num_chunks() == db.get_num_chunks() > 0
            for k in range(da.get_num_chunks()):
                off = da.get_chunk_info(k).chunk_offset
                assert da.read_direct_chunk(off) == db.read_direct_chunk(off), (name, off)
            # the same pipeline: h5fz alone, mandatory, the same words (set_local's too)
            fa, fb = da.get_create_plist().get_filter(0), db.get_create_plist().get_filter(0)
            assert fa[0] == lib.FILTER_ID and fa[:3] == fb[:3], (fa, fb)
            assert da.get_create_plist().get_nfilters() == 1


# --- h5py ------------------------------------------------------------------------------

_H5PY_STEP = r"""
import sys, h5py, numpy as np
path, step, register = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
COLS = %d
def rows(first, n):
    r = np.arange(first, first + n)[:, None] * COLS + np.arange(COLS)[None, :]
    return (10.0 * np.sin(0.05 * r) + 0.01 * (r // COLS)).astype("f4")
if register:
    assert h5py.h5z.filter_avail(%d)
try:
    with h5py.File(path, "r+", libver="latest") as f:
        if step == "swmr":
            f.swmr_mode = True
        d = f["x"]
        n = d.shape[0]
        if step in ("extend", "swmr"):
            d.resize((n + 2, COLS))
            d[n:n + 2] = rows(n, 2)
            if step == "swmr":
                d.flush()
        elif step == "newchunks":
            f["full"][4:8] = rows(4, 4)
        elif step == "shrink":
            d.resize((2, COLS))
            d.resize((6, COLS))
            d[2:6] = rows(2, 4)
    print("done")
except (OSError, RuntimeError) as e:
    print("refused:", e)
""" % (COLS, lib.FILTER_ID)


def _rows(first, n):
    r = np.arange(first, first + n)[:, None] * COLS + np.arange(COLS)[None, :]
    return (10.0 * np.sin(0.05 * r) + 0.01 * (r // COLS)).astype("f4")


def _create_h5py(path):
    cd, _ = lib.cd_values("abs=%g" % BOUND)
    with h5py.File(path, "w", libver="latest") as f:
        f.create_dataset("x", data=_rows(0, 4), maxshape=(None, COLS), chunks=(2, COLS),
                         compression=lib.FILTER_ID, compression_opts=tuple(cd))
        full = f.create_dataset("full", shape=(8, COLS), dtype="f4", chunks=(2, COLS),
                                compression=lib.FILTER_ID, compression_opts=tuple(cd))
        full[0:2] = _rows(0, 2)


def _all_chunks_filtered(dset):
    for k in range(dset.id.get_num_chunks()):
        info = dset.id.get_chunk_info(k)
        assert info.filter_mask == 0, "chunk at %s stored without the filter" % (info.chunk_offset,)


def _check_h5py(path, newchunks_done=False, x_rows_written=None):
    """x_rows_written: rows of /x written (the rest must read as the fill
    value, 0), None for all: HDF5 2.0 lets resize grow a dataset whose
    filter is not loaded, then refuses the write of the new rows."""
    with h5py.File(path, "r") as f:
        x, full = f["x"], f["full"]
        n = x.shape[0] if x_rows_written is None else x_rows_written
        want_x = np.zeros(x.shape, "f4")
        want_x[:n] = _rows(0, n)
        assert np.abs(x[...].astype("f8") - want_x).max() <= BOUND
        want = np.zeros((8, COLS), "f4")
        want[0:2] = _rows(0, 2)
        if newchunks_done:
            want[4:8] = _rows(4, 4)
        assert np.abs(full[...].astype("f8") - want).max() <= BOUND
        _all_chunks_filtered(x)
        _all_chunks_filtered(full)


@pytest.mark.parametrize("step", ["extend", "newchunks", "shrink", "swmr"])
def test_h5py_step_after_filter_avail(tmp_path, step):
    path = tmp_path / "sim.h5"
    _create_h5py(path)
    p = subprocess.run([sys.executable, "-c", _H5PY_STEP, str(path), step, "1"], capture_output=True, text=True)
    assert p.returncode == 0 and "done" in p.stdout, p.stdout + p.stderr
    _check_h5py(path, step == "newchunks")


@pytest.mark.parametrize("step", ["extend", "newchunks"])
def test_h5py_step_without_filter_avail_fails_loudly(tmp_path, step):
    path = tmp_path / "sim.h5"
    _create_h5py(path)
    p = subprocess.run([sys.executable, "-c", _H5PY_STEP, str(path), step, "0"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    if "refused:" in p.stdout:
        assert "required filter %d is not registered" % lib.FILTER_ID in p.stdout, p.stdout
        _check_h5py(path, x_rows_written=4)
    else:
        _check_h5py(path, step == "newchunks")


@pytest.mark.skipif(shutil.which("h5repack") is None, reason="h5repack (Debian: hdf5-tools) not found")
def test_h5repack_written_file_appended_from_h5py(tmp_path):
    """A file compressed by h5repack (UD=, HDF5's own copy of the dcpl) takes
    appended rows in a new process like one h5py wrote."""
    src, out = tmp_path / "src.h5", tmp_path / "out.h5"
    with h5py.File(src, "w") as f:
        f.create_dataset("x", data=_rows(0, 4), maxshape=(None, COLS), chunks=(2, COLS))
        f.create_dataset("full", data=np.zeros((8, COLS), "f4"), chunks=(2, COLS))
        f["full"][0:2] = _rows(0, 2)
    ud = lib.cli("cd-values", "--ud", "abs=%g" % BOUND).stdout.strip()
    subprocess.run(["h5repack", "-f", ud, str(src), str(out)], check=True)
    p = subprocess.run([sys.executable, "-c", _H5PY_STEP, str(out), "extend", "1"], capture_output=True, text=True)
    assert p.returncode == 0 and "done" in p.stdout, p.stdout + p.stderr
    _check_h5py(out)


# --- device settings at encode ------------------------------------------------------------

_DEVICE_APPEND = r"""
import sys, h5py, numpy as np
path, variant = sys.argv[1], sys.argv[2]
COLS = %d
def rows(first, n):
    r = np.arange(first, first + n)[:, None] * COLS + np.arange(COLS)[None, :]
    return (10.0 * np.sin(0.05 * r) + 0.01 * (r // COLS)).astype("f4")
h5py.h5z.filter_avail(%d)
kw = {"rdcc_nbytes": 0} if variant == "cache0" else {}
if variant == "temporaries":
    f = h5py.File(path, "r+", **kw)
    f["x"].resize((6, COLS))
    f["x"][4:6] = rows(4, 2)
    f.close()
else:
    with h5py.File(path, "r+", **kw) as f:
        d = f["x"]
        d.resize((6, COLS))
        d[4:6] = rows(4, 2)
print("closed")
""" % (COLS, lib.FILTER_ID)


@pytest.mark.parametrize("variant", ["held", "temporaries", "cache0"])
@pytest.mark.parametrize("device", ["gpu", "banana"])
def test_device_setting_never_loses_appended_rows(tmp_path, device, variant):
    """The rows reach the file filtered and within the bound, the process
    exits 0, and (without a GPU, or for the mistyped value) it says once on
    stderr that the CPU executor took the chunks."""
    path = tmp_path / "sim.h5"
    _create_h5py(path)
    p = subprocess.run([sys.executable, "-c", _DEVICE_APPEND, str(path), variant], capture_output=True,
                       text=True, env={**os.environ, "H5FZ_DEVICE": device})
    assert p.returncode == 0 and "closed" in p.stdout, p.stdout + p.stderr
    assert "Exception ignored" not in p.stderr, p.stderr
    if device == "banana":
        assert p.stderr.count("the CPU executor takes the chunks") == 1, p.stderr
    with h5py.File(path, "r") as f:
        assert f["x"].shape == (6, COLS)
    _check_h5py(path)


def test_device_setting_in_c_step(tmp_path):
    path = tmp_path / "sim.h5"
    assert _step("create", path).returncode == 0
    for device in ("gpu", "banana"):
        p = _step("extend", path, "reg", env={"H5FZ_DEVICE": device})
        assert p.returncode == 0, p.stderr
    out = _check(path)
    assert "x: 8 rows" in out
