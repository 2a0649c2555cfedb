/*
 * h5fz_codegen.c - spec -> CUDA source (see h5fz_codegen.h). The output is
 * meant to be read: `h5fz codegen SPEC` prints it.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h5fz_ops.h"
#include "h5fz_codegen.h"
#include "h5fz_internal.h"

typedef struct {
  char *buf;
  size_t len, cap;
  int oom;
} strbuf;

static void emit(strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void emit(strbuf *b, const char *fmt, ...)
{
  va_list ap;
  for (;;) {
    va_start(ap, fmt);
    int n = vsnprintf(b->buf ? b->buf + b->len : NULL, b->buf ? b->cap - b->len : 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
      b->oom = 1;
      return;
    }
    if (b->buf && b->len + (size_t)n < b->cap) {
      b->len += (size_t)n;
      return;
    }
    size_t cap = b->cap ? b->cap * 2 : 8192;
    while (cap < b->len + (size_t)n + 1) cap *= 2;
    char *nb = realloc(b->buf, cap);
    if (!nb) {
      b->oom = 1;
      return;
    }
    b->buf = nb;
    b->cap = cap;
  }
}

/* Buffer names of the ping-pong pair: op k reads buf[k%2], writes the other. */
static const char *bufname(unsigned k) { return k % 2 ? "buf1" : "buf0"; }

/* The codes of a huff-family coder (op_huff.h's nctx; op_huff_cpu.c
 * passes the same), 0 for other ops. */
static uint32_t huff_codes(unsigned id) { return id == H5FZ_OP_HUFF ? 1u : id == H5FZ_OP_HUFFCTX ? 2u : 0u; }

static void emit_prologue(strbuf *b, const char *kernel, const char *params)
{
  emit(b, "extern \"C\" __global__ void __launch_bounds__(THREADS, MIN_BLOCKS)\n%s(%s)\n{\n", kernel, params);
  emit(b, "  extern __shared__ uint64_t smem[];\n"
          "  __shared__ uint64_t scan[H5FZ_SCAN_SCRATCH_WORDS];\n"
          "  const h5fz_blk blk = {threadIdx.x, blockDim.x, scan};\n"
          "  /* block = chunk_ix * n_sub + sub: a batch of equal chunks of n values\n"
          "   * each in one launch (one chunk: chunk_ix = 0); per-chunk absolute bounds in qchunk */\n"
          "  /* tail_only: block b takes the last sub-chunk of chunk b (the warp-fused kernels took the rest) */\n"
          "  const uint32_t bid = tail_only == 1u ? blockIdx.x * n_sub + n_sub - 1u : blockIdx.x;\n"
          "  const uint32_t chunk_ix = bid / n_sub;\n"
          "  const unsigned long long base = (unsigned long long)chunk_ix * n;\n"
          "  h5fz_quant_params qp = {eb, step, inv_step, mode, fill};\n"
          "  if (qchunk) qp = h5fz_quant_params_make(mode, qchunk[chunk_ix], fill);\n"
          "  const unsigned long long first = (unsigned long long)(bid - chunk_ix * n_sub) * SUB_ELEMS;\n"
          "  const uint32_t m = n - first < SUB_ELEMS ? (uint32_t)(n - first) : SUB_ELEMS;\n"
          "  const uint32_t m_pad = (m + 63u) & ~63u, L = m_pad * (uint32_t)sizeof(word_t);\n"
          "  uint8_t *buf0 = (uint8_t *)smem, *buf1 = buf0 + SLOT_BYTES, *scratch = buf1 + SLOT_BYTES;\n"
          "  uint32_t *const pad = (uint32_t *)(scratch + PAD_OFFSET); /* bitshuffle's padded planes */\n"
          "  (void)L;\n"
          "  (void)pad;\n"
          "  (void)row;\n"
          "  (void)scratch;\n\n");
}

/* lorenzo_nd's encode: the predictor the cost pass measured best, from
 * the bins of the sub-chunk and of its neighbours in earlier sub-chunks. */
static void emit_lnd_encode(strbuf *b, const char *w, const char *from, const char *to)
{
  emit(b,
       "  /* transform: lorenzo_nd, with the predictor h5fz_lnd_cost_kernel measured best; neighbours in\n"
       "   * earlier sub-chunks are quantized again from the chunk's values */\n"
       "  {\n"
       "    const value_t *const chunk = in; /* the chunk's values (first is chunk-relative) */\n"
       "    h5fz_lnd_geom g = lnd;\n"
       "    g.dim = h5fz_lnd_choose(lnd_costs + 3u * H5FZ_LND_COST_PARTS * chunk_ix, H5FZ_LND_COST_PARTS, lnd.dim);\n"
       "    h5fz_lnd_encode_%s(&blk, (const word_t *)%s, (word_t *)%s, m, m_pad, chunk, (const word_t *)0, first, g,\n"
       "                      &qp);\n"
       "  }\n"
       "  __syncthreads();\n",
       w, from, to);
}

/* The call of a generic transform op on the sub-chunk from buffer k to
 * buffer k + 1 (decode: its inverse), the encoder's and the decoder's
 * alike: words in and the op's stream out when encoding, the op's stream
 * in and words out when decoding (lorenzo decodes in place: its input is
 * not const); lorenzo takes the sub-chunk's position and row, the padded
 * bitshuffle its padding. */
static void emit_transform(strbuf *b, const h5fz_op_info *op, const char *w, int decode, int padded, unsigned k)
{
  int bytes = op->output == H5FZ_STREAM_BYTES, lorenzo = op->id == H5FZ_OP_LORENZO;
  int pad = op->id == H5FZ_OP_BITSHUFFLE && padded && !lorenzo;
  const char *in = !decode   ? "(const word_t *)"
                   : lorenzo ? "(word_t *)"
                   : bytes   ? "(const uint8_t *)"
                             : "(const word_t *)";
  const char *out = decode || lorenzo ? "(word_t *)" : bytes ? "(uint8_t *)" : "(word_t *)";
  emit(b, "  /* %s: %s */\n", decode ? "inverse transform" : "transform", op->name);
  emit(b, "  %s_%s%s_%s(&blk, %s%s, %s%s, m_pad%s);\n  __syncthreads();\n", op->device_fn, decode ? "decode" : "encode",
       pad ? "_padded" : "", w, in, bufname(k), out, bufname(k + 1),
       lorenzo ? ", first, row"
       : pad   ? ", pad"
               : "");
}

static void emit_encode(strbuf *b, const h5fz_spec *s, const char *w, int padded)
{
  emit_prologue(b, H5FZ_KERNEL_ENCODE,
                "const value_t *in, unsigned long long n, double eb, double step, double inv_step, int mode, unsigned "
                "long long fill,\n"
                "            unsigned row, uint32_t n_sub, const double *qchunk,\n"
                "            uint8_t *slots, uint32_t *entries, uint32_t *opos, word_t *oval, uint32_t *ocount,\n"
                "            h5fz_lnd_geom lnd, const unsigned long long *lnd_costs, uint32_t tail_only");
  if (s->ops[1] == H5FZ_OP_LORENZO_ND)
    emit(b,
         "  /* tail_only 2: the warp-fused kernel takes the full sub-chunks when the 1-D predictor won */\n"
         "  if (tail_only == 2u && m == SUB_ELEMS &&\n"
         "      h5fz_lnd_choose(lnd_costs + 3u * H5FZ_LND_COST_PARTS * chunk_ix, H5FZ_LND_COST_PARTS, lnd.dim) == 1u)\n"
         "    return;\n");
  emit(b, "  uint8_t *slot = slots + (size_t)bid * SLOT_BYTES;\n"
          "  in += base;\n  opos += base;\n  oval += base;\n\n");
  emit(b, "  /* stage the sub-chunk in shared memory with coalesced loads */\n"
          "  h5fz_blk_copy(&blk, in + first, buf1, m * (uint32_t)sizeof(value_t));\n"
          "  __syncthreads();\n");
  emit(b, "  /* map: quant (outliers to this sub-chunk's side buffers, index order) */\n");
  emit(b,
       "  const uint32_t n_out = h5fz_quant_encode_%s(&blk, (const value_t *)buf1, m, m_pad, &qp, (word_t *)buf0,\n"
       "                                              opos + first, oval + first);\n"
       "  __syncthreads();\n",
       w);
  unsigned k = 0;
  for (uint32_t i = 1; i + 1 < s->n_ops; i++, k++) {
    const h5fz_op_info *op = h5fz_op_lookup(s->ops[i]);
    if (op->id == H5FZ_OP_DELTA && i + 2 < s->n_ops && s->ops[i + 1] == H5FZ_OP_ZIGZAG) {
      emit(b,
           "  /* transforms: delta, zigzag (one pass) */\n"
           "  h5fz_delta_zigzag_encode_%s(&blk, (const word_t *)%s, (word_t *)%s, m_pad);\n  __syncthreads();\n",
           w, bufname(k), bufname(k + 1));
      i++;
      continue;
    }
    if (op->id == H5FZ_OP_LORENZO_ND) {
      emit_lnd_encode(b, w, bufname(k), bufname(k + 1));
      continue;
    }
    emit_transform(b, op, w, 0, padded, k);
  }
  const h5fz_op_info *coder = h5fz_op_lookup(s->ops[s->n_ops - 1]);
  emit(b, "  /* coder: %s; a sub-chunk it would not shrink is stored raw */\n", coder->name);
  if (coder->id == H5FZ_OP_RZE)
    emit(b, "  uint32_t size = h5fz_rze_encode(&blk, %s, L, slot, L, scratch);\n", bufname(k));
  else if (coder->id == H5FZ_OP_BITPACK)
    emit(b, "  uint32_t size = h5fz_bitpack_encode_%s(&blk, (const word_t *)%s, m_pad, slot, L);\n", w, bufname(k));
  else if (coder->id == H5FZ_OP_HUFF || coder->id == H5FZ_OP_HUFFCTX) /* assembled in the other (free) buffer */
    emit(b, "  uint32_t size = h5fz_huff_encode_%s(&blk, (const word_t *)%s, m_pad, slot, L, scratch, %s, %uu);\n", w,
         bufname(k), bufname(k + 1), huff_codes(coder->id));
  else
    emit(b, "  uint32_t size = H5FZ_RZE_NOT_SMALLER;\n");
  emit(b,
       "  if (size == H5FZ_RZE_NOT_SMALLER) {\n"
       "    for (uint32_t i = threadIdx.x; i < L; i += blockDim.x) slot[i] = %s[i];\n"
       "    size = L | 0x80000000u;\n"
       "  }\n"
       "  if (threadIdx.x == 0) {\n"
       "    entries[bid] = size;\n"
       "    ocount[bid] = n_out;\n"
       "  }\n}\n\n",
       bufname(k));
}

static void emit_decode(strbuf *b, const h5fz_spec *s, const char *w, int padded)
{
  emit_prologue(
      b, H5FZ_KERNEL_DECODE,
      "const uint8_t *payload, const unsigned long long *offsets, const uint32_t *entries,\n"
      "            unsigned long long n, double eb, double step, double inv_step, int mode, unsigned long "
      "long fill, unsigned row,\n"
      "            uint32_t n_sub, const double *qchunk, value_t *out,\n"
      "            int *status,\n"
      "            h5fz_lnd_geom lnd, unsigned long long *lnd_aux, const uint32_t *lnd_pred, uint32_t tail_only");
  if (s->ops[1] == H5FZ_OP_LORENZO_ND)
    emit(b, "  /* lorenzo_nd: the chunk's predictor (its header's); tail_only 2: the warp-fused kernel takes the\n"
            "   * full sub-chunks of the chunks with the 1-D predictor */\n"
            "  h5fz_lnd_geom lg = lnd;\n"
            "  if (lnd_pred) lg.dim = lnd_pred[chunk_ix];\n"
            "  if (tail_only == 2u && m == SUB_ELEMS && lg.dim == 1u) return;\n");
  emit(b, "  out += base;\n"
          "  const uint32_t e = entries[bid], size = e & 0x7fffffffu;\n"
          "  const uint8_t *src = payload + offsets[bid];\n\n");
  const h5fz_op_info *coder = h5fz_op_lookup(s->ops[s->n_ops - 1]);
  emit(b, "  /* coder: %s (raw sub-chunks were checked on the host: size == L) */\n", coder->name);
  emit(b, "  if (e & 0x80000000u) {\n"
          "    for (uint32_t i = threadIdx.x; i < size; i += blockDim.x) buf0[i] = src[i];\n"
          "  } else");
  if (coder->id == H5FZ_OP_RZE)
    emit(b, " if (h5fz_rze_decode(&blk, src, size, buf0, L, scratch)) {\n");
  else if (coder->id == H5FZ_OP_BITPACK)
    emit(b, " if (h5fz_bitpack_decode_%s(&blk, src, size, (word_t *)buf0, m_pad)) {\n", w);
  else if (coder->id == H5FZ_OP_HUFF || coder->id == H5FZ_OP_HUFFCTX) /* from shared memory: the stream staged in
                                                                         buf1 (free until the transforms) */
    emit(b, " if ((h5fz_blk_copy_bytes(&blk, src, buf1, size), h5fz_huff_decode_%s(&blk, buf1, size, (word_t *)buf0, "
            "m_pad, scratch, %uu))) {\n", w, huff_codes(coder->id));
  else
    emit(b, " {\n");
  emit(b, "    if (threadIdx.x == 0) atomicMax(status, (int)bid + 1);\n"
          "    return; /* the whole block agrees: the condition is block-uniform */\n"
          "  }\n  __syncthreads();\n");
  unsigned k = 0;
  int lnd = s->ops[1] == H5FZ_OP_LORENZO_ND, dequantized = 0;
  uint32_t first_transform = lnd ? 2u : 1u;
  for (uint32_t i = s->n_ops - 1; i-- > first_transform; k++) {
    const h5fz_op_info *op = h5fz_op_lookup(s->ops[i]);
    /* the delta decode takes in a zigzag before it and the quantizer decode after it */
    int zz = op->id == H5FZ_OP_ZIGZAG && i > first_transform && s->ops[i - 1] == H5FZ_OP_DELTA;
    if (zz || op->id == H5FZ_OP_DELTA) {
      uint32_t delta_at = zz ? i - 1 : i;
      dequantized = delta_at == 1u; /* the quantizer's words come next */
      emit(b, "  /* inverse transforms: %sdelta%s (one pass) */\n", zz ? "zigzag, " : "", dequantized ? ", quant" : "");
      if (dequantized)
        emit(b,
             "  h5fz_delta_decode_fused_%s(&blk, (const word_t *)%s, m_pad, %d, (word_t *)0, &qp, m, (value_t *)%s);\n"
             "  __syncthreads();\n",
             w, bufname(k), zz, bufname(k + 1));
      else
        emit(b,
             "  h5fz_delta_decode_fused_%s(&blk, (const word_t *)%s, m_pad, %d, (word_t *)%s, 0, 0u, (value_t *)0);\n"
             "  __syncthreads();\n",
             w, bufname(k), zz, bufname(k + 1));
      i = delta_at;
      continue;
    }
    emit_transform(b, op, w, 1, padded, k);
  }
  if (lnd) {
    emit(b,
         "  /* inverse transform: lorenzo_nd, its part inside the sub-chunk (prefix sums along x); the\n"
         "   * h5fz_lnd_*_kernel kernels finish it on the whole chunk, then run the quantizer decode */\n"
         "  h5fz_lnd_xscan_%s(&blk, (word_t *)%s, (word_t *)%s, m, m_pad, first, lg, lnd_aux + 2u * bid);\n"
         "  word_t *const chunk_words = (word_t *)out; /* the chunk's output: words until the quantizer decode */\n"
         "  h5fz_blk_copy(&blk, %s, chunk_words + first, m * (uint32_t)sizeof(word_t));\n}\n",
         w, bufname(k), bufname(k + 1), bufname(k));
    return;
  }
  if (dequantized) { /* the values are in the last op's output */
    emit(b, "  /* values (outliers are patched from the side section on the host), staged in shared memory\n"
            "   * so the stores to global memory coalesce */\n");
    emit(b, "  h5fz_blk_copy(&blk, %s, out + first, m * (uint32_t)sizeof(value_t));\n}\n", bufname(k));
    return;
  }
  emit(b, "  /* inverse map: quant (outliers are patched from the side section on the host),\n"
          "   * staged in shared memory so the stores to global memory coalesce */\n");
  emit(b, "  h5fz_quant_decode_%s(&blk, (const word_t *)%s, m, &qp, (value_t *)%s);\n  __syncthreads();\n", w,
       bufname(k), bufname(k + 1));
  emit(b, "  h5fz_blk_copy(&blk, %s, out + first, m * (uint32_t)sizeof(value_t));\n}\n", bufname(k + 1));
}

/* lorenzo_nd's chunk-level kernels: the encoder's cost pass, and the end of
 * the decode after h5fz_decode (carry along x, sums along y and z, the
 * quantizer decode in place, fused into the last of those passes). Every
 * kernel takes a batch of chunks of lnd.n values back to back; lnd_pred
 * (NULL: lnd.dim for all) holds each chunk's predictor. */
static void emit_lnd_kernels(strbuf *b, const char *w)
{
  emit(
      b,
      "\n/* lorenzo_nd, encode: the cost of each predictor on part blockIdx.x %% H5FZ_LND_COST_PARTS of the sample of\n"
      " * chunk blockIdx.x / H5FZ_LND_COST_PARTS (16 threads a group) */\n"
      "extern \"C\" __global__ void __launch_bounds__(THREADS)\n"
      "h5fz_lnd_cost_kernel(const value_t *in, h5fz_lnd_geom lnd, double eb, double step, double inv_step, int mode, "
      "unsigned long long fill,\n"
      "                     const double *qchunk, unsigned long long *costs)\n{\n"
      "  __shared__ uint64_t scan[H5FZ_SCAN_SCRATCH_WORDS];\n"
      "  const h5fz_blk blk = {threadIdx.x, blockDim.x, scan};\n"
      "  const uint32_t chunk_ix = blockIdx.x / H5FZ_LND_COST_PARTS, part = blockIdx.x %% H5FZ_LND_COST_PARTS;\n"
      "  h5fz_quant_params qp = {eb, step, inv_step, mode, fill};\n"
      "  if (qchunk) qp = h5fz_quant_params_make(mode, qchunk[chunk_ix], fill);\n"
      "  uint64_t k_lo, k_hi, T, c[3];\n"
      "  h5fz_lnd_sample(lnd.n, part, H5FZ_LND_COST_PARTS, &k_lo, &k_hi, &T);\n"
      "  h5fz_lnd_cost_lanes_%s(&blk, in + (unsigned long long)chunk_ix * lnd.n, (const word_t *)0, lnd, &qp, k_lo, "
      "k_hi, T, c);\n"
      "  if (threadIdx.x == 0)\n"
      "    for (uint32_t d = 0; d < 3u; d++) costs[3u * blockIdx.x + d] = c[d];\n}\n",
      w);
  emit(b, "\n/* lorenzo_nd, decode after h5fz_decode: the carry of each sub-chunk's first x segment, a segmented\n"
          " * scan by one block of LND_CARRY_THREADS a chunk */\n"
          "#define LND_CARRY_THREADS 1024u\n"
          "extern \"C\" __global__ void __launch_bounds__(LND_CARRY_THREADS)\n"
          "h5fz_lnd_carry_kernel(unsigned long long *aux, uint32_t n_sub)\n{\n"
          "  __shared__ uint64_t sv[LND_CARRY_THREADS];\n"
          "  __shared__ uint32_t sf[LND_CARRY_THREADS];\n"
          "  const h5fz_blk blk = {threadIdx.x, blockDim.x, 0};\n"
          "  h5fz_lnd_carry_blk(&blk, aux + 2ull * n_sub * blockIdx.x, n_sub, sv, sf);\n}\n");
  emit(b, "\n/* chunk blockIdx.x / per_chunk's geometry with its own predictor; 0 when it has no pass z */\n"
          "static __device__ __forceinline__ int lnd_chunk_axis(h5fz_lnd_geom lnd, const uint32_t *lnd_pred, "
          "uint32_t chunk_ix, uint32_t z,\n"
          "                                                     h5fz_lnd_geom *lg, h5fz_lnd_axis *a)\n{\n"
          "  *lg = lnd;\n"
          "  if (lnd_pred) lg->dim = lnd_pred[chunk_ix];\n"
          "  return h5fz_lnd_axis_make(lg, z, a);\n}\n");
  emit(
      b,
      "\n/* ... added to the elements of that segment: one block per sub-chunk; a chunk with no y or z pass\n"
      " * (the 1-D predictor) has every word become its value in the same pass */\n"
      "extern \"C\" __global__ void __launch_bounds__(THREADS)\n"
      "h5fz_lnd_xfix_kernel(word_t *words, h5fz_lnd_geom lnd, const uint32_t *lnd_pred, const unsigned long long "
      "*aux, double eb,\n"
      "                     double step, double inv_step, int mode, unsigned long long fill, const double *qchunk)\n{\n"
      "  const h5fz_blk blk = {threadIdx.x, blockDim.x, 0};\n"
      "  const uint32_t n_sub = (lnd.n + SUB_ELEMS - 1u) / SUB_ELEMS, chunk_ix = blockIdx.x / n_sub;\n"
      "  h5fz_quant_params qp = {eb, step, inv_step, mode, fill};\n"
      "  if (qchunk) qp = h5fz_quant_params_make(mode, qchunk[chunk_ix], fill);\n"
      "  const unsigned long long first = (unsigned long long)(blockIdx.x - chunk_ix * n_sub) * SUB_ELEMS;\n"
      "  const uint32_t m = lnd.n - first < SUB_ELEMS ? (uint32_t)(lnd.n - first) : SUB_ELEMS;\n"
      "  h5fz_lnd_geom lg;\n"
      "  h5fz_lnd_axis a;\n"
      "  int dequant = !lnd_chunk_axis(lnd, lnd_pred, chunk_ix, 0u, &lg, &a) && !h5fz_lnd_axis_make(&lg, 1u, &a);\n"
      "  word_t *const w = words + (unsigned long long)chunk_ix * lnd.n + first;\n"
      "  if (dequant)\n"
      "    h5fz_lnd_xfix_dequant_%s(&blk, w, m, first, lg, aux[2u * blockIdx.x], &qp);\n"
      "  else\n"
      "    h5fz_lnd_xfix_%s(&blk, w, m, first, lg, aux[2u * blockIdx.x]);\n}\n",
      w, w);
}

/* lorenzo_nd's y and z passes (h5fz_lnd_axis), after h5fz_lnd_xfix_kernel. */
static void emit_lnd_axis_kernels(strbuf *b, const char *w)
{
  emit(b,
       "\n/* ... then along y (z = 0) and z (z = 1), h5fz_lnd_axis, per_chunk threads a chunk: the sum of each\n"
       " * segment of a line, a thread each (part: part_stride words a chunk) */\n"
       "extern \"C\" __global__ void h5fz_lnd_asum_kernel(const word_t *words, h5fz_lnd_geom lnd, const uint32_t "
       "*lnd_pred, uint32_t z,\n"
       "                                                 unsigned long long per_chunk, word_t *part, unsigned long "
       "long part_stride)\n{\n"
       "  const unsigned long long tg = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
       "  const uint32_t chunk_ix = (uint32_t)(tg / per_chunk);\n"
       "  const unsigned long long t = tg %% per_chunk;\n"
       "  h5fz_lnd_geom lg;\n"
       "  h5fz_lnd_axis a;\n"
       "  if (!lnd_chunk_axis(lnd, lnd_pred, chunk_ix, z, &lg, &a) || a.nseg <= 1u || t >= "
       "h5fz_lnd_axis_segments(&a)) return;\n"
       "  h5fz_lnd_asum_%s(words + (unsigned long long)chunk_ix * lnd.n, a, t, part + chunk_ix * part_stride);\n}\n",
       w);
  emit(b,
       "\n/* ... those sums scanned along each line, a thread per line (per_chunk lines a chunk) */\n"
       "extern \"C\" __global__ void h5fz_lnd_apart_kernel(word_t *part, h5fz_lnd_geom lnd, const uint32_t *lnd_pred, "
       "uint32_t z,\n"
       "                                                  unsigned long long per_chunk, unsigned long long "
       "part_stride)\n{\n"
       "  const unsigned long long tg = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
       "  const uint32_t chunk_ix = (uint32_t)(tg / per_chunk);\n"
       "  const unsigned long long line = tg %% per_chunk;\n"
       "  h5fz_lnd_geom lg;\n"
       "  h5fz_lnd_axis a;\n"
       "  if (!lnd_chunk_axis(lnd, lnd_pred, chunk_ix, z, &lg, &a) || a.nseg <= 1u || line >= "
       "h5fz_lnd_axis_lines(&a)) return;\n"
       "  h5fz_lnd_apart_%s(part + chunk_ix * part_stride, a, line);\n}\n",
       w);
  emit(b,
       "\n/* ... and each segment's prefix sums from its offset, a thread each; a chunk's last pass leaves the\n"
       " * values (outliers are patched from the side section on the host) */\n"
       "extern \"C\" __global__ void h5fz_lnd_ascan_kernel(word_t *words, h5fz_lnd_geom lnd, const uint32_t "
       "*lnd_pred, uint32_t z,\n"
       "                                                  unsigned long long per_chunk, const word_t *part,\n"
       "                                                  unsigned long long part_stride, double eb, double step,\n"
       "                                                  double inv_step, int mode, unsigned long long fill,\n"
       "                                                  const double *qchunk)\n{\n"
       "  const unsigned long long tg = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
       "  const uint32_t chunk_ix = (uint32_t)(tg / per_chunk);\n"
       "  const unsigned long long t = tg %% per_chunk;\n"
       "  h5fz_lnd_geom lg;\n"
       "  h5fz_lnd_axis a, later;\n"
       "  if (!lnd_chunk_axis(lnd, lnd_pred, chunk_ix, z, &lg, &a) || t >= h5fz_lnd_axis_segments(&a)) return;\n"
       "  h5fz_quant_params qp = {eb, step, inv_step, mode, fill};\n"
       "  if (qchunk) qp = h5fz_quant_params_make(mode, qchunk[chunk_ix], fill);\n"
       "  const int last = z == 1u || !h5fz_lnd_axis_make(&lg, 1u, &later);\n"
       "  h5fz_lnd_ascan_%s(words + (unsigned long long)chunk_ix * lnd.n, a, t,\n"
       "                   a.nseg > 1u ? part + chunk_ix * part_stride : (const word_t *)0,\n"
       "                   last ? &qp : (const h5fz_quant_params *)0);\n}\n",
       w);
}

int h5fz_codegen_warp_fused_chain(const h5fz_spec *s)
{
  static const uint8_t chain[5] = {H5FZ_OP_QUANT, H5FZ_OP_DELTA, H5FZ_OP_ZIGZAG, H5FZ_OP_BITSHUFFLE, H5FZ_OP_RZE};
  static const uint8_t lnd[5] = {H5FZ_OP_QUANT, H5FZ_OP_LORENZO_ND, H5FZ_OP_ZIGZAG, H5FZ_OP_BITSHUFFLE, H5FZ_OP_RZE};
  static const uint8_t fast[4] = {H5FZ_OP_QUANT, H5FZ_OP_DELTA, H5FZ_OP_ZIGZAG, H5FZ_OP_BITPACK};
  if (s->dtype != H5FZ_DTYPE_F32 || s->subchunk_bytes != 4u * H5FZ_WF_ELEMS) return 0;
  if (s->n_ops == 5 && (!memcmp(s->ops, chain, 5) || !memcmp(s->ops, lnd, 5))) return H5FZ_WF_CHAIN_DEFAULT;
  if (s->n_ops == 4 && !memcmp(s->ops, fast, 4)) return H5FZ_WF_CHAIN_FAST;
  return 0;
}

/* Both warp-fused kernel pairs begin alike (%s: their shared-memory type):
 * the block's chunk and sub-chunk, partial ones left to the generic
 * kernel, the bound. */
static const char wf_prologue_fmt[] =
    "  __shared__ %s S;\n"
    "  const uint32_t chunk_ix = blockIdx.x / n_sub;\n"
    "  const unsigned long long base = (unsigned long long)chunk_ix * n;\n"
    "  const unsigned long long first = (unsigned long long)(blockIdx.x - chunk_ix * n_sub) * SUB_ELEMS;\n"
    "  if (n - first < SUB_ELEMS) return; /* partial: the generic kernel's */\n"
    "  h5fz_quant_params qp = {eb, step, inv_step, mode, fill};\n"
    "  if (qchunk) qp = h5fz_quant_params_make(mode, qchunk[chunk_ix], fill);\n";

/* The fast chain's warp-fused kernels (device_ops/op_warp_fast.h): one
 * block of WF_THREADS per full sub-chunk, the same arguments as the
 * default chain's (so the host launches them alike), their own names
 * (profilers tell them apart); the warps per block go in as a constant, so
 * that the kernels' loops are known. A partial sub-chunk's block returns
 * at once (the generic kernel takes it). */
static void emit_warp_fast(strbuf *b)
{
  char prologue[sizeof wf_prologue_fmt + 16];
  snprintf(prologue, sizeof prologue, wf_prologue_fmt, "h5fz_wfp_smem");
  emit(b,
       "\n/* warp-fused kernels of quant delta zigzag bitpack (device_ops/op_warp_fast.h): the words in\n"
       " * registers, one block per full sub-chunk */\n"
       "extern \"C\" __global__ void __launch_bounds__(WF_THREADS, WF_MIN_BLOCKS)\n"
       "%s(const value_t *in, unsigned long long n, double eb, double step, double inv_step, int mode, "
       "unsigned long long fill,\n"
       "               uint32_t n_sub, const double *qchunk, uint8_t *slots, uint32_t *entries, uint32_t *opos,\n"
       "               word_t *oval, uint32_t *ocount)\n{\n"
       "%s"
       "  h5fz_wfp_encode(&S, WF_THREADS / 32u, in + base + first, &qp, slots + (size_t)blockIdx.x * SLOT_BYTES,\n"
       "                  entries + blockIdx.x, ocount + blockIdx.x, opos + base + first, oval + base + first);\n}\n",
       H5FZ_KERNEL_ENCODE_WFP, prologue);
  emit(b,
       "\nextern \"C\" __global__ void __launch_bounds__(WF_THREADS, WF_MIN_BLOCKS)\n"
       "%s(const uint8_t *payload, const unsigned long long *offsets, const uint32_t *entries,\n"
       "               unsigned long long n, double eb, double step, double inv_step, int mode, unsigned long long "
       "fill, uint32_t n_sub,\n"
       "               const double *qchunk, value_t *out, int *status)\n{\n"
       "%s"
       "  if (h5fz_wfp_decode(&S, WF_THREADS / 32u, payload + offsets[blockIdx.x], entries[blockIdx.x], &qp,\n"
       "                      out + base + first) &&\n"
       "      threadIdx.x == 0)\n"
       "    atomicMax(status, (int)blockIdx.x + 1);\n}\n",
       H5FZ_KERNEL_DECODE_WFP, prologue);
}

/* The warp-fused kernels (device_ops/op_warp_fused.h): one block of
 * WF_THREADS per full sub-chunk, the same arguments as the generic ones;
 * a partial sub-chunk's block returns at once (the generic kernel takes it). */
static void emit_warp_fused(strbuf *b, int lnd)
{
  /* both kernels: the block's chunk and sub-chunk, partial ones left to the generic kernel, the bound */
  char prologue[sizeof wf_prologue_fmt + 16];
  snprintf(prologue, sizeof prologue, wf_prologue_fmt, "h5fz_wf_smem");
  /* the two kernels' heads; lorenzo_nd's take its arguments after the others (%s) */
  static const char encode_head[] =
      "extern \"C\" __global__ void __launch_bounds__(WF_THREADS, WF_MIN_BLOCKS)\n"
      "h5fz_encode_wf(const value_t *in, unsigned long long n, double eb, double step, double inv_step, int mode, "
      "unsigned long long fill,\n"
      "               uint32_t n_sub, const double *qchunk, uint8_t *slots, uint32_t *entries, uint32_t *opos,\n"
      "               word_t *oval, uint32_t *ocount%s)\n{\n";
  static const char decode_head[] =
      "\nextern \"C\" __global__ void __launch_bounds__(WF_THREADS, WF_MIN_BLOCKS)\n"
      "h5fz_decode_wf(const uint8_t *payload, const unsigned long long *offsets, const uint32_t *entries,\n"
      "               unsigned long long n, double eb, double step, double inv_step, int mode, unsigned long long "
      "fill, uint32_t n_sub,\n"
      "               const double *qchunk, value_t *out, int *status%s)\n{\n";
  static const char encode_call[] =
      "  h5fz_wf_encode(&S, in + base + first, &qp, %s, slots + (size_t)blockIdx.x * SLOT_BYTES, entries + "
      "blockIdx.x,\n"
      "                 ocount + blockIdx.x, opos + base + first, oval + base + first);\n}\n";
  if (!lnd) {
    emit(b, "%s",
         "\n/* warp-fused kernels: the whole chain with the words in registers, one block per full sub-chunk */\n");
    emit(b, encode_head, "");
    emit(b, "%s", prologue);
    emit(b, encode_call, "0u");
    emit(b, decode_head, "");
    emit(b, "%s", prologue);
    emit(b, "%s",
         "  if (h5fz_wf_decode(&S, payload + offsets[blockIdx.x], entries[blockIdx.x], &qp, out + base + first,\n"
         "                     (uint32_t *)0) &&\n"
         "      threadIdx.x == 0)\n"
         "    atomicMax(status, (int)blockIdx.x + 1);\n}\n");
    return;
  }
  /* lorenzo_nd's 1-D predictor is the delta over the whole chunk: the
   * default chain's kernels, the first value predicted from the one before
   * the sub-chunk (encode), the words and carry information left for
   * h5fz_lnd_*_kernel (decode) */
  emit(b, "%s",
       "\n/* warp-fused kernels for lorenzo_nd's 1-D predictor (the delta across sub-chunks): one block per full\n"
       " * sub-chunk; the generic kernels take the other predictors */\n");
  emit(b, encode_head, ", h5fz_lnd_geom lnd, const unsigned long long *lnd_costs");
  emit(b, "%s", prologue);
  emit(b, "%s",
       "  if (h5fz_lnd_choose(lnd_costs + 3u * H5FZ_LND_COST_PARTS * chunk_ix, H5FZ_LND_COST_PARTS, lnd.dim) != 1u)\n"
       "    return; /* the generic kernel's */\n"
       "  uint32_t carry0 = 0; /* the word of the value before the sub-chunk */\n"
       "  if (first) (void)h5fz_wf_quant(in[base + first - 1u], &qp, &carry0);\n");
  emit(b, encode_call, "carry0");
  emit(b, decode_head, ", h5fz_lnd_geom lnd, unsigned long long *lnd_aux,\n               const uint32_t *lnd_pred");
  emit(b, "%s", prologue);
  emit(b, "  h5fz_lnd_geom lg = lnd; /* the chunk's predictor (its header's) */\n"
          "  if (lnd_pred) lg.dim = lnd_pred[chunk_ix];\n"
          "  if (lg.dim != 1u) return; /* the generic kernel's */\n"
          "  word_t *const words = (word_t *)(out + base + first); /* words until h5fz_lnd_xfix_kernel */\n"
          "  if (h5fz_wf_decode(&S, payload + offsets[blockIdx.x], entries[blockIdx.x], &qp, (value_t *)0, words)) {\n"
          "    if (threadIdx.x == 0) atomicMax(status, (int)blockIdx.x + 1);\n"
          "    return; /* every thread of the block */\n"
          "  }\n"
          "  __syncthreads(); /* the last word, stored by another warp */\n"
          "  if (threadIdx.x == 0) { /* as h5fz_lnd_xscan leaves them */\n"
          "    uint32_t ex, ey, f = (uint32_t)first;\n"
          "    h5fz_lnd_eff(&lg, &ex, &ey);\n"
          "    uint32_t head = f %% ex ? ex - f %% ex : 0u;\n"
          "    lnd_aux[2u * blockIdx.x] = (unsigned long long)words[SUB_ELEMS - 1u];\n"
          "    lnd_aux[2u * blockIdx.x + 1u] = head < SUB_ELEMS ? 1u : 0u;\n"
          "  }\n}\n");
}

int h5fz_codegen(const h5fz_spec *spec, int threads, unsigned flags, char **src, size_t *smem_bytes)
{
  if (!spec || !src || !smem_bytes) return h5fz_fail(H5FZ_ERR_ARG, "h5fz_codegen: NULL argument");
  int rc = h5fz_spec_validate(spec);
  if (rc) return rc;
  if (spec->dtype == H5FZ_DTYPE_UNKNOWN)
    return h5fz_fail(H5FZ_ERR_SPEC, "codegen needs the element type (dtype=f32 or dtype=f64)");
  if (threads < 32 || threads > 1024 || threads % 32)
    return h5fz_fail(H5FZ_ERR_ARG, "threads per block %d must be a multiple of 32 in [32, 1024]", threads);
  int f64 = spec->dtype == H5FZ_DTYPE_F64;
  const char *w = f64 ? "64" : "32";
  uint32_t slot = spec->subchunk_bytes, elems = slot / (f64 ? 8u : 4u);
  char text[512];
  h5fz_spec_format(spec, text, sizeof text);
  strbuf b = {0};
  emit(&b,
       "/*\n * Generated by h5fz codegen for the chain\n *   %s\n"
       " * One thread block of %d threads per sub-chunk of %u %s values (%u bytes),\n"
       " * held in shared memory; each op is a function of device_ops/ (embedded).\n */\n",
       text, threads, elems, f64 ? "float64" : "float32", slot);
  emit(&b, "#include \"h5fz_ops.h\"\n#include \"h5fz_gpu_tail.h\"\n#include \"h5fz_gpu_batch.h\"\n\n");
  /* Resident blocks per SM the register budget must allow: the caller's
   * (the kernel class's register cap, H5FZ_CODEGEN_MIN_BLOCKS), else 1024
   * threads' worth, i.e. 64 registers per thread (78 registers once left an
   * SM at one 512-thread block). */
  int min_blocks = (int)((flags >> 8) & 0xffu);
  if (!min_blocks) min_blocks = threads >= 1024 ? 1 : 1024 / threads;
  /* shared memory: two slots (ping-pong), the coder's scratch (RZE's bitmaps, huff's tables), bitshuffle's
   * padded planes when the chain has it */
  uint32_t coder_scratch = h5fz_rze_scratch_bytes(slot) + 64u;
  uint8_t coder_id = spec->ops[spec->n_ops - 1];
  if (huff_codes(coder_id) && h5fz_huff_scratch_bytes(huff_codes(coder_id)) > coder_scratch)
    coder_scratch = h5fz_huff_scratch_bytes(huff_codes(coder_id));
  uint32_t pad_offset = (coder_scratch + 15u) & ~15u, pad_bytes = 0;
  int padded = (flags & H5FZ_CODEGEN_PADDED_PLANES) != 0;
  for (uint32_t i = 0; i < spec->n_ops && padded; i++)
    if (spec->ops[i] == H5FZ_OP_BITSHUFFLE) pad_bytes = H5FZ_BITSHUFFLE_PAD_BYTES(elems, f64 ? 64u : 32u);
  emit(&b,
       "#define THREADS %du\n#define MIN_BLOCKS %d\n#define SUB_ELEMS %uu\n#define SLOT_BYTES %uu\n"
       "#define PAD_OFFSET %uu\n",
       threads, min_blocks, elems, slot, pad_offset);
  if ((flags & H5FZ_CODEGEN_WARP_FUSED) && h5fz_codegen_warp_fused_chain(spec)) {
    /* about 40 resident warps per SM: shared memory allows 10-11 blocks of
     * 20 KiB on sm_90; registers are capped to match (51 a thread) */
    unsigned wf_warps = H5FZ_CODEGEN_WF_WARPS_OF(flags), wf_blocks = 40u / wf_warps;
    emit(&b, "#define WF_THREADS %uu\n#define WF_MIN_BLOCKS %uu\n", 32u * wf_warps, wf_blocks > 10u ? 10u : wf_blocks);
  }
  emit(&b, "typedef %s value_t;\ntypedef %s word_t;\n\n", f64 ? "double" : "float", f64 ? "uint64_t" : "uint32_t");
  emit_encode(&b, spec, w, padded);
  emit_decode(&b, spec, w, padded);
  if (spec->ops[1] == H5FZ_OP_LORENZO_ND) {
    emit_lnd_kernels(&b, w);
    emit_lnd_axis_kernels(&b, w);
  }
  int wf_kind = h5fz_codegen_warp_fused_chain(spec);
  if ((flags & H5FZ_CODEGEN_WARP_FUSED) && wf_kind == H5FZ_WF_CHAIN_FAST)
    emit_warp_fast(&b);
  else if ((flags & H5FZ_CODEGEN_WARP_FUSED) && wf_kind)
    emit_warp_fused(&b, spec->ops[1] == H5FZ_OP_LORENZO_ND);
  if (b.oom) {
    free(b.buf);
    return h5fz_fail(H5FZ_ERR_NOMEM, "codegen: out of memory");
  }
  *src = b.buf;
  *smem_bytes = 2u * (size_t)slot + pad_offset + pad_bytes;
  return H5FZ_OK;
}
