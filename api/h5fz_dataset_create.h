/*
 * h5fz_dataset_create.h - the one way the dataset API makes an h5fz
 * dataset (h5fz_dataset_create.c). Not installed.
 */
#ifndef H5FZ_DATASET_CREATE_H
#define H5FZ_DATASET_CREATE_H

#include <hdf5.h>

/* h5fz_dataset_create (h5fz_dataset.h: arguments, checks, statuses) with
 * the dataset's space allocation time: H5D_ALLOC_TIME_DEFAULT leaves
 * HDF5's choice; the collective API asks H5D_ALLOC_TIME_EARLY, so that
 * its collective filtered write finds every chunk allocated (HDF5 1.14
 * fills the buffer of each unallocated chunk it modifies; an allocated one
 * it reads, and the filter answers without decoding: docs/mpi.md). dapl:
 * the handle's access list (H5P_DEFAULT; the collective API's handles
 * have no chunk cache: h5fz_dataset_mpi.c says why). */
int h5fz_dataset_create_allocated(hid_t loc, const char *name, hid_t mem_type, int rank, const hsize_t *dims,
                                  const hsize_t *chunk_dims, const char *spec_text, H5D_alloc_time_t alloc_time,
                                  hid_t dapl, hid_t *dset);

#endif /* H5FZ_DATASET_CREATE_H */
