"""Registration of the numcodecs and Zarr v3 codecs at `import h5fz`, only
where numcodecs / zarr are installed: neither is a dependency of h5fz, so
one that is missing is skipped without a word, and one whose import or
registration fails is reported as a warning (h5py's side of h5fz still
works). Installed with pip, the package's entry points ("numcodecs.codecs",
"zarr.codecs" in pyproject.toml) find the codecs without the import too."""
import importlib.util
import warnings


def _installed(name):
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def register_codecs():
    """Register h5fz.numcodecs.H5fz (id "h5fz") with numcodecs and
    h5fz.zarr.H5fz (name "h5fz") with zarr, each when installed. Returns
    the dict {"numcodecs": bool, "zarr": bool} of what was registered."""
    done = {"numcodecs": False, "zarr": False}
    if _installed("numcodecs"):
        try:
            import numcodecs

            from . import numcodecs as h5fz_numcodecs
            numcodecs.register_codec(h5fz_numcodecs.H5fz)
            done["numcodecs"] = True
        except Exception as e:  # noqa: BLE001 - a broken optional install must not break import h5fz
            warnings.warn("h5fz: the numcodecs codec could not be registered: %s" % e, RuntimeWarning,
                          stacklevel=3)
    if _installed("zarr"):
        try:
            import zarr
            if int(zarr.__version__.split(".")[0]) >= 3:  # zarr 2 has no v3 codecs: numcodecs serves it
                import zarr.registry

                from . import zarr as h5fz_zarr
                zarr.registry.register_codec(h5fz_zarr.NAME, h5fz_zarr.H5fz)
                done["zarr"] = True
        except Exception as e:  # noqa: BLE001
            warnings.warn("h5fz: the Zarr v3 codec could not be registered: %s" % e, RuntimeWarning, stacklevel=3)
    return done
