/*
 * h5fz_dataset_attrs.c - the per-chunk tables of a dataset write and the
 * attributes made of them (h5fz_dataset_attrs.h, docs/dataset_api.md).
 * The attributes are for people and tools; reading never depends on them.
 */
#include <stdlib.h>
#include <string.h>

#include "h5fz_dataset_attrs.h"
#include "h5fz_error.h"

int h5fz_attr_tables_init(h5fz_attr_tables *t, const h5fz_dataset_info *di)
{
  memset(t, 0, sizeof *t);
  t->di = di;
  t->n_chunks = h5fz_array_chunks(&di->g);
  t->abs_bound = calloc(t->n_chunks + 1, sizeof *t->abs_bound);
  t->outliers = calloc(t->n_chunks + 1, sizeof *t->outliers);
  if (!t->abs_bound || !t->outliers) return h5fz_fail(H5FZ_ERR_NOMEM, "per-chunk tables");
  return H5FZ_OK;
}

void h5fz_attr_tables_free(h5fz_attr_tables *t)
{
  free(t->abs_bound);
  free(t->outliers);
  free(t->opos);
  free(t->oval);
  memset(t, 0, sizeof *t);
}

/* The outliers of one chunk into the lists, as dataset element indices. */
static int list_outliers(h5fz_attr_tables *t, const h5fz_encoded_chunk *c, const hsize_t *origin)
{
  const h5fz_array_geom *g = &t->di->g;
  size_t esize = h5fz_dtype_size(t->di->dtype), n = 0;
  uint32_t cnt = c->info.n_outliers;
  if (t->lists_full || t->n_listed + cnt > H5FZ_ATTR_MAX_OUTLIERS) {
    t->lists_full = 1;
    return H5FZ_OK;
  }
  if (!t->opos) { /* the lists exist from the first outlier on */
    t->opos = malloc(((size_t)H5FZ_ATTR_MAX_OUTLIERS) * 8u);
    t->oval = malloc(((size_t)H5FZ_ATTR_MAX_OUTLIERS) * esize);
    if (!t->opos || !t->oval) return h5fz_fail(H5FZ_ERR_NOMEM, "outlier lists");
  }
  uint32_t *pos = malloc((cnt + 1u) * 4u);
  uint8_t *vals = malloc((cnt + 1u) * esize);
  int rc = pos && vals ? h5fz_chunk_outliers(c->container, c->bytes, pos, vals, cnt, &n)
                       : h5fz_fail(H5FZ_ERR_NOMEM, "outlier lists");
  for (size_t i = 0; !rc && i < n && i < cnt; i++) {
    uint64_t local = pos[i], lin = 0;
    int inside = 1;
    uint64_t coord[H5FZ_ARRAY_MAX_RANK];
    for (uint32_t d = g->rank; d-- > 0;) {
      coord[d] = origin[d] + local % g->chunk[d];
      local /= g->chunk[d];
      if (coord[d] >= g->dims[d]) inside = 0;
    }
    if (!inside) continue; /* padding of an edge chunk */
    for (uint32_t d = 0; d < g->rank; d++) lin = lin * g->dims[d] + coord[d];
    t->opos[t->n_listed] = lin;
    memcpy(t->oval + t->n_listed * esize, vals + i * esize, esize);
    t->n_listed++;
  }
  free(pos);
  free(vals);
  return rc;
}

int h5fz_attr_tables_add(h5fz_attr_tables *t, const h5fz_encoded_chunk *c, uint64_t global_index, const hsize_t *origin)
{
  t->rep.n_chunks++;
  t->rep.stored_bytes += c->bytes;
  t->rep.chunk_bytes += c->info.input_bytes;
  t->rep.n_outliers += c->info.n_outliers;
  t->rep.n_raw_chunks += c->info.stored_raw ? 1u : 0u;
  t->abs_bound[global_index] = c->info.abs_bound;
  t->outliers[global_index] = c->info.n_outliers;
  return c->info.n_outliers ? list_outliers(t, c, origin) : H5FZ_OK;
}

#define SCALAR ((hsize_t)-1)

/* Replace attribute name of dset with n values of type (n = SCALAR: a
 * scalar; 0: an empty list, null dataspace). 0 or -1 (HDF5 error, stack
 * kept). */
static int put_attr(hid_t dset, const char *name, hid_t type, hsize_t n, const void *buf)
{
  if (H5Aexists(dset, name) > 0 && H5Adelete(dset, name) < 0) return -1;
  hid_t space = n == SCALAR ? H5Screate(H5S_SCALAR) : n ? H5Screate_simple(1, &n, NULL) : H5Screate(H5S_NULL);
  hid_t a = space < 0 ? -1 : H5Acreate2(dset, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
  int ok = a >= 0 && (n == 0 || H5Awrite(a, type, buf) >= 0);
  if (a >= 0) H5Aclose(a);
  if (space >= 0) H5Sclose(space);
  return ok ? 0 : -1;
}

/* Remove attribute name from dset if it is there (errors silenced). */
static void drop_attr(hid_t dset, const char *name)
{
  H5E_BEGIN_TRY
  {
    if (H5Aexists(dset, name) > 0) H5Adelete(dset, name);
  }
  H5E_END_TRY;
}

static int put_string(hid_t dset, const char *name, const char *value)
{
  hid_t t = H5Tcopy(H5T_C_S1);
  if (t < 0 || H5Tset_size(t, strlen(value) + 1) < 0) return -1;
  int rc = put_attr(dset, name, t, SCALAR, value);
  H5Tclose(t);
  return rc;
}

int h5fz_attr_tables_write(hid_t dset, const h5fz_attr_tables *t)
{
  const h5fz_dataset_info *di = t->di;
  char text[512];
  h5fz_spec stored = di->spec;
  stored.big_endian = di->big_endian; /* as the pipeline's cd_values say */
  h5fz_spec_format(&stored, text, sizeof text);
  double ratio = t->rep.stored_bytes ? (double)t->rep.input_bytes / (double)t->rep.stored_bytes : 0.0;
  uint64_t omitted = t->rep.n_outliers;
  const char *mode = h5fz_mode_name((unsigned)di->spec.mode); /* a validated spec's: never NULL */
  int bad = put_string(dset, "h5fz_version", h5fz_version()) || put_string(dset, "h5fz_spec", text) ||
            put_string(dset, "h5fz_mode", mode ? mode : "unknown") ||
            put_attr(dset, "h5fz_bound", H5T_NATIVE_DOUBLE, SCALAR, &di->spec.bound) ||
            put_string(dset, "h5fz_kernel_class", t->rep.kernel_class) ||
            put_string(dset, "h5fz_plan_digest", t->rep.plan_digest) ||
            put_attr(dset, "h5fz_ratio", H5T_NATIVE_DOUBLE, SCALAR, &ratio) ||
            put_attr(dset, "h5fz_stored_bytes", H5T_NATIVE_UINT64, SCALAR, &t->rep.stored_bytes);
  if (bad) return h5fz_fail(H5FZ_ERR_HDF5, "cannot write the h5fz attributes");
  /* the per-chunk and outlier arrays may exceed compact attribute storage
   * (64 KiB) on datasets not made by h5fz_dataset_create: then left out */
  int lists = 0;
  H5E_BEGIN_TRY
  {
    int per_chunk = !put_attr(dset, "h5fz_chunk_abs_bound", H5T_NATIVE_DOUBLE, t->n_chunks, t->abs_bound) &&
                    !put_attr(dset, "h5fz_chunk_outliers", H5T_NATIVE_UINT32, t->n_chunks, t->outliers);
    drop_attr(dset, "h5fz_chunk_lists_omitted");
    if (!per_chunk) {
      uint64_t nc = t->n_chunks;
      drop_attr(dset, "h5fz_chunk_abs_bound");
      drop_attr(dset, "h5fz_chunk_outliers");
      put_attr(dset, "h5fz_chunk_lists_omitted", H5T_NATIVE_UINT64, SCALAR, &nc);
    }
    if (!t->lists_full)
      lists = !put_attr(dset, "h5fz_outlier_positions", H5T_NATIVE_UINT64, t->n_listed, t->opos) &&
              !put_attr(dset, "h5fz_outlier_values", di->mem_type, t->n_listed, t->oval);
    drop_attr(dset, "h5fz_outliers_omitted");
  }
  H5E_END_TRY;
  if (!lists) {
    drop_attr(dset, "h5fz_outlier_positions");
    drop_attr(dset, "h5fz_outlier_values");
    if (put_attr(dset, "h5fz_outliers_omitted", H5T_NATIVE_UINT64, SCALAR, &omitted))
      return h5fz_fail(H5FZ_ERR_HDF5, "cannot write h5fz_outliers_omitted");
  }
  return H5FZ_OK;
}
