/*
 * h5fz_gpu_exec.c - the GPU executor: plan (planner/), generate (codegen),
 * compile (jit), then per chunk: pinned staging, the fused encode kernel,
 * the tail (scan, pack, outlier gather), and the container written on the
 * host around the packed bytes, byte-identical to the CPU executor's.
 *
 * One CUDA context (the device's primary one), one stream (and a side one
 * for the partial sub-chunks beside the warp-fused encode) and device
 * buffers that grow and are reused across chunks; chunk calls are
 * serialised.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h5fz_codegen.h"
#include "h5fz_parallel.h"
#include "h5fz_gpu.h"
#include "h5fz_device_query.h"
#include "h5fz_gpu_state.h"

h5fz_gpu_state g_gpu = {.lock = PTHREAD_MUTEX_INITIALIZER};

int h5fz_gpu_cuda_fail(CUresult r, const char *what)
{
  return h5fz_fail(H5FZ_ERR_DEVICE, "%s: %s (CUDA error %d)", what, h5fz_cuda_error_string(r), r);
}

static void init_once(void)
{
  const char *why;
  g_gpu.init_done = 1;
  g_gpu.cu = h5fz_cuda_get(&why);
  if (!g_gpu.cu) {
    snprintf(g_gpu.why, sizeof g_gpu.why, "%s", why);
    return;
  }
  CUresult r = g_gpu.cu->cuInit(0);
  if (r) {
    snprintf(g_gpu.why, sizeof g_gpu.why, "cuInit failed: %s", h5fz_cuda_error_string(r));
    return;
  }
  int ordinal = (int)h5fz_env_int("H5FZ_GPU_ORDINAL", 0, 1023, 1, 0);
  char why2[256] = "";
  if (h5fz_device_detect(ordinal, &g_gpu.dev, why2, sizeof why2) || !g_gpu.dev.present) {
    snprintf(g_gpu.why, sizeof g_gpu.why, "no usable GPU: %s", why2[0] ? why2 : g_gpu.dev.absent_reason);
    return;
  }
  h5fz_nvrtc_query(&g_gpu.dev, why2, sizeof why2);
  if (h5fz_registry_load_default(&g_gpu.reg, why2, sizeof why2)) {
    snprintf(g_gpu.why, sizeof g_gpu.why, "kernel class registry: %s", why2);
    return;
  }
  CUdevice d;
  if ((r = g_gpu.cu->cuDeviceGet(&d, ordinal)) || (r = g_gpu.cu->cuDevicePrimaryCtxRetain(&g_gpu.ctx, d)) ||
      (r = g_gpu.cu->cuCtxSetCurrent(g_gpu.ctx)) || (r = g_gpu.cu->cuStreamCreate(&g_gpu.stream, 1 /* non-blocking */)) ||
      (r = g_gpu.cu->cuStreamCreate(&g_gpu.side, 1)) ||
      (r = g_gpu.cu->cuEventCreate(&g_gpu.fork, 2 /* CU_EVENT_DISABLE_TIMING */)) ||
      (r = g_gpu.cu->cuEventCreate(&g_gpu.join, 2))) {
    snprintf(g_gpu.why, sizeof g_gpu.why, "CUDA context: %s", h5fz_cuda_error_string(r));
    return;
  }
  g_gpu.usable = 1;
}

/* Call with g_gpu.lock held. */
int h5fz_gpu_ensure_init(void)
{
  if (!g_gpu.init_done) init_once();
  if (!g_gpu.usable) return h5fz_fail(H5FZ_ERR_DEVICE, "%s", g_gpu.why);
  CUresult r = g_gpu.cu->cuCtxSetCurrent(g_gpu.ctx); /* the caller's thread may be new */
  return r ? h5fz_gpu_cuda_fail(r, "cuCtxSetCurrent") : H5FZ_OK;
}

/* Device memory h5fz may hold: H5FZ_GPU_MEMORY_LIMIT bytes (for a GPU
 * shared with the simulation), unlimited when unset. A chunk that needs
 * more fails over to the CPU executor like any device error. */
static size_t memory_limit(void)
{
  long long l = h5fz_env_int("H5FZ_GPU_MEMORY_LIMIT", 1, 0x7fffffffffffffffLL, 1, 0);
  return l ? (size_t)l : (size_t)-1;
}

int h5fz_gpu_grow(dbuf *b, size_t bytes)
{
  if (bytes <= b->cap) return H5FZ_OK;
  if (b->ptr) g_gpu.cu->cuMemFree(b->ptr);
  g_gpu.device_bytes -= b->cap;
  b->ptr = 0;
  b->cap = 0;
  size_t cap = bytes + bytes / 4 + 256;
  if (cap > memory_limit() || g_gpu.device_bytes > memory_limit() - cap)
    return h5fz_fail(H5FZ_ERR_DEVICE, "device memory limit H5FZ_GPU_MEMORY_LIMIT=%zu bytes reached (%zu held, %zu more needed)",
                     memory_limit(), g_gpu.device_bytes, cap);
  CUresult r = g_gpu.cu->cuMemAlloc(&b->ptr, cap);
  if (r) return h5fz_gpu_cuda_fail(r, "cuMemAlloc");
  b->cap = cap;
  g_gpu.device_bytes += cap;
  return H5FZ_OK;
}

int h5fz_gpu_grow_pinned(size_t bytes)
{
  if (bytes <= g_gpu.pinned_cap) return H5FZ_OK;
  if (g_gpu.pinned) g_gpu.cu->cuMemFreeHost(g_gpu.pinned);
  g_gpu.pinned = NULL;
  g_gpu.pinned_cap = 0;
  size_t cap = bytes + bytes / 4 + 4096;
  CUresult r = g_gpu.cu->cuMemAllocHost(&g_gpu.pinned, cap);
  if (r) return h5fz_gpu_cuda_fail(r, "cuMemAllocHost");
  g_gpu.pinned_cap = cap;
  return H5FZ_OK;
}

/* Threads per block: the plan's tuning, unless H5FZ_GPU_THREADS overrides it
 * (for tuning sweeps; a multiple of 32 in [64, 1024]). 0 = use the plan. */
static int threads_override(void)
{
  return (int)h5fz_env_int("H5FZ_GPU_THREADS", 64, 1024, 32, 0);
}

/* Registers per thread: the plan's tuning, unless H5FZ_GPU_REGS overrides
 * it (for tuning sweeps; 16..255). 0 = use the plan. */
static int regs_override(void)
{
  return (int)h5fz_env_int("H5FZ_GPU_REGS", 16, 255, 1, 0);
}

/* Warps per block of the warp-fused kernels, unless H5FZ_GPU_WF_WARPS
 * overrides it (for tuning sweeps: 1, 2, 4 or 8). 0 = the codegen's default. */
static int wf_warps_override(void)
{
  return (int)h5fz_env_pow2("H5FZ_GPU_WF_WARPS", 1, 8, 0);
}

/* H5FZ_GPU_WARP_FUSED=0 keeps the warp-fused kernels out (A/B runs; the
 * bytes are the same either way). */
static int warp_fused_allowed(void)
{
  return (int)h5fz_env_int("H5FZ_GPU_WARP_FUSED", 0, 1, 1, 1);
}

/* The planned and compiled chain for (ops, dtype, sub-chunk, threads, registers, warp-fused warps). */
int h5fz_gpu_get_chain(const h5fz_chunk_plan *p, chain_entry **out)
{
  uint32_t sub_bytes = p->subchunk_elems * p->esize;
  int want_threads = threads_override(), want_regs = regs_override(), want_wf = wf_warps_override();
  for (int i = 0; i < g_gpu.n_chains; i++) {
    chain_entry *c = &g_gpu.chains[i];
    if (c->n_ops == p->n_ops && !memcmp(c->ops, p->ops, p->n_ops) && c->dtype == p->dtype &&
        c->subchunk_bytes == sub_bytes && (!want_threads || want_threads == c->threads) &&
        (!want_regs || want_regs == c->regs) && (!want_wf || want_wf == c->wf_warps)) {
      *out = c;
      return c->usable ? H5FZ_OK : h5fz_fail(H5FZ_ERR_DEVICE, "%s", c->reason);
    }
  }
  if (g_gpu.n_chains == (int)(sizeof g_gpu.chains / sizeof g_gpu.chains[0]))
    return h5fz_fail(H5FZ_ERR_DEVICE, "more than %d distinct chains in one process", g_gpu.n_chains);
  chain_entry *c = &g_gpu.chains[g_gpu.n_chains];
  memset(c, 0, sizeof *c);
  memcpy(c->ops, p->ops, p->n_ops);
  c->n_ops = p->n_ops;
  c->dtype = p->dtype;
  c->subchunk_bytes = sub_bytes;
  h5fz_plan_options opts;
  h5fz_plan_options_default(&opts);
  char cal[600], dir[512];
  if (h5fz_planner_cache_dir(dir, sizeof dir) == 0 && snprintf(cal, sizeof cal, "%s/calibration.txt", dir) < (int)sizeof cal)
    opts.calibration_path = cal; /* measured figures beside the JIT cache, when present */
  if (h5fz_plan_make(&g_gpu.dev, &g_gpu.reg, p->ops, p->n_ops, &opts, &c->plan) == H5FZ_PLAN_ERR_PARSE)
    h5fz_plan_make(&g_gpu.dev, &g_gpu.reg, p->ops, p->n_ops, NULL, &c->plan); /* ignore a broken calibration file */
  c->threads = want_threads ? want_threads : c->plan.tuning.threads_per_block;
  c->regs = want_regs ? want_regs : c->plan.tuning.regs_per_thread;
  c->wf_warps = want_wf ? want_wf : (int)H5FZ_CODEGEN_WF_WARPS_OF(0u);
  g_gpu.n_chains++;
  if (c->plan.target == H5FZ_TARGET_CPU) {
    snprintf(c->reason, sizeof c->reason, "planner chose the CPU: %s",
             c->plan.n_refused ? c->plan.refused[0].reason : "no GPU class available");
    return h5fz_fail(H5FZ_ERR_DEVICE, "%s", c->reason);
  }
  h5fz_spec s;
  h5fz_spec_default(&s);
  s.mode = H5FZ_MODE_ABS;
  s.bound = 1.0;
  s.dtype = p->dtype;
  s.subchunk_bytes = sub_bytes;
  s.n_ops = p->n_ops;
  memcpy(s.ops, p->ops, H5FZ_MAX_OPS);
  char *src = NULL;
  unsigned flags = c->plan.tuning.features & H5FZ_FEAT_PADDED_PLANES ? H5FZ_CODEGEN_PADDED_PLANES : 0u;
  /* the register cap as the blocks per SM it leaves room for */
  long min_blocks = c->regs > 0 && g_gpu.dev.regs_per_sm > 0 ? g_gpu.dev.regs_per_sm / ((long)c->threads * c->regs) : 0;
  flags |= H5FZ_CODEGEN_MIN_BLOCKS(min_blocks < 1 ? 1 : min_blocks > 32 ? 32 : min_blocks);
  if (c->plan.tuning.features & H5FZ_FEAT_WARP_FUSED)
    flags |= H5FZ_CODEGEN_WARP_FUSED | H5FZ_CODEGEN_WF_WARPS(c->wf_warps);
  int rc = h5fz_codegen(&s, c->threads, flags, &src, &c->smem);
  h5fz_jit_source from = H5FZ_JIT_COMPILED;
  double ms = 0;
  if (!rc) rc = h5fz_jit_get(src, c->plan.arch_name, c->plan.digest, &c->mod, &from, &ms);
  free(src);
  CUresult r = 0;
  /* all of L1 as shared memory: several blocks of sub-chunks per SM */
  if (!rc && ((r = g_gpu.cu->cuFuncSetAttribute(c->mod.encode, H5FZ_CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 100)) ||
              (r = g_gpu.cu->cuFuncSetAttribute(c->mod.decode, H5FZ_CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 100))))
    rc = h5fz_gpu_cuda_fail(r, "cuFuncSetAttribute(carveout)");
  if (!rc && c->mod.encode_wf &&
      ((r = g_gpu.cu->cuFuncSetAttribute(c->mod.encode_wf, H5FZ_CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 100)) ||
       (r = g_gpu.cu->cuFuncSetAttribute(c->mod.decode_wf, H5FZ_CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 100))))
    rc = h5fz_gpu_cuda_fail(r, "cuFuncSetAttribute(carveout, warp-fused)");
  if (!rc && c->smem > 48u * 1024u &&
      ((r = g_gpu.cu->cuFuncSetAttribute(c->mod.encode, H5FZ_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)c->smem)) ||
       (r = g_gpu.cu->cuFuncSetAttribute(c->mod.decode, H5FZ_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)c->smem))))
    rc = h5fz_gpu_cuda_fail(r, "cuFuncSetAttribute(shared memory)");
  if (!rc && p->n_ops > 2 && p->ops[1] == H5FZ_OP_LORENZO_ND &&
      !(c->mod.lnd_cost && c->mod.lnd_carry && c->mod.lnd_xfix && c->mod.lnd_yscan && c->mod.lnd_zscan &&
        c->mod.lnd_dequant))
    rc = h5fz_fail(H5FZ_ERR_DEVICE, "the module of a lorenzo_nd chain lacks its chunk-level kernels");
  if (rc) {
    snprintf(c->reason, sizeof c->reason, "%s", h5fz_last_error());
    return rc;
  }
  g_gpu.stats.last_jit_ms = ms;
  g_gpu.stats.last_jit_source = (int)from;
  c->usable = 1;
  *out = c;
  return H5FZ_OK;
}

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
  /* lorenzo_nd predicts across the sub-chunks of one chunk, from a cost
   * pass over that chunk: one chunk per launch */
  if (h5fz_plan_has_lnd(p) && n_chunks != 1)
    return h5fz_fail(H5FZ_ERR_UNSUPPORTED, "lorenzo_nd chunks are encoded one per launch, not in batches");
  h5fz_lnd_geom lnd = p->lnd; /* lorenzo_nd: its encode picks the predictor from the cost pass */
  void *cost_args[] = {&g_gpu.in.ptr, &lnd, &eb, &step, &inv, &mode, &fill, &g_gpu.lnd.ptr};
  if (h5fz_plan_has_lnd(p) && (rc = h5fz_gpu_launch(c->mod.lnd_cost, H5FZ_LND_COST_PARTS, (unsigned)c->threads, 0,
                                                    cost_args, "lorenzo_nd cost kernel")))
    return rc;
  /* the warp-fused kernel takes the full sub-chunks; the generic one the
   * rest (each chunk's partial last one: tail_only), on the side stream
   * at the same time */
  uint32_t tail_only = use_warp_fused(c->mod.encode_wf, mode);
  int beside = tail_only && n_ull % p->subchunk_elems;
  void *wf_args[] = {&g_gpu.in.ptr, &n_ull, &eb, &step, &inv, &mode, &fill, &n_sub, &qchunk, &g_gpu.slots.ptr,
                     &g_gpu.entries.ptr, &g_gpu.opos.ptr, &g_gpu.oval.ptr, &g_gpu.ocount.ptr};
  void *enc_args[] = {&g_gpu.in.ptr, &n_ull, &eb, &step, &inv, &mode, &fill, &row, &n_sub, &qchunk, &g_gpu.slots.ptr,
                      &g_gpu.entries.ptr, &g_gpu.opos.ptr, &g_gpu.oval.ptr, &g_gpu.ocount.ptr, &lnd, &g_gpu.lnd.ptr,
                      &tail_only};
  if (beside) {
    TRY_CU(g_gpu.cu->cuEventRecord(g_gpu.fork, g_gpu.stream), "cuEventRecord");
    TRY_CU(g_gpu.cu->cuStreamWaitEvent(g_gpu.side, g_gpu.fork, 0), "cuStreamWaitEvent");
    TRY(launch_on(g_gpu.side, c->mod.encode, n_chunks, (unsigned)c->threads, (unsigned)c->smem, enc_args,
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
  void *scan_args[] = {&g_gpu.entries.ptr, &g_gpu.ocount.ptr, &grid, &g_gpu.offsets.ptr, &g_gpu.ooffsets.ptr,
                       &g_gpu.totals.ptr};
  TRY(h5fz_gpu_launch(c->mod.tail_reduce, parts, TAIL_PARTS, 0, reduce_args, "tail reduce kernel"));
  TRY(h5fz_gpu_launch(c->mod.tail_scan, parts, TAIL_PARTS, 0, scan_args, "tail scan kernel"));
  void *pack_args[] = {&g_gpu.slots.ptr, &slot, &g_gpu.entries.ptr, &g_gpu.offsets.ptr, &grid, &g_gpu.packed.ptr};
  TRY(h5fz_gpu_launch(c->mod.tail_pack, (grid + TAIL_PACK_THREADS / 32u - 1u) / (TAIL_PACK_THREADS / 32u),
                      TAIL_PACK_THREADS, 0, pack_args, "tail pack kernel"));
  /* a thread per outlier, as many as fit on the GPU at once (grid stride) */
  uint32_t sub_elems = p->subchunk_elems, esize = p->esize;
  unsigned gather_blocks = (unsigned)(g_gpu.dev.sm_count > 0 ? g_gpu.dev.sm_count : 1) * TAIL_GATHER_BLOCKS_PER_SM;
  void *gather_args[] = {&g_gpu.ooffsets.ptr, &grid, &g_gpu.totals.ptr, &g_gpu.opos.ptr, &g_gpu.oval.ptr,
                         &sub_elems, &n_sub, &n_ull, &esize, &g_gpu.gpos.ptr, &g_gpu.gval.ptr};
  TRY(h5fz_gpu_launch(c->mod.tail_gather, gather_blocks, TAIL_GATHER_THREADS, 0, gather_args, "tail gather kernel"));
out:
  return rc;
}

/* lorenzo_nd, after the fused decode left each sub-chunk's x prefix sums in
 * out as words and its carry information in g_gpu.lnd: the carry along x,
 * the sums along y and z, and the quantizer decode in place. */
static int launch_lnd_finish(const chain_entry *c, const h5fz_chunk_plan *p, CUdeviceptr out)
{
  int rc;
  h5fz_lnd_geom g = p->lnd;
  uint32_t n_sub = p->n_subchunks, yl = h5fz_lnd_ylines(&g), zl = h5fz_lnd_zlines(&g);
  double eb = p->quant.eb, step = p->quant.step, inv = p->quant.inv_step;
  int mode = p->quant.mode;
  unsigned long long fill = p->quant.fill_bits;
  unsigned threads = (unsigned)c->threads;
  void *carry_args[] = {&g_gpu.lnd.ptr, &n_sub};
  void *fix_args[] = {&out, &g, &g_gpu.lnd.ptr};
  void *y_args[] = {&out, &g, &yl}, *z_args[] = {&out, &g, &zl};
  void *dq_args[] = {&out, &g, &eb, &step, &inv, &mode, &fill};
  if ((rc = h5fz_gpu_launch(c->mod.lnd_carry, 1, 32, 0, carry_args, "lorenzo_nd carry kernel")) ||
      (rc = h5fz_gpu_launch(c->mod.lnd_xfix, n_sub, threads, 0, fix_args, "lorenzo_nd x kernel")) ||
      (yl && (rc = h5fz_gpu_launch(c->mod.lnd_yscan, (yl + 255u) / 256u, 256, 0, y_args, "lorenzo_nd y kernel"))) ||
      (zl && (rc = h5fz_gpu_launch(c->mod.lnd_zscan, (zl + 255u) / 256u, 256, 0, z_args, "lorenzo_nd z kernel"))))
    return rc;
  return h5fz_gpu_launch(c->mod.lnd_dequant, n_sub, threads, 0, dq_args, "lorenzo_nd quantizer decode kernel");
}

int h5fz_gpu_launch_decode(const chain_entry *c, const h5fz_chunk_plan *p, uint32_t n_chunks, CUdeviceptr qchunk,
                           CUdeviceptr out)
{
  if (h5fz_plan_has_lnd(p) && n_chunks != 1)
    return h5fz_fail(H5FZ_ERR_UNSUPPORTED, "lorenzo_nd chunks are decoded one per launch, not in batches");
  unsigned long long n_ull = p->n_elements;
  double eb = p->quant.eb, step = p->quant.step, inv = p->quant.inv_step;
  int mode = p->quant.mode;
  unsigned long long fill = p->quant.fill_bits;
  unsigned row = p->row;
  uint32_t n_sub = p->n_subchunks;
  h5fz_lnd_geom lnd = p->lnd;
  int rc = H5FZ_OK;
  uint32_t grid = n_sub * n_chunks, tail_only = use_warp_fused(c->mod.decode_wf, mode);
  void *wf_args[] = {&g_gpu.packed.ptr, &g_gpu.offsets.ptr, &g_gpu.entries.ptr, &n_ull, &eb, &step, &inv, &mode, &fill,
                     &n_sub, &qchunk, &out, &g_gpu.status.ptr};
  if (tail_only) {
    if ((rc = h5fz_gpu_launch(c->mod.decode_wf, grid, 32u * (unsigned)c->wf_warps, 0, wf_args,
                              "warp-fused decode kernel")))
      return rc;
    g_gpu.stats.warp_fused_decodes++;
    if (n_ull % p->subchunk_elems == 0) return H5FZ_OK;
  }
  void *args[] = {&g_gpu.packed.ptr, &g_gpu.offsets.ptr, &g_gpu.entries.ptr, &n_ull, &eb, &step, &inv, &mode, &fill, &row,
                  &n_sub, &qchunk, &out, &g_gpu.status.ptr, &lnd, &g_gpu.lnd.ptr, &tail_only};
  rc = h5fz_gpu_launch(c->mod.decode, tail_only ? n_chunks : grid, (unsigned)c->threads, (unsigned)c->smem, args,
                       "decode kernel");
  return rc || !h5fz_plan_has_lnd(p) ? rc : launch_lnd_finish(c, p, out);
}

/* Device and pinned buffers for encoding a chunk of plan p. */
static int grow_encode_buffers(const h5fz_chunk_plan *p)
{
  int rc;
  uint32_t n_sub = p->n_subchunks, slot = p->subchunk_elems * p->esize;
  size_t data_bytes = (size_t)p->n_elements * p->esize, n = (size_t)p->n_elements;
  TRY(h5fz_gpu_grow(&g_gpu.in, data_bytes));
  TRY(h5fz_gpu_grow(&g_gpu.slots, (size_t)n_sub * slot));
  TRY(h5fz_gpu_grow(&g_gpu.entries, (size_t)n_sub * 4u));
  TRY(h5fz_gpu_grow(&g_gpu.ocount, (size_t)n_sub * 4u));
  TRY(h5fz_gpu_grow(&g_gpu.opos, n * 4u));
  TRY(h5fz_gpu_grow(&g_gpu.oval, n * p->esize));
  TRY(h5fz_gpu_grow(&g_gpu.offsets, (size_t)n_sub * 8u));
  TRY(h5fz_gpu_grow(&g_gpu.ooffsets, (size_t)n_sub * 4u));
  TRY(h5fz_gpu_grow(&g_gpu.totals, TAIL_TOTALS_BYTES(n_sub)));
  TRY(h5fz_gpu_grow(&g_gpu.packed, (size_t)n_sub * slot));
  TRY(h5fz_gpu_grow(&g_gpu.gpos, n * 4u));
  TRY(h5fz_gpu_grow(&g_gpu.gval, n * p->esize));
  /* the pinned buffer stages the input, then holds what comes back */
  size_t back = 16u + (size_t)n_sub * 4u + (size_t)n_sub * slot + n * (4u + p->esize);
  TRY(h5fz_gpu_grow_pinned(data_bytes > back ? data_bytes : back));
  TRY(h5fz_gpu_grow(&g_gpu.status, 4u));
  /* the cost sums, and 2 words per sub-chunk for a decode after it (h5fz_gpu_time_kernels) */
  TRY(h5fz_gpu_grow(&g_gpu.lnd, (size_t)n_sub * 16u > 24u * H5FZ_LND_COST_PARTS ? (size_t)n_sub * 16u
                                                                                 : 24u * H5FZ_LND_COST_PARTS));
out:
  return rc;
}

/* Staging a chunk through the pinned buffer on every core: the chunk is cut
 * into pieces of about 1 MiB (a 16 MiB chunk gives each of 16 cores one),
 * each copied by its own thread, so the host copies run at the cores'
 * summed memory bandwidth instead of one thread's, and each piece's DMA
 * starts as soon as its copy is done (to the device) or its copy starts as
 * soon as its DMA has landed (from the device). */
typedef struct {
  const uint8_t *src; /* to the device: the caller's bytes */
  uint8_t *dst;       /* from the device: where the bytes go */
  size_t bytes;
  uint32_t pieces;
  CUdeviceptr dev;
} stage_job;

static uint32_t stage_pieces(size_t bytes)
{
  size_t n = bytes >> 20;
  if (n > H5FZ_STAGE_MAX_PIECES) n = H5FZ_STAGE_MAX_PIECES;
  return n < 2 ? 1u : (uint32_t)n;
}

/* Piece i of s: [off, off + len), cut at 4 KiB boundaries. */
static void stage_piece(const stage_job *s, uint64_t i, size_t *off, size_t *len)
{
  size_t pages = (s->bytes + 4095u) / 4096u, a = pages * i / s->pieces * 4096u, b = pages * (i + 1) / s->pieces * 4096u;
  if (b > s->bytes) b = s->bytes;
  if (a > b) a = b;
  *off = a;
  *len = b - a;
}

static int stage_in_one(void *ctx, uint64_t i)
{
  const stage_job *s = ctx;
  size_t off, len;
  stage_piece(s, i, &off, &len);
  uint8_t *pinned = (uint8_t *)g_gpu.pinned + off;
  memcpy(pinned, s->src + off, len);
  CUresult r = g_gpu.cu->cuCtxSetCurrent(g_gpu.ctx);
  if (!r) r = g_gpu.cu->cuMemcpyHtoDAsync(s->dev + off, pinned, len, g_gpu.stream);
  return r ? h5fz_gpu_cuda_fail(r, "copy chunk to GPU") : H5FZ_OK;
}

static int stage_out_one(void *ctx, uint64_t i)
{
  const stage_job *s = ctx;
  size_t off, len;
  stage_piece(s, i, &off, &len);
  CUresult r = g_gpu.cu->cuCtxSetCurrent(g_gpu.ctx);
  if (!r) r = g_gpu.cu->cuEventSynchronize(g_gpu.stage_ev[i]);
  if (r) return h5fz_gpu_cuda_fail(r, "copy values from GPU");
  memcpy(s->dst + off, (uint8_t *)g_gpu.pinned + off, len);
  return H5FZ_OK;
}

/* bytes of src to device memory dev through g_gpu.pinned (>= bytes); the
 * DMAs are queued on g_gpu.stream when this returns. */
static int stage_to_device(CUdeviceptr dev, const uint8_t *src, size_t bytes)
{
  stage_job s = {src, NULL, bytes, stage_pieces(bytes), dev};
  return h5fz_parallel_for(s.pieces, stage_in_one, &s);
}

/* bytes of device memory dev (once g_gpu.stream's work before this call is
 * done) to dst through g_gpu.pinned (>= bytes); returns when dst holds them. */
static int stage_from_device(uint8_t *dst, CUdeviceptr dev, size_t bytes)
{
  int rc = H5FZ_OK;
  stage_job s = {NULL, dst, bytes, stage_pieces(bytes), dev};
  while (g_gpu.n_stage_ev < (int)s.pieces)
    TRY_CU(g_gpu.cu->cuEventCreate(&g_gpu.stage_ev[g_gpu.n_stage_ev++], 2 /* CU_EVENT_DISABLE_TIMING */),
           "cuEventCreate");
  for (uint32_t i = 0; i < s.pieces; i++) {
    size_t off, len;
    stage_piece(&s, i, &off, &len);
    TRY_CU(g_gpu.cu->cuMemcpyDtoHAsync((uint8_t *)g_gpu.pinned + off, dev + off, len, g_gpu.stream),
           "copy values from GPU");
    TRY_CU(g_gpu.cu->cuEventRecord(g_gpu.stage_ev[i], g_gpu.stream), "cuEventRecord");
  }
  rc = h5fz_parallel_for(s.pieces, stage_out_one, &s);
out:
  return rc;
}

static int encode_locked(const h5fz_chunk_plan *p, h5fz_header *h, const uint8_t *in, size_t in_bytes,
                         void **out_buf, size_t *out_bytes)
{
  int rc;
  chain_entry *c;
  TRY(h5fz_gpu_get_chain(p, &c));
  TRY(grow_encode_buffers(p));
  uint32_t n_sub = p->n_subchunks, slot = p->subchunk_elems * p->esize;
  size_t data_bytes = (size_t)p->n_elements * p->esize, n = (size_t)p->n_elements;
  TRY(stage_to_device(g_gpu.in.ptr, in, data_bytes));

  TRY(h5fz_gpu_launch_encode(c, p, 1, 0));

  uint8_t *host = g_gpu.pinned;
  unsigned long long *totals = (unsigned long long *)host;
  uint32_t *entries = (uint32_t *)(host + 16);
  uint8_t *payload = host + 16 + (size_t)n_sub * 4u;
  TRY_CU(g_gpu.cu->cuMemcpyDtoHAsync(totals, g_gpu.totals.ptr, 16u, g_gpu.stream), "copy sizes from GPU");
  TRY_CU(g_gpu.cu->cuMemcpyDtoHAsync(entries, g_gpu.entries.ptr, (size_t)n_sub * 4u, g_gpu.stream), "copy sizes from GPU");
  uint64_t costs[3u * H5FZ_LND_COST_PARTS];
  if (h5fz_plan_has_lnd(p))
    TRY_CU(g_gpu.cu->cuMemcpyDtoHAsync(costs, g_gpu.lnd.ptr, sizeof costs, g_gpu.stream), "copy costs from GPU");
  TRY(h5fz_gpu_sync_stream("encode"));
  /* the predictor each block of the encode chose from the same sums */
  if (h5fz_plan_has_lnd(p)) h->predictor = (uint8_t)h5fz_lnd_choose(costs, H5FZ_LND_COST_PARTS, p->lnd.dim);
  size_t payload_bytes = totals[0], n_out = totals[1];
  if (payload_bytes > (size_t)n_sub * slot || n_out > n) {
    rc = h5fz_fail(H5FZ_ERR_DEVICE, "GPU encode returned impossible sizes");
    goto out;
  }
  uint32_t *pos = (uint32_t *)(payload + payload_bytes + (4u - payload_bytes % 4u) % 4u);
  uint8_t *vals = (uint8_t *)(pos + n_out);
  TRY_CU(g_gpu.cu->cuMemcpyDtoHAsync(payload, g_gpu.packed.ptr, payload_bytes, g_gpu.stream), "copy payload from GPU");
  if (n_out) {
    TRY_CU(g_gpu.cu->cuMemcpyDtoHAsync(pos, g_gpu.gpos.ptr, n_out * 4u, g_gpu.stream), "copy outliers from GPU");
    TRY_CU(g_gpu.cu->cuMemcpyDtoHAsync(vals, g_gpu.gval.ptr, n_out * p->esize, g_gpu.stream), "copy outliers from GPU");
  }
  TRY(h5fz_gpu_sync_stream("encode copies"));
  h->n_outliers = (uint32_t)n_out;
  h5fz_payload pl = {payload, 0, entries};
  rc = h5fz_container_write(h, &pl, pos, vals, in, in_bytes, out_buf, out_bytes);
  g_gpu.stats.chunks_encoded++;
out:
  return rc;
}

static int decode_locked(const h5fz_chunk_plan *p, const uint32_t *entries, const uint8_t *payload,
                         size_t payload_bytes, const uint64_t *offsets, uint8_t *values)
{
  int rc;
  chain_entry *c;
  TRY(h5fz_gpu_get_chain(p, &c));
  uint32_t n_sub = p->n_subchunks;
  size_t data_bytes = (size_t)p->n_elements * p->esize;
  size_t up = payload_bytes + (size_t)n_sub * 12u + 16u;
  TRY(h5fz_gpu_grow(&g_gpu.packed, payload_bytes + 1u));
  TRY(h5fz_gpu_grow(&g_gpu.entries, (size_t)n_sub * 4u));
  TRY(h5fz_gpu_grow(&g_gpu.offsets, (size_t)n_sub * 8u));
  TRY(h5fz_gpu_grow(&g_gpu.in, data_bytes));
  TRY(h5fz_gpu_grow(&g_gpu.status, 4u));
  TRY(h5fz_gpu_grow(&g_gpu.lnd, (size_t)n_sub * 16u));
  TRY(h5fz_gpu_grow_pinned(up > data_bytes ? up : data_bytes));
  uint8_t *host = g_gpu.pinned;
  memcpy(host, offsets, (size_t)n_sub * 8u);
  memcpy(host + (size_t)n_sub * 8u, entries, (size_t)n_sub * 4u);
  memcpy(host + (size_t)n_sub * 12u, payload, payload_bytes);
  TRY_CU(g_gpu.cu->cuMemcpyHtoDAsync(g_gpu.offsets.ptr, host, (size_t)n_sub * 8u, g_gpu.stream), "copy to GPU");
  TRY_CU(g_gpu.cu->cuMemcpyHtoDAsync(g_gpu.entries.ptr, host + (size_t)n_sub * 8u, (size_t)n_sub * 4u, g_gpu.stream), "copy to GPU");
  TRY_CU(g_gpu.cu->cuMemcpyHtoDAsync(g_gpu.packed.ptr, host + (size_t)n_sub * 12u, payload_bytes, g_gpu.stream), "copy to GPU");
  TRY_CU(g_gpu.cu->cuMemsetD8Async(g_gpu.status.ptr, 0, 4u, g_gpu.stream), "clear status");
  TRY(h5fz_gpu_launch_decode(c, p, 1, 0, g_gpu.in.ptr));
  int status = 0;
  TRY_CU(g_gpu.cu->cuMemcpyDtoHAsync(&status, g_gpu.status.ptr, 4u, g_gpu.stream), "copy status from GPU");
  TRY(stage_from_device(values, g_gpu.in.ptr, data_bytes));
  TRY(h5fz_gpu_sync_stream("decode"));
  if (status) {
    rc = h5fz_fail(H5FZ_ERR_CORRUPT, "sub-chunk %d: RZE stream is inconsistent", status - 1);
    goto out;
  }
  g_gpu.stats.chunks_decoded++;
out:
  return rc;
}

int h5fz_gpu_encode_chunk(const h5fz_chunk_plan *p, h5fz_header *h, const uint8_t *in, size_t in_bytes,
                          void **out, size_t *out_bytes)
{
  pthread_mutex_lock(&g_gpu.lock);
  int rc = h5fz_gpu_ensure_init();
  if (!rc) rc = encode_locked(p, h, in, in_bytes, out, out_bytes);
  pthread_mutex_unlock(&g_gpu.lock);
  return rc;
}

int h5fz_gpu_decode_chunk(const h5fz_chunk_plan *p, const uint32_t *entries, const uint8_t *payload,
                          size_t payload_bytes, const uint64_t *offsets, uint8_t *values)
{
  pthread_mutex_lock(&g_gpu.lock);
  int rc = h5fz_gpu_ensure_init();
  if (!rc) rc = decode_locked(p, entries, payload, payload_bytes, offsets, values);
  pthread_mutex_unlock(&g_gpu.lock);
  return rc;
}

int h5fz_gpu_route(const h5fz_chunk_plan *p, size_t chunk_bytes, int forced)
{
  pthread_mutex_lock(&g_gpu.lock);
  int rc = h5fz_gpu_ensure_init();
  chain_entry *c = NULL;
  if (!rc) rc = h5fz_gpu_get_chain(p, &c);
  int use = 0;
  if (!rc) use = forced || h5fz_plan_route_for_chunk(&c->plan, chunk_bytes) == H5FZ_EXEC_GPU;
  pthread_mutex_unlock(&g_gpu.lock);
  return rc ? rc : use;
}

int h5fz_gpu_plan_for(const h5fz_chunk_plan *p, void *plan_out)
{
  pthread_mutex_lock(&g_gpu.lock);
  int rc = h5fz_gpu_ensure_init();
  chain_entry *c = NULL;
  if (!rc) rc = h5fz_gpu_get_chain(p, &c);
  if (!rc) *(h5fz_plan *)plan_out = c->plan;
  pthread_mutex_unlock(&g_gpu.lock);
  return rc;
}

void h5fz_gpu_get_stats(h5fz_gpu_stats *stats)
{
  pthread_mutex_lock(&g_gpu.lock);
  *stats = g_gpu.stats;
  pthread_mutex_unlock(&g_gpu.lock);
}

static int compare_doubles(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static int time_locked(const h5fz_chunk_plan *p, const uint8_t *in, int reps, double *enc_ms, double *dec_ms,
                       size_t *payload_bytes)
{
  int rc;
  chain_entry *c;
  dbuf *out = &g_gpu.slots; /* decode target: the slots are free once packed */
  double *te = calloc((size_t)reps, sizeof *te), *td = calloc((size_t)reps, sizeof *td);
  CUevent e0 = NULL, e1 = NULL;
  if (!te || !td) {
    rc = h5fz_fail(H5FZ_ERR_NOMEM, "timing buffers");
    goto out;
  }
  TRY(h5fz_gpu_get_chain(p, &c));
  TRY(grow_encode_buffers(p));
  size_t data_bytes = (size_t)p->n_elements * p->esize;
  TRY_CU(g_gpu.cu->cuMemcpyHtoDAsync(g_gpu.in.ptr, in, data_bytes, g_gpu.stream), "copy to GPU");
  TRY_CU(g_gpu.cu->cuEventCreate(&e0, 0), "cuEventCreate");
  TRY_CU(g_gpu.cu->cuEventCreate(&e1, 0), "cuEventCreate");
  for (int r = -1; r < reps; r++) { /* r = -1 warms up */
    TRY_CU(g_gpu.cu->cuEventRecord(e0, g_gpu.stream), "cuEventRecord");
    TRY(h5fz_gpu_launch_encode(c, p, 1, 0));
    TRY_CU(g_gpu.cu->cuEventRecord(e1, g_gpu.stream), "cuEventRecord");
    TRY_CU(g_gpu.cu->cuEventSynchronize(e1), "cuEventSynchronize");
    float ms = 0;
    TRY_CU(g_gpu.cu->cuEventElapsedTime(&ms, e0, e1), "cuEventElapsedTime");
    if (r >= 0) te[r] = ms;
  }
  unsigned long long totals[2];
  TRY_CU(g_gpu.cu->cuMemcpyDtoHAsync(totals, g_gpu.totals.ptr, 16u, g_gpu.stream), "copy totals");
  TRY(h5fz_gpu_sync_stream("timing"));
  *payload_bytes = totals[0];
  TRY(h5fz_gpu_grow(out, data_bytes));
  TRY(h5fz_gpu_grow(&g_gpu.status, 4u));
  TRY_CU(g_gpu.cu->cuMemsetD8Async(g_gpu.status.ptr, 0, 4, g_gpu.stream), "clear decode status");
  for (int r = -1; r < reps; r++) {
    TRY_CU(g_gpu.cu->cuEventRecord(e0, g_gpu.stream), "cuEventRecord");
    TRY(h5fz_gpu_launch_decode(c, p, 1, 0, out->ptr));
    TRY_CU(g_gpu.cu->cuEventRecord(e1, g_gpu.stream), "cuEventRecord");
    TRY_CU(g_gpu.cu->cuEventSynchronize(e1), "cuEventSynchronize");
    float ms = 0;
    TRY_CU(g_gpu.cu->cuEventElapsedTime(&ms, e0, e1), "cuEventElapsedTime");
    if (r >= 0) td[r] = ms;
  }
  int status = 0; /* a timed decode must also have read every sub-chunk */
  TRY_CU(g_gpu.cu->cuMemcpyDtoHAsync(&status, g_gpu.status.ptr, 4u, g_gpu.stream), "copy decode status");
  TRY(h5fz_gpu_sync_stream("timing"));
  if (status) {
    rc = h5fz_fail(H5FZ_ERR_CORRUPT, "timed decode: the kernel refused sub-chunk %d of its own encode", status - 1);
    goto out;
  }
  qsort(te, (size_t)reps, sizeof *te, compare_doubles);
  qsort(td, (size_t)reps, sizeof *td, compare_doubles);
  *enc_ms = te[reps / 2];
  *dec_ms = td[reps / 2];
out:
  if (e0) g_gpu.cu->cuEventDestroy(e0);
  if (e1) g_gpu.cu->cuEventDestroy(e1);
  free(te);
  free(td);
  return rc;
}

int h5fz_gpu_time_kernels(const h5fz_chunk_plan *p, const uint8_t *in, int reps, double *enc_ms, double *dec_ms,
                          size_t *payload_bytes)
{
  if (reps < 1) return h5fz_fail(H5FZ_ERR_ARG, "reps must be >= 1");
  pthread_mutex_lock(&g_gpu.lock);
  int rc = h5fz_gpu_ensure_init();
  if (!rc) rc = time_locked(p, in, reps, enc_ms, dec_ms, payload_bytes);
  pthread_mutex_unlock(&g_gpu.lock);
  return rc;
}
