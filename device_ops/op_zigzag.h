/*
 * op_zigzag.h - transform: zigzag, two's complement -> unsigned so that
 * small magnitudes of either sign become small numbers (0,-1,1,-2 -> 0,1,2,3).
 * Elementwise: in and out may be the same buffer. Templated per word width.
 */
H5FZ_FN void H5FZ_TN(h5fz_zigzag_encode)(const h5fz_blk *blk, const H5FZ_T_WORD *in,
                                         H5FZ_T_WORD *out, uint32_t n)
{
  H5FZ_FOR_ITEMS(i, blk, n) out[i] = H5FZ_TN(h5fz_zigzag_word)(in[i]);
}

H5FZ_FN void H5FZ_TN(h5fz_zigzag_decode)(const h5fz_blk *blk, const H5FZ_T_WORD *in,
                                         H5FZ_T_WORD *out, uint32_t n)
{
  H5FZ_FOR_ITEMS(i, blk, n) out[i] = H5FZ_TN(h5fz_unzigzag_word)(in[i]);
}
