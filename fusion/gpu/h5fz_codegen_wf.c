/*
 * h5fz_codegen_wf.c - the warp-fused kernels' source (device_ops/
 * op_warp_fused.h, op_warp_fast.h): one block per full sub-chunk, the
 * words in registers, for the two chains that have them.
 */
#include <stdio.h>
#include <string.h>

#include "h5fz_ops.h"
#include "h5fz_codegen_wf.h"
#include "h5fz_internal.h"

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
static void emit_warp_fast(h5fz_strbuf *b)
{
  char prologue[sizeof wf_prologue_fmt + 16];
  snprintf(prologue, sizeof prologue, wf_prologue_fmt, "h5fz_wfp_smem");
  h5fz_emit(b,
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
  h5fz_emit(b,
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

/* One warp-fused kernel: its head (head_fmt with the chain's extra
 * arguments, "" for none), the block prologue both kernels share, then its
 * body (text, emitted as it is). The four kernels of emit_warp_fused are
 * each this, so the parts they share are written once. */
static void emit_wf_kernel(h5fz_strbuf *b, const char *head_fmt, const char *head_args, const char *prologue,
                           const char *body)
{
  h5fz_emit(b, head_fmt, head_args);
  h5fz_emit(b, "%s", prologue);
  h5fz_emit(b, "%s", body);
}

/* The warp-fused kernels (device_ops/op_warp_fused.h): one block of
 * WF_THREADS per full sub-chunk, the same arguments as the generic ones;
 * a partial sub-chunk's block returns at once (the generic kernel takes it). */
static void emit_warp_fused(h5fz_strbuf *b, int lnd)
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
  /* the encode's call of the fused chain, the first word's predecessor (%s) its one difference */
#define WF_ENCODE_CALL(carry)                                                                                          \
  "  h5fz_wf_encode(&S, in + base + first, &qp, " carry ", slots + (size_t)blockIdx.x * SLOT_BYTES, entries + "         \
  "blockIdx.x,\n"                                                                                                      \
  "                 ocount + blockIdx.x, opos + base + first, oval + base + first);\n}\n"
  if (!lnd) {
    h5fz_emit(b, "%s",
         "\n/* warp-fused kernels: the whole chain with the words in registers, one block per full sub-chunk */\n");
    emit_wf_kernel(b, encode_head, "", prologue, WF_ENCODE_CALL("0u"));
    emit_wf_kernel(b, decode_head, "", prologue,
                   "  if (h5fz_wf_decode(&S, payload + offsets[blockIdx.x], entries[blockIdx.x], &qp, out + base + "
                   "first,\n"
                   "                     (uint32_t *)0) &&\n"
                   "      threadIdx.x == 0)\n"
                   "    atomicMax(status, (int)blockIdx.x + 1);\n}\n");
    return;
  }
  /* lorenzo_nd's 1-D predictor is the delta over the whole chunk: the
   * default chain's kernels, the first value predicted from the one before
   * the sub-chunk (encode), the words and carry information left for
   * h5fz_lnd_*_kernel (decode) */
  h5fz_emit(b, "%s",
       "\n/* warp-fused kernels for lorenzo_nd's 1-D predictor (the delta across sub-chunks): one block per full\n"
       " * sub-chunk; the generic kernels take the other predictors */\n");
  emit_wf_kernel(b, encode_head, ", h5fz_lnd_geom lnd, const unsigned long long *lnd_costs", prologue,
                 "  if (h5fz_lnd_choose(lnd_costs + H5FZ_LND_NCOST * H5FZ_LND_COST_PARTS * chunk_ix, H5FZ_LND_COST_PARTS, "
                 "lnd) != 1u)\n"
                 "    return; /* the generic kernel's */\n"
                 "  uint32_t carry0 = 0; /* the word of the value before the sub-chunk */\n"
                 "  if (first) (void)h5fz_wf_quant(in[base + first - 1u], &qp, &carry0);\n" WF_ENCODE_CALL("carry0"));
  emit_wf_kernel(b, decode_head, ", h5fz_lnd_geom lnd, unsigned long long *lnd_aux,\n               const uint32_t *lnd_pred",
                 prologue,
                 "  h5fz_lnd_geom lg = lnd; /* the chunk's predictor (its header's) */\n"
                 "  if (lnd_pred) lg.dim = lnd_pred[chunk_ix];\n"
                 "  if (lg.dim != 1u) return; /* the generic kernel's */\n"
                 "  word_t *const words = (word_t *)(out + base + first); /* words until h5fz_lnd_xfix_kernel */\n"
                 "  if (h5fz_wf_decode(&S, payload + offsets[blockIdx.x], entries[blockIdx.x], &qp, (value_t *)0, "
                 "words)) {\n"
                 "    if (threadIdx.x == 0) atomicMax(status, (int)blockIdx.x + 1);\n"
                 "    return; /* every thread of the block */\n"
                 "  }\n"
                 "  __syncthreads(); /* the last word, stored by another warp */\n"
                 "  if (threadIdx.x == 0) { /* as h5fz_lnd_xscan leaves them */\n"
                 "    uint32_t ex, ey, f = (uint32_t)first;\n"
                 "    h5fz_lnd_eff(&lg, &ex, &ey);\n"
                 "    uint32_t head = f % ex ? ex - f % ex : 0u;\n"
                 "    lnd_aux[2u * blockIdx.x] = (unsigned long long)words[SUB_ELEMS - 1u];\n"
                 "    lnd_aux[2u * blockIdx.x + 1u] = head < SUB_ELEMS ? 1u : 0u;\n"
                 "  }\n}\n");
#undef WF_ENCODE_CALL
}

void h5fz_codegen_emit_warp_fused(h5fz_strbuf *b, const h5fz_spec *spec)
{
  int wf_kind = h5fz_codegen_warp_fused_chain(spec);
  if (wf_kind == H5FZ_WF_CHAIN_FAST)
    emit_warp_fast(b);
  else if (wf_kind)
    emit_warp_fused(b, h5fz_op_is_lnd(spec->ops[1]));
}
