/*
 * op_delta.h - transform: 1-D delta (first difference) within a sub-chunk,
 * in wrapping integer arithmetic so every word stream is invertible.
 * Templated per word width (see h5fz_ops.h).
 */

/* out[i] = in[i] - in[i-1] (in[-1] = 0), n words. in and out must differ. */
H5FZ_FN void H5FZ_TN(h5fz_delta_encode)(const h5fz_blk *blk, const H5FZ_T_WORD *in,
                                        H5FZ_T_WORD *out, uint32_t n)
{
  H5FZ_FOR_ITEMS(i, blk, n) out[i] = (H5FZ_T_WORD)(in[i] - (i ? in[i - 1] : (H5FZ_T_WORD)0));
}

/* The zigzag word maps (op_zigzag.h uses them too), here for the fused forms. */
H5FZ_FN H5FZ_T_WORD H5FZ_TN(h5fz_zigzag_word)(H5FZ_T_WORD v)
{
  return (H5FZ_T_WORD)((v << 1) ^ ((H5FZ_T_WORD)0 - (v >> (H5FZ_T_BITS - 1))));
}

H5FZ_FN H5FZ_T_WORD H5FZ_TN(h5fz_unzigzag_word)(H5FZ_T_WORD u)
{
  return (H5FZ_T_WORD)((u >> 1) ^ ((H5FZ_T_WORD)0 - (u & 1u)));
}

/* delta then zigzag in one pass (the GPU codegen fuses the pair; the bytes
 * are those of the two ops in turn). in and out must differ. */
H5FZ_FN void H5FZ_TN(h5fz_delta_zigzag_encode)(const h5fz_blk *blk, const H5FZ_T_WORD *in,
                                               H5FZ_T_WORD *out, uint32_t n)
{
  H5FZ_FOR_ITEMS(i, blk, n)
    out[i] = H5FZ_TN(h5fz_zigzag_word)((H5FZ_T_WORD)(in[i] - (i ? in[i - 1] : (H5FZ_T_WORD)0)));
}

/* The delta decode with what comes on either side of it folded in: unzz,
 * each word is zigzag-decoded as it is loaded; qp non-NULL, the sums are
 * not stored as words in out but dequantized (h5fz_quant_value) into the
 * first m of vout. One pass instead of up to three; same results. */
H5FZ_FN void H5FZ_TN(h5fz_delta_decode_fused)(const h5fz_blk *blk, const H5FZ_T_WORD *in, uint32_t n, int unzz,
                                              H5FZ_T_WORD *out, const h5fz_quant_params *qp, uint32_t m,
                                              H5FZ_T_FLOAT *vout)
{
#if H5FZ_ON_GPU
  uint32_t lane = blk->tid & 31u, warp = blk->tid >> 5, nwarps = (blk->nthreads + 31u) >> 5;
  uint32_t seg = ((n + nwarps - 1u) / nwarps + 31u) & ~31u;
  uint32_t lo = warp * seg < n ? warp * seg : n, hi = lo + seg < n ? lo + seg : n;
  H5FZ_T_WORD sum = 0;
  for (uint32_t i = lo + lane; i < hi; i += 32u)
    sum = (H5FZ_T_WORD)(sum + (unzz ? H5FZ_TN(h5fz_unzigzag_word)(in[i]) : in[i]));
  for (uint32_t d = 16; d > 0; d >>= 1) sum = (H5FZ_T_WORD)(sum + __shfl_xor_sync(0xffffffffu, sum, d));
  uint64_t total;
  uint64_t before = h5fz_blk_exscan(blk, lane == 0 ? (uint64_t)sum : 0u, &total);
  H5FZ_T_WORD carry = (H5FZ_T_WORD)__shfl_sync(0xffffffffu, before, 0);
  for (uint32_t base = lo; base < hi; base += 32u) {
    uint32_t i = base + lane;
    H5FZ_T_WORD x = i < hi ? (unzz ? H5FZ_TN(h5fz_unzigzag_word)(in[i]) : in[i]) : (H5FZ_T_WORD)0;
    for (uint32_t d = 1; d < 32; d <<= 1) {
      H5FZ_T_WORD y = __shfl_up_sync(0xffffffffu, x, d);
      if (lane >= d) x = (H5FZ_T_WORD)(x + y);
    }
    H5FZ_T_WORD w = (H5FZ_T_WORD)(carry + x);
    if (!qp) {
      if (i < hi) out[i] = w;
    } else if (i < m) {
      vout[i] = H5FZ_TN(h5fz_quant_value)(w, qp);
    }
    carry = (H5FZ_T_WORD)(carry + __shfl_sync(0xffffffffu, x, 31));
  }
#else
  (void)blk;
  H5FZ_T_WORD acc = 0;
  for (uint32_t i = 0; i < n; i++) {
    acc = (H5FZ_T_WORD)(acc + (unzz ? H5FZ_TN(h5fz_unzigzag_word)(in[i]) : in[i]));
    if (!qp) out[i] = acc;
    else if (i < m) vout[i] = H5FZ_TN(h5fz_quant_value)(acc, qp);
  }
#endif
}

/* Inverse: inclusive prefix sum. On the GPU each warp scans one contiguous
 * segment 32 words at a time (lanes on consecutive words, shuffles, no bank
 * conflicts), the segments joined by one block-wide scan of the warp totals;
 * on the CPU the plain running sum. Wrapping arithmetic either way, so the
 * words are the same. in and out must differ. */
H5FZ_FN void H5FZ_TN(h5fz_delta_decode)(const h5fz_blk *blk, const H5FZ_T_WORD *in,
                                        H5FZ_T_WORD *out, uint32_t n)
{
  H5FZ_TN(h5fz_delta_decode_fused)(blk, in, n, 0, out, (const h5fz_quant_params *)0, 0u, (H5FZ_T_FLOAT *)0);
}
