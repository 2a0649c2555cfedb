/*
 * h5fz_gpu_launch.c - the kernel launches of a chain: the fused encode (the
 * warp-fused kernels for full sub-chunks where the module has them, the
 * generic ones beside them), the tail (reduce, scan, pack, outlier gather),
 * the fused decode, and lorenzo_nd's chunk-wide steps.
 */
#include "h5fz_gpu_context.h"
#include "h5fz_gpu_launch.h"
#include "h5fz_ops.h"

/* H5FZ_GPU_WARP_FUSED=0 keeps the warp-fused kernels out (A/B runs; the
 * bytes are the same either way). */
static int warp_fused_allowed(const h5fz_gpu_context *gc) { return gc->settings.gpu_warp_fused; }

static int launch_on(h5fz_gpu_context *gc, CUstream on, CUfunction f, unsigned grid, unsigned block, unsigned smem,
                     void **args, const char *what)
{
  CUresult r = gc->cu->cuLaunchKernel(f, grid, 1, 1, block, 1, 1, smem, on, args, NULL);
  return r ? h5fz_gpu_cuda_fail(r, what) : H5FZ_OK;
}

int h5fz_gpu_launch(h5fz_gpu_context *gc, CUfunction f, unsigned grid, unsigned block, unsigned smem, void **args,
                    const char *what)
{
  return launch_on(gc, gc->stream, f, grid, block, smem, args, what);
}

int h5fz_gpu_sync_stream(h5fz_gpu_context *gc, const char *what)
{
  CUresult r = gc->cu->cuStreamSynchronize(gc->stream);
  return r ? h5fz_gpu_cuda_fail(r, what) : H5FZ_OK;
}

/* 1 when chunks of this chain and quantizer mode go through the warp-fused
 * kernel fn (present only for the chains it serves; linear modes only). */
static uint32_t use_warp_fused(const h5fz_gpu_context *gc, CUfunction fn, int mode)
{
  return fn && H5FZ_QMODE_FAST(mode) && warp_fused_allowed(gc) ? 1u : 0u;
}

/* What the fused kernels take from the plan, held here so that the
 * launches can pass their addresses. */
typedef struct {
  unsigned long long n; /* values per chunk */
  double eb, step, inv;
  int mode;
  unsigned long long fill;
  unsigned row;
  uint32_t n_sub;
  h5fz_lnd_geom lnd;
} kernel_params;

static kernel_params params_of(const h5fz_chunk_plan *p)
{
  kernel_params k = {p->n_elements, p->quant.eb,    p->quant.step, p->quant.inv_step, p->quant.mode, p->quant.fill_bits,
                     p->row,        p->n_subchunks, p->lnd};
  return k;
}

/* The quantizer's arguments, in the order every kernel that quantizes
 * takes them (the generated kernels' signatures, h5fz_codegen.c). */
#define QUANT_ARGS(k) &(k).eb, &(k).step, &(k).inv, &(k).mode, &(k).fill
/* An encode's outputs per sub-chunk, the warp-fused and generic kernels alike. */
#define ENCODE_OUT_ARGS(gc) &(gc)->slots.ptr, &(gc)->entries.ptr, &(gc)->opos.ptr, &(gc)->oval.ptr, &(gc)->ocount.ptr
/* A decode's packed input: payload, offsets and sizes of the sub-chunks. */
#define DECODE_IN_ARGS(gc) &(gc)->packed.ptr, &(gc)->offsets.ptr, &(gc)->entries.ptr

/* The tail after the fused encode of grid sub-chunks: sizes and outlier
 * counts reduced and scanned in parts of TAIL_PARTS sub-chunks (a block
 * each), the payload packed, the outliers gathered. */
static int launch_tail(h5fz_gpu_context *gc, const chain_entry *c, const h5fz_chunk_plan *p, kernel_params *k,
                       uint32_t grid)
{
  int rc;
  uint32_t slot = p->subchunk_elems * p->esize, sub_elems = p->subchunk_elems, esize = p->esize;
  unsigned parts = (grid + TAIL_PARTS - 1u) / TAIL_PARTS;
  void *reduce_args[] = {&gc->entries.ptr, &gc->ocount.ptr, &grid, &gc->totals.ptr};
  void *scan_args[] = {&gc->entries.ptr, &gc->ocount.ptr, &grid, &gc->offsets.ptr, &gc->ooffsets.ptr, &gc->totals.ptr};
  TRY(h5fz_gpu_launch(gc, c->mod.tail_reduce, parts, TAIL_PARTS, 0, reduce_args, "tail reduce kernel"));
  TRY(h5fz_gpu_launch(gc, c->mod.tail_scan, parts, TAIL_PARTS, 0, scan_args, "tail scan kernel"));
  void *pack_args[] = {&gc->slots.ptr, &slot, &gc->entries.ptr, &gc->offsets.ptr, &grid, &gc->packed.ptr};
  TRY(h5fz_gpu_launch(gc, c->mod.tail_pack, (grid + TAIL_PACK_THREADS / 32u - 1u) / (TAIL_PACK_THREADS / 32u),
                      TAIL_PACK_THREADS, 0, pack_args, "tail pack kernel"));
  /* a thread per outlier, as many as fit on the GPU at once (grid stride) */
  unsigned gather_blocks = (unsigned)(gc->dev.sm_count > 0 ? gc->dev.sm_count : 1) * TAIL_GATHER_BLOCKS_PER_SM;
  void *gather_args[] = {&gc->ooffsets.ptr, &grid, &gc->totals.ptr, &gc->opos.ptr, &gc->oval.ptr, &sub_elems,
                         &k->n_sub,         &k->n, &esize,          &gc->gpos.ptr, &gc->gval.ptr};
  TRY(h5fz_gpu_launch(gc, c->mod.tail_gather, gather_blocks, TAIL_GATHER_THREADS, 0, gather_args,
                      "tail gather kernel"));
out:
  return rc;
}

/* The fused encode, the tail scan and the tail pack, on gc->in (device). */
int h5fz_gpu_launch_encode(h5fz_gpu_context *gc, const chain_entry *c, const h5fz_chunk_plan *p, uint32_t n_chunks,
                           CUdeviceptr qchunk)
{
  int rc;
  kernel_params k = params_of(p);
  uint32_t grid = k.n_sub * n_chunks;
  /* lorenzo_nd: each chunk's encode picks its predictor from the cost
   * pass over that chunk (H5FZ_LND_COST_PARTS blocks of H5FZ_LND_COST_THREADS a chunk, the sums in
   * gc->lnd, 3 words a block), where the chunks offer a choice */
  void *cost_args[] = {&gc->in.ptr, &k.lnd, QUANT_ARGS(k), &qchunk, &gc->lnd.ptr};
  if (h5fz_plan_has_lnd(p) && h5fz_lnd_has_choice(p->lnd) &&
      (rc = h5fz_gpu_launch(gc, c->mod.lnd_cost, H5FZ_LND_COST_PARTS * n_chunks, H5FZ_LND_COST_THREADS, 0, cost_args,
                            "lorenzo_nd cost kernel")))
    return rc;
  /* the warp-fused kernel takes the full sub-chunks; the generic one the
   * rest (each chunk's partial last one: tail_only), on the side stream
   * at the same time. lorenzo_nd: the warp-fused kernel serves the 1-D
   * predictor only; where the chunks allow others, the cost pass picks one
   * on the device, so both kernels run over every sub-chunk and each block
   * returns at once where the other kernel's (tail_only 2) */
  uint32_t tail_only = use_warp_fused(gc, c->mod.encode_wf, k.mode);
  if (tail_only && h5fz_plan_has_lnd(p) && k.lnd.dim > 1u) tail_only = 2u;
  int beside = tail_only == 2u || (tail_only && k.n % p->subchunk_elems);
  unsigned generic_grid = tail_only == 2u ? grid : n_chunks;
  /* (the default chain's warp-fused kernel takes no lorenzo_nd arguments: the last two are ignored) */
  void *wf_args[] = {&gc->in.ptr, &k.n, QUANT_ARGS(k), &k.n_sub, &qchunk, ENCODE_OUT_ARGS(gc), &k.lnd, &gc->lnd.ptr};
  void *enc_args[] = {&gc->in.ptr,         &k.n,   QUANT_ARGS(k), &k.row,    &k.n_sub, &qchunk,
                      ENCODE_OUT_ARGS(gc), &k.lnd, &gc->lnd.ptr,  &tail_only};
  if (beside) {
    TRY_CU(gc->cu->cuEventRecord(gc->fork, gc->stream), "cuEventRecord");
    TRY_CU(gc->cu->cuStreamWaitEvent(gc->side, gc->fork, 0), "cuStreamWaitEvent");
    TRY(launch_on(gc, gc->side, c->mod.encode, generic_grid, (unsigned)c->threads, (unsigned)c->smem_encode, enc_args,
                  "encode kernel (partial sub-chunks)"));
    TRY_CU(gc->cu->cuEventRecord(gc->join, gc->side), "cuEventRecord");
  }
  if (tail_only) {
    TRY(h5fz_gpu_launch(gc, c->mod.encode_wf, grid, 32u * (unsigned)c->wf_warps, 0, wf_args,
                        "warp-fused encode kernel"));
    gc->stats.warp_fused_encodes++;
  } else {
    TRY(h5fz_gpu_launch(gc, c->mod.encode, grid, (unsigned)c->threads, (unsigned)c->smem_encode, enc_args, "encode kernel"));
  }
  if (beside) TRY_CU(gc->cu->cuStreamWaitEvent(gc->stream, gc->join, 0), "cuStreamWaitEvent");
  rc = launch_tail(gc, c, p, &k, grid);
out:
  return rc;
}

/* Layout of gc->lnd for a decode of n_chunks chunks: 2 words of carry
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
  size_t costs = (size_t)n_chunks * 8u * H5FZ_LND_NCOST * H5FZ_LND_COST_PARTS;
  size_t dec = lnd_part_offset(p, n_chunks) + (size_t)lnd_part_stride(p) * n_chunks * p->esize;
  return costs > dec ? costs : dec;
}

/* lorenzo_interp's interpolation (predictor 4), on the chunks that have
 * it, after the other kernels left their residual words in out: its passes
 * in order, stride after stride and axis after axis (op_lnd_interp.h), a
 * kernel each, then the quantizer decode. */
static int launch_lni_finish(h5fz_gpu_context *gc, const chain_entry *c, kernel_params *k, uint32_t n_chunks,
                             CUdeviceptr qchunk, CUdeviceptr out, CUdeviceptr pred)
{
  int rc;
  if (!c->mod.lni_pass || !c->mod.lni_dequant)
    return h5fz_fail(H5FZ_ERR_CORRUPT, "chunk with the interpolation predictor in a chain without lorenzo_interp");
  h5fz_lnd_geom g = k->lnd;
  g.dim = H5FZ_LNI_PREDICTOR;
  for (uint32_t s = h5fz_lni_top_stride(&g); s >= 1u; s /= 2u)
    for (uint32_t a = 0; a < 3u; a++) {
      h5fz_lni_lattice l;
      uint32_t per_chunk = (uint32_t)h5fz_lni_lattice_make(&g, s, a, &l), bpc = (per_chunk + 255u) / 256u;
      if (!per_chunk) continue;
      void *args[] = {&out, &k->lnd, &pred, &l, &per_chunk, &bpc};
      if ((rc = h5fz_gpu_launch(gc, c->mod.lni_pass, bpc * n_chunks, 256, 0, args, "lorenzo_interp pass kernel")))
        return rc;
    }
  uint32_t bpc = (g.n + 255u) / 256u;
  void *args[] = {&out, &k->lnd, &pred, &bpc, QUANT_ARGS(*k), &qchunk};
  return h5fz_gpu_launch(gc, c->mod.lni_dequant, bpc * n_chunks, 256, 0, args, "lorenzo_interp quantizer decode kernel");
}

/* lorenzo_nd, after the fused decode left each sub-chunk's x prefix sums in
 * out as words and its carry information in gc->lnd: the carry along x
 * (one block a chunk), the fix of the x segments begun in an earlier
 * sub-chunk, then the y and z passes in segments (h5fz_lnd_axis: segment
 * sums, then each segment's prefix sums from the sums before it); the
 * quantizer decode runs in each chunk's last pass. pred: the predictors
 * on the device (0: p->lnd.dim), pred_host the same on the host (NULL). */
static int launch_lnd_finish(h5fz_gpu_context *gc, const chain_entry *c, const h5fz_chunk_plan *p, kernel_params *k,
                             uint32_t n_chunks, CUdeviceptr qchunk, CUdeviceptr out, CUdeviceptr pred,
                             const uint32_t *pred_host)
{
  int rc;
  unsigned threads = (unsigned)c->dec_threads;
  /* the predictors in the batch (checked 1..4 by the header check), and for each pass the most segments a
   * chunk has with one of them */
  int used[5] = {0, 0, 0, 0, 0};
  for (uint32_t j = 0; j < (pred_host ? n_chunks : 1u); j++) used[(pred_host ? pred_host[j] : k->lnd.dim) % 5u] = 1;
  unsigned long long segs[2] = {0, 0}, part_stride = lnd_part_stride(p);
  int split[2] = {0, 0};
  for (uint32_t d = 1; d <= 3u; d++) {
    if (!used[d]) continue;
    h5fz_lnd_geom gd = k->lnd;
    gd.dim = d;
    for (uint32_t z = 0; z < 2u; z++) {
      h5fz_lnd_axis a;
      if (!h5fz_lnd_axis_make(&gd, z, &a)) continue;
      if (h5fz_lnd_axis_segments(&a) > segs[z]) segs[z] = h5fz_lnd_axis_segments(&a);
      if (a.nseg > 1u) split[z] = 1;
    }
  }
  CUdeviceptr part = gc->lnd.ptr + lnd_part_offset(p, n_chunks);
  void *carry_args[] = {&gc->lnd.ptr, &k->n_sub};
  void *fix_args[] = {&out, &k->lnd, &pred, &gc->lnd.ptr, QUANT_ARGS(*k), &qchunk};
  if ((rc = h5fz_gpu_launch(gc, c->mod.lnd_carry, n_chunks, 1024, 0, carry_args, "lorenzo_nd carry kernel")) ||
      (rc = h5fz_gpu_launch(gc, c->mod.lnd_xfix, k->n_sub * n_chunks, threads, 0, fix_args, "lorenzo_nd x kernel")))
    return rc;
  for (uint32_t z = 0; z < 2u; z++) {
    if (!segs[z]) continue;
    unsigned seg_blocks = (unsigned)((segs[z] * n_chunks + 255u) / 256u);
    void *sum_args[] = {&out, &k->lnd, &pred, &z, &segs[z], &part, &part_stride, &n_chunks};
    void *scan_args[] = {&out, &k->lnd, &pred, &z, &segs[z], &part, &part_stride, QUANT_ARGS(*k), &qchunk, &n_chunks};
    if (split[z] &&
        (rc = h5fz_gpu_launch(gc, c->mod.lnd_asum, seg_blocks, 256, 0, sum_args, "lorenzo_nd segment sum kernel")))
      return rc;
    if ((rc = h5fz_gpu_launch(gc, c->mod.lnd_ascan, seg_blocks, 256, 0, scan_args, "lorenzo_nd segment scan kernel")))
      return rc;
  }
  return used[H5FZ_LNI_PREDICTOR] ? launch_lni_finish(gc, c, k, n_chunks, qchunk, out, pred) : H5FZ_OK;
}

/* The huff group kernel's geometry for n_total sub-chunks
 * (fusion/gpu/h5fz_gpu_huff_groups.h): H5FZ_HUFF_SUBS_PER_BLOCK sub-chunks
 * a block, one thread a group, where the launch fills the GPU (the
 * realistic array: thousands of blocks, where more threads a group would
 * only add the parts' extra passes); where even the fewest sub-chunks a
 * block leave the blocks at most two an SM (512 threads of about 60
 * registers: two fit an SM's 64 K registers), the fewest of 1, 2, 4 that
 * do, and up to the kernel class's entropy_decode_parts threads a group
 * (docs/planner.md), which shorten the longest group's decode, the time
 * of such a launch (the filter's one chunk: 72 sub-chunks). */
static void huff_groups_geometry(const h5fz_gpu_context *gc, const chain_entry *c, uint32_t n_total, uint32_t *subs,
                                 uint32_t *parts)
{
  const uint32_t max_parts = c->plan.tuning.entropy_decode_parts > 1 ? (uint32_t)c->plan.tuning.entropy_decode_parts : 1u;
  const uint32_t resident = 2u * (uint32_t)(gc->dev.sm_count > 0 ? gc->dev.sm_count : 1);
  *subs = H5FZ_HUFF_SUBS_PER_BLOCK;
  *parts = 1u;
  for (uint32_t b = 1; max_parts > 1u && b < H5FZ_HUFF_SUBS_PER_BLOCK; b *= 2u)
    if ((n_total + b - 1u) / b <= resident) {
      *subs = b;
      *parts = max_parts;
      return;
    }
}

int h5fz_gpu_launch_decode(h5fz_gpu_context *gc, const chain_entry *c, const h5fz_chunk_plan *p, uint32_t n_chunks,
                           CUdeviceptr qchunk, CUdeviceptr out, const uint32_t *lnd_pred)
{
  int lnd_chain = h5fz_plan_has_lnd(p);
  CUdeviceptr pred = 0; /* lorenzo_nd: each chunk's predictor on the device, 0 for p->lnd.dim */
  if (lnd_chain && lnd_pred) {
    pred = gc->lnd.ptr + lnd_pred_offset(p, n_chunks);
    CUresult r = gc->cu->cuMemcpyHtoDAsync(pred, lnd_pred, (size_t)n_chunks * 4u, gc->stream);
    if (r) return h5fz_gpu_cuda_fail(r, "copy the lorenzo_nd predictors to the GPU");
  }
  kernel_params k = params_of(p);
  int rc = H5FZ_OK;
  /* lorenzo_nd: the warp-fused kernel serves the chunks with the 1-D
   * predictor (their header's), leaving words and carry information as
   * h5fz_decode does; the generic kernel then runs over every sub-chunk,
   * its blocks returning at once where the other kernel's (tail_only 2),
   * or, when every chunk is 1-D, over each chunk's partial one (1) */
  uint32_t grid = k.n_sub * n_chunks, any_1d = !lnd_chain || k.lnd.dim == 1u;
  for (uint32_t j = 0; lnd_chain && lnd_pred && j < n_chunks && !any_1d; j++) any_1d = lnd_pred[j] == 1u;
  uint32_t tail_only = use_warp_fused(gc, c->mod.decode_wf, k.mode) && any_1d;
  int all_1d = lnd_chain && tail_only && (lnd_pred || k.lnd.dim == 1u);
  for (uint32_t j = 0; all_1d && lnd_pred && j < n_chunks; j++) all_1d = lnd_pred[j] == 1u;
  /* (the default chain's warp-fused kernel takes no lorenzo_nd arguments: the last three are ignored) */
  void *wf_args[] = {DECODE_IN_ARGS(gc), &k.n,   QUANT_ARGS(k), &k.n_sub, &qchunk, &out,
                     &gc->status.ptr,    &k.lnd, &gc->lnd.ptr,  &pred};
  if (tail_only) {
    if ((rc = h5fz_gpu_launch(gc, c->mod.decode_wf, grid, 32u * (unsigned)c->wf_warps, 0, wf_args,
                              "warp-fused decode kernel")))
      return rc;
    gc->stats.warp_fused_decodes++;
    if (k.n % p->subchunk_elems == 0 && (!lnd_chain || all_1d))
      return lnd_chain ? launch_lnd_finish(gc, c, p, &k, n_chunks, qchunk, out, pred, lnd_pred) : H5FZ_OK;
    if (lnd_chain && !all_1d) tail_only = 2u; /* else 1: the generic kernel takes each chunk's partial sub-chunk */
  }
  if (c->mod.huff_groups) { /* huff/huffctx: the words first, the groups shared by a block's threads (h5fz_codegen.c) */
    uint32_t subs, parts;
    huff_groups_geometry(gc, c, grid, &subs, &parts);
    void *hg_args[] = {DECODE_IN_ARGS(gc), &k.n, &k.n_sub, &grid, &subs, &parts, &out, &gc->status.ptr};
    if ((rc = h5fz_gpu_launch(gc, c->mod.huff_groups, (grid + subs - 1u) / subs, H5FZ_HUFF_DEC_THREADS, 0, hg_args,
                              "huff group decode kernel")))
      return rc;
  }
  void *args[] = {DECODE_IN_ARGS(gc), &k.n,   QUANT_ARGS(k), &k.row, &k.n_sub,  &qchunk, &out,
                  &gc->status.ptr,    &k.lnd, &gc->lnd.ptr,  &pred,  &tail_only};
  rc = h5fz_gpu_launch(gc, c->mod.decode, tail_only == 1u ? n_chunks : grid, (unsigned)c->dec_threads, (unsigned)c->smem,
                       args, "decode kernel");
  return rc || !lnd_chain ? rc : launch_lnd_finish(gc, c, p, &k, n_chunks, qchunk, out, pred, lnd_pred);
}
