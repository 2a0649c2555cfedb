"""h5fz.zarr.H5fz: the h5fz codec for Zarr v3 (zarr 3.x; codec name
"h5fz"), a bytes-to-bytes codec for compressors=:

    import zarr, h5fz
    z = zarr.create_array(store, shape=a.shape, chunks=(16, 256, 256), dtype="f4",
                          compressors=[h5fz.zarr.H5fz(abs=1e-3)])

Configured like h5fz.Filter (spec text, or abs=, rel=, pw_rel=,
lossless=True, chain=, subchunk=). Each chunk is coded exactly as the HDF5
filter codes a chunk of the array's chunk shape, type and fill value (Zarr
hands the codec the chunk's spec), on the GPU when there is one, on the CPU
otherwise. It takes the values as the serializer wrote them, which must be
zarr's "bytes" codec little-endian (zarr's default). This module
registers it with zarr by name; `import h5fz` imports it as soon as zarr is
imported (before or after), and the package's "zarr.codecs" entry point
finds it without the import. docs/python.md,
"Zarr, Dask and kerchunk"."""
import asyncio
import sys
from dataclasses import dataclass

import numpy as np
import zarr.registry
from zarr.abc.codec import BytesBytesCodec
from zarr.codecs import BytesCodec
from zarr.core.common import parse_named_configuration

from ._codec import KEYWORDS, ChunkCodec

NAME = "h5fz"


def _float_dtype(dtype):
    """The numpy type of a Zarr data type (a ZDType in zarr >= 3.1, a numpy
    dtype before), little-endian, as the default serializer writes it;
    TypeError for anything but float32 / float64."""
    native = np.dtype(dtype.to_native_dtype() if hasattr(dtype, "to_native_dtype") else dtype)
    if native.kind != "f" or native.itemsize not in (4, 8):
        raise TypeError("h5fz.zarr.H5fz compresses float32 or float64 arrays, not %s" % native)
    return native.newbyteorder("<")


def _check_place(codec, frame):
    """zarr hands a compressor bytes only, so the codec must come right
    after a serializer that writes the values as little-endian floats:
    zarr's "bytes" codec, little-endian. A big-endian one, another
    serializer, or a compressor before h5fz would have it code bytes that
    are not those values, and lose them. The codec list is the caller's
    (zarr 3.1 validates each codec from ArrayV3Metadata._validate_metadata
    and BatchedCodecPipeline.validate, whose `self` holds the list); where
    it cannot be found nothing is checked (docs/python.md)."""
    owner = frame.f_locals.get("self") if frame is not None else None
    try:
        codecs = list(getattr(owner, "codecs", owner))
    except TypeError:
        return
    place = next((i for i, c in enumerate(codecs) if c is codec), None)
    if place is None:  # an evolved copy: equal, not the same object
        place = next((i for i, c in enumerate(codecs) if c == codec), None)
    if not place:  # not in this list, or first (no serializer: zarr refuses that itself)
        return
    before = codecs[place - 1]
    if not isinstance(before, BytesCodec) or getattr(before.endian, "value", None) != "little":
        raise ValueError("h5fz.zarr.H5fz must be the first compressor, after zarr's little-endian \"bytes\" "
                         "serializer (the default); here it follows %r, so it would code bytes that are not the "
                         "array's values" % (before,))


@dataclass(frozen=True)
class H5fz(BytesBytesCodec):
    """Zarr v3 codec "h5fz" (compressors=): error-bounded lossy compression
    of float32 / float64 chunks. H5fz(abs=1e-3), H5fz(rel=1e-4),
    H5fz(pw_rel=1e-3), H5fz(lossless=True), H5fz("abs=1e-3 delta zigzag
    bitpack"). configuration: the keywords given (to_dict / from_dict)."""

    is_fixed_size = False
    configuration: tuple

    def __init__(self, spec=None, *, chain=None, subchunk=None, **bounds):
        codec = ChunkCodec(spec, chain=chain, subchunk=subchunk, **bounds)
        # a frozen dataclass field: hashable and compared by value (a chain list as a tuple)
        object.__setattr__(self, "configuration",
                           tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in codec.config.items())))
        object.__setattr__(self, "_codec", codec)

    @property
    def spec(self):
        """The canonical spec text."""
        return self._codec.spec

    @classmethod
    def from_dict(cls, data):
        _, configuration = parse_named_configuration(data, NAME, require_configuration=False)
        configuration = dict(configuration or {})
        unknown = set(configuration) - set(KEYWORDS) - {"spec"}
        if unknown:
            raise ValueError("h5fz.zarr.H5fz: unknown configuration %s" % sorted(unknown))
        return cls(**configuration)

    def to_dict(self):
        return {"name": NAME, "configuration": {k: list(v) if isinstance(v, tuple) else v
                                                for k, v in self.configuration}}

    def validate(self, *, shape, dtype, chunk_grid):
        _float_dtype(dtype)
        _check_place(self, sys._getframe(1))

    def _encode_sync(self, chunk_bytes, chunk_spec):
        dtype = _float_dtype(chunk_spec.dtype)
        values = chunk_bytes.as_numpy_array().view(dtype).reshape(chunk_spec.shape)
        fill = chunk_spec.fill_value
        container = self._codec.encode(values, None if fill is None else float(fill))
        return chunk_spec.prototype.buffer.from_bytes(container)

    def _decode_sync(self, chunk_bytes, chunk_spec):
        dtype = _float_dtype(chunk_spec.dtype)
        values = self._codec.decode(chunk_bytes.as_numpy_array())
        if values.dtype.itemsize != dtype.itemsize or values.size != int(np.prod(chunk_spec.shape)):
            raise RuntimeError("h5fz.zarr.H5fz: a chunk of %d %s values where the array has chunks of %s %s"
                               % (values.size, values.dtype, chunk_spec.shape, dtype))
        return chunk_spec.prototype.buffer.from_array_like(values.astype(dtype, copy=False).view(np.uint8))

    async def _encode_single(self, chunk_bytes, chunk_spec):
        return await asyncio.to_thread(self._encode_sync, chunk_bytes, chunk_spec)

    async def _decode_single(self, chunk_bytes, chunk_spec):
        return await asyncio.to_thread(self._decode_sync, chunk_bytes, chunk_spec)

    def compute_encoded_size(self, _input_byte_length, _chunk_spec):
        raise NotImplementedError  # variable-sized, as every compressor's

    def __repr__(self):
        return "h5fz.zarr.H5fz(%r)" % self.spec


zarr.registry.register_codec(NAME, H5fz)  # by name, for arrays opened from their metadata
