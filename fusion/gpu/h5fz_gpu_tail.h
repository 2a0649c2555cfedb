/*
 * h5fz_gpu_tail.h - the GPU executor's fixed kernels after the fused encode:
 * the cross-sub-chunk scan of sizes and outlier counts, the pack of the
 * sub-chunk slots and the gather of the outlier side buffers into
 * contiguous arrays in index order (so the bytes match the CPU executor's).
 * GPU only.
 */
#ifndef H5FZ_GPU_TAIL_H
#define H5FZ_GPU_TAIL_H

#include "h5fz_dev.h"

#define H5FZ_TAIL_THREADS 1024u

/* Sum over the block of one value per thread (every thread gets it). */
H5FZ_FN uint64_t h5fz_tail_block_sum(uint64_t v, uint64_t *scratch)
{
  for (uint32_t d = 16; d > 0; d >>= 1) v += __shfl_xor_sync(0xffffffffu, v, d);
  __syncthreads(); /* scratch may still be read by an earlier call */
  if ((threadIdx.x & 31u) == 0) scratch[threadIdx.x >> 5] = v;
  __syncthreads();
  uint64_t s = 0;
  for (uint32_t w = 0; w < (blockDim.x + 31u) / 32u; w++) s += scratch[w];
  return s;
}

/* The sizes (entries[], low 31 bits) and outlier counts (ocount[]) of n_sub
 * sub-chunks in parts of H5FZ_TAIL_THREADS, one block per part: each part's
 * sums to parts[2 + 2b] and parts[3 + 2b] (parts[0..1] are the totals,
 * written by h5fz_tail_scan). */
H5FZ_KERNEL void __launch_bounds__(H5FZ_TAIL_THREADS)
h5fz_tail_reduce(const uint32_t *entries, const uint32_t *ocount, uint32_t n_sub, unsigned long long *parts)
{
  __shared__ uint64_t scratch[H5FZ_SCAN_SCRATCH_WORDS];
  uint32_t s = blockIdx.x * blockDim.x + threadIdx.x;
  uint64_t bytes = h5fz_tail_block_sum(s < n_sub ? (entries[s] & 0x7fffffffu) : 0u, scratch);
  uint64_t outs = h5fz_tail_block_sum(s < n_sub ? ocount[s] : 0u, scratch);
  if (threadIdx.x == 0) {
    parts[2u + 2u * blockIdx.x] = bytes;
    parts[3u + 2u * blockIdx.x] = outs;
  }
}

/* After h5fz_tail_reduce, the same blocks: exclusive scans of the sizes and
 * of the outlier counts (offsets[], ooffsets[]), each part starting from
 * the sums of the parts before it; the last block writes the totals to
 * parts[0] (payload bytes) and parts[1] (outliers). */
H5FZ_KERNEL void __launch_bounds__(H5FZ_TAIL_THREADS)
h5fz_tail_scan(const uint32_t *entries, const uint32_t *ocount, uint32_t n_sub, unsigned long long *offsets,
               uint32_t *ooffsets, unsigned long long *parts)
{
  __shared__ uint64_t scan[H5FZ_SCAN_SCRATCH_WORDS];
  h5fz_blk blk = {threadIdx.x, blockDim.x, scan};
  uint64_t before_bytes = 0, before_outs = 0;
  for (uint32_t b = threadIdx.x & 31u; b < blockIdx.x; b += 32u) { /* every warp sums the parts before */
    before_bytes += parts[2u + 2u * b];
    before_outs += parts[3u + 2u * b];
  }
  for (uint32_t d = 16; d > 0; d >>= 1) {
    before_bytes += __shfl_xor_sync(0xffffffffu, before_bytes, d);
    before_outs += __shfl_xor_sync(0xffffffffu, before_outs, d);
  }
  uint32_t s = blockIdx.x * blockDim.x + threadIdx.x;
  uint64_t tb, tc;
  uint64_t ob = h5fz_blk_exscan(&blk, s < n_sub ? (entries[s] & 0x7fffffffu) : 0u, &tb);
  uint64_t oc = h5fz_blk_exscan(&blk, s < n_sub ? ocount[s] : 0u, &tc);
  if (s < n_sub) {
    offsets[s] = before_bytes + ob;
    ooffsets[s] = (uint32_t)(before_outs + oc);
  }
  if (blockIdx.x == gridDim.x - 1u && threadIdx.x == 0) {
    parts[0] = before_bytes + tb;
    parts[1] = before_outs + tc;
  }
}

/* One warp per sub-chunk (sub-chunk s = blockIdx.x * warps + warp, s <
 * n_total): copy its slot (slot_bytes apart, size in entries[s]) to the
 * packed payload at offsets[s]. The payload goes as whole 4-byte words
 * where it lands (slots are 4-byte aligned, the packed offsets are not):
 * each destination word is cut from two source words. The outliers are
 * h5fz_tail_gather's. */
H5FZ_KERNEL void h5fz_tail_pack(const uint8_t *slots, uint32_t slot_bytes, const uint32_t *entries,
                                const unsigned long long *offsets, uint32_t n_total, uint8_t *packed)
{
  const uint32_t lane = threadIdx.x & 31u, s = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
  if (s >= n_total) return;
  const uint32_t size = entries[s] & 0x7fffffffu;
  const uint8_t *src = slots + (size_t)s * slot_bytes;
  uint8_t *dst = packed + offsets[s];
  const uint32_t align = (uint32_t)(0u - (uint32_t)(unsigned long long)dst) & 3u, head = align < size ? align : size;
  if (lane < head) dst[lane] = src[lane];
  const uint32_t words = (size - head) / 4u, tail = (size - head) & 3u, shift = 8u * head;
  const uint32_t *s32 = (const uint32_t *)src, last = slot_bytes / 4u;
  uint32_t *d32 = (uint32_t *)(dst + head);
#pragma unroll 4
  for (uint32_t k = lane; k < words; k += 32u) {
    uint32_t lo = s32[k], hi = k + 1u < last ? s32[k + 1u] : 0u;
    d32[k] = head ? __funnelshift_r(lo, hi, shift) : lo;
  }
  if (lane < tail) dst[head + 4u * words + lane] = src[head + 4u * words + lane];
}

/* The last sub-chunk s in [lo, hi] with ooffsets[s] <= j, by binary
 * search, given lo_off = ooffsets[lo] <= j and ooffsets[hi + 1] > j (or hi
 * the last); *s_off receives ooffsets[s] (the caller needs it, and a load
 * saved is one less wait in a chain of them). */
H5FZ_FN uint32_t h5fz_tail_bsearch(const uint32_t *ooffsets, uint32_t lo, uint32_t hi, uint32_t lo_off, uint32_t *s_off,
                                   unsigned long long j)
{
  while (lo < hi) {
    const uint32_t mid = lo + (hi - lo + 1u) / 2u, o = __ldg(ooffsets + mid);
    if (o <= j) {
      lo = mid;
      lo_off = o;
    } else {
      hi = mid - 1u;
    }
  }
  *s_off = lo_off;
  return lo;
}

/* The last sub-chunk s' >= s with ooffsets[s'] <= j (there is one: s, when
 * ooffsets[s] <= j): steps of 1, 2, 4, ... forward, then a binary search
 * inside the last step, so a near answer costs one load and a far one a
 * few times log2 of the distance. *s_off holds ooffsets[s] on entry and
 * ooffsets[s'] on return. */
H5FZ_FN uint32_t h5fz_tail_advance(const uint32_t *ooffsets, uint32_t n_total, uint32_t s, uint32_t *s_off,
                                   unsigned long long j)
{
  uint32_t lo = s, lo_off = *s_off, step = 1u;
  while (step < n_total - lo) {
    const uint32_t o = __ldg(ooffsets + lo + step);
    if (o > j) break;
    lo += step;
    lo_off = o;
    step *= 2u;
  }
  const uint32_t hi = step < n_total - lo ? lo + step - 1u : n_total - 1u; /* ooffsets[hi + 1] > j, or the end */
  return h5fz_tail_bsearch(ooffsets, lo, hi, lo_off, s_off, j);
}

/* The last sub-chunk s with ooffsets[s] <= j over all n_total (a warp's
 * first outlier: about 17 dependent loads, where galloping from sub-chunk
 * 0 takes about twice that); *s_off receives ooffsets[s]. */
H5FZ_FN uint32_t h5fz_tail_find(const uint32_t *ooffsets, uint32_t n_total, uint32_t *s_off, unsigned long long j)
{
  return h5fz_tail_bsearch(ooffsets, 0u, n_total - 1u, 0u, s_off, j); /* ooffsets[0] = 0 <= j */
}

/* Outliers a lane has in flight in h5fz_tail_gather. */
#define H5FZ_TAIL_GATHER_UNROLL 4u

/* The gathered outlier lists: outlier j < totals[1] is in the last
 * sub-chunk s with ooffsets[s] <= j (sub-chunks without outliers share the
 * next one's offset); its position in the chunk goes to gpos[j] and its
 * bits (esize bytes) to gval[j], from the sub-chunk's side buffers opos[] /
 * oval[] at its first element in the batch (sub-chunk s % n_sub of chunk
 * s / n_sub, chunks of chunk_n values, sub_elems values per sub-chunk).
 * Each warp takes a contiguous share of the outliers, 32 x UNROLL at a
 * time, and each lane carries its sub-chunk forward (h5fz_tail_advance)
 * instead of searching all n_total again: a search per outlier was a
 * chain of about 17 dependent loads, and the kernel latency-bound. A lane
 * finds the sub-chunks of its UNROLL outliers first (cached loads, near
 * each other) and then issues all their side-buffer loads at once, so
 * their DRAM round trips overlap instead of following each other (one
 * outlier at a time: 76 us for the 9 million of the tiled benchmark).
 * Why not the pack's warp per sub-chunk: a sub-chunk of fill values has
 * 4096 outliers, and the pack lasted as long as those warps (136 us of the
 * 1.07 GB tiled encode, DRAM 22 % busy). */
H5FZ_KERNEL void h5fz_tail_gather(const uint32_t *ooffsets, uint32_t n_total, const unsigned long long *totals,
                                  const uint32_t *opos, const uint8_t *oval, uint32_t sub_elems, uint32_t n_sub,
                                  unsigned long long chunk_n, uint32_t esize, uint32_t *gpos, uint8_t *gval)
{
  const uint32_t U = H5FZ_TAIL_GATHER_UNROLL;
  const unsigned long long n_out = totals[1], warps = (unsigned long long)gridDim.x * (blockDim.x >> 5);
  const unsigned long long warp = (unsigned long long)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
  const unsigned long long share = ((n_out + warps - 1u) / warps + 32u * U - 1u) / (32u * U) * (32u * U);
  const unsigned long long end = warp * share + share < n_out ? warp * share + share : n_out;
  uint32_t s = 0, s_off = 0;
  if (warp * share < end) s = h5fz_tail_find(ooffsets, n_total, &s_off, warp * share);
  for (unsigned long long j0 = warp * share + (threadIdx.x & 31u); j0 < end; j0 += 32u * U) {
    size_t at[H5FZ_TAIL_GATHER_UNROLL];
    uint32_t in_chunk[H5FZ_TAIL_GATHER_UNROLL];
#pragma unroll
    for (uint32_t u = 0; u < U; u++) {
      const unsigned long long j = j0 + 32u * u;
      if (j < end) s = h5fz_tail_advance(ooffsets, n_total, s, &s_off, j);
      const uint32_t chunk_ix = s / n_sub;
      in_chunk[u] = (s - chunk_ix * n_sub) * sub_elems;
      at[u] = (size_t)chunk_ix * chunk_n + in_chunk[u] + (size_t)(j - s_off);
    }
    uint32_t p[H5FZ_TAIL_GATHER_UNROLL];
    unsigned long long v[H5FZ_TAIL_GATHER_UNROLL];
#pragma unroll
    for (uint32_t u = 0; u < U; u++) {
      p[u] = 0; /* unused past end; set so that no compiler sees it read unset */
      v[u] = 0;
      if (j0 + 32u * u >= end) continue;
      p[u] = opos[at[u]];
      v[u] = esize == 8u ? ((const unsigned long long *)oval)[at[u]] : ((const uint32_t *)oval)[at[u]];
    }
#pragma unroll
    for (uint32_t u = 0; u < U; u++) {
      const unsigned long long j = j0 + 32u * u;
      if (j >= end) continue;
      gpos[j] = in_chunk[u] + p[u];
      if (esize == 8u) ((unsigned long long *)gval)[j] = v[u];
      else ((uint32_t *)gval)[j] = (uint32_t)v[u];
    }
  }
}

#endif /* H5FZ_GPU_TAIL_H */
