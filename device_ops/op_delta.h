/*
 * op_delta.h - transform: 1-D delta (first difference) within a sub-chunk,
 * in wrapping integer arithmetic so every word stream is invertible.
 * Templated per word width (see h5fz_ops.h).
 */

/* out[i] = in[i] - in[i-1] (in[-1] = 0), n words. in and out must differ. */
H5FZ_FN void H5FZ_TN(h5fz_delta_encode)(const h5fz_blk *blk, const H5FZ_T_WORD *in,
                                        H5FZ_T_WORD *out, uint32_t n)
{
  uint32_t lo, hi;
  h5fz_blk_share(blk, n, 1u, &lo, &hi);
  for (uint32_t i = lo; i < hi; i++)
    out[i] = (H5FZ_T_WORD)(in[i] - (i ? in[i - 1] : (H5FZ_T_WORD)0));
}

/* Inverse: inclusive prefix sum, split into per-thread runs joined by a
 * block-wide scan. in and out must differ. */
H5FZ_FN void H5FZ_TN(h5fz_delta_decode)(const h5fz_blk *blk, const H5FZ_T_WORD *in,
                                        H5FZ_T_WORD *out, uint32_t n)
{
  uint32_t lo, hi;
  h5fz_blk_share(blk, n, 1u, &lo, &hi);
  H5FZ_T_WORD run = 0;
  for (uint32_t i = lo; i < hi; i++) run = (H5FZ_T_WORD)(run + in[i]);
  uint64_t total;
  H5FZ_T_WORD acc = (H5FZ_T_WORD)h5fz_blk_exscan(blk, (uint64_t)run, &total);
  for (uint32_t i = lo; i < hi; i++) {
    acc = (H5FZ_T_WORD)(acc + in[i]);
    out[i] = acc;
  }
}
