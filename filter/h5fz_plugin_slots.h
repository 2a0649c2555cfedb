/*
 * h5fz_plugin_slots.h - which libhdf5 copies of the process this plugin
 * file is bound to: one slot per copy, each with its own binding
 * (h5fz_hdf5_binding.h) and its own filter class (h5fz_plugin.c).
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

#include "h5fz_hdf5_binding.h"

/* libhdf5 copies one process can bind (a 9th copy is told the filter is
 * unavailable). Eight is several times what any known stack loads. */
#define H5FZ_SLOTS 8

/* Returned instead of a slot: addr / the path / the global scope is not a
 * libhdf5; every slot is taken; it is a libhdf5 that lacks a symbol the
 * plugin needs (older than 1.10). */
#define H5FZ_SLOT_NOT_HDF5 (-1)
#define H5FZ_SLOT_FULL (-2)
#define H5FZ_SLOT_UNUSABLE (-3)

/* Slot k's binding, or NULL while slot k is free (0 <= k < H5FZ_SLOTS). */
const h5fz_hdf5_api *h5fz_slot_api(int k);

/* The load address of slot k's libhdf5, or NULL while slot k is free. */
const void *h5fz_slot_base(int k);

/* The slot bound to the libhdf5 loaded at base, or -1 when none is. */
int h5fz_slot_of_base(const void *base);

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
