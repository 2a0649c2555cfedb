"""A new h5py process that has not imported h5fz writes into an EXISTING h5fz
dataset with HDF5_PLUGIN_PATH alone, as hdf5plugin's users expect (issue 30).

HDF5 checks a mandatory filter before a write into, or an extend of, an
existing dataset without loading plugins (H5D__check_filters, under h5py's
fill time "alloc"), so before the start-up hook every such write failed with
"required filter 32770 is not registered" while reads worked. pip installs
h5fz-autoload.pth, which loads the plugin right after `import h5py`
(python/autoload/_h5fz_autoload.py.in); here the build tree's copy is read
with site.addsitedir(<build>/python), as site-packages is at start-up.
"""
import os
import pathlib
import subprocess
import sys

import h5py
import numpy as np
import pytest

import h5fz_testlib as lib

BUILD = pathlib.Path(os.environ["H5FZ_BUILD_DIR"])
SITE = BUILD / "python"
PLUGIN = BUILD / "plugin"
BOUND = 1e-3

# the child: the .pth of SITE read as at start-up (when asked), then a user's
# h5py code that never mentions h5fz
CHILD = """
import site, sys
if sys.argv[3] == "hook":
    site.addsitedir(sys.argv[4])
    assert "h5py" not in sys.modules  # the hook imports nothing itself
import h5py, numpy as np
mode, path = sys.argv[1], sys.argv[2]
with h5py.File(path, "r+") as f:
    if mode == "read":
        print("sum", float(f["x"][...].sum()))
    elif mode == "overwrite":
        f["x"][0:2] = np.cos(np.arange(128) / 7.0).reshape(2, 64)
    elif mode == "newchunks":
        f["full"][4:6] = np.cos(np.arange(128) / 5.0).reshape(2, 64)
    elif mode == "extend":
        d = f["x"]
        d.resize((d.shape[0] + 2, 64))
        d[-2:] = np.cos(np.arange(128) / 3.0).reshape(2, 64)
print("done", mode)
"""


def _expected(mode):
    """(dataset, slice, values) the child's mode writes."""
    return {"overwrite": ("x", slice(0, 2), np.cos(np.arange(128) / 7.0).reshape(2, 64)),
            "newchunks": ("full", slice(4, 6), np.cos(np.arange(128) / 5.0).reshape(2, 64)),
            "extend": ("x", slice(4, 6), np.cos(np.arange(128) / 3.0).reshape(2, 64))}[mode]


def _make(path):
    cd, _ = lib.cd_values("abs=1e-3")
    with h5py.File(path, "w") as f:
        f.create_dataset("x", data=np.sin(np.arange(256) / 9.0).reshape(4, 64).astype("f4"), maxshape=(None, 64),
                         chunks=(2, 64), compression=lib.FILTER_ID, compression_opts=tuple(cd))
        f.create_dataset("full", shape=(8, 64), dtype="f4", chunks=(2, 64), compression=lib.FILTER_ID,
                         compression_opts=tuple(cd))
        f["full"][0:2] = 1.0


def _child(mode, path, hook, plugin_path):
    env = {k: v for k, v in os.environ.items() if k not in ("HDF5_PLUGIN_PATH", "PYTHONPATH")}
    if plugin_path:
        env["HDF5_PLUGIN_PATH"] = plugin_path
    return subprocess.run([sys.executable, "-c", CHILD, mode, str(path), "hook" if hook else "plain", str(SITE)],
                          capture_output=True, text=True, env=env, timeout=120)


def _all_chunks_filtered(path):
    with h5py.File(path, "r") as f:
        for name in ("x", "full"):
            d = f[name]
            for i in range(d.id.get_num_chunks()):
                info = d.id.get_chunk_info(i)
                assert info.filter_mask == 0, "%s chunk %s stored unfiltered" % (name, info.chunk_offset)
                assert info.size < 2 * 64 * 4, "%s chunk %s: %d bytes" % (name, info.chunk_offset, info.size)


def test_the_hook_files_are_in_the_build_tree():
    assert (SITE / "h5fz-autoload.pth").read_text().strip() == "import _h5fz_autoload"
    assert "FILTER_ID = %d" % lib.FILTER_ID in (SITE / "_h5fz_autoload.py").read_text()


@pytest.mark.parametrize("mode", ["overwrite", "newchunks", "extend"])
def test_plugin_path_alone_writes_into_an_existing_dataset(tmp_path, mode):
    path = tmp_path / "a.h5"
    _make(path)
    p = _child(mode, path, hook=True, plugin_path=str(PLUGIN))
    assert p.returncode == 0 and "done " + mode in p.stdout, p.stdout + p.stderr
    name, rows, want = _expected(mode)
    with h5py.File(path, "r") as f:
        lib.check_bound(want, f[name][rows], BOUND, mode)
    _all_chunks_filtered(path)


def test_reading_needs_no_hook(tmp_path):
    path = tmp_path / "a.h5"
    _make(path)
    p = _child("read", path, hook=False, plugin_path=str(PLUGIN))
    assert p.returncode == 0 and "sum" in p.stdout, p.stdout + p.stderr


@pytest.mark.parametrize("hook,plugin_path", [(False, True), (True, False)])
def test_without_hook_or_path_hdf5_refuses_and_stores_nothing_raw(tmp_path, hook, plugin_path):
    """Without the hook (h5fz not pip-installed: the fix is one call,
    h5py.h5z.filter_avail(32770), or `import h5fz`) or without the path,
    HDF5 refuses the write with its own message and nothing is stored."""
    path = tmp_path / "a.h5"
    _make(path)
    p = _child("extend", path, hook=hook, plugin_path=str(PLUGIN) if plugin_path else None)
    assert p.returncode != 0 and "required filter %d is not registered" % lib.FILTER_ID in p.stderr, \
        p.stdout + p.stderr
    with h5py.File(path, "r") as f:
        assert f["x"].shape == (4, 64)
    _all_chunks_filtered(path)


def test_the_hook_ignores_a_path_without_the_plugin(tmp_path):
    """A path that holds no libh5fz.so arms nothing: h5py imports as ever."""
    code = ("import site, sys; site.addsitedir(sys.argv[1]); "
            "print(any(type(f).__name__ == '_AfterH5py' for f in sys.meta_path)); import h5py; print('ok')")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["HDF5_PLUGIN_PATH"] = str(tmp_path)
    p = subprocess.run([sys.executable, "-c", code, str(SITE)], capture_output=True, text=True, env=env)
    assert p.returncode == 0 and p.stdout.split() == ["False", "ok"], p.stdout + p.stderr
