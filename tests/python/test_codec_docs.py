"""The recipes of docs/python.md, "Zarr, Dask and kerchunk", run as written:
the blocks marked `<!-- tested by tests/python/test_codec_docs.py: NAME -->`
are copied out and run as scripts by this Python, in a folder holding the
repository's tests/ (for the embedded field), with the build's package on
PYTHONPATH; then what they wrote or read is checked on every element
against the bound the recipe asks for. Skipped without zarr 3, numcodecs,
dask[distributed], kerchunk and xarray."""
import re

import numpy as np
import pytest

import codec_testlib as ct
import h5fz_testlib as lib

MISSING = ct.missing("numcodecs", "zarr", "dask", "distributed", "kerchunk", "xarray")
pytestmark = pytest.mark.skipif(MISSING is not None, reason=str(MISSING))
if MISSING is None:
    import zarr
    import h5fz  # noqa: F401  (registers the codecs for the checks below)


DOC = lib.REPO / "docs" / "python.md"
CHUNKS = (10, 100, 100)


def _block(name):
    m = re.search(r"<!-- tested by tests/python/test_codec_docs\.py: %s -->\n```python\n(.*?)```" % re.escape(name),
                  DOC.read_text(), re.S)
    assert m, "docs/python.md has no block marked %r" % name
    return m.group(1)


def _run(tmp_path, name, result):
    """Run block name in tmp_path; save the block's variable result (under
    the main guard: the dask recipe's workers import the script too)."""
    (tmp_path / "tests").symlink_to(lib.REPO / "tests")
    script = tmp_path / ("recipe_%s.py" % name)  # not zarr.py: it would shadow zarr
    script.write_text(_block(name) + "\nif __name__ == '__main__':\n    np.save('result.npy', %s)\n" % result)
    ct.run_python("import runpy, os; os.chdir(%r); runpy.run_path(%r, run_name='__main__')"
                  % (str(tmp_path), str(script)))
    return np.load(tmp_path / "result.npy")


@pytest.fixture
def field():
    return ct.real_field()


def test_zarr_recipe(tmp_path, field):
    back = _run(tmp_path, "zarr", "back")
    ct.check_mode(field, back, "abs", 1e-3, CHUNKS, what="theta.zarr")
    v2 = zarr.open_array(tmp_path / "theta-v2.zarr", mode="r")
    assert v2.metadata.zarr_format == 2
    ct.check_mode(field, v2[:], "rel", 1e-4, CHUNKS, what="theta-v2.zarr")


def test_dask_recipe(tmp_path, field):
    back = _run(tmp_path, "dask", "back")
    ct.check_mode(field, back, "rel", 1e-4, CHUNKS, what="theta-dask.zarr")
    assert np.array_equal(zarr.open_array(tmp_path / "theta-dask.zarr", mode="r")[:], back)


def test_kerchunk_recipe(tmp_path, field):
    import h5py
    theta = _run(tmp_path, "kerchunk", "theta")
    with h5py.File(tmp_path / "theta.h5", "r") as f:
        assert theta.tobytes() == f["theta"][:].tobytes(), "not h5py's read through the filter"
    ct.check_mode(field, theta, "rel", 1e-4, CHUNKS, what="theta via kerchunk")
