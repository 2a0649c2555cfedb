/*
 * h5fz_fail.h - how a library layer of h5fz reports a failure: the
 * writing side of h5fz_status.h. Not installed: users only read errors
 * (h5fz_last_error). Used by errors/'s users from the planner up.
 */
#ifndef H5FZ_FAIL_H
#define H5FZ_FAIL_H

#include "h5fz_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Record a failure for h5fz_last_error() (printf-style, truncated at 511
 * bytes) and return `status` unchanged, so that `return h5fz_fail(...)`
 * reports and fails in one step. */
int h5fz_fail(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Clear the thread's last error (called at the start of public entry
 * points, so a message never outlives the call that set it). */
void h5fz_clear_error(void);

#ifdef __cplusplus
}
#endif
#endif /* H5FZ_FAIL_H */
