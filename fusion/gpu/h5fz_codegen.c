/*
 * h5fz_codegen.c - spec -> CUDA source (see h5fz_codegen.h). The output is
 * meant to be read: `h5fz codegen SPEC` prints it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h5fz_ops.h"
#include "h5fz_codegen.h"
#include "h5fz_codegen_lnd.h"
#include "h5fz_internal.h"

/* Buffer names of the ping-pong pair: op k reads buf[k%2], writes the other. */
static const char *bufname(unsigned k) { return k % 2 ? "buf1" : "buf0"; }

/* The codes of a huff-family coder (op_huff.h's nctx; op_huff_cpu.c
 * passes the same), 0 for other ops. */
static uint32_t huff_codes(unsigned id) { return id == H5FZ_OP_HUFF ? 1u : id == H5FZ_OP_HUFFCTX ? 2u : 0u; }

/* one_slot: the encode of an h5fz_codegen_one_slot_encode chain, whose
 * dynamic shared memory holds buf0 and the scratch only; decode: the
 * kernel is launched with the decode's geometry (DEC_THREADS). */
static void emit_prologue(h5fz_strbuf *b, const char *kernel, const char *params, int one_slot, int decode)
{
  h5fz_emit(b, "extern \"C\" __global__ void __launch_bounds__(%s)\n%s(%s)\n{\n",
            decode ? "DEC_THREADS, DEC_MIN_BLOCKS" : "THREADS, MIN_BLOCKS", kernel, params);
  h5fz_emit(b, "  extern __shared__ uint64_t smem[];\n"
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
          "%s"
          "  uint32_t *const pad = (uint32_t *)(scratch + PAD_OFFSET); /* bitshuffle's padded planes */\n"
          "  (void)L;\n"
          "  (void)pad;\n"
          "  (void)row;\n"
          "  (void)scratch;\n\n",
          one_slot ? "  uint8_t *buf0 = (uint8_t *)smem, *scratch = buf0 + SLOT_BYTES; /* one slot (no buf1) */\n"
                   : "  uint8_t *buf0 = (uint8_t *)smem, *buf1 = buf0 + SLOT_BYTES, *scratch = buf1 + SLOT_BYTES;\n");
}

int h5fz_codegen_one_slot_encode(const uint8_t *ops, uint32_t n_ops)
{
  return n_ops == 4u && ops[0] == H5FZ_OP_QUANT && h5fz_op_is_lnd(ops[1]) && ops[2] == H5FZ_OP_ZIGZAG &&
         huff_codes(ops[3]) != 0u;
}

size_t h5fz_codegen_encode_smem(const uint8_t *ops, uint32_t n_ops, uint32_t subchunk_bytes, size_t smem_bytes)
{
  /* the slot and the coder's encode scratch (no bitshuffle padding in these chains) */
  return h5fz_codegen_one_slot_encode(ops, n_ops) ? subchunk_bytes + H5FZ_HUFF_GPU_ENCODE_SCRATCH_BYTES : smem_bytes;
}

/* The encode's lorenzo_nd geometry with the predictor its cost pass chose for the chunk. */
#define LND_CHOSEN_GEOM                                                                                                \
  "    h5fz_lnd_geom g = lnd;\n"                                                                                    \
  "    g.dim = h5fz_lnd_choose(lnd_costs + H5FZ_LND_NCOST * H5FZ_LND_COST_PARTS * chunk_ix, H5FZ_LND_COST_PARTS, lnd);\n"

/* The one-slot encode's transforms: lorenzo_nd (the predictor the cost
 * pass measured best) and zigzag in place in buf0, each thread's residuals
 * held in registers until every thread has read the bins it predicts from
 * (items strided over the threads, as the elementwise ops). In passes from
 * the sub-chunk's top down: a residual reads only bins below it, which a
 * later pass has not yet overwritten, and a pass holds a quarter of the
 * residuals (all 32 at once spilled 284 bytes a thread at the one-slot
 * encode's 40 registers; a quarter 96). lorenzo_interp's interpolation
 * (interp) reads bins above it too: it quantizes again those a pass
 * before overwrote (h5fz_lni_q's valid), in passes of two residuals a
 * thread (eight, as Lorenzo's, spilled 52 bytes more a thread). */
static void emit_lnd_zigzag_in_place(h5fz_strbuf *b, const char *w, int interp)
{
  h5fz_emit(b,
       "  /* transforms: lorenzo_nd and zigzag in place (one slot: the encode holds 64 KiB less shared memory,\n"
       "   * so that more blocks share an SM); neighbours in earlier sub-chunks are quantized again */\n"
       "  {\n"
       LND_CHOSEN_GEOM
       "    word_t *const words = (word_t *)buf0;\n"
       "    const uint32_t items = (SUB_ELEMS + THREADS - 1u) / THREADS, per_pass = (items + 3u) / 4u;\n");
  if (interp)
    h5fz_emit(b,
       "    if (g.dim == H5FZ_LNI_PREDICTOR) /* interpolation: two a pass; the words above valid are residuals */\n"
       "      for (uint32_t pass = (items + 1u) / 2u; pass-- > 0;) {\n"
       "        word_t r2[2];\n"
       "        const uint32_t valid = (pass + 1u) * 2u * THREADS;\n"
       "#pragma unroll\n"
       "        for (uint32_t k = 0; k < 2u; k++) {\n"
       "          const uint32_t i = threadIdx.x + (pass * 2u + k) * THREADS;\n"
       "          r2[k] = i < m ? h5fz_zigzag_word_%s(h5fz_lni_resid_%s(words, (uint32_t)first, valid, in,\n"
       "                                                                 (const word_t *)0, &qp, &g, (uint32_t)first + i))\n"
       "                        : 0u;\n"
       "        }\n"
       "        __syncthreads();\n"
       "#pragma unroll\n"
       "        for (uint32_t k = 0; k < 2u; k++) {\n"
       "          const uint32_t i = threadIdx.x + (pass * 2u + k) * THREADS;\n"
       "          if (i < m_pad) words[i] = r2[k];\n"
       "        }\n"
       "        __syncthreads();\n"
       "      }\n"
       "    else\n",
       w, w);
  h5fz_emit(b,
       "    for (uint32_t pass = (items + per_pass - 1u) / per_pass; pass-- > 0;) { /* the top first */\n"
       "      word_t r[(SUB_ELEMS + 4u * THREADS - 1u) / (4u * THREADS)];\n"
       "#pragma unroll\n"
       "      for (uint32_t k = 0; k < per_pass; k++) {\n"
       "        const uint32_t i = threadIdx.x + (pass * per_pass + k) * THREADS;\n"
       "        r[k] = i < m ? h5fz_zigzag_word_%s(h5fz_lnd_resid_at_%s(words, (uint32_t)first, in, &qp, g, i)) : 0u;\n"
       "      }\n"
       "      __syncthreads();\n"
       "#pragma unroll\n"
       "      for (uint32_t k = 0; k < per_pass; k++) {\n"
       "        const uint32_t i = threadIdx.x + (pass * per_pass + k) * THREADS;\n"
       "        if (i < m_pad) words[i] = r[k];\n"
       "      }\n"
       "      __syncthreads();\n"
       "    }\n"
       "  }\n",
       w, w);
}

/* lorenzo_nd's encode: the predictor the cost pass measured best, from
 * the bins of the sub-chunk and of its neighbours in earlier sub-chunks. */
static void emit_lnd_encode(h5fz_strbuf *b, const char *w, const char *from, const char *to)
{
  h5fz_emit(b,
       "  /* transform: lorenzo_nd, with the predictor h5fz_lnd_cost_kernel measured best; neighbours in\n"
       "   * earlier sub-chunks are quantized again from the chunk's values */\n"
       "  {\n"
       "    const value_t *const chunk = in; /* the chunk's values (first is chunk-relative) */\n"
       LND_CHOSEN_GEOM
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
static void emit_transform(h5fz_strbuf *b, const h5fz_op_info *op, const char *w, int decode, int padded, unsigned k)
{
  int bytes = op->output == H5FZ_STREAM_BYTES, lorenzo = op->id == H5FZ_OP_LORENZO;
  int pad = op->id == H5FZ_OP_BITSHUFFLE && padded && !lorenzo;
  const char *in = !decode   ? "(const word_t *)"
                   : lorenzo ? "(word_t *)"
                   : bytes   ? "(const uint8_t *)"
                             : "(const word_t *)";
  const char *out = decode || lorenzo ? "(word_t *)" : bytes ? "(uint8_t *)" : "(word_t *)";
  h5fz_emit(b, "  /* %s: %s */\n", decode ? "inverse transform" : "transform", op->name);
  h5fz_emit(b, "  %s_%s%s_%s(&blk, %s%s, %s%s, m_pad%s);\n  __syncthreads();\n", op->device_fn, decode ? "decode" : "encode",
       pad ? "_padded" : "", w, in, bufname(k), out, bufname(k + 1),
       lorenzo ? ", first, row"
       : pad   ? ", pad"
               : "");
}

static void emit_encode(h5fz_strbuf *b, const h5fz_spec *s, const char *w, int padded)
{
  const int one_slot = h5fz_codegen_one_slot_encode(s->ops, s->n_ops);
  emit_prologue(b, H5FZ_KERNEL_ENCODE,
                "const value_t *in, unsigned long long n, double eb, double step, double inv_step, int mode, unsigned "
                "long long fill,\n"
                "            unsigned row, uint32_t n_sub, const double *qchunk,\n"
                "            uint8_t *slots, uint32_t *entries, uint32_t *opos, word_t *oval, uint32_t *ocount,\n"
                "            h5fz_lnd_geom lnd, const unsigned long long *lnd_costs, uint32_t tail_only",
                one_slot, 0);
  if (h5fz_op_is_lnd(s->ops[1]))
    h5fz_emit(b,
         "  /* tail_only 2: the warp-fused kernel takes the full sub-chunks when the 1-D predictor won */\n"
         "  if (tail_only == 2u && m == SUB_ELEMS &&\n"
         "      h5fz_lnd_choose(lnd_costs + H5FZ_LND_NCOST * H5FZ_LND_COST_PARTS * chunk_ix, H5FZ_LND_COST_PARTS, lnd) == 1u)\n"
         "    return;\n");
  h5fz_emit(b, "  uint8_t *slot = slots + (size_t)bid * SLOT_BYTES;\n"
          "  in += base;\n  opos += base;\n  oval += base;\n\n");
  if (one_slot) {
    h5fz_emit(b, "  /* map: quant straight from global memory (its first pass is strided: coalesced), outliers to this\n"
            "   * sub-chunk's side buffers in index order */\n"
            "  const uint32_t n_out = h5fz_quant_encode_%s(&blk, in + first, m, m_pad, &qp, (word_t *)buf0,\n"
            "                                              opos + first, oval + first);\n"
            "  __syncthreads();\n",
            w);
    emit_lnd_zigzag_in_place(b, w, s->ops[1] == H5FZ_OP_LORENZO_INTERP);
  } else {
    h5fz_emit(b, "  /* stage the sub-chunk in shared memory with coalesced loads */\n"
            "  h5fz_blk_copy(&blk, in + first, buf1, m * (uint32_t)sizeof(value_t));\n"
            "  __syncthreads();\n");
    h5fz_emit(b, "  /* map: quant (outliers to this sub-chunk's side buffers, index order) */\n");
    h5fz_emit(b,
         "  const uint32_t n_out = h5fz_quant_encode_%s(&blk, (const value_t *)buf1, m, m_pad, &qp, (word_t *)buf0,\n"
         "                                              opos + first, oval + first);\n"
         "  __syncthreads();\n",
         w);
  }
  unsigned k = 0;
  for (uint32_t i = 1; i + 1 < s->n_ops && !one_slot; i++, k++) {
    const h5fz_op_info *op = h5fz_op_lookup(s->ops[i]);
    if (op->id == H5FZ_OP_DELTA && i + 2 < s->n_ops && s->ops[i + 1] == H5FZ_OP_ZIGZAG) {
      h5fz_emit(b,
           "  /* transforms: delta, zigzag (one pass) */\n"
           "  h5fz_delta_zigzag_encode_%s(&blk, (const word_t *)%s, (word_t *)%s, m_pad);\n  __syncthreads();\n",
           w, bufname(k), bufname(k + 1));
      i++;
      continue;
    }
    if (h5fz_op_is_lnd(op->id)) {
      emit_lnd_encode(b, w, bufname(k), bufname(k + 1));
      continue;
    }
    emit_transform(b, op, w, 0, padded, k);
  }
  const h5fz_op_info *coder = h5fz_op_lookup(s->ops[s->n_ops - 1]);
  h5fz_emit(b, "  /* coder: %s; a sub-chunk it would not shrink is stored raw */\n", coder->name);
  if (coder->id == H5FZ_OP_RZE)
    h5fz_emit(b, "  uint32_t size = h5fz_rze_encode(&blk, %s, L, slot, L, scratch);\n", bufname(k));
  else if (coder->id == H5FZ_OP_BITPACK)
    h5fz_emit(b, "  uint32_t size = h5fz_bitpack_encode_%s(&blk, (const word_t *)%s, m_pad, slot, L);\n", w, bufname(k));
  else if (huff_codes(coder->id) && one_slot) /* written in place into the global slot */
    h5fz_emit(b, "  uint32_t size = h5fz_huff_encode_%s(&blk, (const word_t *)buf0, m_pad, slot, L, scratch, slot, %uu);\n",
         w, huff_codes(coder->id));
  else if (huff_codes(coder->id)) /* assembled in the other (free) buffer */
    h5fz_emit(b, "  uint32_t size = h5fz_huff_encode_%s(&blk, (const word_t *)%s, m_pad, slot, L, scratch, %s, %uu);\n", w,
         bufname(k), bufname(k + 1), huff_codes(coder->id));
  else
    h5fz_emit(b, "  uint32_t size = H5FZ_RZE_NOT_SMALLER;\n");
  h5fz_emit(b,
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

static void emit_decode(h5fz_strbuf *b, const h5fz_spec *s, const char *w, int padded)
{
  emit_prologue(
      b, H5FZ_KERNEL_DECODE,
      "const uint8_t *payload, const unsigned long long *offsets, const uint32_t *entries,\n"
      "            unsigned long long n, double eb, double step, double inv_step, int mode, unsigned long "
      "long fill, unsigned row,\n"
      "            uint32_t n_sub, const double *qchunk, value_t *out,\n"
      "            int *status,\n"
      "            h5fz_lnd_geom lnd, unsigned long long *lnd_aux, const uint32_t *lnd_pred, uint32_t tail_only",
      0, 1);
  if (h5fz_op_is_lnd(s->ops[1]))
    h5fz_emit(b, "  /* lorenzo_nd: the chunk's predictor (its header's); tail_only 2: the warp-fused kernel takes the\n"
            "   * full sub-chunks of the chunks with the 1-D predictor */\n"
            "  h5fz_lnd_geom lg = lnd;\n"
            "  if (lnd_pred) lg.dim = lnd_pred[chunk_ix];\n"
            "  if (tail_only == 2u && m == SUB_ELEMS && lg.dim == 1u) return;\n");
  h5fz_emit(b, "  out += base;\n"
          "  const uint32_t e = entries[bid], size = e & 0x7fffffffu;\n"
          "  const uint8_t *src = payload + offsets[bid];\n\n");
  const h5fz_op_info *coder = h5fz_op_lookup(s->ops[s->n_ops - 1]);
  h5fz_emit(b, "  /* coder: %s (raw sub-chunks were checked on the host: size == L) */\n", coder->name);
  h5fz_emit(b, "  if (e & 0x80000000u) {\n"
          "    for (uint32_t i = threadIdx.x; i < size; i += blockDim.x) buf0[i] = src[i];\n"
          "  } else");
  if (huff_codes(coder->id))
    h5fz_emit(b, " { /* the words " H5FZ_KERNEL_HUFF_GROUPS " decoded into the chunk's output, one thread a group */\n"
            "    h5fz_blk_copy(&blk, out + first, buf0, m * (uint32_t)sizeof(word_t));\n"
            "    for (uint32_t i = m + threadIdx.x; i < m_pad; i += blockDim.x) ((word_t *)buf0)[i] = 0;\n"
            "  }\n  __syncthreads();\n");
  else {
    if (coder->id == H5FZ_OP_RZE)
      h5fz_emit(b, " if (h5fz_rze_decode(&blk, src, size, buf0, L, scratch)) {\n");
    else if (coder->id == H5FZ_OP_BITPACK)
      h5fz_emit(b, " if (h5fz_bitpack_decode_%s(&blk, src, size, (word_t *)buf0, m_pad)) {\n", w);
    else
      h5fz_emit(b, " {\n");
    h5fz_emit(b, "    if (threadIdx.x == 0) atomicMax(status, (int)bid + 1);\n"
            "    return; /* the whole block agrees: the condition is block-uniform */\n"
            "  }\n  __syncthreads();\n");
  }
  unsigned k = 0;
  int lnd = h5fz_op_is_lnd(s->ops[1]), dequantized = 0;
  uint32_t first_transform = lnd ? 2u : 1u;
  for (uint32_t i = s->n_ops - 1; i-- > first_transform; k++) {
    const h5fz_op_info *op = h5fz_op_lookup(s->ops[i]);
    /* the delta decode takes in a zigzag before it and the quantizer decode after it */
    int zz = op->id == H5FZ_OP_ZIGZAG && i > first_transform && s->ops[i - 1] == H5FZ_OP_DELTA;
    if (zz || op->id == H5FZ_OP_DELTA) {
      uint32_t delta_at = zz ? i - 1 : i;
      dequantized = delta_at == 1u; /* the quantizer's words come next */
      h5fz_emit(b, "  /* inverse transforms: %sdelta%s (one pass) */\n", zz ? "zigzag, " : "", dequantized ? ", quant" : "");
      if (dequantized)
        h5fz_emit(b,
             "  h5fz_delta_decode_fused_%s(&blk, (const word_t *)%s, m_pad, %d, (word_t *)0, &qp, m, (value_t *)%s);\n"
             "  __syncthreads();\n",
             w, bufname(k), zz, bufname(k + 1));
      else
        h5fz_emit(b,
             "  h5fz_delta_decode_fused_%s(&blk, (const word_t *)%s, m_pad, %d, (word_t *)%s, 0, 0u, (value_t *)0);\n"
             "  __syncthreads();\n",
             w, bufname(k), zz, bufname(k + 1));
      i = delta_at;
      continue;
    }
    emit_transform(b, op, w, 1, padded, k);
  }
  if (lnd) {
    h5fz_emit(b,
         "  /* inverse transform: lorenzo_nd, its part inside the sub-chunk (prefix sums along x); the\n"
         "   * h5fz_lnd_*_kernel kernels finish it on the whole chunk, then run the quantizer decode */\n"
         "  h5fz_lnd_xscan_%s(&blk, (word_t *)%s, (word_t *)%s, m, m_pad, first, lg, lnd_aux + 2u * bid);\n"
         "  word_t *const chunk_words = (word_t *)out; /* the chunk's output: words until the quantizer decode */\n"
         "  h5fz_blk_copy(&blk, %s, chunk_words + first, m * (uint32_t)sizeof(word_t));\n}\n",
         w, bufname(k), bufname(k + 1), bufname(k));
    return;
  }
  if (dequantized) { /* the values are in the last op's output */
    h5fz_emit(b, "  /* values (outliers are patched from the side section on the host), staged in shared memory\n"
            "   * so the stores to global memory coalesce */\n");
    h5fz_emit(b, "  h5fz_blk_copy(&blk, %s, out + first, m * (uint32_t)sizeof(value_t));\n}\n", bufname(k));
    return;
  }
  h5fz_emit(b, "  /* inverse map: quant (outliers are patched from the side section on the host),\n"
          "   * staged in shared memory so the stores to global memory coalesce */\n");
  h5fz_emit(b, "  h5fz_quant_decode_%s(&blk, (const word_t *)%s, m, &qp, (value_t *)%s);\n  __syncthreads();\n", w,
       bufname(k), bufname(k + 1));
  h5fz_emit(b, "  h5fz_blk_copy(&blk, %s, out + first, m * (uint32_t)sizeof(value_t));\n}\n", bufname(k + 1));
}

/* huff and huffctx decode in a kernel of their own, before h5fz_decode
 * (fusion/gpu/h5fz_gpu_huff_groups.h: why, and the body): the block's
 * shared memory and a call. */
static void emit_huff_groups(h5fz_strbuf *b, const char *w, uint32_t nctx)
{
  h5fz_emit(b,
            "\n/* the coder's decode, groups shared by the block's threads (h5fz_gpu_huff_groups.h): h5fz_decode runs "
            "after it */\n"
            "extern \"C\" __global__ void __launch_bounds__(H5FZ_HUFF_DEC_THREADS)\n"
            "%s(const uint8_t *payload, const unsigned long long *offsets, const uint32_t *entries, unsigned long long n,\n"
            "                 uint32_t n_sub, uint32_t n_total, uint32_t subs, uint32_t max_parts, value_t *out, int *status)\n{\n"
            "  __shared__ h5fz_huff_dtab T[H5FZ_HUFF_SUBS_PER_BLOCK];\n"
            "  __shared__ h5fz_huff_stream S[H5FZ_HUFF_SUBS_PER_BLOCK];\n"
            "  __shared__ uint32_t next_job;\n"
            "  h5fz_huff_groups_block(payload, offsets, entries, n, n_sub, n_total, SUB_ELEMS, %su, %uu, subs, max_parts, out,\n"
            "                         status, T, S, &next_job);\n}\n",
            H5FZ_KERNEL_HUFF_GROUPS, w, nctx);
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
  /* Resident blocks per SM the register budget must allow: the caller's
   * (the kernel class's register cap, H5FZ_CODEGEN_MIN_BLOCKS), else 1024
   * threads' worth, i.e. 64 registers per thread (78 registers once left an
   * SM at one 512-thread block). */
  int min_blocks = (int)((flags >> 8) & 0xffu);
  if (!min_blocks) min_blocks = threads >= 1024 ? 1 : 1024 / threads;
  /* the decode's geometry: its own when the caller gave one (H5FZ_CODEGEN_DEC_*), else the encode's */
  int dec_threads = (int)((flags >> 20) & 0x3fu) * 32;
  int dec_min_blocks = (int)((flags >> 26) & 0x3fu);
  if (!dec_threads) {
    dec_threads = threads;
    if (!dec_min_blocks) dec_min_blocks = min_blocks;
  }
  if (dec_threads > 1024)
    return h5fz_fail(H5FZ_ERR_ARG, "decode threads per block %d must be a multiple of 32 in [32, 1024]", dec_threads);
  if (!dec_min_blocks) dec_min_blocks = dec_threads >= 1024 ? 1 : 1024 / dec_threads;
  int f64 = spec->dtype == H5FZ_DTYPE_F64;
  const char *w = f64 ? "64" : "32";
  uint32_t slot = spec->subchunk_bytes, elems = slot / (f64 ? 8u : 4u);
  char text[512];
  h5fz_spec_format(spec, text, sizeof text);
  h5fz_strbuf b = {0};
  h5fz_emit(&b,
       "/*\n * Generated by h5fz codegen for the chain\n *   %s\n"
       " * One thread block of %d threads per sub-chunk of %u %s values (%u bytes),\n"
       " * held in shared memory; each op is a function of device_ops/ (embedded).\n */\n",
       text, threads, elems, f64 ? "float64" : "float32", slot);
  h5fz_emit(&b, "#include \"h5fz_ops.h\"\n#include \"h5fz_gpu_tail.h\"\n#include \"h5fz_gpu_batch.h\"\n"
                "#include \"h5fz_gpu_huff_groups.h\"\n\n");
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
  h5fz_emit(&b,
       "#define THREADS %du\n#define MIN_BLOCKS %d\n#define SUB_ELEMS %uu\n#define SLOT_BYTES %uu\n"
       "#define PAD_OFFSET %uu\n#define DEC_THREADS %du\n#define DEC_MIN_BLOCKS %d\n",
       threads, min_blocks, elems, slot, pad_offset, dec_threads, dec_min_blocks);
  if ((flags & H5FZ_CODEGEN_WARP_FUSED) && h5fz_codegen_warp_fused_chain(spec)) {
    /* about 40 resident warps per SM: shared memory allows 10-11 blocks of
     * 20 KiB on sm_90; registers are capped to match (51 a thread) */
    unsigned wf_warps = H5FZ_CODEGEN_WF_WARPS_OF(flags), wf_blocks = 40u / wf_warps;
    h5fz_emit(&b, "#define WF_THREADS %uu\n#define WF_MIN_BLOCKS %uu\n", 32u * wf_warps, wf_blocks > 10u ? 10u : wf_blocks);
  }
  h5fz_emit(&b, "typedef %s value_t;\ntypedef %s word_t;\n\n", f64 ? "double" : "float", f64 ? "uint64_t" : "uint32_t");
  emit_encode(&b, spec, w, padded);
  emit_decode(&b, spec, w, padded);
  if (huff_codes(coder_id)) emit_huff_groups(&b, w, huff_codes(coder_id));
  if (h5fz_op_is_lnd(spec->ops[1])) h5fz_codegen_emit_lnd(&b, w, spec->ops[1] == H5FZ_OP_LORENZO_INTERP);
  if (flags & H5FZ_CODEGEN_WARP_FUSED) h5fz_codegen_emit_warp_fused(&b, spec);
  if (b.oom) {
    free(b.buf);
    return h5fz_fail(H5FZ_ERR_NOMEM, "codegen: out of memory");
  }
  *src = b.buf;
  *smem_bytes = 2u * (size_t)slot + pad_offset + pad_bytes;
  return H5FZ_OK;
}
