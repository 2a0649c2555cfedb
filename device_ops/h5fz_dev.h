/*
 * h5fz_dev.h - what lets one op source serve both executors.
 *
 * Every op in device_ops/ is written once, in the SPMD style of a CUDA thread
 * block: a block of `nthreads` threads cooperates on one sub-chunk, thread
 * `tid` takes a contiguous share of the items, and block-wide prefix sums
 * give each thread its output offset. The CPU executor runs the very same
 * code with nthreads = 1 (the share is everything, the scan is trivial);
 * the GPU executor hands the same headers to NVRTC and runs them with a real
 * block. Because both sides evaluate the same expressions in the same order,
 * they write the same bytes (see docs/format.md, "Determinism").
 */
#ifndef H5FZ_DEV_H
#define H5FZ_DEV_H

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define H5FZ_ON_GPU 1
#define H5FZ_FN static __device__ __forceinline__
#else
#define H5FZ_ON_GPU 0
#define H5FZ_FN static inline
#endif

/* A fixed kernel of device_ops/ (not generated): C linkage for
 * cuModuleGetFunction; in C, the CPU emulator of the tests
 * (tests/gpu/cuda_emu.h) calls it as a function, block by block. */
#if defined(__CUDACC__) && defined(__cplusplus)
#define H5FZ_KERNEL extern "C" __global__
#else
#define H5FZ_KERNEL static
#endif

#if defined(__CUDACC_RTC__)
/* NVRTC has no C library headers: the few fixed-width types we need. */
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;
typedef int int32_t;
typedef long long int64_t;
#else
#include <math.h>
#include <stdint.h>
#include <string.h>
#endif

/* One thread's view of its block. On the CPU: {0, 1, NULL}. On the GPU the
 * scratch points to shared memory of at least H5FZ_SCAN_SCRATCH_WORDS u64. */
typedef struct {
  uint32_t tid;
  uint32_t nthreads;
  uint64_t *scan_scratch;
} h5fz_blk;

#define H5FZ_MAX_BLOCK_THREADS 1024u
#define H5FZ_SCAN_SCRATCH_WORDS (H5FZ_MAX_BLOCK_THREADS / 32u + 2u)

#if !H5FZ_ON_GPU && defined(H5FZ_TEST_BLOCK_THREADS)
/* Tests only (tests/core/core_block.h): a block of nthreads pthreads
 * that meet at a barrier, so that the share and scan logic of the ops runs
 * with several threads on a machine without a GPU. core_block.h defines these. */
#include <pthread.h>
extern pthread_barrier_t h5fz_test_barrier;
extern uint64_t h5fz_test_scan[H5FZ_TEST_BLOCK_THREADS];
#endif

H5FZ_FN void h5fz_blk_sync(const h5fz_blk *b)
{
#if H5FZ_ON_GPU
  (void)b;
  __syncthreads();
#elif defined(H5FZ_TEST_BLOCK_THREADS)
  if (b->nthreads > 1) pthread_barrier_wait(&h5fz_test_barrier);
#else
  (void)b;
#endif
}

/* This thread's contiguous share [*lo, *hi) of n items, shares rounded up to
 * a multiple of `align` items so that bit-level ops never split a byte. */
H5FZ_FN void h5fz_blk_share(const h5fz_blk *b, uint32_t n, uint32_t align,
                            uint32_t *lo, uint32_t *hi)
{
  uint32_t per = (n + b->nthreads - 1u) / b->nthreads;
  per = (per + align - 1u) / align * align;
  uint64_t l = (uint64_t)per * b->tid;
  uint64_t h = l + per;
  *lo = (uint32_t)(l < n ? l : n);
  *hi = (uint32_t)(h < n ? h : n);
}

/* The same with one item per step (align 1), shares of an odd number of
 * items: a warp's lanes walking their shares of 32-bit words in shared
 * memory then read 32 different banks at each step (shares of 64 words
 * put all lanes on one bank). The last threads may get no items. Returns
 * the share's size (thread t's share starts at t times it). */
H5FZ_FN uint32_t h5fz_blk_share_odd(const h5fz_blk *b, uint32_t n, uint32_t *lo, uint32_t *hi)
{
  uint32_t per = (n + b->nthreads - 1u) / b->nthreads;
  per |= b->nthreads > 1u ? 1u : 0u;
  uint64_t l = (uint64_t)per * b->tid, h = l + per;
  *lo = (uint32_t)(l < n ? l : n);
  *hi = (uint32_t)(h < n ? h : n);
  return per;
}

/* Elementwise ops walk the items strided over the threads (item i on
 * thread i mod nthreads): consecutive lanes touch consecutive words, so
 * shared memory sees no bank conflicts (a contiguous share of 8 words per
 * thread is an 8-way conflict on every access). On the CPU (one thread) it
 * is the plain loop. Ops whose result depends on the split (scans, ordered
 * outlier lists) use h5fz_blk_share instead. */
#define H5FZ_FOR_ITEMS(i, blk, n) for (uint32_t i = (blk)->tid; i < (n); i += (blk)->nthreads)

/* Block-wide exclusive prefix sum (wrapping, 64-bit) of one value per
 * thread; *total receives the sum over the block. Every thread of the block
 * must call it (it contains barriers on the GPU). */
H5FZ_FN uint64_t h5fz_blk_exscan(const h5fz_blk *b, uint64_t v, uint64_t *total)
{
#if H5FZ_ON_GPU
  uint64_t *s = b->scan_scratch;
  uint32_t lane = b->tid & 31u, warp = b->tid >> 5, nwarps = (b->nthreads + 31u) >> 5;
  uint64_t x = v;
  for (uint32_t d = 1; d < 32; d <<= 1) {
    uint64_t y = __shfl_up_sync(0xffffffffu, x, d);
    if (lane >= d) x += y;
  }
  __syncthreads();                 /* scratch may still be read by a previous scan */
  if (lane == 31u || b->tid == b->nthreads - 1u) s[warp] = x;
  __syncthreads();
  if (warp == 0) {
    uint64_t w = lane < nwarps ? s[lane] : 0;
    for (uint32_t d = 1; d < 32; d <<= 1) {
      uint64_t y = __shfl_up_sync(0xffffffffu, w, d);
      if (lane >= d) w += y;
    }
    if (lane < nwarps) s[lane] = w;  /* inclusive scan of warp totals */
  }
  __syncthreads();
  uint64_t warp_base = warp ? s[warp - 1u] : 0;
  *total = s[nwarps - 1u];
  return warp_base + x - v;
#elif defined(H5FZ_TEST_BLOCK_THREADS)
  if (b->nthreads == 1) {
    *total = v;
    return 0;
  }
  h5fz_blk_sync(b); /* the slots may still be read by a previous scan */
  h5fz_test_scan[b->tid] = v;
  h5fz_blk_sync(b);
  uint64_t before = 0, all = 0;
  for (uint32_t t = 0; t < b->nthreads; t++) {
    if (t < b->tid) before += h5fz_test_scan[t];
    all += h5fz_test_scan[t];
  }
  *total = all;
  return before;
#else
  (void)b;
  *total = v;
  return 0;
#endif
}

/* Block-wide copy of n bytes, src and dst 4-byte aligned: 16-byte pieces
 * strided over the threads (coalesced on the GPU), then the tail. Used to
 * stage a sub-chunk between global and shared memory. */
H5FZ_FN void h5fz_blk_copy(const h5fz_blk *b, const void *src, void *dst, uint32_t n)
{
#if H5FZ_ON_GPU
  uint32_t n16 = ((((uint64_t)src | (uint64_t)dst) & 15u) == 0) ? n / 16u : 0u;
  const uint4 *s16 = (const uint4 *)src;
  uint4 *d16 = (uint4 *)dst;
  for (uint32_t i = b->tid; i < n16; i += b->nthreads) d16[i] = s16[i];
  const uint32_t *s4 = (const uint32_t *)src;
  uint32_t *d4 = (uint32_t *)dst;
  for (uint32_t i = 4u * n16 + b->tid; i < n / 4u; i += b->nthreads) d4[i] = s4[i];
#else
  (void)b;
  memcpy(dst, src, n);
#endif
}

/* Block-wide copy of n bytes, any alignment (a compressed sub-chunk into
 * shared memory), then a barrier. */
H5FZ_FN void h5fz_blk_copy_bytes(const h5fz_blk *b, const uint8_t *src, uint8_t *dst, uint32_t n)
{
  for (uint32_t i = b->tid; i < n; i += b->nthreads) dst[i] = src[i];
  h5fz_blk_sync(b);
}

H5FZ_FN uint32_t h5fz_popcount8(uint32_t x)
{
#if H5FZ_ON_GPU
  return (uint32_t)__popc(x & 0xffu);
#else
  return (uint32_t)__builtin_popcount(x & 0xffu);
#endif
}

H5FZ_FN uint32_t h5fz_popcount64(uint64_t x)
{
#if H5FZ_ON_GPU
  return (uint32_t)__popcll(x);
#else
  return (uint32_t)__builtin_popcountll(x);
#endif
}

/* *p += v for the threads of a block sharing p (shared memory on the GPU,
 * the test blocks' host threads on the CPU); returns the old value. */
H5FZ_FN uint32_t h5fz_atomic_add_u32(uint32_t *p, uint32_t v)
{
#if H5FZ_ON_GPU
  return (uint32_t)atomicAdd((unsigned *)p, (unsigned)v);
#else
  return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
#endif
}

/* Bits of x without its leading zeros (0 for 0). */
H5FZ_FN uint32_t h5fz_bitlen64(uint64_t x)
{
#if H5FZ_ON_GPU
  return 64u - (uint32_t)__clzll((long long)x);
#else
  return x ? 64u - (uint32_t)__builtin_clzll(x) : 0u;
#endif
}

#endif /* H5FZ_DEV_H */
