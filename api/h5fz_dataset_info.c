/*
 * h5fz_dataset_info.c - what an h5fz dataset is, as the dataset API sees it
 * (h5fz_dataset_info.h): the spec is the one set_local stored in the
 * pipeline, so the API's chunks are the filter's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h5fz_batch.h"
#include "h5fz_dataset_info.h"
#include "h5fz_error.h"

int h5fz_dataset_describe(hid_t dset, h5fz_dataset_info *di)
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
      (H5Tget_order(type) != H5T_ORDER_LE && H5Tget_order(type) != H5T_ORDER_BE)) {
    rc = h5fz_fail(H5FZ_ERR_ARG, "the dataset's type is not float32 or float64 (little- or big-endian)");
    goto out;
  }
  di->big_endian = H5Tget_order(type) == H5T_ORDER_BE;
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
  if (di->spec.big_endian != di->big_endian) {
    rc = h5fz_fail(H5FZ_ERR_SPEC, "the pipeline's cd_values name %s-endian values, the dataset's type is %s-endian",
                   di->spec.big_endian ? "big" : "little", di->big_endian ? "big" : "little");
    goto out;
  }
  di->spec.big_endian = 0; /* the executors code the caller's native values */
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

void h5fz_dataset_chunk_offset(const h5fz_array_geom *g, uint64_t index, hsize_t *off)
{
  uint64_t origin[H5FZ_ARRAY_MAX_RANK];
  h5fz_array_chunk_origin(g, index, origin);
  for (uint32_t d = 0; d < g->rank; d++) off[d] = origin[d];
}

int h5fz_dataset_read_container(hid_t dset, const h5fz_dataset_info *di, const hsize_t *off, uint64_t index,
                                void **container, size_t *bytes)
{
  hsize_t size = 0;
  *container = NULL;
  *bytes = 0;
  herr_t st;
  H5E_BEGIN_TRY { st = H5Dget_chunk_storage_size(dset, off, &size); }
  H5E_END_TRY;
  if (st < 0 || size == 0) return H5FZ_OK; /* never written: fill */
  void *buf = malloc(size);
  if (!buf) return h5fz_fail(H5FZ_ERR_NOMEM, "cannot allocate %llu bytes", (unsigned long long)size);
  uint32_t mask = 0;
  if (H5Dread_chunk(dset, H5P_DEFAULT, off, &mask, buf) < 0) {
    free(buf);
    return h5fz_fail(H5FZ_ERR_HDF5, "H5Dread_chunk of chunk %llu failed", (unsigned long long)index);
  }
  if (mask) {
    free(buf);
    return h5fz_fail(H5FZ_ERR_UNSUPPORTED, "chunk %llu was stored without the h5fz filter (filter mask %u)",
                     (unsigned long long)index, mask);
  }
  h5fz_chunk_info info;
  if (di->big_endian && h5fz_chunk_inspect(buf, size, &info) == H5FZ_OK) {
    /* a big-endian dataset's chunk, decoded to native values for the caller:
     * the byte-order mark comes off; a little-endian one is not this dataset's */
    if (!info.big_endian) {
      free(buf);
      return h5fz_fail(H5FZ_ERR_CORRUPT,
                       "chunk %llu holds little-endian values, the dataset is big-endian: its "
                       "values would come back byte-swapped",
                       (unsigned long long)index);
    }
    h5fz_container_set_byte_order(buf, size, 0);
  } /* a container that does not open is the decoder's to report */
  *container = buf;
  *bytes = size;
  return H5FZ_OK;
}

int h5fz_dataset_write_container(hid_t dset, const h5fz_dataset_info *di, const hsize_t *off, uint64_t index,
                                 const void *container, size_t bytes)
{
  uint8_t *marked = NULL;
  if (di->big_endian) { /* the bytes the filter writes for the same values in a big-endian dataset */
    marked = malloc(bytes ? bytes : 1);
    if (!marked) return h5fz_fail(H5FZ_ERR_NOMEM, "cannot allocate %zu bytes", bytes);
    memcpy(marked, container, bytes);
    int st = h5fz_container_set_byte_order(marked, bytes, 1);
    if (st) {
      free(marked);
      return st;
    }
    container = marked;
  }
  herr_t wr = H5Dwrite_chunk(dset, H5P_DEFAULT, 0, off, bytes, container);
  free(marked);
  return wr < 0 ? h5fz_fail(H5FZ_ERR_HDF5, "H5Dwrite_chunk of chunk %llu failed", (unsigned long long)index) : H5FZ_OK;
}

void h5fz_dataset_plan_digest_text(const h5fz_array_exec *ex, char *buf, size_t len)
{
  if (ex->on_gpu)
    snprintf(buf, len, "%016llx", (unsigned long long)ex->plan_digest);
  else
    snprintf(buf, len, "cpu");
}

int h5fz_dataset_reader_get(h5fz_dataset_reader *r, const hsize_t *off, uint64_t chunk, uint64_t index,
                            void **container, size_t *bytes)
{
  int rc = h5fz_dataset_read_container(r->dset, r->di, off, chunk, container, bytes);
  if (rc || index != r->counted) return rc; /* asked again after a fallback: counted already */
  r->counted++;
  r->rep.n_chunks += *bytes ? 1u : 0u;
  r->rep.stored_bytes += *bytes;
  return H5FZ_OK;
}

void h5fz_dataset_report_executor(h5fz_dataset_report *rep, const h5fz_array_exec *ex)
{
  rep->on_gpu = ex->on_gpu;
  snprintf(rep->kernel_class, sizeof rep->kernel_class, "%s", ex->kernel_class);
  h5fz_dataset_plan_digest_text(ex, rep->plan_digest, sizeof rep->plan_digest);
}

void h5fz_dataset_report_read(h5fz_dataset_report *rep, const h5fz_dataset_info *di, uint64_t elems, uint64_t chunks,
                              const h5fz_array_exec *ex, double seconds)
{
  size_t esize = h5fz_dtype_size(di->dtype);
  rep->input_bytes = elems * esize;
  rep->chunk_bytes = chunks * esize;
  for (uint32_t d = 0; d < di->g.rank; d++) rep->chunk_bytes *= di->g.chunk[d];
  h5fz_dataset_report_executor(rep, ex);
  rep->seconds = seconds;
}
