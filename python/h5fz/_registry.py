"""Registration of the numcodecs and Zarr v3 codecs by `import h5fz`, without
importing either library: neither is a dependency of h5fz, and importing
zarr 3 costs about a second, which h5py-only users should not pay. A library
already imported gets its codec at once; one imported later gets it right
after its own import (a finder on sys.meta_path that wraps the library's
loader, the post-import hook pattern); one never imported costs nothing. A
registration that fails is reported as a warning (h5py's side of h5fz still
works). Installed with pip, the package's entry points ("numcodecs.codecs",
"zarr.codecs" in pyproject.toml) find the codecs without `import h5fz`."""
import importlib.abc
import sys
import threading
import warnings


# Each codec module registers its codec at its own end; importing it is the
# registration (and when the hook fires inside that module's own import,
# e.g. `import h5fz.zarr` before zarr, the module finishes and registers).
def _register_numcodecs():
    from . import numcodecs  # noqa: F401


def _register_zarr():
    import zarr
    if int(zarr.__version__.split(".")[0]) < 3:
        return  # zarr 2 has no v3 codecs; it takes the numcodecs codec
    from . import zarr as _zarr  # noqa: F401


_HOOKS = {"numcodecs": _register_numcodecs, "zarr": _register_zarr}
_LOCK = threading.Lock()


def _run(name):
    with _LOCK:
        hook = _HOOKS.pop(name, None)
    if hook is None:
        return
    try:
        hook()
    except Exception as e:  # noqa: BLE001 - a broken optional install must not break its import or h5fz's
        warnings.warn("h5fz: the %s codec could not be registered: %s" % (name, e), RuntimeWarning, stacklevel=2)


class _Loader(importlib.abc.Loader):
    """The library's own loader, then the registration."""

    def __init__(self, name, loader):
        self._name, self._loader = name, loader

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        _run(self._name)

    def __getattr__(self, attr):  # get_resource_reader, is_package, ...
        return getattr(self._loader, attr)


class _AfterImport(importlib.abc.MetaPathFinder):
    """Finds numcodecs / zarr with the other finders and wraps their loader."""

    def find_spec(self, name, path=None, target=None):
        if name not in _HOOKS:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = _Loader(name, spec.loader)
                return spec
        return None


def register_codecs():
    """Register h5fz.numcodecs.H5fz (id "h5fz") with numcodecs and
    h5fz.zarr.H5fz (name "h5fz") with zarr: now for a library already
    imported, after its import for one imported later."""
    for name in list(_HOOKS):
        if sys.modules.get(name) is not None:
            _run(name)
    if _HOOKS and not any(isinstance(f, _AfterImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterImport())
