/*
 * h5fz_detmath.h - log2 and exp2 in double that give the same bits on every
 * executor: built only from IEEE + - * / (correctly rounded everywhere when
 * no FMA is contracted), floor, and exact bit manipulation. The C library's
 * log2/exp2 and CUDA's differ in their last bits, which would break the
 * byte identity of the pointwise-relative quantizer. Accuracy (about 1e-14
 * relative) only decides how many values escape; the bound itself is
 * enforced by the quantizer's reconstruction check.
 */
#ifndef H5FZ_DETMATH_H
#define H5FZ_DETMATH_H

#include "h5fz_dev.h"

H5FZ_FN uint64_t h5fz_dbits(double x)
{
#if H5FZ_ON_GPU
  return (uint64_t)__double_as_longlong(x);
#else
  uint64_t u;
  memcpy(&u, &x, 8);
  return u;
#endif
}

H5FZ_FN double h5fz_dfrom(uint64_t u)
{
#if H5FZ_ON_GPU
  return __longlong_as_double((long long)u);
#else
  double x;
  memcpy(&x, &u, 8);
  return x;
#endif
}

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
  double t = (m - 1.0) / (m + 1.0), t2 = t * t;
  double s = 1.0 / 17.0;
  s = 1.0 / 15.0 + t2 * s;
  s = 1.0 / 13.0 + t2 * s;
  s = 1.0 / 11.0 + t2 * s;
  s = 1.0 / 9.0 + t2 * s;
  s = 1.0 / 7.0 + t2 * s;
  s = 1.0 / 5.0 + t2 * s;
  s = 1.0 / 3.0 + t2 * s;
  s = 1.0 + t2 * s;
  return (double)e + (t * s) * 2.8853900817779268; /* 2 / ln 2 */
}

/* 2^y for a finite y (0 below 2^-1100, +inf above 2^1024). */
H5FZ_FN double h5fz_exp2_det(double y)
{
  if (!(y < 1024.0)) return h5fz_dfrom(0x7ff0000000000000ull);
  if (!(y > -1100.0)) return 0.0;
  double k = floor(y), g = (y - k) * 0.69314718055994531; /* f ln 2, f in [0, 1) */
  double p = 1.0 / 479001600.0; /* e^g by its Taylor series to g^12/12! */
  p = 1.0 / 39916800.0 + g * p;
  p = 1.0 / 3628800.0 + g * p;
  p = 1.0 / 362880.0 + g * p;
  p = 1.0 / 40320.0 + g * p;
  p = 1.0 / 5040.0 + g * p;
  p = 1.0 / 720.0 + g * p;
  p = 1.0 / 120.0 + g * p;
  p = 1.0 / 24.0 + g * p;
  p = 1.0 / 6.0 + g * p;
  p = 0.5 + g * p;
  p = 1.0 + g * p;
  p = 1.0 + g * p;
  int ki = (int)k;
  if (ki >= -1022) return p * h5fz_pow2i(ki);
  return (p * h5fz_pow2i(ki + 600)) * h5fz_pow2i(-600); /* subnormal result: one rounding */
}

#endif /* H5FZ_DETMATH_H */
