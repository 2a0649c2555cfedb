/*
 * h5fz_hdf5_bind.h - how the plugin binds one libhdf5 at run time
 * (h5fz_hdf5_bind.c): the filter class's table (h5fz_hdf5_api,
 * H5FZ_HDF5_SYMBOLS in h5fz_filter_class.h) filled from a dlopen handle.
 *
 * The plugin is NOT linked to libhdf5. A process can hold several libhdf5
 * copies (an h5py wheel carries a private one, loaded RTLD_LOCAL), and
 * hid_t values and the H5E_*_g / H5T_*_g globals belong to one copy, so
 * every HDF5 call of the filter goes through a table bound here
 * (docs/filter.md, "Self-binding"); which copies are bound, and to which
 * filter class, is h5fz_plugin_slots.h's job.
 */
#ifndef H5FZ_HDF5_BIND_H
#define H5FZ_HDF5_BIND_H

#include "h5fz_filter_class.h"

/* The load address (dli_fbase) of the object that defines H5open as seen
 * from handle (a dlopen handle or RTLD_DEFAULT), or NULL when there is no
 * H5open there. A libhdf5 is an object whose own base this is. */
const void *h5fz_hdf5_base(void *handle);

/* Fill *out with every symbol of H5FZ_HDF5_SYMBOLS from handle, the globals
 * at the addresses that libhdf5's own code uses (its GOT, h5fz_elf_got.h).
 * Calls no HDF5 function. Returns 0, or -1 (out undefined) when a symbol is
 * missing: handle is not (or does not lead to) a libhdf5 1.10 or later. */
int h5fz_hdf5_bind(void *handle, h5fz_hdf5_api *out);

#endif /* H5FZ_HDF5_BIND_H */
