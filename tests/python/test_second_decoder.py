"""docs/format.md is enough to decode h5fz chunks: second_decoder.py, written
from the document alone, must give bit-identical results to the C filter on
chunks the real library writes (several dtypes, chains, outliers, edge
chunks, RZE-bypassed sub-chunks, stored-raw chunks; modes PW_REL and
LOSSLESS; the lorenzo transform on 1-, 2- and 3-D chunks; lorenzo_nd with
each of its predictors, ranks 1 to 4; the bitpack coder and its decode
errors; the huff coder (format version 3) in every mode and byte order, and
every refusal of its decoder; huffctx (format version 4); lorenzo_interp
(format version 5) with each of its predictors,
interpolation included, and its header checks; datasets with a fill value,
whose fill values come back exactly as outliers) and on the golden files.

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


def chunk_kind(dset):
    """What the C decode of dset's chunks needs: chunk shape, dtype and the
    user part of its h5fz cd_values (docs/filter.md: version, mode, bound,
    sub-chunk, n_ops, ops); the filter refuses a chunk of another bound or
    shape, so the scratch dataset must be like dset."""
    dcpl = dset.id.get_create_plist()
    cd = next(dcpl.get_filter(i)[2] for i in range(dcpl.get_nfilters())  # (id, flags, cd_values, name)
              if dcpl.get_filter(i)[0] == FILTER_ID)
    return dset.chunks, dset.dtype, tuple(cd[:6 + cd[5]])


def c_decode_full_chunk(raw, kind):
    """The C filter's decode of one stored chunk, padding included: put the
    chunk into a one-chunk dataset like its own (chunk_kind) and read it."""
    chunk_shape, dtype, cd = kind
    with mem_file() as f:
        d = f.create_dataset("c", shape=chunk_shape, dtype=dtype, chunks=chunk_shape,
                             compression=FILTER_ID, compression_opts=cd)
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
        theirs = c_decode_full_chunk(raw, chunk_kind(dset))
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


@pytest.mark.parametrize("version", [1, 2, 3, 4, 5])
def test_golden_files(version):
    path = GOLDEN.with_name("golden_v%d.h5" % version)
    if not path.exists():
        pytest.skip("no golden file")
    with h5py.File(path, "r") as f:
        names = sorted(f)
        assert names
        n = 0
        for name in names:
            hs = check_dataset(f[name])
            assert all(h.version == version for h in hs)
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
        kind = chunk_kind(d)
    cases = {
        "version": _reseal(raw[:4] + b"\x06" + raw[5:]),  # newer than the C decoder knows (5)
        "checksum": raw[:100] + bytes([raw[100] ^ 1]) + raw[101:],
        "truncated": raw[:50],
        "corrupt": _reseal(raw[:80] + b"\xff\xff\x00\x00" + raw[84:]),  # table entry > L
    }
    for status, bad in cases.items():
        with pytest.raises(sd.FormatError) as e:
            sd.decode_chunk(bad)
        assert e.value.status == status, (status, e.value)
        with pytest.raises(OSError) as ce:
            c_decode_full_chunk(bad, kind)
        name = {"version": "unsupported chunk format version", "checksum": "checksum mismatch",
                "truncated": "truncated chunk", "corrupt": "corrupt chunk"}[status]
        assert name in str(ce.value), str(ce.value)


# ---- format version 2: big-endian datasets (docs/format.md §3)

@pytest.mark.parametrize("dtype", [">f4", ">f8"])
@pytest.mark.parametrize("spec", ["abs=1e-3", "rel=1e-4 lorenzo_nd zigzag bitshuffle rze", "pw_rel=1e-3",
                                  "lossless", "abs=1e-3 raw"])
def test_big_endian_chunks(dtype, spec):
    """Chunks of a big-endian dataset record the byte order (version 2, flag
    bit 1) and decode, in the second decoder as in the C filter, to
    big-endian values; stored-raw ones too (the raw coder)."""
    x = plant_specials(field((30, 70), np.float64)).astype(dtype)
    with mem_file() as f:
        d = write(f, "be", x, (16, 32), spec)
        headers = check_dataset(d, expect_raw=spec.endswith(" raw"))
    assert all(h.version == 2 and h.flags & sd.FLAG_BIG_ENDIAN for h in headers)


def test_version_2_flag_needs_version_2():
    """Flag bit 1 means nothing in version 1: a version 1 chunk with it is
    corrupt, in both decoders."""
    x = field((2000,), np.float32)
    with mem_file() as f:
        d = write(f, "le", x, (2000,), "abs=1e-3")
        (_, raw), = chunks_of(d)
        kind = chunk_kind(d)
    bad = _reseal(raw[:7] + bytes([raw[7] | 2]) + raw[8:])
    with pytest.raises(sd.FormatError) as e:
        sd.decode_chunk(bad)
    assert e.value.status == "corrupt"
    with pytest.raises(OSError) as ce:
        c_decode_full_chunk(bad, kind)
    assert "corrupt chunk" in str(ce.value)


# ---- modes PW_REL and LOSSLESS, ops lorenzo and bitpack (docs/format.md §5.3-§5.5)

def signed_field(shape, dtype, seed=5):
    """Positive and negative values over many decades, with +0.0 runs, -0.0,
    NaN, +-Inf, subnormals and the smallest normal."""
    rng = np.random.default_rng(seed)
    x = field(shape, np.float64, seed)
    flat = x.reshape(-1)
    n = flat.size
    flat *= np.where(np.arange(n) % 7 < 3, -1.0, 1.0)
    flat *= 10.0 ** rng.uniform(-6, 6, n) if dtype == np.float32 else 10.0 ** rng.uniform(-60, 60, n)
    x = x.astype(dtype)
    flat = x.reshape(-1)
    tiny = np.finfo(dtype).tiny
    flat[10:30] = 0.0
    flat[31] = -0.0
    flat[32] = np.nan
    flat[33] = -np.inf
    flat[34] = np.inf
    flat[35] = tiny                 # smallest normal
    flat[36] = -tiny
    flat[37:60] = tiny * np.linspace(1e-6, 0.9, 23).astype(dtype)  # subnormals
    flat[60] = -tiny / 3
    flat[61] = np.finfo(dtype).smallest_subnormal
    flat[62] = np.finfo(dtype).max
    flat[63] = -np.finfo(dtype).max
    return x


def bits_equal(a, b):
    return a.tobytes() == b.tobytes()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("bound", [1e-3, 1e-5])
def test_pw_rel(dtype, bound):
    x = signed_field((37, 53), dtype)
    with mem_file() as f:
        d = write(f, "p", x, (16, 32), "pw_rel=%g subchunk=1024" % bound)
        hs = check_dataset(d, expect_raw=False)
        back = d[...]
    assert all(h.mode == sd.MODE_PW_REL and h.abs_bound == bound for h in hs)
    assert all(h.n_outliers < h.n_elements // 2 for h in hs)  # most values are binned
    # the guarantee (spec.md §6): exact specials and zeros, |x - x'| <= eb |x|
    xs, bs = x.astype(np.float64).reshape(-1), back.astype(np.float64).reshape(-1)
    xr, br = x.reshape(-1), back.reshape(-1)
    fin = np.isfinite(xs) & (xs != 0)
    assert (np.abs(xs[fin] - bs[fin]) <= bound * np.abs(xs[fin])).all()
    assert (np.signbit(xr[fin]) == np.signbit(br[fin])).all()
    special = ~fin
    assert bits_equal(xr[special], br[special])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_lossless(dtype):
    x = signed_field((37, 53), dtype)
    rng = np.random.default_rng(11)
    flat = x.reshape(-1)
    payloads = rng.integers(1, 1 << 20, 8)  # NaNs with payloads
    flat[100:108] = (np.full(8, np.nan, dtype).view("u%d" % x.itemsize) | payloads.astype("u%d" % x.itemsize)).view(dtype)
    with mem_file() as f:
        d = write(f, "l", x, (16, 32), "lossless delta zigzag bitshuffle rze subchunk=512")
        hs = check_dataset(d)
        assert bits_equal(d[...], x)
    assert all(h.mode == sd.MODE_LOSSLESS and h.abs_bound == 0 for h in hs)
    assert all(h.stored_raw or h.n_outliers == 0 for h in hs)
    # a smooth field compresses: at least one chunk is coded, not stored raw
    with mem_file() as f:
        s = field((4096,), dtype)
        d = write(f, "s", s, (1000,), "lossless")
        hs = check_dataset(d)
        assert bits_equal(d[...], s)
        assert any(not h.stored_raw for h in hs)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_bitpack(dtype):
    x = plant_specials(field((37, 53), dtype))
    with mem_file() as f:
        d = write(f, "b", x, (16, 32), "abs=1e-2 delta zigzag bitpack subchunk=1024")
        hs = check_dataset(d, expect_raw=False)
        raws = []
        for (_, raw), h in zip(chunks_of(d), hs):
            assert h.ops[:h.n_ops] == [sd.QUANT, sd.DELTA, sd.ZIGZAG, sd.BITPACK]
            raws.append(raw)
    ents = [e for raw, h in zip(raws, hs) for e in struct.unpack_from("<%dI" % h.n_subchunks, raw, 80)]
    assert not all(e & sd.RAW_BIT for e in ents)  # bit-packed payloads, not bypassed
    # bins of random sign without zigzag: every group is W bits wide, the
    # packed stream (G + 4 W G bytes) is not smaller than L, so that
    # sub-chunk bypasses the coder (bit 31) next to packed ones
    y = field((4096,), dtype)
    y[1024:2048] = np.random.default_rng(2).integers(-2**20, 2**20, 1024)
    with mem_file() as f:
        d = write(f, "n", y, (4096,), "abs=0.5 bitpack subchunk=4096")
        check_dataset(d, expect_raw=False)
        (_, raw), = chunks_of(d)
        h = sd.parse_header(raw)
        ents = struct.unpack_from("<%dI" % h.n_subchunks, raw, 80)
        assert any(e & sd.RAW_BIT for e in ents) and not all(e & sd.RAW_BIT for e in ents)


def _bitpack_corruptions(raw):
    """(description, chunk) pairs breaking the first packed sub-chunk's
    stream in the three ways of format.md §5.5, checksum resealed."""
    h = sd.parse_header(raw)
    ents = struct.unpack_from("<%dI" % h.n_subchunks, raw, 80)
    s = next(i for i, e in enumerate(ents) if not e & sd.RAW_BIT)
    start = 80 + 4 * h.n_subchunks + sum(e & sd.SIZE_MASK for e in ents[:s])
    size = ents[s] & sd.SIZE_MASK
    W = 8 * h.esize
    widths = raw[start: start + 2]
    out = []
    b = bytearray(raw)
    b[start] = W + 1
    out.append(("width > W", _reseal(b)))
    b = bytearray(raw)
    # one group wider, one narrower by one would keep the size: make it +1 only
    b[start] = min(widths[0] + 1, W) if widths[0] < W else widths[0] - 1
    out.append(("planes do not use up the payload", _reseal(b)))
    # size < G: shrink the entry to 1 byte and cut the payload accordingly
    b = bytearray(raw[:start + 1] + raw[start + size:])
    struct.pack_into("<I", b, 80 + 4 * s, 1)
    out.append(("size < groups", _reseal(b)))
    return h, out


def test_bitpack_errors_match_the_c_decoder():
    x = field((2048,), np.float32)
    with mem_file() as f:
        d = write(f, "e", x, (2048,), "abs=1e-3 delta zigzag bitpack subchunk=2048")
        (_, raw), = chunks_of(d)
        kind = chunk_kind(d)
    h, cases = _bitpack_corruptions(raw)
    assert not h.stored_raw
    for what, bad in cases:
        with pytest.raises(sd.FormatError) as e:
            sd.decode_chunk(bad)
        assert e.value.status == "corrupt", (what, e.value)
        with pytest.raises(OSError) as ce:
            c_decode_full_chunk(bad, kind)
        assert "corrupt chunk" in str(ce.value), (what, str(ce.value))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,chunks", [
    ((37, 53), (16, 30)),        # R = 30: sub-chunks start mid-row
    ((9, 13, 21), (4, 6, 10)),   # 3-D, R = 10
    ((1000,), (300,)),           # 1-D: R = 0, lorenzo is delta
])
@pytest.mark.parametrize("coder", ["bitshuffle rze", "bitpack"])
def test_lorenzo(dtype, shape, chunks, coder):
    x = plant_specials(field(shape, dtype))
    with mem_file() as f:
        d = write(f, "z", x, chunks, "abs=1e-3 lorenzo zigzag %s subchunk=512" % coder)
        hs = check_dataset(d, expect_raw=False)
    n_chunks = int(np.prod([-(-s // c) for s, c in zip(shape, chunks)]))
    assert len(hs) == n_chunks
    R = chunks[-1] if len(chunks) >= 2 else 0
    for h in hs:
        assert h.ops[1] == sd.LORENZO and h.row == R and h.dims[:h.rank] == list(chunks)
        if R:  # some sub-chunk starts inside a row (first mod R != 0)
            assert any((s * h.subchunk_elems) % R for s in range(h.n_subchunks))


def test_lorenzo_matches_its_definition():
    """lorenzo_decode inverts the encoder of format.md §5.3 (written here
    from the document) for several R and first, padding included."""
    rng = np.random.default_rng(4)
    with np.errstate(over="ignore"):
        _lorenzo_cases(rng)


def _lorenzo_cases(rng):
    for wt in (np.uint32, np.uint64):
        for n, R, first in [(128, 30, 0), (128, 30, 128), (128, 30, 7), (64, 100, 64),
                            (64, 64, 0), (64, 0, 64), (256, 1, 3), (128, 127, 1)]:
            q = rng.integers(0, 1 << 20, n).astype(wt)
            out = np.zeros(n, wt)
            for i in range(n):
                col = (first + i) % R if R else (1 if i else 0)
                p = wt(0)
                if col > 0 and i > 0:
                    p = wt(p + q[i - 1])
                if R and i >= R:
                    p = wt(p + q[i - R])
                    if col > 0 and i > R:
                        p = wt(p - q[i - R - 1])
                out[i] = wt(q[i] - p)
            assert (sd.lorenzo_decode(out, R, first) == q).all(), (n, R, first)


# ---- lorenzo_nd (docs/format.md §5.6) ----------------------------------------

def smooth_3d(shape, dtype, seed=9):
    """A field smooth along every axis (the 3-D predictor's case)."""
    rng = np.random.default_rng(seed)
    idx = np.indices(shape).astype(np.float64)
    x = 280.0 + sum((k + 1) * np.sin(0.07 * (k + 2) * idx[k]) for k in range(len(shape)))
    x += 0.3 * np.prod(np.sin(0.05 * idx), axis=0) + rng.normal(0, 1e-4, shape)
    return x.astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,chunks,bound", [
    ((37, 53), (16, 30), 1e-2),        # 2-D, edge chunks, sub-chunks start mid-row
    ((9, 13, 41), (4, 6, 40), 1e-5),   # 3-D, planes of 240 across sub-chunks
    ((9, 13, 41), (4, 6, 40), 10.0),   # loose bound: the 1-D predictor
    ((3, 4, 5, 31), (2, 3, 5, 31), 1e-4),  # rank 4: the slower dims fold into the planes
    ((1000,), (300,), 1e-3),           # 1-D: the delta over the chunk
])
@pytest.mark.parametrize("coder", ["zigzag bitshuffle rze", "negabinary bitpack"])
def test_lorenzo_nd(dtype, shape, chunks, bound, coder):
    x = plant_specials(smooth_3d(shape, dtype))
    with mem_file() as f:
        d = write(f, "n", x, chunks, "abs=%g lorenzo_nd %s subchunk=512" % (bound, coder))
        hs = check_dataset(d)
        back = d[...]
    dmax = 1 if len(chunks) <= 1 else 2 if len(chunks) == 2 else 3
    for h in hs:
        assert h.ops[1] == sd.LORENZO_ND and h.dims[:h.rank] == list(chunks)
        assert h.stored_raw or 1 <= h.predictor <= dmax
    xs, bs = x.astype(np.float64).reshape(-1), back.astype(np.float64).reshape(-1)
    fin = np.isfinite(xs) & ~((xs == 0) & np.signbit(xs))
    assert (np.abs(xs[fin] - bs[fin]) <= bound).all()
    assert bits_equal(x.reshape(-1)[~fin], back.reshape(-1)[~fin])


def test_lorenzo_nd_predictors_and_modes():
    """Each predictor D shows up (a header byte the second decoder reads),
    in ABS, PW_REL and LOSSLESS."""
    seen = set()
    shape, chunks = (12, 30, 50), (12, 30, 50)
    rng = np.random.default_rng(11)
    rows = (rng.uniform(0, 1000, (12, 30, 1)) + 0.01 * np.arange(50)).astype(np.float32)
    yy, xx = np.indices((30, 50)).astype(np.float64)
    planes = np.stack([1000.0 * rng.uniform() + 50.0 * np.sin(0.3 * xx + 0.2 * yy + rng.uniform(0, 6))
                       for _ in range(12)]).astype(np.float32)
    for data, spec in [(rows, "abs=1e-2"), (planes, "abs=1e-4"), (smooth_3d(shape, np.float32), "abs=1e-4"),
                       (smooth_3d(shape, np.float64), "pw_rel=1e-6"), (smooth_3d(shape, np.float32), "lossless")]:
        x = plant_specials(np.ascontiguousarray(data))
        with mem_file() as f:
            d = write(f, "m", x, chunks, spec + " lorenzo_nd zigzag bitshuffle rze")
            (h,) = check_dataset(d, expect_raw=False)
            seen.add(h.predictor)
            if spec == "lossless":
                assert bits_equal(d[...], x)
    assert seen == {1, 2, 3}, seen


def test_lorenzo_nd_matches_its_definition():
    """lorenzo_nd_decode inverts the residual of format.md §5.6 (written here
    from the document, corner by corner) for every predictor, odd counts."""
    rng = np.random.default_rng(12)
    for wt in (np.uint32, np.uint64):
        for n, rank, dims in [(1, 0, [0, 0, 0, 0]), (100, 2, [7, 13, 0, 0]), (210, 3, [5, 6, 7, 0]),
                              (211, 3, [5, 6, 7, 0]), (97, 4, [2, 3, 4, 5]), (64, 3, [9, 0, 8, 0]),
                              (50, 3, [1000, 1000, 1000, 0])]:
            for D in range(1, (1 if rank <= 1 else 2 if rank == 2 else 3) + 1):
                h = sd.Header(1, 1, 0, 4 * n, n, 0.0, 0, 3, rank, 64, -(-n // 64), 0, D, [1, 15, 30], dims)
                ex, ey = sd.lorenzo_nd_geometry(h)
                P = ex * ey
                q = rng.integers(0, 1 << 40, n).astype(wt)
                r = np.zeros(n, wt)
                with np.errstate(over="ignore"):
                    for g in range(n):
                        a, b, c = g % ex > 0, g // ex % ey > 0, g >= P
                        acc = wt(0)
                        for dz in range(2 if c else 1):
                            for dy in range(2 if b else 1):
                                for dx in range(2 if a else 1):
                                    v = q[g - dx - dy * ex - dz * P]
                                    acc = wt(acc - v) if (dx + dy + dz) % 2 else wt(acc + v)
                        r[g] = acc
                    assert (sd.lorenzo_nd_decode(h, r) == q).all(), (n, rank, dims, D)


# ---- lorenzo_interp, format version 5 (docs/format.md §5.9, §4 steps 10-11, §11)

INTERP_CHAINS = ["lorenzo_interp zigzag huffctx subchunk=65536", "lorenzo_interp zigzag bitshuffle rze", "lorenzo_interp negabinary bitpack"]


def sines(shape, dtype, f=0.02):
    """A sum of sines, smooth along every axis and noiseless: at a loose
    bound the encoder picks interpolation (predictor 4) for it."""
    idx = np.indices(shape).astype(np.float64)
    x = 280.0 + sum((k + 1) * np.sin(f * (k + 2) * idx[k] + k) for k in range(len(shape)))
    return x.astype(dtype)


def interp_cases():
    """(data as float64, chunks, bound spec) whose chunks pick each predictor
    of lorenzo_interp: 1 (rows constant but for a ramp, and a 1-D chunk), 2
    (planes of one 2-D pattern), 3 (smooth_3d), 4 (sines at a loose bound,
    3-D, 2-D with edge chunks, rank 4, REL); the predictor is the encoder's
    choice, so the test checks that every one shows up, not which is where."""
    rng = np.random.default_rng(11)
    rows = rng.uniform(0, 1000, (12, 30, 1)) + 0.01 * np.arange(50)
    yy, xx = np.indices((30, 50)).astype(np.float64)
    planes = np.stack([1000.0 * rng.uniform() + 50.0 * np.sin(0.3 * xx + 0.2 * yy + rng.uniform(0, 6))
                       for _ in range(12)])
    return [
        (rows, (12, 30, 50), "abs=1e-2"),
        (sines((4000,), np.float64), (1500,), "abs=1e-3"),                # rank 1, edge chunk
        (planes, (12, 30, 50), "abs=1e-4"),
        (smooth_3d((12, 30, 50), np.float64), (12, 30, 50), "abs=1e-4"),
        (sines((16, 32, 64), np.float64), (16, 32, 64), "abs=0.1"),        # powers of two
        (sines((12, 30, 50), np.float64), (12, 30, 50), "rel=1e-3"),
        (sines((70, 300), np.float64), (64, 256), "abs=0.1"),             # 2-D, edge chunks
        (sines((3, 4, 9, 37), np.float64), (2, 3, 9, 37), "abs=0.1"),     # rank 4: planes of 9 x 37
        (sines((12, 30, 50), np.float64), (12, 30, 50), "pw_rel=1e-3"),
    ]


@pytest.mark.parametrize("dtype", ["<f4", "<f8", ">f4", ">f8"])
@pytest.mark.parametrize("chain", INTERP_CHAINS)
def test_lorenzo_interp_each_predictor(dtype, chain):
    """lorenzo_interp chunks (version 5, flag bit 1 when big-endian) with
    each of its predictors, 1..3 (lorenzo_nd's) and 4 (interpolation), in
    ABS, REL and PW_REL, with outliers, edge chunks and ranks 1 to 4: the
    second decoder gives the C filter's bytes, and the values keep their
    bound."""
    seen = set()
    for data, chunks, spec in interp_cases():
        x = plant_specials(data.astype(np.dtype(dtype).newbyteorder("="))).astype(dtype)
        with mem_file() as f:
            d = write(f, "i", x, chunks, "%s %s" % (spec, chain))
            hs = check_dataset(d, expect_raw=False)
            back = d[...]
        for h in hs:
            assert h.version == 5 and h.ops[1] == sd.LORENZO_INTERP
            assert bool(h.flags & sd.FLAG_BIG_ENDIAN) == dtype.startswith(">")
            dmax = 1 if h.rank <= 1 else 2 if h.rank == 2 else 3
            assert h.predictor == sd.PREDICTOR_INTERP or 1 <= h.predictor <= dmax
            seen.add(h.predictor)
        if spec.startswith("abs="):
            bound = float(spec[4:])
            xs, bs = x.astype(np.float64).reshape(-1), back.astype(np.float64).reshape(-1)
            fin = np.isfinite(xs) & ~((xs == 0) & np.signbit(xs))
            assert (np.abs(xs[fin] - bs[fin]) <= bound).all(), spec
            assert bits_equal(x.reshape(-1)[~fin], back.reshape(-1)[~fin])
    assert seen == {1, 2, 3, 4}, seen


def interp_residual_from_the_document(q, X, Y):
    """§5.9's encode, element by element on Python integers: the stride and
    axis of each g, its neighbours, pred = floor((a + b + 1) / 2) of the
    signed words (the document's reading of its mean) or q[ga], r = q - pred."""
    n = q.size
    W = 8 * q.dtype.itemsize
    mod = 1 << W
    Z = -(-n // (X * Y))
    signed = [int(v) - mod if int(v) >> (W - 1) else int(v) for v in q]
    r = np.zeros(n, q.dtype)
    for g in range(n):
        pred = 0
        if g:
            x, y, z = g % X, (g // X) % Y, g // (X * Y)
            v = x | y | z
            s = v & -v
            if x & s:
                t, c, E = 1, x, X
            elif y & s:
                t, c, E = X, y, Y
            else:
                t, c, E = X * Y, z, Z
            ga, gb = g - s * t, g + s * t
            if c + s < E and gb < n:
                pred = (signed[ga] + signed[gb] + 1) // 2
            else:
                pred = signed[ga]
        r[g] = (int(q[g]) - pred) % mod
    return r


def test_lorenzo_interp_matches_its_definition():
    """The decoder's interpolation inverse (one vectorised step per pass of
    §5.9) inverts §5.9's encode written here per element, for odd and
    power-of-two sizes, partial last planes, dims of 0 or larger than the
    chunk, X = 1, ranks 0 to 4, and words over the whole W-bit range (the
    mean of negative and wrapping words); predictors 1..3 of lorenzo_interp
    are lorenzo_nd's."""
    rng = np.random.default_rng(13)
    cases = [(1, 0, [0, 0, 0, 0]), (2, 1, [2, 0, 0, 0]), (100, 2, [7, 13, 0, 0]), (256, 1, [256, 0, 0, 0]),
             (210, 3, [5, 6, 7, 0]), (211, 3, [5, 6, 7, 0]), (97, 4, [2, 3, 4, 5]), (64, 3, [9, 0, 8, 0]),
             (50, 3, [1000, 1000, 1000, 0]), (40, 2, [40, 1, 0, 0]), (33, 3, [33, 1, 1, 0]),
             (300, 3, [3, 10, 10, 0]), (129, 2, [1, 129, 0, 0]), (512, 3, [8, 8, 8, 0])]
    for wt in (np.uint32, np.uint64):
        for n, rank, dims in cases:
            h = sd.Header(5, 1, 0, 4 * n, n, 0.0, 0, 3, rank, 64, -(-n // 64), 0, sd.PREDICTOR_INTERP,
                          [1, sd.LORENZO_INTERP, 30], dims)
            X, Y, Z = sd.interp_xyz(h)
            for q in (rng.integers(0, np.iinfo(wt).max, n, dtype=wt, endpoint=True),
                      rng.integers(-50, 50, n).astype(np.int64).astype(wt)):  # small bins of both signs
                r = interp_residual_from_the_document(q, X, Y)
                with np.errstate(over="ignore"):
                    assert (sd.chunk_wide_decode(h, r) == q).all(), (wt, n, rank, dims)
            with np.errstate(over="ignore"):
                for D in range(1, (1 if rank <= 1 else 2 if rank == 2 else 3) + 1):
                    h.predictor = D
                    assert (sd.chunk_wide_decode(h, q) == sd.lorenzo_nd_decode(h, q)).all()


def both_refuse(bad, kind, status="corrupt"):
    with pytest.raises(sd.FormatError) as e:
        sd.decode_chunk(bad)
    assert e.value.status == status, e.value
    with pytest.raises(OSError) as ce:
        c_decode_full_chunk(bad, kind)
    name = {"version": "unsupported chunk format version", "corrupt": "corrupt chunk"}[status]
    assert name in str(ce.value), str(ce.value)


def with_header(raw, at):
    """raw with header bytes changed ({offset: byte}), the checksum resealed."""
    b = bytearray(raw)
    for k, v in at.items():
        b[k] = v
    return _reseal(bytes(b))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_lorenzo_interp_header_checks(dtype):
    """§4 steps 10-11 and §11 for lorenzo_interp, in both decoders: predictor
    4 is CORRUPT with lorenzo_nd and without either op, and so is a
    lorenzo_interp predictor of 0, 5 or above the rank's Dmax; op 16 in a
    chunk of versions 1 to 4 is CORRUPT; lorenzo_interp not right after quant
    is CORRUPT; version 6 is VERSION. A lorenzo_interp chunk of predictor 1..3
    relabelled lorenzo_nd decodes to the same bytes (same decode)."""
    with mem_file() as f:
        d4 = write(f, "a", sines((16, 32, 64), dtype), (16, 32, 64), "abs=0.1 lorenzo_interp zigzag bitshuffle rze")
        (_, raw4), = chunks_of(d4)
        kind4 = chunk_kind(d4)
        d2 = write(f, "b", sines((64, 256), dtype, 0.5), (64, 256), "abs=1e-3 lorenzo_interp zigzag bitshuffle rze")
        (_, raw2), = chunks_of(d2)
        kind2 = chunk_kind(d2)
        dn = write(f, "c", smooth_3d((12, 30, 50), dtype), (12, 30, 50), "abs=1e-4 lorenzo_nd zigzag bitshuffle rze")
        (_, rawn), = chunks_of(dn)
        kindn = chunk_kind(dn)
        dp = write(f, "d", field((4096,), dtype), (4096,), "abs=1e-3")
        (_, rawp), = chunks_of(dp)
        kindp = chunk_kind(dp)
    assert (raw4[4], raw4[34], raw4[35], raw4[49]) == (5, 3, 4, sd.LORENZO_INTERP)
    assert (raw2[4], raw2[34], raw2[49]) == (5, 2, sd.LORENZO_INTERP) and 1 <= raw2[35] <= 2
    assert (rawn[4], rawn[49], rawp[4], rawp[35]) == (1, sd.LORENZO_ND, 1, 0)
    corrupt = [
        ("predictor 4 with lorenzo_nd (version 5)", with_header(raw4, {49: sd.LORENZO_ND}), kind4),
        ("predictor 4 with lorenzo_nd (version 1)", with_header(rawn, {35: 4}), kindn),
        ("predictor 4 without lorenzo_nd or lorenzo_interp", with_header(rawp, {35: 4}), kindp),
        ("lorenzo_interp predictor 0", with_header(raw4, {35: 0}), kind4),
        ("lorenzo_interp predictor 5", with_header(raw4, {35: 5}), kind4),
        ("lorenzo_interp predictor 255", with_header(raw4, {35: 255}), kind4),
        ("lorenzo_interp predictor 3 with rank 2", with_header(raw2, {35: 3}), kind2),
        ("lorenzo_interp after zigzag", with_header(raw4, {49: sd.ZIGZAG, 50: sd.LORENZO_INTERP}), kind4),
    ]
    corrupt += [("op 16 in a version %d chunk" % v, with_header(raw4, {4: v}), kind4) for v in (1, 2, 3, 4)]
    corrupt += [("op 16 in a version %d chunk, predictor 1..3" % v, with_header(raw2, {4: v}), kind2)
                for v in (1, 4)]
    for what, bad, kind in corrupt:
        try:
            both_refuse(bad, kind)
        except AssertionError as e:
            raise AssertionError("%s: %s" % (what, e))
    both_refuse(with_header(raw4, {4: 6}), kind4, "version")
    relabelled = with_header(raw2, {49: sd.LORENZO_ND})
    assert sd.decode_chunk(relabelled) == sd.decode_chunk(raw2) == c_decode_full_chunk(raw2, kind2).tobytes()
    assert c_decode_full_chunk(relabelled, kind2).tobytes() == sd.decode_chunk(raw2)


# ---- fill values (docs/spec.md §7): an encoder rule, no format change ---------

def fill_field(shape, dtype, fill, seed=21):
    """field() with a mask of `fill` (a blob, a row, scattered points)."""
    x = field(shape, dtype, seed)
    yy, xx = np.indices(shape)
    x[(yy - shape[0] // 2) ** 2 + (xx - shape[1] // 3) ** 2 < 60] = fill
    x[1] = fill
    x.reshape(-1)[::53] = fill
    return x


def outliers_of(raw):
    """(positions, value bits) of a coded chunk's side section (format.md
    §7, §8 steps 3-4), through the second decoder's pieces."""
    h = sd.parse_header(raw)
    if h.stored_raw or not h.n_outliers:
        return np.zeros(0, np.int64), np.zeros(0, np.uint64)
    body = raw[sd.HEADER_BYTES: len(raw) - 4]
    ents = struct.unpack_from("<%dI" % h.n_subchunks, body, 0)
    payload_end = 4 * h.n_subchunks + sum(e & sd.SIZE_MASK for e in ents)
    pos, vals, _ = sd.decode_side(h, body, payload_end, len(body))
    return pos, vals.astype(np.uint64)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("spec", ["abs=1e-3", "rel=1e-4 delta zigzag rze", "pw_rel=1e-3",
                                  "abs=1e-4 lorenzo_nd zigzag bitpack",
                                  "abs=1e-3 lorenzo zigzag bitshuffle rze subchunk=512"])
@pytest.mark.parametrize("fill", [-999.0, 280.5, 1e30])
def test_fill_values_match_the_c_decoder(dtype, spec, fill):
    """Chunks the C filter writes now for a dataset with a fill value (h5py
    fillvalue=, passed on by set_local), with fill values in the data and in
    the padding of partial edge chunks: the second decoder gives the C
    filter's bytes, and every fill value, padding included, comes back bit
    for bit, as an outlier (the format is unchanged: escapes are stored
    exactly whatever made them). 280.5 lies inside the data's range, -999
    and 1e30 outside it (1e30 beyond the quantizer's bins anyway)."""
    x = fill_field((37, 45), dtype, fill)
    with mem_file() as f:
        d = f.create_dataset("w", data=x, chunks=(16, 32), compression=FILTER_ID,
                             compression_opts=cd_values(spec), fillvalue=fill)
        hs = check_dataset(d, expect_raw=False)
        raws = chunks_of(d)
        back = d[...]
    u = "u%d" % np.dtype(dtype).itemsize
    want = int(np.array(fill, dtype).view(u))
    at = x.view(u) == want
    assert at.sum() > 100 and bits_equal(back[at], x[at])
    padded = 0
    for (offset, raw), h in zip(raws, hs):
        assert h.version == 1 and not h.stored_raw
        full = np.frombuffer(sd.decode_chunk(raw), dtype).reshape(d.chunks)
        # the chunk as the filter got it: the data, padded with the fill value
        valid = tuple(slice(0, min(c, n - o)) for o, c, n in zip(offset, d.chunks, x.shape))
        given = np.full(d.chunks, fill, dtype)
        given[valid] = x[tuple(slice(o, o + v.stop) for o, v in zip(offset, valid))]
        fills = np.flatnonzero(given.view(u).reshape(-1) == want)
        pos, vals = outliers_of(raw)
        assert len(pos) == h.n_outliers
        # every fill value of the chunk (data and padding) is an outlier
        # (a quantized value may also decode to the fill value: not checked)
        assert set(fills.tolist()) <= set(pos.tolist()), offset
        assert (vals[np.isin(pos, fills)] == want).all()
        assert (full.reshape(-1)[fills].view(u) == want).all()
        padded += int(given.size - given[valid].size)
    assert padded > 0  # partial edge chunks, padded with the fill value


# ---- huff coders, format versions 3 and 4 (docs/format.md §5.7, §5.8, §11) ------

HUFF_CHAINS = ["ratio", "lorenzo_nd zigzag huff", "delta zigzag huff", "delta zigzag huffctx"]
HUFF_MODES = ["abs=1e-3", "rel=1e-4", "pw_rel=1e-3", "lossless"]


def subchunk_entries(raw, h):
    return struct.unpack_from("<%dI" % h.n_subchunks, raw, 80)


@pytest.mark.parametrize("dtype", ["<f4", "<f8", ">f4", ">f8"])
@pytest.mark.parametrize("mode", HUFF_MODES)
@pytest.mark.parametrize("chain", HUFF_CHAINS)
def test_huff_chains(dtype, mode, chain):
    """Chunks of the huff chains, every mode, both types and byte orders:
    version 3 for huff, 4 for huffctx and the ratio chain (flag bit 1 for
    big-endian), decoded by the second decoder to
    the C filter's bytes. Chunks of 64 x 256 values: float32 sub-chunks of
    16 groups of 1024 words (the listed group lengths are read), edge chunks
    padded."""
    x = plant_specials(signed_field((70, 300), np.float64) if mode.startswith("pw_rel")
                       else field((70, 300), np.float64)).astype(dtype)
    with mem_file() as f:
        d = write(f, "h", x, (64, 256), "%s %s" % (mode, chain))
        hs = check_dataset(d)
        raws = [raw for _, raw in chunks_of(d)]
    big = dtype.startswith(">")
    coded_groups = 0
    for raw, h in zip(raws, hs):
        two_codes = chain == "ratio" or chain.endswith("huffctx")
        version = 4 if two_codes else 3
        assert h.version == version and bool(h.flags & sd.FLAG_BIG_ENDIAN) == big
        if h.stored_raw:
            continue
        assert h.ops[h.n_ops - 1] == (sd.HUFFCTX if two_codes else sd.HUFF)
        assert (h.subchunk_elems * h.esize == 65536) == (chain == "ratio")
        for s, e in enumerate(subchunk_entries(raw, h)):
            m = min(h.subchunk_elems, h.n_elements - s * h.subchunk_elems)
            if not e & sd.RAW_BIT:
                coded_groups = max(coded_groups, -(-sd.pad64(m) // 1024))
    assert coded_groups >= (8 if chain == "ratio" else 1)  # huff streams of many groups


def test_huff_group_sizes_follow_token_density():
    """The ratio chain's encoder cuts a sub-chunk dense in tokens into
    smaller groups (format.md §5.7: g = 4 / 3 / 2 by the count of non-zero
    words): a smooth sub-chunk keeps groups of 1024 words, a noisy one gets
    groups of 256; the second decoder reads both to the C filter's bytes."""
    rng = np.random.default_rng(17)
    smooth = 280 + 0.01 * np.arange(64 * 256).reshape(64, 256) / 256  # a gentle ramp: almost every code 0
    noisy = 280 + rng.normal(0, 2.0, (64, 256))  # codes of about +-20 bins: almost every word non-zero
    x = np.concatenate([smooth, noisy]).astype("<f4")
    with mem_file() as f:
        d = write(f, "g", x, (128, 256), "abs=0.05 ratio")
        (h,) = check_dataset(d)
        ((_, raw),) = list(chunks_of(d))
    ents = subchunk_entries(raw, h)
    assert h.n_subchunks == 2 and not any(e & sd.RAW_BIT for e in ents)
    at = 80 + 4 * h.n_subchunks
    fields = []
    for e in ents:
        fields.append(raw[at] & 15)  # the stream's first u(4): the group field
        at += e & sd.SIZE_MASK
    assert fields == [4, 2], fields


class BitWriter:
    """The §5.7 bit stream written from the document: bit k is bit k mod 8
    of byte k div 8."""

    def __init__(self):
        self.bits = []

    def u(self, value, b):
        self.bits += [(value >> i) & 1 for i in range(b)]

    def gamma(self, x):
        n = x.bit_length() - 1
        self.bits += [0] * n + [1]
        self.u(x - (1 << n), n)

    def code(self, code, length):  # most significant bit first
        self.bits += [(code >> (length - 1 - i)) & 1 for i in range(length)]

    def tobytes(self):
        b = self.bits + [0] * (-len(self.bits) % 8)
        return np.packbits(np.array(b, np.uint8), bitorder="little").tobytes()


def canonical(lengths):
    """{symbol: code} of §5.7's canonical rule, lengths {symbol: length}."""
    out, code, prev = {}, 0, None
    for length, symbol in sorted((ln, s) for s, ln in lengths.items()):
        if prev is not None:
            code = (code + 1) << (length - prev)
        out[symbol], prev = code, length
    return out


def huff_stream(W, lengths, groups, g=4, listed=None, code_entries=None, tail=()):
    """A §5.7 stream of W-bit words: the code of `lengths` {symbol: length}
    (or the raw (symbol, length) entries code_entries), then per group its
    tokens, each (symbol, extra value, extra bits); symbol None writes only
    the extra bits. listed: the group lengths to write (default: the true
    ones). tail: bits after the last group."""
    codes = canonical(lengths)
    bodies = []
    for tokens in groups:
        bw = BitWriter()
        for symbol, extra, nb in tokens:
            if symbol is not None:
                bw.code(codes[symbol], lengths[symbol])
            bw.u(extra, nb)
        bodies.append(bw.bits)
    out = BitWriter()
    out.u(g, 4)
    entries = code_entries or sorted(lengths.items())
    out.u(len(entries) - 1, 8)
    prev = None
    for symbol, length in entries:
        out.gamma(symbol + 1 if prev is None else symbol - prev)
        out.u(length, 4)
        prev = symbol
    listed = [len(b) for b in bodies[:-1]] if listed is None else listed
    w = max(listed).bit_length() if listed else 0
    out.u(w, 5)
    for v in listed:
        out.u(v, w)
    for b in bodies:
        out.bits += b
    out.bits += list(tail)
    return out.tobytes()


def with_payload(raw, s, payload):
    """raw with sub-chunk s's payload replaced (entry bit 31 clear), the
    checksum resealed."""
    h = sd.parse_header(raw)
    ents = list(subchunk_entries(raw, h))
    table_end = 80 + 4 * h.n_subchunks
    start = table_end + sum(e & sd.SIZE_MASK for e in ents[:s])
    end = start + (ents[s] & sd.SIZE_MASK)
    ents[s] = len(payload)
    b = bytearray(raw[:80]) + struct.pack("<%dI" % len(ents), *ents) + raw[table_end:start] + payload + raw[end:]
    return _reseal(bytes(b))


def huff_cases(W, n_groups):
    """(what, stream, valid) for one sub-chunk of n_groups groups of 1024
    words: valid streams (most groups: the word 1, literal 0, and a run of
    1023 zeros, symbol RB + 18 with the 8 low bits 255), then one stream for
    every refusal §5.7 lists."""
    RB = 64 + W - 6
    A = RB + 29
    lit1 = (0, 0, 0)
    run1023 = (RB + 18, 255, 8)
    good = {0: 1, RB + 18: 1}
    groups = [[lit1, run1023]] * n_groups
    # 65 (class b = 7, extra 1), run 2 (RB + 1), 65, run 1 (RB), 65, run 1018
    # (c = 9, h = 1: RB + 18, low bits 250): 1024 words
    mixed = [(64, 1, 6), (RB + 1, 0, 0), (64, 1, 6), (RB, 0, 0), (64, 1, 6), (RB + 18, 250, 8)]
    cases = [
        ("valid: literal and run per group", huff_stream(W, good, groups), True),
        ("valid: class b = 7, runs of 2, 1, 1018",
         huff_stream(W, {64: 2, RB: 2, RB + 1: 2, RB + 18: 2}, [mixed] * n_groups), True),
        ("valid: one symbol of length 1", huff_stream(W, {0: 1}, [[lit1] * 1024] * n_groups), True),
    ]
    bad = [
        ("group size exponent 9", dict(g=9)),
        ("a symbol outside the alphabet", dict(code_entries=[(0, 1), (A, 1)])),
        ("a code length of 0", dict(code_entries=[(0, 0), (RB + 18, 1)])),
        ("a code length of 13", dict(code_entries=[(0, 13), (RB + 18, 1)])),
        ("Kraft sum not 1", dict(code_entries=[(0, 1), (RB + 18, 2)])),
        ("a group lists one bit too many", dict(listed=[11] + [10] * (n_groups - 2))),
        ("a group lists one bit too few", dict(listed=[10] * (n_groups - 2) + [9])),
        ("8 bits left after the last group", dict(tail=[0] * 8)),
        ("a non-zero bit left after the last group", dict(tail=[0, 0, 1])),
    ]
    cases += [(what, huff_stream(W, good, groups, **kw), False) for what, kw in bad]
    cases += [
        ("one symbol of length 2", huff_stream(W, {0: 2}, [[lit1] * 1024] * n_groups), False),
        ("a bit pattern that matches no code",  # one symbol, code 0: a 1 bit matches nothing
         huff_stream(W, {0: 1}, [[lit1] * 1023 + [(None, 1, 1)]] + [[lit1] * 1024] * (n_groups - 1)),
         False),
        ("a run passing the group's end", huff_stream(W, good, [[lit1, lit1, run1023]] * n_groups), False),
        ("a run after a run", huff_stream(W, {RB: 1, RB + 18: 1}, [[(RB, 0, 0), run1023]] * n_groups), False),
        ("a bit-length class giving 64",
         huff_stream(W, {64: 1, RB + 18: 1}, [[(64, 0, 6), run1023]] * n_groups), False),
        ("the stream ends inside the code", huff_stream(W, good, groups)[:2], False),
    ]
    return cases


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_huff_streams_both_decoders(dtype):
    """Streams built here from §5.7 alone, put into a real huff chunk (ABS,
    sub-chunks of 64 KiB) as its first sub-chunk: the valid ones decode to
    the same bytes in both decoders; each refusal §5.7 lists is CORRUPT in
    both."""
    x = field((16384,), dtype)
    with mem_file() as f:
        d = write(f, "h", x, (16384,), "abs=1e-3 zigzag huff subchunk=65536")
        (_, raw), = chunks_of(d)
        kind = chunk_kind(d)
    h = sd.parse_header(raw)
    assert h.version == 3 and h.subchunk_elems * h.esize == 65536
    assert not subchunk_entries(raw, h)[0] & sd.RAW_BIT
    both_decoders_agree(raw, kind, huff_cases(8 * h.esize, h.subchunk_elems // 1024))


def both_decoders_agree(raw, kind, cases):
    """Each (what, stream, valid) as the first sub-chunk of raw: a valid
    stream decodes to the same bytes in both decoders, another is CORRUPT in
    both."""
    for what, stream, valid in cases:
        bad = with_payload(raw, 0, stream)
        if valid:
            assert sd.decode_chunk(bad) == c_decode_full_chunk(bad, kind).tobytes(), what
            continue
        with pytest.raises(sd.FormatError) as e:
            sd.decode_chunk(bad)
        assert e.value.status == "corrupt", (what, e.value)
        with pytest.raises(OSError) as ce:
            c_decode_full_chunk(bad, kind)
        assert "corrupt chunk" in str(ce.value), (what, str(ce.value))


@pytest.mark.parametrize("chain,version_of_op", [("lorenzo_nd zigzag huff", 3), ("lorenzo_nd zigzag huffctx", 4),
                                                ("ratio", 4), ("lorenzo_interp zigzag huffctx subchunk=65536", 5),
                                                ("lorenzo_interp zigzag bitshuffle rze", 5)])
def test_huff_needs_its_version(chain, version_of_op):
    """§11: a chunk of a version before its ops' (3 for huff, 4 for huffctx,
    5 for lorenzo_interp) is CORRUPT, in both."""
    x = field((4096,), np.float32)
    with mem_file() as f:
        d = write(f, "h", x, (4096,), "abs=1e-3 " + chain)
        (_, raw), = chunks_of(d)
        kind = chunk_kind(d)
    assert raw[4] == version_of_op
    for version in range(1, version_of_op):
        bad = _reseal(raw[:4] + bytes([version]) + raw[5:])
        with pytest.raises(sd.FormatError) as e:
            sd.decode_chunk(bad)
        assert e.value.status == "corrupt"
        with pytest.raises(OSError) as ce:
            c_decode_full_chunk(bad, kind)
        assert "corrupt chunk" in str(ce.value), str(ce.value)


def huffctx_stream(W, codes, groups, counts=None):
    """A §5.8 stream: codes = [lengths of code 0, lengths of code 1]
    ({symbol: length}, {} = empty), groups of tokens (symbol, extra, bits);
    a token after a run token of its group is written with code 1. counts:
    the two count fields to write (default: the true ones)."""
    RB = 64 + W - 6
    canon = [canonical(c) for c in codes]
    bodies = []
    for tokens in groups:
        bw, after_run = BitWriter(), False
        for symbol, extra, nb in tokens:
            t = 1 if after_run else 0
            if symbol not in codes[t]:  # a stream no encoder writes: the symbol in code 0
                t = 0
            bw.code(canon[t][symbol], codes[t][symbol])
            bw.u(extra, nb)
            after_run = symbol >= RB
        bodies.append(bw.bits)
    out = BitWriter()
    out.u(4, 4)
    for t, c in enumerate(codes):
        out.u(len(c) if counts is None else counts[t], 8)
        prev = None
        for symbol, length in sorted(c.items()):
            out.gamma(symbol + 1 if prev is None else symbol - prev)
            out.u(length, 4)
            prev = symbol
    listed = [len(b) for b in bodies[:-1]]
    w = max(listed).bit_length() if listed else 0
    out.u(w, 5)
    for v in listed:
        out.u(v, w)
    for b in bodies:
        out.bits += b
    return out.tobytes()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_huffctx_streams_both_decoders(dtype):
    """Streams built here from §5.8 alone in a real huffctx chunk: an empty
    code 1, and code 1 after runs, decode the same in both decoders; a run
    symbol in code 1, a token that needs an empty code and a count over the
    alphabet are CORRUPT in both."""
    x = field((16384,), dtype)
    with mem_file() as f:
        d = write(f, "h", x, (16384,), "abs=1e-3 zigzag huffctx subchunk=65536")
        (_, raw), = chunks_of(d)
        kind = chunk_kind(d)
    h = sd.parse_header(raw)
    assert h.version == 4 and h.ops[h.n_ops - 1] == sd.HUFFCTX
    assert not subchunk_entries(raw, h)[0] & sd.RAW_BIT
    W, n_groups = 8 * h.esize, h.subchunk_elems // 1024
    RB = 64 + W - 6
    lit1, run1 = (0, 0, 0), (RB, 0, 0)
    run1022 = (RB + 18, 1022 & 255, 8)  # c = 9, h = 1: symbol RB + 2c - 1 + h, the low 8 bits
    cases = [
        ("literals only, empty code 1", huffctx_stream(W, [{0: 1}, {}], [[lit1] * 1024] * n_groups), True),
        ("run, literal, run of 1022 (code 1 after the runs)",
         huffctx_stream(W, [{RB: 1, RB + 18: 1}, {0: 1}], [[run1, lit1, run1022]] * n_groups), True),
        ("a run symbol in code 1",
         huffctx_stream(W, [{RB: 1, RB + 18: 1}, {0: 1, RB: 1}], [[run1, lit1, run1022]] * n_groups), False),
        ("a token after a run with code 1 empty",
         huffctx_stream(W, [{RB: 1, 0: 1}, {}], [[run1, lit1] + [lit1, run1] * 511] * n_groups), False),
        ("a count over the alphabet",
         huffctx_stream(W, [{0: 1}, {}], [[lit1] * 1024] * n_groups, counts=[255, 0]), False),
    ]
    both_decoders_agree(raw, kind, cases)
