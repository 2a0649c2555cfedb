/*
 * h5fz_codegen_lnd.c - the source of lorenzo_nd's and lorenzo_interp's
 * chunk-level kernels (the cost pass, the decode's chunk-wide passes):
 * device_ops/op_lorenzo_nd.h and op_lnd_interp.h do the work, these
 * kernels give each chunk of a batch its threads.
 */
#include <stdio.h>

#include "h5fz_ops.h"
#include "h5fz_codegen_lnd.h"

/* lorenzo_nd's chunk-level kernels: the encoder's cost pass, and the end of
 * the decode after h5fz_decode (carry along x, sums along y and z, the
 * quantizer decode in place, fused into the last of those passes). Every
 * kernel takes a batch of chunks of lnd.n values back to back; lnd_pred
 * (NULL: lnd.dim for all) holds each chunk's predictor. */
static void emit_lnd_kernels(h5fz_strbuf *b, const char *w)
{
  h5fz_emit(
      b,
      "\n/* lorenzo_nd, encode: the cost of each predictor on part blockIdx.x %% H5FZ_LND_COST_PARTS of the sample of\n"
      " * chunk blockIdx.x / H5FZ_LND_COST_PARTS (H5FZ_LND_COST_THREADS threads, a warp a group) */\n"
      "extern \"C\" __global__ void __launch_bounds__(H5FZ_LND_COST_THREADS)\n"
      "h5fz_lnd_cost_kernel(const value_t *in, h5fz_lnd_geom lnd, double eb, double step, double inv_step, int mode, "
      "unsigned long long fill,\n"
      "                     const double *qchunk, unsigned long long *costs)\n{\n"
      "  __shared__ uint64_t scan[H5FZ_SCAN_SCRATCH_WORDS];\n"
      "  __shared__ uint32_t hist[H5FZ_LND_NCOST * H5FZ_LND_CLASSES]; /* the entropy cost's classes */\n"
      "  const h5fz_blk blk = {threadIdx.x, blockDim.x, scan};\n"
      "  const uint32_t chunk_ix = blockIdx.x / H5FZ_LND_COST_PARTS, part = blockIdx.x %% H5FZ_LND_COST_PARTS;\n"
      "  h5fz_quant_params qp = {eb, step, inv_step, mode, fill};\n"
      "  if (qchunk) qp = h5fz_quant_params_make(mode, qchunk[chunk_ix], fill);\n"
      "  uint64_t k_lo, k_hi, T, c[H5FZ_LND_NCOST];\n"
      "  h5fz_lnd_sample(lnd.n, part, H5FZ_LND_COST_PARTS, &k_lo, &k_hi, &T);\n"
      "  h5fz_lnd_cost_lanes_%s(&blk, in + (unsigned long long)chunk_ix * lnd.n, (const word_t *)0, lnd, &qp, k_lo, "
      "k_hi, T, hist, c);\n"
      "  if (threadIdx.x == 0)\n"
      "    for (uint32_t d = 0; d < H5FZ_LND_NCOST; d++) costs[H5FZ_LND_NCOST * blockIdx.x + d] = c[d];\n}\n",
      w);
  h5fz_emit(b, "\n/* lorenzo_nd, decode after h5fz_decode: the carry of each sub-chunk's first x segment, a segmented\n"
          " * scan by one block of LND_CARRY_THREADS a chunk */\n"
          "#define LND_CARRY_THREADS 1024u\n"
          "extern \"C\" __global__ void __launch_bounds__(LND_CARRY_THREADS)\n"
          "h5fz_lnd_carry_kernel(unsigned long long *aux, uint32_t n_sub)\n{\n"
          "  __shared__ uint64_t sv[LND_CARRY_THREADS];\n"
          "  __shared__ uint32_t sf[LND_CARRY_THREADS];\n"
          "  const h5fz_blk blk = {threadIdx.x, blockDim.x, 0};\n"
          "  h5fz_lnd_carry_blk(&blk, aux + 2ull * n_sub * blockIdx.x, n_sub, sv, sf);\n}\n");
  h5fz_emit(b, "\n/* chunk chunk_ix's geometry with its own predictor; 0 when it has no pass z, or for the grid's\n"
          " * last threads, past the batch's n_chunks (they would read a predictor past the list) */\n"
          "static __device__ __forceinline__ int lnd_chunk_axis(h5fz_lnd_geom lnd, const uint32_t *lnd_pred, "
          "uint32_t chunk_ix, uint32_t z,\n"
          "                                                     uint32_t n_chunks, h5fz_lnd_geom *lg, h5fz_lnd_axis *a)\n{\n"
          "  if (chunk_ix >= n_chunks) return 0;\n"
          "  *lg = lnd;\n"
          "  if (lnd_pred) lg->dim = lnd_pred[chunk_ix];\n"
          "  return h5fz_lnd_axis_make(lg, z, a);\n}\n");
  h5fz_emit(
      b,
      "\n/* ... added to the elements of that segment: one block per sub-chunk; a chunk with no y or z pass\n"
      " * (the 1-D predictor) has every word become its value in the same pass */\n"
      "extern \"C\" __global__ void __launch_bounds__(DEC_THREADS)\n"
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
      "  /* (its grid is the batch's sub-chunks: gridDim.x / n_sub chunks) */\n"
      "  int dequant = !lnd_chunk_axis(lnd, lnd_pred, chunk_ix, 0u, gridDim.x / n_sub, &lg, &a) && !h5fz_lnd_axis_make(&lg, 1u, &a);\n"
      "  if (lg.dim == H5FZ_LNI_PREDICTOR) return; /* interpolation: h5fz_lni_*_kernel */\n"
      "  word_t *const w = words + (unsigned long long)chunk_ix * lnd.n + first;\n"
      "  if (dequant)\n"
      "    h5fz_lnd_xfix_dequant_%s(&blk, w, m, first, lg, aux[2u * blockIdx.x], &qp);\n"
      "  else\n"
      "    h5fz_lnd_xfix_%s(&blk, w, m, first, lg, aux[2u * blockIdx.x]);\n}\n",
      w, w);
}

/* lorenzo_nd's y and z passes (h5fz_lnd_axis), after h5fz_lnd_xfix_kernel. */
static void emit_lnd_axis_kernels(h5fz_strbuf *b, const char *w)
{
  h5fz_emit(b,
       "\n/* ... then along y (z = 0) and z (z = 1), h5fz_lnd_axis, per_chunk threads a chunk: the sum of each\n"
       " * segment of a line, a thread each (part: part_stride words a chunk) */\n"
       "extern \"C\" __global__ void h5fz_lnd_asum_kernel(const word_t *words, h5fz_lnd_geom lnd, const uint32_t "
       "*lnd_pred, uint32_t z,\n"
       "                                                 unsigned long long per_chunk, word_t *part, unsigned long "
       "long part_stride, uint32_t n_chunks)\n{\n"
       "  const unsigned long long tg = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
       "  const uint32_t chunk_ix = (uint32_t)(tg / per_chunk);\n"
       "  const unsigned long long t = tg %% per_chunk;\n"
       "  h5fz_lnd_geom lg;\n"
       "  h5fz_lnd_axis a;\n"
       "  if (!lnd_chunk_axis(lnd, lnd_pred, chunk_ix, z, n_chunks, &lg, &a) || a.nseg <= 1u || t >= "
       "h5fz_lnd_axis_segments(&a)) return;\n"
       "  h5fz_lnd_asum_%s(words + (unsigned long long)chunk_ix * lnd.n, a, t, part + chunk_ix * part_stride);\n}\n",
       w);
  h5fz_emit(b,
       "\n/* ... then each segment's prefix sums from its offset (the sums before it on its line), a thread\n"
       " * each; a chunk's last pass leaves the values (outliers are patched from the side section on the host) */\n"
       "extern \"C\" __global__ void h5fz_lnd_ascan_kernel(word_t *words, h5fz_lnd_geom lnd, const uint32_t "
       "*lnd_pred, uint32_t z,\n"
       "                                                  unsigned long long per_chunk, const word_t *part,\n"
       "                                                  unsigned long long part_stride, double eb, double step,\n"
       "                                                  double inv_step, int mode, unsigned long long fill,\n"
       "                                                  const double *qchunk, uint32_t n_chunks)\n{\n"
       "  const unsigned long long tg = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
       "  const uint32_t chunk_ix = (uint32_t)(tg / per_chunk);\n"
       "  const unsigned long long t = tg %% per_chunk;\n"
       "  h5fz_lnd_geom lg;\n"
       "  h5fz_lnd_axis a, later;\n"
       "  if (!lnd_chunk_axis(lnd, lnd_pred, chunk_ix, z, n_chunks, &lg, &a) || t >= h5fz_lnd_axis_segments(&a)) return;\n"
       "  h5fz_quant_params qp = {eb, step, inv_step, mode, fill};\n"
       "  if (qchunk) qp = h5fz_quant_params_make(mode, qchunk[chunk_ix], fill);\n"
       "  const int last = z == 1u || !h5fz_lnd_axis_make(&lg, 1u, &later);\n"
       "  h5fz_lnd_ascan_%s(words + (unsigned long long)chunk_ix * lnd.n, a, t,\n"
       "                   a.nseg > 1u ? part + chunk_ix * part_stride : (const word_t *)0,\n"
       "                   last ? &qp : (const h5fz_quant_params *)0);\n}\n",
       w);
}

/* lorenzo_interp's interpolation decode (predictor 4, op_lnd_interp.h),
 * after h5fz_lnd_xfix_kernel left those chunks alone: a kernel a pass (the
 * points of one pass read only words of earlier ones), a thread a lattice
 * point, then the quantizer decode of those chunks in place. Chunks with
 * another predictor return at once. */
static void emit_lni_kernels(h5fz_strbuf *b, const char *w)
{
  h5fz_emit(b,
       "\n/* lorenzo_interp: pass l of the interpolation decode (its lattice from the host), blocks_per_chunk blocks\n"
       " * of 256 threads a chunk, a thread a lattice point (32-bit arithmetic only) */\n"
       "extern \"C\" __global__ void __launch_bounds__(256) h5fz_lni_pass_kernel(word_t *words, h5fz_lnd_geom lnd,\n"
       "    const uint32_t *lnd_pred, h5fz_lni_lattice l, uint32_t per_chunk, uint32_t blocks_per_chunk)\n{\n"
       "  const uint32_t chunk_ix = blockIdx.x / blocks_per_chunk;\n"
       "  const uint32_t t = (blockIdx.x - chunk_ix * blocks_per_chunk) * 256u + threadIdx.x;\n"
       "  if (t >= per_chunk || (lnd_pred ? lnd_pred[chunk_ix] : lnd.dim) != H5FZ_LNI_PREDICTOR) return;\n"
       "  h5fz_lni_point_%s(words + (unsigned long long)chunk_ix * lnd.n, &lnd, &l, t);\n}\n",
       w);
  h5fz_emit(b,
       "\n/* ... and after the last pass each word of those chunks becomes its value (outliers are patched from\n"
       " * the side section on the host), blocks_per_chunk blocks of 256 threads a chunk */\n"
       "extern \"C\" __global__ void __launch_bounds__(256) h5fz_lni_dequant_kernel(word_t *words, h5fz_lnd_geom lnd,\n"
       "    const uint32_t *lnd_pred, uint32_t blocks_per_chunk, double eb, double step, double inv_step, int mode,\n"
       "    unsigned long long fill, const double *qchunk)\n{\n"
       "  const uint32_t chunk_ix = blockIdx.x / blocks_per_chunk;\n"
       "  const uint32_t i = (blockIdx.x - chunk_ix * blocks_per_chunk) * 256u + threadIdx.x;\n"
       "  if (i >= lnd.n || (lnd_pred ? lnd_pred[chunk_ix] : lnd.dim) != H5FZ_LNI_PREDICTOR) return;\n"
       "  h5fz_quant_params qp = {eb, step, inv_step, mode, fill};\n"
       "  if (qchunk) qp = h5fz_quant_params_make(mode, qchunk[chunk_ix], fill);\n"
       "  word_t *const cw = words + (unsigned long long)chunk_ix * lnd.n;\n"
       "  ((value_t *)cw)[i] = h5fz_quant_value_%s(cw[i], &qp);\n}\n",
       w);
}

void h5fz_codegen_emit_lnd(h5fz_strbuf *b, const char *w, int interp)
{
  emit_lnd_kernels(b, w);
  emit_lnd_axis_kernels(b, w);
  if (interp) emit_lni_kernels(b, w);
}
