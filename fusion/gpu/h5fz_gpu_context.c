/*
 * h5fz_gpu_context.c - the GPU executor's contexts, one per device ordinal:
 * made on first use and kept in a table indexed by ordinal; each is
 * initialised once (the driver through h5fz_cuda.c, the device
 * description, the kernel registry, the device's primary context, the
 * streams), and its device and pinned buffers grow and are reused across
 * chunks.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "h5fz_device_query.h"
#include "h5fz_gpu_context.h"
#include "h5fz_gpu_exit.h"

/* The contexts by ordinal; the table's lock guards only the table (each
 * context has its own lock, so two GPUs work at the same time). */
static h5fz_gpu_context *contexts[H5FZ_GPU_MAX_ORDINALS];
static pthread_mutex_t contexts_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

/* In the child of a fork: a CUDA context does not survive fork(), and a
 * lock another thread of the parent held (a warm-up, a chunk call) would
 * never be released. Each context's lock is made anew and a context made
 * in the parent is unusable here, with the reason (the chunks go to the
 * CPU executor under auto; H5FZ_DEVICE=gpu fails naming it). */
static void after_fork_in_child(void)
{
  pthread_mutex_init(&contexts_lock, NULL);
  for (int i = 0; i < H5FZ_GPU_MAX_ORDINALS; i++) {
    h5fz_gpu_context *gc = contexts[i];
    if (!gc) continue;
    pthread_mutex_init(&gc->lock, NULL);
    atomic_store(&gc->warming, 0);
    if (gc->init_done && gc->usable) {
      gc->usable = 0;
      snprintf(gc->why, sizeof gc->why, "%s",
               "the GPU context was made before fork(); a child process cannot use its parent's CUDA context");
    }
  }
}

static void watch_forks(void) { pthread_atfork(NULL, NULL, after_fork_in_child); }

h5fz_gpu_context *h5fz_gpu_context_of(int ordinal)
{
  if (ordinal < 0 || ordinal >= H5FZ_GPU_MAX_ORDINALS) {
    h5fz_fail(H5FZ_ERR_ARG, "GPU ordinal %d out of range 0..%d", ordinal, H5FZ_GPU_MAX_ORDINALS - 1);
    return NULL;
  }
  pthread_once(&fork_once, watch_forks);
  pthread_mutex_lock(&contexts_lock);
  h5fz_gpu_context *gc = contexts[ordinal];
  if (!gc && (gc = calloc(1, sizeof *gc))) {
    pthread_mutex_init(&gc->lock, NULL);
    gc->ordinal = ordinal;
    contexts[ordinal] = gc;
  }
  pthread_mutex_unlock(&contexts_lock);
  if (!gc) h5fz_fail(H5FZ_ERR_NOMEM, "GPU context of ordinal %d", ordinal);
  return gc;
}

int h5fz_gpu_cuda_fail(CUresult r, const char *what)
{
  return h5fz_fail(H5FZ_ERR_DEVICE, "%s: %s (CUDA error %d)", what, h5fz_cuda_error_string(r), r);
}

static double now_ms(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

static void init_once(h5fz_gpu_context *gc)
{
  const char *why;
  double t0 = now_ms();
  gc->init_done = 1;
  gc->cu = h5fz_cuda_get(&why);
  if (!gc->cu) {
    snprintf(gc->why, sizeof gc->why, "%s", why);
    return;
  }
  h5fz_gpu_exit_after_driver_step(); /* libcuda loaded: exit waits for the warm-ups before the driver goes */
  CUresult r = gc->cu->cuInit(0);
  h5fz_gpu_exit_after_driver_step(); /* the same after cuInit */
  gc->stats.init_cuinit_ms = now_ms() - t0;
  if (r) {
    snprintf(gc->why, sizeof gc->why, "cuInit failed: %s", h5fz_cuda_error_string(r));
    return;
  }
  int ordinal = gc->ordinal;
  char why2[256] = "", reg_path[H5FZ_SETTINGS_VALUE_MAX];
  if (h5fz_device_detect(ordinal, &gc->dev, why2, sizeof why2) || !gc->dev.present) {
    snprintf(gc->why, sizeof gc->why, "no usable GPU: %s", why2[0] ? why2 : gc->dev.absent_reason);
    return;
  }
  h5fz_nvrtc_query(&gc->dev, why2, sizeof why2);
  h5fz_gpu_exit_after_driver_step(); /* the same once NVRTC is loaded (its own exit handlers) */
  if (h5fz_registry_load_default(h5fz_settings_value("H5FZ_REGISTRY", reg_path, sizeof reg_path), &gc->reg, why2,
                                 sizeof why2)) {
    snprintf(gc->why, sizeof gc->why, "kernel class registry: %s", why2);
    return;
  }
  CUdevice d;
  double t1 = now_ms();
  if ((r = gc->cu->cuDeviceGet(&d, ordinal)) || (r = gc->cu->cuDevicePrimaryCtxRetain(&gc->ctx, d)) ||
      (r = gc->cu->cuCtxSetCurrent(gc->ctx)) || (r = gc->cu->cuStreamCreate(&gc->stream, 1 /* non-blocking */)) ||
      (r = gc->cu->cuStreamCreate(&gc->side, 1)) ||
      (r = gc->cu->cuEventCreate(&gc->fork, 2 /* CU_EVENT_DISABLE_TIMING */)) ||
      (r = gc->cu->cuEventCreate(&gc->join, 2))) {
    snprintf(gc->why, sizeof gc->why, "CUDA context: %s", h5fz_cuda_error_string(r));
    return;
  }
  gc->stats.init_context_ms = now_ms() - t1;
  gc->stats.init_ms = now_ms() - t0;
  gc->usable = 1;
}

int h5fz_gpu_ensure_init(h5fz_gpu_context *gc)
{
  if (!gc->init_done) init_once(gc);
  if (!gc->usable) return h5fz_fail(H5FZ_ERR_DEVICE, "%s", gc->why);
  CUresult r = gc->cu->cuCtxSetCurrent(gc->ctx); /* the caller's thread may be new */
  return r ? h5fz_gpu_cuda_fail(r, "cuCtxSetCurrent") : H5FZ_OK;
}

int h5fz_gpu_enter(h5fz_gpu_context **out)
{
  /* the GPU group once for this call, from the process's snapshot (a test
   * or sweep that changes the tuning between calls reloads it), with the
   * calling thread's options over it; the ordinal picks the context */
  h5fz_settings s;
  h5fz_settings_read(&s, H5FZ_SETTINGS_GPU);
  h5fz_gpu_context *gc = h5fz_gpu_context_of(s.gpu_ordinal);
  *out = gc;
  if (!gc) return h5fz_fail(H5FZ_ERR_DEVICE, "GPU context: %s", h5fz_last_error());
  pthread_mutex_lock(&gc->lock);
  gc->settings = s;
  return h5fz_gpu_ensure_init(gc);
}

void h5fz_gpu_leave(h5fz_gpu_context *gc)
{
  if (gc) pthread_mutex_unlock(&gc->lock);
}

/* Device memory h5fz may hold: H5FZ_GPU_MEMORY_LIMIT bytes (for a GPU
 * shared with the simulation), unlimited when unset. A chunk that needs
 * more fails over to the CPU executor like any device error. */
static size_t memory_limit(const h5fz_gpu_context *gc)
{
  /* 0: not read yet (every call reads it in h5fz_gpu_enter first) */
  return gc->settings.gpu_memory_limit ? gc->settings.gpu_memory_limit : (size_t)-1;
}

int h5fz_gpu_grow(h5fz_gpu_context *gc, dbuf *b, size_t bytes)
{
  if (bytes <= b->cap) return H5FZ_OK;
  if (b->ptr) gc->cu->cuMemFree(b->ptr);
  gc->device_bytes -= b->cap;
  b->ptr = 0;
  b->cap = 0;
  size_t cap = bytes + bytes / 4 + 256;
  if (cap > memory_limit(gc) || gc->device_bytes > memory_limit(gc) - cap)
    return h5fz_fail(H5FZ_ERR_DEVICE,
                     "device memory limit H5FZ_GPU_MEMORY_LIMIT=%zu bytes reached (%zu held, %zu more needed)",
                     memory_limit(gc), gc->device_bytes, cap);
  CUresult r = gc->cu->cuMemAlloc(&b->ptr, cap);
  if (r) return h5fz_gpu_cuda_fail(r, "cuMemAlloc");
  b->cap = cap;
  gc->device_bytes += cap;
  return H5FZ_OK;
}

int h5fz_gpu_grow_pinned(h5fz_gpu_context *gc, size_t bytes)
{
  if (bytes <= gc->pinned_cap) return H5FZ_OK;
  if (gc->pinned) gc->cu->cuMemFreeHost(gc->pinned);
  gc->pinned = NULL;
  gc->pinned_cap = 0;
  size_t cap = bytes + bytes / 4 + 4096;
  CUresult r = gc->cu->cuMemAllocHost(&gc->pinned, cap);
  if (r) return h5fz_gpu_cuda_fail(r, "cuMemAllocHost");
  gc->pinned_cap = cap;
  return H5FZ_OK;
}

int h5fz_gpu_grow_encode(h5fz_gpu_context *gc, const h5fz_chunk_plan *p, uint64_t n_chunks)
{
  int rc;
  uint32_t slot = p->subchunk_elems * p->esize;
  uint64_t n_sub = n_chunks * p->n_subchunks, n = n_chunks * p->n_elements;
  TRY(h5fz_gpu_grow(gc, &gc->in, n * p->esize));
  TRY(h5fz_gpu_grow(gc, &gc->slots, n_sub * slot));
  TRY(h5fz_gpu_grow(gc, &gc->entries, n_sub * 4u));
  TRY(h5fz_gpu_grow(gc, &gc->ocount, n_sub * 4u));
  TRY(h5fz_gpu_grow(gc, &gc->opos, n * 4u));
  TRY(h5fz_gpu_grow(gc, &gc->oval, n * p->esize));
  TRY(h5fz_gpu_grow(gc, &gc->offsets, n_sub * 8u));
  TRY(h5fz_gpu_grow(gc, &gc->ooffsets, n_sub * 4u));
  TRY(h5fz_gpu_grow(gc, &gc->totals, TAIL_TOTALS_BYTES(n_sub)));
  TRY(h5fz_gpu_grow(gc, &gc->packed, n_sub * slot));
  TRY(h5fz_gpu_grow(gc, &gc->gpos, n * 4u));
  TRY(h5fz_gpu_grow(gc, &gc->gval, n * p->esize));
out:
  return rc;
}

int h5fz_gpu_grow_decode(h5fz_gpu_context *gc, const h5fz_chunk_plan *p, uint64_t n_chunks, size_t packed_bytes)
{
  int rc;
  uint64_t n_sub = n_chunks * p->n_subchunks;
  TRY(h5fz_gpu_grow(gc, &gc->packed, packed_bytes));
  TRY(h5fz_gpu_grow(gc, &gc->entries, n_sub * 4u));
  TRY(h5fz_gpu_grow(gc, &gc->offsets, n_sub * 8u));
  TRY(h5fz_gpu_grow(gc, &gc->in, n_chunks * p->n_elements * p->esize));
  TRY(h5fz_gpu_grow(gc, &gc->status, 4u));
out:
  return rc;
}
