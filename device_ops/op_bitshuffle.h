/*
 * op_bitshuffle.h - transform: words -> bit planes. With n words of W bits
 * (n a multiple of 8), the output is W planes of n/8 bytes, plane p first for
 * p = 0 (least significant) .. W-1; bit k of byte j of plane p is bit p of
 * word 8j+k. Small words leave the high planes all zero, which RZE removes.
 * (Bitshuffle as in Masui et al. 2015, here on quantization bins.)
 * in and out must differ. Templated per word width. The GPU form works a
 * warp at a time and needs n to be a multiple of 32 (executors pass 64k).
 */
#if H5FZ_ON_GPU
/* The GPU writes the same bytes a warp at a time: lane k holds word 32g+k,
 * a ballot over bit p is then 4 bytes of plane p, and lane p keeps it. */
H5FZ_FN void H5FZ_TN(h5fz_bitshuffle_encode)(const h5fz_blk *blk, const H5FZ_T_WORD *in,
                                             uint8_t *out, uint32_t n)
{
  uint32_t lane = blk->tid & 31u, warp = blk->tid >> 5, nwarps = blk->nthreads >> 5;
  uint32_t plane_words = n / 32u; /* u32 per plane */
  uint32_t *out32 = (uint32_t *)out;
  for (uint32_t g = warp; g < n / 32u; g += nwarps) {
    H5FZ_T_WORD w = in[32u * g + lane];
    uint32_t mine[H5FZ_T_BITS / 32u];
#pragma unroll
    for (uint32_t p = 0; p < H5FZ_T_BITS; p++) {
      uint32_t b = __ballot_sync(0xffffffffu, (uint32_t)(w >> p) & 1u);
      if (lane == (p & 31u)) mine[p >> 5] = b;
    }
#pragma unroll
    for (uint32_t h = 0; h < H5FZ_T_BITS / 32u; h++) out32[(32u * h + lane) * plane_words + g] = mine[h];
  }
}

/* Inverse, a warp per 32 words: lane p holds 4 bytes of plane p (and p+32),
 * shuffles hand every lane its bit of each plane. */
H5FZ_FN void H5FZ_TN(h5fz_bitshuffle_decode)(const h5fz_blk *blk, const uint8_t *in,
                                             H5FZ_T_WORD *out, uint32_t n)
{
  uint32_t lane = blk->tid & 31u, warp = blk->tid >> 5, nwarps = blk->nthreads >> 5;
  uint32_t plane_words = n / 32u;
  const uint32_t *in32 = (const uint32_t *)in;
  for (uint32_t g = warp; g < n / 32u; g += nwarps) {
    uint32_t mine[H5FZ_T_BITS / 32u];
#pragma unroll
    for (uint32_t h = 0; h < H5FZ_T_BITS / 32u; h++) mine[h] = in32[(32u * h + lane) * plane_words + g];
    H5FZ_T_WORD w = 0;
#pragma unroll
    for (uint32_t p = 0; p < H5FZ_T_BITS; p++) {
      uint32_t v = __shfl_sync(0xffffffffu, mine[p >> 5], (int)(p & 31u));
      w |= (H5FZ_T_WORD)((v >> lane) & 1u) << p;
    }
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
