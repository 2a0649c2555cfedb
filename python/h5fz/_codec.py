"""One chunk at a time through the C library, exactly as the HDF5 filter
codes it: the core shared by the numcodecs codec (h5fz.numcodecs), the Zarr
v3 codec (h5fz.zarr) and the kerchunk index (h5fz.kerchunk). Neither
numcodecs nor zarr is imported here.

The spec comes from h5fz.Filter (the same keywords, the same C parser); the
chunk's shape, type and fill value come from the caller, as set_local takes
them from the dataset, so a chunk coded here is byte for byte the one the
filter stores for a dataset of that chunk shape, type and fill value."""
import ctypes
import math
import numbers
import sys

import numpy as np

from . import _clib
from ._filter import MODES, Filter

_CODES = {4: 1, 8: 2}        # element size -> the C library's dtype code
_ITEMSIZE = {1: 4, 2: 8}
KEYWORDS = tuple(name for name, _ in MODES) + ("chain", "subchunk")  # the mode keywords from the C mode table


def fill_to_json(fill):
    """A fill value as JSON can hold it (NaN and infinities as Zarr writes
    them: "NaN", "Infinity", "-Infinity")."""
    if fill is None:
        return None
    fill = float(fill)
    if math.isnan(fill):
        return "NaN"
    if math.isinf(fill):
        return "Infinity" if fill > 0 else "-Infinity"
    return fill


def fill_from_json(value):
    """The inverse of fill_to_json; None stays None (no fill value)."""
    if value is None:
        return None
    if isinstance(value, str):
        names = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}
        if value not in names:
            raise ValueError("h5fz: fill_value %r: want a number, \"NaN\", \"Infinity\" or \"-Infinity\"" % value)
        return names[value]
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError("h5fz: fill_value takes a number, not %r" % (value,))
    return float(value)


class ChunkCodec:
    """The spec of one codec: spec text or Filter's keywords (abs=, rel=,
    pw_rel=, lossless=, chain=, subchunk=), parsed once by the C parser.
    config: what was given, for the codecs' JSON (to rebuild the same
    codec); spec: the canonical text."""

    def __init__(self, spec=None, *, chain=None, subchunk=None, **bounds):
        # a flag mode given False is not given (Filter's rule)
        given = {k: (v if v is not False else None) for k, v in bounds.items()}
        given.update({"chain": chain, "subchunk": subchunk})
        self.filter = Filter(spec, chain=chain, subchunk=subchunk, **bounds)
        self.config = {"spec": spec} if spec is not None else {}
        self.config.update({k: (list(v) if isinstance(v, tuple) else v) for k, v in given.items() if v is not None})
        self.spec = self.filter.spec
        self._cd, self._n_cd = _clib.cd_array(self.filter.cd_values)

    def __reduce__(self):  # pickled by what was given (dask.distributed), not by its ctypes words
        return _from_config, (self.config,)

    def encode(self, array, fill):
        """The container of one chunk: array (its shape is the chunk's
        shape; float32 or float64, either byte order) padded as it is, fill
        the array's fill value (None: none). A C-contiguous array is coded
        in C order, an F-contiguous one in F order (as its bytes lie, which
        is how Zarr writes order="F" chunks). Returns bytes."""
        array = np.asarray(array)
        if array.dtype.kind != "f" or array.dtype.itemsize not in _CODES:
            raise TypeError("h5fz: the codec takes float32 or float64 chunks, not %s (a %s); put it after the "
                            "serializer that writes the array's values (Zarr v3: compressors=, numcodecs: the "
                            "compressor of a float array)" % (array.dtype.str, type(array).__name__))
        if not array.flags.c_contiguous and array.flags.f_contiguous:
            array = array.T  # the same bytes, now C-contiguous with the dims reversed
        array = np.ascontiguousarray(array)
        dims = array.shape or (1,)
        if 0 in dims:
            raise ValueError("h5fz: a chunk of shape %s holds no values" % (array.shape,))
        big = array.dtype.byteorder == ">" or (array.dtype.byteorder == "=" and sys.byteorder == "big")
        c_dims = (ctypes.c_uint64 * len(dims))(*dims)
        out, n = ctypes.c_void_p(), ctypes.c_size_t(0)
        rc = _clib.LIB.h5fzpy_chunk_encode(self._cd, self._n_cd, _CODES[array.dtype.itemsize], int(big), len(dims),
                                           c_dims, 0 if fill is None else 1, 0.0 if fill is None else float(fill),
                                           ctypes.c_void_p(array.ctypes.data), array.nbytes, ctypes.byref(out),
                                           ctypes.byref(n))
        if rc != 0:
            raise ValueError("h5fz: cannot encode a %s chunk of shape %s with %r: %s"
                             % (array.dtype.str, array.shape, self.spec, _clib.last_error()))
        try:
            return ctypes.string_at(out.value, n.value)
        finally:
            _clib.LIB.h5fzpy_free(out)

    def decode(self, data):
        """The values of one container (bytes-like) as a flat numpy array of
        the type and byte order it was coded from. The container is checked
        as the filter checks a chunk (checksum, sizes, its own type and
        shape) and must keep this codec's bound; RuntimeError otherwise."""
        raw = np.frombuffer(memoryview(data).cast("B"), dtype=np.uint8)
        if not raw.size:
            raise RuntimeError("h5fz: cannot decode an empty chunk")
        out, n = ctypes.c_void_p(), ctypes.c_size_t(0)
        code, big = ctypes.c_int(0), ctypes.c_int(0)
        rc = _clib.LIB.h5fzpy_chunk_decode(self._cd, self._n_cd, ctypes.c_void_p(raw.ctypes.data), raw.size,
                                           ctypes.byref(out), ctypes.byref(n), ctypes.byref(code), ctypes.byref(big))
        if rc != 0:
            raise RuntimeError("h5fz: cannot decode a chunk of %d bytes with %r: %s"
                               % (raw.size, self.spec, _clib.last_error()))
        try:
            dtype = np.dtype((">" if big.value else "<") + ("f4" if code.value == 1 else "f8"))
            values = np.empty(n.value // dtype.itemsize, dtype)
            ctypes.memmove(values.ctypes.data, out.value, values.nbytes)
            return values
        finally:
            _clib.LIB.h5fzpy_free(out)


def _from_config(config):
    return ChunkCodec(**config)
