"""h5fz.kerchunk: kerchunk references to the chunks of h5fz HDF5 datasets,
which xarray / zarr then read as a Zarr v2 store through the numcodecs codec
h5fz.numcodecs.H5fz. kerchunk itself refuses filters it does not know (its
SingleHdf5ToZarr raises "uses filter id 32770 ... not supported");
SingleHdf5ToZarr here is kerchunk's with the h5fz filter added:

    import h5fz.kerchunk
    refs = h5fz.kerchunk.SingleHdf5ToZarr("out.h5").translate()
    ds = xr.open_dataset("reference://", engine="zarr", backend_kwargs={
        "consolidated": False, "storage_options": {"fo": refs, "remote_protocol": "file"}})

The codec gets the dataset's spec (its user cd_values, spec.md §4.1) and
fill value; each chunk's container records its own type and shape, so the
HDF5 chunks decode as the filter decodes them, checked against the dataset's
bound. Needs kerchunk and numcodecs. docs/python.md, "Zarr, Dask and
kerchunk"."""
from kerchunk import hdf as _kerchunk_hdf

from . import _clib, _hdf5
from ._filter import FILTER_ID
from .numcodecs import H5fz


def _user_words(words):
    """The user part of a dataset's cd_values: set_local writes it in full,
    6 + n_ops words, before its dataset part (docs/spec.md §4)."""
    words = list(words)
    return words[:6 + words[5]] if len(words) > 5 else words


def codec_for(dset):
    """The h5fz.numcodecs.H5fz that decodes the chunks of the h5py dataset
    dset (h5fz its only filter), or None when dset has no h5fz filter.
    ValueError for an h5fz dataset that cannot be read chunk by chunk: other
    filters in its pipeline, or edge chunks stored unfiltered."""
    from . import _binding
    if _binding.hdf5 is None:
        raise RuntimeError("h5fz: the filter is not registered with h5py's libhdf5 (see h5fz.get_config())")
    dcpl = dset.id.get_create_plist()  # kept alive while its id is used
    pipe = _hdf5.pipeline(_binding.hdf5, dcpl.id)
    if not any(p[0] == FILTER_ID for p in pipe):
        return None
    if len(pipe) != 1:
        raise ValueError("h5fz.kerchunk: dataset %s has filters %s; only h5fz alone can be indexed"
                         % (dset.name, [p[0] for p in pipe]))
    if _hdf5.chunk_opts(_binding.hdf5, dcpl.id) & _hdf5.DONT_FILTER_PARTIAL_CHUNKS:
        raise ValueError("h5fz.kerchunk: dataset %s stores partial edge chunks unfiltered" % dset.name)
    spec, _ = _clib.describe_cd_values(_user_words(pipe[0][2]))
    fill = dset.fillvalue
    return H5fz(spec, fill_value=None if fill is None else float(fill))


class SingleHdf5ToZarr(_kerchunk_hdf.SingleHdf5ToZarr):
    """kerchunk.hdf.SingleHdf5ToZarr (same arguments, same output) that also
    indexes datasets compressed by h5fz: their references name the codec
    {"id": "h5fz", "spec": ..., "fill_value": ...} as the array's filter."""

    def _decode_filters(self, h5obj):
        codec = codec_for(h5obj) if hasattr(h5obj, "id") and getattr(h5obj, "chunks", None) else None
        return [codec] if codec is not None else super()._decode_filters(h5obj)
