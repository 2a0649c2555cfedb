/*
 * h5fz_dataset.c - the dataset-level API (h5fz_dataset.h): the HDF5 side.
 * The chunks come from h5fz_array_encode (batched GPU, or the CPU
 * executor) and go to the file with H5Dwrite_chunk; reads take them with
 * H5Dread_chunk into h5fz_array_decode. The spec is the one set_local
 * stored in the dataset's pipeline (h5fz_dataset_info.c), so the chunks are
 * the filter's; the attributes come from h5fz_dataset_attrs.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "h5fz_batch.h"
#include "h5fz_dataset.h"
#include "h5fz_dataset_attrs.h"
#include "h5fz_dataset_create.h"
#include "h5fz_dataset_info.h"
#include "h5fz_error.h"
#include "h5fz_hdf5_reason.h"
#include "h5fz_options.h"

static double now_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- create ------------------------------------------------------------------------- */

int h5fz_dataset_create(hid_t loc, const char *name, hid_t mem_type, int rank, const hsize_t *dims,
                        const hsize_t *chunk_dims, const char *spec_text, hid_t *dset)
{
  return h5fz_dataset_create_allocated(loc, name, mem_type, rank, dims, chunk_dims, spec_text, H5D_ALLOC_TIME_DEFAULT,
                                       H5P_DEFAULT, dset);
}

int h5fz_dataset_register_filter(void)
{
  if (H5Zfilter_avail(H5FZ_FILTER_ID) > 0) return H5FZ_OK;
  const char *path = getenv("HDF5_PLUGIN_PATH");
  return h5fz_fail(H5FZ_ERR_HDF5, "the h5fz filter (id %d) is not available: HDF5 found no libh5fz.so on %s%s%s",
                   H5FZ_FILTER_ID, path ? "HDF5_PLUGIN_PATH=" : "its default plugin path", path ? path : "",
                   path ? "" : " (set HDF5_PLUGIN_PATH to the plugin's folder)");
}

/* ---- write -------------------------------------------------------------------------- */

typedef struct {
  hid_t dset;
  h5fz_attr_tables t;
} write_ctx;

static int write_sink(void *ctx, const h5fz_encoded_chunk *c)
{
  write_ctx *w = ctx;
  double t0 = now_s();
  hsize_t off[H5FZ_ARRAY_MAX_RANK];
  h5fz_dataset_chunk_offset(&w->t.di->g, c->index, off);
  int rc = h5fz_dataset_write_container(w->dset, w->t.di, off, c->index, c->container, c->bytes);
  if (!rc) rc = h5fz_attr_tables_add(&w->t, c, c->index, off);
  w->t.rep.hdf5_seconds += now_s() - t0;
  return rc;
}

/* What a whole-dataset write and read check first (fn names the caller in
 * messages): where is host or device, the dataset is h5fz's, data is
 * there unless the dataset is empty. Fills *di and *n (elements). */
static int begin_whole(const char *fn, hid_t dset, const void *data, h5fz_mem where, h5fz_dataset_info *di, uint64_t *n)
{
  h5fz_clear_error();
  if (where != H5FZ_MEM_HOST && where != H5FZ_MEM_DEVICE)
    return h5fz_fail(H5FZ_ERR_ARG, "%s: where must be H5FZ_MEM_HOST or H5FZ_MEM_DEVICE", fn);
  int rc = h5fz_dataset_describe(dset, di);
  if (rc) return rc;
  *n = 1;
  for (uint32_t d = 0; d < di->g.rank; d++) *n *= di->g.dims[d];
  if (!data && *n) return h5fz_fail(H5FZ_ERR_ARG, "%s: NULL data", fn);
  return H5FZ_OK;
}

static int write_whole(hid_t dset, const void *data, h5fz_mem where, h5fz_dataset_report *report)
{
  double t0 = now_s();
  h5fz_dataset_info di;
  uint64_t n = 0;
  int rc = begin_whole("h5fz_dataset_write", dset, data, where, &di, &n);
  if (rc) return rc;
  write_ctx w = {.dset = dset};
  if ((rc = h5fz_attr_tables_init(&w.t, &di))) goto out;
  w.t.rep.input_bytes = n * h5fz_dtype_size(di.dtype);
  h5fz_array_exec ex;
  rc = h5fz_array_encode(&di.spec, &di.g, data, where == H5FZ_MEM_DEVICE, write_sink, &w, &ex);
  if (rc) goto out;
  h5fz_dataset_report_executor(&w.t.rep, &ex);
  double t_attrs = now_s();
  rc = h5fz_attr_tables_write(dset, &w.t);
  w.t.rep.seconds = now_s() - t0;
  w.t.rep.hdf5_seconds += now_s() - t_attrs;
  if (!rc && report) *report = w.t.rep;
out:
  h5fz_attr_tables_free(&w.t);
  return rc;
}

/* ---- read --------------------------------------------------------------------------- */

/* The whole read's chunk source: the shared reader (h5fz_dataset_info.h),
 * plus the time in HDF5's chunk reads, which only this read reports. */
static int read_source(void *ctx, uint64_t index, void **container, size_t *bytes)
{
  h5fz_dataset_reader *r = ctx;
  double t0 = now_s();
  hsize_t off[H5FZ_ARRAY_MAX_RANK];
  h5fz_dataset_chunk_offset(&r->di->g, index, off);
  int rc = h5fz_dataset_reader_get(r, off, index, index, container, bytes);
  r->rep.hdf5_seconds += now_s() - t0;
  return rc;
}

static int read_whole(hid_t dset, void *data, h5fz_mem where, h5fz_dataset_report *report)
{
  double t0 = now_s();
  h5fz_dataset_info di;
  uint64_t n = 0;
  int rc = begin_whole("h5fz_dataset_read", dset, data, where, &di, &n);
  if (rc) return rc;
  h5fz_dataset_reader r = {.dset = dset, .di = &di};
  h5fz_array_exec ex;
  rc = h5fz_array_decode(&di.g, di.dtype, &di.spec, di.fill, read_source, &r, data, where == H5FZ_MEM_DEVICE, &ex);
  if (rc) return rc;
  h5fz_dataset_report_read(&r.rep, &di, n, h5fz_array_chunks(&di.g), &ex, now_s() - t0);
  if (report) *report = r.rep;
  return H5FZ_OK;
}

/* ---- the handle's options in force for the call (h5fz_options.c) ------------------- */

int h5fz_dataset_write(hid_t dset, const void *data, h5fz_mem where, h5fz_dataset_report *report)
{
  h5fz_overrides o;
  const h5fz_overrides *previous = h5fz_overrides_enter(h5fz_dataset_overrides(dset, &o));
  int rc = write_whole(dset, data, where, report);
  h5fz_overrides_leave(previous);
  return rc;
}

int h5fz_dataset_read(hid_t dset, void *data, h5fz_mem where, h5fz_dataset_report *report)
{
  h5fz_overrides o;
  const h5fz_overrides *previous = h5fz_overrides_enter(h5fz_dataset_overrides(dset, &o));
  int rc = read_whole(dset, data, where, report);
  h5fz_overrides_leave(previous);
  return rc;
}
