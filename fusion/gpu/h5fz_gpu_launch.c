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
  return fn && (mode == H5FZ_QMODE_ABS || mode == H5FZ_QMODE_REL) && warp_fused_allowed(gc) ? 1u : 0u;
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
  /* lorenzo_nd predicts across the sub-chunks of one chunk, from a cost
   * pass over that chunk: one chunk per launch */
  if (h5fz_plan_has_lnd(p) && n_chunks != 1)
    return h5fz_fail(H5FZ_ERR_UNSUPPORTED, "lorenzo_nd chunks are encoded one per launch, not in batches");
  /* lorenzo_nd: its encode picks the predictor from the cost pass */
  void *cost_args[] = {&gc->in.ptr, &k.lnd, QUANT_ARGS(k), &gc->lnd.ptr};
  if (h5fz_plan_has_lnd(p) && (rc = h5fz_gpu_launch(gc, c->mod.lnd_cost, H5FZ_LND_COST_PARTS, (unsigned)c->threads, 0,
                                                    cost_args, "lorenzo_nd cost kernel")))
    return rc;
  /* the warp-fused kernel takes the full sub-chunks; the generic one the
   * rest (each chunk's partial last one: tail_only), on the side stream
   * at the same time */
  uint32_t tail_only = use_warp_fused(gc, c->mod.encode_wf, k.mode);
  int beside = tail_only && k.n % p->subchunk_elems;
  void *wf_args[] = {&gc->in.ptr, &k.n, QUANT_ARGS(k), &k.n_sub, &qchunk, ENCODE_OUT_ARGS(gc)};
  void *enc_args[] = {&gc->in.ptr,         &k.n,   QUANT_ARGS(k), &k.row,    &k.n_sub, &qchunk,
                      ENCODE_OUT_ARGS(gc), &k.lnd, &gc->lnd.ptr,  &tail_only};
  if (beside) {
    TRY_CU(gc->cu->cuEventRecord(gc->fork, gc->stream), "cuEventRecord");
    TRY_CU(gc->cu->cuStreamWaitEvent(gc->side, gc->fork, 0), "cuStreamWaitEvent");
    TRY(launch_on(gc, gc->side, c->mod.encode, n_chunks, (unsigned)c->threads, (unsigned)c->smem, enc_args,
                  "encode kernel (partial sub-chunks)"));
    TRY_CU(gc->cu->cuEventRecord(gc->join, gc->side), "cuEventRecord");
  }
  if (tail_only) {
    TRY(h5fz_gpu_launch(gc, c->mod.encode_wf, grid, 32u * (unsigned)c->wf_warps, 0, wf_args,
                        "warp-fused encode kernel"));
    gc->stats.warp_fused_encodes++;
  } else {
    TRY(h5fz_gpu_launch(gc, c->mod.encode, grid, (unsigned)c->threads, (unsigned)c->smem, enc_args, "encode kernel"));
  }
  if (beside) TRY_CU(gc->cu->cuStreamWaitEvent(gc->stream, gc->join, 0), "cuStreamWaitEvent");
  rc = launch_tail(gc, c, p, &k, grid);
out:
  return rc;
}

/* lorenzo_nd, after the fused decode left each sub-chunk's x prefix sums in
 * out as words and its carry information in gc->lnd: the carry along x,
 * the sums along y and z, and the quantizer decode in place. */
static int launch_lnd_finish(h5fz_gpu_context *gc, const chain_entry *c, kernel_params *k, CUdeviceptr out)
{
  int rc;
  uint32_t yl = h5fz_lnd_ylines(&k->lnd), zl = h5fz_lnd_zlines(&k->lnd);
  unsigned threads = (unsigned)c->threads;
  void *carry_args[] = {&gc->lnd.ptr, &k->n_sub};
  void *fix_args[] = {&out, &k->lnd, &gc->lnd.ptr};
  void *y_args[] = {&out, &k->lnd, &yl}, *z_args[] = {&out, &k->lnd, &zl};
  void *dq_args[] = {&out, &k->lnd, QUANT_ARGS(*k)};
  if ((rc = h5fz_gpu_launch(gc, c->mod.lnd_carry, 1, 32, 0, carry_args, "lorenzo_nd carry kernel")) ||
      (rc = h5fz_gpu_launch(gc, c->mod.lnd_xfix, k->n_sub, threads, 0, fix_args, "lorenzo_nd x kernel")) ||
      (yl && (rc = h5fz_gpu_launch(gc, c->mod.lnd_yscan, (yl + 255u) / 256u, 256, 0, y_args, "lorenzo_nd y kernel"))) ||
      (zl && (rc = h5fz_gpu_launch(gc, c->mod.lnd_zscan, (zl + 255u) / 256u, 256, 0, z_args, "lorenzo_nd z kernel"))))
    return rc;
  return h5fz_gpu_launch(gc, c->mod.lnd_dequant, k->n_sub, threads, 0, dq_args, "lorenzo_nd quantizer decode kernel");
}

int h5fz_gpu_launch_decode(h5fz_gpu_context *gc, const chain_entry *c, const h5fz_chunk_plan *p, uint32_t n_chunks,
                           CUdeviceptr qchunk, CUdeviceptr out)
{
  if (h5fz_plan_has_lnd(p) && n_chunks != 1)
    return h5fz_fail(H5FZ_ERR_UNSUPPORTED, "lorenzo_nd chunks are decoded one per launch, not in batches");
  kernel_params k = params_of(p);
  int rc = H5FZ_OK;
  uint32_t grid = k.n_sub * n_chunks, tail_only = use_warp_fused(gc, c->mod.decode_wf, k.mode);
  void *wf_args[] = {DECODE_IN_ARGS(gc), &k.n, QUANT_ARGS(k), &k.n_sub, &qchunk, &out, &gc->status.ptr};
  if (tail_only) {
    if ((rc = h5fz_gpu_launch(gc, c->mod.decode_wf, grid, 32u * (unsigned)c->wf_warps, 0, wf_args,
                              "warp-fused decode kernel")))
      return rc;
    gc->stats.warp_fused_decodes++;
    if (k.n % p->subchunk_elems == 0) return H5FZ_OK;
  }
  void *args[] = {DECODE_IN_ARGS(gc), &k.n,   QUANT_ARGS(k), &k.row,    &k.n_sub, &qchunk, &out,
                  &gc->status.ptr,    &k.lnd, &gc->lnd.ptr,  &tail_only};
  rc = h5fz_gpu_launch(gc, c->mod.decode, tail_only ? n_chunks : grid, (unsigned)c->threads, (unsigned)c->smem, args,
                       "decode kernel");
  return rc || !h5fz_plan_has_lnd(p) ? rc : launch_lnd_finish(gc, c, &k, out);
}
