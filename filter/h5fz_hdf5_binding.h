/*
 * h5fz_hdf5_binding.h - the HDF5 functions and globals the plugin calls,
 * reached through pointers taken from one libhdf5 at run time (the plugin
 * is not linked to libhdf5: docs/filter.md, "Self-binding").
 *
 * This file only says what a binding is and how one is made from a dlopen
 * handle; which libhdf5s of the process are bound, and to which filter
 * class, is h5fz_plugin_slots.h's job.
 */
#ifndef H5FZ_HDF5_BINDING_H
#define H5FZ_HDF5_BINDING_H

#include <hdf5.h>

/* Every HDF5 function and global the plugin uses. Same names, same
 * prototypes in HDF5 1.10, 1.12, 1.14 and 2.0 (docs/filter.md). */
#define H5FZ_HDF5_FUNCS(X)                                                                                             \
  X(H5open)                                                                                                            \
  X(H5Epush2)                                                                                                          \
  X(H5Tget_class)                                                                                                      \
  X(H5Tget_size)                                                                                                       \
  X(H5Tget_order)                                                                                                      \
  X(H5Tequal)                                                                                                          \
  X(H5Tcopy)                                                                                                           \
  X(H5Tset_order)                                                                                                      \
  X(H5Tclose)                                                                                                          \
  X(H5Pget_chunk)                                                                                                      \
  X(H5Pget_nfilters)                                                                                                   \
  X(H5Pget_filter2)                                                                                                    \
  X(H5Pget_filter_by_id2)                                                                                              \
  X(H5Pmodify_filter)                                                                                                  \
  X(H5Pfill_value_defined)                                                                                             \
  X(H5Pget_fill_value)                                                                                                 \
  X(H5Pget_fill_time)                                                                                                  \
  X(H5free_memory)
#define H5FZ_HDF5_VARS(X)                                                                                              \
  X(H5E_ERR_CLS_g)                                                                                                     \
  X(H5E_PLINE_g)                                                                                                       \
  X(H5E_CANAPPLY_g)                                                                                                    \
  X(H5E_SETLOCAL_g)                                                                                                    \
  X(H5E_CANTFILTER_g)                                                                                                  \
  X(H5T_IEEE_F32LE_g)                                                                                                  \
  X(H5T_IEEE_F64LE_g)
#define H5FZ_HDF5_SYMBOLS(X) H5FZ_HDF5_FUNCS(X) H5FZ_HDF5_VARS(X)

/* A member per symbol, typed from the header's declaration: a function
 * pointer for a function, a hid_t * for a global (read through it at call
 * time, after H5open, as HDF5's own macros do; never copied at bind time).
 * __typeof__ does not evaluate its operand, so no link-time reference to
 * libhdf5 is made, and a signature change in the headers shows up at
 * compile time. */
typedef struct h5fz_hdf5_api {
#define H5FZ_MEMBER(name) __typeof__(&name) name;
  H5FZ_HDF5_SYMBOLS(H5FZ_MEMBER)
#undef H5FZ_MEMBER
} h5fz_hdf5_api;

/* The load address (dli_fbase) of the object that defines H5open as seen
 * from handle (a dlopen handle or RTLD_DEFAULT), or NULL when there is no
 * H5open there. A libhdf5 is an object whose own base this is. */
const void *h5fz_hdf5_base(void *handle);

/* Fill *out with every symbol of H5FZ_HDF5_SYMBOLS from handle, the globals
 * at the addresses that libhdf5's own code uses (its GOT, see the .c file).
 * Calls no HDF5 function. Returns 0, or -1 (out undefined) when a symbol is
 * missing: handle is not (or does not lead to) a libhdf5 1.10 or later. */
int h5fz_hdf5_bind(void *handle, h5fz_hdf5_api *out);

#endif /* H5FZ_HDF5_BINDING_H */
