"""Venvs of pinned PyPI wheels for the tests that need PyPI
(test_several_libhdf5.py, test_pypi_h5py.py, test_manylinux_wheel.py,
test_ported_suites.py): the commands, pip with one set of flags, what pip
says when PyPI cannot be reached, and a venv made once under the build
folder and reused while its pins stay the same.

PyPI out of reach skips the test with pip's last line; under CI (CI=true,
.ci/run, which has PyPI) it fails instead, since a skip there would pass
without testing anything. Any other pip failure fails the test.
"""
import os
import shutil
import subprocess

import pytest

# What pip prints when it cannot reach the index at all.
NETWORK_ERRORS = (
    "NewConnectionError", "Failed to establish a new connection",
    "Temporary failure in name resolution", "Name or service not known",
    "Network is unreachable", "No route to host", "Connection refused",
    "ConnectTimeoutError", "ReadTimeoutError", "Read timed out", "ProxyError",
    "Max retries exceeded", "Could not fetch URL", "ConnectionResetError",
    "SSLError", "ConnectionError")

# The interpreter the venvs are made from (Debian's, with python3-venv).
BASE_PYTHON = "/usr/bin/python3"


def skip_unless_ci(reason):
    """Skip with the reason; under CI (CI=true) fail instead."""
    if os.environ.get("CI") == "true":
        pytest.fail("CI=true, but " + reason)
    pytest.skip(reason)


def run(cmd, env=None, cwd=None, timeout=900):
    """Run cmd (its words str()-ed), printed first; the CompletedProcess
    with text stdout and stderr."""
    print("+ " + " ".join(str(c) for c in cmd), flush=True)
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, env=env, cwd=cwd,
                          timeout=timeout)


def pip(python, *args, cwd=None):
    """`python -m pip ARGS` with the tests' flags (no version check, no
    prompts, 30 s timeout, 2 retries); skip_unless_ci when PyPI cannot be
    reached, fail on any other failure."""
    p = run([python, "-m", "pip", "--disable-pip-version-check", "--no-input", "--timeout", "30",
             "--retries", "2", *args], cwd=cwd)
    if p.returncode != 0:
        text = p.stdout + p.stderr
        if any(e in text for e in NETWORK_ERRORS):
            last = text.strip().splitlines()[-1][:300] if text.strip() else ""
            skip_unless_ci("PyPI cannot be reached (pip %s: %s)" % (args[0] if args else "", last))
        pytest.fail("pip %s failed (%d):\n%s" % (" ".join(str(a) for a in args), p.returncode, text[-6000:]))
    return p


def fresh_venv(path):
    """A new venv at path (anything there before is removed), made from
    BASE_PYTHON; returns its python."""
    shutil.rmtree(path, ignore_errors=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    p = run([BASE_PYTHON, "-m", "venv", path])
    if p.returncode != 0:
        pytest.fail("cannot create a venv with %s -m venv (Debian: apt-get install python3-venv):\n%s%s"
                    % (BASE_PYTHON, p.stdout, p.stderr))
    return path / "bin" / "python"


def pinned_venv(path, pins):
    """The python of a venv at path holding pins (PyPI wheels only), made
    once: a finished venv has a .ok file naming its pins, and is made again
    when they change."""
    py, ok = path / "bin" / "python", path / ".ok"
    want = "\n".join(pins) + "\n"
    if ok.is_file() and ok.read_text() == want and py.exists():
        return py
    py = fresh_venv(path)
    pip(py, "install", "--only-binary=:all:", *pins)
    ok.write_text(want)
    return py
