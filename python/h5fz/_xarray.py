"""h5fz.netcdf_encoding: the encoding xarray's to_netcdf needs to write a
dataset through h5fz again (docs/python.md, "xarray")."""
import h5py
import numpy as np

from ._filter import Filter

# The encoding keys of a variable that say nothing about compression and
# that xarray's h5netcdf engine takes: kept from what xarray read. The
# compression keys (zlib, complevel, compression, compression_opts,
# shuffle, szip_*, blosc_*, ...) are replaced by the Filter's.
_KEPT_KEYS = ("chunksizes", "fletcher32", "_FillValue", "dtype", "endian")


def _stored_filter(name, var):
    """The h5fz Filter of the variable's dataset in the file xarray read it
    from (encoding "source"), or None (not read from a file, not there, or
    stored without h5fz)."""
    source = var.encoding.get("source")
    if not source:
        return None
    try:
        f = h5py.File(source, "r")
    except OSError:
        return None
    with f:
        dset = f.get(name)
        if not isinstance(dset, h5py.Dataset):
            return None
        try:
            return Filter.from_dataset(dset)
        except ValueError:  # no h5fz in its pipeline
            return None


def _takes_filter(name, ds, var):
    dtype = np.dtype(var.encoding.get("dtype", var.dtype))
    return name in ds.data_vars and var.ndim >= 1 and dtype.kind == "f" and dtype.itemsize in (4, 8)


def netcdf_encoding(ds, filter=None):
    """The to_netcdf encoding {name: {...}} that writes ds's variables
    through h5fz with engine="h5netcdf":

        ds = xr.open_dataset("in.nc")                 # either engine
        ds.to_netcdf("out.nc", engine="h5netcdf", encoding=h5fz.netcdf_encoding(ds))

    Without filter: each variable that its source file (ds opened with
    xr.open_dataset) stores with h5fz gets the Filter it was stored with
    (xarray carries no plugin filter over: it forgets it, or with h5py
    3.16 names it "unknown", which h5py then refuses). With filter (an
    h5fz.Filter): every float32/float64 data variable gets it (coordinates
    stay as they are). Each entry keeps the variable's chunksizes (unless
    the variable's shape changed), fletcher32, _FillValue, dtype and
    endian, and replaces its compression keys with the Filter's
    (compression, compression_opts, shuffle=False: h5fz must be first, and
    files netCDF compressed carry shuffle=True). Variables not listed keep
    xarray's own encoding.
    """
    if filter is not None and not isinstance(filter, Filter):
        raise TypeError("h5fz.netcdf_encoding: filter= takes an h5fz.Filter, not %r" % (filter,))
    out = {}
    for name, var in ds.variables.items():
        if filter is not None:
            chosen = filter if _takes_filter(name, ds, var) else None
        else:
            chosen = _stored_filter(name, var)
        if chosen is None:
            continue
        enc = {k: v for k, v in var.encoding.items() if k in _KEPT_KEYS}
        chunks = enc.get("chunksizes")
        if chunks is not None and (len(chunks) != var.ndim or any(c > n for c, n in zip(chunks, var.shape))
                                   or tuple(var.encoding.get("original_shape", var.shape)) != var.shape):
            del enc["chunksizes"]  # chunks of the shape it had (xarray's own rule)
        enc.update(chosen)
        out[name] = enc
    return out
