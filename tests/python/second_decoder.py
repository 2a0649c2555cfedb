"""A second decoder of the h5fz chunk container, format versions 1 to 5.

Written from docs/format.md alone (pure Python + numpy), as the proof that
the document is enough to read h5fz chunks without the C code. Section
numbers in the comments (§n) refer to docs/format.md.

    decode_chunk(buf: bytes) -> bytes     # the bytes the chunk decodes to
    parse_header(buf: bytes) -> Header    # checks §3 and §4 only

Errors raise FormatError whose .status is one of the names of §8:
"truncated", "corrupt", "checksum", "version".

Covers modes ABS/REL (linear bins), PW_REL (log2_det/exp2_det of §5.4,
reproduced one binary64 operation at a time; no library log2/exp2) and
LOSSLESS; ops quant, delta, zigzag, negabinary, bitshuffle, lorenzo (§5.3),
lorenzo_nd (§5.6), lorenzo_interp (§5.9, version 5: lorenzo_nd's
predictors and multilevel interpolation of the words), rze, raw, bitpack
(§5.5), huff (§5.7, version 3) and huffctx (§5.8, version 4).
"""
import struct
import zlib
from dataclasses import dataclass, field

import numpy as np

KNOWN_VERSION = 5
HEADER_BYTES = 80
CHECKSUM_BYTES = 4
FLAG_STORED_RAW = 0x01
FLAG_BIG_ENDIAN = 0x02  # version 2 (§3): the chunk decodes to big-endian values
RAW_BIT = 0x80000000
SIZE_MASK = 0x7FFFFFFF
MAX_CHUNK_BYTES = 0x7FFF0000
MAX_SUBCHUNK_BYTES = 65536
MAX_OPS = 10
MAX_RANK = 4

DTYPES = {1: np.dtype("<f4"), 2: np.dtype("<f8")}
QUANT, DELTA, ZIGZAG, NEGABINARY, BITSHUFFLE, LORENZO, LORENZO_ND = 1, 10, 11, 12, 13, 14, 15
LORENZO_INTERP = 16  # §5.9, version 5
RZE, RAW, BITPACK, HUFF, HUFFCTX = 30, 31, 32, 33, 34
HUFF_VERSION = 3  # §11: the first version whose chains may hold huff
HUFFCTX_VERSION = 4  # §11: ... and huffctx
LORENZO_INTERP_VERSION = 5  # §11: ... and lorenzo_interp
PREDICTOR_INTERP = 4  # §5.9: lorenzo_interp's predictor byte for interpolation
CHUNK_WIDE = (LORENZO_ND, LORENZO_INTERP)  # ops[1] whose inverse runs on the whole chunk
MODE_ABS, MODE_REL, MODE_PW_REL, MODE_LOSSLESS = 0, 1, 2, 3
# §5.1: id -> (kind, input stream, output stream). rze and raw read any
# stream as bytes; bitpack needs words.
OPS = {
    QUANT: ("map", "float", "words"),
    DELTA: ("transform", "words", "words"),
    ZIGZAG: ("transform", "words", "words"),
    NEGABINARY: ("transform", "words", "words"),
    BITSHUFFLE: ("transform", "words", "bytes"),
    LORENZO: ("transform", "words", "words"),
    LORENZO_ND: ("transform", "words", "words"),
    LORENZO_INTERP: ("transform", "words", "words"),
    RZE: ("coder", "bytes", "bytes"),
    RAW: ("coder", "bytes", "bytes"),
    BITPACK: ("coder", "words", "bytes"),
    HUFF: ("coder", "words", "bytes"),
    HUFFCTX: ("coder", "words", "bytes"),
}
RZE_TOP_MAX = 64
RZE_MAX_LEVELS = 12


class FormatError(Exception):
    def __init__(self, status, message):
        super().__init__("%s: %s" % (status, message))
        self.status = status


def _fail(status, fmt, *args):
    raise FormatError(status, fmt % args if args else fmt)


@dataclass
class Header:
    version: int
    dtype: int
    flags: int
    input_bytes: int
    n_elements: int
    abs_bound: float
    mode: int
    n_ops: int
    rank: int
    subchunk_elems: int
    n_subchunks: int
    n_outliers: int
    predictor: int = 0
    ops: list = field(default_factory=list)
    dims: list = field(default_factory=list)

    @property
    def esize(self):
        return DTYPES[self.dtype].itemsize

    @property
    def stored_raw(self):
        return bool(self.flags & FLAG_STORED_RAW)

    @property
    def row(self):
        """R of lorenzo (§5.3): dims[rank-1] when rank >= 2, else 0."""
        return self.dims[self.rank - 1] if 2 <= self.rank <= MAX_RANK else 0


def pad64(m):
    return (m + 63) & ~63


# ---- §3, §4: header ------------------------------------------------------

def parse_header(buf):
    buf = bytes(buf)
    n = len(buf)
    if n < 6:
        _fail("truncated", "chunk of %d bytes is too short for a header", n)
    if buf[0:4] != b"H5FZ":
        _fail("corrupt", "no magic 'H5FZ'")
    if buf[4] > KNOWN_VERSION:
        _fail("version", "chunk format version %d is newer than this decoder (reads up to %d)",
              buf[4], KNOWN_VERSION)
    if buf[4] == 0:
        _fail("corrupt", "format version 0 does not exist")
    if buf[5] != HEADER_BYTES:
        _fail("corrupt", "header length %d, version %d has %d", buf[5], buf[4], HEADER_BYTES)
    if n < HEADER_BYTES + CHECKSUM_BYTES:
        _fail("truncated", "chunk of %d bytes is shorter than header and checksum", n)
    stored, = struct.unpack_from("<I", buf, n - 4)
    actual = zlib.crc32(buf[: n - 4]) & 0xFFFFFFFF
    if stored != actual:
        _fail("checksum", "stored %08x, computed %08x", stored, actual)

    (version, hlen, dtype, flags, input_bytes, n_elements, abs_bound, mode, n_ops, rank,
     predictor, se, nsub, nout) = struct.unpack_from("<BBBBQQdBBBBIII", buf, 4)
    ops = list(buf[48:58])
    dims = list(struct.unpack_from("<4I", buf, 60))
    h = Header(version, dtype, flags, input_bytes, n_elements, abs_bound, mode, n_ops, rank,
               se, nsub, nout, predictor, ops, dims)

    if dtype not in DTYPES:
        _fail("corrupt", "unknown element type %d", dtype)
    if flags & ~(FLAG_STORED_RAW | (FLAG_BIG_ENDIAN if version >= 2 else 0)):
        _fail("corrupt", "unknown flags 0x%02x", flags)
    if any(buf[58:60]) or any(buf[76:80]):
        _fail("corrupt", "reserved header bytes are not zero")
    esize = h.esize
    if input_bytes > MAX_CHUNK_BYTES or n_elements != input_bytes // esize:
        _fail("corrupt", "sizes disagree (%d bytes, %d elements)", input_bytes, n_elements)
    if h.stored_raw:
        return h
    if mode > MODE_LOSSLESS:
        _fail("corrupt", "mode %d unknown", mode)
    if not (abs_bound >= 0 and np.isfinite(abs_bound)):
        _fail("corrupt", "error bound is not a finite number >= 0")
    if mode == MODE_PW_REL and not abs_bound < 1:
        _fail("corrupt", "pointwise relative bound %r is not < 1", abs_bound)
    if mode == MODE_LOSSLESS and abs_bound != 0:
        _fail("corrupt", "lossless chunk with bound %r", abs_bound)
    if se == 0 or se % 64 or se * esize > MAX_SUBCHUNK_BYTES:
        _fail("corrupt", "sub-chunk size %d elements is invalid", se)
    if nsub != (n_elements + se - 1) // se:
        _fail("corrupt", "sub-chunk count %d does not match %d elements", nsub, n_elements)
    if nout > n_elements:
        _fail("corrupt", "more outliers than elements")
    if rank > MAX_RANK:
        _fail("corrupt", "rank %d", rank)
    if n_ops > MAX_OPS:
        _fail("corrupt", "%d ops", n_ops)
    if any(ops[n_ops:]):
        _fail("corrupt", "op ids past the chain")
    _check_chain(ops[:n_ops])
    if HUFF in ops[:n_ops] and version < HUFF_VERSION:  # §11
        _fail("corrupt", "version %d chunk lists op 33 (huff), a version %d op", version, HUFF_VERSION)
    if HUFFCTX in ops[:n_ops] and version < HUFFCTX_VERSION:  # §11
        _fail("corrupt", "version %d chunk lists op 34 (huffctx), a version %d op", version, HUFFCTX_VERSION)
    if LORENZO_INTERP in ops[:n_ops] and version < LORENZO_INTERP_VERSION:  # §11
        _fail("corrupt", "version %d chunk lists op 16 (lorenzo_interp), a version %d op", version,
              LORENZO_INTERP_VERSION)
    # §4 step 11: byte 35
    dmax = 1 if rank <= 1 else 2 if rank == 2 else 3
    if LORENZO_ND in ops[:n_ops]:
        if not 1 <= predictor <= dmax:
            _fail("corrupt", "lorenzo_nd predictor %d with rank %d", predictor, rank)
    elif LORENZO_INTERP in ops[:n_ops]:
        if predictor != PREDICTOR_INTERP and not 1 <= predictor <= dmax:
            _fail("corrupt", "lorenzo_interp predictor %d with rank %d", predictor, rank)
    elif predictor:
        _fail("corrupt", "predictor byte %d without lorenzo_nd or lorenzo_interp", predictor)
    return h


def _check_chain(chain):
    """§5.1 type rules."""
    if len(chain) < 2:
        _fail("corrupt", "chain has %d ops", len(chain))
    stream = "float"
    for i, op in enumerate(chain):
        if op not in OPS:
            _fail("corrupt", "op %d has unknown id %d", i, op)
        kind, inp, out = OPS[op]
        first, last = i == 0, i == len(chain) - 1
        if first != (kind == "map") or last != (kind == "coder"):
            _fail("corrupt", "op %d (id %d) is in the wrong place", i, op)
        if inp == "words" and stream != "words":  # transforms, bitpack and huff
            _fail("corrupt", "op %d (id %d) needs words but gets bytes", i, op)
        if op in CHUNK_WIDE and i != 1:
            _fail("corrupt", "%s is op %d, not right after quant",
                  "lorenzo_nd" if op == LORENZO_ND else "lorenzo_interp", i)
        stream = out


# ---- §6: RZE ---------------------------------------------------------------

def rze_levels(L):
    """len[0] = L, len[k+1] = ceil(len[k] / 8); returns (levels, len)."""
    lens = [L]
    k = 0
    while True:
        lens.append((lens[k] + 7) // 8)
        if lens[k + 1] <= RZE_TOP_MAX or k + 1 == RZE_MAX_LEVELS:
            return k + 1, lens
        k += 1


def rze_decode(data, L):
    data = np.frombuffer(bytes(data), np.uint8)
    size = data.size
    levels, lens = rze_levels(L)
    if lens[levels] > size:
        raise ValueError("top bitmap overruns")
    bitmap = data[: lens[levels]]
    offset = lens[levels]
    for k in range(levels - 1, -1, -1):
        n = lens[k]
        if n & 7 and int(bitmap[-1]) >> (n & 7):
            raise ValueError("bits past the end of level %d" % k)
        bits = np.unpackbits(bitmap, bitorder="little")[:n].astype(bool)
        count = int(bits.sum())
        if offset + count > size:
            raise ValueError("kept bytes of level %d overrun" % k)
        kept = data[offset: offset + count]
        offset += count
        if k == 0:
            out = np.zeros(n, np.uint8)
            out[bits] = kept
        else:
            # a dropped byte repeats the last kept byte before it (0 if none)
            rank = np.cumsum(bits)
            out = np.concatenate(([0], kept)).astype(np.uint8)[rank]
        bitmap = out
    if offset != size:
        raise ValueError("%d bytes left over" % (size - offset))
    return bitmap.tobytes()


# ---- §5: transforms, quantizer -----------------------------------------------

def bitshuffle_decode(data, n, bits):
    """W planes of n/8 bytes, plane p = bit p; bit k of byte j = word 8j+k."""
    planes = np.frombuffer(data, np.uint8).reshape(bits, n // 8)
    b = np.unpackbits(planes, axis=1, bitorder="little").astype(np.uint64)  # (W, n)
    wt = np.uint32 if bits == 32 else np.uint64
    w = np.zeros(n, np.uint64)
    for p in range(bits):
        w |= b[p] << np.uint64(p)
    return w.astype(wt)


def lorenzo_decode(d, R, first):
    """§5.3: prefix sums down the columns (stride R), then along each row;
    rows start at i = 0 and wherever (first + i) mod R == 0."""
    wt = d.dtype.type
    n = d.size
    stride = R if 0 < R < n else n
    if stride < n:
        rows = -(-n // stride)
        y = np.zeros(rows * stride, d.dtype)
        y[:n] = d
        y = np.cumsum(y.reshape(rows, stride), axis=0, dtype=d.dtype).reshape(-1)[:n]
    else:
        y = d.copy()
    i = np.arange(n, dtype=np.int64)
    if R > 0:
        head = (R - first % R) % R
        start = np.where(i < head, 0, head + ((i - head) // R) * R)
    else:
        start = np.zeros(n, np.int64)
    cs = np.cumsum(y, dtype=d.dtype)  # wraps modulo 2^W
    base = np.where(start > 0, cs[np.maximum(start - 1, 0)], wt(0)).astype(d.dtype)
    return cs - base


def lorenzo_nd_xy(h):
    """§5.6: X and Y from rank and dims (a dim of 0 counts as absent)."""
    n = h.n_elements
    dims, rank = h.dims, h.rank
    X = dims[rank - 1] if rank >= 1 and dims[rank - 1] > 0 else n
    X = max(1, min(X, n))
    rows = -(-n // X)
    Y = dims[rank - 2] if rank >= 2 and dims[rank - 2] > 0 else rows
    Y = max(1, min(Y, rows))
    return X, Y


def lorenzo_nd_geometry(h):
    """§5.6: (ex, ey) of the header's predictor D."""
    n = h.n_elements
    X, Y = lorenzo_nd_xy(h)
    D = h.predictor
    if D == 1:
        return max(n, 1), 1
    return X, -(-n // X) if D == 2 else Y


def lorenzo_nd_decode(h, r):
    """§5.6 inverse on the chunk's n words r: prefix sums along x, y, z."""
    n = r.size
    ex, ey = lorenzo_nd_geometry(h)
    P = ex * ey
    planes = -(-n // P)
    w = np.zeros(planes * P, r.dtype)
    w[:n] = r  # the words past n are 0 and stay out of every sum that reaches n
    w = w.reshape(planes, ey, ex)
    w = np.cumsum(w, axis=2, dtype=r.dtype)  # x: runs of ex
    w = np.cumsum(w, axis=1, dtype=r.dtype)  # y: columns of a plane
    w = np.cumsum(w, axis=0, dtype=r.dtype)  # z
    return w.reshape(-1)[:n]


def interp_xyz(h):
    """§5.9: X, Y of §5.6 and Z = ceil(n / (X Y))."""
    X, Y = lorenzo_nd_xy(h)
    return X, Y, -(-h.n_elements // (X * Y))


def interp_mean(a, b):
    """§5.9 mean(a, b) = asr(a) + asr(b) + ((a | b) & 1) modulo 2^W, asr the
    arithmetic shift right by one (on the words' signed view)."""
    st = np.int32 if a.dtype == np.uint32 else np.int64

    def asr(u):
        return (u.view(st) >> st(1)).view(u.dtype)

    one = a.dtype.type(1)
    return asr(a) + asr(b) + ((a | b) & one)


def interp_neighbours(h):
    """§5.9 for every element g of the chunk: its stride s (0 for g = 0), its
    axis (0 = z, 1 = y, 2 = x: the order of the passes), the neighbour
    ga = g - s t and gb = g + s t, and whether gb exists."""
    n = h.n_elements
    X, Y, Z = interp_xyz(h)
    g = np.arange(n, dtype=np.int64)
    x, y, z = g % X, (g // X) % Y, g // (X * Y)
    v = x | y | z
    s = v & -v  # the lowest set bit of v
    axis = np.where((x & s) != 0, 2, np.where((y & s) != 0, 1, 0))
    t = np.choose(axis, [X * Y, X, 1])  # the axis's element stride
    c = np.choose(axis, [z, y, x])  # the coordinate along it
    E = np.choose(axis, [Z, Y, X])  # its extent
    ga = g - s * t
    gb = g + s * t
    has_b = (c + s < E) & (gb < n)
    return s, axis, ga, gb, has_b


def lorenzo_interp_decode(h, r):
    """§5.9 inverse of the interpolation predictor (predictor byte 4) on the
    chunk's n words r: for s = S, S/2, ..., 1 and for each s the axes z, y,
    x, every element of that stride and axis gets w[g] += pred(g) from the
    words as they are (one vectorised step per pass: the neighbours of a
    pass's elements belong to earlier passes)."""
    n = r.size
    w = r.copy()
    X, Y, Z = interp_xyz(h)
    top = max(X, Y, Z)
    if top <= 1:
        return w
    S = 1 << ((top - 1).bit_length() - 1)  # the largest power of two below top
    s, axis, ga, gb, has_b = interp_neighbours(h)
    # pass number of each element g >= 1: (log2 S - log2 s) * 3 + axis
    level = np.zeros(n, np.int64)
    level[1:] = S.bit_length() - 1 - (np.frexp(s[1:].astype(np.float64))[1] - 1)  # exact log2
    key = level * 3 + axis
    order = np.argsort(key[1:], kind="stable") + 1
    bounds = np.searchsorted(key[order], np.arange(3 * S.bit_length() + 1))
    k = 0
    while S >= 1:
        for ax in (0, 1, 2):
            idx = order[bounds[k]: bounds[k + 1]]
            k += 1
            if not idx.size:
                continue
            a = w[ga[idx]]
            b = w[np.where(has_b[idx], gb[idx], ga[idx])]
            pred = np.where(has_b[idx], interp_mean(a, b), a)
            w[idx] = w[idx] + pred
        S >>= 1
    return w


def chunk_wide_decode(h, r):
    """The inverse of ops[1] when it is lorenzo_nd (§5.6) or lorenzo_interp
    (§5.9: predictors 1..3 are lorenzo_nd's, 4 is interpolation)."""
    if h.ops[1] == LORENZO_INTERP and h.predictor == PREDICTOR_INTERP:
        return lorenzo_interp_decode(h, r)
    return lorenzo_nd_decode(h, r)


def transform_decode(op, words):
    wt = words.dtype.type
    bits = words.dtype.itemsize * 8
    if op == DELTA:
        return np.cumsum(words, dtype=words.dtype)  # wraps modulo 2^W
    if op == ZIGZAG:
        return (words >> wt(1)) ^ (wt(0) - (words & wt(1)))
    if op == NEGABINARY:
        M = wt(int("AA" * (bits // 8), 16))
        return (words ^ M) - M
    raise AssertionError(op)


def quant_decode(words, step, float_dtype):
    signed = words.view(np.int32 if words.dtype == np.uint32 else np.int64)
    with np.errstate(all="ignore"):
        return (signed.astype(np.float64) * np.float64(step)).astype(float_dtype)


# §5.4 log2_det / exp2_det: one binary64 operation at a time (numpy and
# Python float arithmetic is IEEE round-to-nearest-even and never fused),
# in the document's order; no library log2/exp2.

def _dbits(x):
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def _dfrom(u):
    return struct.unpack("<d", struct.pack("<Q", u))[0]


def log2_det(a):
    """log2 of a finite double a > 0 (a Python float)."""
    a = float(a)
    e_adj = 0
    u = _dbits(a)
    if u >> 52 == 0:
        a = a * 18446744073709551616.0  # 2^64, exact
        u = _dbits(a)
        e_adj = -64
    e = ((u >> 52) & 0x7FF) - 1023 + e_adj
    m = _dfrom((u & 0x000FFFFFFFFFFFFF) | 0x3FF0000000000000)
    if m > 1.4142135623730951:
        m = m * 0.5
        e += 1
    t = (m - 1.0) / (m + 1.0)
    t2 = t * t
    s = 1.0 / 17.0
    for k in (15.0, 13.0, 11.0, 9.0, 7.0, 5.0, 3.0):
        s = 1.0 / k + t2 * s
    s = 1.0 + t2 * s
    return float(e) + (t * s) * 2.8853900817779268


_EXP2_COEFFS = (1.0 / 39916800.0, 1.0 / 3628800.0, 1.0 / 362880.0, 1.0 / 40320.0,
                1.0 / 5040.0, 1.0 / 720.0, 1.0 / 120.0, 1.0 / 24.0, 1.0 / 6.0, 0.5, 1.0, 1.0)


def _pow2i(j):
    """2^j, -1022 <= j <= 1023, from the bits (j an int64 array)."""
    return ((j + 1023).astype(np.uint64) << np.uint64(52)).view(np.float64)


def exp2_det(y):
    """2^y elementwise on a float64 array."""
    y = np.asarray(y, np.float64)
    out = np.empty_like(y)
    big = ~(y < 1024.0)
    small = ~big & ~(y > -1100.0)
    mid = ~big & ~small
    out[big] = np.inf
    out[small] = 0.0
    ym = y[mid]
    k = np.floor(ym)
    g = (ym - k) * 0.69314718055994531
    p = np.full_like(ym, 1.0 / 479001600.0)
    for c in _EXP2_COEFFS:
        p = c + g * p  # product rounded, then the sum rounded
    ki = k.astype(np.int64)
    normal = ki >= -1022
    r = np.empty_like(ym)
    with np.errstate(over="ignore"):
        r[normal] = p[normal] * _pow2i(ki[normal])
        r[~normal] = (p[~normal] * _pow2i(ki[~normal] + 600)) * _pow2i(np.full(int((~normal).sum()), -600, np.int64))
    out[mid] = r
    return out


def pwrel_decode(words, step, float_dtype):
    """§5.4 PW_REL recon of each word."""
    bits = words.dtype.itemsize * 8
    wt = words.dtype.type
    zero = wt(1 << (bits - 1))
    signed = words.view(np.int32 if bits == 32 else np.int64).astype(np.int64)
    s = (words & wt(1)).astype(np.int64)
    b = (signed - s) // 2  # exact: even
    with np.errstate(all="ignore"):
        v = exp2_det(b.astype(np.float64) * np.float64(step)).astype(float_dtype)
    v = np.where(s == 1, -v, v)
    v[words == zero] = float_dtype.type(0.0)
    return v


def lossless_decode(words, float_dtype):
    """§5.4 LOSSLESS: u = (w & S) ? w ^ S : ~w, the value's bits."""
    bits = words.dtype.itemsize * 8
    S = words.dtype.type(1 << (bits - 1))
    u = np.where((words & S) != 0, words ^ S, ~words).astype(words.dtype)
    return u.view(float_dtype)


def quant_step(h):
    """§5.4 step from the header's bound and mode."""
    if h.mode == MODE_PW_REL:
        return 2.0 * log2_det(1.0 + h.abs_bound)
    if h.mode == MODE_LOSSLESS:
        return 0.0
    return 2.0 * h.abs_bound


def quant_decode_mode(h, words):
    dt = DTYPES[h.dtype]
    if h.mode == MODE_LOSSLESS:
        return lossless_decode(words, dt)
    if h.mode == MODE_PW_REL:
        return pwrel_decode(words, quant_step(h), dt)
    return quant_decode(words, quant_step(h), dt)


# ---- §5.5: bitpack --------------------------------------------------------------

def bitpack_decode(payload, n, bits):
    """Widths of the n/32 groups, then their planes; raises ValueError on the
    three checks of §5.5."""
    data = np.frombuffer(bytes(payload), np.uint8)
    size = data.size
    G = n // 32
    if size < G:
        raise ValueError("%d bytes, fewer than the %d group widths" % (size, G))
    widths = data[:G].astype(np.int64)
    if (widths > bits).any():
        raise ValueError("group width %d exceeds %d bits" % (int(widths.max()), bits))
    if G + 4 * int(widths.sum()) != size:
        raise ValueError("planes take %d bytes, payload has %d" % (4 * int(widths.sum()), size - G))
    planes = np.frombuffer(data.tobytes(), "<u4", offset=G) if size > G else np.zeros(0, np.uint32)
    wt = np.uint32 if bits == 32 else np.uint64
    out = np.zeros(n, wt)
    k = np.arange(32, dtype=np.uint32)
    pos = 0
    for g in range(G):
        b = int(widths[g])
        if not b:
            continue
        P = planes[pos: pos + b]
        pos += b
        bit = ((P[:, None] >> k[None, :]) & np.uint32(1)).astype(wt)  # (b, 32)
        shifted = bit << np.arange(b, dtype=wt)[:, None]
        out[32 * g: 32 * g + 32] = np.bitwise_or.reduce(shifted, axis=0)
    return out

# ---- §5.7: huff -------------------------------------------------------------------

HUFF_MAX_LEN = 12
HUFF_MAX_G = 8
HUFF_LITERALS = 64
HUFF_RUN_SYMBOLS = 29


class _Bits:
    """§5.7 bit stream: bit k is bit k mod 8 of byte k div 8; u(b) reads the
    next b bits (b <= 64), least significant first. Reading past the end
    raises ValueError."""

    def __init__(self, data):
        self.data = bytes(data) + bytes(9)  # a 9-byte window never runs off
        self.n_bits = 8 * len(data)
        self.pos = 0

    def peek(self, b):
        """The next b bits without consuming them (0 past the end)."""
        byte = self.pos >> 3
        window = int.from_bytes(self.data[byte: byte + 9], "little")
        return (window >> (self.pos & 7)) & ((1 << b) - 1)

    def u(self, b):
        if self.pos + b > self.n_bits:
            raise ValueError("stream ends inside a field (bit %d of %d)" % (self.pos, self.n_bits))
        v = self.peek(b)
        self.pos += b
        return v

    def gamma(self):
        zeros = 0
        while self.u(1) == 0:
            zeros += 1
            if zeros > 63:
                raise ValueError("Elias gamma code of more than 63 zero bits")
        return (1 << zeros) + self.u(zeros)


def huff_alphabet(bits):
    """(RB, A) of §5.7: the first run symbol and the alphabet size."""
    rb = HUFF_LITERALS + bits - 6
    return rb, rb + HUFF_RUN_SYMBOLS


def huff_read_code(br, bits, count_less_one=True, runs=True):
    """§5.7 step 2: the code lengths, then the canonical code as a table of
    2^12 entries indexed by the next 12 stream bits: (symbol, length) or
    None where no code matches. huffctx (§5.8): the count is k itself (0 =
    an empty code) and its code 1 holds no run symbol (runs=False)."""
    rb, A = huff_alphabet(bits)
    k = br.u(8) + (1 if count_less_one else 0)
    if k > A:
        raise ValueError("%d symbols in an alphabet of %d" % (k, A))
    lengths = []
    symbol = -1
    for i in range(k):
        d = br.gamma()
        symbol = d - 1 if i == 0 else symbol + d
        if symbol >= A:
            raise ValueError("symbol %d is outside the alphabet of %d" % (symbol, A))
        if not runs and symbol >= rb:
            raise ValueError("run symbol %d in the code after a run" % symbol)
        length = br.u(4)
        if not 1 <= length <= HUFF_MAX_LEN:
            raise ValueError("symbol %d has code length %d" % (symbol, length))
        lengths.append((length, symbol))
    if k == 1 and lengths[0][0] != 1:
        raise ValueError("the one symbol has code length %d, not 1" % lengths[0][0])
    if k >= 2 and sum(1 << (HUFF_MAX_LEN - ln) for ln, _ in lengths) != 1 << HUFF_MAX_LEN:
        raise ValueError("code lengths' Kraft sum is not 1")
    # canonical code (RFC 1951 §3.2.2): in (length, symbol) order
    table = [None] * (1 << HUFF_MAX_LEN)
    code, prev = 0, None
    for length, symbol in sorted(lengths):
        if prev is not None:
            code = (code + 1) << (length - prev)
        prev = length
        # the stream holds the code most significant bit first: reversed,
        # it is the low `length` bits of every 12-bit window it starts
        rev = int(format(code, "0%db" % length)[::-1], 2)
        for high in range(1 << (HUFF_MAX_LEN - length)):
            table[rev | (high << length)] = (symbol, length)
    return table


def huff_decode(payload, n, bits, two_codes=False):
    """The n words of a §5.7 huff stream (two_codes: a §5.8 huffctx stream)
    of W = bits; raises ValueError on every refusal §5.7 and §5.8 list (and
    on a stream that ends inside a field)."""
    rb, _ = huff_alphabet(bits)
    br = _Bits(payload)
    g = br.u(4)
    if g > HUFF_MAX_G:
        raise ValueError("group size exponent %d > %d" % (g, HUFF_MAX_G))
    G = 64 << g
    n_groups = -(-n // G)
    if two_codes:
        tables = [huff_read_code(br, bits, False), huff_read_code(br, bits, False, runs=False)]
    else:
        tables = [huff_read_code(br, bits)] * 2  # one code whatever came before
    w = br.u(5)
    listed = [br.u(w) for _ in range(n_groups - 1)]
    out = [0] * n
    for gi in range(n_groups):
        lo, hi = gi * G, min(n, gi * G + G)
        start = br.pos
        i, after_run = lo, False
        while i < hi:
            entry = tables[after_run][br.peek(HUFF_MAX_LEN)]
            if entry is None or br.pos + entry[1] > br.n_bits:
                raise ValueError("bits at %d match no code" % br.pos)
            symbol, length = entry
            br.pos += length
            if symbol < HUFF_LITERALS:
                out[i] = symbol + 1
                i += 1
                after_run = False
            elif symbol < rb:
                b = symbol - HUFF_LITERALS + 7
                v = (1 << (b - 1)) + br.u(b - 1)
                if v <= HUFF_LITERALS:
                    raise ValueError("bit-length class gives %d, not > 64" % v)
                out[i] = v
                i += 1
                after_run = False
            else:
                if after_run:
                    raise ValueError("a zero run follows a zero run in group %d" % gi)
                t = symbol - rb
                if t == 0:
                    r = 1
                else:
                    c, h = (t + 1) // 2, (t + 1) % 2
                    r = (1 << c) | (h << (c - 1)) | br.u(c - 1)
                if i + r > hi:
                    raise ValueError("a run of %d zeros passes the end of group %d" % (r, gi))
                i += r  # out[] is zero already
                after_run = True
        if gi < n_groups - 1 and br.pos - start != listed[gi]:
            raise ValueError("group %d uses %d bits, lists %d" % (gi, br.pos - start, listed[gi]))
    left = br.n_bits - br.pos
    if left > 7 or br.peek(left):
        raise ValueError("%d bits left after the last group (at most 7 zero bits may be)" % left)
    return np.array(out, np.uint32 if bits == 32 else np.uint64)


def decode_subchunk(h, s, entry, payload, m):
    """The sub-chunk's values, or with lorenzo_nd or lorenzo_interp (§5.6,
    §5.9, §8 step 6) its words before that op's chunk-wide inverse."""
    wide = h.esize == 8
    wt = np.uint64 if wide else np.uint32
    bits = 64 if wide else 32
    m_pad = pad64(m)
    L = m_pad * h.esize
    size = entry & SIZE_MASK
    chain = h.ops[: h.n_ops]
    if entry & RAW_BIT:
        if size != L:
            _fail("corrupt", "raw sub-chunk holds %d bytes, expected %d", size, L)
        data = bytes(payload)
    elif chain[-1] == RZE:
        try:
            data = rze_decode(payload, L)
        except ValueError as e:
            _fail("corrupt", "sub-chunk RZE stream: %s", e)
    elif chain[-1] == BITPACK:
        try:
            data = bitpack_decode(payload, m_pad, bits)  # words
        except ValueError as e:
            _fail("corrupt", "sub-chunk bit-packed stream: %s", e)
    elif chain[-1] in (HUFF, HUFFCTX):
        try:
            data = huff_decode(payload, m_pad, bits, chain[-1] == HUFFCTX)  # words
        except ValueError as e:
            _fail("corrupt", "sub-chunk huff stream: %s", e)
    else:
        _fail("corrupt", "sub-chunk of a raw-coded chain is not marked raw")
    stream = data  # bytes, or words after bitpack and huff
    lnd = chain[1] in CHUNK_WIDE
    for op in reversed(chain[2 if lnd else 1:-1]):
        if op == BITSHUFFLE:
            stream = bitshuffle_decode(stream, m_pad, bits)
        else:
            if isinstance(stream, bytes):
                stream = np.frombuffer(stream, "<u%d" % h.esize).astype(wt)
            if op == LORENZO:
                stream = lorenzo_decode(stream, h.row, s * h.subchunk_elems)
            else:
                stream = transform_decode(op, stream)
    if isinstance(stream, bytes):
        stream = np.frombuffer(stream, "<u%d" % h.esize).astype(wt)
    return stream[:m] if lnd else quant_decode_mode(h, stream[:m])


# ---- §7: outlier side section -----------------------------------------------

def _unpack_side_block(body, off, end, entry, padded, esize):
    L = padded * esize
    size = entry & SIZE_MASK
    if size > end - off:
        _fail("corrupt", "outlier section overruns the chunk")
    blob = body[off: off + size]
    if entry & RAW_BIT:
        if size != L:
            _fail("corrupt", "raw outlier block has %d bytes, expected %d", size, L)
        data = bytes(blob)
    else:
        try:
            data = rze_decode(blob, L)
        except ValueError as e:
            _fail("corrupt", "outlier section RZE stream: %s", e)
    return bitshuffle_decode(data, padded, esize * 8), off + size


def decode_side(h, body, off, end):
    if end - off < 8:
        _fail("truncated", "outlier section is truncated")
    count = h.n_outliers
    padded = pad64(count)
    e_gaps, e_vals = struct.unpack_from("<II", body, off)
    start = off
    off += 8
    gaps, off = _unpack_side_block(body, off, end, e_gaps, padded, 4)
    gaps = gaps[:count].astype(np.uint64)
    pos = np.cumsum(gaps + np.uint64(1)) - np.uint64(1)  # p0 = g0, p_i = p_{i-1} + 1 + g_i
    if count and int(pos[-1]) >= h.n_elements:
        bad = int(np.argmax(pos >= np.uint64(h.n_elements)))
        _fail("corrupt", "outlier %d points past the chunk's %d elements", bad, h.n_elements)
    x, off = _unpack_side_block(body, off, end, e_vals, padded, h.esize)
    vals = np.bitwise_xor.accumulate(x[:count]) if count else x[:0]
    return pos.astype(np.int64), vals, off - start


# ---- §8: the whole chunk -------------------------------------------------------

def decode_chunk(buf):
    buf = bytes(buf)
    h = parse_header(buf)
    body = buf[HEADER_BYTES: len(buf) - CHECKSUM_BYTES]
    if h.stored_raw:
        if len(body) != h.input_bytes:
            _fail("corrupt", "stored-raw chunk holds %d bytes, header says %d", len(body), h.input_bytes)
        return _to_byte_order(h, body)
    esize = h.esize
    table = 4 * h.n_subchunks
    if table > len(body):
        _fail("truncated", "chunk ends inside its size table")
    entries = struct.unpack_from("<%dI" % h.n_subchunks, body, 0)
    offsets, off, room = [], 0, len(body) - table
    for s, e in enumerate(entries):
        size = e & SIZE_MASK
        m = min(h.subchunk_elems, h.n_elements - s * h.subchunk_elems)
        L = pad64(m) * esize
        if size > L or (size == L and not e & RAW_BIT):
            _fail("corrupt", "sub-chunk %d claims %d bytes, more than its %d raw bytes", s, size, L)
        if size > room - off:
            _fail("truncated", "sub-chunk %d runs past the end of the chunk", s)
        offsets.append(off)
        off += size
    payload_end = table + off
    used = 0
    if h.n_outliers:
        pos, vals, used = decode_side(h, body, payload_end, len(body))
    trailing = h.input_bytes - h.n_elements * esize
    if payload_end + used + trailing != len(body):
        _fail("corrupt", "chunk body has %d bytes, its parts add up to %d", len(body),
              payload_end + used + trailing)
    lnd = h.ops[1] in CHUNK_WIDE
    values = np.zeros(h.n_elements, np.dtype("<u%d" % esize) if lnd else DTYPES[h.dtype])
    for s, e in enumerate(entries):
        lo = s * h.subchunk_elems
        m = min(h.subchunk_elems, h.n_elements - lo)
        start = table + offsets[s]
        values[lo: lo + m] = decode_subchunk(h, s, e, body[start: start + (e & SIZE_MASK)], m)
    if lnd:  # §5.6, §5.9: the chunk-wide inverse, then the quantizer decode
        with np.errstate(over="ignore"):
            values = quant_decode_mode(h, chunk_wide_decode(h, values))
    raw = values.view("<u%d" % esize)
    if h.n_outliers:
        raw[pos] = vals
    return _to_byte_order(h, raw.tobytes() + body[payload_end + used:])


def _to_byte_order(h, data):
    """§3 flag bit 1 (version 2): the body holds little-endian values; the
    chunk decodes to big-endian ones (each whole element reversed, trailing
    bytes as they are)."""
    if not h.flags & FLAG_BIG_ENDIAN:
        return data
    n = h.n_elements * h.esize
    whole = np.frombuffer(data[:n], "<u%d" % h.esize).astype(">u%d" % h.esize)
    return whole.tobytes() + data[n:]


def decode_array(buf):
    """The decoded elements as a numpy array (trailing bytes dropped)."""
    h = parse_header(buf)
    out = decode_chunk(buf)
    dt = DTYPES[h.dtype].newbyteorder(">") if h.flags & FLAG_BIG_ENDIAN else DTYPES[h.dtype]
    return np.frombuffer(out[: h.n_elements * h.esize], dt)
