"""The libhdf5 that h5py uses: finding it, registering the plugin with it,
and the few calls h5py does not wrap well.

h5py may carry a private libhdf5 (PyPI wheels, loaded RTLD_LOCAL) or use the
system one (Debian's python3-h5py). Everything here goes to that very copy:
its path is found from a symbol h5py's own extension module resolves, and the
plugin shipped in this package is bound to it with the plugin's exported
init_filter(path) (docs/filter.md, "Self-binding") before its filter class is
handed to h5py.h5z.register_filter (H5Zregister). Registering, rather than
relying on HDF5_PLUGIN_PATH, is what lets a new process read, append to and
resize h5fz datasets: HDF5 never searches plugins when it extends a dataset
(H5Dset_extent), so a mandatory filter nothing has loaded is "not registered".
"""
import ctypes
import os

import h5py
import h5py.h5z

HERE = os.path.dirname(os.path.abspath(__file__))
PLUGIN_PATH = os.path.join(HERE, "plugin")
PLUGIN_FILE = os.path.join(PLUGIN_PATH, "libh5fz.so")

hid_t = ctypes.c_int64  # 64-bit in every HDF5 since 1.10


class _DlInfo(ctypes.Structure):
    _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p),
                ("dli_sname", ctypes.c_char_p), ("dli_saddr", ctypes.c_void_p)]


def _dladdr():
    for name in (None, "libdl.so.2"):  # glibc >= 2.34 has it in libc, older in libdl
        try:
            f = ctypes.CDLL(name).dladdr
        except (OSError, AttributeError):
            continue
        f.argtypes = [ctypes.c_void_p, ctypes.POINTER(_DlInfo)]
        f.restype = ctypes.c_int
        return f
    raise OSError("dladdr is not available")


def find_libhdf5():
    """Path of the libhdf5 that h5py's extension modules call: H5open as
    h5py.h5z's module resolves it (its own dependency scope), named by
    dladdr. Raises OSError when it cannot be found."""
    module = ctypes.CDLL(h5py.h5z.__file__)  # already loaded: the same handle, the same scope
    addr = ctypes.cast(module.H5open, ctypes.c_void_p).value
    info = _DlInfo()
    if not addr or not _dladdr()(addr, ctypes.byref(info)) or not info.dli_fname:
        raise OSError("cannot tell which libhdf5 %s uses" % h5py.h5z.__file__)
    path = info.dli_fname.decode()
    if not os.path.isabs(path):
        raise OSError("libhdf5 of h5py has no usable path (%r)" % path)
    return os.path.realpath(path)  # wheels name it through h5py/../h5py.libs


class Binding:
    """The outcome of registration, for get_config()."""

    def __init__(self):
        self.libhdf5 = None
        self.registered = False
        self.error = None
        self.hdf5 = None  # ctypes handle of that libhdf5


def register(filter_id):
    """Bind the packaged plugin to h5py's libhdf5 and register its filter
    class there. Returns a Binding; on failure its error says why (nothing
    is raised: the caller warns)."""
    b = Binding()
    try:
        b.libhdf5 = find_libhdf5()
        b.hdf5 = _prototypes(ctypes.CDLL(b.libhdf5))
        if not os.path.isfile(PLUGIN_FILE):
            raise OSError("the plugin %s is missing" % PLUGIN_FILE)
        plugin = ctypes.CDLL(PLUGIN_FILE)
        plugin.init_filter.argtypes = [ctypes.c_char_p]
        plugin.init_filter.restype = ctypes.c_int
        plugin.H5PLget_plugin_info.argtypes = []
        plugin.H5PLget_plugin_info.restype = ctypes.c_void_p
        if plugin.init_filter(b.libhdf5.encode()) != 0:
            raise OSError("the plugin %s cannot bind h5py's libhdf5 %s (not a libhdf5 1.10 or later, or "
                          "every slot of the plugin is taken by other libhdf5 copies in this process; "
                          "docs/filter.md, Several libhdf5 copies in one process)" % (PLUGIN_FILE, b.libhdf5))
        info = plugin.H5PLget_plugin_info()  # the class of the library init_filter named, on this thread
        if not info:
            raise OSError("the plugin %s gave no filter class" % PLUGIN_FILE)
        if hasattr(h5py.h5z, "register_filter"):  # h5py >= 3.8
            h5py.h5z.register_filter(info)
        elif b.hdf5.H5Zregister(ctypes.c_void_p(info)) < 0:  # the same call, made directly
            raise OSError("H5Zregister failed")
        b.registered = bool(h5py.h5z.filter_avail(filter_id))
        if not b.registered:
            raise OSError("filter %d is not available after H5Zregister" % filter_id)
        b._plugin = plugin  # keep the handle (and the class it points to) alive
    except Exception as e:  # noqa: BLE001 - reported by the caller as a warning
        b.error = "%s: %s" % (type(e).__name__, e)
    return b


def _prototypes(h):
    h.H5Pget_nfilters.argtypes = [hid_t]
    h.H5Pget_nfilters.restype = ctypes.c_int
    h.H5Pget_filter2.argtypes = [hid_t, ctypes.c_uint, ctypes.POINTER(ctypes.c_uint),
                                 ctypes.POINTER(ctypes.c_size_t), ctypes.POINTER(ctypes.c_uint),
                                 ctypes.c_size_t, ctypes.c_char_p, ctypes.POINTER(ctypes.c_uint)]
    h.H5Pget_filter2.restype = ctypes.c_int
    h.H5Pget_chunk_opts.argtypes = [hid_t, ctypes.POINTER(ctypes.c_uint)]
    h.H5Pget_chunk_opts.restype = ctypes.c_int
    h.H5Zregister.argtypes = [ctypes.c_void_p]
    h.H5Zregister.restype = ctypes.c_int
    return h


DONT_FILTER_PARTIAL_CHUNKS = 0x0002  # H5D_CHUNK_DONT_FILTER_PARTIAL_CHUNKS


def pipeline(hdf5, dcpl_id):
    """[(filter id, flags, cd_values)] of a dataset creation property list,
    read with H5Pget_filter2 in full (h5py 3.7's get_filter returns wrong
    words from the 17th on; docs/filter.md)."""
    n = hdf5.H5Pget_nfilters(dcpl_id)
    if n < 0:
        raise RuntimeError("H5Pget_nfilters failed")
    out = []
    for i in range(n):
        flags = ctypes.c_uint(0)
        cap = 256
        cd = (ctypes.c_uint * cap)()
        count = ctypes.c_size_t(cap)
        name = ctypes.create_string_buffer(64)
        config = ctypes.c_uint(0)
        fid = hdf5.H5Pget_filter2(dcpl_id, i, ctypes.byref(flags), ctypes.byref(count), cd, len(name), name,
                                  ctypes.byref(config))
        if fid < 0:
            raise RuntimeError("H5Pget_filter2(%d) failed" % i)
        out.append((fid, flags.value, [cd[k] for k in range(min(count.value, cap))]))
    return out


def chunk_opts(hdf5, dcpl_id):
    opts = ctypes.c_uint(0)
    if hdf5.H5Pget_chunk_opts(dcpl_id, ctypes.byref(opts)) < 0:
        return 0
    return opts.value
