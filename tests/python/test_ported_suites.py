"""Other projects' own test suites against h5fz (docs/python.md, "Ported
suites"), fetched at test time from PyPI, nothing of theirs committed:

- hdf5plugin 7.1's SZ/SZ3 tests (src/hdf5plugin/test.py of its sdist: the
  read-write tests, the from_filter_options and get_config round trips)
  with tests/python/ported/hdf5plugin_shim standing in for hdf5plugin, its
  SZ and SZ3 being h5fz.Filter;
- h5py 3.16's dataset and direct-chunk tests (h5py/tests/test_dataset.py,
  test_h5d_direct_chunk.py of its sdist) run against the h5py 3.16 wheel
  with tests/python/ported/h5fz_inject.py, which creates every chunked
  float dataset they make through h5fz (lossless).

A venv under the build folder holds the PyPI wheels of h5py, numpy and
pytest (pins below); the sdists are downloaded with pip into the test's
temporary folder. h5fz comes from the CMake build (<build>/python) and
registers itself (no HDF5_PLUGIN_PATH). Skipped when PyPI cannot be
reached (under CI=true that fails too: pypi_venv.py); any other failure
fails."""
import os
import pathlib
import re
import shutil
import tarfile
import xml.etree.ElementTree as ET

import pytest

import pypi_venv as pv

H5PY_PIN = "3.16.0"
NUMPY_PIN = "2.2.6"
PYTEST_PIN = "9.2.0"
# what pip's metadata step of the two sdists needs (their build-system
# requires), installed once in the venv so that `pip download` needs no
# isolated build environment of its own
# the xarray stack of tests/package/run_package_tests.py, for
# test_python_conventions.py under the wheel (xarray names a plugin filter
# "unknown" only with h5py >= 3.x's Dataset.compression)
XARRAY_PINS = ["xarray==2026.9.0", "pandas==3.1.1", "h5netcdf==1.8.2"]
SDIST_BUILD_PINS = ["py-cpuinfo==9.0.0", "setuptools==80.9.0", "Cython==3.1.2", "packaging==25.0",
                    "pkgconfig==1.5.5"]
HDF5PLUGIN_SPEC = "hdf5plugin==7.1.*"
H5PY_SDIST_SPEC = "h5py==3.16.*"

HERE = pathlib.Path(__file__).resolve().parent
PORTED = HERE / "ported"
BUILD = pathlib.Path(os.environ["H5FZ_BUILD_DIR"])
PKG = BUILD / "python"
VENV = BUILD / "ported-venv" / ("h5py-%s-numpy-%s" % (H5PY_PIN, NUMPY_PIN))
SDISTS = BUILD / "ported-sdists"  # downloaded by the first run, kept for the next

# hdf5plugin's tests that concern SZ/SZ3 (pytest -k) and the ones that must pass
HDF5PLUGIN_SELECTION = "TestHDF5PluginRW and SZ or TestFromFilterOptionsRoundtrip and SZ or TestFilterGetConfig"
HDF5PLUGIN_MUST_PASS = {"TestHDF5PluginRW.testSZ", "TestHDF5PluginRW.testSZ3",
                        "TestFromFilterOptionsRoundtrip.testSZ", "TestFromFilterOptionsRoundtrip.testSZ3",
                        "TestFilterGetConfig.testGetConfigRoundtrip"}


@pytest.fixture(scope="module")
def venv_python():
    if not (PKG / "h5fz" / "libh5fz_py.so").is_file():
        pytest.skip("the build has no Python package (%s; H5FZ_PYTHON_PACKAGE=OFF?)" % PKG)
    pins = ["h5py==%s" % H5PY_PIN, "numpy==%s" % NUMPY_PIN, "pytest==%s" % PYTEST_PIN] + XARRAY_PINS + \
        SDIST_BUILD_PINS
    return pv.pinned_venv(VENV, pins)


def _sdist(py, spec, name):
    """The sdist of spec, downloaded by pip into SDISTS unless it is there
    already; returns its path."""
    dest = SDISTS / spec.replace("*", "x").replace("=", "")
    found = sorted(dest.glob("%s-*.tar.gz" % name))
    if not found:
        tmp = dest.with_name(dest.name + ".part")
        shutil.rmtree(tmp, ignore_errors=True)
        pv.pip(py, "download", "--no-deps", "--no-build-isolation", "--no-binary", name, spec, "-d", tmp)
        shutil.rmtree(dest, ignore_errors=True)
        tmp.rename(dest)
        found = sorted(dest.glob("%s-*.tar.gz" % name))
    assert len(found) == 1, "expected one %s sdist in %s: %s" % (name, dest, found)
    return found[0]


def _members(sdist, inside):
    """The files of the sdist under <top>/<inside>, as (relative path, TarInfo)."""
    with tarfile.open(sdist) as tar:
        for m in tar.getmembers():
            top, _, rest = m.name.partition("/")
            if m.isfile() and rest.startswith(inside):
                yield rest[len(inside):], m


def _read(sdist, member):
    """The bytes of <top>/member in the sdist."""
    for rel, m in _members(sdist, member):
        if rel == "":
            with tarfile.open(sdist) as tar:
                return tar.extractfile(m).read()
    raise AssertionError("%s is not in %s" % (member, sdist))


def _extract(sdist, inside, dest):
    dest.mkdir(parents=True, exist_ok=True)
    n = 0
    with tarfile.open(sdist) as tar:
        for rel, m in list(_members(sdist, inside)):
            out = dest / rel
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(tar.extractfile(m).read())
            n += 1
    assert n, "nothing under %s in %s" % (inside, sdist)


def _env(*paths):
    env = {k: v for k, v in os.environ.items() if k not in ("HDF5_PLUGIN_PATH", "PYTHONPATH")}
    env["PYTHONPATH"] = os.pathsep.join(str(p) for p in paths)
    return env


def _junit(path):
    """{Class.test: outcome} from pytest's JUnit XML."""
    out = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        cls = case.get("classname", "").rsplit(".", 1)[-1]
        kinds = [c.tag for c in case if c.tag in ("failure", "error", "skipped")]
        out["%s.%s" % (cls, case.get("name"))] = kinds[0] if kinds else "passed"
    return out


def test_hdf5plugin_sz_sz3_suite(venv_python, tmp_path):
    sdist = _sdist(venv_python, HDF5PLUGIN_SPEC, "hdf5plugin")
    run = tmp_path / "hdf5plugin_suite"
    run.mkdir()
    test_py = run / "hdf5plugin_test.py"  # its src/hdf5plugin/test.py, alone: `import hdf5plugin` is the shim
    test_py.write_bytes(_read(sdist, "src/hdf5plugin/test.py"))
    xml = tmp_path / "hdf5plugin.xml"
    p = pv.run([venv_python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-W", "ignore", "-rA",
                 "-k", HDF5PLUGIN_SELECTION, "--junitxml", xml, test_py], cwd=run,
                env=_env(PORTED / "hdf5plugin_shim", PKG))
    print(p.stdout[-3000:])
    assert p.returncode == 0, "hdf5plugin's SZ/SZ3 tests failed against h5fz:\n%s%s" % (p.stdout[-6000:], p.stderr)
    results = _junit(xml)
    missing = {t: results.get(t, "not run") for t in HDF5PLUGIN_MUST_PASS if results.get(t) != "passed"}
    assert not missing, "hdf5plugin tests that did not pass: %s\n%s" % (missing, p.stdout[-3000:])


def test_h5py_dataset_and_direct_chunk_suites(venv_python, tmp_path):
    sdist = _sdist(venv_python, H5PY_SDIST_SPEC, "h5py")
    # the sdist's tests replace the wheel's copy (same release): they import h5py's modules relatively
    site = pathlib.Path(pv.run([venv_python, "-c", "import h5py, os; print(os.path.dirname(h5py.__file__))"],
                                env=_env()).stdout.strip())
    shutil.rmtree(site / "tests", ignore_errors=True)
    _extract(sdist, "h5py/tests/", site / "tests")
    xml = tmp_path / "h5py.xml"
    p = pv.run([venv_python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-W", "ignore", "-rfEx",
                 "-p", "h5fz_inject", "--junitxml", xml, "--pyargs", "h5py.tests.test_dataset",
                 "h5py.tests.test_h5d_direct_chunk"], cwd=tmp_path, env=_env(PORTED, PKG))
    print(p.stdout[-3000:])
    assert p.returncode == 0, "h5py %s's tests failed with h5fz injected:\n%s%s" % (
        H5PY_PIN, p.stdout[-8000:], p.stderr[-2000:])
    results = _junit(xml)
    passed = sum(1 for r in results.values() if r == "passed")
    assert passed >= 200, "only %d of h5py's tests passed: %s" % (passed, p.stdout[-3000:])
    injected = [line for line in p.stdout.splitlines() if line.startswith("h5fz_inject:")]
    assert injected and int(injected[0].split()[1]) > 0, "no dataset went through h5fz: %s" % injected


def test_python_conventions_under_the_wheel(venv_python):
    """tests/python/test_python_conventions.py (Filter's forms, from_dataset,
    get_config, the xarray recipes) with the h5py 3.16 wheel and PyPI's
    xarray and h5netcdf; the netcdf4-engine tests skip there (no netCDF4
    wheel in the venv; Debian's run covers them)."""
    env = _env(HERE, PKG)
    env.update({k: os.environ[k] for k in ("H5FZ_BIN", "H5FZ_BUILD_DIR", "H5FZ_DATA_DIR", "H5FZ_FILTER_ID")})
    env["HDF5_PLUGIN_PATH"] = os.environ.get("HDF5_PLUGIN_PATH", str(BUILD / "plugin"))  # for nccopy's -F
    p = pv.run([venv_python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs",
                 HERE / "test_python_conventions.py"], cwd=HERE, env=env)
    print(p.stdout[-3000:])
    assert p.returncode == 0, "test_python_conventions.py failed under h5py %s:\n%s%s" % (
        H5PY_PIN, p.stdout[-8000:], p.stderr[-2000:])
    passed = re.search(r"(\d+) passed", p.stdout)
    assert passed and int(passed.group(1)) >= 15, "too few passed under the wheel:\n%s" % p.stdout[-3000:]
