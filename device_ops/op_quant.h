/*
 * op_quant.h - map: error-bounded quantizer with outlier escape, in three
 * forms chosen by the mode (docs/format.md): linear bins (ABS, REL), bins
 * of log2|x| (PW_REL), and lossless (the bits as an order-preserving
 * integer). Templated: included by h5fz_ops.h once per float width.
 *
 * Linear:
 * A value x becomes the bin b = rint(x / (2 eb)) (float32: rint of the exact
 * product x * inv_step, h5fz_bin_f32) and is reconstructed as
 * x' = (FLOAT)(b * 2 eb). As in PFPL (Fallin & Burtscher, "Lossy Scientific
 * Data Compression With SPARC/PFPL"), the encoder reconstructs exactly as
 * the decoder will and checks |x - x'| <= eb in double; a value escapes to
 * the outlier side list (stored bit-exactly) when that check fails, when the
 * bin does not fit, or when x is NaN, +-Inf or -0.0. Escaped values get bin 0.
 * A value with the bits of the dataset's fill value (p->fill_bits) escapes
 * too (in every mode but LOSSLESS, which keeps all bits anyway): fill
 * values then come back exactly, so masks such as data == _FillValue keep
 * working after a lossy round trip. So does a value whose reconstruction
 * has the fill value's bits (a real value within the bound of an in-range
 * fill would otherwise decode to exactly the fill and be masked as
 * missing). The format has no part in it: escapes are stored exactly
 * whatever made them.
 */

/* Reconstruction of a bin; the decoder and the encoder's check use it both. */
H5FZ_FN H5FZ_T_FLOAT H5FZ_TN(h5fz_quant_recon)(H5FZ_T_SWORD bin, double step)
{
  return (H5FZ_T_FLOAT)((double)bin * step);
}

/* PW_REL code of zero (+0.0); other codes are 2 bin + sign with |bin|
 * below MAXBIN / 4, so they never meet it. */
#define H5FZ_T_ZERO_CODE ((H5FZ_T_WORD)1 << (H5FZ_T_BITS - 1u))

/* PW_REL (after PFPL's log-domain quantizer): bin = rint(log2|x| / step),
 * x' = sign * 2^(bin step); |x - x'| <= eb |x| is checked in double as the
 * decoder will reconstruct; zeros are exact (+0.0 a code, -0.0 escapes). */
H5FZ_FN H5FZ_T_FLOAT H5FZ_TN(h5fz_pwrel_recon)(H5FZ_T_WORD w, double step)
{
  if (w == H5FZ_T_ZERO_CODE) return (H5FZ_T_FLOAT)0;
  H5FZ_T_SWORD code = (H5FZ_T_SWORD)w, sign = (H5FZ_T_SWORD)(w & 1u);
  H5FZ_T_SWORD bin = (code - sign) / 2;
  H5FZ_T_FLOAT r = (H5FZ_T_FLOAT)h5fz_exp2_det((double)bin * step);
  return sign ? -r : r;
}

H5FZ_FN int H5FZ_TN(h5fz_pwrel_one)(H5FZ_T_FLOAT x, const h5fz_quant_params *p, H5FZ_T_WORD *word)
{
  if (x == 0) {
    if (signbit(x)) return 1;
    *word = H5FZ_T_ZERO_CODE;
    return 0;
  }
  double a = fabs((double)x);
  if (!(a <= 1.7976931348623157e308)) return 1; /* NaN, Inf */
  double b = rint(h5fz_log2_det(a) * p->inv_step);
  if (!(fabs(b) <= (double)(H5FZ_T_MAXBIN / 4))) return 1;
  H5FZ_T_WORD w = (H5FZ_T_WORD)((H5FZ_T_SWORD)b * 2 + (x < 0 ? 1 : 0));
  H5FZ_T_FLOAT r = H5FZ_TN(h5fz_pwrel_recon)(w, p->step);
  if (!h5fz_pwrel_within((double)x, (double)r, p->eb, a)) return 1;
  if ((unsigned long long)H5FZ_TN(h5fz_float_bits)(r) == p->fill_bits) return 1; /* would read as the fill */
  *word = w;
  return 0;
}

/* Lossless: the bits, turned so that nearby values are nearby integers
 * (negative values complemented, the sign bit of positive ones set). */
H5FZ_FN H5FZ_T_WORD H5FZ_TN(h5fz_lossless_word)(H5FZ_T_FLOAT x)
{
  H5FZ_T_WORD u = H5FZ_TN(h5fz_float_bits)(x);
  return (u >> (H5FZ_T_BITS - 1u)) ? (H5FZ_T_WORD)~u : (H5FZ_T_WORD)(u ^ H5FZ_T_ZERO_CODE);
}

H5FZ_FN H5FZ_T_FLOAT H5FZ_TN(h5fz_lossless_value)(H5FZ_T_WORD w)
{
  H5FZ_T_WORD u = (w >> (H5FZ_T_BITS - 1u)) ? (H5FZ_T_WORD)(w ^ H5FZ_T_ZERO_CODE) : (H5FZ_T_WORD)~w;
  return H5FZ_TN(h5fz_float_from_bits)(u);
}

/* Quantize one value; returns 1 if it must escape to the outlier list. */
H5FZ_FN int H5FZ_TN(h5fz_quant_one)(H5FZ_T_FLOAT x, const h5fz_quant_params *p,
                                    H5FZ_T_WORD *word)
{
  if (p->mode == H5FZ_QMODE_LOSSLESS) {
    *word = H5FZ_TN(h5fz_lossless_word)(x);
    return 0;
  }
  if ((unsigned long long)H5FZ_TN(h5fz_float_bits)(x) == p->fill_bits) return 1; /* ABS, REL, PW_REL */
  if (p->mode == H5FZ_QMODE_PW_REL) return H5FZ_TN(h5fz_pwrel_one)(x, p, word);
  double b = H5FZ_T_BITS == 32u ? h5fz_bin_f32((double)x, p->inv_step) : rint((double)x * p->inv_step);
  if (!(fabs(b) <= (double)H5FZ_T_MAXBIN)) return 1; /* NaN, Inf, too large */
  H5FZ_T_SWORD bin = (H5FZ_T_SWORD)b;
  H5FZ_T_FLOAT r = H5FZ_TN(h5fz_quant_recon)(bin, p->step);
  if (!(fabs((double)x - (double)r) <= p->eb)) return 1;
  if (x == 0 && signbit(x)) return 1; /* -0.0 would come back as +0.0 */
  if ((unsigned long long)H5FZ_TN(h5fz_float_bits)(r) == p->fill_bits) return 1; /* would read as the fill */
  *word = (H5FZ_T_WORD)bin;
  return 0;
}

/* The word the quantizer leaves in a value's slot: its bin, or 0 when the
 * value escapes (exactly what h5fz_quant_encode writes). Pointwise, so an
 * op may quantize any value of the chunk again (lorenzo_nd does). */
H5FZ_FN H5FZ_T_WORD H5FZ_TN(h5fz_quant_word)(H5FZ_T_FLOAT x, const h5fz_quant_params *p)
{
  H5FZ_T_WORD w = 0;
  if (H5FZ_TN(h5fz_quant_one)(x, p, &w)) w = 0;
  return w;
}

/* Encode m values in[0..m) of one sub-chunk into m_pad words out[0..m_pad)
 * (m_pad >= m, a multiple of 64; padding words are 0). Escaped values get
 * word 0 and are appended, in index order, to the side buffers: local
 * position in out_pos[], raw bits in out_val[] (capacity m each).
 * Returns the number of outliers of the sub-chunk (same on every thread). */
H5FZ_FN uint32_t H5FZ_TN(h5fz_quant_encode)(const h5fz_blk *blk, const H5FZ_T_FLOAT *in,
                                            uint32_t m, uint32_t m_pad,
                                            const h5fz_quant_params *p, H5FZ_T_WORD *out,
                                            uint32_t *out_pos, H5FZ_T_WORD *out_val)
{
  uint32_t count = 0;
#if H5FZ_ON_GPU
  /* Four loads in flight a thread before the first is used (in and out
   * never alias): one at a time, a block's quantizer waited on each (the
   * fill check, x's first use, held 11 % of the ratio encode's stall
   * samples, session 19). */
  const uint32_t T = blk->nthreads;
  for (uint32_t i0 = blk->tid; i0 < m_pad; i0 += 4u * T) {
    H5FZ_T_FLOAT x[4];
#pragma unroll
    for (uint32_t k = 0; k < 4u; k++) {
      const uint32_t i = i0 + k * T;
      x[k] = i < m ? in[i] : (H5FZ_T_FLOAT)0;
    }
#pragma unroll
    for (uint32_t k = 0; k < 4u; k++) {
      const uint32_t i = i0 + k * T;
      H5FZ_T_WORD w = 0;
      if (i < m && H5FZ_TN(h5fz_quant_one)(x[k], p, &w)) {
        count++;
        w = 0;
      }
      if (i < m_pad) out[i] = w;
    }
  }
#else
  H5FZ_FOR_ITEMS(i, blk, m_pad) {
    H5FZ_T_WORD w = 0;
    if (i < m && H5FZ_TN(h5fz_quant_one)(in[i], p, &w)) {
      out_pos[count] = i; /* one thread: index order */
      out_val[count] = H5FZ_TN(h5fz_float_bits)(in[i]);
      count++;
      w = 0;
    }
    out[i] = w;
  }
#endif
#if H5FZ_ON_GPU
  /* Rare: only blocks with outliers pay a second pass, over contiguous
   * shares so the exclusive scan places them in index order. */
  if (!__syncthreads_or(count != 0)) return 0;
  uint32_t lo, hi, mine = 0;
  h5fz_blk_share(blk, m, 1u, &lo, &hi);
  for (uint32_t i = lo; i < hi; i++) {
    H5FZ_T_WORD w;
    mine += H5FZ_TN(h5fz_quant_one)(in[i], p, &w) ? 1u : 0u;
  }
  uint64_t total;
  uint64_t base = h5fz_blk_exscan(blk, mine, &total);
  for (uint32_t i = lo; i < hi; i++) {
    H5FZ_T_WORD w;
    if (H5FZ_TN(h5fz_quant_one)(in[i], p, &w)) {
      out_pos[base] = i;
      out_val[base] = H5FZ_TN(h5fz_float_bits)(in[i]);
      base++;
    }
  }
  return (uint32_t)total;
#else
  (void)blk;
  return count;
#endif
}

/* The value of one word (h5fz_quant_decode's per-element step). */
H5FZ_FN H5FZ_T_FLOAT H5FZ_TN(h5fz_quant_value)(H5FZ_T_WORD w, const h5fz_quant_params *p)
{
  if (p->mode == H5FZ_QMODE_LOSSLESS) return H5FZ_TN(h5fz_lossless_value)(w);
  if (p->mode == H5FZ_QMODE_PW_REL) return H5FZ_TN(h5fz_pwrel_recon)(w, p->step);
  return H5FZ_TN(h5fz_quant_recon)((H5FZ_T_SWORD)w, p->step);
}

/* Decode n words back to values (outliers come back as 0, or as the
 * mode's zero code's value, and are patched from the side list by the
 * executor). */
H5FZ_FN void H5FZ_TN(h5fz_quant_decode)(const h5fz_blk *blk, const H5FZ_T_WORD *in, uint32_t n,
                                        const h5fz_quant_params *p, H5FZ_T_FLOAT *out)
{
  if (p->mode == H5FZ_QMODE_LOSSLESS) {
    H5FZ_FOR_ITEMS(i, blk, n) out[i] = H5FZ_TN(h5fz_lossless_value)(in[i]);
  } else if (p->mode == H5FZ_QMODE_PW_REL) {
    H5FZ_FOR_ITEMS(i, blk, n) out[i] = H5FZ_TN(h5fz_pwrel_recon)(in[i], p->step);
  } else {
    H5FZ_FOR_ITEMS(i, blk, n) out[i] = H5FZ_TN(h5fz_quant_recon)((H5FZ_T_SWORD)in[i], p->step);
  }
}
