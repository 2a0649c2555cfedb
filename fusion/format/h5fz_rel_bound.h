/*
 * h5fz_rel_bound.h - REL's numerics (h5fz_rel_bound.c): the range of a
 * chunk's values and the absolute bound on REL's grid. Every executor and
 * the batch path compute a chunk's bound through these, so they write the
 * same eb.
 */
#ifndef H5FZ_REL_BOUND_H
#define H5FZ_REL_BOUND_H

#include "h5fz.h"

/* Min and max (*lo_out, *hi_out) of the finite values of in[0..n) (spec's
 * dtype) that REL's range counts: the spec's fill value left out when it
 * has one, and under REL with a non-zero fill also values within bound x
 * the range of it (h5fz_rel_bound.c says why); its missing value (missing=)
 * left out too; +inf/-inf when none. */
void h5fz_rel_range(const h5fz_spec *spec, const void *in, uint64_t n, double *lo_out, double *hi_out);

/* REL: the absolute bound of a chunk of dtype values whose finite non-fill
 * values span [lo, hi] (lo > hi: none): h5fz_rel_grid_floor of
 * bound / (1 + 2 bound) x (hi - lo) - m, m a unit in the last place of
 * dtype at the largest magnitude a decoded value can reach plus 2^-40 of
 * it, so the bins of successive encodes of a chunk nest, and neither a
 * decoded chunk's wider range nor the rounding of decoded values can take
 * a value past bound x the range (h5fz_rel_bound.c says why); 0 when there is
 * none or the range is 0 or not finite. */
double h5fz_rel_abs_bound(double bound, double lo, double hi, h5fz_dtype dtype);

/* The largest normal power of 3 at most t (3^-644 .. 3^646), computed the
 * same way on every machine; 0 when there is none or t is not finite. */
double h5fz_pow3_floor(double t);

/* REL's grid: the largest C x 3^k at most t, C = 1/sqrt(2) in binary64
 * (h5fz_rel_bound.c says why): p = h5fz_pow3_floor(t / C); the next power
 * h5fz_pow3_floor(3.5 p) instead when C x it <= t; the power before,
 * h5fz_pow3_floor(p / 2), when C x p > t; the result C x p; 0 below
 * DBL_MIN. */
double h5fz_rel_grid_floor(double t);

#endif /* H5FZ_REL_BOUND_H */
