/*
 * compress_missing.h - `h5fz compress` keeps a variable's missing-value
 * marker exact (compress_missing.c): netCDF's _FillValue or missing_value
 * attribute becomes the spec's missing= when HDF5's own fill value does not
 * keep it already. Private to cli/.
 */
#ifndef H5FZ_COMPRESS_MISSING_H
#define H5FZ_COMPRESS_MISSING_H

#include <stddef.h>

#include <hdf5.h>

#include "h5fz.h"

/* The user cd_values for the copy of dataset dset (creation properties
 * dcpl, the original's) into cd[0..cap), *n_cd words: spec's, with
 * missing=V added when spec names none and dset has a _FillValue (else a
 * missing_value) attribute V of one float, unless HDF5's fill value is
 * written (fill time not NEVER) and equals V, which keeps V exact anyway.
 * When that fill value is another non-zero number, h5fz can keep only it
 * (one marker per dataset): V is not added and a line on stderr names
 * path, V and the fill value. Returns 0, or -1 when the words do not fit. */
int h5fz_compress_missing_cd(hid_t dset, hid_t dcpl, const h5fz_spec *spec, const char *path, unsigned *cd, size_t cap,
                             size_t *n_cd);

#endif /* H5FZ_COMPRESS_MISSING_H */
