/*
 * Round trips through H5Dwrite/H5Dread with the h5fz filter: float32 and
 * float64, 1-D to 5-D chunks, edge chunks, Fletcher32 after h5fz,
 * NaN/Inf/-0.0/huge/subnormal values, several chains, big-endian datasets
 * (H5T_IEEE_F*BE: every chunk filtered, recorded big-endian). Every element is
 * checked against the absolute bound its chunk was encoded with (read from
 * the stored chunk's header, so REL chunks are checked exactly too).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "filter_test_util.h"

#define RT_MAX_RANK 5

typedef struct {
  const char *name;
  h5fz_dtype dtype;
  int rank;
  hsize_t dims[RT_MAX_RANK];
  hsize_t chunk[RT_MAX_RANK];
  const char *spec; /* NULL: no cd_values at all (the defaults) */
  int fletcher;     /* +1: Fletcher32 after h5fz (before is refused) */
  int specials;     /* sprinkle NaN, Inf, -0.0, huge and subnormal values */
  int no_gain;      /* a chain that is not meant to shrink the data */
  int big_endian;   /* the dataset's type is H5T_IEEE_F*BE */
} rt_case;

static const rt_case CASES[] = {
    {"f32_2d_abs_specials", H5FZ_DTYPE_F32, 2, {100, 77}, {32, 20}, "abs=1e-3", 0, 1, 0, 0},
    {"f64_3d_abs_specials", H5FZ_DTYPE_F64, 3, {20, 33, 17}, {8, 16, 8}, "abs=1e-6", 0, 1, 0, 0},
    {"f32_3d_fletcher_after", H5FZ_DTYPE_F32, 3, {19, 24, 30}, {10, 8, 16}, "abs=1e-2", 1, 1, 0, 0},
    {"f64_2d_fletcher_after", H5FZ_DTYPE_F64, 2, {64, 50}, {16, 16}, "abs=1e-4", 1, 1, 0, 0},
    {"f32_2d_defaults", H5FZ_DTYPE_F32, 2, {90, 90}, {40, 40}, NULL, 0, 0, 0, 0},
    {"f32_2d_rel", H5FZ_DTYPE_F32, 2, {70, 130}, {32, 64}, "rel=1e-3", 0, 1, 0, 0},
    {"f64_5d_fold", H5FZ_DTYPE_F64, 5, {3, 4, 5, 6, 7}, {2, 2, 3, 4, 5}, "abs=1e-5", 0, 1, 0, 0},
    {"f32_1d_negabinary", H5FZ_DTYPE_F32, 1, {10000}, {4096}, "abs=1e-3 delta negabinary bitshuffle rze", 1, 1, 0, 0},
    {"f64_1d_raw_coder", H5FZ_DTYPE_F64, 1, {5000}, {1024}, "abs=1e-3 raw", 0, 1, 1, 0},
    /* lorenzo_nd: its geometry from set_local's chunk dims, edge chunks padded */
    {"f32_3d_lorenzo_nd",
     H5FZ_DTYPE_F32,
     3,
     {19, 70, 90},
     {8, 64, 80},
     "abs=1e-4 lorenzo_nd zigzag bitshuffle rze",
     0,
     1,
     0,
     0},
    {"f64_5d_lorenzo_nd_fold",
     H5FZ_DTYPE_F64,
     5,
     {3, 4, 5, 6, 7},
     {2, 2, 3, 4, 5},
     "abs=1e-4 lorenzo_nd negabinary bitpack subchunk=1024",
     1,
     1,
     1,
     0}, /* chunks of 240: no gain */
    {"f32_2d_lorenzo_nd_rel",
     H5FZ_DTYPE_F32,
     2,
     {70, 130},
     {32, 64},
     "rel=1e-3 lorenzo_nd zigzag bitshuffle rze",
     0,
     1,
     0,
     0},
    /* big-endian datasets: compressed like little-endian ones */
    {"f32_2d_abs_specials_be", H5FZ_DTYPE_F32, 2, {100, 77}, {32, 20}, "abs=1e-3", 0, 1, 0, 1},
    {"f64_3d_abs_fletcher_be", H5FZ_DTYPE_F64, 3, {20, 33, 17}, {8, 16, 8}, "abs=1e-6", 1, 1, 0, 1},
    {"f32_2d_rel_be", H5FZ_DTYPE_F32, 2, {70, 130}, {32, 64}, "rel=1e-3", 0, 1, 0, 1},
    {"f64_3d_lorenzo_nd_be",
     H5FZ_DTYPE_F64,
     3,
     {19, 70, 90},
     {8, 64, 80},
     "abs=1e-4 lorenzo_nd zigzag bitshuffle rze",
     0,
     1,
     0,
     1},
    {"f32_1d_raw_coder_be", H5FZ_DTYPE_F32, 1, {5000}, {1024}, "abs=1e-3 raw", 0, 1, 1, 1}, /* stored raw */
};

static size_t n_elems(int rank, const hsize_t *dims)
{
  size_t n = 1;
  for (int d = 0; d < rank; d++) n *= (size_t)dims[d];
  return n;
}

/* Coordinates of linear index i (row-major, slowest first). */
static void coords(int rank, const hsize_t *dims, size_t i, hsize_t *c)
{
  for (int d = rank - 1; d >= 0; d--) {
    c[d] = i % dims[d];
    i /= dims[d];
  }
}

/* A smooth field (compressible) with optional special values; stored as
 * the dataset's type, so for float32 the values are rounded to float. */
static void make_data(const rt_case *tc, size_t n, double *v)
{
  for (size_t i = 0; i < n; i++) {
    hsize_t c[RT_MAX_RANK] = {0};
    coords(tc->rank, tc->dims, i, c);
    double x = 0.0;
    for (int d = 0; d < tc->rank; d++) x += sin(0.05 * (double)c[d] * (d + 1) + 0.3 * d);
    v[i] = 10.0 * x + 0.25 * cos(0.013 * (double)i);
  }
  if (tc->specials) {
    double huge = tc->dtype == H5FZ_DTYPE_F32 ? 1e30 : 1e300;
    double tiny = tc->dtype == H5FZ_DTYPE_F32 ? 1e-40 : 1e-310;
    const double special[] = {NAN, INFINITY, -INFINITY, -0.0, huge, -huge, tiny, 0.0};
    const size_t ns = sizeof special / sizeof special[0];
    for (size_t k = 0; k * 37 + 3 < n && k < 64; k++) v[k * 37 + 3] = special[k % ns];
  }
  if (tc->dtype == H5FZ_DTYPE_F32)
    for (size_t i = 0; i < n; i++) v[i] = (double)(float)v[i];
}

static hid_t mem_type(h5fz_dtype t) { return t == H5FZ_DTYPE_F32 ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE; }

static hid_t file_type(const rt_case *tc)
{
  if (tc->big_endian) return tc->dtype == H5FZ_DTYPE_F32 ? H5T_IEEE_F32BE : H5T_IEEE_F64BE;
  return tc->dtype == H5FZ_DTYPE_F32 ? H5T_IEEE_F32LE : H5T_IEEE_F64LE;
}

static int write_case(const rt_case *tc, const double *v, size_t n)
{
  unsigned cd[H5FZ_CD_MAX];
  size_t ncd = tc->spec ? ft_cd_from_text(tc->spec, cd) : 0;
  hid_t f = ft_create_file(tc->name);
  hid_t space = H5Screate_simple(tc->rank, tc->dims, NULL);
  hid_t dcpl = ft_dcpl(tc->rank, tc->chunk, H5Z_FLAG_MANDATORY, ncd, cd, tc->fletcher);
  hid_t d = H5Dcreate2(f, "data", file_type(tc), space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  int ok = d >= 0;
  if (ok) {
    void *buf = malloc(n * h5fz_dtype_size(tc->dtype));
    for (size_t i = 0; i < n; i++) {
      if (tc->dtype == H5FZ_DTYPE_F32)
        ((float *)buf)[i] = (float)v[i];
      else
        ((double *)buf)[i] = v[i];
    }
    ok = H5Dwrite(d, mem_type(tc->dtype), H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0;
    free(buf);
    ok = (H5Dclose(d) >= 0) && ok;
  }
  char stack[2048] = "";
  if (!ok) ft_error_stack(stack, sizeof stack);
  H5Pclose(dcpl);
  H5Sclose(space);
  ok = (H5Fclose(f) >= 0) && ok;
  FT_CHECK(ok, "%s: create/write failed: %s", tc->name, stack);
  return ok ? 0 : -1;
}

/* The absolute bound each chunk was encoded with, from its stored header.
 * bounds has one entry per chunk, chunk grid in row-major order. */
static int chunk_bounds(const rt_case *tc, hid_t d, double *bounds, size_t n_chunks)
{
  hsize_t grid[RT_MAX_RANK];
  for (int k = 0; k < tc->rank; k++) grid[k] = (tc->dims[k] + tc->chunk[k] - 1) / tc->chunk[k];
  for (size_t ci = 0; ci < n_chunks; ci++) {
    hsize_t g[RT_MAX_RANK], off[RT_MAX_RANK];
    coords(tc->rank, grid, ci, g);
    for (int k = 0; k < tc->rank; k++) off[k] = g[k] * tc->chunk[k];
    hsize_t sz = 0;
    if (H5Dget_chunk_storage_size(d, off, &sz) < 0 || sz == 0) {
      FT_CHECK(0, "%s: chunk %zu has no storage", tc->name, ci);
      return -1;
    }
    unsigned char *raw = malloc((size_t)sz);
    uint32_t mask = 0;
    if (H5Dread_chunk(d, H5P_DEFAULT, off, &mask, raw) < 0) {
      FT_CHECK(0, "%s: H5Dread_chunk of chunk %zu failed", tc->name, ci);
      free(raw);
      return -1;
    }
    FT_CHECK(mask == 0, "%s: chunk %zu stored with filter mask 0x%x (a filter was skipped)", tc->name, ci, mask);
    /* Fletcher32 after h5fz appends its 4-byte checksum to our container. */
    size_t len = (size_t)sz - (tc->fletcher > 0 ? 4 : 0);
    h5fz_chunk_info info;
    int st = h5fz_chunk_inspect(raw, len, &info);
    free(raw);
    if (st != H5FZ_OK) {
      FT_CHECK(0, "%s: chunk %zu does not inspect: %s", tc->name, ci, h5fz_last_error());
      return -1;
    }
    FT_CHECK(info.big_endian == tc->big_endian && info.format_version == (tc->big_endian ? 2u : 1u),
             "%s: chunk %zu records %s-endian values, format version %u", tc->name, ci,
             info.big_endian ? "big" : "little", info.format_version);
    bounds[ci] = info.abs_bound;
  }
  return 0;
}

static size_t chunk_of(const rt_case *tc, size_t i)
{
  hsize_t c[RT_MAX_RANK];
  coords(tc->rank, tc->dims, i, c);
  size_t ci = 0;
  for (int k = 0; k < tc->rank; k++) {
    size_t g = (size_t)((tc->dims[k] + tc->chunk[k] - 1) / tc->chunk[k]);
    ci = ci * g + (size_t)(c[k] / tc->chunk[k]);
  }
  return ci;
}

static void check_values(const rt_case *tc, const double *want, const double *got, size_t n, const double *bounds)
{
  size_t bad = 0;
  double worst = 0.0;
  for (size_t i = 0; i < n; i++) {
    double x = want[i], y = got[i];
    int ok;
    if (isnan(x))
      ok = isnan(y);
    else if (isinf(x))
      ok = (y == x);
    else if (x == 0.0 && signbit(x))
      ok = (y == 0.0 && signbit(y));
    else {
      double err = fabs(x - y);
      ok = err <= bounds[chunk_of(tc, i)];
      if (err > worst && ok) worst = err;
    }
    if (!ok && bad++ < 5)
      FT_CHECK(0, "%s: element %zu: wrote %.17g read %.17g (chunk bound %.17g)", tc->name, i, x, y,
               bounds[chunk_of(tc, i)]);
  }
  FT_CHECK(bad == 0, "%s: %zu of %zu elements outside the bound", tc->name, bad, n);
  printf("%s: %zu elements checked, max error %.3g\n", tc->name, n, worst);
}

static void check_bounds(const rt_case *tc, const double *bounds, size_t n_chunks)
{
  h5fz_spec spec;
  if (tc->spec)
    h5fz_spec_parse(tc->spec, &spec);
  else
    h5fz_spec_default(&spec);
  for (size_t ci = 0; ci < n_chunks; ci++) {
    if (spec.mode == H5FZ_MODE_ABS)
      FT_CHECK(bounds[ci] <= spec.bound, "%s: chunk %zu bound %.17g exceeds abs=%.17g", tc->name, ci, bounds[ci],
               spec.bound);
    FT_CHECK(bounds[ci] >= 0.0 && isfinite(bounds[ci]), "%s: chunk %zu has bound %g", tc->name, ci, bounds[ci]);
  }
}

static void read_and_check(const rt_case *tc, const double *want, size_t n)
{
  char name[256];
  snprintf(name, sizeof name, "%s.h5", tc->name);
  hid_t f = H5Fopen(name, H5F_ACC_RDONLY, H5P_DEFAULT);
  hid_t d = H5Dopen2(f, "data", H5P_DEFAULT);
  size_t esz = h5fz_dtype_size(tc->dtype);
  void *buf = malloc(n * esz);
  herr_t r = H5Dread(d, mem_type(tc->dtype), H5S_ALL, H5S_ALL, H5P_DEFAULT, buf);
  char stack[2048] = "";
  if (r < 0) ft_error_stack(stack, sizeof stack);
  FT_CHECK(r >= 0, "%s: H5Dread failed: %s", tc->name, stack);
  if (r >= 0) {
    double *got = malloc(n * sizeof *got);
    for (size_t i = 0; i < n; i++)
      got[i] = tc->dtype == H5FZ_DTYPE_F32 ? (double)((float *)buf)[i] : ((double *)buf)[i];
    hsize_t grid_n = 1;
    for (int k = 0; k < tc->rank; k++) grid_n *= (tc->dims[k] + tc->chunk[k] - 1) / tc->chunk[k];
    double *bounds = calloc((size_t)grid_n, sizeof *bounds);
    if (chunk_bounds(tc, d, bounds, (size_t)grid_n) == 0) {
      check_bounds(tc, bounds, (size_t)grid_n);
      check_values(tc, want, got, n, bounds);
    }
    hsize_t stored = H5Dget_storage_size(d);
    FT_CHECK(stored > 0 && (tc->no_gain || stored < n * esz), "%s: stored %llu bytes, raw %zu", tc->name,
             (unsigned long long)stored, n * esz);
    printf("%s: stored %llu of %zu raw bytes (ratio %.2f)\n", tc->name, (unsigned long long)stored, n * esz,
           stored ? (double)(n * esz) / (double)stored : 0.0);
    free(bounds);
    free(got);
  }
  free(buf);
  H5Dclose(d);
  H5Fclose(f);
}

int main(void)
{
  if (ft_begin("filter_roundtrip") < 0) return ft_finish();
  for (size_t k = 0; k < sizeof CASES / sizeof CASES[0]; k++) {
    const rt_case *tc = &CASES[k];
    size_t n = n_elems(tc->rank, tc->dims);
    double *want = malloc(n * sizeof *want);
    make_data(tc, n, want);
    if (write_case(tc, want, n) == 0) read_and_check(tc, want, n);
    free(want);
  }
  return ft_finish();
}
