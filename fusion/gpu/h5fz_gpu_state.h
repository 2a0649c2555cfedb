/*
 * h5fz_gpu_state.h - the GPU executor's process-wide state (one context,
 * a stream and a side stream, growable device buffers, the compiled chains) and the steps
 * that the per-chunk path (h5fz_gpu_exec.c) and the dataset API's batches
 * (h5fz_gpu_array.c) share. Callers hold g_gpu.lock around every use.
 */
#ifndef H5FZ_GPU_STATE_H
#define H5FZ_GPU_STATE_H

#include <pthread.h>

#include "h5fz_gpu.h"
#include "h5fz_jit.h"
#include "h5fz_planner.h"

#define TAIL_PACK_THREADS 256u /* 8 sub-chunks (a warp each) per block */
#define TAIL_GATHER_THREADS 256u     /* threads per block of h5fz_tail_gather */
#define TAIL_GATHER_BLOCKS_PER_SM 8u /* 2048 resident threads per SM */
#define TAIL_PARTS 1024u       /* sub-chunks per block of the tail reduce and scan (H5FZ_TAIL_THREADS) */
/* Bytes of g_gpu.totals for n sub-chunks: the two totals, then two sums per part. */
#define TAIL_TOTALS_BYTES(n) (16u + 16u * (((size_t)(n) + TAIL_PARTS - 1u) / TAIL_PARTS))
#define H5FZ_STAGE_MAX_PIECES 64

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
  int regs;                 /* register cap per thread (tuning or H5FZ_GPU_REGS) */
  int wf_warps;             /* warps per block of the warp-fused kernels (H5FZ_GPU_WF_WARPS) */
  int usable;               /* 0: the plan refused the GPU (why in reason) */
  char reason[256];
  h5fz_plan plan;
  h5fz_jit_module mod;
  size_t smem;
} chain_entry;

typedef struct {
  pthread_mutex_t lock;
  int init_done, usable;
  char why[512];
  const h5fz_cuda_api *cu;
  CUcontext ctx;
  CUstream stream;
  CUstream side;            /* a chunk's partial sub-chunk, beside the warp-fused encode */
  CUevent fork, join;       /* side waits for fork (on stream), stream for join (on side) */
  h5fz_device_desc dev;
  h5fz_registry reg;
  dbuf in, slots, entries, ocount, opos, oval, offsets, ooffsets, totals, packed, gpos, gval, status;
  dbuf lnd; /* lorenzo_nd: the cost pass's sums (encode), 2 words per sub-chunk (decode) */
  void *pinned;
  size_t pinned_cap;
  CUevent stage_ev[H5FZ_STAGE_MAX_PIECES]; /* one per piece of a staged copy back (created on first use) */
  int n_stage_ev;
  size_t device_bytes; /* held in the dbufs, for H5FZ_GPU_MEMORY_LIMIT */
  chain_entry chains[32];
  int n_chains;
  h5fz_gpu_stats stats;
} h5fz_gpu_state;

extern h5fz_gpu_state g_gpu;


/* In functions with `int rc` and an `out:` label: stop at the first
 * failing step (TRY: an h5fz status, TRY_CU: a CUresult, named by what). */
#define TRY(x)                \
  do {                        \
    if ((rc = (x))) goto out; \
  } while (0)
#define TRY_CU(x, what)                  \
  do {                                   \
    CUresult r_ = (x);                   \
    if (r_) {                            \
      rc = h5fz_gpu_cuda_fail(r_, what); \
      goto out;                          \
    }                                    \
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
/* The planned and compiled chain for p's ops, dtype and sub-chunk size. */
int h5fz_gpu_get_chain(const h5fz_chunk_plan *p, chain_entry **out);
int h5fz_gpu_launch(CUfunction f, unsigned grid, unsigned block, unsigned smem, void **args, const char *what);
int h5fz_gpu_sync_stream(const char *what);
/* The fused encode, tail scan and tail pack of n_chunks equal chunks of
 * plan p (p->n_elements values each) laid out back to back in g_gpu.in;
 * qchunk: device array of n_chunks absolute bounds, or 0 for p's bound. */
int h5fz_gpu_launch_encode(const chain_entry *c, const h5fz_chunk_plan *p, uint32_t n_chunks, CUdeviceptr qchunk);
/* The fused decode of n_chunks chunks from g_gpu.packed (offsets and entries
 * over all their sub-chunks) into out, chunks back to back. */
int h5fz_gpu_launch_decode(const chain_entry *c, const h5fz_chunk_plan *p, uint32_t n_chunks, CUdeviceptr qchunk,
                           CUdeviceptr out);

#endif /* H5FZ_GPU_STATE_H */
