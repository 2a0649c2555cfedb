/*
 * compress_attrs.h - copying attributes between files for `h5fz compress`
 * (compress_copy.c). Private to cli/.
 */
#ifndef H5FZ_COMPRESS_ATTRS_H
#define H5FZ_COMPRESS_ATTRS_H

#include <stddef.h>

#include <hdf5.h>

/* Every attribute of object from onto object to (in another file), in
 * creation order where from tracks it (netCDF-4 does: ncdump lists
 * attributes in that order), with its file type, shape, values and name
 * encoding; variable-length data (strings, also inside compounds) is
 * read and reclaimed. DIMENSION_LIST and REFERENCE_LIST are left out
 * (object references: compress_scales.h rebuilds them); any other
 * attribute holding references is refused. path names the object in the
 * messages. Returns 0, or -1 with the reason in err (err_len bytes; a
 * reason already there is kept). */
int h5fz_compress_copy_attributes(hid_t from, hid_t to, const char *path, char *err, size_t err_len);

#endif /* H5FZ_COMPRESS_ATTRS_H */
