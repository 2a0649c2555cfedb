/*
 * h5fz_gpu_context.h - the GPU executor's context (h5fz_gpu_context.c): the
 * CUDA context of the device (its primary one), a stream and a side
 * stream, the device description and kernel registry, and the growable
 * device and pinned buffers that the per-chunk path (h5fz_gpu_exec.c) and
 * the batches (h5fz_gpu_array.c) share, sized by one function per
 * direction. Callers hold g_gpu.lock around every use. The compiled chains
 * are h5fz_gpu_chain.c's.
 */
#ifndef H5FZ_GPU_CONTEXT_H
#define H5FZ_GPU_CONTEXT_H

#include <pthread.h>

#include "h5fz_cuda.h"
#include "h5fz_gpu.h"
#include "h5fz_planner.h"
#include "h5fz_settings.h"

#define TAIL_PACK_THREADS 256u       /* 8 sub-chunks (a warp each) per block */
#define TAIL_GATHER_THREADS 256u     /* threads per block of h5fz_tail_gather */
#define TAIL_GATHER_BLOCKS_PER_SM 8u /* 2048 resident threads per SM */
#define TAIL_PARTS 1024u             /* sub-chunks per block of the tail reduce and scan (H5FZ_TAIL_THREADS) */
/* Bytes of g_gpu.totals for n sub-chunks: the two totals, then two sums per part. */
#define TAIL_TOTALS_BYTES(n) (16u + 16u * (((size_t)(n) + TAIL_PARTS - 1u) / TAIL_PARTS))
#define H5FZ_STAGE_MAX_PIECES 64

typedef struct {
  CUdeviceptr ptr;
  size_t cap;
} dbuf;

typedef struct {
  pthread_mutex_t lock;
  int init_done, usable;
  char why[512];
  const h5fz_cuda_api *cu;
  CUcontext ctx;
  CUstream stream;
  CUstream side;      /* a chunk's partial sub-chunk, beside the warp-fused encode */
  CUevent fork, join; /* side waits for fork (on stream), stream for join (on side) */
  h5fz_device_desc dev;
  h5fz_registry reg;
  dbuf in, slots, entries, ocount, opos, oval, offsets, ooffsets, totals, packed, gpos, gval, status;
  dbuf lnd; /* lorenzo_nd: the cost pass's sums (encode), 2 words per sub-chunk (decode) */
  void *pinned;
  size_t pinned_cap;
  CUevent stage_ev[H5FZ_STAGE_MAX_PIECES]; /* one per piece of a staged copy back (created on first use) */
  int n_stage_ev;
  size_t device_bytes; /* held in the dbufs, for H5FZ_GPU_MEMORY_LIMIT */
  h5fz_gpu_stats stats;
  h5fz_settings settings; /* the GPU group, read by h5fz_gpu_ensure_init for each call */
} h5fz_gpu_state;

extern h5fz_gpu_state g_gpu;

/* In functions with `int rc` and an `out:` label: stop at the first
 * failing step (TRY: an h5fz status, TRY_CU: a CUresult, named by what). */
#define TRY(x)                                                                                                         \
  do {                                                                                                                 \
    if ((rc = (x))) goto out;                                                                                          \
  } while (0)
#define TRY_CU(x, what)                                                                                                \
  do {                                                                                                                 \
    CUresult r_ = (x);                                                                                                 \
    if (r_) {                                                                                                          \
      rc = h5fz_gpu_cuda_fail(r_, what);                                                                               \
      goto out;                                                                                                        \
    }                                                                                                                  \
  } while (0)

/* H5FZ_ERR_DEVICE with the CUDA error's name. */
int h5fz_gpu_cuda_fail(CUresult r, const char *what);
/* Initialise once (driver, device, registry, context, stream) and make the
 * context current on this thread; H5FZ_ERR_DEVICE with the reason. */
int h5fz_gpu_ensure_init(void);
/* Grow a device buffer to at least bytes (contents are not kept), within
 * H5FZ_GPU_MEMORY_LIMIT. */
int h5fz_gpu_grow(dbuf *b, size_t bytes);
/* Grow the pinned staging buffer g_gpu.pinned to at least bytes. */
int h5fz_gpu_grow_pinned(size_t bytes);
/* The device buffers of an encode of n_chunks equal chunks of plan p laid
 * out back to back (in, slots, sizes, outliers, tail totals, packed
 * payload, gathered outliers): the per-chunk path (n_chunks 1) and the
 * batches size them here, within H5FZ_GPU_MEMORY_LIMIT. */
int h5fz_gpu_grow_encode(const h5fz_chunk_plan *p, uint64_t n_chunks);

/* The device buffers of a decode of n_chunks chunks of plan p whose
 * payloads, back to back, take packed_bytes (the packed input, sizes and
 * offsets of every sub-chunk, the decoded values, the status word). */
int h5fz_gpu_grow_decode(const h5fz_chunk_plan *p, uint64_t n_chunks, size_t packed_bytes);

#endif /* H5FZ_GPU_CONTEXT_H */
