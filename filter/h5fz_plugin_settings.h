/*
 * h5fz_plugin_settings.h - how a program tells the filter plugin's copy of
 * the codec about its settings (fusion/h5fz_settings.h).
 *
 * Why: h5fz reads its H5FZ_* variables once per process, a snapshot at
 * the first read, and the plugin that libhdf5 loads is a separate copy of
 * the codec with its own snapshot (its symbols are private). A setenv
 * after the plugin's first read no longer reaches it, so a caller that
 * decides something later (h5fz_mpi_select_gpu: a rank's GPU) or a test
 * that switches a variable between calls hands it over here: the caller
 * finds this entry point in the loaded plugin with dlsym and calls it.
 * Keep the struct append-only and raise H5FZ_PLUGIN_SETTINGS_VERSION on
 * any change. No HDF5 here.
 */
#ifndef H5FZ_PLUGIN_SETTINGS_H
#define H5FZ_PLUGIN_SETTINGS_H

#include <stdint.h>

#define H5FZ_PLUGIN_SETTINGS_VERSION 1u

/* The plugin's exported entry point (dlsym name) and its type. */
#define H5FZ_PLUGIN_SETTINGS_SYMBOL "h5fz_plugin_settings"

typedef struct {
  uint32_t version;    /* H5FZ_PLUGIN_SETTINGS_VERSION */
  uint32_t reload;     /* 1: take the environment's snapshot again first (h5fz_settings_reload) */
  int32_t gpu_ordinal; /* 0..1023: the process's GPU from now on (h5fz_settings_set_gpu_ordinal); -1: unchanged */
} h5fz_plugin_settings_msg;

/* The entry point: applies *m to the plugin's copy (reload, then the
 * ordinal). Call it with no h5fz call in flight. 0, or -1 for a version
 * this plugin does not know or an ordinal out of range (nothing changed). */
typedef int (*h5fz_plugin_settings_fn)(const h5fz_plugin_settings_msg *m);

#endif /* H5FZ_PLUGIN_SETTINGS_H */
