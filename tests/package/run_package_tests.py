#!/usr/bin/env python3
"""CTest python_package: install the h5fz Python package as a user does and
run test_h5fz_package.py with it, twice:

  debian  a fresh venv with --system-site-packages (Debian's python3-h5py,
          numpy, pytest, xarray, h5netcdf), then `pip install .`
  pypi    a fresh venv without them: h5py, numpy, pytest, xarray, h5netcdf
          wheels from PyPI (pins below), then `pip install .`

Both `pip install .` share one scikit-build-core build folder under the
build tree, so the second build only relinks; `pip wheel .` then checks the
wheel. HDF5_PLUGIN_PATH is removed from the suite's environment: the
package must register the filter by itself. Exit 77 (CTest: skipped) with a
message when PyPI cannot be reached; any other failure fails the test.

Environment: H5FZ_SOURCE_DIR, H5FZ_BUILD_DIR (CTest sets them), pins
H5FZ_PYPI_H5PY / H5FZ_PYPI_NUMPY, H5FZ_PACKAGE_VENVS=debian,pypi to choose.
"""
import os
import pathlib
import shutil
import subprocess
import sys

SRC = pathlib.Path(os.environ.get("H5FZ_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
BUILD = pathlib.Path(os.environ.get("H5FZ_BUILD_DIR", SRC / "build"))
WORK = BUILD / "python-package"
SUITE = pathlib.Path(__file__).resolve().parent / "test_h5fz_package.py"

PYPI_PINS = ["h5py==" + os.environ.get("H5FZ_PYPI_H5PY", "3.16.0"),
             "numpy==" + os.environ.get("H5FZ_PYPI_NUMPY", "2.2.6"),
             "pytest==9.2.0", "xarray==2026.9.0", "pandas==3.1.1", "h5netcdf==1.8.2"]

NETWORK_ERRORS = ("NewConnectionError", "Failed to establish a new connection",
                  "Temporary failure in name resolution", "Name or service not known",
                  "Network is unreachable", "No route to host", "Connection refused",
                  "ConnectTimeoutError", "ReadTimeoutError", "Read timed out", "ProxyError",
                  "Max retries exceeded", "Could not fetch URL", "SSLError")


def run(cmd, **kw):
    print("+ " + " ".join(str(c) for c in cmd), flush=True)
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)


def pip(python, *args):
    """pip in the venv; exit 77 when it failed for want of a network."""
    p = run([python, "-m", "pip", "--disable-pip-version-check", "--no-input", *args], cwd=SRC)
    if p.returncode != 0:
        text = p.stdout + p.stderr
        if any(e in text for e in NETWORK_ERRORS):
            print("SKIP: pip cannot reach PyPI (offline?); the package test needs it for "
                  "scikit-build-core and the h5py wheel:\n" + text[-2000:], flush=True)
            sys.exit(77)
        sys.exit("pip %s failed (exit %d):\n%s" % (" ".join(args), p.returncode, text[-6000:]))
    return p


def make_venv(name, system_site):
    venv = WORK / ("venv-" + name)
    shutil.rmtree(venv, ignore_errors=True)
    cmd = ["/usr/bin/python3", "-m", "venv", venv] + (["--system-site-packages"] if system_site else [])
    p = run(cmd)
    if p.returncode != 0:
        sys.exit("cannot create a venv (Debian: apt-get install python3-venv):\n" + p.stdout + p.stderr)
    return venv / "bin" / "python"


def install(python, name):
    """`pip install .` of the repository into the venv. Debian names its
    h5py distribution h5py._debian_h5py_serial, so pip would add the PyPI
    wheel next to it: --no-deps keeps Debian's (numpy and h5py are there)."""
    # One build folder for every venv: the wheel holds no Python ABI (ctypes).
    extra = ["--no-deps"] if name == "debian" else []
    pip(python, "install", *extra, "--config-settings=build-dir=%s" % (WORK / "skbuild"), ".")
    print("%s: installed h5fz" % name, flush=True)


def run_suite(python, name):
    env = {k: v for k, v in os.environ.items() if k not in ("HDF5_PLUGIN_PATH", "PYTHONPATH")}
    env["H5FZ_PACKAGE_VENV"] = name
    tmp = WORK / ("tmp-" + name)
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    # Run from an empty folder, so `import h5fz` can only find the installed package.
    subprocess.run([str(python), "-c", "import h5fz, json; c = h5fz.get_config(); print(json.dumps("
                    "{k: c[k] for k in ('version', 'h5py_version', 'hdf5_version', 'libhdf5', 'registered', "
                    "'executor')}))"], cwd=tmp, env=env)
    p = subprocess.run([str(python), "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "--basetemp",
                        str(tmp / "pytest"), str(SUITE)], cwd=tmp, env=env)
    return p.returncode


def require_index():
    """Exit 77 when the package index pip would use cannot be reached."""
    import urllib.request
    index = os.environ.get("PIP_INDEX_URL")
    if not index:  # a mirror in pip.conf counts as the index
        p = run(["/usr/bin/python3", "-m", "pip", "config", "get", "global.index-url"])
        index = p.stdout.strip() if p.returncode == 0 and p.stdout.strip() else "https://pypi.org/simple/"
    index = index.rstrip("/")
    url = index + "/scikit-build-core/"
    try:
        with urllib.request.urlopen(url, timeout=20) as r:
            r.read(1)
    except Exception as e:  # noqa: BLE001 - any failure to reach it means offline here
        print("SKIP: the package index cannot be reached (%s: %s: %s); the package test needs it for "
              "scikit-build-core and the h5py wheel" % (url, type(e).__name__, e), flush=True)
        sys.exit(77)


def main():
    require_index()
    WORK.mkdir(parents=True, exist_ok=True)
    chosen = os.environ.get("H5FZ_PACKAGE_VENVS", "debian,pypi").split(",")
    failed = []
    for name in chosen:
        print("=== %s ===" % name, flush=True)
        if name == "debian":
            python = make_venv(name, True)
        elif name == "pypi":
            python = make_venv(name, False)
            pip(python, "install", *PYPI_PINS)
        else:
            sys.exit("unknown venv %r (debian, pypi)" % name)
        install(python, name)
        if run_suite(python, name) != 0:
            failed.append(name)
    # `pip wheel .` gives a wheel holding the library and the plugin.
    wheels = WORK / "wheels"
    shutil.rmtree(wheels, ignore_errors=True)
    pip(sys.executable, "wheel", "--no-deps", "--config-settings=build-dir=%s" % (WORK / "skbuild"),
        "-w", wheels, ".")
    found = sorted(wheels.glob("h5fz-*.whl"))
    if len(found) != 1:
        sys.exit("pip wheel . made %s, not one h5fz wheel" % [w.name for w in wheels.iterdir()])
    import zipfile
    names = zipfile.ZipFile(found[0]).namelist()
    for need in ("h5fz/__init__.py", "h5fz/libh5fz_py.so", "h5fz/plugin/libh5fz.so"):
        if need not in names:
            sys.exit("%s lacks %s (has %s)" % (found[0].name, need, names))
    print("wheel: %s (%d files)" % (found[0].name, len(names)), flush=True)
    if failed:
        sys.exit("the package suite failed under: %s" % ", ".join(failed))
    print("python_package: OK (%s)" % ", ".join(chosen))


if __name__ == "__main__":
    main()
