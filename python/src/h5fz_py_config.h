/*
 * h5fz_py_config.h - what h5fz.get_config() reports of the executor: the
 * GPU the planner sees and the kernel class it would choose. Part of the
 * Python package's C library (h5fz_py.h has the conventions).
 */
#ifndef H5FZ_PY_CONFIG_H
#define H5FZ_PY_CONFIG_H

#include <stddef.h>

#include "h5fz_py.h"

/* What the executor would be, as one JSON object into buf (cap bytes):
 * {"device_setting", "gpu_present", "gpu", "gpu_absent_reason",
 *  "compute_capability", "nvrtc", "kernel_class", "executor", "threads"
 *  (the CPU executor's host threads per chunk, h5fz_host_threads)} for the
 * default chain on GPU ordinal H5FZ_GPU_ORDINAL (0); H5FZ_DEVICE and
 * H5FZ_GPU_ORDINAL as the codec reads them (h5fz_settings_read: a bad
 * value is the default, with the codec's one warning). Asks the driver (no
 * kernel is compiled). H5FZ_ERR_ARG when buf is too small. */
H5FZPY_EXPORT int h5fzpy_config_json(char *buf, size_t cap);

#endif /* H5FZ_PY_CONFIG_H */
