/*
 * h5fz_filter_class.h - the h5fz filter's H5Z_class2_t and the libhdf5 its
 * callbacks call, shared by the plugin (h5fz_plugin.c, which binds the
 * class to the libhdf5 that loads it, at run time) and the library mode of
 * api/ (h5fz_register.c, which binds it to the libhdf5 the program links
 * and hands it to H5Zregister).
 *
 * The callbacks call HDF5 only through a bound table below, never by
 * name: the plugin is not linked to libhdf5 (docs/filter.md,
 * "Self-binding"), and a process may hold several libhdf5 copies, one slot
 * each. Unbound, every callback fails cleanly (can_apply and set_local -1,
 * the filter 0) and calls nothing.
 */
#ifndef H5FZ_FILTER_CLASS_H
#define H5FZ_FILTER_CLASS_H

#include <hdf5.h>

#ifndef H5FZ_FILTER_ID
#error "H5FZ_FILTER_ID must be defined by the build (CMake option H5FZ_FILTER_ID)"
#endif

/* Every HDF5 function and global the filter class uses. Same names, same
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

/* libhdf5 copies one process can bind, each with its own binding and its
 * own filter class (H5Z callbacks carry no user pointer: slot k's class
 * calls slot k's table). A 9th copy is told the filter is unavailable;
 * eight is several times what any known stack loads. */
#define H5FZ_SLOTS 8

/* Returned instead of a slot: not a libhdf5; every slot is taken; a
 * libhdf5 that lacks a symbol the filter needs (older than 1.10). */
#define H5FZ_SLOT_NOT_HDF5 (-1)
#define H5FZ_SLOT_FULL (-2)
#define H5FZ_SLOT_UNUSABLE (-3)

/* The slot of the libhdf5 whose functions and globals a holds (every
 * member set; the globals are read through these addresses at call time,
 * after H5open); base: that libhdf5's load address, its identity. The slot
 * already bound to base (a is then unused), else a free one claimed and
 * bound to a, for the life of the process; H5FZ_SLOT_FULL when none is
 * free. Thread-safe. Per copy of this code (the plugin and api/'s library
 * have one each). */
int h5fz_filter_bind(const h5fz_hdf5_api *a, const void *base);

/* Slot k's table, or NULL while slot k is free (or k is out of range). */
const h5fz_hdf5_api *h5fz_filter_api(int k);

/* The load address of slot k's libhdf5, or NULL while slot k is free. */
const void *h5fz_filter_bound_base(int k);

/* The slot bound to the libhdf5 loaded at base, or -1 when none is. */
int h5fz_filter_slot_of_base(const void *base);

/* Slot k's filter class (id H5FZ_FILTER_ID, name "h5fz"): static storage,
 * for H5PLget_plugin_info and H5Zregister; NULL when k is out of range.
 * Its callbacks fail cleanly while slot k is free. */
const H5Z_class2_t *h5fz_filter_class(int k);

#endif /* H5FZ_FILTER_CLASS_H */
