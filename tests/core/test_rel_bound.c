/*
 * test_rel_bound.c - REL's absolute bound per chunk (h5fz_rel_abs_bound):
 * the largest C x 3^k (C = 1/sqrt(2)) at most bound / (1 + 2 bound) x range
 * less a unit in the last place, computed without libm, so that the bins of
 * successive encodes of a chunk nest (docs/spec.md §6). The powers of 3
 * and the grid: exact values stay, anything just below one rounds down to
 * the one below it, zero / non-finite / tiny / huge inputs end sensibly;
 * the bound leaves room for a decoded chunk's wider range and for the
 * rounding of decoded values; a chunk encoded again and again from its own
 * decoded values, the way HDF5 writes a chunk in parts, stays within
 * rel x its original range (also when the range leaves no room above the
 * grid); whole numbers do not sit on bin edges.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h5fz.h"
#include "h5fz_rel_bound.h"
#include "core_check.h"

/* 3^k for k = -644 .. 646 (the normal powers), built as the function
 * documents: from 1.0, one correctly rounded *3 or /3 at a time. */
#define KMIN (-644)
#define KMAX 646
static double pow3[KMAX - KMIN + 1];
#define P3(k) pow3[(k)-KMIN]

static void make_table(void)
{
  P3(0) = 1.0;
  for (int k = 1; k <= KMAX; k++) P3(k) = P3(k - 1) * 3.0;
  for (int k = -1; k >= KMIN; k--) P3(k) = P3(k + 1) / 3.0;
}

/* k with table[k - KMIN] == eb (an increasing table of KMIN..KMAX), or
 * KMIN - 1 when eb is not in it */
static int index_in(const double *table, double eb)
{
  int lo = KMIN, hi = KMAX;
  while (lo <= hi) {
    int mid = lo + (hi - lo) / 2;
    if (table[mid - KMIN] == eb) return mid;
    if (table[mid - KMIN] < eb)
      lo = mid + 1;
    else
      hi = mid - 1;
  }
  return KMIN - 1;
}

/* k with P3(k) == eb, or KMIN - 1 when eb is not in the table */
static int index_of(double eb) { return index_in(pow3, eb); }

static double of_target(double t) { return h5fz_pow3_floor(t); }

/* REL's grid C x 3^k, C = 1/sqrt(2) in binary64, as h5fz_codec.c builds it */
#define GRID_C 0.70710678118654757
static double grid[KMAX - KMIN + 1];
#define PC(k) grid[(k)-KMIN]

static void make_grid(void)
{
  for (int k = KMIN; k <= KMAX; k++) PC(k) = P3(k) * GRID_C;
}

/* k with PC(k) == eb, or KMIN - 1 when eb is not on the grid */
static int grid_index(double eb) { return index_in(grid, eb); }

/* h5fz_rel_grid_floor: grid values stay, just below one gives the one
 * before, any target gives the largest grid value at or below it */
static void test_grid(void)
{
  for (int k = KMIN + 1; k <= KMAX; k++) {
    double g = PC(k);
    if (g < DBL_MIN) continue;
    CHECK(h5fz_rel_grid_floor(g) == g, "C x 3^%d = %.17g gives %.17g", k, g, h5fz_rel_grid_floor(g));
    double below = nextafter(g, 0.0), want = PC(k - 1) >= DBL_MIN ? PC(k - 1) : 0.0;
    CHECK(h5fz_rel_grid_floor(below) == want, "just below C x 3^%d: %.17g, want %.17g", k, h5fz_rel_grid_floor(below),
          want);
  }
  for (int i = 0; i < 200000; i++) {
    double t = ldexp(1.0 + (double)(rnd() >> 11) * 0x1p-53, (int)(rnd() % 2000) - 1000), eb = h5fz_rel_grid_floor(t);
    if (eb == 0.0) {
      CHECK(t < 2.0 * DBL_MIN, "target %.17g gives 0", t);
      continue;
    }
    int k = grid_index(eb);
    CHECK(k >= KMIN && eb <= t && (k == KMAX || t < PC(k + 1)), "target %.17g gives %.17g (k %d)", t, eb, k);
  }
}

/* Whole numbers (an elevation model in metres) at REL: no value sits on a
 * bin edge, so few escape the quantizer (with a grid of plain powers of 3,
 * every odd number was on an edge and about half of them escaped). */
static void whole_numbers(void)
{
  enum { N = 65536 };
  float *v = malloc(N * sizeof *v);
  if (!v) abort();
  for (int i = 0; i < N; i++) v[i] = (float)(int)(300.0 + 250.0 * sin(0.001 * i) + 40.0 * sin(0.37 * i));
  static const double rels[] = {1e-2, 1e-3, 1e-4, 1e-5};
  for (int r = 0; r < 4; r++) {
    char text[64];
    snprintf(text, sizeof text, "rel=%g dtype=f32", rels[r]);
    h5fz_spec spec;
    void *enc = NULL, *dec = NULL;
    size_t en = 0, dn = 0;
    h5fz_chunk_info info;
    CHECK(h5fz_spec_parse(text, &spec) == H5FZ_OK && h5fz_chunk_encode(&spec, v, N * sizeof *v, &enc, &en) == 0 &&
              h5fz_chunk_inspect(enc, en, &info) == 0 && h5fz_chunk_decode(enc, en, &dec, &dn) == 0 &&
              dn == N * sizeof *v,
          "%s: %s", text, h5fz_last_error());
    if (dec) {
      double worst = 0.0;
      for (int i = 0; i < N; i++) worst = fmax(worst, fabs((double)v[i] - (double)((float *)dec)[i]));
      CHECK(worst <= info.abs_bound, "%s: max error %.9g over eb %.9g", text, worst, info.abs_bound);
      CHECK(info.n_outliers <= N / 100, "%s: %u of %d whole numbers escaped (eb %.9g)", text, info.n_outliers, N,
            info.abs_bound);
      printf("  whole numbers, %s: eb %.6g, %u of %d escaped, ratio %.2f\n", text, info.abs_bound, info.n_outliers, N,
             (double)(N * sizeof *v) / (double)en);
    }
    free(enc);
    free(dec);
  }
  free(v);
}

static void test_table(void)
{
  CHECK(P3(1) == 3.0 && P3(2) == 9.0 && P3(33) == 5559060566555523.0, "small powers of 3 are exact");
  CHECK(isfinite(P3(KMAX)) && isinf(P3(KMAX) * 3.0), "3^646 is the largest finite power of 3");
  CHECK(P3(KMIN) >= DBL_MIN && P3(KMIN) / 3.0 < DBL_MIN, "3^-644 is the smallest normal power of 3");
  /* successive steps differ by 3 to within a few units in the last place */
  for (int k = KMIN; k < KMAX; k++) {
    double r = P3(k + 1) / P3(k);
    CHECK(fabs(r - 3.0) <= 8.0 * DBL_EPSILON, "3^%d / 3^%d = %.17g", k + 1, k, r);
  }
}

static void test_powers_stay_and_below_rounds_down(void)
{
  for (int k = KMIN; k <= KMAX; k++) {
    double p = P3(k);
    CHECK(of_target(p) == p, "3^%d = %.17g gives %.17g", k, p, of_target(p));
    double above = nextafter(p, INFINITY);
    if (k < KMAX) CHECK(of_target(above) == p, "just above 3^%d gives %.17g", k, of_target(above));
    double below = nextafter(p, 0.0);
    double want = k > KMIN ? P3(k - 1) : 0.0; /* below 3^-644 no normal power fits */
    CHECK(of_target(below) == want, "just below 3^%d: %.17g, want %.17g", k, of_target(below), want);
    /* halfway to the next power, and the same target through bound x range */
    if (k < KMAX) {
      double mid = p * 2.0;
      CHECK(of_target(mid) == p, "2 x 3^%d gives %.17g", k, of_target(mid));
    }
  }
  CHECK(of_target(1.0) == 1.0 && of_target(2.999) == 1.0 && of_target(3.0) == 3.0 && of_target(8.99) == 3.0 &&
            of_target(0.5) == P3(-1) && of_target(1.0 / 3.0) == P3(-1),
        "a few by hand: %.17g %.17g %.17g", of_target(2.999), of_target(0.5), of_target(1.0 / 3.0));
}

/* The margin h5fz_rel_abs_bound leaves: a unit in the last place of dtype
 * at the largest magnitude a decoded value can reach, plus 2^-40 of it */
static double margin_of(double bound, double lo, double hi, h5fz_dtype dt, double *u)
{
  int e = 0;
  (void)frexp(fmax(fabs(lo), fabs(hi)) + 2.0 * fmin(bound, 1.0) * (hi - lo), &e);
  *u = ldexp(1.0, e - (dt == H5FZ_DTYPE_F64 ? 53 : 24));
  return *u + ldexp(1.0, e - 40);
}

/* h5fz_rel_abs_bound: the grid value of bound / (1 + 2 bound) x range less
 * the margin */
static void test_rel_values(void)
{
  /* the default rel=1e-4 on the embedded field's range (19.9342 .. 20.0074):
   * 7.3158e-6 / 1.0002 less 2.1e-6 is 5.21e-6, C x 3^-11 = 3.99e-6 */
  double eb = h5fz_rel_abs_bound(1e-4, 19.934223175048828, 20.007381439208984, H5FZ_DTYPE_F32);
  CHECK(eb == PC(-11), "rel=1e-4 of a 0.0732 range: %.17g, want C x 3^-11 = %.17g", eb, PC(-11));
  eb = h5fz_rel_abs_bound(1e-3, 100.0, 109.0, H5FZ_DTYPE_F64);
  CHECK(eb == PC(-4), "rel=1e-3 of a range of 9: %.17g, want C x 3^-4", eb);
  eb = h5fz_rel_abs_bound(1e-2, 0.0, 99.9999, H5FZ_DTYPE_F64);
  CHECK(eb == PC(0), "rel=1e-2 of 0 .. 99.9999: %.17g, want C", eb);
  for (int i = 0; i < 100000; i++) {
    double bound = ldexp(1.0 + (double)(rnd() >> 11) * 0x1p-53, -(int)(rnd() % 40)); /* 2^-40 .. 2 */
    double lo = -ldexp((double)(rnd() >> 11) * 0x1p-53, (int)(rnd() % 200) - 100);
    double hi = ldexp((double)(rnd() >> 11) * 0x1p-53, (int)(rnd() % 200) - 100);
    const h5fz_dtype dt = i % 2 ? H5FZ_DTYPE_F32 : H5FZ_DTYPE_F64;
    eb = h5fz_rel_abs_bound(bound, lo, hi, dt);
    double u, t = bound / (1.0 + 2.0 * bound) * (hi - lo) - margin_of(bound, lo, hi, dt, &u);
    CHECK(eb == h5fz_rel_grid_floor(t), "rel=%.17g of [%.17g, %.17g]: %.17g", bound, lo, hi, eb);
    CHECK(eb == 0.0 || (grid_index(eb) >= KMIN && eb <= t && t < 3.0 * eb * (1.0 + 1e-12)),
          "rel=%.17g of [%.17g, %.17g]: %.17g", bound, lo, hi, eb);
    /* eb + u <= bound x (range - 2 (eb + u)): a range widened by 2 (eb + u)
     * keeps it, with room for the rounding of the decoded values */
    CHECK(bound > 0.5 || eb == 0.0 || eb + u <= bound * ((hi - lo) - 2.0 * (eb + u)) * (1.0 + 1e-15),
          "rel=%.17g of [%.17g, %.17g]: %.17g", bound, lo, hi, eb);
  }
}

static double random_target(void)
{
  for (;;) {
    uint64_t b = rnd() >> 1;
    if ((b >> 52) == 0x7ff || b == 0) continue;
    double t;
    memcpy(&t, &b, sizeof t);
    return t;
  }
}

static void test_random_targets(void)
{
  for (int i = 0; i < 200000; i++) {
    double t = random_target(), eb = of_target(t);
    if (t < P3(KMIN)) {
      CHECK(eb == 0.0, "target %.17g below 3^-644 gives %.17g, want 0", t, eb);
    } else {
      int k = index_of(eb);
      CHECK(k >= KMIN, "target %.17g gives %.17g, not a power of 3", t, eb);
      CHECK(eb <= t && (k == KMAX || t < P3(k + 1)), "target %.17g gives 3^%d = %.17g", t, k, eb);
    }
    /* monotone: a larger target never gets a smaller bound */
    double u = random_target(), ebu = of_target(u);
    CHECK((t <= u) ? eb <= ebu : eb >= ebu, "not monotone: %.17g -> %.17g, %.17g -> %.17g", t, eb, u, ebu);
  }
}

static void test_special_inputs(void)
{
  CHECK(h5fz_rel_abs_bound(1e-4, 5.0, 5.0, H5FZ_DTYPE_F64) == 0.0, "range 0 gives 0");
  CHECK(h5fz_rel_abs_bound(1e-4, INFINITY, -INFINITY, H5FZ_DTYPE_F64) == 0.0, "no finite value (lo > hi) gives 0");
  CHECK(h5fz_rel_abs_bound(1e-4, 2.0, 1.0, H5FZ_DTYPE_F64) == 0.0, "lo > hi gives 0");
  CHECK(h5fz_rel_abs_bound(1e-4, NAN, 1.0, H5FZ_DTYPE_F64) == 0.0 &&
            h5fz_rel_abs_bound(1e-4, 0.0, NAN, H5FZ_DTYPE_F64) == 0.0,
        "NaN ends give 0");
  CHECK(h5fz_rel_abs_bound(NAN, 0.0, 1.0, H5FZ_DTYPE_F64) == 0.0 &&
            h5fz_rel_abs_bound(INFINITY, 0.0, 1.0, H5FZ_DTYPE_F64) == 0.0,
        "a NaN or infinite bound gives 0");
  CHECK(h5fz_rel_abs_bound(0.0, 0.0, 1.0, H5FZ_DTYPE_F64) == 0.0 &&
            h5fz_rel_abs_bound(-1e-4, 0.0, 1.0, H5FZ_DTYPE_F64) == 0.0,
        "a zero or negative bound gives 0");
  CHECK(h5fz_rel_abs_bound(1e-4, -DBL_MAX, DBL_MAX, H5FZ_DTYPE_F64) == 0.0, "a range that overflows gives 0");
  /* bound / (1 + 2 bound) < 1/2: even 1e300 x DBL_MAX does not overflow */
  CHECK(h5fz_rel_abs_bound(1e300, 0.0, DBL_MAX, H5FZ_DTYPE_F64) == h5fz_rel_grid_floor(DBL_MAX / 2 * (1.0 - 0x1p-39)),
        "1e300 x DBL_MAX: %.17g", h5fz_rel_abs_bound(1e300, 0.0, DBL_MAX, H5FZ_DTYPE_F64));
  /* huge and tiny targets */
  CHECK(of_target(1e308) == P3(KMAX - 1) && P3(KMAX) > 1e308, "1e308: %.17g", of_target(1e308));
  CHECK(of_target(DBL_MAX) == P3(KMAX), "DBL_MAX: 3^646");
  CHECK(of_target(INFINITY) == 0.0 && of_target(NAN) == 0.0 && of_target(-1.0) == 0.0 && of_target(0.0) == 0.0 &&
            of_target(-0.0) == 0.0,
        "inf, NaN, negative, zero: 0");
  /* no normal power of 3 fits: the chunk is stored exactly */
  CHECK(of_target(1e-310) == 0.0 && of_target(DBL_MIN) == 0.0 && of_target(4.9e-324) == 0.0,
        "subnormal and DBL_MIN targets give 0");
  CHECK(of_target(1e-307) == P3(-644), "1e-307: 3^-644, got %.17g", of_target(1e-307));
  CHECK(h5fz_rel_abs_bound(1e-300, 0.0, 1e-10, H5FZ_DTYPE_F64) == 0.0, "rel=1e-300 of a range of 1e-10 gives 0");
}

/* One write of step s (plane values) of a chunk of n values held decoded
 * in cur, the way HDF5 writes part of a chunk it does not have cached: the
 * step's original values (orig, as double) in, the whole chunk encoded
 * and decoded again into cur, its header's summary to *info. 0, or -1
 * after a failed check. */
static int write_step(const h5fz_spec *spec, const char *text, void *cur, const double *orig, int s, size_t plane,
                      int f64, size_t n, h5fz_chunk_info *info)
{
  size_t es = f64 ? 8 : 4;
  for (size_t i = 0; i < plane; i++) {
    size_t j = (size_t)s * plane + i;
    if (f64)
      ((double *)cur)[j] = orig[j];
    else
      ((float *)cur)[j] = (float)orig[j];
  }
  void *enc = NULL, *dec = NULL;
  size_t en = 0, dn = 0;
  int ok = !h5fz_chunk_encode(spec, cur, n * es, &enc, &en) && !h5fz_chunk_inspect(enc, en, info) &&
           !h5fz_chunk_decode(enc, en, &dec, &dn) && dn == n * es;
  CHECK(ok, "%s step %d: %s", text, s, h5fz_last_error());
  if (ok) memcpy(cur, dec, n * es);
  free(enc);
  free(dec);
  return ok ? 0 : -1;
}

/* ---- a chunk written in parts --------------------------------------------
 * What HDF5 does when it writes one step of a chunk that is not cached:
 * decode the stored chunk, put the step's original values in, encode it
 * all again. Every value must stay within rel x the range of the original
 * chunk (the steps hold values of growing range, so eb changes from one
 * encode to the next), and every header's eb must be a power of 3. */
static void written_in_parts_at(int f64, double rel, int reversed, double base, double amp)
{
  enum { STEPS = 8, PLANE = 4096 };
  size_t n = (size_t)STEPS * PLANE, es = f64 ? 8 : 4;
  double *orig = malloc(n * sizeof *orig);
  unsigned char *cur = calloc(n, es); /* fill value 0, left out of the range */
  if (!orig || !cur) abort();
  for (int s = 0; s < STEPS; s++)
    for (int i = 0; i < PLANE; i++)
      orig[(size_t)s * PLANE + i] =
          base + amp * ((0.01 + 0.02 * s) * sin(0.013 * i + s) + 1e-3 * (double)(rnd() >> 11) * 0x1p-53);
  char text[96];
  snprintf(text, sizeof text, "rel=%g dtype=%s dims=%dx%d fill=0", rel, f64 ? "f64" : "f32", STEPS, PLANE);
  h5fz_spec spec;
  CHECK(h5fz_spec_parse(text, &spec) == H5FZ_OK, "parse %s: %s", text, h5fz_last_error());
  double lo = INFINITY, hi = -INFINITY;
  for (size_t i = 0; i < n; i++) {
    if (orig[i] < lo) lo = orig[i];
    if (orig[i] > hi) hi = orig[i];
  }
  if (!f64) { /* the range of the float32 values */
    lo = (float)lo;
    hi = (float)hi;
  }
  double bound = rel * (hi - lo), worst = 0.0;
  int not_pow3 = 0;
  for (int w = 0; w < STEPS; w++) {
    int s = reversed ? STEPS - 1 - w : w;
    h5fz_chunk_info info;
    if (write_step(&spec, text, cur, orig, s, PLANE, f64, n, &info)) break;
    if (info.abs_bound != 0.0 && grid_index(info.abs_bound) < KMIN) not_pow3++; /* 0: stored exactly */
  }
  for (int s = 0; s < STEPS; s++)
    for (int i = 0; i < PLANE; i++) {
      size_t j = (size_t)s * PLANE + i;
      double x = f64 ? orig[j] : (double)(float)orig[j];
      double y = f64 ? ((double *)cur)[j] : ((float *)cur)[j];
      if (fabs(x - y) > worst) worst = fabs(x - y);
    }
  CHECK(not_pow3 == 0, "%s: %d encodes with an eb that is not C x a power of 3", text, not_pow3);
  CHECK(worst <= bound, "%s, %s, values %g +- %g: max error %.9g = %.6f x rel x range %.9g", text,
        reversed ? "reversed" : "forward", base, amp * 0.15, worst, worst / bound, bound);
  printf("  %s, %-8s, values %g +- %g: max error / (rel x range) = %.3f\n", text, reversed ? "reversed" : "forward",
         base, amp * 0.15, worst / bound);
  free(orig);
  free(cur);
}

static void written_in_parts(int f64, double rel, int reversed) { written_in_parts_at(f64, rel, reversed, 20.0, 1.0); }

/* A decoded chunk spans up to 2 eb more than its original values: percent
 * values 0 .. 99.9999 at rel=1e-2 get eb = 1/3 (1 would exceed 0.999999),
 * and decode to 0 .. 100, whose 1e-2 x range is 1 exactly. The next encode
 * must not take eb = 1: values just below 1, 3, 5, 7 written then would come
 * back 1 - ulp away, over the bound 0.999999 of the original range. */
static void percent_written_in_parts(int f64)
{
  enum { STEPS = 4, PLANE = 1024 };
  size_t n = (size_t)STEPS * PLANE, es = f64 ? 8 : 4;
  double *orig = malloc(n * sizeof *orig);
  unsigned char *cur = calloc(n, es); /* fill value -1, left out of the range */
  if (!orig || !cur) abort();
  for (size_t i = 0; i < n; i++) {
    double v = (double)(rnd() >> 11) * 0x1p-53 * 99.0;
    if (i >= PLANE && i % 3 == 0) /* just below an odd integer: a bin edge of step 2 */
      v = f64 ? nextafter(1.0 + 2.0 * (double)(i % 4), 0.0) : nextafterf(1.0f + 2.0f * (float)(i % 4), 0.0f);
    orig[i] = f64 ? v : (double)(float)v;
  }
  orig[0] = 0.0;
  orig[1] = f64 ? 99.9999 : (double)99.9999f;
  for (size_t i = 0; i < n; i++) {
    if (f64)
      ((double *)cur)[i] = -1.0;
    else
      ((float *)cur)[i] = -1.0f;
  }
  char text[96];
  snprintf(text, sizeof text, "rel=1e-2 dtype=%s dims=%dx%d fill=-1", f64 ? "f64" : "f32", STEPS, PLANE);
  h5fz_spec spec;
  CHECK(h5fz_spec_parse(text, &spec) == H5FZ_OK, "parse %s: %s", text, h5fz_last_error());
  double bound = 1e-2 * orig[1], worst = 0.0, last_eb = 0.0;
  for (int s = 0; s < STEPS; s++) {
    h5fz_chunk_info info;
    if (write_step(&spec, text, cur, orig, s, PLANE, f64, n, &info)) break;
    last_eb = info.abs_bound;
    CHECK(info.abs_bound <= bound, "%s step %d: eb %.17g > 1e-2 x the original range %.17g", text, s, info.abs_bound,
          bound);
  }
  for (size_t j = 0; j < n; j++) {
    double y = f64 ? ((double *)cur)[j] : ((float *)cur)[j];
    if (fabs(orig[j] - y) > worst) worst = fabs(orig[j] - y);
  }
  CHECK(worst <= bound, "%s: max error %.9g = %.6f x rel x range %.9g", text, worst, worst / bound, bound);
  printf("  %s, 0 .. 99.9999 in %d steps: eb %.6g, max error / (rel x range) = %.3f\n", text, STEPS, last_eb,
         worst / bound);
  free(orig);
  free(cur);
}

/* Half a unit in the last place: a value at the edge of its bin in the
 * first encode is within eb1 of its decoded value, which is within half a
 * unit in the last place of its bin's centre; a later encode with a 3^j
 * times larger eb keeps it in the coarse bin of that centre, within eb2,
 * but its new decoded value is rounded to the element type again. So the
 * error after a re-encode can reach eb2 plus about a unit in the last
 * place, and eb must leave that room below rel x range. Chunks of two
 * steps: the first spans about 1.5 x the range that gives 3^(k-1), the
 * second widens the range to the smallest float32 range whose eb is 3^k
 * (no room beyond the power of 3 itself), eb a few units in the last
 * place. Every element of every chunk must stay within rel x range. */
static void edge_of_power(void)
{
  enum { PLANE = 512, TRIALS = 400 };
  const double rel = 1e-3, base = 100.0;
  const float fbase = (float)base;
  /* the smallest float32 top whose range gets eb C x 3^-9 = 4.7 ulp of 100 */
  const double eb2 = PC(-9);
  float top = (float)(base + eb2 * (1.0 + 2.0 * rel) / rel * (1.0 - 1e-6));
  while (h5fz_rel_abs_bound(rel, fbase, top, H5FZ_DTYPE_F32) < eb2) top = nextafterf(top, INFINITY);
  const double bound = rel * ((double)top - fbase);
  const double a = PC(-10) * (1.0 + 2.0 * rel) / rel * 1.5; /* the first step's span: eb C x 3^-10 */
  char text[96];
  snprintf(text, sizeof text, "rel=%g dtype=f32 dims=2x%d fill=0", rel, PLANE);
  h5fz_spec spec;
  CHECK(h5fz_spec_parse(text, &spec) == H5FZ_OK, "parse %s: %s", text, h5fz_last_error());
  float orig[2 * PLANE], cur[2 * PLANE];
  double worst = 0.0;
  for (int t = 0; t < TRIALS; t++) {
    for (int i = 0; i < PLANE; i++) {
      orig[i] = (float)(base + a * (double)(rnd() >> 11) * 0x1p-53);
      orig[PLANE + i] = (float)(base + ((double)top - base) * (double)(rnd() >> 11) * 0x1p-53);
    }
    orig[PLANE] = fbase;
    orig[PLANE + 1] = top;
    memset(cur, 0, sizeof cur);
    for (int step = 0; step < 2; step++) {
      memcpy(cur + step * PLANE, orig + step * PLANE, sizeof orig / 2);
      void *enc = NULL, *dec = NULL;
      size_t en = 0, dn = 0;
      if (h5fz_chunk_encode(&spec, cur, sizeof cur, &enc, &en) || h5fz_chunk_decode(enc, en, &dec, &dn) ||
          dn != sizeof cur) {
        CHECK(0, "%s trial %d step %d: %s", text, t, step, h5fz_last_error());
        free(enc);
        free(dec);
        return;
      }
      memcpy(cur, dec, sizeof cur);
      free(enc);
      free(dec);
    }
    for (int i = 0; i < 2 * PLANE; i++)
      if (fabs((double)orig[i] - (double)cur[i]) > worst) worst = fabs((double)orig[i] - (double)cur[i]);
  }
  CHECK(worst <= bound, "%s, %d chunks, eb at the edge of C x 3^-9: max error %.9g = %.6f x rel x range %.9g", text,
        TRIALS, worst, worst / bound, bound);
  printf("  %s, %d chunks of two steps, range at the edge of eb C x 3^-9: max error / (rel x range) = %.6f\n", text,
         TRIALS, worst / bound);
}

int main(void)
{
  make_table();
  make_grid();
  test_table();
  test_grid();
  test_powers_stay_and_below_rounds_down();
  test_random_targets();
  test_rel_values();
  test_special_inputs();
  static const double rels[] = {1e-2, 1e-4, 1e-6};
  for (int f64 = 0; f64 <= 1; f64++)
    for (int r = 0; r < 3; r++)
      for (int rev = 0; rev <= 1; rev++) written_in_parts(f64, rels[r], rev);
  for (int f64 = 0; f64 <= 1; f64++) percent_written_in_parts(f64);
  edge_of_power();
  whole_numbers();
  /* a range of a few thousand units in the last place (100 +- 0.25 in
   * float32, 1e12 +- 5 in float64): eb is a few units in the last place,
   * and the rounding of each decoded value counts */
  static const double few_ulps[] = {1e-4, 3e-4, 1e-3, 3e-3};
  for (int r = 0; r < 4; r++)
    for (int rev = 0; rev <= 1; rev++) {
      written_in_parts_at(0, few_ulps[r], rev, 100.0, 10.0 / 6.0);
      written_in_parts_at(1, few_ulps[r], rev, 1e12, 10.0 / 0.3);
    }
  if (failures) {
    fprintf(stderr, "test_rel_bound: %d of %ld checks FAILED\n", failures, checks);
    return 1;
  }
  printf("test_rel_bound: all %ld checks passed\n", checks);
  return 0;
}
