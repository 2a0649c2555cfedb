/*
 * h5fz_plugin_slots.c - the table of libhdf5 copies this plugin file is
 * bound to (h5fz_plugin_slots.h). Readers (the filter callbacks, on every
 * chunk) take no lock: a slot's binding is written before its `bound` flag
 * is stored with release order, and read after an acquire load of it.
 */
#include "h5fz_plugin_slots.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>

typedef struct slot {
  h5fz_hdf5_api api;
  const void *base; /* dli_fbase of the libhdf5 */
  int bound;        /* set once, with release order, after api and base */
} slot;

static slot g_slots[H5FZ_SLOTS];
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

static int is_bound(int k) { return __atomic_load_n(&g_slots[k].bound, __ATOMIC_ACQUIRE); }

const h5fz_hdf5_api *h5fz_slot_api(int k)
{
  return k >= 0 && k < H5FZ_SLOTS && is_bound(k) ? &g_slots[k].api : NULL;
}

const void *h5fz_slot_base(int k) { return k >= 0 && k < H5FZ_SLOTS && is_bound(k) ? g_slots[k].base : NULL; }

int h5fz_slot_of_base(const void *base)
{
  if (!base) return -1;
  for (int k = 0; k < H5FZ_SLOTS; k++)
    if (is_bound(k) && g_slots[k].base == base) return k;
  return -1;
}

/* The slot of the libhdf5 at base, reached through handle: the existing
 * one, or a free one bound from handle. closable: handle came from dlopen
 * and is closed unless a new slot keeps it (a bound library stays loaded
 * for the life of the process). A slot, or H5FZ_SLOT_FULL/UNUSABLE. */
static int claim(void *handle, const void *base, int closable)
{
  pthread_mutex_lock(&g_lock);
  int k = h5fz_slot_of_base(base);
  int kept = 0;
  if (k < 0) {
    int free_k = -1;
    for (int i = 0; i < H5FZ_SLOTS && free_k < 0; i++)
      if (!g_slots[i].bound) free_k = i;
    h5fz_hdf5_api a;
    if (free_k < 0)
      k = H5FZ_SLOT_FULL;
    else if (h5fz_hdf5_bind(handle, &a) != 0)
      k = H5FZ_SLOT_UNUSABLE;
    else {
      g_slots[free_k].api = a;
      g_slots[free_k].base = base;
      __atomic_store_n(&g_slots[free_k].bound, 1, __ATOMIC_RELEASE);
      k = free_k;
      kept = 1;
    }
  }
  pthread_mutex_unlock(&g_lock);
  if (closable && !kept) dlclose(handle);
  return k;
}

int h5fz_slot_for_caller(const void *addr)
{
  Dl_info info;
  if (!addr || !dladdr(addr, &info) || !info.dli_fbase) return H5FZ_SLOT_NOT_HDF5;
  int k = h5fz_slot_of_base(info.dli_fbase);
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
  int k = h5fz_slot_of_base(base);
  return k >= 0 ? k : claim(RTLD_DEFAULT, base, 0);
}
