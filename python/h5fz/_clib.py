"""ctypes bindings of libh5fz_py.so (python/src/h5fz_py.h): the C library
beside this file, which holds the spec parser and the batched codec and
links no libhdf5 and no Python."""
import ctypes
import os

HERE = os.path.dirname(os.path.abspath(__file__))
LIBRARY = os.path.join(HERE, "libh5fz_py.so")

MAX_RANK = 8
CD_MAX = 64  # more than any spec plus dataset part holds (H5FZ_CD_MAX is 31)


class Geom(ctypes.Structure):
    """h5fzpy_geom: an array and its chunk grid."""
    _fields_ = [("rank", ctypes.c_uint32),
                ("dims", ctypes.c_uint64 * MAX_RANK),
                ("chunk", ctypes.c_uint64 * MAX_RANK),
                ("exact_fill", ctypes.c_int),
                ("fill_bits", ctypes.c_uint64),
                ("fill", ctypes.c_double)]


class Chunk(ctypes.Structure):
    """h5fzpy_chunk: one container as the sink gets it."""
    _fields_ = [("index", ctypes.c_uint64),
                ("container", ctypes.c_void_p),
                ("bytes", ctypes.c_size_t),
                ("abs_bound", ctypes.c_double),
                ("n_outliers", ctypes.c_uint32),
                ("stored_raw", ctypes.c_int)]


class Exec(ctypes.Structure):
    """h5fzpy_exec: which executor ran."""
    _fields_ = [("on_gpu", ctypes.c_int),
                ("kernel_class", ctypes.c_char * 64),
                ("plan_digest", ctypes.c_uint64)]


class SpecView(ctypes.Structure):
    """h5fzpy_spec_view: the user part of a spec."""
    _fields_ = [("mode", ctypes.c_int),
                ("bound", ctypes.c_double),
                ("subchunk_bytes", ctypes.c_uint32),
                ("chain", ctypes.c_char * 256),
                ("spec", ctypes.c_char * 512)]


class OptionsStruct(ctypes.Structure):
    """h5fzpy_options: what a call uses instead of the environment (-1: the environment's)."""
    _fields_ = [("device", ctypes.c_int),
                ("gpu_ordinal", ctypes.c_int),
                ("threads", ctypes.c_int),
                ("strict", ctypes.c_int),
                ("quiet", ctypes.c_int),
                ("cache_dir", ctypes.c_char * 1024)]


SINK = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(Chunk))
SOURCE = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_uint64,
                          ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_size_t))


def _load():
    if not os.path.isfile(LIBRARY):
        raise ImportError("h5fz: %s is missing; install the package with `pip install .` from the "
                          "h5fz repository (or use a CMake build's <build>/python folder)" % LIBRARY)
    lib = ctypes.CDLL(LIBRARY)
    lib.h5fzpy_version.restype = ctypes.c_char_p
    lib.h5fzpy_version.argtypes = []
    lib.h5fzpy_filter_id.restype = ctypes.c_int
    lib.h5fzpy_filter_id.argtypes = []
    lib.h5fzpy_last_error.restype = ctypes.c_char_p
    lib.h5fzpy_last_error.argtypes = []
    lib.h5fzpy_spec_cd_values.restype = ctypes.c_int
    lib.h5fzpy_spec_cd_values.argtypes = [
        ctypes.c_char_p, ctypes.POINTER(ctypes.c_uint), ctypes.c_size_t, ctypes.POINTER(ctypes.c_size_t),
        ctypes.c_char_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_int)]
    lib.h5fzpy_spec_caution.restype = ctypes.c_int
    lib.h5fzpy_spec_caution.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t]
    lib.h5fzpy_mode_at.restype = ctypes.c_int
    lib.h5fzpy_mode_at.argtypes = [ctypes.c_size_t, ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(ctypes.c_int)]
    lib.h5fzpy_describe_cd_values.restype = ctypes.c_int
    lib.h5fzpy_describe_cd_values.argtypes = [
        ctypes.POINTER(ctypes.c_uint), ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t,
        ctypes.POINTER(ctypes.c_int)]
    lib.h5fzpy_spec_view_of_cd_values.restype = ctypes.c_int
    lib.h5fzpy_spec_view_of_cd_values.argtypes = [ctypes.POINTER(ctypes.c_uint), ctypes.c_size_t,
                                                  ctypes.POINTER(SpecView)]
    lib.h5fzpy_mode_id_at.restype = ctypes.c_int
    lib.h5fzpy_mode_id_at.argtypes = [ctypes.c_size_t, ctypes.POINTER(ctypes.c_int), ctypes.c_char_p, ctypes.c_size_t]
    lib.h5fzpy_op_at.restype = ctypes.c_int
    lib.h5fzpy_op_at.argtypes = [ctypes.c_size_t, ctypes.POINTER(ctypes.c_uint), ctypes.POINTER(ctypes.c_char_p),
                                 ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(ctypes.c_char_p)]
    lib.h5fzpy_encode.restype = ctypes.c_int
    lib.h5fzpy_encode.argtypes = [
        ctypes.POINTER(ctypes.c_uint), ctypes.c_size_t, ctypes.POINTER(Geom), ctypes.c_void_p, ctypes.c_int,
        SINK, ctypes.c_void_p, ctypes.POINTER(Exec)]
    lib.h5fzpy_decode.restype = ctypes.c_int
    lib.h5fzpy_decode.argtypes = [
        ctypes.POINTER(ctypes.c_uint), ctypes.c_size_t, ctypes.POINTER(Geom), SOURCE, ctypes.c_void_p,
        ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(Exec)]
    lib.h5fzpy_encode_with.restype = ctypes.c_int
    lib.h5fzpy_encode_with.argtypes = [ctypes.POINTER(OptionsStruct)] + lib.h5fzpy_encode.argtypes
    lib.h5fzpy_decode_with.restype = ctypes.c_int
    lib.h5fzpy_decode_with.argtypes = [ctypes.POINTER(OptionsStruct)] + lib.h5fzpy_decode.argtypes
    lib.h5fzpy_set_process_options.restype = ctypes.c_int
    lib.h5fzpy_set_process_options.argtypes = [ctypes.POINTER(OptionsStruct), ctypes.POINTER(ctypes.c_int)]
    lib.h5fzpy_chunk_encode.restype = ctypes.c_int
    lib.h5fzpy_chunk_encode.argtypes = [
        ctypes.POINTER(ctypes.c_uint), ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_uint32,
        ctypes.POINTER(ctypes.c_uint64), ctypes.c_int, ctypes.c_double, ctypes.c_void_p, ctypes.c_size_t,
        ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_size_t)]
    lib.h5fzpy_chunk_decode.restype = ctypes.c_int
    lib.h5fzpy_chunk_decode.argtypes = [
        ctypes.POINTER(ctypes.c_uint), ctypes.c_size_t, ctypes.c_void_p, ctypes.c_size_t,
        ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_size_t), ctypes.POINTER(ctypes.c_int),
        ctypes.POINTER(ctypes.c_int)]
    lib.h5fzpy_free.restype = None
    lib.h5fzpy_free.argtypes = [ctypes.c_void_p]
    lib.h5fzpy_config_json.restype = ctypes.c_int
    lib.h5fzpy_config_json.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
    return lib


LIB = _load()


def last_error():
    """The C library's reason for the last failure on this thread."""
    return LIB.h5fzpy_last_error().decode("utf-8", "replace")


def cd_array(words):
    """cd_values words as a C unsigned[] (and its length)."""
    words = [int(w) for w in words]
    return (ctypes.c_uint * max(1, len(words)))(*words), len(words)


def spec_cd_values(text):
    """(canonical text, user cd_values, has_fill) of spec text, parsed by the
    C parser exactly as `h5fz cd-values` parses it; ValueError with its
    message for a bad spec."""
    cd = (ctypes.c_uint * CD_MAX)()
    n = ctypes.c_size_t(0)
    canon = ctypes.create_string_buffer(1024)
    has_fill = ctypes.c_int(0)
    raw = None if text is None else text.encode("utf-8")
    rc = LIB.h5fzpy_spec_cd_values(raw, cd, CD_MAX, ctypes.byref(n), canon, len(canon), ctypes.byref(has_fill))
    if rc != 0:
        raise ValueError("h5fz: invalid spec %r: %s" % (text or "", last_error()))
    return canon.value.decode("utf-8"), tuple(cd[i] for i in range(n.value)), bool(has_fill.value)


def modes():
    """The error-bound modes of the C library's mode table, in order: a list
    of (name, takes_bound), e.g. ("abs", True), ("lossless", False)."""
    out = []
    name, takes = ctypes.c_char_p(), ctypes.c_int(0)
    while LIB.h5fzpy_mode_at(len(out), ctypes.byref(name), ctypes.byref(takes)) == 0:
        out.append((name.value.decode("ascii"), bool(takes.value)))
    return out


def spec_caution(text):
    """The warning the C library gives for valid spec text that is most
    likely a mistake (a rel= bound above 1), or None."""
    buf = ctypes.create_string_buffer(512)
    raw = None if text is None else text.encode("utf-8")
    return buf.value.decode("utf-8") if LIB.h5fzpy_spec_caution(raw, buf, len(buf)) else None


def describe_cd_values(words):
    """(canonical spec text, dtype code 0/1/2) of a dataset's cd_values."""
    cd, n = cd_array(words)
    canon = ctypes.create_string_buffer(1024)
    dtype = ctypes.c_int(0)
    if LIB.h5fzpy_describe_cd_values(cd, n, canon, len(canon), ctypes.byref(dtype)) != 0:
        raise ValueError("h5fz: the dataset's cd_values are not h5fz's: %s" % last_error())
    return canon.value.decode("utf-8"), dtype.value


def spec_view(words):
    """(mode id, bound, subchunk bytes, chain text, canonical user spec
    text) of cd_values words, decoded and validated by the C library;
    ValueError with its message when they are not a valid h5fz spec."""
    cd, n = cd_array(words)
    v = SpecView()
    if LIB.h5fzpy_spec_view_of_cd_values(cd, n, ctypes.byref(v)) != 0:
        raise ValueError("h5fz: cd_values %s are not a valid h5fz spec: %s" % (list(words), last_error()))
    return v.mode, v.bound, v.subchunk_bytes, v.chain.decode(), v.spec.decode()


def mode_ids():
    """[(id, keyword)] of the codec's error-bound modes (the mode table)."""
    out = []
    ident, name = ctypes.c_int(0), ctypes.create_string_buffer(32)
    while LIB.h5fzpy_mode_id_at(len(out), ctypes.byref(ident), name, len(name)) == 0:
        out.append((ident.value, name.value.decode()))
    return out


def ops():
    """[(id, name, kind, summary)] of the codec's op table."""
    out = []
    ident = ctypes.c_uint(0)
    name, kind, summary = ctypes.c_char_p(), ctypes.c_char_p(), ctypes.c_char_p()
    while LIB.h5fzpy_op_at(len(out), ctypes.byref(ident), ctypes.byref(name), ctypes.byref(kind),
                           ctypes.byref(summary)) == 0:
        out.append((ident.value, name.value.decode(), kind.value.decode(), summary.value.decode()))
    return out


def config_json():
    buf = ctypes.create_string_buffer(8192)
    if LIB.h5fzpy_config_json(buf, len(buf)) != 0:
        raise RuntimeError("h5fz: the executor description does not fit its buffer")
    return buf.value.decode("utf-8", "replace")
