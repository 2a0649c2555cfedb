/*
 * h5fz_gpu_launch.c - the kernel launches of a chain: the fused encode (the
 * warp-fused kernels for full sub-chunks where the module has them, the
 * generic ones beside them), the tail (reduce, scan, pack, outlier gather),
 * the fused decode, and lorenzo_nd's chunk-wide steps.
 */
#include "h5fz_gpu_context.h"
#include "h5fz_gpu_launch.h"

/* H5FZ_GPU_WARP_FUSED=0 keeps the warp-fused kernels out (A/B runs; the
 * bytes are the same either way). */
static int warp_fused_allowed(void) { return g_gpu.settings.gpu_warp_fused; }

static int launch_on(CUstream on, CUfunction f, unsigned grid, unsigned block, unsigned smem, void **args,
                     const char *what)
{
  CUresult r = g_gpu.cu->cuLaunchKernel(f, grid, 1, 1, block, 1, 1, smem, on, args, NULL);
  return r ? h5fz_gpu_cuda_fail(r, what) : H5FZ_OK;
}

int h5fz_gpu_launch(CUfunction f, unsigned grid, unsigned block, unsigned smem, void **args, const char *what)
{
  return launch_on(g_gpu.stream, f, grid, block, smem, args, what);
}

int h5fz_gpu_sync_stream(const char *what)
{
  CUresult r = g_gpu.cu->cuStreamSynchronize(g_gpu.stream);
  return r ? h5fz_gpu_cuda_fail(r, what) : H5FZ_OK;
}

/* 1 when chunks of this chain and quantizer mode go through the warp-fused
 * kernel fn (present only for the chains it serves; linear modes only). */
static uint32_t use_warp_fused(CUfunction fn, int mode)
{
  return fn && (mode == H5FZ_QMODE_ABS || mode == H5FZ_QMODE_REL) && warp_fused_allowed() ? 1u : 0u;
}

/* The fused encode, the tail scan and the tail pack, on g_gpu.in (device). */
int h5fz_gpu_launch_encode(const chain_entry *c, const h5fz_chunk_plan *p, uint32_t n_chunks, CUdeviceptr qchunk)
{
  int rc;
  uint32_t n_sub = p->n_subchunks, grid = n_sub * n_chunks, slot = p->subchunk_elems * p->esize;
  unsigned long long n_ull = p->n_elements;
  double eb = p->quant.eb, step = p->quant.step, inv = p->quant.inv_step;
  int mode = p->quant.mode;
  unsigned long long fill = p->quant.fill_bits;
  unsigned row = p->row;
  /* lorenzo_nd: each chunk's encode picks its predictor from the cost
   * pass over that chunk (H5FZ_LND_COST_PARTS blocks a chunk, the sums in
   * g_gpu.lnd, 3 words a block) */
  h5fz_lnd_geom lnd = p->lnd;
  void *cost_args[] = {&g_gpu.in.ptr, &lnd, &eb, &step, &inv, &mode, &fill, &qchunk, &g_gpu.lnd.ptr};
  if (h5fz_plan_has_lnd(p) && (rc = h5fz_gpu_launch(c->mod.lnd_cost, H5FZ_LND_COST_PARTS * n_chunks,
                                                    (unsigned)c->threads, 0, cost_args, "lorenzo_nd cost kernel")))
    return rc;
  /* the warp-fused kernel takes the full sub-chunks; the generic one the
   * rest (each chunk's partial last one: tail_only), on the side stream
   * at the same time. lorenzo_nd: the warp-fused kernel serves the 1-D
   * predictor only, which the cost pass picks on the device, so both run
   * over every sub-chunk and each block returns at once where the other
   * kernel's (tail_only 2) */
  int lnd_chain = h5fz_plan_has_lnd(p);
  uint32_t tail_only = use_warp_fused(c->mod.encode_wf, mode);
  int beside = tail_only && (lnd_chain || n_ull % p->subchunk_elems);
  unsigned generic_grid = lnd_chain ? grid : n_chunks;
  if (tail_only && lnd_chain) tail_only = 2u;
  void *wf_args[] = {&g_gpu.in.ptr,
                     &n_ull,
                     &eb,
                     &step,
                     &inv,
                     &mode,
                     &fill,
                     &n_sub,
                     &qchunk,
                     &g_gpu.slots.ptr,
                     &g_gpu.entries.ptr,
                     &g_gpu.opos.ptr,
                     &g_gpu.oval.ptr,
                     &g_gpu.ocount.ptr,
                     &lnd,
                     &g_gpu.lnd.ptr};
  void *enc_args[] = {&g_gpu.in.ptr,
                      &n_ull,
                      &eb,
                      &step,
                      &inv,
                      &mode,
                      &fill,
                      &row,
                      &n_sub,
                      &qchunk,
                      &g_gpu.slots.ptr,
                      &g_gpu.entries.ptr,
                      &g_gpu.opos.ptr,
                      &g_gpu.oval.ptr,
                      &g_gpu.ocount.ptr,
                      &lnd,
                      &g_gpu.lnd.ptr,
                      &tail_only};
  if (beside) {
    TRY_CU(g_gpu.cu->cuEventRecord(g_gpu.fork, g_gpu.stream), "cuEventRecord");
    TRY_CU(g_gpu.cu->cuStreamWaitEvent(g_gpu.side, g_gpu.fork, 0), "cuStreamWaitEvent");
    TRY(launch_on(g_gpu.side, c->mod.encode, generic_grid, (unsigned)c->threads, (unsigned)c->smem, enc_args,
                  "encode kernel (partial sub-chunks)"));
    TRY_CU(g_gpu.cu->cuEventRecord(g_gpu.join, g_gpu.side), "cuEventRecord");
  }
  if (tail_only) {
    TRY(h5fz_gpu_launch(c->mod.encode_wf, grid, 32u * (unsigned)c->wf_warps, 0, wf_args, "warp-fused encode kernel"));
    g_gpu.stats.warp_fused_encodes++;
  } else {
    TRY(h5fz_gpu_launch(c->mod.encode, grid, (unsigned)c->threads, (unsigned)c->smem, enc_args, "encode kernel"));
  }
  if (beside) TRY_CU(g_gpu.cu->cuStreamWaitEvent(g_gpu.stream, g_gpu.join, 0), "cuStreamWaitEvent");
  /* sizes and outlier counts scanned in parts of TAIL_PARTS sub-chunks, a block each */
  unsigned parts = (grid + TAIL_PARTS - 1u) / TAIL_PARTS;
  void *reduce_args[] = {&g_gpu.entries.ptr, &g_gpu.ocount.ptr, &grid, &g_gpu.totals.ptr};
  void *scan_args[] = {&g_gpu.entries.ptr, &g_gpu.ocount.ptr,   &grid,
                       &g_gpu.offsets.ptr, &g_gpu.ooffsets.ptr, &g_gpu.totals.ptr};
  TRY(h5fz_gpu_launch(c->mod.tail_reduce, parts, TAIL_PARTS, 0, reduce_args, "tail reduce kernel"));
  TRY(h5fz_gpu_launch(c->mod.tail_scan, parts, TAIL_PARTS, 0, scan_args, "tail scan kernel"));
  void *pack_args[] = {&g_gpu.slots.ptr, &slot, &g_gpu.entries.ptr, &g_gpu.offsets.ptr, &grid, &g_gpu.packed.ptr};
  TRY(h5fz_gpu_launch(c->mod.tail_pack, (grid + TAIL_PACK_THREADS / 32u - 1u) / (TAIL_PACK_THREADS / 32u),
                      TAIL_PACK_THREADS, 0, pack_args, "tail pack kernel"));
  /* a thread per outlier, as many as fit on the GPU at once (grid stride) */
  uint32_t sub_elems = p->subchunk_elems, esize = p->esize;
  unsigned gather_blocks = (unsigned)(g_gpu.dev.sm_count > 0 ? g_gpu.dev.sm_count : 1) * TAIL_GATHER_BLOCKS_PER_SM;
  void *gather_args[] = {&g_gpu.ooffsets.ptr,
                         &grid,
                         &g_gpu.totals.ptr,
                         &g_gpu.opos.ptr,
                         &g_gpu.oval.ptr,
                         &sub_elems,
                         &n_sub,
                         &n_ull,
                         &esize,
                         &g_gpu.gpos.ptr,
                         &g_gpu.gval.ptr};
  TRY(h5fz_gpu_launch(c->mod.tail_gather, gather_blocks, TAIL_GATHER_THREADS, 0, gather_args, "tail gather kernel"));
out:
  return rc;
}

/* Layout of g_gpu.lnd for a decode of n_chunks chunks: 2 words of carry
 * information a sub-chunk, then a predictor word a chunk (rounded up to 8
 * bytes), then part_stride segment sums a chunk. */
static size_t lnd_pred_offset(const h5fz_chunk_plan *p, uint32_t n_chunks)
{
  return (size_t)p->n_subchunks * n_chunks * 16u;
}

static size_t lnd_part_offset(const h5fz_chunk_plan *p, uint32_t n_chunks)
{
  return lnd_pred_offset(p, n_chunks) + ((size_t)n_chunks * 4u + 7u) / 8u * 8u;
}

/* Segment sums a chunk of p needs, whichever its predictor. */
static uint64_t lnd_part_stride(const h5fz_chunk_plan *p)
{
  uint64_t most = 0;
  for (uint32_t d = 1; d <= 3u; d++) {
    h5fz_lnd_geom g = p->lnd;
    g.dim = d;
    uint64_t w = h5fz_lnd_part_words(&g);
    if (w > most) most = w;
  }
  return most;
}

size_t h5fz_gpu_lnd_bytes(const h5fz_chunk_plan *p, uint32_t n_chunks)
{
  size_t costs = (size_t)n_chunks * 24u * H5FZ_LND_COST_PARTS;
  size_t dec = lnd_part_offset(p, n_chunks) + (size_t)lnd_part_stride(p) * n_chunks * p->esize;
  return costs > dec ? costs : dec;
}

/* lorenzo_nd, after the fused decode left each sub-chunk's x prefix sums in
 * out as words and its carry information in g_gpu.lnd: the carry along x
 * (one block a chunk), the fix of the x segments begun in an earlier
 * sub-chunk, then the y and z passes in segments (h5fz_lnd_axis: segment
 * sums, their scan along each line, the segments' prefix sums); the
 * quantizer decode runs in each chunk's last pass. pred: the predictors
 * on the device (0: p->lnd.dim), pred_host the same on the host (NULL). */
static int launch_lnd_finish(const chain_entry *c, const h5fz_chunk_plan *p, uint32_t n_chunks, CUdeviceptr qchunk,
                             CUdeviceptr out, CUdeviceptr pred, const uint32_t *pred_host)
{
  int rc;
  h5fz_lnd_geom g = p->lnd;
  uint32_t n_sub = p->n_subchunks;
  double eb = p->quant.eb, step = p->quant.step, inv = p->quant.inv_step;
  int mode = p->quant.mode;
  unsigned long long fill = p->quant.fill_bits;
  unsigned threads = (unsigned)c->threads;
  /* the predictors in the batch, and for each pass the most segments and lines a chunk has with one of them */
  int used[4] = {0, 0, 0, 0};
  for (uint32_t j = 0; j < (pred_host ? n_chunks : 1u); j++) used[pred_host ? pred_host[j] & 3u : g.dim & 3u] = 1;
  unsigned long long segs[2] = {0, 0}, lines[2] = {0, 0}, part_stride = lnd_part_stride(p);
  int split[2] = {0, 0};
  for (uint32_t d = 1; d <= 3u; d++) {
    if (!used[d]) continue;
    h5fz_lnd_geom gd = g;
    gd.dim = d;
    for (uint32_t z = 0; z < 2u; z++) {
      h5fz_lnd_axis a;
      if (!h5fz_lnd_axis_make(&gd, z, &a)) continue;
      if (h5fz_lnd_axis_segments(&a) > segs[z]) segs[z] = h5fz_lnd_axis_segments(&a);
      if (h5fz_lnd_axis_lines(&a) > lines[z]) lines[z] = h5fz_lnd_axis_lines(&a);
      if (a.nseg > 1u) split[z] = 1;
    }
  }
  CUdeviceptr part = g_gpu.lnd.ptr + lnd_part_offset(p, n_chunks);
  void *carry_args[] = {&g_gpu.lnd.ptr, &n_sub};
  void *fix_args[] = {&out, &g, &pred, &g_gpu.lnd.ptr, &eb, &step, &inv, &mode, &fill, &qchunk};
  if ((rc = h5fz_gpu_launch(c->mod.lnd_carry, n_chunks, 1024, 0, carry_args, "lorenzo_nd carry kernel")) ||
      (rc = h5fz_gpu_launch(c->mod.lnd_xfix, n_sub * n_chunks, threads, 0, fix_args, "lorenzo_nd x kernel")))
    return rc;
  for (uint32_t z = 0; z < 2u; z++) {
    if (!segs[z]) continue;
    unsigned seg_blocks = (unsigned)((segs[z] * n_chunks + 255u) / 256u);
    unsigned line_blocks = (unsigned)((lines[z] * n_chunks + 255u) / 256u);
    void *sum_args[] = {&out, &g, &pred, &z, &segs[z], &part, &part_stride};
    void *part_args[] = {&part, &g, &pred, &z, &lines[z], &part_stride};
    void *scan_args[] = {&out, &g, &pred, &z, &segs[z], &part, &part_stride, &eb, &step, &inv, &mode, &fill, &qchunk};
    if (split[z] &&
        ((rc = h5fz_gpu_launch(c->mod.lnd_asum, seg_blocks, 256, 0, sum_args, "lorenzo_nd segment sum kernel")) ||
         (rc = h5fz_gpu_launch(c->mod.lnd_apart, line_blocks, 256, 0, part_args, "lorenzo_nd segment offset kernel"))))
      return rc;
    if ((rc = h5fz_gpu_launch(c->mod.lnd_ascan, seg_blocks, 256, 0, scan_args, "lorenzo_nd segment scan kernel")))
      return rc;
  }
  return H5FZ_OK;
}

int h5fz_gpu_launch_decode(const chain_entry *c, const h5fz_chunk_plan *p, uint32_t n_chunks, CUdeviceptr qchunk,
                           CUdeviceptr out, const uint32_t *lnd_pred)
{
  int lnd_chain = h5fz_plan_has_lnd(p);
  CUdeviceptr pred = 0; /* lorenzo_nd: each chunk's predictor on the device, 0 for p->lnd.dim */
  if (lnd_chain && lnd_pred) {
    pred = g_gpu.lnd.ptr + lnd_pred_offset(p, n_chunks);
    CUresult r = g_gpu.cu->cuMemcpyHtoDAsync(pred, lnd_pred, (size_t)n_chunks * 4u, g_gpu.stream);
    if (r) return h5fz_gpu_cuda_fail(r, "copy the lorenzo_nd predictors to the GPU");
  }
  unsigned long long n_ull = p->n_elements;
  double eb = p->quant.eb, step = p->quant.step, inv = p->quant.inv_step;
  int mode = p->quant.mode;
  unsigned long long fill = p->quant.fill_bits;
  unsigned row = p->row;
  uint32_t n_sub = p->n_subchunks;
  h5fz_lnd_geom lnd = p->lnd;
  int rc = H5FZ_OK;
  /* lorenzo_nd: the warp-fused kernel serves the chunks with the 1-D
   * predictor (their header's), leaving words and carry information as
   * h5fz_decode does; the generic kernel then runs over every sub-chunk,
   * its blocks returning at once where the other kernel's (tail_only 2) */
  uint32_t grid = n_sub * n_chunks, any_1d = !lnd_chain || lnd.dim == 1u;
  for (uint32_t j = 0; lnd_chain && lnd_pred && j < n_chunks && !any_1d; j++) any_1d = lnd_pred[j] == 1u;
  uint32_t tail_only = use_warp_fused(c->mod.decode_wf, mode) && any_1d;
  int all_1d_full = lnd_chain && tail_only && n_ull % p->subchunk_elems == 0;
  for (uint32_t j = 0; all_1d_full && lnd_pred && j < n_chunks; j++) all_1d_full = lnd_pred[j] == 1u;
  void *wf_args[] = {&g_gpu.packed.ptr,
                     &g_gpu.offsets.ptr,
                     &g_gpu.entries.ptr,
                     &n_ull,
                     &eb,
                     &step,
                     &inv,
                     &mode,
                     &fill,
                     &n_sub,
                     &qchunk,
                     &out,
                     &g_gpu.status.ptr,
                     &lnd,
                     &g_gpu.lnd.ptr,
                     &pred};
  if (tail_only) {
    if ((rc = h5fz_gpu_launch(c->mod.decode_wf, grid, 32u * (unsigned)c->wf_warps, 0, wf_args,
                              "warp-fused decode kernel")))
      return rc;
    g_gpu.stats.warp_fused_decodes++;
    if (!lnd_chain && n_ull % p->subchunk_elems == 0) return H5FZ_OK;
    if (all_1d_full) return launch_lnd_finish(c, p, n_chunks, qchunk, out, pred, lnd_pred);
    if (lnd_chain) tail_only = 2u;
  }
  void *args[] = {&g_gpu.packed.ptr,
                  &g_gpu.offsets.ptr,
                  &g_gpu.entries.ptr,
                  &n_ull,
                  &eb,
                  &step,
                  &inv,
                  &mode,
                  &fill,
                  &row,
                  &n_sub,
                  &qchunk,
                  &out,
                  &g_gpu.status.ptr,
                  &lnd,
                  &g_gpu.lnd.ptr,
                  &pred,
                  &tail_only};
  rc = h5fz_gpu_launch(c->mod.decode, tail_only == 1u ? n_chunks : grid, (unsigned)c->threads, (unsigned)c->smem, args,
                       "decode kernel");
  return rc || !lnd_chain ? rc : launch_lnd_finish(c, p, n_chunks, qchunk, out, pred, lnd_pred);
}
