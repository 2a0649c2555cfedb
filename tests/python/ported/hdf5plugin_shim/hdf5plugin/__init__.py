"""A stand-in for hdf5plugin 7.1 under its own test suite
(src/hdf5plugin/test.py of its sdist), in which SZ and SZ3 are h5fz: the
classes hdf5plugin's SZ/SZ3 read-write, from_filter_options round-trip
and get_config round-trip tests use, with SZ's keywords mapped to h5fz's
modes (absolute -> abs, relative -> rel, pointwise_relative -> pw_rel) and
hdf5plugin's defaults (SZ: pointwise_relative=1e-5, SZ3: absolute=1e-4).
The other filters are names only, never available (their tests skip).
tests/python/test_ported_suites.py runs it; nothing of hdf5plugin's is
copied here."""
from types import SimpleNamespace

import h5py

import h5fz

from . import _filters  # noqa: F401 - test.py does `from hdf5plugin import _filters`
from ._filters import FILTER_CLASSES, SZ, SZ3  # noqa: F401

# hdf5plugin's filter ids, h5fz's for sz and sz3 (the others are never available here)
FILTERS = {"blosc": 32001, "blosc2": 32026, "bshuf": 32008, "bzip2": 307, "lz4": 32004, "fcidecomp": 32018,
           "htj2k": 32029, "sperr": 32028, "sz": h5fz.FILTER_ID, "sz3": h5fz.FILTER_ID, "zfp": 32013,
           "zstd": 32015}
BSHUF_ID = FILTERS["bshuf"]
PLUGIN_PATH = h5fz.PLUGIN_PATH
version = h5fz.__version__


class _Unavailable(h5py.filters.FilterRefBase):
    """A filter of hdf5plugin's that this stand-in does not provide."""

    def __init__(self, *args, **kwargs):
        raise NotImplementedError("%s is not part of the h5fz stand-in for hdf5plugin" % type(self).__name__)


for _name in ("Bitshuffle", "Blosc", "Blosc2", "BZip2", "FciDecomp", "Htj2k", "LZ4", "Sperr", "Zfp", "Zstd"):
    globals()[_name] = type(_name, (_Unavailable,), {})


def get_config():
    """hdf5plugin.get_config()'s shape: sz and sz3 'embedded' (they are
    h5fz, registered by import h5fz)."""
    return SimpleNamespace(build_config=SimpleNamespace(embedded_filters=("sz", "sz3")),
                           registered_filters={"sz": h5fz.FILTER_ID, "sz3": h5fz.FILTER_ID})


def from_filter_options(filter_id, filter_options):
    """The filter of (id or name, cd_values), as hdf5plugin gives its own
    classes: h5fz's words (h5fz.Filter.from_cd_values) give an SZ3, or an
    SZ for pw_rel, which SZ3 has no keyword for."""
    if filter_id in (h5fz.FILTER_ID, "sz", "sz3"):
        mode = h5fz.Filter.from_cd_values(filter_options).mode
        return (SZ if mode == "pw_rel" else SZ3)._from_filter_options(filter_options)
    raise ValueError("the h5fz stand-in for hdf5plugin knows filter %r only as h5fz (%d)"
                     % (filter_id, h5fz.FILTER_ID))
