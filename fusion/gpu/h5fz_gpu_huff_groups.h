/*
 * h5fz_gpu_huff_groups.h - the body of the huff / huffctx group decode
 * kernel (h5fz_huff_groups, which fusion/gpu/h5fz_codegen.c emits as a
 * call of h5fz_huff_groups_block, and launches before h5fz_decode): the
 * streams of H5FZ_HUFF_SUBS_PER_BLOCK sub-chunks a block, their tables in
 * the block's shared memory, their groups shared by its
 * H5FZ_HUFF_DEC_THREADS threads (h5fz_huff_decode_jobs: a thread takes the
 * next group when its own is done; the fused kernel, one block a
 * sub-chunk, had 16 of its threads decoding while the rest waited, and one
 * thread a group left most lanes idle behind the longest group of their
 * warp), the words written into the chunk's output, where h5fz_decode
 * reads them back for the inverse transforms. Why a header and not
 * generated text: the emulator runs the same body on the CPU
 * (tests/gpu/test_huff_groups_emu.c), so the block's sharing of jobs
 * across streams is checked without a GPU. GPU only (and the emulator).
 */
#ifndef H5FZ_GPU_HUFF_GROUPS_H
#define H5FZ_GPU_HUFF_GROUPS_H

#include "h5fz_ops.h"

/* Threads of the block on each sub-chunk's header and tables. */
#define H5FZ_HG_PER_SUB (H5FZ_HUFF_DEC_THREADS / H5FZ_HUFF_SUBS_PER_BLOCK)

/* Sub-chunk j of this block, in the batch layout of the fused kernels
 * (entries[]: a sub-chunk's stored bytes, bit 31 set when stored raw;
 * offsets[]: where its stream starts in payload; chunk c's values at out
 * + c * n, its sub-chunks sub_elems values apart): its stream (*src,
 * *size) and where its words go (*words, of esize bytes each). Returns the
 * words it holds, 0 when there is no such sub-chunk or it is stored raw
 * (h5fz_decode copies those). */
H5FZ_FN uint32_t h5fz_hg_sub(uint32_t j, const uint8_t *payload, const unsigned long long *offsets,
                             const uint32_t *entries, unsigned long long n, uint32_t n_sub, uint32_t n_total,
                             uint32_t sub_elems, uint32_t esize, uint8_t *out, const uint8_t **src, uint32_t *size,
                             uint8_t **words)
{
  const uint32_t bid = blockIdx.x * H5FZ_HUFF_SUBS_PER_BLOCK + j;
  const uint32_t e = bid < n_total ? entries[bid] : 0x80000000u;
  if (e & 0x80000000u) return 0u;
  const uint32_t c = bid / n_sub;
  const unsigned long long f = (unsigned long long)(bid - c * n_sub) * sub_elems;
  *src = payload + offsets[bid];
  *size = e;
  *words = out + ((unsigned long long)c * n + f) * esize;
  return n - f < sub_elems ? (uint32_t)(n - f) : sub_elems;
}

/* All H5FZ_HUFF_DEC_THREADS threads of block blockIdx.x: decode the
 * streams of its sub-chunks of the batch (h5fz_hg_sub's layout; n_total
 * sub-chunks in all, n_sub a chunk) with nctx codes (1: huff, 2: huffctx)
 * into W-bit words (32 or 64). d[], s[] (H5FZ_HUFF_SUBS_PER_BLOCK each)
 * and *next_job: the block's shared memory. A stream that is not one
 * h5fz_huff_encode writes raises *status (atomically) to at least its
 * sub-chunk's index + 1, as h5fz_decode reports. */
H5FZ_FN void h5fz_huff_groups_block(const uint8_t *payload, const unsigned long long *offsets, const uint32_t *entries,
                                    unsigned long long n, uint32_t n_sub, uint32_t n_total, uint32_t sub_elems,
                                    uint32_t W, uint32_t nctx, void *out_values, int *status, h5fz_huff_dtab *d,
                                    h5fz_huff_stream *s, uint32_t *next_job)
{
  const uint32_t subs = H5FZ_HUFF_SUBS_PER_BLOCK, per = H5FZ_HG_PER_SUB, esize = W / 8u;
  uint8_t *out = (uint8_t *)out_values;
  const uint8_t *src = 0;
  uint32_t size = 0;
  uint8_t *words = 0;
  /* the headers, one thread a sub-chunk, each in a warp of its own (a
   * sub-chunk without a stream has no groups) */
  if (threadIdx.x % per == 0u) {
    const uint32_t j = threadIdx.x / per;
    const uint32_t m = h5fz_hg_sub(j, payload, offsets, entries, n, n_sub, n_total, sub_elems, esize, out, &src, &size,
                                   &words);
    const uint32_t ok = m && h5fz_huff_read_header(&d[j], src, size, (m + 63u) & ~63u, nctx, W) == 0;
    if (m && !ok) atomicMax(status, (int)(blockIdx.x * subs + j) + 1);
    h5fz_huff_stream one = {src, words, size, (m + 63u) & ~63u, m, ok ? d[j].groups : 0u, 0u, 0u};
    s[j] = one;
  }
  if (threadIdx.x == 0) *next_job = 0;
  /* the decoder stores only the non-zero words: zero the block's
   * sub-chunks first, all threads on each (16-byte stores, then the rest) */
  for (uint32_t j = 0; j < subs; j++) {
    const uint32_t m = h5fz_hg_sub(j, payload, offsets, entries, n, n_sub, n_total, sub_elems, esize, out, &src, &size,
                                   &words);
    const uint32_t bytes = m * esize, done = ((unsigned long long)words & 15u) ? 0u : bytes / 16u * 16u;
    for (uint32_t i = threadIdx.x; i < done / 16u; i += H5FZ_HUFF_DEC_THREADS)
      ((uint4 *)words)[i] = make_uint4(0u, 0u, 0u, 0u);
    for (uint32_t i = done / esize + threadIdx.x; i < m; i += H5FZ_HUFF_DEC_THREADS) {
      if (W == 64u)
        ((uint64_t *)words)[i] = 0u;
      else
        ((uint32_t *)words)[i] = 0u;
    }
  }
  __syncthreads();
  /* each code's look-up table by its sub-chunk's share of the threads;
   * the streams' group counts summed */
  const uint32_t sub = threadIdx.x / per, lane = threadIdx.x % per;
  for (uint32_t t = 0; sub < subs && s[sub].jobs_end && t < nctx; t++) h5fz_huff_fill_lut(&d[sub], t, lane, per);
  __syncthreads();
  if (threadIdx.x == 0)
    for (uint32_t j = 1; j < subs; j++) s[j].jobs_end += s[j - 1u].jobs_end;
  __syncthreads();
  if (W == 64u)
    h5fz_huff_decode_jobs_64(d, s, subs, next_job);
  else
    h5fz_huff_decode_jobs_32(d, s, subs, next_job);
  __syncthreads();
  if (threadIdx.x < subs && s[threadIdx.x].bad) atomicMax(status, (int)(blockIdx.x * subs + threadIdx.x) + 1);
}

#endif /* H5FZ_GPU_HUFF_GROUPS_H */
