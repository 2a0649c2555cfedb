/*
 * h5fz_py_options.h - configuration as a value for the Python package
 * (h5fz.Options): the encode and decode of h5fz_py.h with options in
 * place of the H5FZ_* environment variables for the call. Part of the
 * package's C library (h5fz_py.h has the conventions).
 */
#ifndef H5FZ_PY_OPTIONS_H
#define H5FZ_PY_OPTIONS_H

#include "h5fz_plugin_settings.h"
#include "h5fz_py.h"

/* What a call uses instead of the environment; -1 (cache_dir "") in a
 * field: the environment's value (H5FZ_DEVICE, H5FZ_GPU_ORDINAL,
 * H5FZ_THREADS, H5FZ_DEVICE_STRICT, H5FZ_QUIET, H5FZ_CACHE_DIR). The
 * plugin message's portable layout (filter/h5fz_plugin_settings.h), so the
 * plugin copies are told the very struct ctypes fills: int32 device (0
 * auto, 1 cpu, 2 gpu), gpu_ordinal (0..1023), threads (0: a thread a
 * core, or 1..1024), strict (0 or 1: a device problem fails the call),
 * quiet (0 or 1: h5fz's warnings stay silent), char cache_dir[1024] (the
 * JIT cache folder). */
typedef h5fz_plugin_options h5fzpy_options;

/* h5fzpy_encode with opts (NULL: the environment alone) in force for the
 * call. H5FZ_ERR_ARG for a field out of its range. */
H5FZPY_EXPORT int h5fzpy_encode_with(const h5fzpy_options *opts, const unsigned *cd, size_t n_cd, const h5fzpy_geom *g,
                                     const void *data, int on_device, h5fzpy_sink sink, void *ctx, h5fzpy_exec *ex);

/* h5fzpy_decode with opts (NULL: the environment alone) in force for the
 * call. H5FZ_ERR_ARG for a field out of its range. */
H5FZPY_EXPORT int h5fzpy_decode_with(const h5fzpy_options *opts, const unsigned *cd, size_t n_cd, const h5fzpy_geom *g,
                                     h5fzpy_source source, void *ctx, void *data, int on_device, h5fzpy_exec *ex);

/* Make opts the options of every h5fz call of this process that has none
 * of its own (NULL: the environment again; field by field, a call's opts
 * still win): this library's copy of the codec (h5fz.write / h5fz.read
 * without options) and every h5fz plugin copy loaded in the process, which
 * h5py's own reads and writes of h5fz datasets run (load the plugin before:
 * h5py.h5z.filter_avail, as `import h5fz` does; a copy loaded later is not
 * told). *told (may be NULL): how many plugin copies took them. 0;
 * H5FZ_ERR_ARG (nothing changed) for a field out of its range;
 * H5FZ_ERR_UNSUPPORTED when a loaded plugin copy refused them (an older
 * plugin: it keeps the environment; this library and the copies that took
 * them have the options). */
H5FZPY_EXPORT int h5fzpy_set_process_options(const h5fzpy_options *opts, int *told);

/* Not exported: record why (a bad option) as this library's last error
 * (h5fzpy_last_error) and return H5FZ_ERR_ARG. In h5fz_py.c, which keeps
 * the message. */
int h5fz_py_fail_arg(const char *why);

#endif /* H5FZ_PY_OPTIONS_H */
