/*
 * compress_vlen.h - datasets of variable-length types (strings, sequences,
 * also inside compounds and arrays) copied by value for `h5fz compress`
 * (compress_copy.c). Private to cli/.
 *
 * Why not H5Ocopy: HDF5 (seen with 1.10.8) copies such a dataset's fill
 * value with its global-heap reference into the input file unchanged, so
 * the copy's creation properties cannot be read ("bad global heap
 * collection signature"): netCDF-4 string variables, which have a fill
 * value "", became unreadable for ncdump and h5py.
 */
#ifndef H5FZ_COMPRESS_VLEN_H
#define H5FZ_COMPRESS_VLEN_H

#include <stddef.h>

#include <hdf5.h>

/* 1 if type holds variable-length data anywhere (H5T_VLEN, a
 * variable-length string, or either inside a compound or array). */
int h5fz_compress_has_variable_data(hid_t type);

/* Create name in group `to` (link creation properties lcpl) with the
 * source dataset src's type (out_type, usable in the output file), shape
 * and creation properties (the fill value is written again into the
 * output file), copy its values (whole, in the native memory type; none
 * when nothing was ever written) and leave the attributes to the caller.
 * *out receives the open copy. Returns 0, or -1 with the reason in err
 * (err_len bytes; a reason already there is kept). */
int h5fz_compress_copy_by_value(hid_t src, hid_t to, const char *name, hid_t out_type, hid_t lcpl, const char *path,
                                hid_t *out, char *err, size_t err_len);

#endif /* H5FZ_COMPRESS_VLEN_H */
