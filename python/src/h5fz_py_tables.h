/*
 * h5fz_py_tables.h - the codec's tables as h5fz.get_config() lists them:
 * the error-bound modes and the ops chains are made of. Part of the Python
 * package's C library (h5fz_py.h has the conventions).
 */
#ifndef H5FZ_PY_TABLES_H
#define H5FZ_PY_TABLES_H

#include <stddef.h>

#include "h5fz_py.h"

/* Mode i (0-based, in h5fz_mode order): its id (the h5fz_mode value
 * cd_values store) into *id and its spec keyword ("abs", "rel", "pw_rel",
 * "lossless": the name h5fz_spec_format writes) into name (cap bytes,
 * NUL-terminated). Returns H5FZ_OK, or H5FZ_ERR_ARG when i is past the
 * last mode (callers loop until it fails) or an argument is NULL/short. */
H5FZPY_EXPORT int h5fzpy_mode_id_at(size_t i, int *id, char *name, size_t cap);

/* Entry i (0-based) of the op table (h5fz_op_at): id, name, kind ("map",
 * "transform", "coder") and a one-line summary; the pointers are static.
 * Returns H5FZ_OK, or H5FZ_ERR_ARG when i is past the end. */
H5FZPY_EXPORT int h5fzpy_op_at(size_t i, unsigned *id, const char **name, const char **kind, const char **summary);

#endif /* H5FZ_PY_TABLES_H */
