/*
 * op_bitshuffle.h - transform: words -> bit planes. With n words of W bits
 * (n a multiple of 8), the output is W planes of n/8 bytes, plane p first for
 * p = 0 (least significant) .. W-1; bit k of byte j of plane p is bit p of
 * word 8j+k. Small words leave the high planes all zero, which RZE removes.
 * (Bitshuffle as in Masui et al. 2015, here on quantization bins.)
 * in and out must differ. Templated per word width. The GPU form works a
 * warp at a time and needs n to be a multiple of 32 (executors pass 64k).
 */
/* Shared memory of the GPU's padded forms for n words of `bits` bits: the
 * planes with one word of padding each. */
#define H5FZ_BITSHUFFLE_PAD_BYTES(n, bits) ((uint32_t)(bits) * ((uint32_t)(n) / 32u + 1u) * 4u)
#if H5FZ_ON_GPU
#ifndef H5FZ_WARP_TRANSPOSE32
#define H5FZ_WARP_TRANSPOSE32
/* 32 x 32 bit transpose across a warp (lane = row, bit = column): on
 * return bit k of lane p is what bit p of lane k was. Five butterfly steps
 * of one shuffle each (Hacker's Delight's transpose32, spread over lanes);
 * it is its own inverse. */
H5FZ_FN uint32_t h5fz_warp_transpose32(uint32_t x)
{
  const uint32_t lane = threadIdx.x & 31u;
  const uint32_t masks[5] = {0x0000ffffu, 0x00ff00ffu, 0x0f0f0f0fu, 0x33333333u, 0x55555555u};
#pragma unroll
  for (uint32_t k = 0; k < 5u; k++) {
    uint32_t sh = 16u >> k, m = masks[k];
    uint32_t y = __shfl_xor_sync(0xffffffffu, x, (int)sh);
    /* selects, not a branch: half the lanes take each side */
    uint32_t upper = 0u - ((lane >> (4u - k)) & 1u), keep = m ^ upper;
    uint32_t moved = upper ? (y >> sh) : (y << sh);
    x = (x & keep) | (moved & ~keep);
  }
  return x;
}

/* Small words leave the high planes zero. When the warp's 32 words have at
 * most H5FZ_BALLOT_PLANES significant bits, one ballot per such plane is
 * cheaper than the five-step transpose (about 5 instructions a plane
 * against about 50 for the transpose); the choice is warp-uniform and the
 * bits are the same either way. */
#define H5FZ_BALLOT_PLANES 10u

/* Lane p gets plane p of the warp's words x (bit k = bit p of lane k's x). */
H5FZ_FN uint32_t h5fz_warp_planes32(uint32_t x)
{
#if __CUDA_ARCH__ >= 800
  uint32_t any = __reduce_or_sync(0xffffffffu, x);
#else
  uint32_t any = x;
  for (uint32_t d = 16; d > 0; d >>= 1) any |= __shfl_xor_sync(0xffffffffu, any, (int)d);
#endif
  uint32_t bits = 32u - (uint32_t)__clz((int)any);
  if (bits > H5FZ_BALLOT_PLANES) return h5fz_warp_transpose32(x);
  const uint32_t lane = threadIdx.x & 31u;
  uint32_t mine = 0;
  for (uint32_t p = 0; p < bits; p++) {
    uint32_t plane = __ballot_sync(0xffffffffu, (x >> p) & 1u);
    mine = lane == p ? plane : mine;
  }
  return mine;
}

/* Inverse: lane p holds plane p; lane k gets its word back. */
H5FZ_FN uint32_t h5fz_warp_unplanes32(uint32_t plane)
{
  uint32_t nonzero = __ballot_sync(0xffffffffu, plane != 0u);
  uint32_t bits = 32u - (uint32_t)__clz((int)nonzero);
  if (bits > H5FZ_BALLOT_PLANES) return h5fz_warp_transpose32(plane);
  const uint32_t lane = threadIdx.x & 31u;
  uint32_t w = 0;
  for (uint32_t p = 0; p < bits; p++) w |= ((__shfl_sync(0xffffffffu, plane, (int)p) >> lane) & 1u) << p;
  return w;
}
#endif

/* The GPU writes the same bytes a warp at a time: lane k holds word 32g+k;
 * after the bit transpose lane p holds 4 bytes of plane p (and, for 64-bit
 * words, of plane 32+p). */
H5FZ_FN void H5FZ_TN(h5fz_bitshuffle_encode)(const h5fz_blk *blk, const H5FZ_T_WORD *in,
                                             uint8_t *out, uint32_t n)
{
  uint32_t lane = blk->tid & 31u, warp = blk->tid >> 5, nwarps = blk->nthreads >> 5;
  uint32_t plane_words = n / 32u; /* u32 per plane */
  uint32_t *out32 = (uint32_t *)out;
  for (uint32_t g = warp; g < n / 32u; g += nwarps) {
    H5FZ_T_WORD w = in[32u * g + lane];
#pragma unroll
    for (uint32_t h = 0; h < H5FZ_T_BITS / 32u; h++)
      out32[(32u * h + lane) * plane_words + g] = h5fz_warp_planes32((uint32_t)(w >> (32u * h)));
  }
}

/* The same bytes through a padded plane buffer pad (H5FZ_BITSHUFFLE_PAD_BYTES
 * of shared memory): above, the 32 lanes of a warp store into 32 planes that
 * lie n/32 words apart, all in one shared-memory bank (a 32-way conflict on
 * every store); planes of n/32 + 1 words put the lanes in 32 banks, and a
 * second pass copies the planes to out, a warp per plane, lanes on
 * consecutive words. Block-wide: all threads call it (one barrier inside). */
H5FZ_FN void H5FZ_TN(h5fz_bitshuffle_encode_padded)(const h5fz_blk *blk, const H5FZ_T_WORD *in, uint8_t *out,
                                                    uint32_t n, uint32_t *pad)
{
  uint32_t lane = blk->tid & 31u, warp = blk->tid >> 5, nwarps = blk->nthreads >> 5;
  uint32_t plane_words = n / 32u, stride = plane_words + 1u;
  for (uint32_t g = warp; g < plane_words; g += nwarps) {
    H5FZ_T_WORD w = in[32u * g + lane];
#pragma unroll
    for (uint32_t h = 0; h < H5FZ_T_BITS / 32u; h++)
      pad[(32u * h + lane) * stride + g] = h5fz_warp_planes32((uint32_t)(w >> (32u * h)));
  }
  __syncthreads();
  uint32_t *out32 = (uint32_t *)out;
  for (uint32_t p = warp; p < H5FZ_T_BITS; p += nwarps)
    for (uint32_t g = lane; g < plane_words; g += 32u) out32[p * plane_words + g] = pad[p * stride + g];
}

/* Inverse, a warp per 32 words: lane p loads 4 bytes of plane p (and p+32);
 * the transpose gives lane k its word. */
H5FZ_FN void H5FZ_TN(h5fz_bitshuffle_decode)(const h5fz_blk *blk, const uint8_t *in,
                                             H5FZ_T_WORD *out, uint32_t n)
{
  uint32_t lane = blk->tid & 31u, warp = blk->tid >> 5, nwarps = blk->nthreads >> 5;
  uint32_t plane_words = n / 32u;
  const uint32_t *in32 = (const uint32_t *)in;
  for (uint32_t g = warp; g < n / 32u; g += nwarps) {
    H5FZ_T_WORD w = 0;
#pragma unroll
    for (uint32_t h = 0; h < H5FZ_T_BITS / 32u; h++)
      w |= (H5FZ_T_WORD)h5fz_warp_unplanes32(in32[(32u * h + lane) * plane_words + g]) << (32u * h);
    out[32u * g + lane] = w;
  }
}
/* Inverse through the padded plane buffer (the loads of the plain form hit
 * one bank as its stores do): planes copied into pad first, coalesced. */
H5FZ_FN void H5FZ_TN(h5fz_bitshuffle_decode_padded)(const h5fz_blk *blk, const uint8_t *in, H5FZ_T_WORD *out,
                                                    uint32_t n, uint32_t *pad)
{
  uint32_t lane = blk->tid & 31u, warp = blk->tid >> 5, nwarps = blk->nthreads >> 5;
  uint32_t plane_words = n / 32u, stride = plane_words + 1u;
  const uint32_t *in32 = (const uint32_t *)in;
  for (uint32_t p = warp; p < H5FZ_T_BITS; p += nwarps)
    for (uint32_t g = lane; g < plane_words; g += 32u) pad[p * stride + g] = in32[p * plane_words + g];
  __syncthreads();
  for (uint32_t g = warp; g < plane_words; g += nwarps) {
    H5FZ_T_WORD w = 0;
#pragma unroll
    for (uint32_t h = 0; h < H5FZ_T_BITS / 32u; h++)
      w |= (H5FZ_T_WORD)h5fz_warp_unplanes32(pad[(32u * h + lane) * stride + g]) << (32u * h);
    out[32u * g + lane] = w;
  }
}
#else
H5FZ_FN void H5FZ_TN(h5fz_bitshuffle_encode)(const h5fz_blk *blk, const H5FZ_T_WORD *in,
                                             uint8_t *out, uint32_t n)
{
  uint32_t plane_bytes = n / 8u, lo, hi;
  h5fz_blk_share(blk, plane_bytes * H5FZ_T_BITS, 1u, &lo, &hi);
  for (uint32_t idx = lo; idx < hi; idx++) {
    uint32_t p = idx / plane_bytes, j = idx - p * plane_bytes;
    const H5FZ_T_WORD *w = in + 8u * j;
    uint32_t byte = 0;
    for (uint32_t k = 0; k < 8u; k++) byte |= (uint32_t)((w[k] >> p) & 1u) << k;
    out[idx] = (uint8_t)byte;
  }
}

H5FZ_FN void H5FZ_TN(h5fz_bitshuffle_decode)(const h5fz_blk *blk, const uint8_t *in,
                                             H5FZ_T_WORD *out, uint32_t n)
{
  uint32_t plane_bytes = n / 8u, lo, hi;
  h5fz_blk_share(blk, n, 1u, &lo, &hi);
  for (uint32_t i = lo; i < hi; i++) {
    H5FZ_T_WORD w = 0;
    const uint8_t *src = in + i / 8u;
    uint32_t k = i & 7u;
    for (uint32_t p = 0; p < H5FZ_T_BITS; p++)
      w |= (H5FZ_T_WORD)((src[(uint64_t)p * plane_bytes] >> k) & 1u) << p;
    out[i] = w;
  }
}
#endif /* H5FZ_ON_GPU */
