/*
 * compress_check.c - every element of a compressed dataset against the
 * bound (compress_check.h).
 */
#include "compress_check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* One pass over the rows of the slowest dimension, a slab at a time. */
typedef struct {
  hid_t in, out; /* datasets */
  hsize_t dims[H5S_MAX_RANK];
  int rank;
  size_t row; /* elements of one index of the slowest dimension */
  hsize_t rows_per_slab;
  double *a, *b; /* the slab of each, as doubles */
} slab_reader;

static int reader_open(slab_reader *r, hid_t in_file, hid_t out_file, const char *path)
{
  hid_t space;
  memset(r, 0, sizeof *r);
  r->in = r->out = -1;
  r->in = H5Dopen2(in_file, path, H5P_DEFAULT);
  r->out = H5Dopen2(out_file, path, H5P_DEFAULT);
  if (r->in < 0 || r->out < 0) return -1;
  space = H5Dget_space(r->in);
  r->rank = H5Sget_simple_extent_ndims(space);
  H5Sget_simple_extent_dims(space, r->dims, NULL);
  H5Sclose(space);
  if (r->rank < 1) return -1;
  r->row = 1;
  for (int i = 1; i < r->rank; i++) r->row *= r->dims[i];
  /* about 8 MiB of doubles per file and slab, at least one row */
  r->rows_per_slab = r->row ? (hsize_t)((1u << 20) / r->row) : 1;
  if (r->rows_per_slab == 0) r->rows_per_slab = 1;
  r->a = malloc(r->rows_per_slab * r->row * sizeof *r->a + 1);
  r->b = malloc(r->rows_per_slab * r->row * sizeof *r->b + 1);
  return r->a && r->b ? 0 : -1;
}

static void reader_close(slab_reader *r)
{
  free(r->a);
  free(r->b);
  if (r->in >= 0) H5Dclose(r->in);
  if (r->out >= 0) H5Dclose(r->out);
}

/* Reads rows [z, z + *n) of one dataset (or both when b is wanted). */
static int read_slab(slab_reader *r, hsize_t z, hsize_t *n, int both)
{
  hsize_t start[H5S_MAX_RANK] = {0}, count[H5S_MAX_RANK];
  hid_t fs, ms;
  int bad;
  *n = r->dims[0] - z < r->rows_per_slab ? r->dims[0] - z : r->rows_per_slab;
  count[0] = *n;
  for (int i = 1; i < r->rank; i++) count[i] = r->dims[i];
  start[0] = z;
  fs = H5Dget_space(r->in);
  ms = H5Screate_simple(r->rank, count, NULL);
  bad = H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL) < 0 ||
        H5Dread(r->in, H5T_NATIVE_DOUBLE, ms, fs, H5P_DEFAULT, r->a) < 0 ||
        (both && H5Dread(r->out, H5T_NATIVE_DOUBLE, ms, fs, H5P_DEFAULT, r->b) < 0);
  H5Sclose(ms);
  H5Sclose(fs);
  return bad ? -1 : 0;
}

typedef struct {
  int have_fill;
  double fill;
} fill_info;

static fill_info dataset_fill(hid_t dset)
{
  fill_info f = {0, 0.0};
  hid_t dcpl = H5Dget_create_plist(dset);
  H5D_fill_value_t status;
  if (dcpl >= 0 && H5Pfill_value_defined(dcpl, &status) >= 0 && status != H5D_FILL_VALUE_UNDEFINED &&
      H5Pget_fill_value(dcpl, H5T_NATIVE_DOUBLE, &f.fill) >= 0)
    f.have_fill = 1;
  if (dcpl >= 0) H5Pclose(dcpl);
  return f;
}

/* The finite range of the original, fill values left out (REL). */
static int finite_range(slab_reader *r, const fill_info *f, double *range)
{
  double lo = INFINITY, hi = -INFINITY;
  for (hsize_t z = 0, n; z < r->dims[0]; z += n) {
    if (read_slab(r, z, &n, 0) < 0) return -1;
    for (size_t i = 0; i < n * r->row; i++) {
      double v = r->a[i];
      if (!isfinite(v) || (f->have_fill && v == f->fill)) continue;
      if (v < lo) lo = v;
      if (v > hi) hi = v;
    }
  }
  *range = hi >= lo ? hi - lo : 0.0;
  return 0;
}

/* The error of one element against the mode's rule (h5fz_element_error,
 * the mode table's, as `h5fz verify` measures it), and h5fz's own promise
 * on top: the dataset's fill value comes back exactly (it escapes the
 * quantizer, so edge-chunk padding stays fill); INFINITY when a rule with no
 * tolerance is broken. */
static double element_error(double a, double b, h5fz_mode mode, const fill_info *f)
{
  if (f->have_fill && a == f->fill) return memcmp(&a, &b, sizeof a) ? INFINITY : 0.0;
  return h5fz_element_error((unsigned)mode, a, b);
}

typedef struct {
  unsigned long long chunks, unfiltered;
} mask_count;

static int count_chunk(const h5fz_cli_chunk *c, void *data)
{
  mask_count *m = data;
  if (c->error) return 0;
  m->chunks++;
  if (c->filter_mask & 1u) m->unfiltered++; /* h5fz is the only filter: bit 0 */
  return 0;
}

int h5fz_compress_check(hid_t in, hid_t out, const h5fz_spec *spec, h5fz_compress_item *it)
{
  slab_reader r;
  fill_info f;
  mask_count m = {0, 0};
  hsize_t n_chunks = 0;
  double worst = 0.0, range = 0.0;
  int rc = -1;
  char why[400];
  it->checked = 1;
  it->ok = 0;
  if (reader_open(&r, in, out, it->path) < 0) {
    snprintf(it->problem, sizeof it->problem, "cannot open it for the check: %s",
             h5fz_cli_hdf5_reason(why, sizeof why));
    goto done;
  }
  f = dataset_fill(r.in);
  h5fz_mode_info mode;
  if (h5fz_mode_get((unsigned)spec->mode, &mode) != H5FZ_OK) {
    snprintf(it->problem, sizeof it->problem, "%s", h5fz_last_error());
    goto done;
  }
  if (mode.range_relative && finite_range(&r, &f, &range) < 0) {
    snprintf(it->problem, sizeof it->problem, "cannot read the original: %s", h5fz_cli_hdf5_reason(why, sizeof why));
    goto done;
  }
  it->bound = mode.range_relative ? spec->bound * range : spec->bound;
  for (hsize_t z = 0, n; z < r.dims[0]; z += n) {
    if (read_slab(&r, z, &n, 1) < 0) {
      snprintf(it->problem, sizeof it->problem, "cannot read rows %llu.. back: %s", (unsigned long long)z,
               h5fz_cli_hdf5_reason(why, sizeof why));
      goto done;
    }
    for (size_t i = 0; i < n * r.row; i++) {
      double e = element_error(r.a[i], r.b[i], spec->mode, &f);
      if (e > worst) worst = e;
      if (!(e <= it->bound) && !it->problem[0])
        snprintf(it->problem, sizeof it->problem, "element %llu: %.17g came back as %.17g (error %.3g, bound %.3g)",
                 (unsigned long long)(z * r.row + i), r.a[i], r.b[i], e, it->bound);
    }
  }
  it->max_err = worst;
  if (h5fz_cli_walk_chunks(r.out, 0, count_chunk, &m, &n_chunks) < 0) {
    snprintf(it->problem, sizeof it->problem, "cannot list its chunks");
    goto done;
  }
  it->chunks = m.chunks;
  it->unfiltered_chunks = m.unfiltered;
  if (m.unfiltered && !it->problem[0])
    snprintf(it->problem, sizeof it->problem, "%llu of %llu chunks were stored without h5fz", m.unfiltered, m.chunks);
  it->ok = !it->problem[0];
  rc = 0;
done:
  reader_close(&r);
  return rc;
}
