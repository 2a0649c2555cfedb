/*
 * compress_scales.h - dimension scales in the copy of `h5fz compress`
 * (compress_copy.c). Private to cli/.
 *
 * A dataset's DIMENSION_LIST and a scale's REFERENCE_LIST attributes
 * (netCDF-4's coordinates and dimensions are dimension scales) hold
 * object references, which cannot be copied into another file: H5Ocopy
 * leaves them pointing at the input's addresses, and recreated datasets
 * have none. They are rebuilt with H5DSattach_scale.
 */
#ifndef H5FZ_COMPRESS_SCALES_H
#define H5FZ_COMPRESS_SCALES_H

#include <stddef.h>

#include <hdf5.h>

#include "h5fz_cli.h"

/* In out_file: remove REFERENCE_LIST from every dataset of scales and
 * DIMENSION_LIST from every dataset of with_scales (paths, the same in
 * both files), then attach to each dataset of with_scales, dimension by
 * dimension, the scales its namesake in in_file has, found by their paths.
 * Returns 0, or -1 with the reason in err (err_len bytes). */
int h5fz_compress_attach_scales(hid_t in_file, hid_t out_file, const h5fz_cli_names *with_scales,
                                const h5fz_cli_names *scales, char *err, size_t err_len);

#endif /* H5FZ_COMPRESS_SCALES_H */
