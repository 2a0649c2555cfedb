/*
 * h5fz_prepared_take.h - the plugin's side of h5fz_prepared.h: holding the
 * prepared containers of one collective write and answering the filter's
 * calls from them. No HDF5 (the plugin's h5fz_plugin.c calls these).
 */
#ifndef H5FZ_PREPARED_TAKE_H
#define H5FZ_PREPARED_TAKE_H

#include <stddef.h>

#include "h5fz_prepared.h"

/* Make p the prepared containers the filter answers from on the calling
 * thread (NULL: none). 0, or -1 when p's version is not
 * H5FZ_PREPARED_VERSION. */
int h5fz_prepared_install(h5fz_prepared_chunks *p);

/* One filter call while containers are installed on this thread. reverse = 0: in
 * (in_bytes, HDF5's chunk buffer) must carry a valid tag at offset 0 and be
 * the whole chunk; *out becomes a malloc'd copy of that chunk's container.
 * reverse != 0 (HDF5 reading a stored chunk before it modifies it): *out
 * becomes a malloc'd chunk, uninitialized: the write replaces every value
 * and only the tag HDF5 writes into it is read (by the encode call).
 * Returns 0 when nothing is installed (the caller runs the codec), 1 when
 * answered, or -1 with msg filled (a chunk the collective write did not
 * prepare: refusing it keeps the tag from being stored as data). */
int h5fz_prepared_answer(int reverse, const void *in, size_t in_bytes, void **out, size_t *out_bytes, char *msg,
                         size_t msg_len);

#endif /* H5FZ_PREPARED_TAKE_H */
