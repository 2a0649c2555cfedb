/*
 * h5fz_error.h - h5fz's one error style, for the layers built on the codec
 * (the HDF5 filter, the dataset API, the CLI) as well as fusion/ itself: a
 * function returns an h5fz_status (h5fz.h) and leaves the reason in the
 * calling thread's message, which h5fz_last_error() gives back.
 *
 * Public for those layers (it is what h5fz_error.c implements); users of
 * the codec only read errors, through h5fz.h.
 */
#ifndef H5FZ_ERROR_H
#define H5FZ_ERROR_H

#include "h5fz.h"
#include "h5fz_fail.h" /* h5fz_fail, h5fz_clear_error: errors/ */

#ifdef __cplusplus
extern "C" {
#endif

/* Print a warning to stderr once per process (later calls are silent), so
 * a fallback is visible without flooding; H5FZ_QUIET=1 silences it. */
void h5fz_log_once(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#ifdef __cplusplus
}
#endif
#endif /* H5FZ_ERROR_H */
