/*
 * h5fz_plugin_settings.h - how a program tells the filter plugin's copy of
 * the codec about its settings (fusion/h5fz_settings.h), and the one walk
 * over the plugin copies loaded in a process that tells them.
 *
 * Why: h5fz reads its H5FZ_* variables once per process, a snapshot at
 * the first read, and the plugin that libhdf5 loads is a separate copy of
 * the codec with its own snapshot (its symbols are private). A setenv
 * after the plugin's first read no longer reaches it, and HDF5 hands the
 * filter cd_values only (no per-dataset context; runtime options never go
 * into the file), so a caller that decides something later
 * (h5fz_mpi_select_gpu: a rank's GPU; h5fz_set_process_options: the
 * process's options) or a test that switches a variable between calls
 * hands it over here: the caller finds this entry point in the loaded
 * plugin with dlsym and calls it (h5fz_plugin_copies_tell). Keep the
 * struct append-only and raise H5FZ_PLUGIN_SETTINGS_VERSION on any
 * change; a plugin takes every version up to its own. No HDF5 here.
 */
#ifndef H5FZ_PLUGIN_SETTINGS_H
#define H5FZ_PLUGIN_SETTINGS_H

#include <stddef.h>
#include <stdint.h>

#include "h5fz_settings.h"

/* 1: reload and gpu_ordinal; 2: the process's options too. */
#define H5FZ_PLUGIN_SETTINGS_VERSION 2u

/* The plugin's exported entry point (dlsym name) and its type. */
#define H5FZ_PLUGIN_SETTINGS_SYMBOL "h5fz_plugin_settings"

/* Options in a fixed portable layout, -1 (cache_dir "") in a field: not
 * set. The layout of python/src/h5fz_py_options.h's h5fzpy_options (a
 * typedef of this), which ctypes fills. */
#define H5FZ_PLUGIN_CACHE_DIR_MAX 1024
typedef struct {
  int32_t device;                            /* 0 auto, 1 cpu, 2 gpu (H5FZ_DEVICE) */
  int32_t gpu_ordinal;                       /* 0..1023 (H5FZ_GPU_ORDINAL) */
  int32_t threads;                           /* 0 (a thread a core) or 1..1024 (H5FZ_THREADS) */
  int32_t strict;                            /* 0 or 1: a device problem fails the call (H5FZ_DEVICE_STRICT) */
  int32_t quiet;                             /* 0 or 1: h5fz's warnings stay silent (H5FZ_QUIET) */
  char cache_dir[H5FZ_PLUGIN_CACHE_DIR_MAX]; /* the JIT cache folder (H5FZ_CACHE_DIR), NUL-terminated */
} h5fz_plugin_options;

/* h5fz_plugin_settings_msg.process */
#define H5FZ_PLUGIN_PROCESS_KEEP 0u  /* the process's options stay as they are */
#define H5FZ_PLUGIN_PROCESS_SET 1u   /* options become the process's (h5fz_overrides_set_process) */
#define H5FZ_PLUGIN_PROCESS_CLEAR 2u /* the process has none: the environment again */

typedef struct {
  uint32_t version;    /* 1 or 2 (H5FZ_PLUGIN_SETTINGS_VERSION) */
  uint32_t reload;     /* 1: take the environment's snapshot again first (h5fz_settings_reload) */
  int32_t gpu_ordinal; /* 0..1023: the process's GPU from now on (h5fz_settings_set_gpu_ordinal); -1: unchanged */
  /* version 2 */
  uint32_t process;            /* H5FZ_PLUGIN_PROCESS_* */
  h5fz_plugin_options options; /* with H5FZ_PLUGIN_PROCESS_SET */
} h5fz_plugin_settings_msg;

/* The entry point: applies *m to the plugin's copy (reload, then the
 * ordinal, then the process's options). Call it with no h5fz call in
 * flight for a reload or an ordinal; the options may change under calls
 * on other threads (each read takes them once). 0, or -1 (nothing
 * changed) for NULL, a version this plugin does not know, or a field out
 * of range. */
typedef int (*h5fz_plugin_settings_fn)(const h5fz_plugin_settings_msg *m);

/* ---- the portable options (h5fz_plugin_options.c) ----------------------------------- */

/* Every field unset. */
void h5fz_plugin_options_init(h5fz_plugin_options *p);

/* *p as the codec's overrides *o. 0, or -1 with the reason (naming the
 * field) in why (len bytes) for a field out of its range or a cache_dir
 * without its NUL. */
int h5fz_plugin_options_to_overrides(const h5fz_plugin_options *p, h5fz_overrides *o, char *why, size_t len);

/* The overrides *o in the portable layout *p (a field unset: -1). */
void h5fz_plugin_options_of_overrides(const h5fz_overrides *o, h5fz_plugin_options *p);

/* ---- the plugin copies of a process (h5fz_plugin_copies.c) -------------------------- */

/* Call visit(sym, ctx) with the address of `symbol` in each object loaded
 * in this process that exports it (every plugin copy, whichever libhdf5
 * loaded it, RTLD_LOCAL or not; once a copy), until visit returns
 * nonzero. Returns that value, or 0. Opens nothing that is not loaded
 * (dlopen RTLD_NOLOAD). For the collective API's search of the copy bound
 * to its libhdf5 (h5fz_plugin_prepared) and h5fz_plugin_copies_tell. */
int h5fz_plugin_copies_each(const char *symbol, int (*visit)(void *sym, void *ctx), void *ctx);

/* Hand *m to every loaded plugin copy's h5fz_plugin_settings. Returns how
 * many took it; *refused (may be NULL) how many refused it (an older plugin
 * that does not know m's version). A copy loaded later is not told: call
 * again after HDF5 loaded it (H5Zfilter_avail loads it from
 * HDF5_PLUGIN_PATH). */
int h5fz_plugin_copies_tell(const h5fz_plugin_settings_msg *m, int *refused);

#endif /* H5FZ_PLUGIN_SETTINGS_H */
