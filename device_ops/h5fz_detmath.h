/*
 * h5fz_detmath.h - log2 and exp2 in double that give the same bits on every
 * executor, and PW_REL's exact bound check: built only from IEEE + - * /
 * (correctly rounded everywhere when no FMA is contracted), an explicit
 * fma (correctly rounded everywhere too), floor, and exact bit
 * manipulation. The C library's
 * log2/exp2 and CUDA's differ in their last bits, which would break the
 * byte identity of the pointwise-relative quantizer. Accuracy (about 1e-14
 * relative) only decides how many values escape; the bound itself is
 * enforced by the quantizer's reconstruction check.
 */
#ifndef H5FZ_DETMATH_H
#define H5FZ_DETMATH_H

#include "h5fz_dev.h"

/* Defines H5FZ_FN TO name(FROM x): x's bits as a TO of the same size, by
 * the CUDA intrinsic gpu_cast on the GPU, by memcpy in C. */
#if H5FZ_ON_GPU
#define H5FZ_BIT_CAST(name, TO, FROM, gpu_cast) \
  H5FZ_FN TO name(FROM x) { return (TO)gpu_cast(x); }
#else
#define H5FZ_BIT_CAST(name, TO, FROM, gpu_cast) \
  H5FZ_FN TO name(FROM x)                      \
  {                                            \
    TO y;                                      \
    memcpy(&y, &x, sizeof y);                  \
    return y;                                  \
  }
#endif

H5FZ_BIT_CAST(h5fz_dbits, uint64_t, double, __double_as_longlong)
H5FZ_BIT_CAST(h5fz_dfrom, double, uint64_t, __longlong_as_double)

/* 2^k for an integer k in [-1022, 1023], exactly. */
H5FZ_FN double h5fz_pow2i(int k) { return h5fz_dfrom((uint64_t)(k + 1023) << 52); }

/* log2(a) for a finite a > 0. */
H5FZ_FN double h5fz_log2_det(double a)
{
  int e_adj = 0;
  uint64_t u = h5fz_dbits(a);
  if ((u >> 52) == 0) { /* subnormal: scale into the normal range, exactly */
    a = a * 18446744073709551616.0; /* 2^64 */
    u = h5fz_dbits(a);
    e_adj = -64;
  }
  int e = (int)((u >> 52) & 0x7ffu) - 1023 + e_adj;
  double m = h5fz_dfrom((u & 0x000fffffffffffffull) | 0x3ff0000000000000ull); /* [1, 2) */
  if (m > 1.4142135623730951) {
    m = m * 0.5;
    e += 1;
  }
  /* log2(m) = 2/ln2 * atanh(t), t = (m-1)/(m+1), |t| <= 0.1716 */
  /* the series sum 1/(2k+1) t^2k by Horner, from k = 8 down */
  const double inv_odd[9] = {1.0 / 17.0, 1.0 / 15.0, 1.0 / 13.0, 1.0 / 11.0, 1.0 / 9.0,
                             1.0 / 7.0,  1.0 / 5.0,  1.0 / 3.0,  1.0};
  double t = (m - 1.0) / (m + 1.0), t2 = t * t, s = inv_odd[0];
#if H5FZ_ON_GPU
#pragma unroll
#endif
  for (int k = 1; k < 9; k++) s = inv_odd[k] + t2 * s;
  return (double)e + (t * s) * 2.8853900817779268; /* 2 / ln 2 */
}

/* 2^y for a finite y (0 below 2^-1100, +inf above 2^1024). */
H5FZ_FN double h5fz_exp2_det(double y)
{
  if (!(y < 1024.0)) return h5fz_dfrom(0x7ff0000000000000ull);
  if (!(y > -1100.0)) return 0.0;
  double k = floor(y), g = (y - k) * 0.69314718055994531; /* f ln 2, f in [0, 1) */
  /* e^g by its Taylor series to g^12/12!, Horner from 1/12! down */
  const double inv_fact[13] = {1.0 / 479001600.0, 1.0 / 39916800.0, 1.0 / 3628800.0, 1.0 / 362880.0, 1.0 / 40320.0,
                               1.0 / 5040.0,      1.0 / 720.0,      1.0 / 120.0,     1.0 / 24.0,     1.0 / 6.0,
                               0.5,               1.0,              1.0};
  double p = inv_fact[0];
#if H5FZ_ON_GPU
#pragma unroll
#endif
  for (int k = 1; k < 13; k++) p = inv_fact[k] + g * p;
  int ki = (int)k;
  if (ki >= -1022) return p * h5fz_pow2i(ki);
  return (p * h5fz_pow2i(ki + 600)) * h5fz_pow2i(-600); /* subnormal result: one rounding */
}

/* PW_REL's reconstruction check (op_quant.h): 1 when |x - r| <= eb a
 * exactly (a = |x|, r of x's sign, 0 < eb < 1): a plain
 * `fabs(x - r) <= eb * a` rounds the product, and for float64
 * subnormals (a product of few bits) it accepted 1.0025 eb. Tiny values are
 * first scaled by 2^200 (exact); d = |x - r| is exact when r is within a
 * factor 2 of x (Sterbenz), and r is not otherwise within eb < 1/2 (so it
 * escapes, and is stored exactly); the product's rounding error comes from
 * a fused multiply-add, exact unless the product is near underflow (then
 * the value escapes too). */
H5FZ_FN int h5fz_pwrel_within(double x, double r, double eb, double a)
{
  if (a < 0x1p-900) {
    x *= 0x1p200;
    r *= 0x1p200;
    a *= 0x1p200;
  }
  const double ar = fabs(r);
  if (!(ar <= 2.0 * a && a <= 2.0 * ar)) return 0;
  const double d = fabs(x - r), prod = eb * a;
  if (!(prod >= 0x1p-960)) return 0;
  const double res = fma(eb, a, -prod); /* eb a = prod + res, exactly */
  if (d <= prod) return res >= 0.0 || d < 0.5 * prod || prod - d >= -res;
  return d <= 2.0 * prod && d - prod <= res;
}

#endif /* H5FZ_DETMATH_H */
