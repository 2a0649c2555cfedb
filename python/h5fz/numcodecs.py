"""h5fz.numcodecs.H5fz: the h5fz codec for numcodecs (codec id "h5fz"), for
Zarr v2 arrays (zarr 3 with zarr_format=2), dask.array.to_zarr
and kerchunk's references to HDF5 chunks. Needs numcodecs. This module
registers it with numcodecs by id; `import h5fz` imports it as soon as
numcodecs is imported (before or after), and the package's
"numcodecs.codecs" entry point finds it without the import.

    import zarr, h5fz
    z = zarr.create_array(store, shape=a.shape, chunks=(16, 256, 256), dtype="f4", zarr_format=2,
                          compressors=h5fz.numcodecs.H5fz(abs=1e-3))

Configured like h5fz.Filter (spec text, or abs=, rel=, pw_rel=,
lossless=True, chain=, subchunk=); a chunk is coded exactly as the HDF5
filter codes a chunk of that shape (encode's ndarray keeps the chunk's
shape), on the GPU when there is one, on the CPU otherwise. fill_value is
the array's fill value (Zarr pads edge chunks with it; rel= leaves it out of
each chunk's range; the HDF5 filter takes the dataset's): 0.0 by default,
Zarr's and HDF5's default. docs/python.md, "Zarr, Dask and kerchunk"."""
import numcodecs
from numcodecs.abc import Codec
from numcodecs.compat import ensure_contiguous_ndarray, ndarray_copy

from ._codec import KEYWORDS, ChunkCodec, fill_from_json, fill_to_json


class H5fz(Codec):
    """numcodecs codec "h5fz": error-bounded lossy compression of float32 /
    float64 chunks. H5fz(abs=1e-3), H5fz(rel=1e-4), H5fz(pw_rel=1e-3),
    H5fz(lossless=True), H5fz("abs=1e-3 delta zigzag bitpack"); fill_value=
    the array's fill value (default 0.0). encode takes the chunk as an
    ndarray of its shape (Zarr hands it so); decode gives the flat values
    back (the container records their type)."""

    codec_id = "h5fz"

    def __init__(self, spec=None, *, chain=None, subchunk=None, fill_value=0.0, **bounds):
        self._codec = ChunkCodec(spec, chain=chain, subchunk=subchunk, **bounds)
        self._fill = fill_from_json(fill_value)

    @property
    def spec(self):
        """The canonical spec text."""
        return self._codec.spec

    def encode(self, buf):
        """The h5fz container (bytes) of one chunk: buf, a float32 / float64
        ndarray whose shape is the chunk's."""
        return self._codec.encode(buf, self._fill)

    def decode(self, buf, out=None):
        """The chunk's values, flat (numpy), or copied into out."""
        values = self._codec.decode(ensure_contiguous_ndarray(buf))
        return ndarray_copy(values, out) if out is not None else values

    def get_config(self):
        config = {"id": self.codec_id}
        config.update(self._codec.config)
        config["fill_value"] = fill_to_json(self._fill)
        return config

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config.pop("id", None)
        unknown = set(config) - set(KEYWORDS) - {"spec", "fill_value"}
        if unknown:
            raise ValueError("h5fz: unknown codec settings %s" % sorted(unknown))
        return cls(**config)

    def __repr__(self):
        return "h5fz.numcodecs.H5fz(%r, fill_value=%r)" % (self.spec, self._fill)


numcodecs.register_codec(H5fz)  # by id, for get_codec(config) (Zarr v2 metadata, kerchunk references)
