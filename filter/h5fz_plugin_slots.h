/*
 * h5fz_plugin_slots.h - which libhdf5 copies of the process this plugin
 * file is bound to: one slot per copy, each with its own binding
 * (h5fz_hdf5_bind.h) and its own filter class (h5fz_filter_class.c).
 *
 * Why slots: dlopen of one plugin file returns one handle, so every libhdf5
 * copy in a process (h5py's, the netCDF4 wheel's, the system's) that
 * searches HDF5_PLUGIN_PATH, or that the Python package registers the
 * filter with, gets this same loaded object. hid_t values and the H5E/H5T
 * globals belong to one copy, so each copy needs callbacks that call that
 * copy only: slot k's class calls slot k's binding (docs/filter.md,
 * "Several libhdf5 copies in one process").
 *
 * A slot is claimed once, under a lock, and never released (its libhdf5
 * handle stays open, so the library cannot be unloaded under the class).
 */
#ifndef H5FZ_PLUGIN_SLOTS_H
#define H5FZ_PLUGIN_SLOTS_H

#include "h5fz_filter_class.h"

/* H5FZ_SLOTS, the H5FZ_SLOT_* codes and the slot table itself
 * (h5fz_filter_api(k), h5fz_filter_slot_of_base) are the filter class's
 * (h5fz_filter_class.h); this file finds which libhdf5 a caller is. */

/* The slot of the libhdf5 whose code contains addr (an entry point's
 * return address), claimed and bound on first sight. A slot, or
 * H5FZ_SLOT_NOT_HDF5 when addr lies in an object that does not itself
 * define H5open, or H5FZ_SLOT_FULL / H5FZ_SLOT_UNUSABLE. */
int h5fz_slot_for_caller(const void *addr);

/* The slot of the libhdf5 at path (init_filter). The path must name a
 * libhdf5 itself, not an object that merely depends on one; it is opened
 * RTLD_NOW | RTLD_LOCAL (loading it if it was not loaded). A slot, or
 * H5FZ_SLOT_NOT_HDF5 / FULL / UNUSABLE. */
int h5fz_slot_for_path(const char *path);

/* The slot of the libhdf5 in the global scope (a program linked to it, or
 * one loaded RTLD_GLOBAL): what a caller that is not libhdf5 gets without
 * init_filter. A slot, or H5FZ_SLOT_NOT_HDF5 (none there) / FULL / UNUSABLE. */
int h5fz_slot_for_global_scope(void);

#endif /* H5FZ_PLUGIN_SLOTS_H */
