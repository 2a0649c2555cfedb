/*
 * h5fz_ops.h - all ops of device_ops/, for both executors.
 *
 * Word-level ops are written once against H5FZ_T_* and instantiated here for
 * 32-bit words (float32 data, suffix _32) and 64-bit words (float64, _64),
 * the C way of writing a template (h5fz_ops_words.h, included once a width). Byte-level ops (RZE) need no template.
 */
#ifndef H5FZ_OPS_H
#define H5FZ_OPS_H

#include "h5fz_detmath.h"
#include "h5fz_dev.h"

/* Quantizer modes: the device-visible part of the mode table
 * (fusion/format/h5fz_modes.c names each error-bound mode's quantizer
 * mode; the numbers are those of h5fz_mode, which the chunk header stores). */
#define H5FZ_QMODE_ABS 0      /* linear bins of 2 eb */
#define H5FZ_QMODE_REL 1      /* linear, eb resolved per chunk */
#define H5FZ_QMODE_PW_REL 2   /* bins of log2|x|: |x - x'| <= eb |x| */
#define H5FZ_QMODE_LOSSLESS 3 /* order-preserving integer image of the bits */

/* The quantizer modes the fast forms take: the CPU's h5fz_fast_quant_*
 * (op_quant_cpu.c) and the GPU's warp-fused kernels, all written for the
 * linear bins. Any other mode runs the reference (op_quant.h) on the CPU
 * and the generic kernel on the GPU. */
#define H5FZ_QMODE_FAST(mode) ((mode) == H5FZ_QMODE_ABS || (mode) == H5FZ_QMODE_REL)

/* Parameters of the quantizer, computed once per chunk on the host so that
 * every executor uses the same bits. */
typedef struct {
  double eb;       /* ABS/REL: absolute bound; PW_REL: relative bound */
  double step;     /* bin width: 2 eb, or 2 log2(1 + eb) for PW_REL */
  double inv_step; /* 1 / step (+inf when eb = 0: every value escapes) */
  int mode;        /* H5FZ_QMODE_* */
  /* encode, ABS/REL/PW_REL: a value with these bits (float32: the low 32)
   * escapes, so it comes back exactly: the dataset's fill value
   * (h5fz_fill_bits), or -0.0's bits, which escape anyway; decoding
   * ignores it */
  unsigned long long fill_bits;
} h5fz_quant_params;

/* The parameters of a mode, bound and fill value bits (the decoder derives
 * them from the bound in the chunk header; fill_bits only matter to the
 * encoder). */
H5FZ_FN h5fz_quant_params h5fz_quant_params_make(int mode, double eb, unsigned long long fill_bits)
{
  h5fz_quant_params q;
  q.mode = mode;
  q.fill_bits = fill_bits;
  q.eb = mode == H5FZ_QMODE_LOSSLESS ? 0.0 : eb;
  q.step = mode == H5FZ_QMODE_PW_REL ? 2.0 * h5fz_log2_det(1.0 + eb) : 2.0 * q.eb;
  q.inv_step = 1.0 / q.step;
  return q;
}

H5FZ_BIT_CAST(h5fz_float_bits_32, uint32_t, float, __float_as_uint)
H5FZ_BIT_CAST(h5fz_float_from_bits_32, float, uint32_t, __uint_as_float)

H5FZ_FN double h5fz_float_from_bits_64(uint64_t u) { return h5fz_dfrom(u); }

/* The float32 linear quantizer's bin (docs/format.md section 5.4): rint of
 * the exact product x * inv_step, rounded once, as a fused multiply-add of
 * x * inv_step + 1.5 * 2^52 (round to nearest even) less 1.5 * 2^52. Exact
 * for |x * inv_step| < 2^51; larger products come out at least 2^51 - 2 in
 * magnitude, NaN or infinite, so they fail |bin| <= 2^30 as rint would.
 * Why: on the GPU one DFMA where a DMUL and a DADD were (the warp-fused
 * encode is bound by instruction issue); every executor uses this one
 * expression, so the bytes agree. float64's bins (up to 2^52) keep
 * rint(x * inv_step). */
H5FZ_FN double h5fz_bin_f32(double x, double inv_step)
{
  const double magic = 6755399441055744.0; /* 1.5 * 2^52 */
  return fma(x, inv_step, magic) - magic;
}

H5FZ_FN uint64_t h5fz_float_bits_64(double x) { return h5fz_dbits(x); }

#define H5FZ_T_FLOAT float
#define H5FZ_T_WORD uint32_t
#define H5FZ_T_SWORD int32_t
#define H5FZ_T_BITS 32u
#define H5FZ_T_MAXBIN 1073741824 /* 2^30: deltas of two bins fit 32 bits */
#define H5FZ_TN(name) name##_32
#include "h5fz_ops_words.h"

#define H5FZ_T_FLOAT double
#define H5FZ_T_WORD uint64_t
#define H5FZ_T_SWORD int64_t
#define H5FZ_T_BITS 64u
#define H5FZ_T_MAXBIN 4503599627370496LL /* 2^52: bins stay exact in double */
#define H5FZ_TN(name) name##_64
#include "h5fz_ops_words.h"

#include "op_rze.h"
#include "op_warp_fused.h" /* GPU only */
#include "op_warp_fast.h"  /* GPU only */

#endif /* H5FZ_OPS_H */
