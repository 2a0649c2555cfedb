"""h5fz.Options: configuration as a value (python/src/h5fz_py_options.h).

What the H5FZ_* environment variables say for the whole process, said for
one call of h5fz.write or h5fz.read: the executor, the GPU, the host
threads, strictness, quiet, and the JIT cache folder. A field left None
keeps the environment's value. The HDF5 filter (h5py's own reads and
writes) has no call to hand options to: set_process_options makes options
the whole process's, for it and for the calls without options.
docs/python.md, "Options".
"""
import ctypes
import os

import h5py.h5z

from . import _clib

_DEVICES = {"auto": 0, "cpu": 1, "gpu": 2}
_ERR_ARG = -1  # H5FZ_ERR_ARG (errors/h5fz_status.h): a field out of range


class Options:
    """Options(device=None, gpu_ordinal=None, threads=None, strict=None,
    quiet=None, cache_dir=None), e.g. h5fz.Options(device="cpu", threads=4,
    quiet=True), for the options= argument of h5fz.write and h5fz.read.

    device: "auto", "cpu" or "gpu" (any case; H5FZ_DEVICE); gpu_ordinal:
    0..1023 (H5FZ_GPU_ORDINAL); threads: 1..1024 host threads, 0 for one
    a core (H5FZ_THREADS); strict: True makes a device problem fail the
    call instead of falling back to the CPU (H5FZ_DEVICE_STRICT); quiet:
    True silences h5fz's warnings (H5FZ_QUIET); cache_dir: the JIT cache
    folder (H5FZ_CACHE_DIR). Raises ValueError for a value out of range.
    """

    __slots__ = ("device", "gpu_ordinal", "threads", "strict", "quiet", "cache_dir")

    def __init__(self, device=None, gpu_ordinal=None, threads=None, strict=None, quiet=None, cache_dir=None):
        if device is not None and (not isinstance(device, str) or device.lower() not in _DEVICES):
            raise ValueError("h5fz.Options: device=%r: want 'auto', 'cpu' or 'gpu'" % (device,))
        for name, value, lo, hi in (("gpu_ordinal", gpu_ordinal, 0, 1023), ("threads", threads, 0, 1024)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi):
                raise ValueError("h5fz.Options: %s=%r: want a whole number in %d..%d" % (name, value, lo, hi))
        for name, value in (("strict", strict), ("quiet", quiet)):
            # a string such as "no" would be true: only a truth value (or 0 / 1) says which
            if value is not None and not (isinstance(value, bool) or (isinstance(value, int) and value in (0, 1))):
                raise ValueError("h5fz.Options: %s=%r: want True, False or None" % (name, value))
        path = None
        if cache_dir is not None:
            if not isinstance(cache_dir, (str, bytes, os.PathLike)):
                raise ValueError("h5fz.Options: cache_dir=%r: want a path (str, bytes or os.PathLike)" % (cache_dir,))
            path = os.fsencode(cache_dir)  # the file system's bytes, as open() would use them
            if b"\0" in path:
                raise ValueError("h5fz.Options: cache_dir contains a NUL byte")
            if len(path) >= 1024:
                raise ValueError("h5fz.Options: cache_dir has 1024 bytes or more")
        # immutable: a field changed after the checks would reach the C library unchecked
        object.__setattr__(self, "device", device.lower() if device is not None else None)
        object.__setattr__(self, "gpu_ordinal", gpu_ordinal)
        object.__setattr__(self, "threads", threads)
        object.__setattr__(self, "strict", None if strict is None else bool(strict))
        object.__setattr__(self, "quiet", None if quiet is None else bool(quiet))
        object.__setattr__(self, "cache_dir", None if path is None else os.fsdecode(path))

    def __setattr__(self, name, value):
        raise AttributeError("h5fz.Options is immutable: make a new one (h5fz.Options(...))")

    def __eq__(self, other):
        return isinstance(other, Options) and all(getattr(self, k) == getattr(other, k) for k in self.__slots__)

    def __hash__(self):
        return hash(tuple(getattr(self, k) for k in self.__slots__))

    def __repr__(self):
        given = ["%s=%r" % (k, getattr(self, k)) for k in self.__slots__ if getattr(self, k) is not None]
        return "h5fz.Options(%s)" % ", ".join(given)

    def _struct(self):
        """The h5fzpy_options the C calls take (-1: the environment's)."""
        def unset(v):
            return -1 if v is None else int(v)
        return _clib.OptionsStruct(-1 if self.device is None else _DEVICES[self.device], unset(self.gpu_ordinal),
                                   unset(self.threads), unset(self.strict), unset(self.quiet),
                                   os.fsencode(self.cache_dir) if self.cache_dir is not None else b"")


def as_struct(options):
    """options (an Options, or None) as the pointer the C calls take."""
    if options is None:
        return None
    if not isinstance(options, Options):
        raise TypeError("h5fz: options must be an h5fz.Options, not %s" % type(options).__name__)
    return ctypes.byref(options._struct())


def set_process_options(options):
    """Make options (an h5fz.Options, or None for the environment again) the
    options of every h5fz call of this process that has none of its own:
    h5py's reads and writes of h5fz datasets (the filter, set_local at
    create_dataset), and h5fz.write / h5fz.read without options= (a call's
    own options win field by field; a field neither sets is the
    environment's). They live in the process, never in a file. Every loaded
    copy of the h5fz plugin is told, after h5py's libhdf5 has been made to
    load its plugin (h5py.h5z.filter_avail); a copy some other libhdf5 loads
    later is not: call again after it. Returns how many plugin copies took
    them. Raises TypeError for something else than an Options, RuntimeError
    when a loaded plugin copy refused them (an older h5fz plugin: it keeps
    the environment; this package and the copies that took them have the
    options)."""
    struct = as_struct(options)
    h5py.h5z.filter_avail(_clib.LIB.h5fzpy_filter_id())  # HDF5 loads a plugin at the filter's first use
    told = ctypes.c_int(0)
    rc = _clib.LIB.h5fzpy_set_process_options(struct, ctypes.byref(told))
    if rc != 0:
        raise (ValueError if rc == _ERR_ARG else RuntimeError)(_clib.last_error())
    return told.value
