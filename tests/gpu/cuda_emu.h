/*
 * cuda_emu.h - just enough of CUDA to run device_ops/ device code on a CPU
 * for tests: one thread block at a time, each CUDA thread a coroutine
 * (ucontext), warp collectives (shuffles, ballots, reductions) that wait for
 * all 32 lanes and check they called the same collective with a full mask,
 * block barriers, and a random interleaving of the threads between them.
 * What it catches that a GPU run may not: a missing barrier (another warp
 * reads what is not yet written), divergent collectives, a deadlock, and,
 * with the caller filling shared memory with noise, reads of shared memory
 * never written in the block. It does not model timing or memory
 * coalescing; arithmetic is the host's IEEE double and float (the device
 * code uses the _rn intrinsics, so results are the same).
 *
 * Include it before the op headers, in a translation unit of its own (the
 * op headers then compile their GPU sections: H5FZ_ON_GPU is 1). The
 * intrinsics are macros or static functions here; the scheduler is in
 * cuda_emu.c.
 */
#ifndef CUDA_EMU_H
#define CUDA_EMU_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#define __CUDACC__ 1
#define __CUDA_ARCH__ 900 /* the warp-fused kernels need sm_80 or newer */
#define __device__
#define __forceinline__ inline

typedef struct {
  unsigned x, y, z, w;
} uint4;

typedef struct {
  unsigned x, y, z;
} emu_dim3;

/* The running thread's index and the block's size. */
unsigned emu_tid(void);
unsigned emu_nthreads(void);
#define threadIdx ((emu_dim3){emu_tid(), 0u, 0u})
#define blockDim ((emu_dim3){emu_nthreads(), 1u, 1u})

/* A kernel's grid: the block emu_run_block runs next is block emu_block_idx
 * of emu_grid_dim (set them before each block). Kernels are plain
 * functions (H5FZ_KERNEL), their __shared__ arrays static storage. */
extern unsigned emu_block_idx, emu_grid_dim;
#define blockIdx ((emu_dim3){emu_block_idx, 0u, 0u})
#define gridDim ((emu_dim3){emu_grid_dim, 1u, 1u})
#define __global__
#define __shared__ static
#define __launch_bounds__(...)
#define __ldg(p) (*(p))

enum { EMU_SHFL = 1, EMU_SHFL_UP, EMU_SHFL_XOR, EMU_BALLOT, EMU_REDUCE_OR, EMU_REDUCE_ADD };

/* One lane's part in a warp collective of kind (EMU_*): returns this lane's
 * result once all 32 lanes have arrived (v: the lane's value, arg: source
 * lane, delta or xor mask). A mask other than all lanes, or lanes in
 * different collectives, count as errors (emu_errors). */
uint64_t emu_collective(int kind, uint64_t v, int arg, unsigned mask);

/* __syncthreads / __syncthreads_or: returns the OR of pred over the block. */
int emu_barrier(int pred);

/* Run fn(arg) as a block of n threads (a multiple of 32, at most 1024);
 * returns when every thread has returned (or, after a deadlock, with an
 * error counted). Shared memory is whatever static storage fn uses. */
void emu_run_block(unsigned n, void (*fn)(void *), void *arg);

/* Errors seen so far: divergent or partial-mask collectives, deadlocks. */
int emu_errors(void);

/* A pseudo-random number (xorshift), for schedules and test data. */
uint32_t emu_random(void);

static inline void __syncthreads(void) { (void)emu_barrier(0); }
static inline int __syncthreads_or(int p) { return emu_barrier(p != 0); }

/* shuffles keep the type of their value (32- or 64-bit words here) */
#define __shfl_sync(m, v, s) ((__typeof__(v))emu_collective(EMU_SHFL, (uint64_t)(v), (int)(s), (m)))
#define __shfl_up_sync(m, v, d) ((__typeof__(v))emu_collective(EMU_SHFL_UP, (uint64_t)(v), (int)(d), (m)))
#define __shfl_xor_sync(m, v, d) ((__typeof__(v))emu_collective(EMU_SHFL_XOR, (uint64_t)(v), (int)(d), (m)))
#define __ballot_sync(m, p) ((unsigned)emu_collective(EMU_BALLOT, (uint64_t)((p) != 0), 0, (m)))
#define __reduce_or_sync(m, v) ((unsigned)emu_collective(EMU_REDUCE_OR, (uint64_t)(uint32_t)(v), 0, (m)))
#define __reduce_add_sync(m, v) ((unsigned)emu_collective(EMU_REDUCE_ADD, (uint64_t)(uint32_t)(v), 0, (m)))
/* a warp barrier: a collective of all 32 lanes (a ballot whose result is dropped) */
#define __syncwarp(...) ((void)emu_collective(EMU_BALLOT, 0u, 0, 0xffffffffu))

/* streaming loads and stores are plain ones here */
#define __ldcs(p) (*(p))
#define __stcs(p, v) ((void)(*(p) = (v)))

static inline int __popc(unsigned x) { return __builtin_popcount(x); }
static inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
static inline int __clz(int x) { return x ? __builtin_clz((unsigned)x) : 32; }
static inline int __clzll(long long x) { return x ? __builtin_clzll((unsigned long long)x) : 64; }
static inline int __ffsll(long long x) { return __builtin_ffsll(x); }
static inline unsigned __brev(unsigned x)
{
  unsigned r = 0;
  for (int k = 0; k < 32; k++) r |= ((x >> k) & 1u) << (31 - k);
  return r;
}
/* the block's threads are host threads: atomics of the host */
static inline unsigned atomicAdd(unsigned *p, unsigned v) { return __atomic_fetch_add(p, v, __ATOMIC_RELAXED); }
static inline unsigned atomicOr(unsigned *p, unsigned v) { return __atomic_fetch_or(p, v, __ATOMIC_RELAXED); }
static inline int atomicMax(int *p, int v)
{
  int old = __atomic_load_n(p, __ATOMIC_RELAXED);
  while (old < v && !__atomic_compare_exchange_n(p, &old, v, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {}
  return old;
}
static inline uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) { return (uint4){x, y, z, w}; }
static inline unsigned __float_as_uint(float x)
{
  unsigned u;
  memcpy(&u, &x, 4);
  return u;
}
static inline float __uint_as_float(unsigned u)
{
  float x;
  memcpy(&x, &u, 4);
  return x;
}
static inline long long __double_as_longlong(double x)
{
  long long u;
  memcpy(&u, &x, 8);
  return u;
}
static inline double __longlong_as_double(long long u)
{
  double x;
  memcpy(&x, &u, 8);
  return x;
}
static inline int __double2loint(double x) { return (int)(uint32_t)__double_as_longlong(x); }
/* one IEEE operation each, as the GPU's _rn intrinsics (the build has
 * -ffp-contract=off, so nothing is fused) */
static inline double __dadd_rn(double a, double b) { return a + b; }
static inline double __dsub_rn(double a, double b) { return a - b; }
static inline double __dmul_rn(double a, double b) { return a * b; }
static inline double __fma_rn(double a, double b, double c) { return fma(a, b, c); }
static inline float __double2float_rn(double a) { return (float)a; }
static inline unsigned __funnelshift_r(unsigned lo, unsigned hi, unsigned s)
{
  return (unsigned)((((uint64_t)hi << 32) | lo) >> (s & 31u));
}

#endif /* CUDA_EMU_H */
