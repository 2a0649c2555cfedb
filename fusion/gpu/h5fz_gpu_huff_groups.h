/*
 * h5fz_gpu_huff_groups.h - the body of the huff / huffctx group decode
 * kernel (h5fz_huff_groups, which fusion/gpu/h5fz_codegen.c emits as a
 * call of h5fz_huff_groups_block, and launches before h5fz_decode): the
 * streams of up to H5FZ_HUFF_SUBS_PER_BLOCK sub-chunks a block, their
 * tables in the block's shared memory, their groups shared by its
 * H5FZ_HUFF_DEC_THREADS threads (h5fz_huff_decode_jobs: a thread takes the
 * next group when its own is done; the fused kernel, one block a
 * sub-chunk, had 16 of its threads decoding while the rest waited, and one
 * thread a group left most lanes idle behind the longest group of their
 * warp), or, in launches too small to fill the GPU, several threads a
 * group, each a part of its bits (h5fz_huff_decode_parts), the words
 * written into the chunk's output, where h5fz_decode
 * reads them back for the inverse transforms. Why a header and not
 * generated text: the emulator runs the same body on the CPU
 * (tests/gpu/test_huff_groups_emu.c), so the block's sharing of jobs
 * across streams is checked without a GPU. GPU only (and the emulator).
 */
#ifndef H5FZ_GPU_HUFF_GROUPS_H
#define H5FZ_GPU_HUFF_GROUPS_H

#include "h5fz_ops.h"

/* Sub-chunk j of this block, which takes subs of them, in the batch
 * layout of the fused kernels (entries[]: a sub-chunk's stored bytes, bit
 * 31 set when stored raw; offsets[]: where its stream starts in payload;
 * chunk c's values at out + c * n, its sub-chunks sub_elems values apart):
 * its stream (*src, *size) and where its words go (*words, of esize bytes
 * each). Returns the words it holds, 0 when there is no such sub-chunk or
 * it is stored raw (h5fz_decode copies those). */
H5FZ_FN uint32_t h5fz_hg_sub(uint32_t j, uint32_t subs, const uint8_t *payload, const unsigned long long *offsets,
                             const uint32_t *entries, unsigned long long n, uint32_t n_sub, uint32_t n_total,
                             uint32_t sub_elems, uint32_t esize, uint8_t *out, const uint8_t **src, uint32_t *size,
                             uint8_t **words)
{
  const uint32_t bid = blockIdx.x * subs + j;
  const uint32_t e = bid < n_total ? entries[bid] : 0x80000000u;
  if (e & 0x80000000u) return 0u;
  const uint32_t c = bid / n_sub;
  const unsigned long long f = (unsigned long long)(bid - c * n_sub) * sub_elems;
  *src = payload + offsets[bid];
  *size = e;
  *words = out + ((unsigned long long)c * n + f) * esize;
  return n - f < sub_elems ? (uint32_t)(n - f) : sub_elems;
}

/* A part's exit (h5fz_hg_count) when its tokens ran into bits that start
 * no code, or past its group's words: no stream h5fz_huff_encode writes
 * has that on the decoder's path, so the stream is refused if the part
 * turns out to lie on it. */
#define H5FZ_HG_NO_EXIT (~0ull)

/* One token of the group st holds into W-bit words (h5fz_huff_group_step
 * of that width; n_store 0: words counted, none stored). */
H5FZ_FN uint32_t h5fz_hg_step(const h5fz_huff_dtab *d, h5fz_huff_gstate *st, uint32_t W, void *words, uint32_t n_store)
{
  return W == 64u ? h5fz_huff_group_step_64(d, st, (uint64_t *)words, n_store)
                  : h5fz_huff_group_step_32(d, st, (uint32_t *)words, n_store);
}

/* One thread: the tokens of d's stream from bit pos (the token before
 * coded as a run when ar is 1: huffctx's context) to the first token
 * boundary at or after bit lim, by the decoder's own step with nothing
 * stored, so that the parts walk exactly the tokens the writing pass
 * decodes. Returns their words (0 and *exit_pos H5FZ_HG_NO_EXIT when a
 * token is not one h5fz_huff_encode writes or the words would exceed
 * max_words, the group's); *exit_pos, *exit_ar: where it stopped and its
 * context. */
H5FZ_FN uint32_t h5fz_hg_count(const h5fz_huff_dtab *d, const uint8_t *src, uint32_t size, uint32_t W, uint64_t pos,
                               uint32_t ar, uint64_t lim, uint32_t max_words, uint64_t *exit_pos, uint32_t *exit_ar)
{
  h5fz_huff_gstate st;
  st.i = st.last = 0;
  st.gend = max_words; /* the step refuses a run past it; a word past it is refused below */
  st.after_run = ar;
  st.stop = 0;
  if (pos != H5FZ_HG_NO_EXIT && pos < lim) {
    h5fz_huff_rd_init(&st.r, src, size, pos);
    do {
      if (st.i >= max_words || h5fz_hg_step(d, &st, W, 0, 0u)) {
        pos = H5FZ_HG_NO_EXIT;
        break;
      }
      pos = h5fz_huff_rd_pos(&st.r);
    } while (pos < lim);
  }
  *exit_pos = pos;
  *exit_ar = st.after_run;
  return pos == H5FZ_HG_NO_EXIT ? 0u : st.i;
}

/* The threads of a block, P (2, 4 or 8) to a group: decode every group of
 * the nsub streams s[] (as h5fz_huff_decode_jobs; W-bit words). Why: a
 * launch of few sub-chunks (the filter's one chunk) fills few SMs, and
 * its time is its longest group decoded one token after another, each
 * token a chain of dependent instructions; P threads cut a group's bits
 * into P equal parts and each decodes one, so the chain is about 3 / P
 * as long (below). A Huffman stream resynchronizes: a decode started at
 * an arbitrary bit soon lands on a true token boundary and then follows
 * the true tokens. So (self-synchronizing parallel decoding, as in
 * Weissenberger and Schmidt's GPU Huffman decoder):
 *  1. part p decodes from its first bit (part 0: the group's start, its
 *     context none) to the first token boundary at or after the next
 *     part's first bit, counting words (h5fz_hg_count);
 *  2. part p + 1 takes part p's exit (bit and context) as its start and
 *     decodes again where it changed, until no start changes: part 0's is
 *     true, so after pass k the first k starts are, and the loop ends
 *     after at most P passes, with each part's start on the true tokens
 *     (usually after two: the parts resynchronize within a few tokens);
 *  3. each part's first word is the sum of the counts before it; each
 *     decodes its tokens again, writing them, with every check of
 *     h5fz_huff_group_step, the last part up to the group's end and
 *     h5fz_huff_group_end's check of the bits used.
 * The verdict is the sequential decoder's: its tokens are the parts'
 * tokens in order, each checked by the same step; a part's words past the
 * group's end (where the sequential decoder stops early and then finds
 * bits unused) are refused. The last group's parts end 8 bits before its
 * stop, so that no part starts in the final byte's zero padding. A warp
 * takes 32 / P groups at a time. */
H5FZ_FN void h5fz_huff_decode_parts(const h5fz_huff_dtab *d, h5fz_huff_stream *s, uint32_t nsub, uint32_t *next_job,
                                    uint32_t P, uint32_t W)
{
  const uint32_t all = 0xffffffffu, lane = threadIdx.x & 31u, part = lane & (P - 1u), teams = 32u / P;
  const uint32_t total = nsub ? s[nsub - 1u].jobs_end : 0u, not_last = part + 1u < P;
  for (;;) {
    uint32_t base = 0;
    if (lane == 0) base = h5fz_huff_atomic(next_job, teams, H5FZ_HUFF_ADD);
    base = __shfl_sync(all, base, 0);
    if (base >= total) break; /* the whole warp */
    const uint32_t job = base + lane / P;
    uint32_t j = 0, active = job < total, words = 0, in_ar = 0, out_ar = 0, cnt = 0;
    uint64_t in_pos = 0, out_pos = 0, lim = 0;
    h5fz_huff_gstate st; /* set by h5fz_huff_group_begin where active; zeros keep -O3's warnings quiet */
    st.i = st.gend = st.after_run = st.last = 0;
    st.stop = 0;
    if (active) {
      for (; job >= s[j].jobs_end;) j++;
      const uint32_t g = job - (j ? s[j - 1u].jobs_end : 0u);
      if (h5fz_huff_group_begin(&d[j], s[j].src, s[j].size, g, s[j].n, &st)) {
        s[j].bad = 1u;
        active = 0;
      }
    }
    if (active) {
      const uint64_t first = h5fz_huff_rd_pos(&st.r);
      const uint64_t span = (st.last ? (st.stop > first + 8u ? st.stop - 8u : first) : st.stop) - first;
      in_pos = first + span * part / P;
      lim = first + span * (part + 1u) / P;
      words = st.gend - st.i;
    }
    /* passes 1 and 2 (the loop ends when no part's start changed) */
    uint32_t todo = active && not_last;
    for (uint32_t pass = 0;; pass++) {
      if (todo) cnt = h5fz_hg_count(&d[j], s[j].src, s[j].size, W, in_pos, in_ar, lim, words, &out_pos, &out_ar);
      const uint64_t prev_pos = __shfl_up_sync(all, out_pos, 1u);
      const uint32_t prev_ar = __shfl_up_sync(all, out_ar, 1u);
      uint32_t changed = 0;
      if (active && part) {
        changed = prev_pos != in_pos || prev_ar != in_ar;
        in_pos = prev_pos;
        in_ar = prev_ar;
      }
      todo = changed && not_last;
      if (!__ballot_sync(all, changed)) break;
      if (pass > P) { /* never: after P passes every start is true */
        if (changed) s[j].bad = 1u;
        active = active && !changed;
        break;
      }
    }
    /* pass 3: each part's first word, then its tokens written */
    uint32_t incl = active && not_last ? cnt : 0u;
    for (uint32_t k = 1; k < P; k <<= 1) {
      const uint32_t y = __shfl_up_sync(all, incl, k);
      if (part >= k) incl += y;
    }
    const uint32_t off = incl - (active && not_last ? cnt : 0u);
    if (!active) continue;
    uint32_t bad = in_pos == H5FZ_HG_NO_EXIT || off > words || (not_last && cnt > words - off);
    if (!bad) {
      h5fz_huff_rd_init(&st.r, s[j].src, s[j].size, in_pos);
      st.i += off;
      st.after_run = in_ar;
      const uint32_t end = not_last ? st.i + cnt : st.gend;
      while (!bad && st.i < end) bad = h5fz_hg_step(&d[j], &st, W, s[j].words, s[j].n_store);
      if (!bad && !not_last) bad = h5fz_huff_group_end(&st);
    }
    if (bad) s[j].bad = 1u; /* only ever set to 1: the race is harmless */
  }
}

/* All H5FZ_HUFF_DEC_THREADS threads of block blockIdx.x: decode the
 * streams of its subs sub-chunks of the batch (1, 2, 4 or 8; h5fz_hg_sub's
 * layout; n_total sub-chunks in all, n_sub a chunk) with nctx codes (1:
 * huff, 2: huffctx) into W-bit words (32 or 64), up to max_parts threads a
 * group (1: h5fz_huff_decode_jobs, one a group; 2, 4 or 8:
 * h5fz_huff_decode_parts, as many as the block's threads hold for its
 * groups). The launcher picks both (fusion/gpu/h5fz_gpu_launch.c: few
 * sub-chunks a block and several threads a group only where the launch
 * leaves SMs idle). d[], s[] (H5FZ_HUFF_SUBS_PER_BLOCK each) and
 * *next_job: the block's shared memory. A stream that is not one
 * h5fz_huff_encode writes raises *status (atomically) to at least its
 * sub-chunk's index + 1, as h5fz_decode reports. */
H5FZ_FN void h5fz_huff_groups_block(const uint8_t *payload, const unsigned long long *offsets, const uint32_t *entries,
                                    unsigned long long n, uint32_t n_sub, uint32_t n_total, uint32_t sub_elems,
                                    uint32_t W, uint32_t nctx, uint32_t subs, uint32_t max_parts, void *out_values,
                                    int *status, h5fz_huff_dtab *d, h5fz_huff_stream *s, uint32_t *next_job)
{
  const uint32_t per = H5FZ_HUFF_DEC_THREADS / subs, esize = W / 8u;
  uint8_t *out = (uint8_t *)out_values;
  const uint8_t *src = 0;
  uint32_t size = 0;
  uint8_t *words = 0;
  /* the headers, one thread a sub-chunk, each in a warp of its own (a
   * sub-chunk without a stream has no groups) */
  if (threadIdx.x % per == 0u) {
    const uint32_t j = threadIdx.x / per;
    const uint32_t m = h5fz_hg_sub(j, subs, payload, offsets, entries, n, n_sub, n_total, sub_elems, esize, out, &src,
                                   &size, &words);
    const uint32_t ok = m && h5fz_huff_read_header(&d[j], src, size, (m + 63u) & ~63u, nctx, W) == 0;
    if (m && !ok) atomicMax(status, (int)(blockIdx.x * subs + j) + 1);
    h5fz_huff_stream one = {src, words, size, (m + 63u) & ~63u, m, ok ? d[j].groups : 0u, 0u, 0u};
    s[j] = one;
  }
  if (threadIdx.x == 0) *next_job = 0;
  /* the decoder stores only the non-zero words: zero the block's
   * sub-chunks first, all threads on each (16-byte stores, then the rest) */
  for (uint32_t j = 0; j < subs; j++) {
    const uint32_t m = h5fz_hg_sub(j, subs, payload, offsets, entries, n, n_sub, n_total, sub_elems, esize, out, &src,
                                   &size, &words);
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
  for (uint32_t t = 0; s[sub].jobs_end && t < nctx; t++) h5fz_huff_fill_lut(&d[sub], t, lane, per);
  __syncthreads();
  if (threadIdx.x == 0)
    for (uint32_t j = 1; j < subs; j++) s[j].jobs_end += s[j - 1u].jobs_end;
  __syncthreads();
  /* threads a group: the most, a power of two up to max_parts, that the
   * block's threads hold for all its groups at once */
  uint32_t parts = 1;
  while (parts < max_parts && s[subs - 1u].jobs_end * parts * 2u <= H5FZ_HUFF_DEC_THREADS) parts *= 2u;
  if (parts > 1u)
    h5fz_huff_decode_parts(d, s, subs, next_job, parts, W);
  else if (W == 64u)
    h5fz_huff_decode_jobs_64(d, s, subs, next_job);
  else
    h5fz_huff_decode_jobs_32(d, s, subs, next_job);
  __syncthreads();
  if (threadIdx.x < subs && s[threadIdx.x].bad) atomicMax(status, (int)(blockIdx.x * subs + threadIdx.x) + 1);
}

#endif /* H5FZ_GPU_HUFF_GROUPS_H */
