/*
 * h5fz_gpu_context.c - the GPU executor's context: initialised once (the
 * driver through h5fz_cuda.c, the device description, the kernel registry,
 * the device's primary context, the streams), and its device and pinned
 * buffers, which grow and are reused across chunks.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "h5fz_device_query.h"
#include "h5fz_gpu_context.h"

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
  h5fz_settings_read(&g_gpu.settings, H5FZ_SETTINGS_GPU);
  int ordinal = g_gpu.settings.gpu_ordinal;
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
      (r = g_gpu.cu->cuCtxSetCurrent(g_gpu.ctx)) ||
      (r = g_gpu.cu->cuStreamCreate(&g_gpu.stream, 1 /* non-blocking */)) ||
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
  /* the tuning of this call (the ordinal stays the first call's) */
  h5fz_settings_read(&g_gpu.settings, H5FZ_SETTINGS_GPU);
  CUresult r = g_gpu.cu->cuCtxSetCurrent(g_gpu.ctx); /* the caller's thread may be new */
  return r ? h5fz_gpu_cuda_fail(r, "cuCtxSetCurrent") : H5FZ_OK;
}

/* Device memory h5fz may hold: H5FZ_GPU_MEMORY_LIMIT bytes (for a GPU
 * shared with the simulation), unlimited when unset. A chunk that needs
 * more fails over to the CPU executor like any device error. */
static size_t memory_limit(void)
{
  /* 0: not read yet (every call reads it in h5fz_gpu_ensure_init first) */
  return g_gpu.settings.gpu_memory_limit ? g_gpu.settings.gpu_memory_limit : (size_t)-1;
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
    return h5fz_fail(H5FZ_ERR_DEVICE,
                     "device memory limit H5FZ_GPU_MEMORY_LIMIT=%zu bytes reached (%zu held, %zu more needed)",
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

int h5fz_gpu_grow_encode(const h5fz_chunk_plan *p, uint64_t n_chunks)
{
  int rc;
  uint32_t slot = p->subchunk_elems * p->esize;
  uint64_t n_sub = n_chunks * p->n_subchunks, n = n_chunks * p->n_elements;
  TRY(h5fz_gpu_grow(&g_gpu.in, n * p->esize));
  TRY(h5fz_gpu_grow(&g_gpu.slots, n_sub * slot));
  TRY(h5fz_gpu_grow(&g_gpu.entries, n_sub * 4u));
  TRY(h5fz_gpu_grow(&g_gpu.ocount, n_sub * 4u));
  TRY(h5fz_gpu_grow(&g_gpu.opos, n * 4u));
  TRY(h5fz_gpu_grow(&g_gpu.oval, n * p->esize));
  TRY(h5fz_gpu_grow(&g_gpu.offsets, n_sub * 8u));
  TRY(h5fz_gpu_grow(&g_gpu.ooffsets, n_sub * 4u));
  TRY(h5fz_gpu_grow(&g_gpu.totals, TAIL_TOTALS_BYTES(n_sub)));
  TRY(h5fz_gpu_grow(&g_gpu.packed, n_sub * slot));
  TRY(h5fz_gpu_grow(&g_gpu.gpos, n * 4u));
  TRY(h5fz_gpu_grow(&g_gpu.gval, n * p->esize));
out:
  return rc;
}

int h5fz_gpu_grow_decode(const h5fz_chunk_plan *p, uint64_t n_chunks, size_t packed_bytes)
{
  int rc;
  uint64_t n_sub = n_chunks * p->n_subchunks;
  TRY(h5fz_gpu_grow(&g_gpu.packed, packed_bytes));
  TRY(h5fz_gpu_grow(&g_gpu.entries, n_sub * 4u));
  TRY(h5fz_gpu_grow(&g_gpu.offsets, n_sub * 8u));
  TRY(h5fz_gpu_grow(&g_gpu.in, n_chunks * p->n_elements * p->esize));
  TRY(h5fz_gpu_grow(&g_gpu.status, 4u));
out:
  return rc;
}
