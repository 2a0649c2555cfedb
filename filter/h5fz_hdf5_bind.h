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

#include <hdf5.h>

/* Every HDF5 function and global the plugin uses. Same names, same
 * prototypes in HDF5 1.10, 1.12, 1.14 and 2.0 (docs/filter.md). */
#define H5FZ_HDF5_FUNCS(X)                                                                                             \
  X(H5open)                                                                                                            \
  X(H5Epush2)                                                                                                          \
  X(H5Eget_auto2)                                                                                                      \
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
 * pointer for a function, a hid_t * for a global. __typeof__ does not
 * evaluate its operand, so no link-time reference to libhdf5 is made. */
typedef struct h5fz_hdf5_api {
#define H5FZ_MEMBER(name) __typeof__(&name) name;
  H5FZ_HDF5_SYMBOLS(H5FZ_MEMBER)
#undef H5FZ_MEMBER
} h5fz_hdf5_api;

/* The bound table, or NULL when no libhdf5 is bound yet. The globals'
 * members point at the hid_t libhdf5 itself uses: read them after H5open,
 * at call time, as HDF5's macros do. */
const h5fz_hdf5_api *h5fz_hdf5_api_bound(void);

/* The load address (dli_fbase) of the bound libhdf5, or NULL when none is. */
const void *h5fz_hdf5_bound_base(void);

/* For the plugin entry points: bind to the libhdf5 whose code holds caller
 * (their return address) if it is one, else to a libhdf5 in the global
 * scope. 0 when the caller may use the filter class (bound to it, or it is
 * not a libhdf5), -1 when the caller is a libhdf5 other than the bound one.
 * The binding is made once, for the life of the process. */
int h5fz_hdf5_bind_entry(const void *caller);

#endif /* H5FZ_HDF5_BIND_H */
