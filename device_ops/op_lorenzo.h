/*
 * op_lorenzo.h - transform: 2-D Lorenzo prediction on the quantization bins
 * (the predictor of Ibarria et al. 2003, used on integer bins by cuSZ and
 * FZ-GPU), over the rows of the chunk's fastest dimension. With R the row
 * length (the chunk's last dim), element i of a sub-chunk whose first
 * element has global index `first` sits in column c = (first + i) mod R;
 * its left neighbour is i-1 when c > 0 and i > 0, its upper neighbour i-R
 * when i >= R, and the corner i-R-1 when c > 0 and i > R (neighbours
 * outside the sub-chunk count as 0, so sub-chunks stay independent):
 *   d[i] = q[i] - left - up + corner          (wrapping integers)
 * The inverse undoes the column difference, then the row difference: a
 * prefix sum down each column, then along each row. R = 0 means no rows
 * (1-D data): the op is then the 1-D delta. Templated per word width.
 */

H5FZ_FN H5FZ_T_WORD H5FZ_TN(h5fz_lorenzo_pred)(const H5FZ_T_WORD *q, uint32_t i, uint32_t col, uint32_t R)
{
  H5FZ_T_WORD p = 0;
  if (col > 0 && i > 0) p = q[i - 1];
  if (R && i >= R) {
    p = (H5FZ_T_WORD)(p + q[i - R]);
    if (col > 0 && i > R) p = (H5FZ_T_WORD)(p - q[i - R - 1]);
  }
  return p;
}

/* d = q - prediction, n words; in and out must differ. */
H5FZ_FN void H5FZ_TN(h5fz_lorenzo_encode)(const h5fz_blk *blk, const H5FZ_T_WORD *in, H5FZ_T_WORD *out,
                                          uint32_t n, unsigned long long first, uint32_t R)
{
  uint32_t lo, hi;
  h5fz_blk_share(blk, n, 1u, &lo, &hi);
  for (uint32_t i = lo; i < hi; i++) {
    uint32_t col = R ? (uint32_t)((first + i) % R) : (i ? 1u : 0u);
    out[i] = (H5FZ_T_WORD)(in[i] - H5FZ_TN(h5fz_lorenzo_pred)(in, i, col, R));
  }
}

/* Inverse: y = prefix sums down the columns (stride R) of d, then q =
 * prefix sums of y along each row (restarting at column 0). out is the
 * result; in is used as the intermediate (it is overwritten). */
H5FZ_FN void H5FZ_TN(h5fz_lorenzo_decode)(const h5fz_blk *blk, H5FZ_T_WORD *in, H5FZ_T_WORD *out, uint32_t n,
                                          unsigned long long first, uint32_t R)
{
  uint32_t stride = R && R < n ? R : n; /* no second row: columns are single */
  for (uint32_t c = blk->tid; c < stride; c += blk->nthreads) {
    H5FZ_T_WORD acc = 0;
    for (uint32_t i = c; i < n; i += stride) {
      acc = (H5FZ_T_WORD)(acc + in[i]);
      in[i] = acc;
    }
  }
  h5fz_blk_sync(blk);
  /* rows: they start where the column is 0. The first row may be partial:
   * `head` elements before the first column 0 (none when R = 0: one row). */
  uint32_t head = R ? (uint32_t)((R - first % R) % R) : 0u;
  uint32_t row_len = R ? R : n;
  if (head > n) head = n;
  uint32_t n_rows = (head ? 1u : 0u) + (n - head + row_len - 1u) / row_len;
  for (uint32_t r = blk->tid; r < n_rows; r += blk->nthreads) {
    uint32_t lo, hi;
    if (head && r == 0) {
      lo = 0;
      hi = head;
    } else {
      lo = head + (r - (head ? 1u : 0u)) * row_len;
      hi = lo + row_len < n ? lo + row_len : n;
    }
    H5FZ_T_WORD acc = 0;
    for (uint32_t i = lo; i < hi; i++) {
      acc = (H5FZ_T_WORD)(acc + in[i]);
      out[i] = acc;
    }
  }
}
