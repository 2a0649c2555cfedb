/*
 * h5fz_gpu_context.h - the GPU executor's contexts (h5fz_gpu_context.c),
 * one per device ordinal, created on first use and kept for the process:
 * each holds its own lock, the CUDA context of its device (the primary
 * one), a stream and a side stream, the device description and kernel
 * registry, the growable device and pinned buffers that the per-chunk path
 * (h5fz_gpu_exec.c) and the batches (h5fz_gpu_array_*.c) share (sized by
 * one function per direction), the batches' own staging buffers, the
 * compiled chains (h5fz_gpu_chain.c) and the counters. Every function that
 * works on a context takes it as its first argument; callers hold its lock
 * (h5fz_gpu_enter .. h5fz_gpu_leave) around every use.
 */
#ifndef H5FZ_GPU_CONTEXT_H
#define H5FZ_GPU_CONTEXT_H

#include <pthread.h>
#include <stdatomic.h>

#include "h5fz_cuda.h"
#include "h5fz_gpu.h"
#include "h5fz_planner.h"
#include "h5fz_settings.h"

#define TAIL_PACK_THREADS 256u       /* 8 sub-chunks (a warp each) per block */
#define TAIL_GATHER_THREADS 256u     /* threads per block of h5fz_tail_gather */
#define TAIL_GATHER_BLOCKS_PER_SM 8u /* 2048 resident threads per SM */
#define TAIL_PARTS 1024u             /* sub-chunks per block of the tail reduce and scan (H5FZ_TAIL_THREADS) */
/* Bytes of a context's totals for n sub-chunks: the two totals, then two sums per part. */
#define TAIL_TOTALS_BYTES(n) (16u + 16u * (((size_t)(n) + TAIL_PARTS - 1u) / TAIL_PARTS))
#define H5FZ_STAGE_MAX_PIECES 64
#define H5FZ_GPU_MAX_ORDINALS 1024 /* H5FZ_GPU_ORDINAL is 0..1023 */

typedef struct {
  CUdeviceptr ptr;
  size_t cap;
} dbuf;

/* Device buffers and pinned memory of the batch path (h5fz_gpu_array_*.c),
 * beside the context's shared ones. */
typedef struct {
  dbuf qchunk, lohi, upos, uval, region;
  void *pin_in, *pin_back, *pin_status;
  size_t pin_in_cap, pin_back_cap, pin_status_cap;
} h5fz_batch_buffers;

struct h5fz_gpu_chain_table; /* h5fz_gpu_chain.c's */

typedef struct h5fz_gpu_context {
  pthread_mutex_t lock;
  int ordinal; /* the device's, as the driver numbers it (CUDA_VISIBLE_DEVICES applied) */
  int init_done, usable;
  atomic_int warming; /* a warm-up thread has this context (h5fz_gpu_warmup.c) */
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
  h5fz_batch_buffers batch;
  struct h5fz_gpu_chain_table *chains; /* planned and compiled in this context (h5fz_gpu_chain.c; made on first use) */
  h5fz_gpu_stats stats;
  h5fz_settings settings; /* the GPU group of the call that holds the lock (h5fz_gpu_enter) */
} h5fz_gpu_context;

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

/* The context of device ordinal (0 .. H5FZ_GPU_MAX_ORDINALS-1), created
 * (not yet initialised, unlocked) on first use and kept for the process
 * like the primary CUDA context it will hold; NULL with H5FZ_ERR_ARG or
 * H5FZ_ERR_NOMEM set when the ordinal is out of range or memory is out. */
h5fz_gpu_context *h5fz_gpu_context_of(int ordinal);

/* Start a call on the GPU: read the GPU settings group (H5FZ_GPU_*, once
 * for the call), take the context of their ordinal (H5FZ_GPU_ORDINAL, or
 * the node-local choice of h5fz_mpi_select_gpu), lock it, initialise it on
 * first use (driver, device, registry, primary context, streams) and make
 * its CUDA context current on this thread. *out receives the locked
 * context, or NULL when none could be made; the caller calls
 * h5fz_gpu_leave(*out) in every case. Returns H5FZ_OK, or H5FZ_ERR_DEVICE
 * with the reason the GPU is not usable. */
int h5fz_gpu_enter(h5fz_gpu_context **out);

/* Unlock a context h5fz_gpu_enter returned (NULL: nothing). */
void h5fz_gpu_leave(h5fz_gpu_context *gc);

/* Initialise gc once and make its CUDA context current on this thread
 * (gc locked by the caller); H5FZ_ERR_DEVICE with the reason. */
int h5fz_gpu_ensure_init(h5fz_gpu_context *gc);

/* Grow a device buffer of gc to at least bytes (contents are not kept),
 * within H5FZ_GPU_MEMORY_LIMIT. */
int h5fz_gpu_grow(h5fz_gpu_context *gc, dbuf *b, size_t bytes);
/* Grow gc's pinned staging buffer (gc->pinned) to at least bytes. */
int h5fz_gpu_grow_pinned(h5fz_gpu_context *gc, size_t bytes);
/* The device buffers of an encode of n_chunks equal chunks of plan p laid
 * out back to back (in, slots, sizes, outliers, tail totals, packed
 * payload, gathered outliers): the per-chunk path (n_chunks 1) and the
 * batches size them here, within H5FZ_GPU_MEMORY_LIMIT. */
int h5fz_gpu_grow_encode(h5fz_gpu_context *gc, const h5fz_chunk_plan *p, uint64_t n_chunks);

/* The device buffers of a decode of n_chunks chunks of plan p whose
 * payloads, back to back, take packed_bytes (the packed input, sizes and
 * offsets of every sub-chunk, the decoded values, the status word). */
int h5fz_gpu_grow_decode(h5fz_gpu_context *gc, const h5fz_chunk_plan *p, uint64_t n_chunks, size_t packed_bytes);

#endif /* H5FZ_GPU_CONTEXT_H */
