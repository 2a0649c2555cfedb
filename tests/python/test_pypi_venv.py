"""The PyPI venv helpers the wheel tests share (pypi_venv.py), without
PyPI: a pip that says it cannot reach the index skips the test, and fails
it under CI=true; any other pip failure fails it; a finished venv whose
.ok names the same pins is reused as it is, and one with other pins is
made again (from an interpreter that fails here, so nothing is installed).
The "pip" is a script standing in for a venv's python."""
import os

import pytest

import pypi_venv as pv


def _python(tmp_path, output, status):
    """A stand-in for a venv's python: prints output, exits with status."""
    py = tmp_path / "bin" / "python"
    py.parent.mkdir(parents=True, exist_ok=True)
    py.write_text("#!/bin/sh\necho '%s' >&2\nexit %d\n" % (output, status))
    py.chmod(0o755)
    return py


OFFLINE = "WARNING: Retrying ... NewConnectionError('Failed to establish a new connection')"


def test_offline_pip_skips(tmp_path, monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="PyPI cannot be reached"):
        pv.pip(_python(tmp_path, OFFLINE, 1), "install", "h5py==3.16.0")


def test_offline_pip_fails_under_ci(tmp_path, monkeypatch):
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI=true, but PyPI cannot be reached"):
        pv.pip(_python(tmp_path, OFFLINE, 1), "install", "h5py==3.16.0")


def test_other_pip_failure_fails(tmp_path, monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.fail.Exception, match="pip install h5py==0 failed"):
        pv.pip(_python(tmp_path, "ERROR: No matching distribution found for h5py==0", 1), "install", "h5py==0")


def test_pinned_venv_reused_while_its_pins_stay(tmp_path, monkeypatch):
    venv = tmp_path / "venv"
    py = _python(venv, "not run", 1)
    (venv / ".ok").write_text("h5py==3.16.0\nnumpy==2.2.6\n")
    assert pv.pinned_venv(venv, ["h5py==3.16.0", "numpy==2.2.6"]) == py
    # other pins: made again, from BASE_PYTHON (here one that fails)
    monkeypatch.setattr(pv, "BASE_PYTHON", str(_python(tmp_path / "base", "no venv module", 1)))
    with pytest.raises(pytest.fail.Exception, match="cannot create a venv"):
        pv.pinned_venv(venv, ["h5py==3.15.1", "numpy==2.2.6"])
    assert not os.path.exists(venv / ".ok")
