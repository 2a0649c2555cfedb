/*
 * op_warp_fast.h - the fast chain (quant delta zigzag bitpack) on a whole
 * float32 sub-chunk of 4096 values (16 KiB), encode and decode, with the
 * words in registers from the load to the planes. GPU only.
 *
 * Why: the generic kernel runs the chain op by op through shared memory
 * (the values, the bins, the zigzag words, a width scan over the block,
 * then a bit loop per plane), and ran slower than the default chain's
 * warp-fused kernel (470 / 624 against 837 / 890 GB/s on the realistic
 * array at 1e-4). Here a warp takes 32 values at a time (lane k value
 * 32g+k of group g), as op_warp_fused.h does: quantize, delta (the
 * previous word by a shuffle), zigzag, the width as the warp OR of the
 * words (__reduce_or_sync), and the `width` planes by ballots (or the
 * 5-step transpose past H5FZ_BALLOT_PLANES bits). Only the plane words go
 * to shared memory, at the warp's own running offset; after one barrier
 * (the warps' word counts give each its place) every warp copies its words
 * to the slot with coalesced stores. The decode stages the stream in
 * shared memory (one coalesced pass, word-aligned whatever the packed
 * offset), every warp scans the 128 width bytes itself (no barrier for
 * the offsets), sums the words of the groups before its own from their
 * planes' popcounts (a lane per group: no barrier for the delta's start
 * either), and then rebuilds each group's words from broadcast plane
 * loads (or the transpose), one warp prefix sum for the delta, and stores
 * the values.
 *
 * The bytes are exactly those of op_quant.h, op_delta.h and op_bitpack.h
 * for n = 4096 words ([128 width bytes][planes of group 0][planes of
 * group 1]..., raw zigzag words when that is not smaller than 16384
 * bytes); tests/gpu/test_warp_fast_emu.c checks them on the CPU and
 * tests/gpu/test_gpu_identical.c and test_gpu_warp_fused.c on a GPU. Linear quantizer modes (ABS,
 * REL) and full sub-chunks only, as op_warp_fused.h; the generic kernel
 * takes the others, float64 and partial sub-chunks. Included after
 * op_warp_fused.h, whose quantizer (h5fz_wf_quant) and scans it uses.
 */
#ifndef H5FZ_OP_WARP_FAST_H
#define H5FZ_OP_WARP_FAST_H

#if H5FZ_ON_GPU && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800

#define H5FZ_WFP_GROUPS 128u /* 32-value groups of a sub-chunk = its width bytes */
#define H5FZ_WFP_WORDS 4096u /* words of a sub-chunk: raw size 16384 bytes */

/* Shared memory of one block (one sub-chunk). */
typedef struct {
  /* encode: each warp's plane words from 32 * (its first group) on, at
   * its running offset; decode: the sub-chunk's stream, word-aligned */
  uint32_t words[H5FZ_WFP_WORDS];
  uint32_t esc[H5FZ_WFP_GROUPS];    /* encode: escape mask of each group */
  uint8_t width[H5FZ_WFP_GROUPS];   /* encode: width of each group */
  uint32_t warp_n[32];              /* encode: plane words of each warp */
} h5fz_wfp_smem;

/* The ballot of (v & bit) != 0. In PTX, so that the test stays one
 * instruction (LOP3 with a predicate result): written in C, the compiler
 * turned it into a shift, an AND and a compare, three instructions a plane
 * in the encode's hottest loop. The emulator takes the C form. */
H5FZ_FN uint32_t h5fz_wfp_ballot_bits(uint32_t v, uint32_t bit)
{
#ifdef CUDA_EMU_H
  return __ballot_sync(H5FZ_WF_FULL, (v & bit) != 0u);
#else
  uint32_t r;
  /* volatile: a warp collective must not be moved into the lane-0 branch
   * that alone uses its result */
  asm volatile("{\n\t.reg .pred q;\n\t.reg .b32 t;\n\tand.b32 t, %1, %2;\n\tsetp.ne.u32 q, t, 0;\n\t"
      "vote.sync.ballot.b32 %0, q, 0xffffffff;\n\t}"
      : "=r"(r)
      : "r"(v), "r"(bit));
  return r;
#endif
}

/* The significant bits of a, 0..32 (bfind gives -1 for 0: one instruction
 * and an add, where 32 - __clz(a) compiled to three). */
H5FZ_FN uint32_t h5fz_wfp_width(uint32_t a)
{
#ifdef CUDA_EMU_H
  return 32u - (uint32_t)__clz((int)a);
#else
  uint32_t b;
  asm("bfind.u32 %0, %1;" : "=r"(b) : "r"(a));
  return b + 1u;
#endif
}

/* Inclusive warp prefix sum: each step a shuffle whose predicate says
 * whether the source lane exists and an add under it (two instructions a
 * step, where the C form's select made three). */
H5FZ_FN uint32_t h5fz_wfp_inclusive(uint32_t v)
{
#ifdef CUDA_EMU_H
  return h5fz_warp_inclusive(v);
#else
#pragma unroll
  for (int d = 1; d < 32; d <<= 1)
    asm volatile("{\n\t.reg .pred p;\n\t.reg .b32 t;\n\tshfl.sync.up.b32 t|p, %0, %1, 0, 0xffffffff;\n\t"
        "@p add.u32 %0, %0, t;\n\t}"
        : "+r"(v)
        : "r"(d));
  return v;
#endif
}

/* Stores of the plane words to shared memory. On the GPU through the
 * word's 32-bit shared-window address, taken once (cvta, in PTX so that
 * it stays in a register): in C the compiler rebuilt the address from the
 * window base before every store, five instructions a ballot pair. The
 * emulator keeps plain pointers. */
#ifdef CUDA_EMU_H
typedef uint32_t *h5fz_wfp_sptr;
#define H5FZ_WFP_AT(sp, i) ((sp) + (i))
H5FZ_FN h5fz_wfp_sptr h5fz_wfp_sptr_of(uint32_t *p) { return p; }
H5FZ_FN void h5fz_wfp_sts(h5fz_wfp_sptr at, uint32_t v) { *at = v; }
#else
typedef uint32_t h5fz_wfp_sptr;
#define H5FZ_WFP_AT(sp, i) ((sp) + 4u * (i))
H5FZ_FN h5fz_wfp_sptr h5fz_wfp_sptr_of(uint32_t *p)
{
  uint32_t a;
  asm("{\n\t.reg .u64 t;\n\tcvta.to.shared.u64 t, %1;\n\tcvt.u32.u64 %0, t;\n\t}" : "=r"(a) : "l"(p));
  return a;
}
H5FZ_FN void h5fz_wfp_sts(h5fz_wfp_sptr at, uint32_t v) { asm volatile("st.shared.u32 [%0], %1;" ::"r"(at), "r"(v) : "memory"); }
#endif

/* The planes of the warp's zigzag words z (one group) to dst[0 .. width)
 * (a = their OR, width = its significant bits). Up to H5FZ_BALLOT_PLANES
 * bits: a ballot per plane, stored by lane 0, two planes per test of a;
 * dst[width] may get a zero word too (the next group's first word, or one
 * past the warp's words: never copied). More: the transpose, lane p
 * storing plane p. */
H5FZ_FN void h5fz_wfp_store_planes(h5fz_wfp_sptr dst, uint32_t z, uint32_t a, uint32_t width, uint32_t lane)
{
  if (!a) return; /* width 0 (most groups of smooth data): nothing, one test */
  if (a >> H5FZ_BALLOT_PLANES) {
    uint32_t plane = h5fz_warp_transpose32(z);
    if (lane < width) h5fz_wfp_sts(H5FZ_WFP_AT(dst, lane), plane);
    return;
  }
#pragma unroll
  for (uint32_t p = 0; p < H5FZ_BALLOT_PLANES; p += 2u) {
    if (!(a >> p)) break;
    uint32_t lo = h5fz_wfp_ballot_bits(z, 1u << p), hi = h5fz_wfp_ballot_bits(z, 2u << p);
    if (lane == 0) { /* plane p + 1 may be past the last: its ballot is 0 and the word is not counted */
      h5fz_wfp_sts(H5FZ_WFP_AT(dst, p), lo);
      h5fz_wfp_sts(H5FZ_WFP_AT(dst, p + 1u), hi);
    }
  }
}

/* The zigzag word of the warp's value x (bin w, the word before it in
 * *carry; lane 0 takes *carry, lane l the word of lane l - 1), and the
 * group's last word to *carry: one shuffle (a rotation). */
H5FZ_FN uint32_t h5fz_wfp_zigzag(uint32_t w, uint32_t *carry, uint32_t lane)
{
  uint32_t r = __shfl_sync(H5FZ_WF_FULL, w, (int)((lane + 31u) & 31u));
  uint32_t prev = lane ? r : *carry;
  *carry = r;
  uint32_t d = w - prev;
  return (d << 1) ^ (0u - (d >> 31));
}

/* The sub-chunk did not shrink: its 4096 zigzag words to slot, raw, from
 * the values again (rare: only incompressible data). */
H5FZ_FN void h5fz_wfp_encode_raw(const float *in, const h5fz_quant_params *q, uint32_t g0, uint32_t per_warp,
                                 uint32_t *slot32)
{
  const uint32_t lane = threadIdx.x & 31u;
  uint32_t carry = 0, w;
  if (g0) (void)h5fz_wf_quant(in[32u * g0 - 1u], q, &carry);
  for (uint32_t g = g0; g < g0 + per_warp; g++) {
    (void)h5fz_wf_quant(in[32u * g + lane], q, &w);
    slot32[32u * g + lane] = h5fz_wfp_zigzag(w, &carry, lane);
  }
}

/* The escaped values of the warp's groups to opos[]/oval[] in index order
 * (escape masks in S->esc), the whole block's count to *ocount (rare: only
 * sub-chunks that have escapes). */
H5FZ_FN void h5fz_wfp_outliers(const h5fz_wfp_smem *S, const float *in, uint32_t g0, uint32_t per_warp,
                               uint32_t *ocount, uint32_t *opos, uint32_t *oval)
{
  const uint32_t lane = threadIdx.x & 31u;
  uint32_t before = 0, all = 0;
  for (uint32_t g = lane; g < H5FZ_WFP_GROUPS; g += 32u) {
    uint32_t c = (uint32_t)__popc(S->esc[g]);
    before += g < g0 ? c : 0u;
    all += c;
  }
  uint32_t pos = __reduce_add_sync(H5FZ_WF_FULL, before);
  all = __reduce_add_sync(H5FZ_WF_FULL, all);
  if (threadIdx.x == 0) *ocount = all;
  h5fz_wf_place_outliers(S->esc, in, g0, per_warp, pos, lane, opos, oval);
}

/* Encode the 4096 values in[] of one sub-chunk (all threads of the block,
 * nwarps = 1, 2, 4 or 8 warps: blockDim.x / 32, a constant in the generated
 * kernels so that the loops are known). The bitpack stream, or the zigzag words raw when it
 * would not be smaller than 16384 bytes, goes to slot (16384 bytes, 4-byte
 * aligned), its size (raw: 16384 | 0x80000000) to *entry, the escaped
 * values' positions and bits to opos[]/oval[] in index order and their
 * count to *ocount. */
H5FZ_FN void h5fz_wfp_encode(h5fz_wfp_smem *S, uint32_t nwarps, const float *in, const h5fz_quant_params *q, uint8_t *slot,
                             uint32_t *entry, uint32_t *ocount, uint32_t *opos, uint32_t *oval)
{
  const uint32_t tid = threadIdx.x, lane = tid & 31u, warp = tid >> 5;
  const uint32_t per_warp = H5FZ_WFP_GROUPS / nwarps, g0 = warp * per_warp;
  uint32_t *const mine = S->words + 32u * g0;
  const h5fz_wfp_sptr mine_s = h5fz_wfp_sptr_of(mine);
  /* lane l keeps the escape mask and width of the warp's group 32i + l
   * (i: the 32 groups in work) in registers, stored every 32 groups: a
   * select each instead of a single-lane branch to shared memory */
  uint32_t carry = 0, at = 0, esc_any = 0, my_esc = 0, my_width = 0;
  if (g0) (void)h5fz_wf_quant(in[32u * g0 - 1u], q, &carry); /* the word before the warp's first */
  /* 1. quantize, delta, zigzag, width, planes: a group per step, the next
   * 4 groups' loads in flight while these are worked */
  const float *src = in + 32u * g0 + lane;
  float x[4];
#pragma unroll
  for (uint32_t j = 0; j < 4u; j++) x[j] = __ldcs(src + 32u * j);
  for (uint32_t k = 0; k < per_warp; k += 4u) {
    float next[4];
    /* the last step loads its own groups again: no branch, no read past the sub-chunk */
    if (k + 4u < per_warp) src += 128;
#pragma unroll
    for (uint32_t j = 0; j < 4u; j++) next[j] = __ldcs(src + 32u * j);
    const uint32_t rel = lane - (k & 31u); /* j: the group whose values lane `rel == j` keeps */
#pragma unroll
    for (uint32_t j = 0; j < 4u; j++) {
      uint32_t w;
      uint32_t esc = __ballot_sync(H5FZ_WF_FULL, h5fz_wf_quant(x[j], q, &w));
      uint32_t z = h5fz_wfp_zigzag(w, &carry, lane);
      uint32_t a = __reduce_or_sync(H5FZ_WF_FULL, z), width = h5fz_wfp_width(a);
      my_esc = rel == j ? esc : my_esc;
      my_width = rel == j ? width : my_width;
      h5fz_wfp_store_planes(H5FZ_WFP_AT(mine_s, at), z, a, width, lane);
      at += width;
    }
    if (((k + 4u) & 31u) == 0 || k + 4u >= per_warp) { /* 32 groups (or the warp's last) done */
      const uint32_t base = k & ~31u;
      if (base + lane < per_warp) {
        S->esc[g0 + base + lane] = my_esc;
        S->width[g0 + base + lane] = (uint8_t)my_width;
      }
      esc_any |= my_esc;
    }
#pragma unroll
    for (uint32_t j = 0; j < 4u; j++) x[j] = next[j];
  }
  if (lane == 0) S->warp_n[warp] = at;
  const int any_esc = __syncthreads_or(esc_any != 0u);
  /* 2. each warp's place among the plane words */
  uint32_t before = 0, total = 0;
  for (uint32_t w = 0; w < nwarps; w++) {
    uint32_t c = S->warp_n[w];
    before += w < warp ? c : 0u;
    total += c;
  }
  if (any_esc)
    h5fz_wfp_outliers(S, in, g0, per_warp, ocount, opos, oval);
  else if (tid == 0)
    *ocount = 0;
  uint32_t *const slot32 = (uint32_t *)slot;
  const uint32_t size = H5FZ_WFP_GROUPS + 4u * total;
  if (size >= 4u * H5FZ_WFP_WORDS) { /* bitpack would not shrink it: the zigzag words as they are */
    h5fz_wfp_encode_raw(in, q, g0, per_warp, slot32);
    if (tid == 0) *entry = (4u * H5FZ_WFP_WORDS) | 0x80000000u;
    return;
  }
  /* 3. [width of every group][planes of group 0][planes of group 1]... */
  if (tid < H5FZ_WFP_GROUPS / 4u) slot32[tid] = ((const uint32_t *)S->width)[tid];
  uint32_t *const dst = slot32 + H5FZ_WFP_GROUPS / 4u + before;
  for (uint32_t i = lane; i < at; i += 32u) dst[i] = mine[i];
  if (tid == 0) *entry = size;
}

/* Sum of the zigzag-decoded words of one group from its planes[0 ..
 * width): a word u decodes to u >> 1 when even and to -(u >> 1) - 1 when
 * odd (wrapping). */
H5FZ_FN uint32_t h5fz_wfp_group_sum(const uint32_t *planes, uint32_t width)
{
  if (!width) return 0;
  const uint32_t odd = planes[0];
  uint32_t s = 0u - (uint32_t)__popc(odd);
  for (uint32_t p = 1; p < width; p++) {
    uint32_t x = planes[p];
    s += ((uint32_t)__popc(x & ~odd) - (uint32_t)__popc(x & odd)) << (p - 1u);
  }
  return s;
}

/* Inclusive warp prefix sum of the zigzag-decoded words. */
H5FZ_FN uint32_t h5fz_wfp_inclusive_unzz(uint32_t u) { return h5fz_wfp_inclusive(h5fz_unzigzag_word_32(u)); }

/* Byte b (0..3) of v. */
H5FZ_FN uint32_t h5fz_wfp_byte(uint32_t v, uint32_t b) { return (v >> (8u * b)) & 0xffu; }

/* Decode one sub-chunk of 4096 float32 values (nwarps warps, as the
 * encode) from src (entry: its size,
 * raw when the high bit is set; any byte alignment) into out[] (escaped
 * values come out as bin 0's value and are patched from the side section
 * on the host). Returns 1 (on every thread) when the stream is refused,
 * exactly when h5fz_bitpack_decode would refuse it (shorter than the width
 * bytes, a width over 32, planes that do not use up the size exactly; and
 * here a size that is not 128 plus whole planes, which that check refuses
 * too), or when a raw entry's size is not 16384. */
H5FZ_FN int h5fz_wfp_decode(h5fz_wfp_smem *S, uint32_t nwarps, const uint8_t *src, uint32_t entry, const h5fz_quant_params *q,
                            float *out)
{
  const uint32_t tid = threadIdx.x, lane = tid & 31u, warp = tid >> 5;
  const uint32_t per_warp = H5FZ_WFP_GROUPS / nwarps, g0 = warp * per_warp;
  const uint32_t size = entry & 0x7fffffffu, raw = entry >> 31;
  if (raw ? size != 4u * H5FZ_WFP_WORDS : (size < H5FZ_WFP_GROUPS || (size & 3u))) return 1;
  /* 1. the stream to shared memory, word-aligned: each word cut from two
   * aligned ones when src is not aligned (the second only when it holds
   * bytes of the stream) */
  const uint32_t mis = (uint32_t)(unsigned long long)src & 3u, nw = size / 4u;
  const uint32_t *a32 = (const uint32_t *)(src - mis);
  for (uint32_t i = tid; i < nw; i += blockDim.x) {
    uint32_t lo = a32[i];
    if (mis) lo = __funnelshift_r(lo, 4u * (i + 1u) - mis < size ? a32[i + 1u] : 0u, 8u * mis);
    S->words[i] = lo;
  }
  __syncthreads();
  /* 2. where the warp's groups start: the sum of the words before them
   * (delta) and, bitpacked, the offset of their planes */
  uint32_t sum = 0, off = 0;
  if (raw) {
    for (uint32_t i = lane; i < 32u * g0; i += 32u) sum += h5fz_unzigzag_word_32(S->words[i]);
  } else {
    /* every warp: the 128 widths, 4 a lane (groups 4l .. 4l+3), scanned */
    const uint32_t v = S->words[lane];
    uint32_t w0 = h5fz_wfp_byte(v, 0), w1 = h5fz_wfp_byte(v, 1), w2 = h5fz_wfp_byte(v, 2), w3 = h5fz_wfp_byte(v, 3);
    uint32_t total, e = h5fz_wf_exscan(w0 + w1 + w2 + w3, &total);
    uint32_t wide = __ballot_sync(H5FZ_WF_FULL, w0 > 32u || w1 > 32u || w2 > 32u || w3 > 32u);
    if (wide || H5FZ_WFP_GROUPS + 4u * total != size) return 1; /* the same in every warp */
    /* the groups before the warp's, a lane per group */
    for (uint32_t j0 = 0; j0 < g0; j0 += 32u) {
      const uint32_t g = j0 + lane, src_lane = (g >> 2) & 31u, b = g & 3u;
      const uint32_t gv = __shfl_sync(H5FZ_WF_FULL, v, (int)src_lane), ge = __shfl_sync(H5FZ_WF_FULL, e, (int)src_lane);
      const uint32_t below = (b > 0 ? h5fz_wfp_byte(gv, 0) : 0u) + (b > 1 ? h5fz_wfp_byte(gv, 1) : 0u) +
                             (b > 2 ? h5fz_wfp_byte(gv, 2) : 0u);
      if (g < g0) sum += h5fz_wfp_group_sum(S->words + H5FZ_WFP_GROUPS / 4u + ge + below, h5fz_wfp_byte(gv, b));
    }
    off = H5FZ_WFP_GROUPS / 4u + __shfl_sync(H5FZ_WF_FULL, e, (int)((g0 >> 2) & 31u));
  }
  uint32_t carry = __reduce_add_sync(H5FZ_WF_FULL, sum);
  /* 3. words from the planes (or raw), zigzag and delta decoded,
   * dequantized: a group of 32 values per step */
  float *dst = out + 32u * g0 + lane;
  if (raw) {
    const uint32_t *words = S->words + 32u * g0 + lane;
#pragma unroll 4
    for (uint32_t i = 0; i < per_warp; i++, dst += 32, words += 32) {
      uint32_t x = h5fz_wfp_inclusive_unzz(*words);
      uint32_t w = carry + x;
      carry += __shfl_sync(H5FZ_WF_FULL, x, 31);
      __stcs(dst, h5fz_quant_recon_32((int32_t)w, q->step));
    }
    return 0;
  }
  const uint8_t *widths = (const uint8_t *)S->words + g0;
#pragma unroll 2
  for (uint32_t i = 0; i < per_warp; i++, dst += 32) {
    const uint32_t width = widths[i], *planes = S->words + off;
    off += width;
    uint32_t u = 0;
    if (width > H5FZ_WF_BROADCAST_PLANES) {
      u = h5fz_warp_transpose32(lane < width ? planes[lane] : 0u);
    } else {
#pragma unroll
      for (uint32_t p = 0; p < H5FZ_WF_BROADCAST_PLANES; p++) {
        if (p >= width) break;
        u |= ((planes[p] >> lane) & 1u) << p;
      }
    }
    uint32_t x = h5fz_wfp_inclusive_unzz(u);
    uint32_t w = carry + x;
    carry += __shfl_sync(H5FZ_WF_FULL, x, 31);
    __stcs(dst, h5fz_quant_recon_32((int32_t)w, q->step));
  }
  return 0;
}

#endif /* H5FZ_ON_GPU, sm_80+ */
#endif /* H5FZ_OP_WARP_FAST_H */
