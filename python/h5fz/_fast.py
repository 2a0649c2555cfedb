"""h5fz.write / h5fz.read: whole arrays (or a hyperslab) through the
batched codec of the C library, many chunks per GPU launch, stored with
h5py's write_direct_chunk and read with read_direct_chunk. The containers
are byte for byte what the filter stores, so every reader reads them.

The HDF5 side is h5py's (the process's one libhdf5); the codec side
(libh5fz_py.so) knows no HDF5. The spec is the one set_local stored in the
dataset's pipeline, read in full with H5Pget_filter2."""
import ctypes
import time

import h5py
import numpy as np

from . import _arrays, _clib, _hdf5, _options
from ._filter import FILTER_ID

_DTYPES = {np.dtype("<f4"): 1, np.dtype("<f8"): 2}


class _Dataset:
    """What the codec needs to know of an h5py dataset."""

    def __init__(self, dset, hdf5):
        if not isinstance(dset, h5py.Dataset):
            raise TypeError("h5fz: expected an h5py.Dataset, got %s" % type(dset).__name__)
        if hdf5 is None:
            raise RuntimeError("h5fz: the filter is not registered with h5py's libhdf5 (see h5fz.get_config())")
        self.dset = dset
        self.dtype = np.dtype(dset.dtype)
        if self.dtype not in _DTYPES:
            raise TypeError("h5fz: dataset %s has type %s; the fast path takes little-endian float32 or float64 "
                            "datasets (a big-endian one is compressed through the filter by h5py's own reads and "
                            "writes, dset[...] = x)" % (dset.name, self.dtype.str))
        if dset.chunks is None:
            raise ValueError("h5fz: dataset %s is not chunked" % dset.name)
        self.shape = tuple(int(n) for n in dset.shape)
        self.chunks = tuple(int(n) for n in dset.chunks)
        if not 1 <= len(self.shape) <= _clib.MAX_RANK:
            raise ValueError("h5fz: dataset rank %d; the fast path takes ranks 1..%d" % (len(self.shape),
                                                                                        _clib.MAX_RANK))
        dcpl = dset.id.get_create_plist()
        pipe = _hdf5.pipeline(hdf5, dcpl.id)
        if len(pipe) != 1 or pipe[0][0] != FILTER_ID:
            raise ValueError("h5fz: dataset %s: the pipeline must be the h5fz filter (id %d) alone; it has "
                             "filters %s" % (dset.name, FILTER_ID, [p[0] for p in pipe]))
        if _hdf5.chunk_opts(hdf5, dcpl.id) & _hdf5.DONT_FILTER_PARTIAL_CHUNKS:
            raise ValueError("h5fz: dataset %s stores partial edge chunks unfiltered "
                             "(H5D_CHUNK_DONT_FILTER_PARTIAL_CHUNKS)" % dset.name)
        self.cd, self.n_cd = _clib.cd_array(pipe[0][2])
        self.spec, code = _clib.describe_cd_values(pipe[0][2])
        if code != _DTYPES[self.dtype]:
            raise ValueError("h5fz: dataset %s: its cd_values lack the words set_local adds (the h5fz filter was "
                             "not available when it was created)" % dset.name)
        # Edge chunks are padded, and missing chunks read, as HDF5 does it:
        # the fill value's exact bits, 0 when the fill time is NEVER.
        self.fill, self.exact_fill, self.fill_bits = 0.0, 1, 0
        if dcpl.fill_value_defined() != h5py.h5d.FILL_VALUE_UNDEFINED:
            v = np.zeros(1, self.dtype)
            dcpl.get_fill_value(v)
            self.fill = float(v[0])
            if dcpl.get_fill_time() != h5py.h5d.FILL_TIME_NEVER:
                self.fill_bits = int(v.view(np.uint32 if self.dtype.itemsize == 4 else np.uint64)[0])

    def geom(self, shape):
        g = _clib.Geom()
        g.rank = len(shape)
        for d, (n, c) in enumerate(zip(shape, self.chunks)):
            g.dims[d], g.chunk[d] = n, c
        g.exact_fill, g.fill_bits, g.fill = self.exact_fill, self.fill_bits, self.fill
        return g

    def allocated(self, offset):
        info = self.dset.id.get_chunk_info_by_coord(tuple(offset))
        return info.byte_offset is not None and info.size > 0


def _grid(shape, chunks):
    return tuple(-(-n // c) for n, c in zip(shape, chunks))


def _origin(index, grid, chunks, base):
    """The first element of chunk index (row-major over grid), offset by
    base. Plain integers: this runs once per chunk inside the codec's
    callback."""
    index = int(index)
    out = [0] * len(grid)
    for d in range(len(grid) - 1, -1, -1):
        index, i = divmod(index, grid[d])
        out[d] = base[d] + i * chunks[d]
    return tuple(out)


def _exec_report(ex):
    return {"on_gpu": bool(ex.on_gpu), "kernel_class": ex.kernel_class.decode(),
            "plan_digest": "%016x" % ex.plan_digest if ex.plan_digest else ""}


def _fail(rc, what, holder):
    if holder.get("error") is not None:
        raise holder["error"]
    raise RuntimeError("h5fz: %s failed (status %d): %s" % (what, rc, _clib.last_error()))


def _encode(ds, shape, base, ptr, on_device, report, opts=None):
    """Encode the array at ptr (shape, chunk-aligned at base) and write its
    chunks at base + their origin."""
    grid = _grid(shape, ds.chunks)
    holder = {}
    dsid = ds.dset.id

    def sink(_ctx, chunk):
        try:
            c = chunk.contents
            data = (ctypes.c_char * c.bytes).from_address(c.container)
            dsid.write_direct_chunk(_origin(c.index, grid, ds.chunks, base), data, 0)
            report["chunks"] += 1
            report["stored_bytes"] += c.bytes
            report["outliers"] += c.n_outliers
            report["raw_chunks"] += 1 if c.stored_raw else 0
            return 0
        except BaseException as e:  # noqa: BLE001 - re-raised after the C call returns
            holder["error"] = e
            return 1

    ex = _clib.Exec()
    cb = _clib.SINK(sink)
    rc = _clib.LIB.h5fzpy_encode_with(opts, ds.cd, ds.n_cd, ctypes.byref(ds.geom(shape)), ctypes.c_void_p(ptr),
                                      1 if on_device else 0, cb, None, ctypes.byref(ex))
    if rc != 0:
        _fail(rc, "encoding %s" % ds.dset.name, holder)
    report.update(_exec_report(ex))


def _decode(ds, shape, base, ptr, on_device, skip=None, opts=None):
    """Decode the chunks of the region at base (chunk-aligned, shape) into
    ptr; chunks for which skip(offset) is true are not read (they read as
    fill)."""
    grid = _grid(shape, ds.chunks)
    holder = {}
    dsid = ds.dset.id
    keep = []

    def source(_ctx, index, container, nbytes):
        try:
            keep.clear()
            container[0], nbytes[0] = None, 0
            off = _origin(index, grid, ds.chunks, base)
            if (skip is not None and skip(off)) or not ds.allocated(off):
                return 0
            mask, data = dsid.read_direct_chunk(off)
            if mask:
                raise ValueError("h5fz: chunk at %s of %s was stored without the h5fz filter (filter mask %d)"
                                 % (off, ds.dset.name, mask))
            data = bytes(data)
            keep.append(data)  # the C side copies it before asking for the next chunk
            container[0], nbytes[0] = ctypes.cast(ctypes.c_char_p(data), ctypes.c_void_p).value, len(data)
            return 0
        except BaseException as e:  # noqa: BLE001
            holder["error"] = e
            return 1

    ex = _clib.Exec()
    cb = _clib.SOURCE(source)
    rc = _clib.LIB.h5fzpy_decode_with(opts, ds.cd, ds.n_cd, ctypes.byref(ds.geom(shape)), cb, None,
                                      ctypes.c_void_p(ptr), 1 if on_device else 0, ctypes.byref(ex))
    if rc != 0:
        _fail(rc, "decoding %s" % ds.dset.name, holder)
    return ex


def _region(ds, shape, start):
    rank = len(ds.shape)
    if len(shape) > rank:
        raise ValueError("h5fz.write: the array has rank %d, the dataset %d" % (len(shape), rank))
    shape = (1,) * (rank - len(shape)) + tuple(shape)  # a time step (Y, X) of a (T, Y, X) dataset
    if start is None:
        if shape != ds.shape:
            raise ValueError("h5fz.write: the array's shape %s is not the dataset's %s; pass start= to write "
                             "part of it" % (shape, ds.shape))
        start = (0,) * rank
    start = tuple(int(s) for s in start)
    if len(start) != rank or any(s < 0 for s in start):
        raise ValueError("h5fz.write: start=%s must give %d non-negative offsets" % (start, rank))
    end = tuple(s + n for s, n in zip(start, shape))
    if any(e > n for e, n in zip(end, ds.shape)):
        raise ValueError("h5fz.write: the region %s..%s passes the dataset's extent %s; resize it first "
                         "(dset.resize)" % (start, end, ds.shape))
    return shape, start, end


def _whole_chunks(ds, start, end):
    """True when the region covers whole chunks of the dataset, or edge
    chunks up to its extent that were never written: then its chunks are
    encoded from the array alone, as the filter encodes them."""
    for s, e, c, n in zip(start, end, ds.chunks, ds.shape):
        if s % c or (e % c and e != n):
            return False
    edge = [e == n and n % c for e, c, n in zip(end, ds.chunks, ds.shape)]
    if not any(edge) or ds.dset.id.get_num_chunks() == 0:
        return True
    # HDF5 rewrites a stored edge chunk from its decoded contents (padding
    # included): such a write merges, as the filter's does.
    shape = tuple(e - s for s, e in zip(start, end))
    grid = _grid(shape, ds.chunks)
    for index in range(int(np.prod(grid))):
        off = _origin(index, grid, ds.chunks, (0,) * len(grid))
        if any(edge[d] and off[d] // ds.chunks[d] == grid[d] - 1 for d in range(len(grid))):
            if ds.allocated(tuple(s + o for s, o in zip(start, off))):
                return False
    return True


def write(dset, array, start=None, options=None):
    """Write array into the h5fz dataset dset through the batched codec.

    array: a numpy array (or anything np.asarray takes; converted to the
    dataset's type when it differs) or a GPU array exposing
    __cuda_array_interface__ (CuPy, PyTorch; C-contiguous, of the dataset's
    type), of the dataset's shape, or with start= (offsets, one per dim) a
    part of it: the hyperslab start..start+array.shape, e.g. one time step
    (leading dims of 1 may be left out). The dataset must have been created
    with the h5fz filter alone (e.g. **h5fz.Filter(...)) and must already be
    large enough (dset.resize first to append).

    Regions made of whole chunks (edge chunks up to the extent) are encoded
    from the array, on the GPU many chunks per launch; others are merged
    with the stored chunks they touch (read, decoded, overwritten, encoded),
    as HDF5 does for a partial write through the filter. The stored chunks
    are byte for byte the filter's. Without a usable GPU the CPU executor
    runs (a GPU array then fails). Returns a report dict (chunks,
    stored_bytes, input_bytes, ratio, outliers, raw_chunks, on_gpu,
    kernel_class, plan_digest, merged, seconds). options: an h5fz.Options
    (device, threads, quiet, ...) used for this call instead of the H5FZ_*
    environment variables; None: the environment's. Raises TypeError /
    ValueError for a bad dataset, array or region, RuntimeError when the
    codec or HDF5 fails.
    """
    from . import _binding
    t0 = time.perf_counter()
    opts = _options.as_struct(options)
    ds = _Dataset(dset, _binding.hdf5)
    dev = _arrays.device_array(array)
    if dev is None:
        host = np.asarray(array)
        if host.dtype != ds.dtype:
            if host.dtype.kind not in "fiub":
                raise TypeError("h5fz.write: cannot store a %s array in a float dataset" % host.dtype)
            host = host.astype(ds.dtype)
        host = np.ascontiguousarray(host)
        shape = host.shape
    else:
        if dev.dtype != ds.dtype:
            raise TypeError("h5fz.write: the GPU array is %s, the dataset %s; convert it on the GPU first"
                            % (dev.dtype.str, ds.dtype.str))
        shape = dev.shape
    shape, start, end = _region(ds, shape, start)
    report = {"chunks": 0, "stored_bytes": 0, "outliers": 0, "raw_chunks": 0,
              "input_bytes": int(np.prod(shape)) * ds.dtype.itemsize, "merged": False,
              "on_gpu": False, "kernel_class": "", "plan_digest": ""}
    if report["input_bytes"]:
        if _whole_chunks(ds, start, end):
            if dev is None:
                _encode(ds, shape, start, host.ctypes.data, False, report, opts)
            else:
                dev.synchronize()
                _encode(ds, shape, start, dev.ptr, True, report, opts)
        else:
            _merge(ds, host.reshape(shape) if dev is None else dev.to_host().reshape(shape), start, end, report,
                   opts)
    report["ratio"] = report["input_bytes"] / report["stored_bytes"] if report["stored_bytes"] else 0.0
    report["seconds"] = time.perf_counter() - t0
    return report


def _merge(ds, values, start, end, report, opts=None):
    """A region that cuts chunks: the chunk-aligned region around it
    (whole chunks, past the extent too, as HDF5's chunk buffers are) is
    decoded from the file (chunks the region covers entirely are not read),
    overwritten with values, and encoded again."""
    lo = tuple(s // c * c for s, c in zip(start, ds.chunks))
    hi = tuple(-(-e // c) * c for e, c in zip(end, ds.chunks))
    shape = tuple(h - l for l, h in zip(lo, hi))
    buf = np.empty(shape, ds.dtype)

    def covered(off):
        return all(o >= s and o + c <= e for o, c, s, e in zip(off, ds.chunks, start, end))

    _decode(ds, shape, lo, buf.ctypes.data, False, skip=covered, opts=opts)
    buf[tuple(slice(s - l, e - l) for s, e, l in zip(start, end, lo))] = values
    _encode(ds, shape, lo, buf.ctypes.data, False, report, opts)
    report["merged"] = True


def read(dset, out=None, options=None):
    """Read the whole h5fz dataset dset through the batched codec into out
    (a C-contiguous numpy array, or a GPU array exposing
    __cuda_array_interface__, of the dataset's shape and type; None: a new
    numpy array) and return out. Reads datasets written by h5fz.write or
    through the filter alike; chunks never written read as the fill value.
    Every container is checked (checksum, sizes, that it is one of this
    dataset's chunks and keeps its bound) before it is decoded; a corrupt one
    raises RuntimeError naming the chunk. options: an h5fz.Options for
    this call instead of the H5FZ_* environment variables (None: those).
    """
    from . import _binding
    opts = _options.as_struct(options)
    ds = _Dataset(dset, _binding.hdf5)
    dev = _arrays.device_array(out) if out is not None else None
    if out is None:
        out = np.empty(ds.shape, ds.dtype)
    if dev is None:
        if not isinstance(out, np.ndarray) or out.dtype != ds.dtype or out.shape != ds.shape or \
                not out.flags.c_contiguous or not out.flags.writeable:
            raise ValueError("h5fz.read: out must be a writeable C-contiguous %s array of shape %s"
                             % (ds.dtype.str, ds.shape))
        ptr = out.ctypes.data
    else:
        if dev.dtype != ds.dtype or dev.shape != ds.shape or dev.readonly:
            raise ValueError("h5fz.read: the GPU array must be a writeable %s array of shape %s"
                             % (ds.dtype.str, ds.shape))
        dev.synchronize()
        ptr = dev.ptr
    if out.size if dev is None else dev.nbytes:
        _decode(ds, ds.shape, (0,) * len(ds.shape), ptr, dev is not None, opts=opts)
    return out
