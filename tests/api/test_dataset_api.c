/*
 * test_dataset_api.c - the dataset-level API against the filter path.
 *
 *   test_dataset_api small              embedded field (tests/data), every case
 *   test_dataset_api big DATA_DIR FILE  a >= 64 MiB array of tiled real fields
 *                                       (exit 77 when DATA_DIR lacks them);
 *                                       FILE is kept for h5py and h5dump
 *
 * Each case writes the same array through h5fz_dataset_write (dataset
 * "<case>_api") and through plain H5Dwrite with the filter ("<case>_filter"),
 * then checks (also for big-endian datasets): every stored chunk is byte-identical; h5fz_dataset_read and
 * H5Dread both give every element within the bound (NaN/Inf bit-exact); the
 * attributes agree with the report and with the chunks. H5FZ_DEVICE picks the
 * executor as everywhere (on a GPU machine the API runs its batches there).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "filter_test_util.h"
#include "h5fz_dataset.h"

typedef struct {
  const char *name;
  const char *spec; /* text spec (bound as a fraction of the range when rel_to_range) */
  int f64;
  int rank;
  hsize_t dims[4], chunk[4];
  int inject_specials; /* NaN, Inf, -0.0 and huge values at known places */
  int user_fill;       /* 1: fill value -999 (REL edge chunks); 2: -999 with fill time NEVER
                              (HDF5 pads with 0); 3: a signalling NaN (exact bits) */
  int big_endian;      /* the datasets' type is H5T_IEEE_F*BE (created with H5Dcreate2;
                              the caller's values stay native) */
} api_case;

static void *read_file(const char *path, size_t *bytes)
{
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  void *buf = malloc((size_t)n);
  if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  *bytes = (size_t)n;
  return buf;
}

static size_t elems(const api_case *c)
{
  size_t n = 1;
  for (int d = 0; d < c->rank; d++) n *= c->dims[d];
  return n;
}

static double value_at(const void *v, int f64, size_t i)
{
  return f64 ? ((const double *)v)[i] : ((const float *)v)[i];
}

/* The absolute bound of element i under spec (abs/pw_rel/lossless; rel is
 * per chunk and checked through the chunk's stored bound). */
static int within(double x, double y, const h5fz_spec *s, double eb_abs, int f64)
{
  if (isnan(x) || isinf(x) || s->mode == H5FZ_MODE_LOSSLESS) {
    return f64 ? memcmp(&x, &y, 8) == 0 : (isnan(x) ? isnan(y) : x == y);
  }
  if (s->mode == H5FZ_MODE_PW_REL) return fabs(x - y) <= s->bound * fabs(x) && (signbit(x) == signbit(y));
  return fabs(x - y) <= eb_abs;
}

static int same_bits(const void *a, const void *b, size_t i, int f64)
{
  return f64 ? memcmp((const double *)a + i, (const double *)b + i, 8) == 0
             : memcmp((const float *)a + i, (const float *)b + i, 4) == 0;
}

/* Check every element of got against want. REL: the bound of the element's
 * chunk, from the attribute h5fz_chunk_abs_bound. */
static void check_values(const api_case *c, const char *what, const void *want, const void *got, const h5fz_spec *s,
                         const double *chunk_eb)
{
  size_t n = elems(c), bad = 0, first_bad = 0;
  for (size_t i = 0; i < n; i++) {
    double x = value_at(want, c->f64, i), y = value_at(got, c->f64, i);
    double eb = s->bound;
    if (s->mode == H5FZ_MODE_REL) {
      size_t rest = i, chunk_index = 0, mul = 1;
      size_t coord[4];
      for (int d = c->rank; d-- > 0;) {
        coord[d] = rest % c->dims[d];
        rest /= c->dims[d];
      }
      for (int d = c->rank; d-- > 0;) {
        size_t grid = (c->dims[d] + c->chunk[d] - 1) / c->chunk[d];
        chunk_index += coord[d] / c->chunk[d] * mul;
        mul *= grid;
      }
      eb = chunk_eb[chunk_index];
    }
    int ok = within(x, y, s, eb, c->f64) || (isnan(x) && same_bits(want, got, i, c->f64));
    if (!ok && !bad++) first_bad = i;
  }
  FT_CHECK(bad == 0, "%s %s: %zu of %zu elements break the bound (first at %zu: %.9g -> %.9g)", c->name, what, bad, n,
           first_bad, value_at(want, c->f64, first_bad), value_at(got, c->f64, first_bad));
}

static void compare_chunks(hid_t a, hid_t b, const api_case *c)
{
  size_t grid[4], n_chunks = 1;
  for (int d = 0; d < c->rank; d++) {
    grid[d] = (c->dims[d] + c->chunk[d] - 1) / c->chunk[d];
    n_chunks *= grid[d];
  }
  size_t differ = 0;
  for (size_t k = 0; k < n_chunks; k++) {
    hsize_t off[4];
    size_t rest = k;
    for (int d = c->rank; d-- > 0;) {
      off[d] = rest % grid[d] * c->chunk[d];
      rest /= grid[d];
    }
    hsize_t sa = 0, sb = 0;
    uint32_t ma = 1, mb = 1;
    H5Dget_chunk_storage_size(a, off, &sa);
    H5Dget_chunk_storage_size(b, off, &sb);
    if (sa != sb || !sa) {
      if (!differ++)
        FT_CHECK(0, "%s: chunk %zu: %llu bytes via the API, %llu via the filter", c->name, k, (unsigned long long)sa,
                 (unsigned long long)sb);
      continue;
    }
    uint8_t *ba = malloc(sa), *bb = malloc(sb);
    FT_CHECK(H5Dread_chunk(a, H5P_DEFAULT, off, &ma, ba) >= 0 && H5Dread_chunk(b, H5P_DEFAULT, off, &mb, bb) >= 0,
             "%s: H5Dread_chunk", c->name);
    if (memcmp(ba, bb, sa) || ma || mb) {
      if (!differ++) FT_CHECK(0, "%s: chunk %zu differs (%llu bytes)", c->name, k, (unsigned long long)sa);
    }
    free(ba);
    free(bb);
  }
  FT_CHECK(differ == 0, "%s: %zu of %zu chunks differ between the API and the filter", c->name, differ, n_chunks);
  printf("  %s: %zu chunks byte-identical (API vs filter)\n", c->name, n_chunks - differ);
}

/* Attributes: present, consistent with the report. Returns the per-chunk
 * absolute bounds (malloc'd). */
static double *check_attributes(hid_t d, const api_case *c, const h5fz_dataset_report *rep, const void *data)
{
  const char *scalars[] = {"h5fz_version",         "h5fz_spec",          "h5fz_mode",  "h5fz_bound",
                           "h5fz_kernel_class",    "h5fz_plan_digest",   "h5fz_ratio", "h5fz_stored_bytes",
                           "h5fz_chunk_abs_bound", "h5fz_chunk_outliers"};
  for (size_t i = 0; i < sizeof scalars / sizeof *scalars; i++)
    FT_CHECK(H5Aexists(d, scalars[i]) > 0, "%s: attribute %s missing", c->name, scalars[i]);
  size_t n_chunks = rep->n_chunks;
  double *eb = calloc(n_chunks + 1, sizeof *eb);
  uint32_t *cnt = calloc(n_chunks + 1, sizeof *cnt);
  hid_t a = H5Aopen(d, "h5fz_chunk_abs_bound", H5P_DEFAULT);
  FT_CHECK(a >= 0 && H5Aread(a, H5T_NATIVE_DOUBLE, eb) >= 0, "%s: read h5fz_chunk_abs_bound", c->name);
  H5Aclose(a);
  a = H5Aopen(d, "h5fz_chunk_outliers", H5P_DEFAULT);
  FT_CHECK(a >= 0 && H5Aread(a, H5T_NATIVE_UINT32, cnt) >= 0, "%s: read h5fz_chunk_outliers", c->name);
  H5Aclose(a);
  uint64_t total = 0, stored = 0;
  for (size_t k = 0; k < n_chunks; k++) total += cnt[k];
  FT_CHECK(total == rep->n_outliers, "%s: h5fz_chunk_outliers add up to %llu, the report says %llu", c->name,
           (unsigned long long)total, (unsigned long long)rep->n_outliers);
  a = H5Aopen(d, "h5fz_stored_bytes", H5P_DEFAULT);
  H5Aread(a, H5T_NATIVE_UINT64, &stored);
  H5Aclose(a);
  FT_CHECK(stored == rep->stored_bytes && stored == H5Dget_storage_size(d),
           "%s: h5fz_stored_bytes %llu, report %llu, HDF5 storage %llu", c->name, (unsigned long long)stored,
           (unsigned long long)rep->stored_bytes, (unsigned long long)H5Dget_storage_size(d));
  /* every listed outlier is at its position with its exact value */
  if (H5Aexists(d, "h5fz_outlier_positions") > 0) {
    hid_t ap = H5Aopen(d, "h5fz_outlier_positions", H5P_DEFAULT), av = H5Aopen(d, "h5fz_outlier_values", H5P_DEFAULT);
    hid_t sp = H5Aget_space(ap);
    hssize_t n = H5Sget_simple_extent_npoints(sp);
    uint64_t *pos = malloc(((size_t)n + 1) * 8);
    uint8_t *val = malloc(((size_t)n + 1) * 8);
    FT_CHECK(H5Aread(ap, H5T_NATIVE_UINT64, pos) >= 0 &&
                 H5Aread(av, c->f64 ? H5T_NATIVE_DOUBLE : H5T_NATIVE_FLOAT, val) >= 0,
             "%s: read outlier lists", c->name);
    size_t wrong = 0;
    for (hssize_t i = 0; i < n; i++)
      if (pos[i] >= elems(c) ||
          memcmp(val + (size_t)i * (c->f64 ? 8 : 4), (const uint8_t *)data + pos[i] * (c->f64 ? 8 : 4), c->f64 ? 8 : 4))
        wrong++;
    FT_CHECK(wrong == 0, "%s: %zu of %lld listed outliers do not match the data", c->name, wrong, (long long)n);
    if (c->inject_specials) FT_CHECK(n >= 4, "%s: the injected NaN/Inf are not listed (%lld)", c->name, (long long)n);
    free(pos);
    free(val);
    H5Sclose(sp);
    H5Aclose(ap);
    H5Aclose(av);
  } else {
    FT_CHECK(H5Aexists(d, "h5fz_outliers_omitted") > 0, "%s: neither outlier lists nor h5fz_outliers_omitted", c->name);
  }
  free(cnt);
  return eb;
}

static double range_of(const void *v, size_t n, int f64)
{
  double lo = INFINITY, hi = -INFINITY;
  for (size_t i = 0; i < n; i++) {
    double x = value_at(v, f64, i);
    if (isfinite(x) && x != -999.0) {
      lo = x < lo ? x : lo;
      hi = x > hi ? x : hi;
    }
  }
  return hi > lo ? hi - lo : 1.0;
}

static void run_case(hid_t file, const api_case *c, const void *data)
{
  hid_t type = c->f64 ? H5T_NATIVE_DOUBLE : H5T_NATIVE_FLOAT;
  hid_t file_type = c->big_endian ? (c->f64 ? H5T_IEEE_F64BE : H5T_IEEE_F32BE) : type;
  char api_name[96], filter_name[96];
  snprintf(api_name, sizeof api_name, "%s_api", c->name);
  snprintf(filter_name, sizeof filter_name, "%s_filter", c->name);
  /* the dataset: h5fz_dataset_create, or a DCPL with a user fill value */
  hid_t dapi = -1;
  unsigned cd[H5FZ_CD_MAX];
  size_t n_cd = ft_cd_from_text(c->spec, cd);
  hid_t dcpl = ft_dcpl(c->rank, c->chunk, H5Z_FLAG_MANDATORY, n_cd, cd, 0);
  H5Pset_attr_phase_change(dcpl, 0, 0);
  if (c->user_fill == 1 || c->user_fill == 2) {
    double fill = -999.0;
    H5Pset_fill_value(dcpl, H5T_NATIVE_DOUBLE, &fill);
    if (c->user_fill == 2) H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER);
  } else if (c->user_fill == 3) {
    uint32_t snan = 0x7f800001u;
    H5Pset_fill_value(dcpl, H5T_NATIVE_FLOAT, &snan);
  }
  hid_t space = H5Screate_simple(c->rank, c->dims, NULL);
  if (c->user_fill || c->big_endian) {
    dapi = H5Dcreate2(file, api_name, file_type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  } else {
    int rc = h5fz_dataset_create(file, api_name, type, c->rank, c->dims, c->chunk, c->spec, &dapi);
    FT_CHECK(rc == H5FZ_OK, "%s: h5fz_dataset_create: %s", c->name, h5fz_last_error());
  }
  hid_t dfil = H5Dcreate2(file, filter_name, file_type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  FT_CHECK(dapi >= 0 && dfil >= 0, "%s: create datasets", c->name);
  h5fz_dataset_report rep;
  int rc = h5fz_dataset_write(dapi, data, H5FZ_MEM_HOST, &rep);
  FT_CHECK(rc == H5FZ_OK, "%s: h5fz_dataset_write: %s", c->name, h5fz_last_error());
  FT_CHECK(H5Dwrite(dfil, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) >= 0, "%s: H5Dwrite through the filter", c->name);
  H5Fflush(file, H5F_SCOPE_GLOBAL);
  printf("  %s: %llu chunks, ratio %.2f, %llu outliers, %llu raw chunks, executor %s (%s), %.3f s\n", c->name,
         (unsigned long long)rep.n_chunks, (double)rep.input_bytes / (double)(rep.stored_bytes ? rep.stored_bytes : 1),
         (unsigned long long)rep.n_outliers, (unsigned long long)rep.n_raw_chunks, rep.on_gpu ? "gpu" : "cpu",
         rep.kernel_class, rep.seconds);
  compare_chunks(dapi, dfil, c);
  double *chunk_eb = check_attributes(dapi, c, &rep, data);
  h5fz_spec s;
  long n = ft_dataset_cd(dapi, cd, H5FZ_CD_MAX, NULL);
  FT_CHECK(n > 0 && h5fz_spec_from_cd_values(cd, (size_t)n, &s, NULL) == H5FZ_OK, "%s: spec", c->name);
  size_t bytes = elems(c) * (c->f64 ? 8 : 4);
  void *back = malloc(bytes);
  memset(back, 0x5a, bytes);
  rc = h5fz_dataset_read(dapi, back, H5FZ_MEM_HOST, NULL);
  FT_CHECK(rc == H5FZ_OK, "%s: h5fz_dataset_read: %s", c->name, h5fz_last_error());
  check_values(c, "h5fz_dataset_read", data, back, &s, chunk_eb);
  /* reopen: the handle that wrote would serve H5Dread from HDF5's chunk
   * cache (uncompressed), and the decoder would never run */
  H5Dclose(dfil);
  dfil = H5Dopen2(file, filter_name, H5P_DEFAULT);
  memset(back, 0x5a, bytes);
  FT_CHECK(H5Dread(dfil, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, back) >= 0, "%s: H5Dread", c->name);
  check_values(c, "H5Dread of the filter's dataset", data, back, &s, chunk_eb);
  memset(back, 0x5a, bytes);
  FT_CHECK(H5Dread(dapi, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, back) >= 0, "%s: H5Dread of the API's dataset", c->name);
  check_values(c, "H5Dread of the API's dataset", data, back, &s, chunk_eb);
  free(back);
  free(chunk_eb);
  H5Dclose(dapi);
  H5Dclose(dfil);
  H5Sclose(space);
  H5Pclose(dcpl);
}

/* Edge cases beside the byte-identity: missing chunks read as fill, bad
 * datasets are refused with a reason, a corrupt chunk names itself. */
static void run_edges(hid_t file, const float *field)
{
  hsize_t dims[2] = {100, 100}, chunk[2] = {32, 48};
  hid_t d = -1;
  FT_CHECK(h5fz_dataset_create(file, "sparse", H5T_NATIVE_FLOAT, 2, dims, chunk, "abs=1e-3", &d) == H5FZ_OK,
           "create sparse: %s", h5fz_last_error());
  /* write one hyperslab through the filter: the other chunks stay unwritten */
  hsize_t start[2] = {0, 0}, count[2] = {32, 48};
  hid_t fs = H5Dget_space(d), ms = H5Screate_simple(2, count, NULL);
  H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL);
  FT_CHECK(H5Dwrite(d, H5T_NATIVE_FLOAT, ms, fs, H5P_DEFAULT, field) >= 0, "partial H5Dwrite");
  float *back = malloc(100 * 100 * 4);
  FT_CHECK(h5fz_dataset_read(d, back, H5FZ_MEM_HOST, NULL) == H5FZ_OK, "read sparse: %s", h5fz_last_error());
  size_t bad = 0;
  for (size_t y = 0; y < 100; y++)
    for (size_t x = 0; x < 100; x++) {
      float v = back[y * 100 + x];
      if (y < 32 && x < 48)
        bad += fabsf(v - field[y * 48 + x]) > 1e-3f;
      else
        bad += v != 0.0f;
    }
  FT_CHECK(bad == 0, "sparse: %zu elements wrong (unwritten chunks must read as the fill value 0)", bad);
  /* a corrupt chunk: the read fails and names it */
  hsize_t off[2] = {0, 0}, size = 0;
  uint32_t mask = 0;
  H5Dget_chunk_storage_size(d, off, &size);
  uint8_t *raw = malloc(size);
  H5Dread_chunk(d, H5P_DEFAULT, off, &mask, raw);
  raw[size / 2] ^= 0x10;
  H5Dwrite_chunk(d, H5P_DEFAULT, 0, off, size, raw);
  int rc = h5fz_dataset_read(d, back, H5FZ_MEM_HOST, NULL);
  FT_CHECK(rc == H5FZ_ERR_CHECKSUM && ft_contains(h5fz_last_error(), "chunk 0"),
           "corrupt chunk: want a checksum error naming chunk 0, got %d: %s", rc, h5fz_last_error());
  free(raw);
  H5Sclose(fs);
  H5Sclose(ms);
  H5Dclose(d);
  /* not h5fz: refused with a reason */
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(dcpl, 2, chunk);
  H5Pset_deflate(dcpl, 4);
  hid_t sp = H5Screate_simple(2, dims, NULL);
  d = H5Dcreate2(file, "deflate", H5T_NATIVE_FLOAT, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  rc = h5fz_dataset_write(d, field, H5FZ_MEM_HOST, NULL);
  FT_CHECK(rc == H5FZ_ERR_ARG && ft_contains(h5fz_last_error(), "h5fz filter"), "deflate dataset: got %d: %s", rc,
           h5fz_last_error());
  H5Dclose(d);
  H5Pclose(dcpl);
  /* an integer dataset */
  d = H5Dcreate2(file, "ints", H5T_NATIVE_INT, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  rc = h5fz_dataset_write(d, field, H5FZ_MEM_HOST, NULL);
  FT_CHECK(rc == H5FZ_ERR_ARG && ft_contains(h5fz_last_error(), "float"), "int dataset: got %d: %s", rc,
           h5fz_last_error());
  H5Dclose(d);
  H5Sclose(sp);
  /* a device pointer without a GPU is refused, never read as host memory */
  if (getenv("H5FZ_DEVICE") && !strcmp(getenv("H5FZ_DEVICE"), "cpu")) {
    FT_CHECK(h5fz_dataset_create(file, "devptr", H5T_NATIVE_FLOAT, 2, dims, chunk, "abs=1e-3", &d) == H5FZ_OK,
             "create devptr");
    rc = h5fz_dataset_write(d, (const void *)16, H5FZ_MEM_DEVICE, NULL);
    FT_CHECK(rc == H5FZ_ERR_DEVICE, "device pointer on the CPU: got %d: %s", rc, h5fz_last_error());
    H5Dclose(d);
  }
  /* well-formed containers that are not chunks of the dataset (32 x 48,
   * abs=1e-3): of half the size (HDF5 would copy the chunk's full size out of
   * a shorter buffer), of another shape (48 x 32: the values would come back
   * transposed), coded for a looser bound (abs=0.5). H5Dread and the API
   * refuse each, the API naming why. */
  static const struct {
    const char *name, *chunk_spec;
    size_t elems;
    const char *why1, *why2;
  } foreign[] = {
      {"short", "abs=1e-3 dtype=f32", 32 * 24, "holds 3072 bytes", "6144 bytes of float32"},
      {"transposed", "abs=1e-3 dtype=f32 dims=48x32", 32 * 48, "48 x 32 elements", "chunks are 32 x 48"},
      {"loose", "abs=0.5 dtype=f32 dims=32x48", 32 * 48, "chunk 0", "looser than or unlike the dataset's ABS 0.001"},
  };
  for (size_t k = 0; k < sizeof foreign / sizeof *foreign; k++) {
    hsize_t cd2[2] = {32, 48}, o2[2] = {0, 0};
    FT_CHECK(h5fz_dataset_create(file, foreign[k].name, H5T_NATIVE_FLOAT, 2, dims, cd2, "abs=1e-3", &d) == H5FZ_OK,
             "%s", foreign[k].name);
    h5fz_spec sp;
    h5fz_spec_parse(foreign[k].chunk_spec, &sp);
    void *c = NULL;
    size_t cb = 0;
    FT_CHECK(h5fz_chunk_encode(&sp, field, foreign[k].elems * 4, &c, &cb) == H5FZ_OK, "encode %s", foreign[k].name);
    H5Dwrite_chunk(d, H5P_DEFAULT, 0, o2, cb, c);
    free(c);
    H5Dclose(d);
    d = H5Dopen2(file, foreign[k].name, H5P_DEFAULT); /* no cached chunk */
    herr_t st;
    H5E_BEGIN_TRY { st = H5Dread(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, back); }
    H5E_END_TRY;
    FT_CHECK(st < 0, "%s: H5Dread must fail", foreign[k].name);
    rc = h5fz_dataset_read(d, back, H5FZ_MEM_HOST, NULL);
    FT_CHECK(rc == H5FZ_ERR_CORRUPT && ft_contains(h5fz_last_error(), foreign[k].why1) &&
                 ft_contains(h5fz_last_error(), foreign[k].why2),
             "%s: API read got %d: %s", foreign[k].name, rc, h5fz_last_error());
    H5Dclose(d);
  }
  /* containers of the other byte order (a little-endian one in a big-endian
   * dataset and the reverse): their values would read back byte-swapped */
  for (int be = 0; be < 2; be++) {
    const char *name = be ? "le_chunk_in_be" : "be_chunk_in_le";
    hsize_t cd2[2] = {32, 48}, o2[2] = {0, 0};
    unsigned cdv[H5FZ_CD_MAX];
    size_t ncd = ft_cd_from_text("abs=1e-3", cdv);
    hid_t dc = ft_dcpl(2, cd2, H5Z_FLAG_MANDATORY, ncd, cdv, 0);
    hid_t sp2 = H5Screate_simple(2, dims, NULL);
    d = H5Dcreate2(file, name, be ? H5T_IEEE_F32BE : H5T_IEEE_F32LE, sp2, H5P_DEFAULT, dc, H5P_DEFAULT);
    h5fz_spec sp;
    h5fz_spec_parse(be ? "abs=1e-3 dtype=f32 dims=32x48" : "abs=1e-3 dtype=f32 dims=32x48 order=big", &sp);
    void *c = NULL;
    size_t cb = 0;
    FT_CHECK(d >= 0 && h5fz_chunk_encode(&sp, field, 32 * 48 * 4, &c, &cb) == H5FZ_OK, "encode %s", name);
    H5Dwrite_chunk(d, H5P_DEFAULT, 0, o2, cb, c);
    free(c);
    H5Dclose(d);
    d = H5Dopen2(file, name, H5P_DEFAULT);
    herr_t st;
    H5E_BEGIN_TRY { st = H5Dread(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, back); }
    H5E_END_TRY;
    FT_CHECK(st < 0, "%s: H5Dread must fail", name);
    rc = h5fz_dataset_read(d, back, H5FZ_MEM_HOST, NULL);
    FT_CHECK(rc == H5FZ_ERR_CORRUPT && ft_contains(h5fz_last_error(), be ? "little-endian values, the dataset is big"
                                                                         : "big-endian values, the dataset is little"),
             "%s: API read got %d: %s", name, rc, h5fz_last_error());
    H5Dclose(d);
    H5Sclose(sp2);
    H5Pclose(dc);
  }
  /* partial edge chunks left unfiltered: refused */
  {
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST);
    hid_t f2 = H5Fcreate("api_partial.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    unsigned cdv[H5FZ_CD_MAX];
    size_t ncd = ft_cd_from_text("abs=1e-3", cdv);
    hid_t dc = ft_dcpl(2, chunk, H5Z_FLAG_MANDATORY, ncd, cdv, 0);
    H5Pset_chunk_opts(dc, H5D_CHUNK_DONT_FILTER_PARTIAL_CHUNKS);
    hid_t sp2 = H5Screate_simple(2, dims, NULL);
    d = H5Dcreate2(f2, "p", H5T_NATIVE_FLOAT, sp2, H5P_DEFAULT, dc, H5P_DEFAULT);
    rc = h5fz_dataset_write(d, field, H5FZ_MEM_HOST, NULL);
    FT_CHECK(rc == H5FZ_ERR_ARG && ft_contains(h5fz_last_error(), "PARTIAL"), "partial chunks unfiltered: got %d: %s",
             rc, h5fz_last_error());
    H5Dclose(d);
    H5Sclose(sp2);
    H5Pclose(dc);
    H5Fclose(f2);
    H5Pclose(fapl);
  }
  free(back);
  printf("  edges: sparse read, corrupt, short, transposed, looser and byte-swapped chunks, refusals checked\n");
}

static int run_small(void)
{
  size_t bytes = 0;
  float *field = read_file(H5FZ_EMBEDDED_FIELD, &bytes);
  if (!field || bytes != 50u * 100u * 100u * 4u) {
    fprintf(stderr, "cannot read %s\n", H5FZ_EMBEDDED_FIELD);
    return 1;
  }
  size_t n = bytes / 4;
  double range = range_of(field, n, 0);
  float *special = malloc(bytes);
  memcpy(special, field, bytes);
  special[7] = NAN;
  special[12345] = INFINITY;
  special[n - 1] = -INFINITY;
  special[99999] = -0.0f;
  special[200000] = 3.0e38f;
  uint32_t payload_nan = 0x7fc01234u;
  memcpy(&special[300001], &payload_nan, 4);
  double *f64 = malloc(n * 8);
  for (size_t i = 0; i < n; i++) f64[i] = field[i];
  char abs4[64], abs2[64], lz[96], fast[96], lnd[96];
  snprintf(abs4, sizeof abs4, "abs=%.9g", 1e-4 * range);
  snprintf(abs2, sizeof abs2, "abs=%.9g", 1e-2 * range);
  snprintf(lz, sizeof lz, "abs=%.9g quant lorenzo zigzag bitshuffle rze", 1e-4 * range);
  snprintf(lnd, sizeof lnd, "abs=%.9g quant lorenzo_nd zigzag bitshuffle rze", 1e-4 * range);
  snprintf(fast, sizeof fast, "abs=%.9g quant delta zigzag bitpack", 1e-3 * range);
  api_case cases[] = {
      {"abs4", abs4, 0, 3, {50, 100, 100}, {8, 48, 64}, 0, 0, 0},
      {"specials", abs4, 0, 3, {50, 100, 100}, {8, 48, 64}, 1, 0, 0},
      {"rel_fill", "rel=1e-3", 0, 3, {50, 100, 100}, {16, 32, 40}, 0, 1, 0},
      {"fill_never", abs4, 0, 3, {50, 100, 100}, {16, 32, 40}, 0, 2, 0},
      {"fill_snan", abs4, 0, 3, {50, 100, 100}, {16, 32, 40}, 0, 3, 0},
      {"pw_rel", "pw_rel=1e-3", 0, 3, {50, 100, 100}, {10, 100, 100}, 0, 0, 0},
      {"lossless", "lossless", 0, 3, {50, 100, 100}, {25, 50, 100}, 0, 0, 0},
      {"lorenzo", lz, 0, 3, {50, 100, 100}, {8, 48, 64}, 0, 0, 0},
      {"lorenzo_nd", lnd, 0, 3, {50, 100, 100}, {8, 48, 64}, 0, 0, 0},
      {"fast", fast, 0, 3, {50, 100, 100}, {8, 48, 64}, 0, 0, 0},
      {"f64", abs2, 1, 3, {50, 100, 100}, {7, 33, 100}, 0, 0, 0},
      {"flat1d", abs4, 0, 1, {500000}, {65536}, 0, 0, 0},
      {"rank4", abs4, 0, 4, {5, 10, 100, 100}, {2, 3, 64, 64}, 0, 0, 0},
      {"tiny_chunks", abs4, 0, 3, {50, 100, 100}, {1, 7, 9}, 0, 0, 0},
      /* big-endian datasets: the same chunks as the filter writes for them */
      {"be_specials", abs4, 0, 3, {50, 100, 100}, {8, 48, 64}, 1, 0, 1},
      {"be_rel_fill", "rel=1e-3", 0, 3, {50, 100, 100}, {16, 32, 40}, 0, 1, 1},
      {"be_f64", abs2, 1, 3, {50, 100, 100}, {7, 33, 100}, 0, 0, 1},
      {"be_lorenzo_nd", lnd, 0, 3, {50, 100, 100}, {8, 48, 64}, 0, 0, 1},
  };
  hid_t file = ft_create_file("api_small");
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    run_case(file, &cases[i], cases[i].f64 ? (void *)f64 : cases[i].inject_specials ? (void *)special : (void *)field);
  run_edges(file, field);
  H5Fclose(file);
  free(field);
  free(special);
  free(f64);
  return ft_finish();
}

/* um_sea_ice (120x215x360 float32, 37 MB) twice along time: 74 MB. */
static int run_big(const char *dir, const char *out)
{
  char path[1024];
  snprintf(path, sizeof path, "%s/um_sea_ice_northward_velocity_float32_120x215x360.f32", dir);
  size_t bytes = 0;
  float *one = read_file(path, &bytes);
  if (!one) {
    printf("SKIP: %s not found (../shared/data is absent on a fresh clone; CI has it)\n", path);
    return 77;
  }
  float *field = malloc(2 * bytes);
  memcpy(field, one, bytes);
  memcpy((uint8_t *)field + bytes, one, bytes);
  free(one);
  double range = range_of(field, bytes / 2, 0);
  char abs4[64];
  snprintf(abs4, sizeof abs4, "abs=%.9g", 1e-4 * range);
  api_case big = {"seaice_x2", abs4, 0, 3, {240, 215, 360}, {16, 64, 128}, 0, 0, 0};
  hid_t file = H5Fcreate(out, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  printf("  %s: %zu MiB of tiled real data, %s\n", big.name, (2 * bytes) >> 20, abs4);
  run_case(file, &big, field);
  H5Fclose(file);
  free(field);
  return ft_finish();
}

int main(int argc, char **argv)
{
  if (ft_begin("dataset_api")) return 1;
  if (argc >= 2 && !strcmp(argv[1], "small")) return run_small();
  if (argc >= 4 && !strcmp(argv[1], "big")) return run_big(argv[2], argv[3]);
  fprintf(stderr, "usage: test_dataset_api small | big DATA_DIR OUT.h5\n");
  return 2;
}
