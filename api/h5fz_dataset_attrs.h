/*
 * h5fz_dataset_attrs.h - the per-chunk tables a dataset write collects
 * (bound, outlier counts, outlier lists) and the attributes made of them
 * (docs/dataset_api.md), shared by the serial and the collective API.
 * Not installed.
 */
#ifndef H5FZ_DATASET_ATTRS_H
#define H5FZ_DATASET_ATTRS_H

#include "h5fz_dataset.h"
#include "h5fz_dataset_info.h"

typedef struct {
  const h5fz_dataset_info *di;
  h5fz_dataset_report rep; /* input_bytes, stored_bytes, n_outliers, kernel_class and plan_digest are written */
  uint64_t n_chunks;       /* chunks of the dataset's grid */
  double *abs_bound;       /* [n_chunks], 0 for chunks not written */
  uint32_t *outliers;      /* [n_chunks] */
  uint64_t *opos;          /* dataset element indices, up to H5FZ_ATTR_MAX_OUTLIERS (NULL until the first) */
  uint8_t *oval;           /* their values, dtype size each */
  uint64_t n_listed;
  int lists_full; /* more outliers than the lists hold: the lists are not written */
} h5fz_attr_tables;

/* Allocate the per-chunk tables of t for di's chunk grid (zeroed).
 * H5FZ_OK or H5FZ_ERR_NOMEM. Free with h5fz_attr_tables_free. */
int h5fz_attr_tables_init(h5fz_attr_tables *t, const h5fz_dataset_info *di);
void h5fz_attr_tables_free(h5fz_attr_tables *t);

/* Record one stored chunk: its container c (c->index is ignored), which is
 * the dataset's chunk global_index, whose first element is origin[0..rank)
 * in the dataset. Counts it in t->rep, sets its table entries and appends
 * its outliers inside the extent to the lists (as dataset element indices,
 * increasing within the chunk). H5FZ_OK, H5FZ_ERR_NOMEM or the statuses of
 * h5fz_chunk_outliers. */
int h5fz_attr_tables_add(h5fz_attr_tables *t, const h5fz_encoded_chunk *c, uint64_t global_index,
                         const hsize_t *origin);

/* Write (replace) the attributes of docs/dataset_api.md on dset from t.
 * The outlier lists must be in increasing position order. H5FZ_OK or
 * H5FZ_ERR_HDF5. Under parallel HDF5 every rank calls it with the same t. */
int h5fz_attr_tables_write(hid_t dset, const h5fz_attr_tables *t);

#endif /* H5FZ_DATASET_ATTRS_H */
