/*
 * h5fz_register.c - the library mode of the h5fz filter
 * (h5fz_register_filter, h5fz_dataset.h): the filter class the plugin
 * serves (filter/h5fz_filter_class.c, the same code, linked into this
 * library) bound to the libhdf5 this program links and registered with
 * H5Zregister, so the program needs no plugin and no HDF5_PLUGIN_PATH.
 *
 * The plugin finds its libhdf5 at run time (dlsym); here the linker already
 * did: the table holds the addresses of the functions and globals this
 * program uses, which are the ones its libhdf5 uses (a global copied into
 * the program by a copy relocation is the copy libhdf5 reads too).
 */
#include <dlfcn.h>
#include <string.h>

#include "h5fz_dataset.h"
#include "h5fz_error.h"
#include "h5fz_filter_class.h"

/* The identity of the libhdf5 this program links: the load address of the
 * object holding H5open (the program itself when HDF5 is linked
 * statically). */
static const void *linked_hdf5_base(void)
{
  void *h5open;
  __typeof__(&H5open) fn = &H5open;
  memcpy(&h5open, &fn, sizeof h5open);
  Dl_info info;
  return dladdr(h5open, &info) && info.dli_fbase ? info.dli_fbase : h5open;
}

int h5fz_register_filter(void)
{
  h5fz_clear_error();
  h5fz_hdf5_api a;
#define H5FZ_LINKED(name) a.name = &name;
  H5FZ_HDF5_SYMBOLS(H5FZ_LINKED)
#undef H5FZ_LINKED
  int slot = h5fz_filter_bind(&a, linked_hdf5_base());
  if (slot < 0)
    return h5fz_fail(H5FZ_ERR_HDF5,
                     "h5fz_register_filter: every one of this library's %d filter-class slots is "
                     "bound to another libhdf5",
                     H5FZ_SLOTS);
  if (H5Zregister(h5fz_filter_class(slot)) < 0)
    return h5fz_fail(H5FZ_ERR_HDF5, "h5fz_register_filter: H5Zregister refused the h5fz filter class (id %d)",
                     H5FZ_FILTER_ID);
  return H5FZ_OK;
}
