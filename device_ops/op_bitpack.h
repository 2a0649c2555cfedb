/*
 * op_bitpack.h - coder: fixed-length bit packing per group of 32 words, as
 * cuSZp does (Huang et al., "cuSZp: An Ultra-fast GPU Error-bounded Lossy
 * Compression Framework", SC'23): each group stores its bit width b (one
 * byte, the bits of its largest word) and then b planes of 32 bits, plane p
 * holding bit p of the group's 32 words (word k in bit k, little-endian
 * u32). Output: [width of every group][planes of group 0][planes of group 1]...
 * n (the padded word count) is a multiple of 64, so groups are whole.
 * Templated per word width; fast to encode and decode, at some cost in ratio
 * against bitshuffle + RZE.
 */

H5FZ_FN uint32_t H5FZ_TN(h5fz_bitpack_width)(const H5FZ_T_WORD *g)
{
  H5FZ_T_WORD any = 0;
  for (uint32_t k = 0; k < 32u; k++) any |= g[k];
  uint32_t b = 0;
  while (b < H5FZ_T_BITS && (any >> b) != 0) b++;
  return b;
}

/* Encode n words into out[0..cap). Returns the size, or
 * H5FZ_RZE_NOT_SMALLER when it would not be smaller than the n words' bytes
 * or not fit (the caller then stores the words raw). */
H5FZ_FN uint32_t H5FZ_TN(h5fz_bitpack_encode)(const h5fz_blk *blk, const H5FZ_T_WORD *in, uint32_t n,
                                              uint8_t *out, uint32_t cap)
{
  uint32_t groups = n / 32u, lo, hi, bytes = 0;
  h5fz_blk_share(blk, groups, 1u, &lo, &hi);
  for (uint32_t g = lo; g < hi; g++) bytes += 4u * H5FZ_TN(h5fz_bitpack_width)(in + 32u * g);
  uint64_t total;
  uint64_t pos = groups + h5fz_blk_exscan(blk, bytes, &total);
  uint64_t size = groups + total;
  if (size >= (uint64_t)n * (H5FZ_T_BITS / 8u) || size > cap) return 0xffffffffu;
  for (uint32_t g = lo; g < hi; g++) {
    const H5FZ_T_WORD *w = in + 32u * g;
    uint32_t b = H5FZ_TN(h5fz_bitpack_width)(w);
    out[g] = (uint8_t)b;
    for (uint32_t p = 0; p < b; p++) {
      uint32_t plane = 0;
      for (uint32_t k = 0; k < 32u; k++) plane |= (uint32_t)((w[k] >> p) & 1u) << k;
      out[pos] = (uint8_t)plane;
      out[pos + 1] = (uint8_t)(plane >> 8);
      out[pos + 2] = (uint8_t)(plane >> 16);
      out[pos + 3] = (uint8_t)(plane >> 24);
      pos += 4;
    }
  }
  h5fz_blk_sync(blk);
  return (uint32_t)size;
}

/* Decode size bytes into n words. Returns 0, or -1 when a width exceeds the
 * word or the planes do not use up exactly size bytes. */
H5FZ_FN int H5FZ_TN(h5fz_bitpack_decode)(const h5fz_blk *blk, const uint8_t *in, uint32_t size,
                                         H5FZ_T_WORD *out, uint32_t n)
{
  uint32_t groups = n / 32u, lo, hi, bytes = 0, bad = 0;
  if (size < groups) return -1;
  h5fz_blk_share(blk, groups, 1u, &lo, &hi);
  for (uint32_t g = lo; g < hi; g++) {
    bad |= in[g] > H5FZ_T_BITS;
    bytes += 4u * in[g];
  }
  uint64_t total, bad_total;
  uint64_t pos = groups + h5fz_blk_exscan(blk, bytes, &total);
  (void)h5fz_blk_exscan(blk, bad, &bad_total);
  if (bad_total || groups + total != size) return -1; /* block-uniform */
  for (uint32_t g = lo; g < hi; g++) {
    H5FZ_T_WORD *w = out + 32u * g;
    for (uint32_t k = 0; k < 32u; k++) w[k] = 0;
    for (uint32_t p = 0; p < in[g]; p++) {
      uint32_t plane = (uint32_t)in[pos] | (uint32_t)in[pos + 1] << 8 | (uint32_t)in[pos + 2] << 16 |
                       (uint32_t)in[pos + 3] << 24;
      pos += 4;
      for (uint32_t k = 0; k < 32u; k++) w[k] |= (H5FZ_T_WORD)((plane >> k) & 1u) << p;
    }
  }
  h5fz_blk_sync(blk);
  return 0;
}
