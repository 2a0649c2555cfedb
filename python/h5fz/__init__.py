"""h5fz: error-bounded lossy compression of float32/float64 HDF5 datasets,
on the GPU when there is one.

    import h5py, h5fz
    with h5py.File("out.h5", "w") as f:
        f.create_dataset("t", data=a, chunks=(16, 256, 256), **h5fz.Filter(abs=1e-3))

Importing h5fz registers its HDF5 filter (id FILTER_ID) with the libhdf5
that h5py uses, so h5py reads, writes, appends to and resizes h5fz datasets
with no HDF5_PLUGIN_PATH. Filter(...) builds the filter arguments for h5py,
h5netcdf and xarray; write()/read() move whole arrays (numpy or GPU) through
the batched codec, many chunks per GPU launch. PLUGIN_PATH is the folder of
the plugin for other HDF5 programs (HDF5_PLUGIN_PATH). The import also
registers the codecs h5fz.numcodecs.H5fz and h5fz.zarr.H5fz (id "h5fz";
h5fz.kerchunk indexes h5fz HDF5 files for them) with numcodecs and zarr 3
when those are imported, before or after, without importing them itself.
netcdf_encoding(ds) is the encoding that writes an xarray Dataset through
h5fz again. docs/python.md.
"""
import importlib as _importlib
import json as _json
import warnings as _warnings

import h5py as _h5py

from . import _clib, _hdf5, _registry
from ._filter import FILTER_ID, MODES, Filter
from ._fast import read, write
from ._options import Options, set_process_options
from ._xarray import netcdf_encoding

__all__ = ["FILTER_ID", "MODES", "PLUGIN_PATH", "Filter", "Options", "get_config", "netcdf_encoding", "read",
           "set_process_options", "write", "__version__"]

__version__ = _clib.LIB.h5fzpy_version().decode()
PLUGIN_PATH = _hdf5.PLUGIN_PATH

_binding = _hdf5.register(FILTER_ID)
if not _binding.registered:
    _warnings.warn("h5fz: the filter could not be registered with h5py's HDF5 (%s); h5py cannot read or write "
                   "h5fz datasets in this process" % _binding.error, RuntimeWarning, stacklevel=2)

_registry.register_codecs()  # numcodecs / zarr: now if imported, else after their import


def __getattr__(name):
    """h5fz.zarr, h5fz.numcodecs, h5fz.kerchunk after a plain `import h5fz`:
    imported on first use (each needs its library, which h5fz does not)."""
    if name in ("zarr", "numcodecs", "kerchunk"):
        return _importlib.import_module("." + name, __name__)
    raise AttributeError("module 'h5fz' has no attribute %r" % name)


def get_config():
    """A dict describing this installation: version, filter_id, plugin (the
    plugin file), plugin_path, libhdf5 (the library the filter is bound to
    and registered with: h5py's), hdf5_version and h5py_version, registered
    (filter_avail after registration), registration_error, and the executor:
    device_setting (H5FZ_DEVICE), gpu_present, gpu (name), gpu_absent_reason,
    compute_capability, nvrtc, kernel_class (the planner's choice for the
    default chain), executor ("gpu" or "cpu"), threads (the CPU executor's
    host threads per chunk: H5FZ_THREADS, else the CPUs this process may use,
    shared among the node's MPI ranks); and what specs can say, from
    the C library's tables: modes ([{"id", "name"}]: the error-bound modes,
    by their Filter keyword) and chains ({"default": the default chain
    after the quantizer, "ops": [{"id", "name", "kind", "summary"}]}: a
    chain is the map quant, transforms, then one coder; docs/spec.md)."""
    cfg = {"version": __version__, "filter_id": FILTER_ID, "plugin": _hdf5.PLUGIN_FILE,
           "plugin_path": PLUGIN_PATH, "library": _clib.LIBRARY, "libhdf5": _binding.libhdf5,
           "hdf5_version": _h5py.version.hdf5_version, "h5py_version": _h5py.version.version,
           "registered": _binding.registered and bool(_h5py.h5z.filter_avail(FILTER_ID)),
           "registration_error": _binding.error}
    cfg.update(_json.loads(_clib.config_json()))
    cfg["modes"] = [{"id": i, "name": name} for i, name in _clib.mode_ids()]
    cfg["chains"] = {"default": Filter().chain,
                     "ops": [{"id": i, "name": name, "kind": kind, "summary": summary}
                             for i, name, kind, summary in _clib.ops()]}
    return cfg
