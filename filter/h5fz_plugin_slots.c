/*
 * h5fz_plugin_slots.c - which libhdf5 a plugin entry point's caller, a
 * path or the global scope is, and its slot (h5fz_plugin_slots.h): found
 * with dladdr/dlopen, bound with h5fz_hdf5_bind, claimed in the filter
 * class's slot table (h5fz_filter_bind), which the callbacks read.
 */
#include "h5fz_plugin_slots.h"

#include <dlfcn.h>
#include <stddef.h>

#include "h5fz_hdf5_bind.h"

/* The slot of the libhdf5 at base, reached through handle: the existing
 * one, or a free one bound from handle. closable: handle came from dlopen
 * and is closed unless a new slot keeps it (a bound library stays loaded
 * for the life of the process). A slot, or H5FZ_SLOT_FULL/UNUSABLE. */
static int claim(void *handle, const void *base, int closable)
{
  int k = h5fz_filter_slot_of_base(base);
  int kept = 0;
  if (k < 0) {
    h5fz_hdf5_api a;
    if (h5fz_hdf5_bind(handle, &a) != 0)
      k = H5FZ_SLOT_UNUSABLE;
    else {
      k = h5fz_filter_bind(&a, base);
      kept = k >= 0;
    }
  }
  if (closable && !kept) dlclose(handle);
  return k;
}

int h5fz_slot_for_caller(const void *addr)
{
  Dl_info info;
  if (!addr || !dladdr(addr, &info) || !info.dli_fbase) return H5FZ_SLOT_NOT_HDF5;
  int k = h5fz_filter_slot_of_base(info.dli_fbase);
  if (k >= 0) return k; /* the common case: the same libhdf5 calls again */
  /* dli_fname of the main program may not be a usable path: then try the
   * global scope, which starts with the main program. */
  void *handle = info.dli_fname && info.dli_fname[0] ? dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD) : NULL;
  if (!handle) handle = dlopen(NULL, RTLD_NOW);
  if (!handle) return H5FZ_SLOT_NOT_HDF5;
  /* A libhdf5 is an object that itself defines H5open (not merely one
   * whose dependencies do). */
  if (h5fz_hdf5_base(handle) != info.dli_fbase) {
    dlclose(handle);
    return H5FZ_SLOT_NOT_HDF5;
  }
  return claim(handle, info.dli_fbase, 1);
}

int h5fz_slot_for_path(const char *path)
{
  if (!path || !path[0]) return H5FZ_SLOT_NOT_HDF5;
  void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!handle) return H5FZ_SLOT_NOT_HDF5;
  const void *base = h5fz_hdf5_base(handle);
  Dl_info info;
  int is_itself = 0;
  /* The path must name a libhdf5 itself, not something depending on one. */
  if (base && dladdr(dlsym(handle, "H5open"), &info) && info.dli_fbase == base) {
    void *self = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
    is_itself = self != NULL && h5fz_hdf5_base(self) == base;
    if (self) dlclose(self);
  }
  if (!is_itself) {
    dlclose(handle);
    return H5FZ_SLOT_NOT_HDF5;
  }
  return claim(handle, base, 1);
}

int h5fz_slot_for_global_scope(void)
{
  const void *base = h5fz_hdf5_base(RTLD_DEFAULT);
  if (!base) return H5FZ_SLOT_NOT_HDF5;
  int k = h5fz_filter_slot_of_base(base);
  return k >= 0 ? k : claim(RTLD_DEFAULT, base, 0);
}
