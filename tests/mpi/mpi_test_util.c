/*
 * mpi_test_util.c - helpers of the MPI tests (mpi_test_util.h).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h5fz.h"
#include "mpi_test_util.h"

int mt_rank, mt_size, mt_failures;

void mt_fail(const char *file, int line, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "FAIL rank %d %s:%d: ", mt_rank, file, line);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  mt_failures++;
}

void mt_begin(int *argc, char ***argv)
{
  MPI_Init(argc, argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &mt_size);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  if (H5Zfilter_avail(H5FZ_FILTER_ID) <= 0) {
    fprintf(stderr, "rank %d: the h5fz plugin is not on HDF5_PLUGIN_PATH\n", mt_rank);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
}

int mt_finish(const char *name)
{
  int total = 0;
  MPI_Allreduce(&mt_failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (mt_rank == 0) printf("%s: %s (%d ranks, %d failed checks)\n", name, total ? "FAILED" : "OK", mt_size, total);
  MPI_Finalize();
  return total ? 1 : 0;
}

void mt_field(float **f32, double **f64, size_t *n)
{
  FILE *f = fopen(H5FZ_EMBEDDED_FIELD, "rb");
  *n = 50u * 100u * 100u;
  *f32 = malloc(*n * sizeof **f32);
  *f64 = malloc(*n * sizeof **f64);
  if (!f || !*f32 || !*f64 || fread(*f32, sizeof **f32, *n, f) != *n) {
    fprintf(stderr, "cannot read %s\n", H5FZ_EMBEDDED_FIELD);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  fclose(f);
  /* float64: the field plus a smooth term, so its values use the extra precision */
  for (size_t i = 0; i < *n; i++) (*f64)[i] = (double)(*f32)[i] + 1e-3 * sin(1e-4 * (double)i);
}

void mt_slab(int r, int n, hsize_t rows, hsize_t *lo, hsize_t *cnt)
{
  hsize_t a = rows * (hsize_t)r / (hsize_t)n, b = rows * (hsize_t)(r + 1) / (hsize_t)n;
  *lo = a;
  *cnt = b - a;
}

void mt_chunk_slab(int r, int n, hsize_t rows, hsize_t chunk, hsize_t *lo, hsize_t *cnt)
{
  hsize_t chunks = (rows + chunk - 1) / chunk, a, c;
  mt_slab(r, n, chunks, &a, &c);
  *lo = a * chunk;
  hsize_t end = (a + c) * chunk;
  *cnt = (end > rows ? rows : end) - *lo;
  if (!c) *cnt = 0;
}

hid_t mt_fapl_mpio(void)
{
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
  if (getenv("H5FZ_TEST_COLL_METADATA")) { /* collective metadata reads and writes, as tuned codes set them */
    H5Pset_all_coll_metadata_ops(fapl, 1);
    H5Pset_coll_metadata_write(fapl, 1);
  }
  return fapl;
}

hid_t mt_dxpl_collective(void)
{
  hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
  H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE);
  return dxpl;
}

hid_t mt_dcpl(int rank, const hsize_t *chunk, const char *spec_text)
{
  h5fz_spec spec;
  unsigned cd[H5FZ_CD_MAX];
  size_t n = 0;
  if (h5fz_spec_parse(spec_text, &spec) || h5fz_spec_to_cd_values(&spec, 0, cd, H5FZ_CD_MAX, &n)) {
    fprintf(stderr, "bad spec %s: %s\n", spec_text, h5fz_last_error());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(dcpl, rank, chunk);
  H5Pset_filter(dcpl, H5FZ_FILTER_ID, H5Z_FLAG_MANDATORY, n, cd);
  return dcpl;
}

static double at(const void *v, int f64, size_t i)
{
  return f64 ? ((const double *)v)[i] : (double)((const float *)v)[i];
}

/* Row-major index of chunk coordinates of element coords c. */
static size_t chunk_of(int rank, const hsize_t *dims, const hsize_t *chunk, const hsize_t *c)
{
  size_t idx = 0;
  for (int d = 0; d < rank; d++) idx = idx * ((dims[d] + chunk[d] - 1) / chunk[d]) + c[d] / chunk[d];
  return idx;
}

/* Visit every element of the box start/count: coords in c, linear index in
 * the whole array and in the box. */
#define FOR_BOX(rank, dims, start, count, c, lin, k)                                                                   \
  for (size_t k = 0, total_ = box_elems(rank, count), lin = 0; k < total_; k++)                                        \
    if ((box_coords(rank, start, count, k, c), lin = linear(rank, dims, c), 1))

static size_t box_elems(int rank, const hsize_t *count)
{
  size_t n = 1;
  for (int d = 0; d < rank; d++) n *= count[d];
  return n;
}

static void box_coords(int rank, const hsize_t *start, const hsize_t *count, size_t k, hsize_t *c)
{
  for (int d = rank; d-- > 0;) {
    c[d] = start[d] + k % count[d];
    k /= count[d];
  }
}

static size_t linear(int rank, const hsize_t *dims, const hsize_t *c)
{
  size_t lin = 0;
  for (int d = 0; d < rank; d++) lin = lin * dims[d] + c[d];
  return lin;
}

size_t mt_check_box(const void *orig, const void *back, int f64, int rank, const hsize_t *dims, const hsize_t *chunk,
                    const hsize_t *start, const hsize_t *count, mt_mode mode, double bound, const char *what)
{
  size_t n_chunks = 1, bad = 0;
  hsize_t c[8], all0[8] = {0};
  for (int d = 0; d < rank; d++) n_chunks *= (dims[d] + chunk[d] - 1) / chunk[d];
  double *lo = malloc(n_chunks * sizeof *lo), *hi = malloc(n_chunks * sizeof *hi);
  for (size_t i = 0; i < n_chunks; i++) {
    lo[i] = INFINITY;
    hi[i] = -INFINITY;
  }
  FOR_BOX(rank, dims, all0, dims, c, lin, k)
  {
    double v = at(orig, f64, lin);
    size_t ci = chunk_of(rank, dims, chunk, c);
    if (isfinite(v)) {
      if (v < lo[ci]) lo[ci] = v;
      if (v > hi[ci]) hi[ci] = v;
    }
  }
  FOR_BOX(rank, dims, start, count, c, lin, k)
  {
    double x = at(orig, f64, lin), y = at(back, f64, k);
    double b = mode == MT_ABS   ? bound
               : mode == MT_REL ? bound * (hi[chunk_of(rank, dims, chunk, c)] - lo[chunk_of(rank, dims, chunk, c)])
                                : bound * fabs(x);
    int ok = isnan(x) ? isnan(y) : fabs(x - y) <= b;
    if (!ok && !bad++)
      mt_fail(__FILE__, __LINE__, "%s: element %zu is %.9g, read back %.9g, bound %.3g", what, lin, x, y, b);
  }
  free(lo);
  free(hi);
  return bad;
}

void mt_serial_reference(const char *path, const char *ref_path, const char *name, int f64, int rank,
                         const hsize_t *dims, const hsize_t *chunk, const char *spec, const void *data)
{
  if (mt_rank) return;
  hid_t type = f64 ? H5T_NATIVE_DOUBLE : H5T_NATIVE_FLOAT;
  hid_t files[2];
  const char *paths[2] = {path, ref_path};
  for (int i = 0; i < 2; i++) {
    H5E_BEGIN_TRY { files[i] = H5Fopen(paths[i], H5F_ACC_RDWR, H5P_DEFAULT); }
    H5E_END_TRY;
    if (files[i] < 0) files[i] = H5Fcreate(paths[i], H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  }
  hid_t space = H5Screate_simple(rank, dims, NULL), dcpl = mt_dcpl(rank, chunk, spec);
  hid_t d = H5Dcreate2(files[0], name, type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  MT_CHECK(d >= 0 && H5Dwrite(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) >= 0, "serial write of %s", name);
  H5Dclose(d);
  d = H5Dcreate2(files[1], name, type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  MT_CHECK(d >= 0 && H5Dwrite(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) >= 0, "reference copy of %s", name);
  H5Dclose(d);
  H5Pclose(dcpl);
  H5Sclose(space);
  H5Fclose(files[0]);
  H5Fclose(files[1]);
}

size_t mt_compare_chunks(const char *a, const char *b, const char *name, const char *what)
{
  if (mt_rank) return 0;
  hid_t fa = H5Fopen(a, H5F_ACC_RDONLY, H5P_DEFAULT), fb = H5Fopen(b, H5F_ACC_RDONLY, H5P_DEFAULT);
  hid_t da = fa < 0 ? -1 : H5Dopen2(fa, name, H5P_DEFAULT), db = fb < 0 ? -1 : H5Dopen2(fb, name, H5P_DEFAULT);
  size_t bad = 0;
  if (da < 0 || db < 0) {
    mt_fail(__FILE__, __LINE__, "%s: cannot open %s in %s and %s", what, name, a, b);
    bad = 1;
    goto out;
  }
  hid_t space = H5Dget_space(da), dcpl = H5Dget_create_plist(da);
  hsize_t dims[8], chunk[8], c[8], zero[8] = {0}, grid[8];
  int rank = H5Sget_simple_extent_dims(space, dims, NULL);
  H5Pget_chunk(dcpl, rank, chunk);
  for (int d = 0; d < rank; d++) grid[d] = (dims[d] + chunk[d] - 1) / chunk[d];
  size_t n = 0;
  FOR_BOX(rank, grid, zero, grid, c, lin, k)
  {
    (void)lin;
    hsize_t off[8], sa = 0, sb = 0;
    for (int d = 0; d < rank; d++) off[d] = c[d] * chunk[d];
    H5Dget_chunk_storage_size(da, off, &sa);
    H5Dget_chunk_storage_size(db, off, &sb);
    n++;
    if (!sa || sa != sb) {
      if (!bad++)
        mt_fail(__FILE__, __LINE__, "%s: chunk %zu stored %llu bytes here, %llu in the serial write", what, k,
                (unsigned long long)sa, (unsigned long long)sb);
      continue;
    }
    unsigned char *ba = malloc(sa), *bb = malloc(sb);
    uint32_t ma = 0, mb = 0;
    int same = H5Dread_chunk(da, H5P_DEFAULT, off, &ma, ba) >= 0 && H5Dread_chunk(db, H5P_DEFAULT, off, &mb, bb) >= 0 &&
               ma == 0 && mb == 0 && !memcmp(ba, bb, sa);
    if (!same && !bad++) mt_fail(__FILE__, __LINE__, "%s: chunk %zu differs from the serial write's", what, k);
    free(ba);
    free(bb);
  }
  if (!bad) printf("  %s: %zu chunks byte-identical to a serial write\n", what, n);
  H5Sclose(space);
  H5Pclose(dcpl);
out:
  if (da >= 0) H5Dclose(da);
  if (db >= 0) H5Dclose(db);
  if (fa >= 0) H5Fclose(fa);
  if (fb >= 0) H5Fclose(fb);
  return bad;
}

void mt_manifest(const char *manifest, const char *file, const char *name, mt_mode mode, double bound,
                 const char *ref_path)
{
  if (mt_rank) return;
  static const char *const modes[] = {"abs", "rel", "pw_rel"};
  FILE *f = fopen(manifest, "a");
  if (!f) {
    mt_fail(__FILE__, __LINE__, "cannot append to %s", manifest);
    return;
  }
  fprintf(f, "%s %s %s %.17g %s\n", file, name, modes[mode], bound, ref_path);
  fclose(f);
}
