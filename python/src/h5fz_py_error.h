/*
 * h5fz_py_error.h - the per-thread error text of libh5fz_py.so
 * (h5fzpy_last_error), shared by its source files. Internal: hidden
 * symbols, not exported (h5fz_py.map exports h5fzpy_* only).
 */
#ifndef H5FZ_PY_ERROR_H
#define H5FZ_PY_ERROR_H

/* Record a failure of this library (not of the codec), printf-style, as
 * this thread's h5fzpy_last_error(); returns status. */
int h5fz_py_fail(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* After a codec call: keep the codec's message (h5fz_last_error, which the
 * next codec call overwrites) as this thread's error when status is not
 * H5FZ_OK; returns status. */
int h5fz_py_keep(int status);

/* Empty this thread's error text (at the start of every exported call). */
void h5fz_py_clear_error(void);

#endif /* H5FZ_PY_ERROR_H */
