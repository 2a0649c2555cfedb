"""Shared pieces of the numcodecs / Zarr / Dask / kerchunk tests
(test_zarr_codec.py, test_dask_zarr.py, test_kerchunk.py): the h5fz
package of the build (<build>/python, as CMake lays it out), the bound of
each mode checked on every element, and the HDF5 filter's chunks to compare
the codecs' bytes with.

Those tests need zarr 3, numcodecs, dask[distributed], kerchunk and xarray
from PyPI (pins: tests/python/codec_requirements.txt; .ci/run installs them
in a venv) and skip, naming what is missing, without them.

    python3 -m venv build/codec-venv
    build/codec-venv/bin/pip install -r tests/python/codec_requirements.txt
    cd tests/python && ../../build/codec-venv/bin/python -m pytest -q test_zarr_codec.py test_dask_zarr.py test_kerchunk.py test_codec_docs.py
"""
import importlib.util
import itertools
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import h5fz_testlib as lib

PACKAGE_DIR = pathlib.Path(os.environ["H5FZ_BUILD_DIR"]) / "python"
if str(PACKAGE_DIR) not in sys.path:
    sys.path.insert(0, str(PACKAGE_DIR))


def missing(*modules):
    """None when every module can be imported and the build has the Python
    package; else the reason to skip, naming what is missing and how to
    install it. With H5FZ_REQUIRE_CODECS=1 (.ci/run, where they are
    installed) a missing module fails the run instead, so that CI cannot
    pass by skipping. Test modules skip each test with it
    (pytestmark = pytest.mark.skipif), not the module: a module skipped
    whole makes pytest exit 5, which CTest reads as a failure."""
    absent = [m for m in modules if importlib.util.find_spec(m) is None]
    if absent and os.environ.get("H5FZ_REQUIRE_CODECS") == "1":
        raise RuntimeError("H5FZ_REQUIRE_CODECS=1 but %s cannot be imported" % ", ".join(absent))
    if absent:
        return ("needs %s (pip install -r tests/python/codec_requirements.txt; .ci/run does it in a venv)"
                % ", ".join(absent))
    if not (PACKAGE_DIR / "h5fz" / "libh5fz_py.so").is_file():
        return ("the build has no Python package in %s (cmake --build build --target h5fz_py h5fz_py_files)"
                % PACKAGE_DIR)
    return None


def chunk_slices(shape, chunks):
    """(chunk offset, slices of the array inside it) of every chunk, row-major."""
    grid = [range(0, n, c) for n, c in zip(shape, chunks)]
    for off in itertools.product(*grid):
        yield off, tuple(slice(o, min(o + c, n)) for o, c, n in zip(off, chunks, shape))


def padded(a, sl, chunks, fill):
    """The chunk at slices sl of a as HDF5 and Zarr hand it to a codec:
    the whole chunk shape, padded with fill past the array's end."""
    block = np.full(chunks, fill, a.dtype)
    block[tuple(slice(0, s.stop - s.start) for s in sl)] = a[sl]
    return block


def check_mode(orig, dec, mode, bound, chunks, fill=0.0, what=""):
    """Every element of dec within the bound of orig: abs= directly, pw_rel=
    per value (|x - x'| <= bound |x|), rel= per chunk (bound x the range of
    the chunk's finite values other than the fill value), lossless bit for
    bit. NaN and Inf positions equal. Returns the largest error / bound."""
    assert orig.shape == dec.shape and orig.dtype == dec.dtype, what
    if mode == "lossless":
        assert orig.tobytes() == dec.tobytes(), "%s: lossless is not bit-exact" % what
        return 0.0
    if mode == "abs":
        return lib.check_bound(orig, dec, bound, what) / bound
    if mode == "pw_rel":
        lib.check_bound(orig, dec, np.inf, what)  # NaN / Inf positions
        o, d = orig.astype(np.float64), dec.astype(np.float64)
        fin = np.isfinite(o)
        err, allowed = np.abs(o - d)[fin], bound * np.abs(o)[fin]
        assert np.all(err <= allowed), "%s: pw_rel=%g broken on %d elements" % (what, bound, int((err > allowed).sum()))
        return float(np.max(np.divide(err, allowed, out=np.zeros_like(err), where=allowed > 0), initial=0.0))
    assert mode == "rel", mode
    worst = 0.0
    for off, sl in chunk_slices(orig.shape, chunks):
        part = orig[sl].astype(np.float64)
        keep = part[np.isfinite(part) & (part != fill)]
        width = float(keep.max() - keep.min()) if keep.size else 0.0
        if width == 0.0:  # a constant chunk: its values come back exactly
            lib.check_bound(orig[sl], dec[sl], 0.0, "%s chunk %s" % (what, off))
            continue
        worst = max(worst, lib.check_bound(orig[sl], dec[sl], bound * width, "%s chunk %s" % (what, off))
                    / (bound * width))
    return worst


def hdf5_chunks(path, name):
    """{chunk offset: stored bytes} of an HDF5 dataset, read with h5py's
    read_direct_chunk (the filter's containers)."""
    import h5py
    out = {}
    with h5py.File(path, "r") as f:
        d = f[name]
        for off, _ in chunk_slices(d.shape, d.chunks):
            mask, data = d.id.read_direct_chunk(off)
            assert mask == 0, "chunk %s stored without the filter" % (off,)
            out[off] = bytes(data)
    return out


def run_python(code, env=None):
    """code in a new process of this Python (the package dir on its path);
    returns its stdout, failing the test with its stderr if it fails."""
    full_env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(PACKAGE_DIR)] + sys.path[1:]), **(env or {}))
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=full_env, timeout=300)
    assert p.returncode == 0, "the new process failed:\n%s\n%s" % (p.stdout, p.stderr[-4000:])
    return p.stdout


def real_field():
    """The embedded real field (MITgcm temperature, 50 x 100 x 100 float32)."""
    return lib.embedded_field().load()
