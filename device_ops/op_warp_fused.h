/*
 * op_warp_fused.h - the default chain (quant delta zigzag bitshuffle rze) on
 * a whole float32 sub-chunk of 4096 values (16 KiB), encode and decode, with
 * the words kept in registers between the ops. GPU only.
 *
 * Why: the generic kernel runs the chain op by op through shared memory
 * with a barrier between ops and block-wide scans inside RZE; Nsight Compute
 * put it at about 9.6 warp instructions per value, bound by instruction
 * issue, not memory. Here a warp takes 32 values at a time (lane k value
 * 32g+k of group g): quantize, delta (the previous value by a shuffle),
 * zigzag, and the bit planes of the 32 words by ballots (or the 5-step
 * transpose when a group has more than 10 significant bits); only the plane
 * words go to shared memory. RZE then works a plane at a time (one plane of
 * 4096 values = 128 words = 64 level-0 bitmap bytes = 8 level-1 bytes = one
 * byte of the 32-byte top bitmap), with warp ballots and popcounts instead
 * of byte loops and block scans.
 *
 * The bytes are exactly those of op_quant.h, op_delta.h, op_bitshuffle.h and
 * op_rze.h for L = 16384 (three RZE levels: 16384 -> 2048 -> 256 -> 32);
 * tests/gpu/test_gpu_identical.c and test_gpu_warp_fused.c compare them with
 * the CPU executor's. Linear quantizer modes (ABS, REL) only; the generic
 * kernel takes the others, other chains, float64 and partial sub-chunks.
 *
 * The quantizer is op_quant.h's in fewer instructions: the bin
 * (h5fz_bin_f32) as the low word of fma(x, inv_step, 1.5 * 2^52), (double)bin
 * as that less 1.5 * 2^52.
 */
#ifndef H5FZ_OP_WARP_FUSED_H
#define H5FZ_OP_WARP_FUSED_H

#define H5FZ_WF_ELEMS 4096u /* values of a sub-chunk (16 KiB of float32); the codegen's test of a chain, too */

/* sm_80 and newer: warp reductions (__reduce_*_sync); the kernel classes
 * with the warp_fused feature are */
#if H5FZ_ON_GPU && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800

#define H5FZ_WF_GROUPS 128u  /* 32-value groups = words per bit plane */
#define H5FZ_WF_STRIDE 129u  /* words between planes in shared memory: lanes store 32 planes in 32 banks */
#define H5FZ_WF_BYTES 16384u /* RZE's input length L */
#define H5FZ_WF_TOP 32u      /* RZE's top bitmap: one byte per plane */
#define H5FZ_WF_FULL 0xffffffffu
/* decode: up to this many planes each lane picks its bits from broadcast
 * loads (about 4 instructions a plane); more go through the transpose
 * (about 25 in all) */
#define H5FZ_WF_BROADCAST_PLANES 7u

/* Shared memory of one block (one sub-chunk). */
typedef struct {
  uint32_t planes[32u * H5FZ_WF_STRIDE]; /* plane p, word g (bit k = bit p of value 32g+k's word) */
  uint64_t bm1[32];                      /* RZE level-1 bitmap: 8 bytes per plane */
  uint8_t bm0[32u * 64u];                /* RZE level-0 bitmap: 64 bytes per plane */
  uint32_t esc[H5FZ_WF_GROUPS];          /* encode: escape mask of each group */
  uint32_t c0[32], c1[32], c2[32];       /* per plane: kept bytes of levels 0, 1, 2, then their offsets */
  uint32_t bm2[32];                      /* the top bitmap, a byte per plane */
  uint32_t warp_or[32], warp_out[32];    /* per warp: OR of its words / escapes (encode), sums (decode) */
  uint32_t size, np, bad, c_top2, c_top1;
} h5fz_wf_smem;

/* op_quant.h's linear quantizer (h5fz_quant_one_32, modes ABS and REL):
 * 1 = the value escapes (word 0), else *word is its bin. A value with the
 * bits of q->fill_bits (its low word) escapes too (one compare a value:
 * 9.3 M more warp instructions, 1.8 %, on the tiled benchmark), and so
 * does a value whose reconstruction r has them (one compare more): it
 * would decode to exactly the fill value. */
H5FZ_FN uint32_t h5fz_wf_quant(float x, const h5fz_quant_params *q, uint32_t *word)
{
  const double magic = 6755399441055744.0; /* 1.5 * 2^52 */
  double xd = (double)x;
  double t = __fma_rn(xd, q->inv_step, magic);
  double b = __dsub_rn(t, magic); /* h5fz_bin_f32 */
  float r = __double2float_rn(__dmul_rn(b, q->step));
  double err = __dsub_rn(xd, (double)r);
  /* all four tests without short-circuit branches */
  const uint32_t bits = __float_as_uint(x);
  const uint32_t fill = (uint32_t)q->fill_bits;
  uint32_t ok = (uint32_t)(fabs(b) <= 1073741824.0) & (uint32_t)(fabs(err) <= q->eb) & (uint32_t)(bits != 0x80000000u) &
                (uint32_t)(bits != fill) & (uint32_t)(__float_as_uint(r) != fill);
  *word = (uint32_t)__double2loint(t) & (0u - ok);
  return ok ^ 1u;
}

/* Bit b of each of the 4 bits goes to bit 2b. */
H5FZ_FN uint32_t h5fz_wf_spread4(uint32_t x)
{
  return (x & 1u) | ((x & 2u) << 1) | ((x & 4u) << 2) | ((x & 8u) << 3);
}

/* Level-0 bitmap byte of two words (their nonzero bytes). */
H5FZ_FN uint32_t h5fz_wf_bm0_byte(uint32_t a, uint32_t b)
{
  return h5fz_rze_nibble(a) | (h5fz_rze_nibble(b) << 4);
}

/* Exclusive warp prefix sum; *total receives the warp's sum. */
H5FZ_FN uint32_t h5fz_wf_exscan(uint32_t v, uint32_t *total)
{
  uint32_t incl = h5fz_warp_inclusive(v);
  *total = __shfl_sync(H5FZ_WF_FULL, incl, 31);
  return incl - v;
}

/* The 32 plane words of the warp's words z (one group) to col[p * stride]
 * (col = &planes[g]; lane_col = &planes[lane * stride + g], the lane's own
 * plane; lane_ge = ~0 << lane; lane0: lane == 0); *any the OR of the words. Up to H5FZ_BALLOT_PLANES
 * significant planes: one ballot each, stored by lane 0 (3 instructions a
 * plane, two planes per test of the count), the zero planes by the lanes
 * of their number; more: the transpose (op_bitshuffle.h), lane p storing
 * plane p. */
H5FZ_FN void h5fz_wf_store_planes(uint32_t *col, uint32_t *lane_col, uint32_t z, uint32_t lane_ge, uint32_t lane0,
                                   uint32_t *any)
{
  /* the significant planes are those below the highest bit of a: tests on
   * a itself instead of a bit count */
  uint32_t a = __reduce_or_sync(H5FZ_WF_FULL, z);
  *any = a;
  if (!a) { /* no bit set (most groups of smooth data): every lane zeroes its plane, one test */
    *lane_col = 0u;
    return;
  }
  if (a >> H5FZ_BALLOT_PLANES) {
    *lane_col = h5fz_warp_transpose32(z);
    return;
  }
  if (!(a & lane_ge)) *lane_col = 0u; /* a plane this group does not have */
#pragma unroll
  for (uint32_t p = 0; p < H5FZ_BALLOT_PLANES; p += 2u) {
    if (!(a >> p)) break;
    uint32_t lo = __ballot_sync(H5FZ_WF_FULL, (z & (1u << p)) != 0u);
    uint32_t hi = __ballot_sync(H5FZ_WF_FULL, (z & (2u << p)) != 0u);
    if (lane0) { /* plane p + 1 may be past the last: its ballot is 0, as its lane stored */
      col[p * H5FZ_WF_STRIDE] = lo;
      col[(p + 1u) * H5FZ_WF_STRIDE] = hi;
    }
  }
}

/* Step 1 of h5fz_wf_encode: quantize, delta, zigzag and the bit planes of
 * the warp's groups g0 .. g0 + per_warp - 1, a group of 32 values per step,
 * the next 4 groups' loads in flight while these are worked (Nsight
 * Compute found a fifth of the stall samples waiting on them); escape
 * masks to S->esc. carry0: the word before the sub-chunk's first (0 for
 * the default chain's delta). *any_all: the OR of the zigzag words,
 * *n_esc: the escapes. */
H5FZ_FN void h5fz_wf_quantize_groups(h5fz_wf_smem *S, const float *in, const h5fz_quant_params *q, uint32_t g0,
                                     uint32_t per_warp, uint32_t carry0, uint32_t *any_all_out, uint32_t *n_esc_out)
{
  const uint32_t lane = threadIdx.x & 31u;
  uint32_t carry = carry0, any_all = 0, n_esc = 0;
  if (g0) (void)h5fz_wf_quant(in[32u * g0 - 1u], q, &carry); /* the word before the warp's first */
  const float *src = in + 32u * g0 + lane;
  const uint32_t lane_ge = 0xffffffffu << lane, lane0 = lane == 0;
  uint32_t *const lane_planes = S->planes + lane * H5FZ_WF_STRIDE;
  float x[4];
#pragma unroll
  for (uint32_t j = 0; j < 4u; j++) x[j] = __ldcs(src + 32u * j);
  for (uint32_t k = 0; k < per_warp; k += 4u) {
    float next[4];
    src += 128;
    const uint32_t more = k + 4u < per_warp;
#pragma unroll
    for (uint32_t j = 0; j < 4u; j++) next[j] = more ? __ldcs(src + 32u * j) : 0.0f;
#pragma unroll
    for (uint32_t j = 0; j < 4u; j++) {
      const uint32_t g = g0 + k + j;
      uint32_t w, any;
      uint32_t esc = __ballot_sync(H5FZ_WF_FULL, h5fz_wf_quant(x[j], q, &w));
      if (lane == 0) S->esc[g] = esc;
      n_esc += (uint32_t)__popc(esc);
      /* a rotation: lane l gets word l-1, lane 0 this group's last, which is
       * the next group's carry (one shuffle instead of two) */
      uint32_t r = __shfl_sync(H5FZ_WF_FULL, w, (int)((lane + 31u) & 31u));
      uint32_t prev = lane ? r : carry;
      carry = r;
      uint32_t d = w - prev, z = (d << 1) ^ (0u - (d >> 31));
      h5fz_wf_store_planes(S->planes + g, lane_planes + g, z, lane_ge, lane0, &any);
      any_all |= any;
    }
#pragma unroll
    for (uint32_t j = 0; j < 4u; j++) x[j] = next[j];
  }
  *any_all_out = any_all;
  *n_esc_out = n_esc;
}

/* The escaped values of groups g0 .. g0 + n_groups - 1 (escape masks
 * esc[], one bit a lane) to opos[]/oval[] from index pos on, in index
 * order: a lane writes its own value. Both warp-fused encodes use it
 * (op_warp_fast.h too). */
H5FZ_FN void h5fz_wf_place_outliers(const uint32_t *esc, const float *in, uint32_t g0, uint32_t n_groups, uint32_t pos,
                                    uint32_t lane, uint32_t *opos, uint32_t *oval)
{
  for (uint32_t g = g0; g < g0 + n_groups; g++) {
    const uint32_t m = esc[g];
    if (!m) continue;
    if ((m >> lane) & 1u) {
      uint32_t r = pos + (uint32_t)__popc(m & ((1u << lane) - 1u));
      opos[r] = 32u * g + lane;
      oval[r] = __float_as_uint(in[32u * g + lane]);
    }
    pos += (uint32_t)__popc(m);
  }
}

/* Encode the 4096 values in[] of one sub-chunk (all threads of the block,
 * a multiple of 32 that divides 4096). The RZE stream, or the bit planes
 * raw when RZE would not shrink them, goes to slot (16384 bytes), its size
 * (raw: 16384 | 0x80000000) to *entry, the escaped values' positions and
 * bits to opos[]/oval[] in index order and their count to *ocount.
 * carry0: the quantizer word the first value is predicted from (0 for the
 * default chain; lorenzo_nd's 1-D predictor: the word of the value before
 * the sub-chunk, which is the same delta across sub-chunks). */
H5FZ_FN void h5fz_wf_encode(h5fz_wf_smem *S, const float *in, const h5fz_quant_params *q, uint32_t carry0,
                            uint8_t *slot, uint32_t *entry, uint32_t *ocount, uint32_t *opos, uint32_t *oval)
{
  const uint32_t tid = threadIdx.x, lane = tid & 31u, warp = tid >> 5, nwarps = blockDim.x >> 5;
  const uint32_t per_warp = H5FZ_WF_GROUPS / nwarps, g0 = warp * per_warp;
  /* 1. quantize, delta, zigzag, bit planes */
  uint32_t any_all, n_esc;
  h5fz_wf_quantize_groups(S, in, q, g0, per_warp, carry0, &any_all, &n_esc);
  if (lane == 0) {
    S->warp_or[warp] = any_all;
    S->warp_out[warp] = n_esc;
  }
  __syncthreads();
  uint32_t all_or = 0, n_out = 0, out_before = 0;
  for (uint32_t w = 0; w < nwarps; w++) {
    all_or |= S->warp_or[w];
    out_before += w < warp ? S->warp_out[w] : 0u;
    n_out += S->warp_out[w];
  }
  /* outliers, in index order (rare: only sub-chunks that have them) */
  if (n_out) h5fz_wf_place_outliers(S->esc, in, g0, per_warp, out_before, lane, opos, oval);
  /* planes at or above `bits` are zero in every group; the first of them
   * can still start a run in the bitmaps above level 0 */
  const uint32_t bits = 32u - (uint32_t)__clz((int)all_or), np = bits < 32u ? bits + 1u : 32u;
  /* 2. RZE levels 0 and 1, a plane per warp: lane l has words 4l..4l+3,
   * i.e. level-0 bitmap bytes 2l and 2l+1 */
  for (uint32_t p = warp; p < 32u; p += nwarps) {
    if (p >= np) {
      if (lane == 0) {
        S->bm1[p] = 0;
        S->c0[p] = 0;
        S->c1[p] = 0;
      }
      continue;
    }
    const uint32_t *pl = S->planes + p * H5FZ_WF_STRIDE;
    uint32_t lo = h5fz_wf_bm0_byte(pl[4u * lane], pl[4u * lane + 1u]);
    uint32_t hi = h5fz_wf_bm0_byte(pl[4u * lane + 2u], pl[4u * lane + 3u]);
    *(uint16_t *)(S->bm0 + 64u * p + 2u * lane) = (uint16_t)(lo | (hi << 8));
    uint32_t c0 = __reduce_add_sync(H5FZ_WF_FULL, (uint32_t)__popc(lo | (hi << 8)));
    /* level 1 keeps a bitmap byte that differs from the one before it */
    uint32_t before = __shfl_up_sync(H5FZ_WF_FULL, hi, 1);
    if (lane == 0) before = p ? h5fz_wf_bm0_byte((pl - H5FZ_WF_STRIDE)[126], (pl - H5FZ_WF_STRIDE)[127]) : 0u;
    uint32_t keep_lo = __ballot_sync(H5FZ_WF_FULL, lo != before), keep_hi = __ballot_sync(H5FZ_WF_FULL, hi != lo);
    /* level-1 byte j: bits 2i, 2i+1 from lane 4j+i's two bytes */
    uint32_t byte = h5fz_wf_spread4((keep_lo >> (4u * (lane & 7u))) & 15u) |
                    (h5fz_wf_spread4((keep_hi >> (4u * (lane & 7u))) & 15u) << 1);
    if (lane < 8u) ((uint8_t *)&S->bm1[p])[lane] = (uint8_t)byte;
    if (lane == 0) {
      S->c0[p] = c0;
      S->c1[p] = (uint32_t)__popc(keep_lo) + (uint32_t)__popc(keep_hi);
    }
  }
  __syncthreads();
  /* 3. level 2 (the top bitmap, lane = plane) and every level's offsets */
  if (warp == 0) {
    uint64_t v = S->bm1[lane];
    uint64_t prev = (v << 8) | (lane ? (S->bm1[lane - 1u] >> 56) : 0u);
    uint64_t diff = v ^ prev;
    uint32_t top = h5fz_rze_nibble((uint32_t)diff) | (h5fz_rze_nibble((uint32_t)(diff >> 32)) << 4);
    uint32_t t2, t1, t0;
    uint32_t e2 = h5fz_wf_exscan((uint32_t)__popc(top), &t2);
    uint32_t e1 = h5fz_wf_exscan(S->c1[lane], &t1);
    uint32_t e0 = h5fz_wf_exscan(S->c0[lane], &t0);
    S->bm2[lane] = top;
    S->c2[lane] = H5FZ_WF_TOP + e2;
    S->c1[lane] = H5FZ_WF_TOP + t2 + e1;
    S->c0[lane] = H5FZ_WF_TOP + t2 + t1 + e0;
    if (lane == 0) S->size = H5FZ_WF_TOP + t2 + t1 + t0;
  }
  __syncthreads();
  const uint32_t size = S->size;
  if (tid == 0) *ocount = n_out;
  if (size >= H5FZ_WF_BYTES) { /* RZE would not shrink it: the planes as they are */
    uint32_t *s32 = (uint32_t *)slot;
    for (uint32_t i = tid; i < H5FZ_WF_ELEMS; i += blockDim.x) s32[i] = S->planes[(i >> 7) * H5FZ_WF_STRIDE + (i & 127u)];
    if (tid == 0) *entry = H5FZ_WF_BYTES | 0x80000000u;
    return;
  }
  /* 4. [top bitmap][kept of level 2][kept of level 1][kept of level 0] */
  if (warp == 0) {
    uint32_t top = S->bm2[lane], pos = S->c2[lane];
    uint64_t v = S->bm1[lane];
    slot[lane] = (uint8_t)top;
    for (uint32_t j = 0; j < 8u; j++)
      if ((top >> j) & 1u) slot[pos++] = (uint8_t)(v >> (8u * j));
  }
  for (uint32_t p = warp; p < np; p += nwarps) {
    const uint64_t v = S->bm1[p];
    uint32_t pos = S->c1[p] + (uint32_t)__popcll(v & ((1ull << (2u * lane)) - 1ull));
    uint32_t two = *(const uint16_t *)(S->bm0 + 64u * p + 2u * lane);
    if ((v >> (2u * lane)) & 1u) slot[pos++] = (uint8_t)two;
    if ((v >> (2u * lane + 1u)) & 1u) slot[pos] = (uint8_t)(two >> 8);
    const uint32_t *pl = S->planes + p * H5FZ_WF_STRIDE;
    uint32_t nibs = h5fz_wf_bm0_byte(pl[4u * lane], pl[4u * lane + 1u]) |
                    (h5fz_wf_bm0_byte(pl[4u * lane + 2u], pl[4u * lane + 3u]) << 8);
    uint32_t t, at = S->c0[p] + h5fz_wf_exscan((uint32_t)__popc(nibs), &t);
    if (!nibs) continue;
    for (uint32_t k = 0; k < 4u; k++) {
      uint32_t x = pl[4u * lane + k];
      for (uint32_t b = 0; b < 4u; b++)
        if ((nibs >> (4u * k + b)) & 1u) slot[at++] = (uint8_t)(x >> (8u * b));
    }
  }
  if (tid == 0) *entry = size;
}

/* Sum of the zigzag-decoded words of one group from its planes 0..np-1
 * (the others are zero and were not written; np = 0: all are): a word u
 * decodes to u >> 1 when even and to -(u >> 1) - 1 when odd (wrapping). */
H5FZ_FN uint32_t h5fz_wf_group_sum(const h5fz_wf_smem *S, uint32_t g, uint32_t np)
{
  if (!np) return 0;
  const uint32_t odd = S->planes[g];
  uint32_t s = 0u - (uint32_t)__popc(odd);
  for (uint32_t p = 1; p < np; p++) {
    uint32_t x = S->planes[p * H5FZ_WF_STRIDE + g];
    s += ((uint32_t)__popc(x & ~odd) - (uint32_t)__popc(x & odd)) << (p - 1u);
  }
  return s;
}

/* Inclusive warp prefix sum of the zigzag-decoded words. */
H5FZ_FN uint32_t h5fz_wf_inclusive_unzz(uint32_t u)
{
  return h5fz_warp_inclusive((u >> 1) ^ (0u - (u & 1u)));
}

/* Decode one sub-chunk of 4096 float32 values from src (entry: its size,
 * raw when the high bit is set; the host checked a raw size, h5fz_size_entry_check) into
 * out[] (escaped values come out as bin 0's value and are patched from the
 * side section on the host). Returns 1 (on every thread) when the RZE
 * stream is inconsistent, exactly when h5fz_rze_decode would fail, or a
 * raw entry's size is not 16384. words: NULL, or where the words (the
 * prefix sums of the sub-chunk) go instead of the values (lorenzo_nd's
 * 1-D predictor, whose sums continue across sub-chunks: the
 * h5fz_lnd_*_kernel kernels add the carry and dequantize); out is then
 * not written. */
H5FZ_FN int h5fz_wf_decode(h5fz_wf_smem *S, const uint8_t *src, uint32_t entry, const h5fz_quant_params *q,
                           float *out, uint32_t *words)
{
  const uint32_t tid = threadIdx.x, lane = tid & 31u, warp = tid >> 5, nwarps = blockDim.x >> 5;
  const uint32_t size = entry & 0x7fffffffu;
  uint32_t np = 32u;
  if (entry & 0x80000000u) {
    if (size != H5FZ_WF_BYTES) return 1; /* the host refuses it first (h5fz_size_entry_check); never read past it */
    for (uint32_t i = tid; i < H5FZ_WF_ELEMS; i += blockDim.x)
      S->planes[(i >> 7) * H5FZ_WF_STRIDE + (i & 127u)] = (uint32_t)src[4u * i] | ((uint32_t)src[4u * i + 1u] << 8) |
                                                          ((uint32_t)src[4u * i + 2u] << 16) |
                                                          ((uint32_t)src[4u * i + 3u] << 24);
  } else {
    /* 1. the top bitmap gives the level-1 bitmap (a dropped byte repeats
     * the last kept one) */
    if (warp == 0) {
      uint32_t bad = size < H5FZ_WF_TOP, t2 = 0, t1 = 0;
      if (!bad) {
        uint32_t top = src[lane], r = h5fz_wf_exscan((uint32_t)__popc(top), &t2);
        bad = H5FZ_WF_TOP + t2 > size;
        uint64_t v = 0;
        if (!bad) {
          const uint8_t *kept = src + H5FZ_WF_TOP;
          uint32_t last = r ? kept[r - 1u] : 0u;
          for (uint32_t j = 0; j < 8u; j++) {
            if ((top >> j) & 1u) last = kept[r++];
            v |= (uint64_t)last << (8u * j);
          }
          S->bm1[lane] = v;
          S->c1[lane] = h5fz_wf_exscan((uint32_t)__popcll(v), &t1);
          bad = H5FZ_WF_TOP + t2 + t1 > size;
        }
      }
      if (lane == 0) {
        S->bad = bad;
        S->c_top2 = t2;
        S->c_top1 = t1;
      }
    }
    __syncthreads();
    if (S->bad) return 1;
    /* 2. the level-1 bitmap gives the level-0 bitmap */
    const uint8_t *kept1 = src + H5FZ_WF_TOP + S->c_top2;
    for (uint32_t p = warp; p < 32u; p += nwarps) {
      const uint64_t v = S->bm1[p];
      const uint32_t base = S->c1[p];
      uint32_t r_lo = base + (uint32_t)__popcll(v & ((2ull << (2u * lane)) - 1ull));
      uint32_t r_hi = base + (uint32_t)__popcll(lane == 31u ? v : v & ((4ull << (2u * lane)) - 1ull));
      uint32_t lo = r_lo ? kept1[r_lo - 1u] : 0u, hi = r_hi ? kept1[r_hi - 1u] : 0u;
      *(uint16_t *)(S->bm0 + 64u * p + 2u * lane) = (uint16_t)(lo | (hi << 8));
      uint32_t c0 = __reduce_add_sync(H5FZ_WF_FULL, (uint32_t)__popc(lo | (hi << 8)));
      if (lane == 0) S->c0[p] = c0;
    }
    __syncthreads();
    /* 3. level 0's offsets; the stream must be used up exactly */
    if (warp == 0) {
      uint32_t t0, c0 = S->c0[lane], e0 = h5fz_wf_exscan(c0, &t0);
      uint32_t nonzero = __ballot_sync(H5FZ_WF_FULL, c0 != 0u);
      S->c0[lane] = H5FZ_WF_TOP + S->c_top2 + S->c_top1 + e0;
      if (lane == 0) {
        S->bad = H5FZ_WF_TOP + S->c_top2 + S->c_top1 + t0 != size;
        S->np = 32u - (uint32_t)__clz((int)nonzero);
      }
    }
    __syncthreads();
    if (S->bad) return 1;
    np = S->np;
    /* 4. level 0: the words of planes 0..np-1 (the others are zero) */
    for (uint32_t p = warp; p < np; p += nwarps) {
      uint32_t two = *(const uint16_t *)(S->bm0 + 64u * p + 2u * lane), t;
      uint32_t at = S->c0[p] + h5fz_wf_exscan((uint32_t)__popc(two), &t);
      uint32_t *pl = S->planes + p * H5FZ_WF_STRIDE + 4u * lane;
      for (uint32_t k = 0; k < 4u; k++) {
        uint32_t x = 0, nib = (two >> (4u * k)) & 15u;
        for (uint32_t b = 0; b < 4u; b++)
          if ((nib >> b) & 1u) x |= (uint32_t)src[at++] << (8u * b);
        pl[k] = x;
      }
    }
  }
  __syncthreads();
  /* 5. words from the planes, zigzag and delta decoded, dequantized: a
   * group of 32 values per step; each warp starts from the sum of the
   * groups before its own */
  const uint32_t per_warp = H5FZ_WF_GROUPS / nwarps, g0 = warp * per_warp;
  uint32_t mine = 0;
  for (uint32_t g = g0 + lane; g < g0 + per_warp; g += 32u) mine += h5fz_wf_group_sum(S, g, np);
  mine = __reduce_add_sync(H5FZ_WF_FULL, mine);
  if (lane == 0) S->warp_out[warp] = mine;
  __syncthreads();
  uint32_t carry = 0;
  for (uint32_t w = 0; w < warp; w++) carry += S->warp_out[w];
  float *dst = words ? (float *)0 : out + 32u * g0 + lane;
  uint32_t *wdst = words ? words + 32u * g0 + lane : (uint32_t *)0;
  const uint32_t *col = S->planes + g0;
  for (uint32_t g = 0; g < per_warp; g++, col++) {
    uint32_t u = 0;
    if (np > H5FZ_WF_BROADCAST_PLANES) {
      u = h5fz_warp_transpose32(lane < np ? col[lane * H5FZ_WF_STRIDE] : 0u);
    } else {
#pragma unroll
      for (uint32_t p = 0; p < H5FZ_WF_BROADCAST_PLANES; p++) {
        if (p >= np) break;
        u |= ((col[p * H5FZ_WF_STRIDE] >> lane) & 1u) << p;
      }
    }
    uint32_t x = h5fz_wf_inclusive_unzz(u);
    uint32_t w = carry + x;
    carry += __shfl_sync(H5FZ_WF_FULL, x, 31);
    if (words) {
      __stcs(wdst, w);
      wdst += 32;
    } else {
      __stcs(dst, h5fz_quant_recon_32((int32_t)w, q->step));
      dst += 32;
    }
  }
  return 0;
}

#endif /* H5FZ_ON_GPU, sm_80+ */
#endif /* H5FZ_OP_WARP_FUSED_H */
