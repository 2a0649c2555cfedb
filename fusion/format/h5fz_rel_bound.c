/*
 * h5fz_rel_bound.c - REL's numerics: the range a chunk's bound is relative
 * to, and the grid of absolute bounds (powers of 3 times 1/sqrt(2)) that
 * keeps re-encoded chunks within their bound (docs/spec.md §6).
 */
#include <float.h>
#include <math.h>

#include "h5fz_rel_bound.h"
#include "h5fz_modes.h"

/* The values REL's range leaves out: the fill value (HDF5's padding; also
 * values within `near` of it, near < 0: only itself) and the missing value
 * (missing=, by equality: it always comes back exactly). */
typedef struct {
  int has_fill, has_missing;
  double fill, missing, near;
} range_skip;

/* Min and max of the finite values of in[0..n) that k does not leave out. */
static void range_without(h5fz_dtype dtype, const void *in, uint64_t n, const range_skip *k, double *lo_out,
                          double *hi_out)
{
  double lo = INFINITY, hi = -INFINITY;
  if (dtype == H5FZ_DTYPE_F32) {
    const float *v = in;
    const float f = (float)k->fill, m = (float)k->missing;
    for (uint64_t i = 0; i < n; i++)
      if (isfinite(v[i]) && !(k->has_fill && (v[i] == f || fabs((double)v[i] - (double)f) <= k->near)) &&
          !(k->has_missing && v[i] == m)) {
        if (v[i] < lo) lo = v[i];
        if (v[i] > hi) hi = v[i];
      }
  } else {
    const double *v = in;
    for (uint64_t i = 0; i < n; i++)
      if (isfinite(v[i]) && !(k->has_fill && (v[i] == k->fill || fabs(v[i] - k->fill) <= k->near)) &&
          !(k->has_missing && v[i] == k->missing)) {
        if (v[i] < lo) lo = v[i];
        if (v[i] > hi) hi = v[i];
      }
  }
  *lo_out = lo;
  *hi_out = hi;
}

/* Min and max of the finite values, for REL bounds, leaving out the fill
 * value (HDF5 pads edge chunks and chunks not yet written with it, and
 * padding must not widen the bound of the real values); +inf/-inf when
 * there are none.
 * A non-zero fill value also leaves out values within bound x the range
 * (the range with only the fill itself left out) of it: HDF5 encodes a
 * chunk written in parts again from its decoded values, and a fill value
 * that was quantized comes back near it, not equal to it (-999 as
 * -998.9996), so it counted in the range of the next encode, and the
 * values written before were quantized again with a far larger eb (53x the
 * bound with fill -999 and three steps; up to 1e13x in a tester's sweep).
 * Any earlier encode's eb of the chunk is at most that distance (its eb is
 * within bound / (1 + 2 bound) x its range, and the range seen now is at
 * least that range less 2 eb), so every decoded fill value is left out.
 * Zero (HDF5's default), NaN, and values too far out for the quantizer
 * come back exactly, so they need no more than the test for equality.
 * Leaving out more values can only tighten the bound.
 * The missing value (missing=, netCDF's _FillValue when nccopy wrote the
 * dataset without one) is left out by equality: it marks no data, and it
 * always comes back exactly, so no decoded copy of it differs.
 * The GPU batch path takes the min and max with the fill left out only
 * (fusion/gpu/h5fz_gpu_batch.h): it encodes whole chunks from the
 * caller's values, where no decoded fill values occur (docs/spec.md §6). */
void h5fz_rel_range(const h5fz_spec *spec, const void *in, uint64_t n, double *lo_out, double *hi_out)
{
  range_skip k = {spec->has_fill, spec->has_missing, spec->fill, spec->missing, -1.0};
  range_without(spec->dtype, in, n, &k, lo_out, hi_out);
  double fill = spec->dtype == H5FZ_DTYPE_F32 ? (double)(float)spec->fill : spec->fill;
  if (k.has_fill && isfinite(fill) && fill != 0.0 && *lo_out <= *hi_out && h5fz_mode_from_chunk_range((unsigned)spec->mode)) {
    k.near = spec->bound * (*hi_out - *lo_out);
    /* leaving values out moves lo or hi only when one of them is left out:
     * the second pass runs for chunks whose extreme is near the fill */
    int moves = fabs(*lo_out - fill) <= k.near || fabs(*hi_out - fill) <= k.near;
    if (isfinite(k.near) && moves) range_without(spec->dtype, in, n, &k, lo_out, hi_out);
  }
}

/* The largest power of 3 that is at most t, built from 1.0 by one
 * multiplication or division by 3 at a time: each step is one correctly
 * rounded IEEE operation, so every machine gets the same bits (no pow or
 * log). Only normal powers: 3^646 is the largest finite one, 3^-644 the
 * smallest normal one; below that (and for t <= 0, NaN, +inf) it gives 0. */
#define H5FZ_POW3_MAX_STEPS 700 /* more than the 646 / 644 steps either way */
double h5fz_pow3_floor(double t)
{
  if (!(t > 0.0) || !isfinite(t)) return 0.0;
  double p = 1.0;
  if (t >= 1.0) {
    /* 3 x p overflows to +inf past 3^646, and +inf <= t is false */
    for (int k = 0; k < H5FZ_POW3_MAX_STEPS && p * 3.0 <= t; k++) p *= 3.0;
    return p;
  }
  for (int k = 0; p > t; k++) {
    if (k == H5FZ_POW3_MAX_STEPS) return 0.0;
    p /= 3.0;
    if (p < DBL_MIN) return 0.0; /* subnormal: the steps would no longer be powers of 3 */
  }
  return p;
}

/* 1/sqrt(2) in binary64: the scale of REL's grid of bounds. Its odd
 * mantissa, 6369051672525773 = 7 x 7 x 11 x 17 x 6173 x 112600627, has no
 * factor 2, 3 or 5, so no round value (an integer, a decimal, a binary
 * fraction) is an odd multiple of C x 3^k, i.e. sits exactly on a bin
 * edge. With C = 1, every odd integer was on a bin edge for every k <= 0:
 * whole-metre elevations at rel=1e-4 came back at ratio 1.56 instead of
 * 3.54, most values escaping the quantizer's check by a rounding. */
#define H5FZ_REL_GRID_SCALE 0.70710678118654757

double h5fz_rel_grid_floor(double t)
{
  /* t / C is rounded, so the power it gives may be one off either way */
  double p = h5fz_pow3_floor(t / H5FZ_REL_GRID_SCALE), up = h5fz_pow3_floor(p * 3.5); /* the next power */
  if (up > p && up * H5FZ_REL_GRID_SCALE <= t) p = up;
  double eb = p * H5FZ_REL_GRID_SCALE;
  if (eb > t) eb = h5fz_pow3_floor(p / 2.0) * H5FZ_REL_GRID_SCALE; /* the power before */
  return eb >= DBL_MIN ? eb : 0.0;
}

/* REL's absolute bound of a chunk: eb = the largest C x 3^k (C = 1/sqrt(2),
 * k an integer of either sign) at most bound / (1 + 2 bound) x range - m,
 * m a margin of a unit in the last place (below); 0 (the chunk is stored
 * exactly) when the range is 0 or not finite, or nothing on the grid fits.
 *
 * Why a grid of powers of 3. HDF5 encodes a chunk again each time part of
 * it is written while the chunk is not in its chunk cache: it reads the
 * chunk back, decoded, changes the part, and the whole chunk comes here
 * again, so the values written before are quantized again from their
 * decoded values, with the eb of the chunk as it is now. The quantizer's
 * bins are centred on the integer multiples of step = 2 eb. When two
 * encodes' bounds differ by an odd integer factor (3^j), the coarse bins'
 * edges (odd multiples of half the coarse step) are edges of fine bins
 * too, so every fine bin lies inside one coarse bin: a decoded value
 * quantized again with a larger eb lands in the coarse bin that holds its
 * original value, within the larger eb of it; with the same or a smaller
 * eb the decoded value is a multiple of the new step and comes back
 * unchanged. Errors no longer add up over re-encodes. With eb = bound x
 * range as it comes, every re-encode could move a value by up to its new
 * eb (chunks of 8 time steps written one step at a time came back with up
 * to 5.2x the bound; docs/spec.md §6, §7). The scale C keeps round values
 * off the bin edges (above).
 *
 * Why 1 + 2 bound. A chunk that comes back decoded can span up to 2 (eb +
 * u) more than its original values (its extremes moved outwards), and a
 * bound just within bound x that wider range can exceed bound x the
 * original range (0 .. 99.9999 % at rel=1e-2 went from 1/3 to 1 with
 * powers of 3 alone). With eb <= bound / (1 + 2 bound) x range - u, each
 * encode keeps eb + u <= bound x the original range, however often the
 * chunk is encoded (docs/spec.md §6 has the induction).
 *
 * Why the margin. A decoded value is rounded to the element type, so after
 * a re-encode with a larger eb a value that was at the edge of its first
 * bin can come back eb plus up to a unit in the last place (u) from its
 * original (the encoder checks the new value against the decoded one);
 * float32 chunks whose range left no room above the grid came back 1.049x
 * over without it (tests/core/test_rel_bound.c, edge_of_power). u is taken
 * at the largest magnitude a decoded value can reach, max(|lo|, |hi|) + 2
 * min(bound, 1) x range; 2^-40 of that is added for the grid's own
 * rounding (C x 3^k in binary64 is not exact, so two grid values differ
 * from an exact 3^j ratio by about |k| units of binary64). A bound below
 * the margin gives 0: the chunk is stored exactly.
 *
 * The cost: eb is up to 3x tighter than bound x range, about log2(3)/2 =
 * 0.8 bit of slack less per value on average. The GPU batch path calls
 * this on the host too, so every executor writes the same eb. */
double h5fz_rel_abs_bound(double bound, double lo, double hi, h5fz_dtype dtype)
{
  double range = hi >= lo && isfinite(hi - lo) ? hi - lo : 0.0;
  if (!(range > 0.0) || !(bound > 0.0)) return 0.0;
  double reach = fmax(fabs(lo), fabs(hi)) + 2.0 * fmin(bound, 1.0) * range;
  int e = 0;
  (void)frexp(isfinite(reach) ? reach : DBL_MAX, &e); /* reach in [2^(e-1), 2^e) */
  double margin = ldexp(1.0, e - (dtype == H5FZ_DTYPE_F64 ? 53 : 24)) + ldexp(1.0, e - 40);
  /* bound / (1 + 2 bound) < 1/2, so the product cannot overflow */
  return h5fz_rel_grid_floor(bound / (1.0 + 2.0 * bound) * range - margin);
}
