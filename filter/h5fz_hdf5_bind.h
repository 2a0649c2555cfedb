/*
 * h5fz_hdf5_bind.h - the plugin's run-time binding to the libhdf5 that
 * loads it (h5fz_hdf5_bind.c): the HDF5 functions and globals the plugin
 * uses, as one table of pointers taken from that very library.
 *
 * The plugin is NOT linked to libhdf5. A process can hold several libhdf5
 * copies (an h5py wheel carries a private one, loaded RTLD_LOCAL), and
 * hid_t values and the H5E_*_g / H5T_*_g globals belong to one copy:
 * calling another copy with them fails ("error during user callback"). So
 * every HDF5 call of the filter goes through the table bound here
 * (docs/filter.md, "Self-binding"; HDF5_NOTES.md, "Two copies of libhdf5
 * in one process").
 */
#ifndef H5FZ_HDF5_BIND_H
#define H5FZ_HDF5_BIND_H

#include "h5fz_filter_class.h"

/* The table (h5fz_hdf5_api, H5FZ_HDF5_SYMBOLS) and the bound state are the
 * filter class's (h5fz_filter_class.h): binding here fills the table from
 * the loading libhdf5 and hands it to h5fz_filter_bind, so the plugin and
 * the library mode share one binding. */

/* For the plugin entry points: bind to the libhdf5 whose code holds caller
 * (their return address) if it is one, else to a libhdf5 in the global
 * scope. 0 when the caller may use the filter class (bound to it, or it is
 * not a libhdf5), -1 when the caller is a libhdf5 other than the bound one.
 * The binding is made once, for the life of the process. */
int h5fz_hdf5_bind_entry(const void *caller);

#endif /* H5FZ_HDF5_BIND_H */
