/*
 * h5fz_gpu_batch.h - the fixed kernels of the dataset-level API's batches
 * (GPU only): moving a batch of chunks of an array between its row-major layout and
 * the chunk-contiguous layout the fused kernels work on (with the fill
 * value in the padding of edge chunks, as HDF5 pads them for the filter),
 * the per-chunk value range of REL bounds, and patching decoded outliers.
 *
 * Chunks are numbered row-major over the array's chunk grid; a batch is
 * the chunks [first_chunk, first_chunk + n) laid out back to back, each
 * prod(chunk) values long, row-major inside.
 */
#ifndef H5FZ_GPU_BATCH_H
#define H5FZ_GPU_BATCH_H

#include "h5fz_dev.h"

#define H5FZ_BATCH_MAX_RANK 8u

/* Passed by value to the kernels; all 64-bit so host C and device C++
 * agree on the layout. */
typedef struct {
  unsigned long long rank;                        /* 1..H5FZ_BATCH_MAX_RANK */
  unsigned long long dims[H5FZ_BATCH_MAX_RANK];   /* array extent, slowest first */
  unsigned long long chunk[H5FZ_BATCH_MAX_RANK];  /* chunk dims */
  unsigned long long grid[H5FZ_BATCH_MAX_RANK];   /* chunks per dim */
  unsigned long long first_chunk;                 /* the batch's first chunk */
  unsigned long long base_elem;                   /* array index of the element the
                                                     kernels' array pointer points at
                                                     (0: the whole array is there) */
} h5fz_batch_geom;

/* Row r of the batch (rows of chunk[rank-1] values, r = chunk in batch *
 * rows_per_chunk + row in chunk): the array index of its first value and
 * how many of its values lie inside the array (0 when the row is all
 * padding). */
static __device__ __forceinline__ unsigned long long h5fz_batch_row(const h5fz_batch_geom *g, unsigned long long r,
                                                                    unsigned long long *inside)
{
  unsigned rank = (unsigned)g->rank, last = rank - 1u;
  unsigned long long rows_per_chunk = 1;
  for (unsigned d = 0; d < last; d++) rows_per_chunk *= g->chunk[d];
  unsigned long long c = r / rows_per_chunk, e = r - c * rows_per_chunk;
  unsigned long long lin = 0, stride = g->dims[last];
  c += g->first_chunk;
  unsigned long long cx = c % g->grid[last];
  c /= g->grid[last];
  unsigned long long x0 = cx * g->chunk[last];
  *inside = x0 >= g->dims[last] ? 0 : (g->dims[last] - x0 < g->chunk[last] ? g->dims[last] - x0 : g->chunk[last]);
  lin = x0;
  for (unsigned d = last; d-- > 0;) {
    unsigned long long ed = e % g->chunk[d], cd = c % g->grid[d];
    e /= g->chunk[d];
    c /= g->grid[d];
    unsigned long long pos = cd * g->chunk[d] + ed;
    if (pos >= g->dims[d]) *inside = 0;
    lin += pos * stride;
    stride *= g->dims[d];
  }
  return lin - g->base_elem;
}

/* One warp per row of the batch, lanes along the row: coalesced on both
 * sides. n_rows = chunks in the batch * rows per chunk. The gather (array
 * -> chunks, a row's padding filled with fill) and the scatter (chunks ->
 * array, the padding dropped) walk the rows alike: h5fz_batch_move_##W is
 * that walk, to_chunks the way the values go (a constant in each kernel
 * that inlines it). */
#define H5FZ_BATCH_MOVE(W, T)                                                                              \
  static __device__ __forceinline__ void h5fz_batch_move_##W(T *array, T *chunks, const h5fz_batch_geom *g, \
                                                             unsigned long long n_rows, int to_chunks,     \
                                                             T fill)                                       \
  {                                                                                                        \
    unsigned long long L = g->chunk[g->rank - 1];                                                          \
    unsigned lane = threadIdx.x & 31u;                                                                     \
    for (unsigned long long r = (blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x) / 32u;         \
         r < n_rows; r += (gridDim.x * (unsigned long long)blockDim.x) / 32u) {                            \
      unsigned long long inside, at = h5fz_batch_row(g, r, &inside);                                       \
      T *row = chunks + r * L;                                                                             \
      if (to_chunks)                                                                                       \
        for (unsigned long long x = lane; x < L; x += 32u) row[x] = x < inside ? array[at + x] : fill;     \
      else                                                                                                 \
        for (unsigned long long x = lane; x < inside; x += 32u) array[at + x] = row[x];                    \
    }                                                                                                      \
  }                                                                                                        \
  extern "C" __global__ void h5fz_gather_##W(const T *array, T *chunks, h5fz_batch_geom g,                 \
                                             unsigned long long n_rows, T fill)                            \
  {                                                                                                        \
    h5fz_batch_move_##W((T *)array, chunks, &g, n_rows, 1, fill); /* array only read */                    \
  }                                                                                                        \
  extern "C" __global__ void h5fz_scatter_##W(const T *chunks, T *array, h5fz_batch_geom g,                \
                                              unsigned long long n_rows)                                   \
  {                                                                                                        \
    h5fz_batch_move_##W(array, (T *)chunks, &g, n_rows, 0, (T)0); /* chunks only read */                   \
  }                                                                                                        \
  extern "C" __global__ void h5fz_fill_##W(T *dst, unsigned long long n, T fill)                          \
  {                                                                                                        \
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;          \
         i += gridDim.x * (unsigned long long)blockDim.x)                                                  \
      dst[i] = fill;                                                                                       \
  }                                                                                                        \
  extern "C" __global__ void h5fz_patch_##W(T *chunks, const unsigned long long *pos, const T *val,       \
                                            unsigned long long n)                                         \
  {                                                                                                        \
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;          \
         i += gridDim.x * (unsigned long long)blockDim.x)                                                  \
      chunks[pos[i]] = val[i];                                                                             \
  }

H5FZ_BATCH_MOVE(32, uint32_t)
H5FZ_BATCH_MOVE(64, uint64_t)

#define H5FZ_RANGE_THREADS 256u

/* One block per chunk of chunk_n values of value_t: the min and max of its
 * finite values other than the fill value (when has_fill), as the host's
 * REL range takes them; lohi[2c] = +inf, lohi[2c+1] = -inf when none. */
#define H5FZ_BATCH_RANGE(W, V)                                                                             \
  extern "C" __global__ void __launch_bounds__(H5FZ_RANGE_THREADS)                                         \
  h5fz_range_##W(const V *chunks, unsigned long long chunk_n, int has_fill, V fill, double *lohi)           \
  {                                                                                                        \
    __shared__ double lo_s[H5FZ_RANGE_THREADS], hi_s[H5FZ_RANGE_THREADS];                                   \
    const V *v = chunks + blockIdx.x * chunk_n;                                                            \
    double lo = 1.0 / 0.0, hi = -1.0 / 0.0;                                                                \
    for (unsigned long long i = threadIdx.x; i < chunk_n; i += blockDim.x) {                               \
      V x = v[i];                                                                                          \
      if (isfinite(x) && !(has_fill && x == fill)) {                                                       \
        if ((double)x < lo) lo = (double)x;                                                                \
        if ((double)x > hi) hi = (double)x;                                                                \
      }                                                                                                    \
    }                                                                                                      \
    lo_s[threadIdx.x] = lo;                                                                                \
    hi_s[threadIdx.x] = hi;                                                                                \
    __syncthreads();                                                                                       \
    for (unsigned s = blockDim.x / 2u; s > 0; s /= 2u) {                                                   \
      if (threadIdx.x < s) {                                                                               \
        if (lo_s[threadIdx.x + s] < lo_s[threadIdx.x]) lo_s[threadIdx.x] = lo_s[threadIdx.x + s];         \
        if (hi_s[threadIdx.x + s] > hi_s[threadIdx.x]) hi_s[threadIdx.x] = hi_s[threadIdx.x + s];         \
      }                                                                                                    \
      __syncthreads();                                                                                     \
    }                                                                                                      \
    if (threadIdx.x == 0) {                                                                                \
      lohi[2u * blockIdx.x] = lo_s[0];                                                                     \
      lohi[2u * blockIdx.x + 1u] = hi_s[0];                                                                \
    }                                                                                                      \
  }

H5FZ_BATCH_RANGE(32, float)
H5FZ_BATCH_RANGE(64, double)

#endif /* H5FZ_GPU_BATCH_H */
