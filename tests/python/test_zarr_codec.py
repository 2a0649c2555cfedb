"""The numcodecs codec h5fz.numcodecs.H5fz and the Zarr v3 codec
h5fz.zarr.H5fz (docs/python.md, "Zarr, Dask and kerchunk"): the same
container bytes as the HDF5 filter for the same chunk shape, type, fill
value and spec (compared with h5py's read_direct_chunk), every element
within the bound after a Zarr round trip, registration by name in a new
process after `import h5fz` (and no hard dependency on either library),
configurations, refusals. Skipped without zarr 3 and numcodecs."""
import pickle

import numpy as np
import pytest

import codec_testlib as ct
import h5fz_testlib as lib

MISSING = ct.missing("numcodecs", "zarr")
pytestmark = pytest.mark.skipif(MISSING is not None, reason=str(MISSING))
if MISSING is None:
    import h5py
    import numcodecs
    import zarr
    import h5fz
    import h5fz.numcodecs
    import h5fz.zarr


MODES = [("abs", 1e-3, {"abs": 1e-3}), ("rel", 1e-3, {"rel": 1e-3}), ("pw_rel", 1e-3, {"pw_rel": 1e-3}),
         ("lossless", 0.0, {"lossless": True}),
         ("abs", 5e-3, {"abs": 5e-3, "chain": "lorenzo_nd zigzag bitshuffle rze"}),
         ("abs", 1e-2, {"abs": 1e-2, "chain": ["delta", "zigzag", "bitpack"], "subchunk": 8192})]
IDS = ["abs", "rel", "pw_rel", "lossless", "abs-lorenzo_nd", "abs-bitpack"]


def _field(dtype="f4", nan=False):
    a = ct.real_field().astype(dtype)
    if nan:
        a = a.copy()
        a[3, 5, 7:20] = np.nan
        a[40, 99, 0] = np.inf
    return a


def _hdf5(tmp_path, a, chunks, kw, fill=None):
    path = tmp_path / "filter.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("t", data=a, chunks=chunks, fillvalue=fill, **h5fz.Filter(**kw))
    return ct.hdf5_chunks(path, "t")


@pytest.mark.parametrize("mode,bound,kw", MODES, ids=IDS)
def test_numcodecs_chunks_equal_the_filter(tmp_path, mode, bound, kw):
    """Every chunk, edge chunks (padded with the fill value) included, is the
    filter's container byte for byte, and decodes within the bound."""
    a = _field()
    chunks = (16, 48, 100)  # edge chunks along two dims
    stored = _hdf5(tmp_path, a, chunks, kw)
    codec = h5fz.numcodecs.H5fz(**kw)
    for off, sl in ct.chunk_slices(a.shape, chunks):
        block = ct.padded(a, sl, chunks, 0.0)
        container = codec.encode(block)
        assert container == stored[off], "chunk %s differs from the filter's (%s)" % (off, codec.spec)
        back = codec.decode(container).reshape(chunks)
        ct.check_mode(block, back, mode, bound, chunks, what="chunk %s" % (off,))


@pytest.mark.parametrize("dtype", ["f4", "f8"])
def test_numcodecs_float64_nan_fill_equal_the_filter(tmp_path, dtype):
    """float64 and float32 with NaN, Inf and a fill value other than 0 under
    rel= (the padding is left out of each chunk's range): still the filter's
    bytes, and every element within each chunk's bound."""
    a = _field(dtype, nan=True)
    chunks = (12, 100, 64)
    fill = -999.0
    stored = _hdf5(tmp_path, a, chunks, {"rel": 1e-3}, fill=fill)
    codec = h5fz.numcodecs.H5fz(rel=1e-3, fill_value=fill)
    for off, sl in ct.chunk_slices(a.shape, chunks):
        block = ct.padded(a, sl, chunks, fill)
        container = codec.encode(block)
        assert container == stored[off], "chunk %s differs from the filter's" % (off,)
        ct.check_mode(block, codec.decode(container).reshape(chunks), "rel", 1e-3, chunks, fill=fill)


def test_numcodecs_big_endian_equal_the_filter(tmp_path):
    """A big-endian chunk is coded as the filter codes a big-endian dataset
    (the container records the order) and decodes to big-endian values."""
    a = _field().astype(">f4")
    chunks = (25, 100, 100)
    stored = _hdf5(tmp_path, a, chunks, {"abs": 1e-3})
    codec = h5fz.numcodecs.H5fz(abs=1e-3)
    for off, sl in ct.chunk_slices(a.shape, chunks):
        container = codec.encode(a[sl])
        assert container == stored[off], "chunk %s differs from the filter's" % (off,)
        back = codec.decode(container)
        assert back.dtype == np.dtype(">f4")
        ct.check_mode(a[sl], back.reshape(chunks), "abs", 1e-3, chunks)


@pytest.mark.parametrize("mode,bound,kw", MODES, ids=IDS)
def test_zarr_v3_round_trip_and_filter_bytes(tmp_path, mode, bound, kw):
    """zarr.create_array(compressors=[h5fz.zarr.H5fz(...)]): every element
    within the bound, and the stored chunk files are the filter's
    containers (Zarr hands the codec the chunk shape and fill value)."""
    a = _field()
    chunks = (16, 48, 100)
    store = tmp_path / "a.zarr"
    z = zarr.create_array(store, shape=a.shape, chunks=chunks, dtype="f4",
                          compressors=[h5fz.zarr.H5fz(**kw)])
    z[:] = a
    back = zarr.open_array(store, mode="r")[:]
    ct.check_mode(a, back, mode, bound, chunks)
    stored = _hdf5(tmp_path, a, chunks, kw)
    for off in stored:
        key = "c/" + "/".join(str(o // c) for o, c in zip(off, chunks))
        assert (store / key).read_bytes() == stored[off], "zarr chunk %s is not the filter's" % key


def test_zarr_v3_sharded(tmp_path):
    """Inside shards (the codec among the sharding codec's inner codecs)."""
    a = _field()
    z = zarr.create_array(tmp_path / "sharded.zarr", shape=a.shape, chunks=(10, 50, 50), shards=(50, 100, 100),
                          dtype="f4", compressors=[h5fz.zarr.H5fz(pw_rel=1e-3)])
    z[:] = a
    assert z.metadata.to_dict()["codecs"][0]["name"] == "sharding_indexed"
    ct.check_mode(a, zarr.open_array(tmp_path / "sharded.zarr", mode="r")[:], "pw_rel", 1e-3, (10, 50, 50))


def test_zarr_v2_format_with_the_numcodecs_codec(tmp_path):
    """zarr 3 writing a Zarr v2 array (zarr_format=2) through the numcodecs
    codec; order="F" chunks come back in their order."""
    a = _field()
    for order in ("C", "F"):
        store = tmp_path / ("v2-%s.zarr" % order)
        z = zarr.create_array(store, shape=a.shape, chunks=(10, 64, 64), dtype="f4", zarr_format=2, order=order,
                              compressors=h5fz.numcodecs.H5fz(abs=1e-3))
        z[:] = a
        ct.check_mode(a, zarr.open_array(store, mode="r")[:], "abs", 1e-3, (10, 64, 64), what=order)


def test_zarr_reads_by_name_in_a_new_process(tmp_path):
    """A new process that imports h5fz opens both arrays by the codec's name
    alone (the import registers it with zarr and numcodecs) and reads them
    within the bound."""
    a = _field()
    np.save(tmp_path / "orig.npy", a)
    zarr.create_array(tmp_path / "v3.zarr", shape=a.shape, chunks=(25, 50, 50), dtype="f4",
                      compressors=[h5fz.zarr.H5fz(pw_rel=1e-3)])[:] = a
    zarr.create_array(tmp_path / "v2.zarr", shape=a.shape, chunks=(25, 50, 50), dtype="f4", zarr_format=2,
                      compressors=h5fz.numcodecs.H5fz(pw_rel=1e-3))[:] = a
    out = ct.run_python(
        "import sys, numpy as np, zarr, h5fz\n"
        "a = np.load(sys.argv[0] if False else %r)\n"
        "for name in ('v3.zarr', 'v2.zarr'):\n"
        "    z = zarr.open_array(%r + '/' + name, mode='r')\n"
        "    b = z[:]\n"
        "    o, d = a.astype('f8'), b.astype('f8')\n"
        "    assert np.all(np.abs(o - d) <= 1e-3 * np.abs(o)), name\n"
        "    print(name, type(z.compressors[0]).__module__)\n"
        % (str(tmp_path / "orig.npy"), str(tmp_path)))
    assert "v3.zarr h5fz.zarr" in out and "v2.zarr h5fz.numcodecs" in out, out


def test_import_h5fz_imports_neither_and_registers_after_their_import():
    """`import h5fz` loads neither numcodecs nor zarr (zarr 3's import is
    slow); importing them afterwards registers the codecs, and so does
    `import h5fz.zarr` before zarr."""
    out = ct.run_python(
        "import sys, h5fz\n"
        "print('loaded', 'zarr' in sys.modules, 'numcodecs' in sys.modules)\n"
        "import numcodecs, zarr, zarr.registry\n"
        "print('numcodecs', type(numcodecs.get_codec({'id': 'h5fz', 'abs': 1e-3})).__module__)\n"
        "print('zarr', zarr.registry.get_codec_class('h5fz').__module__)\n")
    assert "loaded False False" in out and "numcodecs h5fz.numcodecs" in out and "zarr h5fz.zarr" in out, out
    out = ct.run_python(
        "import h5fz.zarr, zarr.registry, numcodecs\n"
        "print('zarr', zarr.registry.get_codec_class('h5fz') is h5fz.zarr.H5fz)\n"
        "print('numcodecs', type(numcodecs.get_codec({'id': 'h5fz'})).__name__)\n")
    assert "zarr True" in out and "numcodecs H5fz" in out, out


def test_import_h5fz_without_numcodecs_or_zarr():
    """Neither is a dependency: with both unimportable, `import h5fz` works
    and h5py's side too; h5fz.zarr names what it needs."""
    out = ct.run_python(
        "import sys\n"
        "sys.modules['numcodecs'] = None; sys.modules['zarr'] = None\n"
        "import h5fz\n"
        "print('registered', h5fz.get_config()['registered'])\n"
        "try:\n"
        "    import h5fz.zarr\n"
        "except ImportError as e:\n"
        "    print('zarr:', e)\n")
    assert "registered True" in out and "zarr:" in out and "zarr" in out.split("zarr:")[1], out


def test_configurations_round_trip():
    """get_config/from_config (numcodecs), to_dict/from_dict (zarr), pickle
    (what dask.distributed sends to workers): the same codec, the same
    bytes; the C parser's canonical text in .spec."""
    a = _field()[:8]
    for kw in [m[2] for m in MODES] + [{"spec": "abs=1e-3 delta zigzag bitpack"}]:
        n = h5fz.numcodecs.H5fz(**kw)
        n2 = numcodecs.get_codec(n.get_config())
        assert isinstance(n2, h5fz.numcodecs.H5fz) and n2 == n and n2.spec == n.spec == h5fz.Filter(**kw).spec
        assert pickle.loads(pickle.dumps(n)).encode(a) == n.encode(a)
        z = h5fz.zarr.H5fz(**kw)
        z2 = h5fz.zarr.H5fz.from_dict(z.to_dict())
        assert z2 == z and hash(z2) == hash(z) and z2.spec == n.spec
        assert pickle.loads(pickle.dumps(z)) == z
        assert zarr.registry.get_codec_class("h5fz") is h5fz.zarr.H5fz
    assert h5fz.numcodecs.H5fz(abs=1e-3).get_config() == {"id": "h5fz", "abs": 1e-3, "fill_value": 0.0}
    assert h5fz.zarr.H5fz(rel=1e-4).to_dict() == {"name": "h5fz", "configuration": {"rel": 1e-4}}
    assert numcodecs.get_codec({"id": "h5fz", "rel": 1e-3, "fill_value": "NaN"}).get_config()["fill_value"] == "NaN"


def test_refusals():
    """Clear errors: bad specs (the C parser's message), integer arrays at
    create_array, unknown settings, a corrupt container, a container coded
    for a looser bound than the codec's, rel= without a fill value."""
    with pytest.raises(ValueError, match="delta"):
        h5fz.numcodecs.H5fz("abs=1e-3 bitshuffle delta rze")
    with pytest.raises(ValueError, match="one of abs="):
        h5fz.zarr.H5fz(abs=1e-3, rel=1e-3)
    with pytest.raises(TypeError, match="float32 or float64"):
        zarr.create_array(zarr.storage.MemoryStore(), shape=(10,), dtype="i4", compressors=[h5fz.zarr.H5fz()])
    with pytest.raises(TypeError, match="float32 or float64"):
        h5fz.numcodecs.H5fz(abs=1e-3).encode(np.arange(10, dtype="i4"))
    # bytes that are not the values as little-endian floats would be lost
    for kw in ({"serializer": zarr.codecs.BytesCodec(endian="big")},
               {"compressors": [zarr.codecs.Crc32cCodec(), h5fz.zarr.H5fz(abs=1e-3)]}):
        kw.setdefault("compressors", [h5fz.zarr.H5fz(abs=1e-3)])
        with pytest.raises(ValueError, match="first compressor"):
            zarr.create_array(zarr.storage.MemoryStore(), shape=(100,), chunks=(50,), dtype="f4", **kw)
    with pytest.raises(ValueError, match="unknown"):
        numcodecs.get_codec({"id": "h5fz", "abs": 1e-3, "level": 5})
    a = _field()[:4]
    container = bytearray(h5fz.numcodecs.H5fz(abs=1e-2).encode(a))
    with pytest.raises(RuntimeError, match="bound"):
        h5fz.numcodecs.H5fz(abs=1e-3).decode(bytes(container))
    container[len(container) // 2] ^= 0x40
    with pytest.raises(RuntimeError, match="cannot decode"):
        h5fz.numcodecs.H5fz(abs=1e-2).decode(bytes(container))
    with pytest.raises(ValueError, match="fill value"):
        h5fz.numcodecs.H5fz(rel=1e-3, fill_value=None).encode(a)


def test_pyproject_entry_points_name_the_codecs():
    """The entry points a pip-installed h5fz declares (found by numcodecs
    and zarr without `import h5fz`) name these classes under their ids."""
    import importlib
    import tomllib
    project = tomllib.loads((lib.REPO / "pyproject.toml").read_text())["project"]
    groups = project["entry-points"]
    for group, cls, codec_name in (("numcodecs.codecs", h5fz.numcodecs.H5fz, h5fz.numcodecs.H5fz.codec_id),
                                   ("zarr.codecs", h5fz.zarr.H5fz, h5fz.zarr.NAME)):
        module, _, attr = groups[group][codec_name].partition(":")
        assert getattr(importlib.import_module(module), attr) is cls, group
    assert "zarr" in project["optional-dependencies"]
