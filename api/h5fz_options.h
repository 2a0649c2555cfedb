/*
 * h5fz_options.h - the options attached to dataset handles
 * (h5fz_dataset.h's h5fz_options, h5fz_options.c) as the codec's overrides,
 * for the API's calls to put in force.
 */
#ifndef H5FZ_OPTIONS_H
#define H5FZ_OPTIONS_H

#include <hdf5.h>

#include "h5fz_dataset.h"
#include "h5fz_settings.h"

/* The overrides of the options attached to dset, copied into *out: out,
 * or NULL when none are attached (the process's options and the
 * environment alone). */
const h5fz_overrides *h5fz_dataset_overrides(hid_t dset, h5fz_overrides *out);

/* The overrides an options value holds (opts not NULL). */
const h5fz_overrides *h5fz_options_overrides(const h5fz_options *opts);

/* When h5fz_set_process_options set options, tell them again to every
 * plugin copy loaded now, after making libhdf5 load its plugin
 * (h5fz_process_options.c): before a dataset is made, so that a copy
 * HDF5 loaded since the options were set (a second libhdf5's) has them at
 * set_local and for the dataset's chunks. Nothing to report: a copy that
 * refuses keeps the environment, as h5fz_set_process_options said. */
void h5fz_process_options_retell(void);

#endif /* H5FZ_OPTIONS_H */
