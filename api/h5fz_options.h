/*
 * h5fz_options.h - the options attached to dataset handles
 * (h5fz_dataset.h's h5fz_options, h5fz_options.c) as the codec's overrides,
 * for the API's calls to put in force.
 */
#ifndef H5FZ_OPTIONS_H
#define H5FZ_OPTIONS_H

#include <hdf5.h>

#include "h5fz_settings.h"

/* The overrides of the options attached to dset, copied into *out: out,
 * or NULL when none are attached (the environment alone). */
const h5fz_overrides *h5fz_dataset_overrides(hid_t dset, h5fz_overrides *out);

#endif /* H5FZ_OPTIONS_H */
