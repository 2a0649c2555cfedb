"""Shared set-up of the end-to-end tests.

HDF5 reads HDF5_PLUGIN_PATH once, when h5py loads libhdf5, so this file sets
it (and the other paths) before any test module imports h5py. CTest passes
them all; the defaults let `pytest tests/python` work after a build in
./build.
"""
import json
import os
import pathlib

REPO = pathlib.Path(__file__).resolve().parents[2]
_BUILD = pathlib.Path(os.environ.get("H5FZ_BUILD_DIR", REPO / "build"))
os.environ.setdefault("H5FZ_BUILD_DIR", str(_BUILD))
os.environ.setdefault("HDF5_PLUGIN_PATH", str(_BUILD / "plugin"))
os.environ.setdefault("H5FZ_BIN", str(_BUILD / "bin" / "h5fz"))
os.environ.setdefault("H5FZ_DATA_DIR", str(REPO.parent / "shared" / "data"))
os.environ.setdefault("H5FZ_FILTER_ID", "32770")

import h5fz_testlib  # noqa: E402  (needs the environment above)


def pytest_terminal_summary(terminalreporter):
    """Print the ratios the real-data tests observed, one line per case, and
    keep them as JSON in the build folder for reports."""
    rows = h5fz_testlib.OBSERVED
    if not rows:
        return
    terminalreporter.write_sep("-", "observed compression (h5repack through the plugin)")
    for r in sorted(rows, key=lambda r: (r["field"], -r["rel_bound"])):
        terminalreporter.write_line(
            "%-52s rel %-6g abs %-12.6g ratio %8.3f  max_err/bound %.3f"
            % (r["field"], r["rel_bound"], r["bound"], r["ratio"], r["err_over_bound"]))
    out = pathlib.Path(os.environ["H5FZ_BUILD_DIR"]) / "observed_ratios.json"
    try:
        out.write_text(json.dumps(rows, indent=1))
    except OSError:
        pass
