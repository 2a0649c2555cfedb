/*
 * h5fz_gpu_tail.h - the GPU executor's fixed kernels after the fused encode:
 * the cross-sub-chunk scan of sizes and outlier counts, and the pack of the
 * sub-chunk slots and outlier side buffers into contiguous arrays in index
 * order (so the bytes match the CPU executor's). GPU only.
 */
#ifndef H5FZ_GPU_TAIL_H
#define H5FZ_GPU_TAIL_H

#include "h5fz_dev.h"

#define H5FZ_TAIL_THREADS 1024u

/* One block of H5FZ_TAIL_THREADS: exclusive scans of the sizes in entries[]
 * (low 31 bits) and of ocount[] over n_sub sub-chunks, in chunks of the
 * block size with a running carry. totals[0] = payload bytes, totals[1] =
 * outliers. */
extern "C" __global__ void __launch_bounds__(H5FZ_TAIL_THREADS)
h5fz_tail_scan(const uint32_t *entries, const uint32_t *ocount, uint32_t n_sub,
               unsigned long long *offsets, uint32_t *ooffsets, unsigned long long *totals)
{
  __shared__ uint64_t scan[H5FZ_SCAN_SCRATCH_WORDS];
  h5fz_blk blk = {threadIdx.x, blockDim.x, scan};
  uint64_t carry_bytes = 0, carry_out = 0;
  for (uint32_t base = 0; base < n_sub; base += blockDim.x) {
    uint32_t s = base + threadIdx.x;
    uint64_t size = s < n_sub ? (entries[s] & 0x7fffffffu) : 0u;
    uint64_t cnt = s < n_sub ? ocount[s] : 0u;
    uint64_t tb, tc;
    uint64_t ob = h5fz_blk_exscan(&blk, size, &tb);
    uint64_t oc = h5fz_blk_exscan(&blk, cnt, &tc);
    if (s < n_sub) {
      offsets[s] = carry_bytes + ob;
      ooffsets[s] = (uint32_t)(carry_out + oc);
    }
    carry_bytes += tb;
    carry_out += tc;
  }
  if (threadIdx.x == 0) {
    totals[0] = carry_bytes;
    totals[1] = carry_out;
  }
}

/* One block per sub-chunk: copy its slot to the packed payload, and its
 * outliers (sub-chunk-local positions) to the gathered lists with positions
 * inside their chunk. Sub-chunk s is sub-chunk s % n_sub of chunk s / n_sub
 * of a batch of chunks of chunk_n values each (one chunk: n_sub = grid).
 * esize is 4 or 8; values are moved as esize-byte words. */
extern "C" __global__ void h5fz_tail_pack(const uint8_t *slots, uint32_t slot_bytes,
                                          const uint32_t *entries, const unsigned long long *offsets,
                                          const uint32_t *opos, const uint8_t *oval,
                                          const uint32_t *ocount, const uint32_t *ooffsets,
                                          uint32_t sub_elems, uint32_t esize, uint32_t n_sub,
                                          unsigned long long chunk_n, uint8_t *packed,
                                          uint32_t *gpos, uint8_t *gval)
{
  uint32_t s = blockIdx.x, chunk_ix = s / n_sub, local = s - chunk_ix * n_sub;
  uint32_t size = entries[s] & 0x7fffffffu;
  const uint8_t *src = slots + (size_t)s * slot_bytes;
  uint8_t *dst = packed + offsets[s];
  for (uint32_t i = threadIdx.x; i < size; i += blockDim.x) dst[i] = src[i];
  uint32_t n = ocount[s], o = ooffsets[s];
  size_t in_chunk = (size_t)local * sub_elems, first = (size_t)chunk_ix * chunk_n + in_chunk;
  for (uint32_t i = threadIdx.x; i < n; i += blockDim.x) {
    gpos[o + i] = (uint32_t)in_chunk + opos[first + i];
    for (uint32_t b = 0; b < esize; b++) gval[(size_t)(o + i) * esize + b] = oval[(first + i) * esize + b];
  }
}

#endif /* H5FZ_GPU_TAIL_H */
