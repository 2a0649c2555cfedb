/*
 * h5fz_gpu_exec.c - the GPU executor: plan (planner/), generate (codegen),
 * compile (jit), then per chunk: pinned staging, the fused encode kernel,
 * the tail scan and pack, and the container written on the host around the
 * packed bytes, byte-identical to the CPU executor's.
 *
 * One CUDA context (the device's primary one), one stream and device buffers
 * that grow and are reused across chunks; chunk calls are serialised.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h5fz_codegen.h"
#include "h5fz_exec.h"
#include "h5fz_gpu.h"
#include "h5fz_jit.h"
#include "../planner/h5fz_planner.h"

#define TAIL_PACK_THREADS 256u

typedef struct {
  CUdeviceptr ptr;
  size_t cap;
} dbuf;

/* A chain that has been planned and compiled. */
typedef struct {
  uint8_t ops[H5FZ_MAX_OPS];
  uint32_t n_ops;
  h5fz_dtype dtype;
  uint32_t subchunk_bytes;
  int threads;              /* threads per block actually used */
  int usable;               /* 0: the plan refused the GPU (why in reason) */
  char reason[256];
  h5fz_plan plan;
  h5fz_jit_module mod;
  size_t smem;
} chain_entry;

static struct {
  pthread_mutex_t lock;
  int init_done, usable;
  char why[512];
  const h5fz_cuda_api *cu;
  CUcontext ctx;
  CUstream stream;
  h5fz_device_desc dev;
  h5fz_registry reg;
  dbuf in, slots, entries, ocount, opos, oval, offsets, ooffsets, totals, packed, gpos, gval, status;
  dbuf lnd; /* lorenzo_nd: the cost pass's sums (encode), 2 words per sub-chunk (decode) */
  void *pinned;
  size_t pinned_cap;
  size_t device_bytes; /* held in the dbufs, for H5FZ_GPU_MEMORY_LIMIT */
  chain_entry chains[32];
  int n_chains;
  h5fz_gpu_stats stats;
} gpu = {.lock = PTHREAD_MUTEX_INITIALIZER};

static int cuda_fail(CUresult r, const char *what)
{
  return h5fz_fail(H5FZ_ERR_DEVICE, "%s: %s (CUDA error %d)", what, h5fz_cuda_error_string(r), r);
}

static void init_once(void)
{
  const char *why;
  gpu.init_done = 1;
  gpu.cu = h5fz_cuda_get(&why);
  if (!gpu.cu) {
    snprintf(gpu.why, sizeof gpu.why, "%s", why);
    return;
  }
  CUresult r = gpu.cu->cuInit(0);
  if (r) {
    snprintf(gpu.why, sizeof gpu.why, "cuInit failed: %s", h5fz_cuda_error_string(r));
    return;
  }
  int ordinal = getenv("H5FZ_GPU_ORDINAL") ? atoi(getenv("H5FZ_GPU_ORDINAL")) : 0;
  char why2[256] = "";
  if (h5fz_device_detect(ordinal, &gpu.dev, why2, sizeof why2) || !gpu.dev.present) {
    snprintf(gpu.why, sizeof gpu.why, "no usable GPU: %s", why2[0] ? why2 : gpu.dev.absent_reason);
    return;
  }
  h5fz_nvrtc_query(&gpu.dev, why2, sizeof why2);
  if (h5fz_registry_load_default(&gpu.reg, why2, sizeof why2)) {
    snprintf(gpu.why, sizeof gpu.why, "kernel class registry: %s", why2);
    return;
  }
  CUdevice d;
  if ((r = gpu.cu->cuDeviceGet(&d, ordinal)) || (r = gpu.cu->cuDevicePrimaryCtxRetain(&gpu.ctx, d)) ||
      (r = gpu.cu->cuCtxSetCurrent(gpu.ctx)) || (r = gpu.cu->cuStreamCreate(&gpu.stream, 1 /* non-blocking */))) {
    snprintf(gpu.why, sizeof gpu.why, "CUDA context: %s", h5fz_cuda_error_string(r));
    return;
  }
  gpu.usable = 1;
}

/* Call with gpu.lock held. */
static int ensure_init(void)
{
  if (!gpu.init_done) init_once();
  if (!gpu.usable) return h5fz_fail(H5FZ_ERR_DEVICE, "%s", gpu.why);
  CUresult r = gpu.cu->cuCtxSetCurrent(gpu.ctx); /* the caller's thread may be new */
  return r ? cuda_fail(r, "cuCtxSetCurrent") : H5FZ_OK;
}

/* Device memory h5fz may hold: H5FZ_GPU_MEMORY_LIMIT bytes (for a GPU
 * shared with the simulation), unlimited when unset. A chunk that needs
 * more fails over to the CPU executor like any device error. */
static size_t memory_limit(void)
{
  const char *v = getenv("H5FZ_GPU_MEMORY_LIMIT");
  unsigned long long l = v && *v ? strtoull(v, NULL, 10) : 0;
  return l ? (size_t)l : (size_t)-1;
}

static int grow(dbuf *b, size_t bytes)
{
  if (bytes <= b->cap) return H5FZ_OK;
  if (b->ptr) gpu.cu->cuMemFree(b->ptr);
  gpu.device_bytes -= b->cap;
  b->ptr = 0;
  b->cap = 0;
  size_t cap = bytes + bytes / 4 + 256;
  if (cap > memory_limit() || gpu.device_bytes > memory_limit() - cap)
    return h5fz_fail(H5FZ_ERR_DEVICE, "device memory limit H5FZ_GPU_MEMORY_LIMIT=%zu bytes reached (%zu held, %zu more needed)",
                     memory_limit(), gpu.device_bytes, cap);
  CUresult r = gpu.cu->cuMemAlloc(&b->ptr, cap);
  if (r) return cuda_fail(r, "cuMemAlloc");
  b->cap = cap;
  gpu.device_bytes += cap;
  return H5FZ_OK;
}

static int grow_pinned(size_t bytes)
{
  if (bytes <= gpu.pinned_cap) return H5FZ_OK;
  if (gpu.pinned) gpu.cu->cuMemFreeHost(gpu.pinned);
  gpu.pinned = NULL;
  gpu.pinned_cap = 0;
  size_t cap = bytes + bytes / 4 + 4096;
  CUresult r = gpu.cu->cuMemAllocHost(&gpu.pinned, cap);
  if (r) return cuda_fail(r, "cuMemAllocHost");
  gpu.pinned_cap = cap;
  return H5FZ_OK;
}

/* Threads per block: the plan's tuning, unless H5FZ_GPU_THREADS overrides it
 * (for tuning sweeps; a multiple of 32 in [64, 1024]). 0 = use the plan. */
static int threads_override(void)
{
  const char *v = getenv("H5FZ_GPU_THREADS");
  int t = v ? atoi(v) : 0;
  return t >= 64 && t <= 1024 && t % 32 == 0 ? t : 0;
}

/* The planned and compiled chain for (ops, dtype, sub-chunk, threads). */
static int get_chain(const h5fz_chunk_plan *p, chain_entry **out)
{
  uint32_t sub_bytes = p->subchunk_elems * p->esize;
  int want_threads = threads_override();
  for (int i = 0; i < gpu.n_chains; i++) {
    chain_entry *c = &gpu.chains[i];
    if (c->n_ops == p->n_ops && !memcmp(c->ops, p->ops, p->n_ops) && c->dtype == p->dtype &&
        c->subchunk_bytes == sub_bytes && (!want_threads || want_threads == c->threads)) {
      *out = c;
      return c->usable ? H5FZ_OK : h5fz_fail(H5FZ_ERR_DEVICE, "%s", c->reason);
    }
  }
  if (gpu.n_chains == (int)(sizeof gpu.chains / sizeof gpu.chains[0]))
    return h5fz_fail(H5FZ_ERR_DEVICE, "more than %d distinct chains in one process", gpu.n_chains);
  chain_entry *c = &gpu.chains[gpu.n_chains];
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
  if (h5fz_plan_make(&gpu.dev, &gpu.reg, p->ops, p->n_ops, &opts, &c->plan) == H5FZ_PLAN_ERR_PARSE)
    h5fz_plan_make(&gpu.dev, &gpu.reg, p->ops, p->n_ops, NULL, &c->plan); /* ignore a broken calibration file */
  c->threads = want_threads ? want_threads : c->plan.tuning.threads_per_block;
  gpu.n_chains++;
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
  int rc = h5fz_codegen(&s, c->threads, &src, &c->smem);
  h5fz_jit_source from = H5FZ_JIT_COMPILED;
  double ms = 0;
  if (!rc) rc = h5fz_jit_get(src, c->plan.arch_name, c->plan.digest, &c->mod, &from, &ms);
  free(src);
  CUresult r = 0;
  /* all of L1 as shared memory: several blocks of sub-chunks per SM */
  if (!rc && ((r = gpu.cu->cuFuncSetAttribute(c->mod.encode, H5FZ_CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 100)) ||
              (r = gpu.cu->cuFuncSetAttribute(c->mod.decode, H5FZ_CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 100))))
    rc = cuda_fail(r, "cuFuncSetAttribute(carveout)");
  if (!rc && c->smem > 48u * 1024u &&
      ((r = gpu.cu->cuFuncSetAttribute(c->mod.encode, H5FZ_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)c->smem)) ||
       (r = gpu.cu->cuFuncSetAttribute(c->mod.decode, H5FZ_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)c->smem))))
    rc = cuda_fail(r, "cuFuncSetAttribute(shared memory)");
  if (!rc && p->n_ops > 2 && p->ops[1] == H5FZ_OP_LORENZO_ND &&
      !(c->mod.lnd_cost && c->mod.lnd_carry && c->mod.lnd_xfix && c->mod.lnd_yscan && c->mod.lnd_zscan &&
        c->mod.lnd_dequant))
    rc = h5fz_fail(H5FZ_ERR_DEVICE, "the module of a lorenzo_nd chain lacks its chunk-level kernels");
  if (rc) {
    snprintf(c->reason, sizeof c->reason, "%s", h5fz_last_error());
    return rc;
  }
  gpu.stats.last_jit_ms = ms;
  gpu.stats.last_jit_source = (int)from;
  c->usable = 1;
  *out = c;
  return H5FZ_OK;
}

static int launch(CUfunction f, unsigned grid, unsigned block, unsigned smem, void **args, const char *what)
{
  CUresult r = gpu.cu->cuLaunchKernel(f, grid, 1, 1, block, 1, 1, smem, gpu.stream, args, NULL);
  return r ? cuda_fail(r, what) : H5FZ_OK;
}

static int sync_stream(const char *what)
{
  CUresult r = gpu.cu->cuStreamSynchronize(gpu.stream);
  return r ? cuda_fail(r, what) : H5FZ_OK;
}

#define TRY(x)             \
  do {                     \
    if ((rc = (x))) goto out; \
  } while (0)
#define TRY_CU(x, what)                       \
  do {                                        \
    CUresult r_ = (x);                        \
    if (r_) { rc = cuda_fail(r_, what); goto out; } \
  } while (0)

/* The fused encode, the tail scan and the tail pack, on gpu.in (device). */
static int launch_encode(const chain_entry *c, const h5fz_chunk_plan *p)
{
  int rc;
  uint32_t n_sub = p->n_subchunks, slot = p->subchunk_elems * p->esize;
  unsigned long long n_ull = p->n_elements;
  double eb = p->quant.eb, step = p->quant.step, inv = p->quant.inv_step;
  int mode = p->quant.mode;
  unsigned row = p->row;
  h5fz_lnd_geom lnd = p->lnd; /* lorenzo_nd: its encode picks the predictor from the cost pass */
  void *cost_args[] = {&gpu.in.ptr, &lnd, &eb, &step, &inv, &mode, &gpu.lnd.ptr};
  if (h5fz_plan_has_lnd(p) && (rc = launch(c->mod.lnd_cost, H5FZ_LND_COST_PARTS, (unsigned)c->threads, 0, cost_args,
                                           "lorenzo_nd cost kernel")))
    return rc;
  void *enc_args[] = {&gpu.in.ptr, &n_ull, &eb, &step, &inv, &mode, &row, &gpu.slots.ptr, &gpu.entries.ptr,
                      &gpu.opos.ptr, &gpu.oval.ptr, &gpu.ocount.ptr, &lnd, &gpu.lnd.ptr};
  if ((rc = launch(c->mod.encode, n_sub, (unsigned)c->threads, (unsigned)c->smem, enc_args,
             "encode kernel"))) return rc;
  void *scan_args[] = {&gpu.entries.ptr, &gpu.ocount.ptr, &n_sub, &gpu.offsets.ptr, &gpu.ooffsets.ptr,
                       &gpu.totals.ptr};
  if ((rc = launch(c->mod.tail_scan, 1, 1024, 0, scan_args, "tail scan kernel"))) return rc;
  uint32_t sub_elems = p->subchunk_elems, esize = p->esize;
  void *pack_args[] = {&gpu.slots.ptr, &slot, &gpu.entries.ptr, &gpu.offsets.ptr, &gpu.opos.ptr,
                       &gpu.oval.ptr, &gpu.ocount.ptr, &gpu.ooffsets.ptr, &sub_elems, &esize,
                       &gpu.packed.ptr, &gpu.gpos.ptr, &gpu.gval.ptr};
  if ((rc = launch(c->mod.tail_pack, n_sub, TAIL_PACK_THREADS, 0, pack_args, "tail pack kernel"))) return rc;

  return H5FZ_OK;
}

/* lorenzo_nd, after the fused decode left each sub-chunk's x prefix sums in
 * out as words and its carry information in gpu.lnd: the carry along x,
 * the sums along y and z, and the quantizer decode in place. */
static int launch_lnd_finish(const chain_entry *c, const h5fz_chunk_plan *p, CUdeviceptr out)
{
  int rc;
  h5fz_lnd_geom g = p->lnd;
  uint32_t n_sub = p->n_subchunks, yl = h5fz_lnd_ylines(&g), zl = h5fz_lnd_zlines(&g);
  double eb = p->quant.eb, step = p->quant.step, inv = p->quant.inv_step;
  int mode = p->quant.mode;
  unsigned threads = (unsigned)c->threads;
  void *carry_args[] = {&gpu.lnd.ptr, &n_sub};
  void *fix_args[] = {&out, &g, &gpu.lnd.ptr};
  void *y_args[] = {&out, &g, &yl}, *z_args[] = {&out, &g, &zl};
  void *dq_args[] = {&out, &g, &eb, &step, &inv, &mode};
  if ((rc = launch(c->mod.lnd_carry, 1, 32, 0, carry_args, "lorenzo_nd carry kernel")) ||
      (rc = launch(c->mod.lnd_xfix, n_sub, threads, 0, fix_args, "lorenzo_nd x kernel")) ||
      (yl && (rc = launch(c->mod.lnd_yscan, (yl + 255u) / 256u, 256, 0, y_args, "lorenzo_nd y kernel"))) ||
      (zl && (rc = launch(c->mod.lnd_zscan, (zl + 255u) / 256u, 256, 0, z_args, "lorenzo_nd z kernel"))))
    return rc;
  return launch(c->mod.lnd_dequant, n_sub, threads, 0, dq_args, "lorenzo_nd quantizer decode kernel");
}

/* The fused decode of the packed payload already on the device into out. */
static int launch_decode(const chain_entry *c, const h5fz_chunk_plan *p, CUdeviceptr out)
{
  unsigned long long n_ull = p->n_elements;
  double eb = p->quant.eb, step = p->quant.step, inv = p->quant.inv_step;
  int mode = p->quant.mode;
  unsigned row = p->row;
  h5fz_lnd_geom lnd = p->lnd;
  void *args[] = {&gpu.packed.ptr, &gpu.offsets.ptr, &gpu.entries.ptr, &n_ull, &eb, &step, &inv, &mode, &row, &out,
                  &gpu.status.ptr, &lnd, &gpu.lnd.ptr};
  int rc = launch(c->mod.decode, p->n_subchunks, (unsigned)c->threads, (unsigned)c->smem, args, "decode kernel");
  return rc || !h5fz_plan_has_lnd(p) ? rc : launch_lnd_finish(c, p, out);
}

/* Device and pinned buffers for encoding a chunk of plan p. */
static int grow_encode_buffers(const h5fz_chunk_plan *p)
{
  int rc;
  uint32_t n_sub = p->n_subchunks, slot = p->subchunk_elems * p->esize;
  size_t data_bytes = (size_t)p->n_elements * p->esize, n = (size_t)p->n_elements;
  TRY(grow(&gpu.in, data_bytes));
  TRY(grow(&gpu.slots, (size_t)n_sub * slot));
  TRY(grow(&gpu.entries, (size_t)n_sub * 4u));
  TRY(grow(&gpu.ocount, (size_t)n_sub * 4u));
  TRY(grow(&gpu.opos, n * 4u));
  TRY(grow(&gpu.oval, n * p->esize));
  TRY(grow(&gpu.offsets, (size_t)n_sub * 8u));
  TRY(grow(&gpu.ooffsets, (size_t)n_sub * 4u));
  TRY(grow(&gpu.totals, 16u));
  TRY(grow(&gpu.packed, (size_t)n_sub * slot));
  TRY(grow(&gpu.gpos, n * 4u));
  TRY(grow(&gpu.gval, n * p->esize));
  /* the pinned buffer stages the input, then holds what comes back */
  size_t back = 16u + (size_t)n_sub * 4u + (size_t)n_sub * slot + n * (4u + p->esize);
  TRY(grow_pinned(data_bytes > back ? data_bytes : back));
  TRY(grow(&gpu.status, 4u));
  /* the cost sums, and 2 words per sub-chunk for a decode after it (h5fz_gpu_time_kernels) */
  TRY(grow(&gpu.lnd, (size_t)n_sub * 16u > 24u * H5FZ_LND_COST_PARTS ? (size_t)n_sub * 16u : 24u * H5FZ_LND_COST_PARTS));
out:
  return rc;
}

static int encode_locked(const h5fz_chunk_plan *p, h5fz_header *h, const uint8_t *in, size_t in_bytes,
                         void **out_buf, size_t *out_bytes)
{
  int rc;
  chain_entry *c;
  TRY(get_chain(p, &c));
  TRY(grow_encode_buffers(p));
  uint32_t n_sub = p->n_subchunks, slot = p->subchunk_elems * p->esize;
  size_t data_bytes = (size_t)p->n_elements * p->esize, n = (size_t)p->n_elements;
  memcpy(gpu.pinned, in, data_bytes);
  TRY_CU(gpu.cu->cuMemcpyHtoDAsync(gpu.in.ptr, gpu.pinned, data_bytes, gpu.stream), "copy chunk to GPU");

  TRY(launch_encode(c, p));

  uint8_t *host = gpu.pinned;
  unsigned long long *totals = (unsigned long long *)host;
  uint32_t *entries = (uint32_t *)(host + 16);
  uint8_t *payload = host + 16 + (size_t)n_sub * 4u;
  TRY_CU(gpu.cu->cuMemcpyDtoHAsync(totals, gpu.totals.ptr, 16u, gpu.stream), "copy sizes from GPU");
  TRY_CU(gpu.cu->cuMemcpyDtoHAsync(entries, gpu.entries.ptr, (size_t)n_sub * 4u, gpu.stream), "copy sizes from GPU");
  uint64_t costs[3u * H5FZ_LND_COST_PARTS];
  if (h5fz_plan_has_lnd(p))
    TRY_CU(gpu.cu->cuMemcpyDtoHAsync(costs, gpu.lnd.ptr, sizeof costs, gpu.stream), "copy costs from GPU");
  TRY(sync_stream("encode"));
  /* the predictor each block of the encode chose from the same sums */
  if (h5fz_plan_has_lnd(p)) h->predictor = (uint8_t)h5fz_lnd_choose(costs, H5FZ_LND_COST_PARTS, p->lnd.dim);
  size_t payload_bytes = totals[0], n_out = totals[1];
  if (payload_bytes > (size_t)n_sub * slot || n_out > n) {
    rc = h5fz_fail(H5FZ_ERR_DEVICE, "GPU encode returned impossible sizes");
    goto out;
  }
  uint32_t *pos = (uint32_t *)(payload + payload_bytes + (4u - payload_bytes % 4u) % 4u);
  uint8_t *vals = (uint8_t *)(pos + n_out);
  TRY_CU(gpu.cu->cuMemcpyDtoHAsync(payload, gpu.packed.ptr, payload_bytes, gpu.stream), "copy payload from GPU");
  if (n_out) {
    TRY_CU(gpu.cu->cuMemcpyDtoHAsync(pos, gpu.gpos.ptr, n_out * 4u, gpu.stream), "copy outliers from GPU");
    TRY_CU(gpu.cu->cuMemcpyDtoHAsync(vals, gpu.gval.ptr, n_out * p->esize, gpu.stream), "copy outliers from GPU");
  }
  TRY(sync_stream("encode copies"));
  h->n_outliers = (uint32_t)n_out;
  h5fz_payload pl = {payload, 0, entries};
  rc = h5fz_container_write(h, &pl, pos, vals, in, in_bytes, out_buf, out_bytes);
  gpu.stats.chunks_encoded++;
out:
  return rc;
}

static int decode_locked(const h5fz_chunk_plan *p, const uint32_t *entries, const uint8_t *payload,
                         size_t payload_bytes, const uint64_t *offsets, uint8_t *values)
{
  int rc;
  chain_entry *c;
  TRY(get_chain(p, &c));
  uint32_t n_sub = p->n_subchunks;
  size_t data_bytes = (size_t)p->n_elements * p->esize;
  size_t up = payload_bytes + (size_t)n_sub * 12u + 16u;
  TRY(grow(&gpu.packed, payload_bytes + 1u));
  TRY(grow(&gpu.entries, (size_t)n_sub * 4u));
  TRY(grow(&gpu.offsets, (size_t)n_sub * 8u));
  TRY(grow(&gpu.in, data_bytes));
  TRY(grow(&gpu.status, 4u));
  TRY(grow(&gpu.lnd, (size_t)n_sub * 16u));
  TRY(grow_pinned(up > data_bytes ? up : data_bytes));
  uint8_t *host = gpu.pinned;
  memcpy(host, offsets, (size_t)n_sub * 8u);
  memcpy(host + (size_t)n_sub * 8u, entries, (size_t)n_sub * 4u);
  memcpy(host + (size_t)n_sub * 12u, payload, payload_bytes);
  TRY_CU(gpu.cu->cuMemcpyHtoDAsync(gpu.offsets.ptr, host, (size_t)n_sub * 8u, gpu.stream), "copy to GPU");
  TRY_CU(gpu.cu->cuMemcpyHtoDAsync(gpu.entries.ptr, host + (size_t)n_sub * 8u, (size_t)n_sub * 4u, gpu.stream), "copy to GPU");
  TRY_CU(gpu.cu->cuMemcpyHtoDAsync(gpu.packed.ptr, host + (size_t)n_sub * 12u, payload_bytes, gpu.stream), "copy to GPU");
  TRY_CU(gpu.cu->cuMemsetD8Async(gpu.status.ptr, 0, 4u, gpu.stream), "clear status");
  TRY(launch_decode(c, p, gpu.in.ptr));
  int status = 0;
  TRY_CU(gpu.cu->cuMemcpyDtoHAsync(host, gpu.in.ptr, data_bytes, gpu.stream), "copy values from GPU");
  TRY_CU(gpu.cu->cuMemcpyDtoHAsync(&status, gpu.status.ptr, 4u, gpu.stream), "copy status from GPU");
  TRY(sync_stream("decode"));
  if (status) {
    rc = h5fz_fail(H5FZ_ERR_CORRUPT, "sub-chunk %d: RZE stream is inconsistent", status - 1);
    goto out;
  }
  memcpy(values, host, data_bytes);
  gpu.stats.chunks_decoded++;
out:
  return rc;
}

int h5fz_gpu_encode_chunk(const h5fz_chunk_plan *p, h5fz_header *h, const uint8_t *in, size_t in_bytes,
                          void **out, size_t *out_bytes)
{
  pthread_mutex_lock(&gpu.lock);
  int rc = ensure_init();
  if (!rc) rc = encode_locked(p, h, in, in_bytes, out, out_bytes);
  pthread_mutex_unlock(&gpu.lock);
  return rc;
}

int h5fz_gpu_decode_chunk(const h5fz_chunk_plan *p, const uint32_t *entries, const uint8_t *payload,
                          size_t payload_bytes, const uint64_t *offsets, uint8_t *values)
{
  pthread_mutex_lock(&gpu.lock);
  int rc = ensure_init();
  if (!rc) rc = decode_locked(p, entries, payload, payload_bytes, offsets, values);
  pthread_mutex_unlock(&gpu.lock);
  return rc;
}

int h5fz_gpu_route(const h5fz_chunk_plan *p, size_t chunk_bytes, int forced)
{
  pthread_mutex_lock(&gpu.lock);
  int rc = ensure_init();
  chain_entry *c = NULL;
  if (!rc) rc = get_chain(p, &c);
  int use = 0;
  if (!rc) use = forced || h5fz_plan_route_for_chunk(&c->plan, chunk_bytes) == H5FZ_EXEC_GPU;
  pthread_mutex_unlock(&gpu.lock);
  return rc ? rc : use;
}

int h5fz_gpu_plan_for(const h5fz_chunk_plan *p, void *plan_out)
{
  pthread_mutex_lock(&gpu.lock);
  int rc = ensure_init();
  chain_entry *c = NULL;
  if (!rc) rc = get_chain(p, &c);
  if (!rc) *(h5fz_plan *)plan_out = c->plan;
  pthread_mutex_unlock(&gpu.lock);
  return rc;
}

void h5fz_gpu_get_stats(h5fz_gpu_stats *stats)
{
  pthread_mutex_lock(&gpu.lock);
  *stats = gpu.stats;
  pthread_mutex_unlock(&gpu.lock);
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
  dbuf *out = &gpu.slots; /* decode target: the slots are free once packed */
  double *te = calloc((size_t)reps, sizeof *te), *td = calloc((size_t)reps, sizeof *td);
  CUevent e0 = NULL, e1 = NULL;
  if (!te || !td) {
    rc = h5fz_fail(H5FZ_ERR_NOMEM, "timing buffers");
    goto out;
  }
  TRY(get_chain(p, &c));
  TRY(grow_encode_buffers(p));
  size_t data_bytes = (size_t)p->n_elements * p->esize;
  TRY_CU(gpu.cu->cuMemcpyHtoDAsync(gpu.in.ptr, in, data_bytes, gpu.stream), "copy to GPU");
  TRY_CU(gpu.cu->cuEventCreate(&e0, 0), "cuEventCreate");
  TRY_CU(gpu.cu->cuEventCreate(&e1, 0), "cuEventCreate");
  for (int r = -1; r < reps; r++) { /* r = -1 warms up */
    TRY_CU(gpu.cu->cuEventRecord(e0, gpu.stream), "cuEventRecord");
    TRY(launch_encode(c, p));
    TRY_CU(gpu.cu->cuEventRecord(e1, gpu.stream), "cuEventRecord");
    TRY_CU(gpu.cu->cuEventSynchronize(e1), "cuEventSynchronize");
    float ms = 0;
    TRY_CU(gpu.cu->cuEventElapsedTime(&ms, e0, e1), "cuEventElapsedTime");
    if (r >= 0) te[r] = ms;
  }
  unsigned long long totals[2];
  TRY_CU(gpu.cu->cuMemcpyDtoHAsync(totals, gpu.totals.ptr, 16u, gpu.stream), "copy totals");
  TRY(sync_stream("timing"));
  *payload_bytes = totals[0];
  TRY(grow(out, data_bytes));
  for (int r = -1; r < reps; r++) {
    TRY_CU(gpu.cu->cuEventRecord(e0, gpu.stream), "cuEventRecord");
    TRY(launch_decode(c, p, out->ptr));
    TRY_CU(gpu.cu->cuEventRecord(e1, gpu.stream), "cuEventRecord");
    TRY_CU(gpu.cu->cuEventSynchronize(e1), "cuEventSynchronize");
    float ms = 0;
    TRY_CU(gpu.cu->cuEventElapsedTime(&ms, e0, e1), "cuEventElapsedTime");
    if (r >= 0) td[r] = ms;
  }
  qsort(te, (size_t)reps, sizeof *te, compare_doubles);
  qsort(td, (size_t)reps, sizeof *td, compare_doubles);
  *enc_ms = te[reps / 2];
  *dec_ms = td[reps / 2];
out:
  if (e0) gpu.cu->cuEventDestroy(e0);
  if (e1) gpu.cu->cuEventDestroy(e1);
  free(te);
  free(td);
  return rc;
}

int h5fz_gpu_time_kernels(const h5fz_chunk_plan *p, const uint8_t *in, int reps, double *enc_ms, double *dec_ms,
                          size_t *payload_bytes)
{
  if (reps < 1) return h5fz_fail(H5FZ_ERR_ARG, "reps must be >= 1");
  pthread_mutex_lock(&gpu.lock);
  int rc = ensure_init();
  if (!rc) rc = time_locked(p, in, reps, enc_ms, dec_ms, payload_bytes);
  pthread_mutex_unlock(&gpu.lock);
  return rc;
}
