/*
 * op_negabinary.h - transform: two's complement -> base -2 (negabinary), as
 * PFPL does: small magnitudes of either sign get few significant bits, and
 * unlike zigzag the sign is spread over the bits instead of the lowest one.
 * u = (v + M) ^ M with M = 0xAA..AA. Elementwise; in may equal out.
 */
H5FZ_FN void H5FZ_TN(h5fz_negabinary_encode)(const h5fz_blk *blk, const H5FZ_T_WORD *in,
                                             H5FZ_T_WORD *out, uint32_t n)
{
  const H5FZ_T_WORD M = (H5FZ_T_WORD)((H5FZ_T_WORD)~(H5FZ_T_WORD)0 / 3u * 2u);
  H5FZ_FOR_ITEMS(i, blk, n) out[i] = (H5FZ_T_WORD)((in[i] + M) ^ M);
}

H5FZ_FN void H5FZ_TN(h5fz_negabinary_decode)(const h5fz_blk *blk, const H5FZ_T_WORD *in,
                                             H5FZ_T_WORD *out, uint32_t n)
{
  const H5FZ_T_WORD M = (H5FZ_T_WORD)((H5FZ_T_WORD)~(H5FZ_T_WORD)0 / 3u * 2u);
  H5FZ_FOR_ITEMS(i, blk, n) out[i] = (H5FZ_T_WORD)((in[i] ^ M) - M);
}
