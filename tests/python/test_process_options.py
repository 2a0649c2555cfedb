"""h5fz.set_process_options (docs/python.md, "Options"): options of the whole
process reach what has no call to hand them to, h5py's own writes and reads
through the filter plugin (set_local at create_dataset, the chunks), and
h5fz.write / h5fz.read without options=; a call's own options still win.

The child process starts with H5FZ_DEVICE=gpux and H5FZ_DEVICE_STRICT=1, a
device no machine has under strictness: every h5fz call that reads the
variable fails (set_local refuses it), on a GPU machine too. Under
process options device="cpu" the variable is not read, so the same writes
succeed and come back within the bound; after set_process_options(None)
the environment is back and they fail again.
"""
import json
import os
import pathlib
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import h5fz_testlib as lib

PKG = pathlib.Path(os.environ["H5FZ_BUILD_DIR"]) / "python"
pytestmark = pytest.mark.skipif(not (PKG / "h5fz" / "libh5fz_py.so").is_file(),
                                reason="the build has no Python package (%s; H5FZ_PYTHON_PACKAGE=OFF?)" % PKG)

CHILD = textwrap.dedent("""
    import json, sys
    import h5py, numpy as np
    import h5fz
    a = np.fromfile(sys.argv[1], "<f4").reshape(50, 100, 100)
    out = {}

    def h5py_write(f, name):
        try:
            d = f.create_dataset(name, data=a, chunks=(10, 100, 100), **h5fz.Filter(abs=1e-3))
        except Exception as err:  # set_local's refusal
            return ["failed", str(err)]
        mask, raw = d.id.read_direct_chunk((0, 0, 0))
        return ["ran", float(np.abs(d[...].astype("f8") - a).max()), len(raw)]

    with h5py.File(sys.argv[2], "w") as f:
        out["environment"] = h5py_write(f, "env")
        try:
            h5fz.set_process_options("cpu")
        except TypeError as err:
            out["type_error"] = str(err)
        out["told"] = h5fz.set_process_options(h5fz.Options(device="cpu", quiet=True))
        out["process"] = h5py_write(f, "process")
        e = f.create_dataset("fast", shape=a.shape, dtype="f4", chunks=(10, 100, 100), **h5fz.Filter(abs=1e-3))
        rep = h5fz.write(e, a)  # no options=: the process's
        out["fast"] = [rep["on_gpu"], float(np.abs(h5fz.read(e).astype("f8") - a).max())]
        try:  # a call's own options win over the process's device
            rep = h5fz.write(e, a, options=h5fz.Options(device="gpu", strict=True))
            out["call_options"] = ["ran", rep["on_gpu"]]
        except RuntimeError as err:
            out["call_options"] = ["failed", str(err)]
        out["cleared_told"] = h5fz.set_process_options(None)
        out["cleared"] = h5py_write(f, "cleared")
    print(json.dumps(out))
""")


def test_process_options_reach_h5py_through_the_plugin(tmp_path):
    field = lib.embedded_field()
    env = dict(os.environ, H5FZ_DEVICE="gpux", H5FZ_DEVICE_STRICT="1",
               PYTHONPATH=os.pathsep.join([str(PKG), os.environ.get("PYTHONPATH", "")]))
    env.pop("H5FZ_QUIET", None)
    p = subprocess.run([sys.executable, "-c", CHILD, str(field.path), str(tmp_path / "f.h5")], capture_output=True,
                       text=True, env=env, timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr
    out = json.loads(p.stdout.strip().splitlines()[-1])
    raw_bytes = 10 * 100 * 100 * 4
    # the environment alone: refused, naming the value
    assert out["environment"][0] == "failed" and "gpux" in out["environment"][1], out
    assert "Options" in out["type_error"], out
    assert out["told"] >= 1, out  # the plugin copy h5py's libhdf5 runs
    how, err, stored = out["process"]
    assert how == "ran" and err <= 1e-3 and stored < raw_bytes / 4, out
    assert out["fast"][0] is False and out["fast"][1] <= 1e-3, out
    how, what = out["call_options"]
    # no GPU: the strict GPU fails (the process's cpu did not win); with one: it ran there
    gpu_refused = how == "failed" and ("gpu" in what.lower() or "cuda" in what.lower())
    assert gpu_refused or (how == "ran" and what is True), out
    assert out["cleared_told"] >= 1, out
    assert out["cleared"][0] == "failed" and "gpux" in out["cleared"][1], out
