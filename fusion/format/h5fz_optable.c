/* h5fz_optable.c - the one table of ops: id, name, kind, stream types.
 *
 * A row is the definition of an op: its id (the stable number of
 * docs/format.md §5.1; the ops before the table became the definition have
 * a constant in h5fz.h, a later op writes its number here), its name, its
 * streams, the prefix of its device functions (device_ops/op_X.h, which the
 * GPU's codegen calls) and its CPU forms (device_ops/op_X_cpu.c). */
#include <stdio.h>
#include <string.h>

#include "h5fz_format.h"
#include "h5fz_internal.h"
#include "op_bitpack_cpu.h"
#include "op_huff_cpu.h"
#include "op_rze_cpu.h"

/* The transforms' CPU forms, each defined by the op's twin
 * (device_ops/op_X_cpu.c, op_cpu_transform.h); declared here, beside the
 * rows that are their one user, so that a twin needs no header for them. */
extern const h5fz_cpu_transform h5fz_cpu_delta, h5fz_cpu_delta_zigzag, h5fz_cpu_delta_negabinary, h5fz_cpu_lorenzo,
    h5fz_cpu_lorenzo_nd, h5fz_cpu_zigzag, h5fz_cpu_negabinary, h5fz_cpu_bitshuffle;

/* A delta directly followed by zigzag or negabinary runs as one pass. */
static const h5fz_cpu_fusion delta_fused[] = {
    {H5FZ_OP_ZIGZAG, &h5fz_cpu_delta_zigzag}, {H5FZ_OP_NEGABINARY, &h5fz_cpu_delta_negabinary}, {0, NULL}};

/* A transform from words to (out: WORDS or BYTES), from chunk format
 * version since (0: 1), run on the CPU by the forms cpu
 * (op_cpu_transform.h), fused with the ops of fused after it. */
#define TRANSFORM(id, name, out, prefix, doc, since, cpu, fused)                                                       \
  {                                                                                                                    \
    id, name, H5FZ_KIND_TRANSFORM, H5FZ_STREAM_WORDS, out, 0, prefix, doc, since, NULL, NULL, cpu, fused               \
  }
/* A coder of in (WORDS or BYTES) into bytes, from chunk format version
 * since (0: 1), run on the CPU by enc and dec (op_cpu_coder.h). */
#define CODER(id, name, in, prefix, doc, since, enc, dec)                                                              \
  {                                                                                                                    \
    id, name, H5FZ_KIND_CODER, in, H5FZ_STREAM_BYTES, 0, prefix, doc, since, enc, dec, NULL, NULL                      \
  }

static const h5fz_op_info op_table[] = {
    {H5FZ_OP_QUANT, "quant", H5FZ_KIND_MAP, H5FZ_STREAM_FLOAT, H5FZ_STREAM_WORDS, 0, "h5fz_quant",
     "error-bounded quantizer; escapes values it cannot bound to the outlier list", 0, NULL, NULL, NULL, NULL},
    TRANSFORM(H5FZ_OP_DELTA, "delta", H5FZ_STREAM_WORDS, "h5fz_delta", "1-D first difference within a sub-chunk", 0,
              &h5fz_cpu_delta, delta_fused),
    TRANSFORM(H5FZ_OP_LORENZO, "lorenzo", H5FZ_STREAM_WORDS, "h5fz_lorenzo",
              "2-D Lorenzo prediction over rows of the chunk's last dimension", 0, &h5fz_cpu_lorenzo, NULL),
    TRANSFORM(H5FZ_OP_LORENZO_ND, "lorenzo_nd", H5FZ_STREAM_WORDS, "h5fz_lnd",
              "1-, 2- or 3-D Lorenzo prediction over the chunk's shape, across sub-chunks, "
              "chosen per chunk; right after quant",
              0, &h5fz_cpu_lorenzo_nd, NULL),
    TRANSFORM(H5FZ_OP_LORENZO_INTERP, "lorenzo_interp", H5FZ_STREAM_WORDS, "h5fz_lnd",
              "lorenzo_nd's predictors or multilevel linear interpolation of the bins, chosen per chunk; "
              "right after quant (chunk format 5)",
              5, &h5fz_cpu_lorenzo_nd, NULL),
    TRANSFORM(H5FZ_OP_ZIGZAG, "zigzag", H5FZ_STREAM_WORDS, "h5fz_zigzag",
              "signed -> unsigned, small magnitudes stay small", 0, &h5fz_cpu_zigzag, NULL),
    TRANSFORM(H5FZ_OP_NEGABINARY, "negabinary", H5FZ_STREAM_WORDS, "h5fz_negabinary", "two's complement -> base -2", 0,
              &h5fz_cpu_negabinary, NULL),
    TRANSFORM(H5FZ_OP_BITSHUFFLE, "bitshuffle", H5FZ_STREAM_BYTES, "h5fz_bitshuffle", "words -> bit planes", 0,
              &h5fz_cpu_bitshuffle, NULL),
    CODER(H5FZ_OP_RZE, "rze", H5FZ_STREAM_BYTES, "h5fz_rze", "repeated-zero elimination", 0, h5fz_cpu_coder_rze_encode,
          h5fz_cpu_coder_rze_decode),
    CODER(H5FZ_OP_RAW, "raw", H5FZ_STREAM_BYTES, NULL, "bytes as they are", 0, NULL, NULL),
    CODER(H5FZ_OP_BITPACK, "bitpack", H5FZ_STREAM_WORDS, "h5fz_bitpack",
          "fixed-length bit packing per 32 words (cuSZp); needs words, not bit planes", 0,
          h5fz_cpu_coder_bitpack_encode, h5fz_cpu_coder_bitpack_decode),
    CODER(H5FZ_OP_HUFF, "huff", H5FZ_STREAM_WORDS, "h5fz_huff",
          "zero runs and a canonical Huffman code built per sub-chunk; needs words (chunk format 3)", 3,
          h5fz_cpu_coder_huff_encode, h5fz_cpu_coder_huff_decode),
    CODER(H5FZ_OP_HUFFCTX, "huffctx", H5FZ_STREAM_WORDS, "h5fz_huff",
          "huff with a second code for the token after a zero run; needs words (chunk format 4)", 4,
          h5fz_cpu_coder_huffctx_encode, h5fz_cpu_coder_huffctx_decode),
};
#undef TRANSFORM
#undef CODER

/* Named chains: a word of spec text for a whole chain and its sub-chunk
 * size. ratio: the measured sizes are in docs/ratio.md. */
static const h5fz_chain_preset presets[] = {
    {"ratio",
     {H5FZ_OP_QUANT, H5FZ_OP_LORENZO_ND, H5FZ_OP_ZIGZAG, H5FZ_OP_HUFFCTX},
     4,
     65536u,
     "the smallest files: lorenzo_nd, zigzag, huffctx on 64 KiB sub-chunks"},
};

const h5fz_chain_preset *h5fz_chain_preset_by_name(const char *name)
{
  for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++)
    if (!strcmp(presets[i].name, name)) return &presets[i];
  return NULL;
}

const h5fz_chain_preset *h5fz_chain_preset_at(size_t i)
{
  return i < sizeof presets / sizeof presets[0] ? &presets[i] : NULL;
}

const uint8_t h5fz_default_chain[5] = {H5FZ_OP_QUANT, H5FZ_OP_DELTA, H5FZ_OP_ZIGZAG, H5FZ_OP_BITSHUFFLE, H5FZ_OP_RZE};

const h5fz_op_info *h5fz_op_lookup(unsigned id)
{
  for (size_t i = 0; i < sizeof op_table / sizeof op_table[0]; i++)
    if ((unsigned)op_table[i].id == id) return &op_table[i];
  return NULL;
}

const h5fz_op_info *h5fz_op_by_name(const char *name)
{
  for (size_t i = 0; i < sizeof op_table / sizeof op_table[0]; i++)
    if (strcmp(op_table[i].name, name) == 0) return &op_table[i];
  return NULL;
}

const h5fz_op_info *h5fz_op_table(size_t *count)
{
  *count = sizeof op_table / sizeof op_table[0];
  return op_table;
}

unsigned h5fz_op_id_of(const char *name)
{
  const h5fz_op_info *op = name ? h5fz_op_by_name(name) : NULL;
  return op ? (unsigned)op->id : 0u;
}

const char *h5fz_op_name(unsigned id)
{
  const h5fz_op_info *op = h5fz_op_lookup(id);
  return op ? op->name : NULL;
}

int h5fz_op_at(size_t i, unsigned *id, const char **name, const char **kind, const char **summary)
{
  static const char *const kinds[] = {"?", "map", "transform", "coder"};
  if (i >= sizeof op_table / sizeof op_table[0]) return H5FZ_ERR_ARG;
  if (id) *id = (unsigned)op_table[i].id;
  if (name) *name = op_table[i].name;
  if (kind) *kind = kinds[op_table[i].kind];
  if (summary) *summary = op_table[i].summary;
  return H5FZ_OK;
}

size_t h5fz_chain_words(const uint8_t *ops, unsigned n_ops, uint32_t subchunk_bytes, char *buf, size_t buf_len)
{
  size_t n = 0;
  for (unsigned i = 0; i < n_ops; i++) {
    const char *name = h5fz_op_name(ops[i]);
    n += (size_t)snprintf(buf + (n < buf_len ? n : buf_len), n < buf_len ? buf_len - n : 0, " %s", name ? name : "?");
  }
  if (subchunk_bytes != H5FZ_DEFAULT_SUBCHUNK_BYTES)
    n += (size_t)snprintf(buf + (n < buf_len ? n : buf_len), n < buf_len ? buf_len - n : 0, " subchunk=%u",
                          (unsigned)subchunk_bytes);
  return n;
}

/* A chain's spec words into chain[0..cap) (h5fz_chain_words, without its
 * leading space). */
static int chain_text(const uint8_t *ops, unsigned n, uint32_t subchunk_bytes, char *chain, size_t cap)
{
  char words[256];
  const size_t len = h5fz_chain_words(ops, n, subchunk_bytes, words, sizeof words);
  if (len >= sizeof words || len < 1u || len - 1u >= cap) return H5FZ_ERR_ARG;
  memcpy(chain, words + 1, len); /* the words and their NUL */
  return H5FZ_OK;
}

int h5fz_named_chain_at(size_t i, const char **name, const char **summary, char *chain, size_t cap)
{
  const h5fz_chain_preset *p = h5fz_chain_preset_at(i);
  if (!p) return H5FZ_ERR_ARG;
  if (name) *name = p->name;
  if (summary) *summary = p->summary;
  return chain || cap ? chain_text(p->ops, p->n_ops, p->subchunk_bytes, chain, cap) : H5FZ_OK;
}

int h5fz_default_chain_text(char *chain, size_t cap)
{
  if (!chain || !cap) return H5FZ_ERR_ARG;
  return chain_text(h5fz_default_chain, sizeof h5fz_default_chain, H5FZ_DEFAULT_SUBCHUNK_BYTES, chain, cap);
}

unsigned h5fz_newest_format_version(void)
{
  unsigned v = H5FZ_FORMAT_VERSION_BE;
  for (size_t i = 0; i < sizeof op_table / sizeof op_table[0]; i++)
    if (op_table[i].since_version > v) v = op_table[i].since_version;
  return v;
}

unsigned h5fz_chain_format_version(const uint8_t *ops, unsigned n_ops, int big_endian)
{
  unsigned v = big_endian ? H5FZ_FORMAT_VERSION_BE : H5FZ_FORMAT_VERSION_LE;
  for (unsigned i = 0; i < n_ops; i++) {
    const h5fz_op_info *op = h5fz_op_lookup(ops[i]);
    if (op && op->since_version > v) v = op->since_version;
  }
  return v;
}
