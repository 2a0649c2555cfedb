/*
 * h5fz_ops.h - all ops of device_ops/, for both executors.
 *
 * Word-level ops are written once against H5FZ_T_* and instantiated here for
 * 32-bit words (float32 data, suffix _32) and 64-bit words (float64, _64),
 * the C way of writing a template. Byte-level ops (RZE) need no template.
 */
#ifndef H5FZ_OPS_H
#define H5FZ_OPS_H

#include "h5fz_dev.h"

/* Parameters of the quantizer, computed once per chunk on the host so that
 * every executor uses the same bits. */
typedef struct {
  double eb;       /* absolute error bound */
  double step;     /* 2 * eb: width of a quantization bin */
  double inv_step; /* 1 / step */
} h5fz_quant_params;

H5FZ_FN uint32_t h5fz_float_bits_32(float x)
{
#if H5FZ_ON_GPU
  return __float_as_uint(x);
#else
  uint32_t u;
  memcpy(&u, &x, 4);
  return u;
#endif
}

H5FZ_FN uint64_t h5fz_float_bits_64(double x)
{
#if H5FZ_ON_GPU
  return (uint64_t)__double_as_longlong(x);
#else
  uint64_t u;
  memcpy(&u, &x, 8);
  return u;
#endif
}

#define H5FZ_T_FLOAT float
#define H5FZ_T_WORD uint32_t
#define H5FZ_T_SWORD int32_t
#define H5FZ_T_BITS 32u
#define H5FZ_T_MAXBIN 1073741824 /* 2^30: deltas of two bins fit 32 bits */
#define H5FZ_TN(name) name##_32
#include "op_quant.h"
#include "op_delta.h"
#include "op_zigzag.h"
#include "op_negabinary.h"
#include "op_bitshuffle.h"
#undef H5FZ_T_FLOAT
#undef H5FZ_T_WORD
#undef H5FZ_T_SWORD
#undef H5FZ_T_BITS
#undef H5FZ_T_MAXBIN
#undef H5FZ_TN

#define H5FZ_T_FLOAT double
#define H5FZ_T_WORD uint64_t
#define H5FZ_T_SWORD int64_t
#define H5FZ_T_BITS 64u
#define H5FZ_T_MAXBIN 4503599627370496LL /* 2^52: bins stay exact in double */
#define H5FZ_TN(name) name##_64
#include "op_quant.h"
#include "op_delta.h"
#include "op_zigzag.h"
#include "op_negabinary.h"
#include "op_bitshuffle.h"
#undef H5FZ_T_FLOAT
#undef H5FZ_T_WORD
#undef H5FZ_T_SWORD
#undef H5FZ_T_BITS
#undef H5FZ_T_MAXBIN
#undef H5FZ_TN

#include "op_rze.h"

#endif /* H5FZ_OPS_H */
