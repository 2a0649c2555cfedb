/*
 * h5fz_dataset_info.h - what the dataset API reads off an h5fz dataset
 * (geometry, spec after set_local, fill), shared by the serial API
 * (h5fz_dataset.c) and the collective one (h5fz_dataset_mpi.c). Not
 * installed.
 */
#ifndef H5FZ_DATASET_INFO_H
#define H5FZ_DATASET_INFO_H

#include <hdf5.h>

#include "h5fz_batch.h"
#include "h5fz_dataset.h"

typedef struct {
  h5fz_spec spec;    /* from the pipeline's cd_values (after set_local), for
                              native values: big_endian 0 (see big_endian) */
  h5fz_array_geom g; /* the whole dataset: dims, chunk dims, fill bits */
  h5fz_dtype dtype;
  hid_t mem_type; /* H5T_NATIVE_FLOAT / _DOUBLE (not to be closed) */
  double fill;
  int big_endian; /* the dataset's type is big-endian: the caller's native
                              values are coded as they are and each container is
                              marked big-endian on its way to the file (and back) */
} h5fz_dataset_info;

/* Fill *di from the open dataset dset: it must be chunked, float32/float64
 * of either byte order, rank 1..H5FZ_ARRAY_MAX_RANK, with h5fz (and set_local's
 * words) as its only filter, and filter partial edge chunks. Returns
 * H5FZ_OK, H5FZ_ERR_ARG, H5FZ_ERR_SPEC or H5FZ_ERR_HDF5 (with the reason). */
int h5fz_dataset_describe(hid_t dset, h5fz_dataset_info *di);

/* The element offset of chunk `index` (row-major over g's chunk grid) as
 * HDF5 wants it (hsize_t, which need not be uint64_t), off[0..g->rank). */
void h5fz_dataset_chunk_offset(const h5fz_array_geom *g, uint64_t index, hsize_t *off);

/* The stored container of the chunk at element offset off (chunk number
 * index, for messages), as the executors decode it for the caller's native
 * values: of a big-endian dataset (di->big_endian) the byte-order mark
 * comes off, and a chunk without it is refused (H5FZ_ERR_CORRUPT: its
 * values would come back byte-swapped). *container a malloc'd copy the
 * caller frees, or NULL with *bytes = 0 for a chunk never written (it reads
 * as the fill value). H5FZ_OK, H5FZ_ERR_NOMEM, H5FZ_ERR_HDF5,
 * H5FZ_ERR_CORRUPT, or H5FZ_ERR_UNSUPPORTED (the chunk was stored without
 * the filter). */
int h5fz_dataset_read_container(hid_t dset, const h5fz_dataset_info *di, const hsize_t *off, uint64_t index,
                                void **container, size_t *bytes);

/* A chunk source of an array decode (h5fz_array_decode) over a dataset,
 * what the whole-dataset and the collective reads share: the dataset, its
 * description and the report the chunks read are counted into. */
typedef struct {
  hid_t dset;
  const h5fz_dataset_info *di;
  h5fz_dataset_report rep;
  uint64_t counted; /* chunks counted in rep (a CPU fallback asks again) */
} h5fz_dataset_reader;

/* The array decode's index-th chunk, the dataset's chunk number chunk at
 * element offset off: its container read (h5fz_dataset_read_container,
 * same results) and counted into r->rep (chunks read, stored bytes) once:
 * a CPU fallback that asks for a chunk again is not counted twice. */
int h5fz_dataset_reader_get(h5fz_dataset_reader *r, const hsize_t *off, uint64_t chunk, uint64_t index,
                            void **container, size_t *bytes);

/* The executor of an array call into *rep: on_gpu, kernel class and plan
 * digest ("cpu" on the CPU), for the writes and the reads alike. */
void h5fz_dataset_report_executor(h5fz_dataset_report *rep, const h5fz_array_exec *ex);

/* A finished read's report: elems values read (input_bytes), chunks chunks
 * of the dataset's shape decoded (chunk_bytes, padding included), the
 * executor ex, and seconds. */
void h5fz_dataset_report_read(h5fz_dataset_report *rep, const h5fz_dataset_info *di, uint64_t elems, uint64_t chunks,
                              const h5fz_array_exec *ex, double seconds);

/* Store container (bytes, coded from native values) as the chunk at element
 * offset off with H5Dwrite_chunk, marked big-endian first when the dataset
 * is (the bytes the filter writes for the same values). H5FZ_OK,
 * H5FZ_ERR_NOMEM, H5FZ_ERR_HDF5. */
int h5fz_dataset_write_container(hid_t dset, const h5fz_dataset_info *di, const hsize_t *off, uint64_t index,
                                 const void *container, size_t bytes);

/* The plan digest a report and the h5fz_plan_digest attribute carry: the
 * plan that ran as 16 hex digits, or "cpu" for the CPU executor (which has
 * no plan), so the attribute never reads as missing. */
void h5fz_dataset_plan_digest_text(const h5fz_array_exec *ex, char *buf, size_t len);

#endif /* H5FZ_DATASET_INFO_H */
