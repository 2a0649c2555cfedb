/*
 * h5fz_hdf5_reason.h - the reason HDF5 gives for the call that just failed,
 * for the dataset API's messages. Private to api/.
 */
#ifndef H5FZ_HDF5_REASON_H
#define H5FZ_HDF5_REASON_H

#include <stddef.h>

/* The description of the innermost frame of the calling thread's HDF5
 * error stack, where the failure began (e.g. the filter's set_local:
 * `h5fz: H5FZ_DEVICE="gpuu": want auto, gpu or cpu (any case)`), copied
 * into buf (len bytes, always NUL-terminated when len > 0). "" when the
 * stack is empty. Returns buf. Leaves the stack as it is. */
const char *h5fz_hdf5_innermost_reason(char *buf, size_t len);

#endif /* H5FZ_HDF5_REASON_H */
