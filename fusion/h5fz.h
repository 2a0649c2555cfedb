/*
 * h5fz.h - the ChunkFusionSpec and the chunk codec of h5fz.
 *
 * This header is what the filter, the CLI and applications see of the codec.
 * It knows nothing of HDF5: a chunk is a byte buffer, a spec is a struct.
 *
 * Error handling: every function that can fail returns an h5fz_status
 * (0 = H5FZ_OK, negative = error). The human-readable reason of the last
 * failure on the calling thread is available from h5fz_last_error().
 * No function aborts the process or prints.
 */
#ifndef H5FZ_H
#define H5FZ_H

#include <stddef.h>
#include <stdint.h>

#include "h5fz_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- status codes: h5fz_status, h5fz_status_name and h5fz_last_error
 * come from errors/h5fz_status.h (included above), shared with the
 * planner. */

/* ---- the spec ------------------------------------------------------------ */
#define H5FZ_MAX_OPS 10 /* one map + up to 8 transforms + one coder */
#define H5FZ_MAX_TRANSFORMS 8
#define H5FZ_MAX_RANK 4                  /* chunk dims kept (slowest dims folded) */
#define H5FZ_CD_VERSION 1                /* first word of the user cd_values */
#define H5FZ_CD_USER_MAX 20              /* h5repack's limit on user words */
#define H5FZ_CD_LOCAL_MARKER 0x4C5A4648u /* 'H','F','Z','L': set_local words */
#define H5FZ_CD_BIG_ENDIAN 0x100u        /* in the dataset part's type word: big-endian values */
#define H5FZ_CD_MAX (H5FZ_CD_USER_MAX + 4 + H5FZ_MAX_RANK + 3)

/* 'H','F','Z','M': the user part's missing= words (docs/spec.md §4.1) */
#define H5FZ_CD_MISSING_MARKER 0x4D5A4648u

#define H5FZ_MAX_CHUNK_BYTES 0x7fff0000u /* bytes of one chunk, format v1 (u32 offsets inside it) */
#define H5FZ_DEFAULT_SUBCHUNK_BYTES 16384u
#define H5FZ_MIN_SUBCHUNK_BYTES 512u
#define H5FZ_MAX_SUBCHUNK_BYTES 65536u

typedef enum { H5FZ_DTYPE_UNKNOWN = 0, H5FZ_DTYPE_F32 = 1, H5FZ_DTYPE_F64 = 2 } h5fz_dtype;

/* Error-bound modes. ABS: |x - x'| <= bound. REL: |x - x'| <= bound * (max -
 * min) of the finite values of the chunk being encoded, leaving out values
 * equal to the dataset's fill value (HDF5 pads edge chunks with it); the
 * filter sees one chunk at a time. The chunk's absolute bound is 1/sqrt(2)
 * times a power of 3 within that, so a chunk written in parts keeps it; see
 * docs/spec.md §6. */
typedef enum {
  H5FZ_MODE_ABS = 0,     /* |x - x'| <= bound */
  H5FZ_MODE_REL = 1,     /* |x - x'| <= bound * range of the chunk (above) */
  H5FZ_MODE_PW_REL = 2,  /* |x - x'| <= bound * |x|, 0 < bound < 1; signs and zeros exact */
  H5FZ_MODE_LOSSLESS = 3 /* bit-exact; bound 0 */
} h5fz_mode;

/* Op ids: stable numbers stored in cd_values and in every chunk header
 * (docs/format.md §5.1). The op table (fusion/format/h5fz_optable.c) is
 * where an op and its id are defined: each row names its id. These
 * constants are the ids of the ops that existed when the table became the
 * one definition; they never change and stay for the code that uses them
 * (tests/core/test_core_roundtrip.c checks them against the rows). An op
 * added later has its number in its row only: find it by name with
 * h5fz_op_id_of ("bitnot") or list the table with h5fz_op_at / `h5fz ops`. */
typedef enum {
  H5FZ_OP_NONE = 0,
  H5FZ_OP_QUANT = 1,       /* map: error-bounded quantizer + outlier escape */
  H5FZ_OP_DELTA = 10,      /* transform: 1-D delta within a sub-chunk */
  H5FZ_OP_ZIGZAG = 11,     /* transform: signed -> unsigned, small |v| small */
  H5FZ_OP_NEGABINARY = 12, /* transform: two's complement -> base -2 */
  H5FZ_OP_BITSHUFFLE = 13, /* transform: words -> bit planes (bytes) */
  H5FZ_OP_LORENZO = 14,    /* transform: 2-D Lorenzo over rows of the chunk's last dim */
  H5FZ_OP_LORENZO_ND = 15, /* transform: 1/2/3-D Lorenzo over the chunk's shape, right after quant */
  H5FZ_OP_RZE = 30,        /* coder: repeated-zero elimination */
  H5FZ_OP_RAW = 31,        /* coder: bytes as they are */
  H5FZ_OP_BITPACK = 32,    /* coder: fixed-length bit packing per 32 words (cuSZp) */
  H5FZ_OP_HUFF = 33,       /* coder: zero runs + canonical Huffman per sub-chunk (chunk format 3) */
  H5FZ_OP_HUFFCTX = 34     /* coder: huff with a second code for the token after a run (chunk format 4) */
} h5fz_op_id;

typedef struct {
  /* user part (travels in the user cd_values) */
  h5fz_mode mode;
  double bound;              /* ABS: absolute; REL: fraction of the range;
                                 PW_REL: fraction of |x|; LOSSLESS: 0 */
  uint32_t subchunk_bytes;   /* bytes of input per sub-chunk (thread block) */
  uint32_t n_ops;            /* map, transforms, coder, in order */
  uint8_t ops[H5FZ_MAX_OPS]; /* h5fz_op_id values */
  /* dataset part (filled by set_local; 0 when unknown) */
  h5fz_dtype dtype;
  uint32_t rank;                /* 0..H5FZ_MAX_RANK */
  uint32_t dims[H5FZ_MAX_RANK]; /* chunk dims, slowest first, in elements */
  int has_fill;                 /* 1: the dataset's fill value is known */
  double fill;                  /* it; REL ranges leave it out (edge-chunk padding) */
  int big_endian;               /* 1: the dataset's values are big-endian IEEE: the
                                 bytes the codec takes and gives back (the
                                 container codes them little-endian and records
                                 the order, docs/format.md §3) */
  /* user part again (after the dataset part's fields, so the struct's
   * earlier members keep their offsets) */
  int has_missing; /* 1: missing is the data's missing-value marker (missing=) */
  double missing;  /* netCDF's _FillValue / missing_value: values equal to it
                      (in dtype) come back exactly, no other value decodes to
                      it, and REL ranges leave it out like the fill value */
} h5fz_spec;

/* Fill *spec with the defaults that `UD=<id>,0,0` means: REL 1e-4, the
 * default chain quant -> delta -> zigzag -> bitshuffle -> rze, 16 KiB
 * sub-chunks, unknown dtype and dims. Returns H5FZ_OK or H5FZ_ERR_ARG. */
int h5fz_spec_default(h5fz_spec *spec);

/* Parse the text form, e.g. "abs=1e-3", "rel=1e-4 delta zigzag bitshuffle
 * rze", "abs=0.5 -> delta -> negabinary -> bitshuffle -> rze subchunk=8192".
 * A bound alone means the default chain. Grammar in docs/spec.md.
 * Returns H5FZ_OK, or H5FZ_ERR_SPEC with the reason in h5fz_last_error(). */
int h5fz_spec_parse(const char *text, h5fz_spec *spec);

/* Write the canonical text form of *spec into buf (buf_len bytes, NUL
 * terminated). Returns H5FZ_OK or H5FZ_ERR_ARG if buf is too small or the
 * mode is unknown. */
int h5fz_spec_format(const h5fz_spec *spec, char *buf, size_t buf_len);

/* Check that the chain type-checks (one map first, transforms whose input
 * kind matches the previous output kind, one coder last), the bound is
 * finite and positive, the sub-chunk size is valid. H5FZ_OK or
 * H5FZ_ERR_SPEC with the reason. */
int h5fz_spec_validate(const h5fz_spec *spec);

/* A valid spec that is most likely not what was meant: REL with a bound
 * above 1, i.e. errors of more than 100 % of each chunk's value range,
 * which let any value come back as any other value of its chunk (SZ3,
 * and so H5Z-SZ3, accepts such a bound too: abs = rel x range, unchecked;
 * h5fz keeps it: it is a warning, not an error). Writes a one-line warning (no "warning:" prefix) into buf
 * (len bytes, NUL-terminated when len > 0) and returns 1; returns 0 with
 * buf "" when there is nothing to say, or when spec is NULL. */
int h5fz_spec_caution(const h5fz_spec *spec, char *buf, size_t len);

/* Encode *spec as cd_values words into cd[0..cap). With include_local = 0
 * only the user part is written (at most H5FZ_CD_USER_MAX words: the six
 * header words, the op ids, and with has_missing H5FZ_CD_MISSING_MARKER and
 * the missing value low word first); with 1 the
 * dataset part (marker, dtype (with bit 8, 0x100, set when big_endian),
 * element size, rank, dims, and when has_fill the words 1, fill low, fill
 * high) follows it.
 * *n_out receives the number of words. The bound (a double) is stored as two
 * words, low 32 bits first. Returns H5FZ_OK, H5FZ_ERR_ARG (cap too small),
 * or H5FZ_ERR_SPEC (invalid spec). */
int h5fz_spec_to_cd_values(const h5fz_spec *spec, int include_local, unsigned *cd, size_t cap, size_t *n_out);

/* Decode cd_values (n words; n = 0 gives the defaults). Missing trailing user
 * words take their defaults; a dataset part is recognised by its marker. One
 * word other than the version word is the one-word form "M SSS EE" (mode,
 * bound digits, exponent: 100103 = abs=1e-3; docs/spec.md §4.1).
 * *user_words receives the length of the user part (may be NULL).
 * Returns H5FZ_OK or H5FZ_ERR_SPEC with the reason. */
int h5fz_spec_from_cd_values(const unsigned *cd, size_t n, h5fz_spec *spec, size_t *user_words);

/* Size of one element of dtype in bytes (4 or 8), 0 if unknown. */
size_t h5fz_dtype_size(h5fz_dtype dtype);

/* ---- the chunk codec ------------------------------------------------------ */

/* Encode one chunk of in_bytes bytes of spec->dtype values, little-endian,
 * or big-endian when spec->big_endian (the values are then swapped to
 * little-endian, coded exactly as little-endian values are, and the
 * container records the order), into a chunk container (docs/format.md).
 * in_bytes need not be a multiple of the element size: trailing bytes are
 * stored verbatim. spec->dtype must be known.
 * On success *out is a malloc'd buffer owned by the caller (free()), holding
 * *out_bytes bytes. Returns H5FZ_OK, H5FZ_ERR_ARG, H5FZ_ERR_SPEC,
 * H5FZ_ERR_NOMEM. Never fails because of the data: values that cannot be
 * quantized within the bound (NaN, Inf, -0.0, huge) are stored exactly. */
int h5fz_chunk_encode(const h5fz_spec *spec, const void *in, size_t in_bytes, void **out, size_t *out_bytes);

/* Decode one chunk container of in_bytes bytes. On success *out is a
 * malloc'd buffer (caller frees) of *out_bytes bytes, equal to the in_bytes
 * that was encoded, in the byte order it was encoded from (the container
 * records it: big-endian chunks come back big-endian). The decoder checks every size and offset against the
 * buffer and the checksum before using them: any corrupt or truncated input
 * gives an error, never an out-of-bounds access. Returns H5FZ_OK,
 * H5FZ_ERR_ARG, H5FZ_ERR_TRUNCATED, H5FZ_ERR_CORRUPT, H5FZ_ERR_CHECKSUM,
 * H5FZ_ERR_VERSION, H5FZ_ERR_UNSUPPORTED, H5FZ_ERR_NOMEM. */
int h5fz_chunk_decode(const void *in, size_t in_bytes, void **out, size_t *out_bytes);

/* h5fz_chunk_decode of a chunk that must hold chunk_bytes bytes of dtype
 * (the chunks of one dataset): a container of another type or size fails
 * with H5FZ_ERR_CORRUPT before anything is allocated or decoded (HDF5
 * copies a chunk's full size out of what a filter returns, so a shorter
 * one would be read past its end). Same codes otherwise. */
int h5fz_chunk_decode_as(const void *in, size_t in_bytes, h5fz_dtype dtype, size_t chunk_bytes, void **out,
                         size_t *out_bytes);

/* Bytes of one chunk of the dataset spec describes (its dataset part:
 * dtype x chunk dims), saturated at UINT64_MAX; 0 when it does not say (no
 * dtype, no chunk dims, or a zero dim). Never fails; spec must not be NULL. */
uint64_t h5fz_spec_chunk_bytes(const h5fz_spec *spec);

/* The chunk dims h5fz records for an HDF5 chunk of rank dims[] (slowest
 * first, in elements): at most H5FZ_MAX_RANK, the slowest dims multiplied
 * into the first when there are more (what set_local stores in cd_values
 * and the containers record). *rank_out and out[0..*rank_out) receive them.
 * Returns H5FZ_OK, or H5FZ_ERR_ARG (rank 0, a zero dim, a folded dim that
 * does not fit 32 bits) with the reason in h5fz_last_error(). */
int h5fz_chunk_dims_fold(size_t rank, const uint64_t *dims, uint32_t *rank_out, uint32_t out[H5FZ_MAX_RANK]);

/* Can the executor that H5FZ_DEVICE selects encode chunks of chunk_bytes
 * bytes with spec (dtype known)? chunk_bytes 0: one chunk of the dataset
 * part of spec (dtype x chunk dims; nothing to check without one, or for a
 * chunk larger than format v1 takes, which is refused per chunk). The filter asks when a dataset is created
 * (set_local), so that a bad setting fails H5Dcreate with its reason rather
 * than the first write, which HDF5 may defer to a flush or close where the
 * caller sees no error. auto and cpu: always H5FZ_OK (auto falls back to
 * the CPU). gpu: initialises the GPU executor and compiles the chain's
 * kernels (what the first chunk would do). Returns H5FZ_OK, H5FZ_ERR_ARG
 * (H5FZ_DEVICE is none of auto, gpu, cpu), H5FZ_ERR_DEVICE (gpu asked for
 * and not usable: no driver, no device, no class, JIT failed), or
 * H5FZ_ERR_SPEC; the reason in h5fz_last_error(). */
int h5fz_device_check(const h5fz_spec *spec, size_t chunk_bytes);

/* Start making the GPU ready for chunks of spec (dtype known) of
 * chunk_bytes bytes (0: one chunk of spec's dataset part) on a background
 * thread, unless H5FZ_DEVICE=cpu: the CUDA context of the GPU that
 * H5FZ_GPU_ORDINAL names (about 0.25 s to create) and the chain's module
 * (built in, cached or compiled). Returns at once. While it runs, chunks
 * under H5FZ_DEVICE=auto are coded by the CPU executor (the same bytes),
 * chunks under H5FZ_DEVICE=gpu and the dataset API wait for it. The filter
 * calls it in set_local (H5Dcreate) and at the first decode, never when
 * HDF5 loads the plugin. Safe to call again (it does nothing once the
 * context and chain are ready) and to exit while it runs (the exit waits
 * for it). Returns H5FZ_OK, or H5FZ_ERR_ARG for a NULL spec; a GPU that
 * is not usable is no error here (the chunks meet it as without it). */
int h5fz_device_warm_up(const h5fz_spec *spec, size_t chunk_bytes);

/* Decode a chunk of the dataset whose spec (as set_local completed it:
 * mode, bound, dtype, rank and folded chunk dims, e.g. from
 * h5fz_spec_from_cd_values) is dataset: h5fz_chunk_decode_as with its type
 * and chunk bytes, and h5fz_chunk_info_check_spec: a container of another
 * chunk shape, or one coded for a looser bound, fails with
 * H5FZ_ERR_CORRUPT before it is decoded. Under REL the decoded values are
 * checked too: a chunk whose absolute bound exceeds rel x (their finite
 * range + 2 x that bound) cannot have kept the promise (CORRUPT).
 * A spec without a dataset part (no dtype or chunk dims) checks the bound
 * only. Same codes as h5fz_chunk_decode otherwise (H5FZ_ERR_ARG: NULL). */
int h5fz_chunk_decode_for(const void *in, size_t in_bytes, const h5fz_spec *dataset, void **out, size_t *out_bytes);

/* Summary of a chunk container's header, for inspection tools. */
typedef struct {
  uint32_t format_version;
  h5fz_dtype dtype;
  h5fz_mode mode;
  double abs_bound;     /* the absolute bound actually applied */
  uint64_t input_bytes; /* bytes the chunk decodes to */
  uint64_t n_elements;
  uint32_t subchunk_elems;
  uint32_t n_subchunks;
  uint32_t n_raw_subchunks;
  uint32_t n_outliers;
  int stored_raw; /* whole chunk stored verbatim */
  uint32_t n_ops;
  uint8_t ops[H5FZ_MAX_OPS];
  uint32_t predictor; /* lorenzo_nd: the dimension of its predictor (1..3); 0 without it */
  uint32_t rank;      /* the chunk shape the encoder recorded (set_local's folded dims); 0: none */
  uint32_t dims[H5FZ_MAX_RANK];
  int big_endian; /* 1: the chunk decodes to big-endian values (format version 2) */
} h5fz_chunk_info;

/* Parse and check the header (and checksum) of a container without decoding
 * the payload. Same error codes as h5fz_chunk_decode. */
int h5fz_chunk_inspect(const void *in, size_t in_bytes, h5fz_chunk_info *info);

/* Is the container info describes one of the dataset's chunks, keeping
 * its promise? H5FZ_ERR_CORRUPT (reason in h5fz_last_error()) when the
 * chunk shape it recorded is not the dataset's (dataset->rank, dims: folded
 * as h5fz_chunk_dims_fold folds them; size-1 dims are left out of the
 * comparison, since they do not change the element order: 64 x 64 and
 * 1 x 64 x 64 agree; not checked when either rank is 0), or its
 * bound is looser or of another kind: under ABS, ABS/REL chunks with an
 * absolute bound <= dataset->bound; under PW_REL, PW_REL chunks with a bound
 * <= it; under REL, ABS/REL chunks (the relative promise is per chunk
 * range, not checkable here); lossless and stored-raw chunks always pass.
 * With a dataset part (dataset->dtype known) the chunk's byte order must be
 * the dataset's (dataset->big_endian) too. */
int h5fz_chunk_info_check_spec(const h5fz_chunk_info *info, const h5fz_spec *dataset);

/* The outliers (values stored exactly) of a chunk container: their
 * positions (element index in the chunk, increasing) into pos[0..cap) and
 * their raw value bits (element size each, in the byte order the chunk
 * decodes to) into vals[0..cap); *n receives
 * the count (which may exceed cap: then only cap are written; call again
 * with room for *n). A stored-raw chunk has none. Checks the container as
 * h5fz_chunk_decode does. Returns H5FZ_OK or the same error codes. */
int h5fz_chunk_outliers(const void *in, size_t in_bytes, uint32_t *pos, void *vals, size_t cap, size_t *n);

/* Name of an op id ("delta"), or NULL if the id is unknown. */
const char *h5fz_op_name(unsigned id);

/* The id of the op named name ("delta"), or 0 (H5FZ_OP_NONE) if no op has
 * that name: the way to an op's id for the ops that have no constant in
 * h5fz_op_id above. */
unsigned h5fz_op_id_of(const char *name);

/* Entry i (0-based) of the op table: id, name, kind ("map", "transform",
 * "coder") and a one-line summary. Returns H5FZ_OK, or H5FZ_ERR_ARG when i
 * is past the end (so callers loop until it fails). Pointers are static. */
int h5fz_op_at(size_t i, unsigned *id, const char **name, const char **kind, const char **summary);

/* Named chain i (0-based) of spec text (the word after the bound, as in
 * "abs=1e-3 ratio"): its name, a one-line summary, and in chain[0..cap) the
 * chain it stands for as spec words ("quant lorenzo_nd zigzag huffctx
 * subchunk=65536": its ops by name, then its sub-chunk size in bytes when
 * it is not H5FZ_DEFAULT_SUBCHUNK_BYTES; chain may be NULL with cap 0).
 * Returns H5FZ_OK, or H5FZ_ERR_ARG when i is past the end or chain does not
 * fit (cap 96 always does). name and summary are static. The chain a bound
 * alone selects: h5fz_default_chain_text. */
int h5fz_named_chain_at(size_t i, const char **name, const char **summary, char *chain, size_t cap);

/* The default chain (what a bound alone, "abs=1e-3", selects) as spec
 * words into chain[0..cap): "quant delta zigzag bitshuffle rze". Returns
 * H5FZ_OK, or H5FZ_ERR_ARG when it does not fit (cap 96 always does). */
int h5fz_default_chain_text(char *chain, size_t cap);

/* ---- the error-bound modes (the mode table, docs/modes.md) ------------------ */

/* One error-bound mode, as the mode table describes it. */
typedef struct {
  h5fz_mode mode;      /* its number (cd_values, chunk headers) */
  const char *name;    /* "abs": the spec's key (abs=1e-3), or its whole word when
                          takes_bound is 0 (lossless); the h5fz_mode attribute's value,
                          the CLI's option (--pw-rel: '-' for '_') and Python's keyword */
  int takes_bound;     /* 0: no bound (bound 0) */
  int range_relative;  /* 1: the bound is a fraction of each chunk's finite value range
                          (fill values left out: a dataset needs a defined fill value),
                          and a whole-dataset check scales it by the dataset's range */
  int fast_forms;      /* 1: the CPU's fast quantizer and the GPU's warp-fused kernels
                          take it; 0: the reference quantizer and the generic kernel */
  const char *promise; /* one line: what it promises ("|x - x'| <= bound") */
} h5fz_mode_info;

/* Entry i (0-based) of the mode table into *info (its strings are static).
 * Returns H5FZ_OK, or H5FZ_ERR_ARG when i is past the end (so callers loop
 * until it fails) or info is NULL. */
int h5fz_mode_at(size_t i, h5fz_mode_info *info);

/* The entry of mode number `mode` into *info: H5FZ_OK, or H5FZ_ERR_ARG for
 * a number no mode has (or a NULL info). */
int h5fz_mode_get(unsigned mode, h5fz_mode_info *info);

/* Name of a mode ("pw_rel"), or NULL if the number is unknown. */
const char *h5fz_mode_name(unsigned mode);

/* The error of one element, decoded, against its original orig, in the
 * units of mode's bound: ABS and REL |orig - decoded| (compare with the
 * absolute bound: REL's bound x the range), PW_REL |orig - decoded| /
 * |orig| with signs kept and zeros exact, LOSSLESS 0 when the bits are
 * equal. INFINITY when a rule with no tolerance is broken; the rules of
 * every mode: a NaN must come back as a NaN (its payload is not compared),
 * an infinity as itself, a finite value as a finite one. NaN when mode is
 * unknown (it fails every `e <= bound`). The one check of the CLI's
 * `verify` and `compress`; cheap enough per element. */
double h5fz_element_error(unsigned mode, double orig, double decoded);

/* The host threads the CPU executor runs for a chunk of many sub-chunks
 * (a chunk of fewer uses one per sub-chunk): H5FZ_THREADS when set, else
 * the CPUs this process may use, min(the affinity mask's CPUs, the cgroup
 * CPU quota rounded up, the online CPUs / the MPI ranks on this node as
 * the launcher's environment says), at least 1 and at most 64
 * (docs/design.md, "Host threads"). When why is not NULL, one line of
 * where the count came from goes into it (len bytes, NUL-terminated).
 * Read anew on every call, as the executor does per chunk (the cgroup
 * quota once per process). */
unsigned h5fz_host_threads(char *why, size_t len);

/* Library version string, e.g. "0.1.0". */
const char *h5fz_version(void);

#ifdef __cplusplus
}
#endif
#endif /* H5FZ_H */
