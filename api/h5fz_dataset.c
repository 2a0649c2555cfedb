/*
 * h5fz_dataset.c - the dataset-level API (h5fz_dataset.h): the HDF5 side.
 * The chunks come from h5fz_array_encode (batched GPU, or the CPU
 * executor) and go to the file with H5Dwrite_chunk; reads take them with
 * H5Dread_chunk into h5fz_array_decode. The spec is the one set_local
 * stored in the dataset's pipeline, so the chunks are the filter's.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "h5fz_batch.h"
#include "h5fz_dataset.h"
#include "h5fz_error.h"

static double now_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- what a dataset is -------------------------------------------------------------- */

typedef struct {
  h5fz_spec spec; /* from the pipeline's cd_values (after set_local) */
  h5fz_array_geom g;
  h5fz_dtype dtype;
  hid_t mem_type; /* H5T_NATIVE_FLOAT / _DOUBLE (not to be closed) */
  double fill;
} dataset_info;

static int describe(hid_t dset, dataset_info *di)
{
  memset(di, 0, sizeof *di);
  /* loads the plugin, so that the caller's H5Dset_extent and H5Dwrite of
   * new chunks work after this call (h5fz_dataset_register_filter); the
   * write and read here need no plugin, so a missing one is not an error */
  (void)H5Zfilter_avail(H5FZ_FILTER_ID);
  int rc = H5FZ_OK;
  hid_t dcpl = H5Dget_create_plist(dset), type = H5Dget_type(dset), space = H5Dget_space(dset);
  if (dcpl < 0 || type < 0 || space < 0) {
    rc = h5fz_fail(H5FZ_ERR_HDF5, "not an open dataset");
    goto out;
  }
  if (H5Tget_class(type) != H5T_FLOAT || (H5Tget_size(type) != 4 && H5Tget_size(type) != 8) ||
      H5Tget_order(type) != H5T_ORDER_LE) {
    rc = h5fz_fail(H5FZ_ERR_ARG, "the dataset's type is not little-endian float32 or float64");
    goto out;
  }
  di->dtype = H5Tget_size(type) == 4 ? H5FZ_DTYPE_F32 : H5FZ_DTYPE_F64;
  di->mem_type = di->dtype == H5FZ_DTYPE_F32 ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE;
  if (H5Pget_layout(dcpl) != H5D_CHUNKED) {
    rc = h5fz_fail(H5FZ_ERR_ARG, "the dataset is not chunked");
    goto out;
  }
  int rank = H5Sget_simple_extent_ndims(space);
  hsize_t dims[H5S_MAX_RANK], chunk[H5S_MAX_RANK];
  if (rank < 1 || rank > H5FZ_ARRAY_MAX_RANK || H5Sget_simple_extent_dims(space, dims, NULL) != rank ||
      H5Pget_chunk(dcpl, rank, chunk) != rank) {
    rc = h5fz_fail(H5FZ_ERR_ARG, "dataset rank %d: the API takes ranks 1..%d", rank, H5FZ_ARRAY_MAX_RANK);
    goto out;
  }
  di->g.rank = (uint32_t)rank;
  for (int d = 0; d < rank; d++) {
    di->g.dims[d] = dims[d];
    di->g.chunk[d] = chunk[d];
  }
  int n_filters = H5Pget_nfilters(dcpl);
  unsigned flags = 0, cd[H5FZ_CD_MAX];
  size_t n_cd = H5FZ_CD_MAX;
  char name[64];
  if (n_filters != 1 || H5Pget_filter2(dcpl, 0, &flags, &n_cd, cd, sizeof name, name, NULL) != H5FZ_FILTER_ID) {
    rc = h5fz_fail(H5FZ_ERR_ARG, "the dataset's pipeline must be the h5fz filter (id %d) alone; it has %d filter(s)",
                   H5FZ_FILTER_ID, n_filters);
    goto out;
  }
  if ((rc = h5fz_spec_from_cd_values(cd, n_cd, &di->spec, NULL))) goto out;
  if (di->spec.dtype != di->dtype) {
    rc = h5fz_fail(H5FZ_ERR_SPEC, "the pipeline's cd_values lack set_local's dataset words (was the h5fz plugin "
                                  "loadable when the dataset was created? set HDF5_PLUGIN_PATH)");
    goto out;
  }
  unsigned chunk_opts = 0;
  if (H5Pget_chunk_opts(dcpl, &chunk_opts) >= 0 && (chunk_opts & H5D_CHUNK_DONT_FILTER_PARTIAL_CHUNKS)) {
    rc = h5fz_fail(H5FZ_ERR_ARG, "the dataset stores partial edge chunks unfiltered "
                                 "(H5D_CHUNK_DONT_FILTER_PARTIAL_CHUNKS); the API writes every chunk through h5fz");
    goto out;
  }
  /* Edge chunks are padded, and missing chunks read, as HDF5 does it: the
   * fill value's exact bits, or 0 when the fill time is NEVER (HDF5 then
   * zeroes the chunk buffer). */
  H5D_fill_value_t status;
  H5D_fill_time_t when = H5D_FILL_TIME_IFSET;
  di->fill = 0.0;
  di->g.exact_fill = 1;
  di->g.fill_bits = 0;
  H5Pget_fill_time(dcpl, &when);
  if (H5Pfill_value_defined(dcpl, &status) >= 0 && status != H5D_FILL_VALUE_UNDEFINED) {
    H5Pget_fill_value(dcpl, H5T_NATIVE_DOUBLE, &di->fill);
    if (when != H5D_FILL_TIME_NEVER) H5Pget_fill_value(dcpl, di->mem_type, &di->g.fill_bits);
  }
out:
  if (dcpl >= 0) H5Pclose(dcpl);
  if (type >= 0) H5Tclose(type);
  if (space >= 0) H5Sclose(space);
  return rc;
}

/* The chunk's offset as HDF5 wants it (hsize_t, which need not be uint64_t). */
static void chunk_offset(const h5fz_array_geom *g, uint64_t index, hsize_t *off)
{
  uint64_t origin[H5FZ_ARRAY_MAX_RANK];
  h5fz_array_chunk_origin(g, index, origin);
  for (uint32_t d = 0; d < g->rank; d++) off[d] = origin[d];
}

/* ---- create ------------------------------------------------------------------------- */

int h5fz_dataset_register_filter(void)
{
  if (H5Zfilter_avail(H5FZ_FILTER_ID) > 0) return H5FZ_OK;
  const char *path = getenv("HDF5_PLUGIN_PATH");
  return h5fz_fail(H5FZ_ERR_HDF5, "the h5fz filter (id %d) is not available: HDF5 found no libh5fz.so on %s%s%s",
                   H5FZ_FILTER_ID, path ? "HDF5_PLUGIN_PATH=" : "its default plugin path", path ? path : "",
                   path ? "" : " (set HDF5_PLUGIN_PATH to the plugin's folder)");
}

int h5fz_dataset_create(hid_t loc, const char *name, hid_t mem_type, int rank, const hsize_t *dims,
                        const hsize_t *chunk_dims, const char *spec_text, hid_t *dset)
{
  h5fz_clear_error();
  if (!name || !dims || !chunk_dims || !dset || rank < 1 || rank > H5FZ_ARRAY_MAX_RANK)
    return h5fz_fail(H5FZ_ERR_ARG, "h5fz_dataset_create: NULL argument or rank outside 1..%d", H5FZ_ARRAY_MAX_RANK);
  if (H5Tequal(mem_type, H5T_NATIVE_FLOAT) <= 0 && H5Tequal(mem_type, H5T_NATIVE_DOUBLE) <= 0)
    return h5fz_fail(H5FZ_ERR_ARG, "h5fz_dataset_create: the type must be H5T_NATIVE_FLOAT or H5T_NATIVE_DOUBLE");
  *dset = H5I_INVALID_HID;
  h5fz_spec spec;
  int rc = spec_text ? h5fz_spec_parse(spec_text, &spec) : h5fz_spec_default(&spec);
  if (rc) return rc;
  if (spec.dtype != H5FZ_DTYPE_UNKNOWN || spec.rank || spec.has_fill)
    return h5fz_fail(H5FZ_ERR_SPEC, "h5fz_dataset_create: the spec may not set dtype, dims or fill: they come "
                                    "from the dataset (type, chunk dims, fill value)");
  uint64_t chunk_elems = 1;
  for (int d = 0; d < rank; d++) {
    if (!chunk_dims[d]) return h5fz_fail(H5FZ_ERR_ARG, "h5fz_dataset_create: chunk dim %d is 0", d);
    chunk_elems *= chunk_dims[d];
  }
  if (chunk_elems * H5Tget_size(mem_type) > 0x7fff0000u)
    return h5fz_fail(H5FZ_ERR_ARG,
                     "h5fz_dataset_create: a chunk of %llu values is larger than the chunk format "
                     "allows (2 GiB)",
                     (unsigned long long)chunk_elems);
  unsigned cd[H5FZ_CD_MAX];
  size_t n_cd = 0;
  if ((rc = h5fz_spec_to_cd_values(&spec, 0, cd, H5FZ_CD_MAX, &n_cd))) return rc;
  if ((rc = h5fz_dataset_register_filter())) return rc; /* set_local runs in the plugin */
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE), space = H5Screate_simple(rank, dims, NULL);
  if (dcpl < 0 || space < 0 || H5Pset_chunk(dcpl, rank, chunk_dims) < 0 ||
      H5Pset_filter(dcpl, H5FZ_FILTER_ID, H5Z_FLAG_MANDATORY, n_cd, cd) < 0 ||
      H5Pset_attr_phase_change(dcpl, 0, 0) < 0) {
    rc = h5fz_fail(H5FZ_ERR_HDF5, "cannot build the dataset creation property list");
  } else {
    /* Dense attribute storage needs a version-2 object header, which the
     * file's lowest library version bound decides: raise it to 1.8 for this
     * dataset only, then put the caller's bounds back. */
    hid_t file = H5Iget_file_id(loc), fapl = file < 0 ? -1 : H5Fget_access_plist(file);
    H5F_libver_t lo = H5F_LIBVER_LATEST, hi = H5F_LIBVER_LATEST;
    int raised = fapl >= 0 && H5Pget_libver_bounds(fapl, &lo, &hi) >= 0 && lo < H5F_LIBVER_V18 &&
                 H5Fset_libver_bounds(file, H5F_LIBVER_V18, hi >= H5F_LIBVER_V18 ? hi : H5F_LIBVER_LATEST) >= 0;
    *dset = H5Dcreate2(loc, name, mem_type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    if (*dset < 0) rc = h5fz_fail(H5FZ_ERR_HDF5, "H5Dcreate2(%s) failed (see the HDF5 error stack)", name);
    if (raised && H5Fset_libver_bounds(file, lo, hi) < 0 && !rc)
      rc = h5fz_fail(H5FZ_ERR_HDF5, "cannot restore the file's library version bounds");
    if (fapl >= 0) H5Pclose(fapl);
    if (file >= 0) H5Fclose(file);
  }
  if (dcpl >= 0) H5Pclose(dcpl);
  if (space >= 0) H5Sclose(space);
  return rc;
}

/* The digest of the plan that ran, as 16 hex digits, or "cpu" for the CPU
 * executor (which has no plan), so the attribute never reads as missing. */
static void plan_digest_text(const h5fz_array_exec *ex, char *buf, size_t len)
{
  if (ex->on_gpu)
    snprintf(buf, len, "%016llx", (unsigned long long)ex->plan_digest);
  else
    snprintf(buf, len, "cpu");
}

/* ---- write -------------------------------------------------------------------------- */

typedef struct {
  hid_t dset;
  const dataset_info *di;
  h5fz_dataset_report rep;
  double *abs_bound;  /* per chunk */
  uint32_t *outliers; /* per chunk */
  uint64_t *opos;     /* dataset element indices, up to H5FZ_ATTR_MAX_OUTLIERS */
  uint8_t *oval;
  uint64_t n_listed;
  int lists_full; /* more outliers than the lists hold */
  int rc;
} write_ctx;

/* The outliers of one chunk into the lists, as dataset element indices. */
static int list_outliers(write_ctx *w, const h5fz_encoded_chunk *c)
{
  const h5fz_array_geom *g = &w->di->g;
  size_t esize = h5fz_dtype_size(w->di->dtype), n = 0;
  uint32_t cnt = c->info.n_outliers;
  if (w->lists_full || w->n_listed + cnt > H5FZ_ATTR_MAX_OUTLIERS) {
    w->lists_full = 1;
    return H5FZ_OK;
  }
  if (!w->opos) { /* the lists exist from the first outlier on */
    w->opos = malloc(((size_t)H5FZ_ATTR_MAX_OUTLIERS) * 8u);
    w->oval = malloc(((size_t)H5FZ_ATTR_MAX_OUTLIERS) * esize);
    if (!w->opos || !w->oval) return h5fz_fail(H5FZ_ERR_NOMEM, "outlier lists");
  }
  uint32_t *pos = malloc((cnt + 1u) * 4u);
  uint8_t *vals = malloc((cnt + 1u) * esize);
  int rc = pos && vals ? h5fz_chunk_outliers(c->container, c->bytes, pos, vals, cnt, &n)
                       : h5fz_fail(H5FZ_ERR_NOMEM, "outlier lists");
  hsize_t origin[H5FZ_ARRAY_MAX_RANK];
  chunk_offset(g, c->index, origin);
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
    w->opos[w->n_listed] = lin;
    memcpy(w->oval + w->n_listed * esize, vals + i * esize, esize);
    w->n_listed++;
  }
  free(pos);
  free(vals);
  return rc;
}

static int write_sink(void *ctx, const h5fz_encoded_chunk *c)
{
  write_ctx *w = ctx;
  hsize_t off[H5FZ_ARRAY_MAX_RANK];
  chunk_offset(&w->di->g, c->index, off);
  if (H5Dwrite_chunk(w->dset, H5P_DEFAULT, 0, off, c->bytes, c->container) < 0)
    return w->rc = h5fz_fail(H5FZ_ERR_HDF5, "H5Dwrite_chunk of chunk %llu failed", (unsigned long long)c->index);
  w->rep.n_chunks++;
  w->rep.stored_bytes += c->bytes;
  w->rep.chunk_bytes += c->info.input_bytes;
  w->rep.n_outliers += c->info.n_outliers;
  w->rep.n_raw_chunks += c->info.stored_raw ? 1u : 0u;
  w->abs_bound[c->index] = c->info.abs_bound;
  w->outliers[c->index] = c->info.n_outliers;
  if (c->info.n_outliers) return w->rc = list_outliers(w, c);
  return H5FZ_OK;
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

static int write_attributes(write_ctx *w, uint64_t n_chunks)
{
  const dataset_info *di = w->di;
  char text[512];
  static const char *const modes[] = {"abs", "rel", "pw_rel", "lossless"};
  h5fz_spec_format(&di->spec, text, sizeof text);
  double ratio = w->rep.stored_bytes ? (double)w->rep.input_bytes / (double)w->rep.stored_bytes : 0.0;
  uint64_t omitted = w->rep.n_outliers;
  int bad = put_string(w->dset, "h5fz_version", h5fz_version()) || put_string(w->dset, "h5fz_spec", text) ||
            put_string(w->dset, "h5fz_mode", modes[di->spec.mode & 3]) ||
            put_attr(w->dset, "h5fz_bound", H5T_NATIVE_DOUBLE, SCALAR, &di->spec.bound) ||
            put_string(w->dset, "h5fz_kernel_class", w->rep.kernel_class) ||
            put_string(w->dset, "h5fz_plan_digest", w->rep.plan_digest) ||
            put_attr(w->dset, "h5fz_ratio", H5T_NATIVE_DOUBLE, SCALAR, &ratio) ||
            put_attr(w->dset, "h5fz_stored_bytes", H5T_NATIVE_UINT64, SCALAR, &w->rep.stored_bytes);
  if (bad) return h5fz_fail(H5FZ_ERR_HDF5, "cannot write the h5fz attributes");
  /* the per-chunk and outlier arrays may exceed compact attribute storage
   * (64 KiB) on datasets not made by h5fz_dataset_create: then left out */
  int lists = 0;
  H5E_BEGIN_TRY
  {
    int per_chunk = !put_attr(w->dset, "h5fz_chunk_abs_bound", H5T_NATIVE_DOUBLE, n_chunks, w->abs_bound) &&
                    !put_attr(w->dset, "h5fz_chunk_outliers", H5T_NATIVE_UINT32, n_chunks, w->outliers);
    drop_attr(w->dset, "h5fz_chunk_lists_omitted");
    if (!per_chunk) {
      uint64_t nc = n_chunks;
      drop_attr(w->dset, "h5fz_chunk_abs_bound");
      drop_attr(w->dset, "h5fz_chunk_outliers");
      put_attr(w->dset, "h5fz_chunk_lists_omitted", H5T_NATIVE_UINT64, SCALAR, &nc);
    }
    if (!w->lists_full)
      lists = !put_attr(w->dset, "h5fz_outlier_positions", H5T_NATIVE_UINT64, w->n_listed, w->opos) &&
              !put_attr(w->dset, "h5fz_outlier_values", di->mem_type, w->n_listed, w->oval);
    drop_attr(w->dset, "h5fz_outliers_omitted");
  }
  H5E_END_TRY;
  if (!lists) {
    drop_attr(w->dset, "h5fz_outlier_positions");
    drop_attr(w->dset, "h5fz_outlier_values");
    if (put_attr(w->dset, "h5fz_outliers_omitted", H5T_NATIVE_UINT64, SCALAR, &omitted))
      return h5fz_fail(H5FZ_ERR_HDF5, "cannot write h5fz_outliers_omitted");
  }
  return H5FZ_OK;
}

int h5fz_dataset_write(hid_t dset, const void *data, h5fz_mem where, h5fz_dataset_report *report)
{
  h5fz_clear_error();
  if (where != H5FZ_MEM_HOST && where != H5FZ_MEM_DEVICE)
    return h5fz_fail(H5FZ_ERR_ARG, "h5fz_dataset_write: where must be H5FZ_MEM_HOST or H5FZ_MEM_DEVICE");
  double t0 = now_s();
  dataset_info di;
  int rc = describe(dset, &di);
  if (rc) return rc;
  uint64_t n_chunks = h5fz_array_chunks(&di.g), n = 1;
  for (uint32_t d = 0; d < di.g.rank; d++) n *= di.g.dims[d];
  if (!data && n) return h5fz_fail(H5FZ_ERR_ARG, "h5fz_dataset_write: NULL data");
  write_ctx w = {.dset = dset, .di = &di};
  w.rep.input_bytes = n * h5fz_dtype_size(di.dtype);
  w.abs_bound = calloc(n_chunks + 1, sizeof *w.abs_bound);
  w.outliers = calloc(n_chunks + 1, sizeof *w.outliers);
  if (!w.abs_bound || !w.outliers) {
    rc = h5fz_fail(H5FZ_ERR_NOMEM, "per-chunk tables");
    goto out;
  }
  h5fz_array_exec ex;
  rc = h5fz_array_encode(&di.spec, &di.g, data, where == H5FZ_MEM_DEVICE, write_sink, &w, &ex);
  if (rc) goto out;
  w.rep.on_gpu = ex.on_gpu;
  snprintf(w.rep.kernel_class, sizeof w.rep.kernel_class, "%s", ex.kernel_class);
  plan_digest_text(&ex, w.rep.plan_digest, sizeof w.rep.plan_digest);
  rc = write_attributes(&w, n_chunks);
  w.rep.seconds = now_s() - t0;
  if (!rc && report) *report = w.rep;
out:
  free(w.abs_bound);
  free(w.outliers);
  free(w.opos);
  free(w.oval);
  return rc;
}

/* ---- read --------------------------------------------------------------------------- */

typedef struct {
  hid_t dset;
  const dataset_info *di;
  h5fz_dataset_report rep;
  uint64_t counted; /* chunks counted in rep (a CPU fallback asks again) */
} read_ctx;

static int read_source(void *ctx, uint64_t index, void **container, size_t *bytes)
{
  read_ctx *r = ctx;
  hsize_t off[H5FZ_ARRAY_MAX_RANK], size = 0;
  chunk_offset(&r->di->g, index, off);
  *container = NULL;
  *bytes = 0;
  herr_t st;
  H5E_BEGIN_TRY { st = H5Dget_chunk_storage_size(r->dset, off, &size); }
  H5E_END_TRY;
  if (st < 0 || size == 0) { /* never written: fill */
    if (index == r->counted) r->counted++;
    return H5FZ_OK;
  }
  void *buf = malloc(size);
  if (!buf) return h5fz_fail(H5FZ_ERR_NOMEM, "cannot allocate %llu bytes", (unsigned long long)size);
  uint32_t mask = 0;
  if (H5Dread_chunk(r->dset, H5P_DEFAULT, off, &mask, buf) < 0) {
    free(buf);
    return h5fz_fail(H5FZ_ERR_HDF5, "H5Dread_chunk of chunk %llu failed", (unsigned long long)index);
  }
  if (mask) {
    free(buf);
    return h5fz_fail(H5FZ_ERR_UNSUPPORTED, "chunk %llu was stored without the h5fz filter (filter mask %u)",
                     (unsigned long long)index, mask);
  }
  if (index == r->counted) {
    r->counted++;
    r->rep.n_chunks++;
    r->rep.stored_bytes += size;
  }
  *container = buf;
  *bytes = size;
  return H5FZ_OK;
}

int h5fz_dataset_read(hid_t dset, void *data, h5fz_mem where, h5fz_dataset_report *report)
{
  h5fz_clear_error();
  if (where != H5FZ_MEM_HOST && where != H5FZ_MEM_DEVICE)
    return h5fz_fail(H5FZ_ERR_ARG, "h5fz_dataset_read: where must be H5FZ_MEM_HOST or H5FZ_MEM_DEVICE");
  double t0 = now_s();
  dataset_info di;
  int rc = describe(dset, &di);
  if (rc) return rc;
  uint64_t n = 1;
  for (uint32_t d = 0; d < di.g.rank; d++) n *= di.g.dims[d];
  if (!data && n) return h5fz_fail(H5FZ_ERR_ARG, "h5fz_dataset_read: NULL data");
  read_ctx r = {.dset = dset, .di = &di};
  h5fz_array_exec ex;
  rc = h5fz_array_decode(&di.g, di.dtype, &di.spec, di.fill, read_source, &r, data, where == H5FZ_MEM_DEVICE, &ex);
  if (rc) return rc;
  r.rep.input_bytes = n * h5fz_dtype_size(di.dtype);
  r.rep.chunk_bytes = h5fz_array_chunks(&di.g) * h5fz_dtype_size(di.dtype);
  for (uint32_t d = 0; d < di.g.rank; d++) r.rep.chunk_bytes *= di.g.chunk[d];
  r.rep.on_gpu = ex.on_gpu;
  snprintf(r.rep.kernel_class, sizeof r.rep.kernel_class, "%s", ex.kernel_class);
  plan_digest_text(&ex, r.rep.plan_digest, sizeof r.rep.plan_digest);
  r.rep.seconds = now_s() - t0;
  if (report) *report = r.rep;
  return H5FZ_OK;
}
