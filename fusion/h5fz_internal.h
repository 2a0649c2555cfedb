/*
 * h5fz_internal.h - shared by the files of fusion/; not installed.
 */
#ifndef H5FZ_INTERNAL_H
#define H5FZ_INTERNAL_H

#include "h5fz.h"
#include "h5fz_error.h"
#include "h5fz_settings.h"
#include "op_cpu_coder.h"
#include "op_cpu_transform.h"

/* ---- the op table: one place that maps id <-> name <-> kind ------------- */
typedef enum {
  H5FZ_KIND_MAP = 1,       /* float values -> integer words (+ outliers) */
  H5FZ_KIND_TRANSFORM = 2, /* words -> words or bytes, invertible */
  H5FZ_KIND_CODER = 3      /* words or bytes -> variable-length bytes */
} h5fz_op_kind;

typedef enum {
  H5FZ_STREAM_FLOAT = 1, /* the chunk's values */
  H5FZ_STREAM_WORDS = 2, /* integer words of the element's width */
  H5FZ_STREAM_BYTES = 3  /* a byte stream (bit planes, packed bits) */
} h5fz_stream;

typedef struct {
  unsigned id;      /* the op id (1..255): an h5fz_op_id constant, or, for an op
                       added since, the number its row writes (h5fz.h) */
  const char *name; /* text form and generated code */
  h5fz_op_kind kind;
  h5fz_stream input; /* what the op consumes (coders: WORDS or BYTES) */
  h5fz_stream output;
  unsigned param_words;  /* cd_values words after the id (0 for all of v1) */
  const char *device_fn; /* base name in device_ops/: <fn>_encode_32 ... */
  const char *summary;
  /* the first chunk format version that has the op (0: version 1) */
  unsigned since_version;
  /* a coder's CPU forms (device_ops/op_*_cpu.h; NULL for raw): L bytes of
   * n words in -> a size-table size, or H5FZ_RZE_NOT_SMALLER; and back */
  h5fz_cpu_coder_encode_fn cpu_encode;
  h5fz_cpu_coder_decode_fn cpu_decode;
  /* a transform's CPU forms (op_cpu_transform.h; NULL for the others):
   * what fusion/cpu/h5fz_cpu_chain.c runs for the op */
  const h5fz_cpu_transform *cpu_transform;
  /* the ops that run fused with this one when they follow it directly, and
   * their one-pass forms (ends with next = 0; NULL: none) */
  const h5fz_cpu_fusion *cpu_fused;
} h5fz_op_info;

/* Ops added after h5fz.h's list: their numbers, as their rows in the op
 * table (fusion/format/h5fz_optable.c) write them. */
#define H5FZ_OP_LORENZO_INTERP 16u /* lorenzo_nd's predictors or interpolation, per chunk (format 5) */

/* Does op id take lorenzo_nd's place right after quant (lorenzo_nd, or
 * lorenzo_interp: the same op with a fourth predictor)? */
static inline int h5fz_op_is_lnd(unsigned id) { return id == H5FZ_OP_LORENZO_ND || id == H5FZ_OP_LORENZO_INTERP; }

/* Is op id a zero-run token coder (huff, huffctx)? lorenzo_nd's cost pass
 * estimates an entropy coder's bits for them instead of RZE's bit planes. */
static inline int h5fz_op_is_zero_run_coder(unsigned id) { return id == H5FZ_OP_HUFF || id == H5FZ_OP_HUFFCTX; }

/* The chunk format version a chain's chunks are written in: 1, 2 for
 * big-endian values, or the newest version one of its ops needs. */
unsigned h5fz_chain_format_version(const uint8_t *ops, unsigned n_ops, int big_endian);
/* The newest chunk format version this h5fz reads: the big-endian layout's
 * (2) or the newest op's since_version in the op table, so a new op that
 * needs a new version says so in its row alone. */
unsigned h5fz_newest_format_version(void);

/* The entry of an op id, or NULL if the id is unknown. */
const h5fz_op_info *h5fz_op_lookup(unsigned id);
/* The entry of an op name (case-sensitive), or NULL. */
const h5fz_op_info *h5fz_op_by_name(const char *name);
/* All entries, *count receives their number. */
const h5fz_op_info *h5fz_op_table(size_t *count);

/* A named chain (spec text `ratio`): its ops and sub-chunk size. */
typedef struct {
  const char *name;
  uint8_t ops[H5FZ_MAX_OPS];
  unsigned n_ops;
  uint32_t subchunk_bytes;
  const char *summary;
} h5fz_chain_preset;

/* The preset of a name, or NULL; the i-th preset, or NULL past the last. */
const h5fz_chain_preset *h5fz_chain_preset_by_name(const char *name);
const h5fz_chain_preset *h5fz_chain_preset_at(size_t i);

/* The ops[0..n_ops) of a chain as spec words, each after a space (" quant
 * delta ..."), then " subchunk=B" when B is not the default, into
 * buf[0..buf_len) (h5fz_spec_format's chain part; h5fz_named_chain_at).
 * Returns the length the whole text takes, as snprintf does (>= buf_len:
 * cut short). */
size_t h5fz_chain_words(const uint8_t *ops, unsigned n_ops, uint32_t subchunk_bytes, char *buf, size_t buf_len);

/* The default chain: quant delta zigzag bitshuffle rze. */
extern const uint8_t h5fz_default_chain[5];

#endif /* H5FZ_INTERNAL_H */
