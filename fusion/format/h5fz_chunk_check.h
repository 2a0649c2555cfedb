/*
 * h5fz_chunk_check.h - whether a chunk is one of a dataset's and keeps its
 * promise (h5fz_chunk_check.c); h5fz_chunk_info_check_spec (h5fz.h) is the
 * public form.
 */
#ifndef H5FZ_CHUNK_CHECK_H
#define H5FZ_CHUNK_CHECK_H

#include "h5fz_container.h"

/* h5fz_chunk_info_check_spec on a header: H5FZ_OK, or H5FZ_ERR_CORRUPT
 * with the reason. */
int h5fz_header_check_spec(const h5fz_header *h, const h5fz_spec *want);

/* Under a REL dataset (want may be NULL: no check), a lossy chunk's
 * absolute bound against the range of its decoded values (n_elements of
 * h's dtype): H5FZ_ERR_CORRUPT when it cannot have kept the promise. */
int h5fz_rel_check_decoded(const h5fz_header *h, const h5fz_spec *want, const void *values);

/* "float32", "float64" or "an unknown type", for messages. */
const char *h5fz_dtype_name(unsigned dtype);

#endif /* H5FZ_CHUNK_CHECK_H */
