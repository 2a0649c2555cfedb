"""docs/format.md is enough to decode h5fz chunks: second_decoder.py, written
from the document alone, must give bit-identical results to the C filter on
chunks the real library writes (several dtypes, chains, outliers, edge
chunks, RZE-bypassed sub-chunks, stored-raw chunks) and on the golden files.

Runs under ctest (python_test_second_decoder), which sets HDF5_PLUGIN_PATH,
H5FZ_BIN and H5FZ_FILTER_ID; conftest.py supplies defaults otherwise.
"""
import json
import os
import pathlib
import struct
import subprocess
import zlib

import h5py
import numpy as np
import pytest

import second_decoder as sd

REPO = pathlib.Path(__file__).resolve().parents[2]
GOLDEN = REPO / "tests" / "golden" / "golden_v1.h5"
FILTER_ID = int(os.environ["H5FZ_FILTER_ID"])
BIN = os.environ["H5FZ_BIN"]


def cd_values(spec):
    out = subprocess.run([BIN, "cd-values", "--json", spec], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return tuple(json.loads(out.stdout)["cd_values"])


_mem = [0]


def mem_file():
    _mem[0] += 1
    # rdcc_nbytes=0: no chunk cache, so every read goes through the filter
    # (a cached chunk would hand back the values as written, not as decoded)
    return h5py.File("sd_mem_%d.h5" % _mem[0], "w", driver="core", backing_store=False,
                     rdcc_nbytes=0)


def chunks_of(dset):
    """[(chunk offset, raw stored bytes)] of every stored chunk."""
    out = []
    for i in range(dset.id.get_num_chunks()):
        info = dset.id.get_chunk_info(i)
        mask, raw = dset.id.read_direct_chunk(info.chunk_offset)
        assert mask == 0
        out.append((info.chunk_offset, raw))
    return out


def c_decode_full_chunk(raw, chunk_shape, dtype):
    """The C filter's decode of one stored chunk, padding included: put the
    chunk into a one-chunk dataset of the chunk's shape and read it."""
    with mem_file() as f:
        d = f.create_dataset("c", shape=chunk_shape, dtype=dtype, chunks=chunk_shape,
                             compression=FILTER_ID, compression_opts=cd_values("abs=1"))
        d.id.write_direct_chunk((0,) * len(chunk_shape), raw, 0)
        return d[...]


def check_dataset(dset, expect_raw=None):
    """Decode every chunk with the second decoder; compare with the C filter
    (whole padded chunk) and with the dataset read through h5py. Returns the
    parsed headers."""
    whole = dset[...]
    headers = []
    for offset, raw in chunks_of(dset):
        h = sd.parse_header(raw)
        headers.append(h)
        mine_bytes = sd.decode_chunk(raw)
        assert len(mine_bytes) == h.input_bytes == np.prod(dset.chunks) * dset.dtype.itemsize
        mine = np.frombuffer(mine_bytes, dset.dtype).reshape(dset.chunks)
        theirs = c_decode_full_chunk(raw, dset.chunks, dset.dtype)
        assert mine.tobytes() == theirs.tobytes(), "chunk %s differs from the C decode" % (offset,)
        sl = tuple(slice(o, min(o + c, n)) for o, c, n in zip(offset, dset.chunks, dset.shape))
        valid = tuple(slice(0, s.stop - s.start) for s in sl)
        assert mine[valid].tobytes() == whole[sl].tobytes()
    if expect_raw is not None:
        assert any(h.stored_raw for h in headers) == expect_raw
    return headers


def write(f, name, data, chunks, spec):
    return f.create_dataset(name, data=data, chunks=chunks, compression=FILTER_ID,
                            compression_opts=cd_values(spec))


def field(shape, dtype, seed=1):
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    t = np.linspace(0, 6 * np.pi, n)
    x = 280 + 10 * np.sin(t) + np.cumsum(rng.normal(0, 0.05, n))
    return x.reshape(shape).astype(dtype)


def plant_specials(x):
    flat = x.reshape(-1)
    flat[3] = np.nan
    flat[4] = np.inf
    flat[5] = -np.inf
    flat[6] = -0.0
    flat[7] = np.float32(3e38) if x.dtype == np.float32 else 1e300  # beyond MAXBIN bins
    flat[40:90] = np.nan  # a run: cheap in the side section
    flat[-1] = -0.0
    return x


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("spec", [
    "",                                                   # filter defaults: rel=1e-4, default chain
    "abs=1e-3",                                           # default chain
    "abs=1e-4 delta negabinary bitshuffle rze subchunk=512",
    "abs=1e-3 delta zigzag rze",                          # coder on words (no bitshuffle)
    "abs=1e-2 raw",                                       # raw coder: every sub-chunk bit 31
    "rel=1e-3 zigzag bitshuffle raw subchunk=1024",
    "abs=0.05 negabinary bitshuffle rze",
])
def test_chains_with_outliers_and_edges(dtype, spec):
    x = plant_specials(field((37, 53), dtype))
    with mem_file() as f:
        if spec:
            d = write(f, "x", x, (16, 32), spec)
        else:  # UD=<id>,0,0: no cd_values at all
            d = f.create_dataset("x", data=x, chunks=(16, 32), compression=FILTER_ID)
        raw_coder = "raw" in spec.split()
        hs = check_dataset(d, expect_raw=raw_coder)
        assert len(hs) == 6  # 3 x 2 chunks, four of them edge chunks
        assert all(h.dtype == (1 if dtype == np.float32 else 2) for h in hs)
        if raw_coder:
            # docs/format.md 9.1: the raw coder's payload is never smaller than
            # the input, so such a chunk always falls back to stored raw
            assert all(h.stored_raw for h in hs)
            assert d[...].tobytes() == x.tobytes()
        else:
            assert sum(h.n_outliers for h in hs) >= 55


def test_stored_raw_random_bits():
    rng = np.random.default_rng(7)
    # random bits: NaNs with payloads, Infs, subnormals, huge values
    bits = rng.integers(0, 2**32, size=8192, dtype=np.uint64).astype(np.uint32)
    with mem_file() as f:
        d = write(f, "r", bits.view(np.float32), (1024,), "abs=1e-6")
        hs = check_dataset(d, expect_raw=True)
        raw_chunks = [c for c, h in zip(chunks_of(d), hs) if h.stored_raw]
        for (offset, raw) in raw_chunks:  # stored raw is exact
            o = offset[0]
            assert sd.decode_chunk(raw) == bits[o:o + 1024].tobytes()


def test_rze_bypass_and_multi_subchunk():
    x = field((8192,), np.float32)
    rng = np.random.default_rng(3)
    # one sub-chunk of small bins of random sign without delta/zigzag: every
    # byte of the bit planes is non-zero (negative words are all ones up
    # top), RZE cannot shrink it, so that sub-chunk is stored with bit 31
    x[1024:2048] = rng.integers(-2**20, 2**20, 1024)
    with mem_file() as f:
        d = write(f, "b", x, (8192,), "abs=0.5 bitshuffle rze subchunk=4096")
        (_, raw), = chunks_of(d)
        h = sd.parse_header(raw)
        assert not h.stored_raw and h.n_subchunks == 8
        ents = struct.unpack_from("<8I", raw, 80)
        assert any(e & sd.RAW_BIT for e in ents) and not all(e & sd.RAW_BIT for e in ents)
        check_dataset(d)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_rel_constant_and_nonfinite_chunks_are_exact(dtype):
    x = np.full((3, 500), 1.25, dtype)
    x[1] = np.nan
    x[1, 17] = np.inf
    x[2] = field((500,), dtype)
    with mem_file() as f:
        d = write(f, "c", x, (1, 500), "rel=1e-2")
        hs = check_dataset(d)
        assert hs[0].abs_bound == 0.0 and hs[1].abs_bound == 0.0 and hs[2].abs_bound > 0
        assert hs[0].n_outliers == 500 and not hs[0].stored_raw  # side section of 500
        assert d[...][:2].tobytes() == x[:2].tobytes()


def test_worked_example_of_format_md():
    """The chunk annotated in docs/format.md §10, byte for byte."""
    x = (1 + 0.01 * np.arange(160)).astype(np.float32)
    x[5], x[6], x[7] = np.nan, -0.0, np.inf
    with mem_file() as f:
        d = write(f, "x", x, (160,), "abs=0.005 subchunk=512")
        (_, raw), = chunks_of(d)
        check_dataset(d)
    assert len(raw) == 308
    assert raw[:0x10].hex() == "4835465a015001008002000000000000"
    assert raw[0x50:0x58].hex() == "590000002b000000"
    assert raw[0xdc:0xe4].hex() == "220000002a000000"
    assert raw[-4:].hex() == "6ae35eef"


def test_golden_files():
    if not GOLDEN.exists():
        pytest.skip("no golden file")
    with h5py.File(GOLDEN, "r") as f:
        names = sorted(f)
        assert names
        n = 0
        for name in names:
            hs = check_dataset(f[name])
            assert all(h.version == 1 for h in hs)
            n += len(hs)
        assert n > 0


def _reseal(b):
    b = bytearray(b)
    struct.pack_into("<I", b, len(b) - 4, zlib.crc32(bytes(b[:-4])))
    return bytes(b)


def test_errors_match_the_c_decoder():
    x = plant_specials(field((2000,), np.float32))
    with mem_file() as f:
        d = write(f, "e", x, (2000,), "abs=1e-3 subchunk=2048")
        (_, raw), = chunks_of(d)
    cases = {
        "version": _reseal(raw[:4] + b"\x02" + raw[5:]),
        "checksum": raw[:100] + bytes([raw[100] ^ 1]) + raw[101:],
        "truncated": raw[:50],
        "corrupt": _reseal(raw[:80] + b"\xff\xff\x00\x00" + raw[84:]),  # table entry > L
    }
    for status, bad in cases.items():
        with pytest.raises(sd.FormatError) as e:
            sd.decode_chunk(bad)
        assert e.value.status == status, (status, e.value)
        with pytest.raises(OSError) as ce:
            c_decode_full_chunk(bad, (2000,), np.float32)
        name = {"version": "unsupported chunk format version", "checksum": "checksum mismatch",
                "truncated": "truncated chunk", "corrupt": "corrupt chunk"}[status]
        assert name in str(ce.value), str(ce.value)
