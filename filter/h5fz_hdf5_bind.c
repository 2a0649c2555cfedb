/*
 * h5fz_hdf5_bind.c - the plugin's self-binding to the libhdf5 that loads it
 * (h5fz_hdf5_bind.h):
 *
 *   - H5PLget_plugin_type/H5PLget_plugin_info find the calling library with
 *     dladdr(__builtin_return_address(0)); when it exports H5open, every
 *     function and global of the table is dlsym'ed from it (RTLD_NOLOAD
 *     handle), the globals then corrected from its GOT (h5fz_elf_got.c).
 *   - Otherwise (a ctypes caller), the global scope (RTLD_DEFAULT) is tried,
 *     and init_filter(libhdf5_path) binds explicitly.
 *   - Globals are read through their addresses at call time, after H5open
 *     (as the HDF5 macros do), never copied at bind time.
 *   - The binding is made once. A different libhdf5 copy that later loads
 *     this same plugin file gets NULL from H5PLget_plugin_info (filter not
 *     available there) instead of a class that would call the wrong copy.
 *
 * The function pointer types are taken from the HDF5 prototypes with
 * __typeof__, so a signature change in the headers shows up at compile
 * time; no HDF5 function is called here.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <string.h>

#include "h5fz_elf_got.h"
#include "h5fz_hdf5_bind.h"

#define H5FZ_EXPORT __attribute__((visibility("default")))

/* Serializes the dlsym work of concurrent first calls (h5fz_filter_bind
 * itself is thread-safe; this keeps two threads from both doing it). */
static pthread_mutex_t g_bind_lock = PTHREAD_MUTEX_INITIALIZER;

/* Base address of the object that defines H5open in handle, or NULL. */
static const void *h5open_base(void *handle)
{
  void *sym = dlsym(handle, "H5open");
  Dl_info info;
  if (!sym || !dladdr(sym, &info)) return NULL;
  return info.dli_fbase;
}

/* The globals' names, in the order of H5FZ_HDF5_VARS, for the GOT scan. */
#define H5FZ_VAR_NAME(name) #name,
static const char *const k_var_names[] = {H5FZ_HDF5_VARS(H5FZ_VAR_NAME)};
#undef H5FZ_VAR_NAME
#define H5FZ_NVARS (sizeof k_var_names / sizeof k_var_names[0])

/* Bind every symbol from handle, which must be (or lead to) the libhdf5
 * whose base address is base. Caller holds g_bind_lock. 1 newly bound, 0
 * already bound to that library, -1 failed or bound to another one. */
static int bind_handle_locked(void *handle, const void *base)
{
  const void *bound = h5fz_filter_bound_base();
  if (bound) return base == bound ? 0 : -1;
  h5fz_hdf5_api a;
  memset(&a, 0, sizeof a);
#define H5FZ_BIND(name)                                                                                                \
  {                                                                                                                    \
    void *p = dlsym(handle, #name);                                                                                    \
    if (!p) return -1;                                                                                                 \
    memcpy(&a.name, &p, sizeof p);                                                                                     \
  }
  H5FZ_HDF5_SYMBOLS(H5FZ_BIND)
#undef H5FZ_BIND
  /* the globals libhdf5's own code uses, where its GOT says (h5fz_elf_got.h) */
  void *got[H5FZ_NVARS] = {NULL};
  void *h5open_addr;
  memcpy(&h5open_addr, &a.H5open, sizeof h5open_addr);
  h5fz_elf_got_addresses(h5open_addr, k_var_names, H5FZ_NVARS, got);
  size_t k = 0;
#define H5FZ_FROM_GOT(name)                                                                                            \
  if (got[k]) memcpy(&a.name, &got[k], sizeof got[k]);                                                                 \
  k++;
  H5FZ_HDF5_VARS(H5FZ_FROM_GOT)
#undef H5FZ_FROM_GOT
  return h5fz_filter_bind(&a, base);
}

/* Bind to the libhdf5 whose code contains addr (the caller of an entry
 * point). 1 bound (or already bound to that very library), 0 addr is not in
 * a libhdf5, -1 addr is in a libhdf5 other than the bound one. */
static int bind_to_caller(const void *addr)
{
  Dl_info info;
  if (!addr || !dladdr(addr, &info) || !info.dli_fbase) return 0;
  if (info.dli_fbase == h5fz_filter_bound_base()) return 1; /* the common case: the same libhdf5 calls again */
  /* dli_fname of the main program may not be a usable path: then try the
   * global scope, which starts with the main program. */
  void *handle = info.dli_fname && info.dli_fname[0] ? dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD) : NULL;
  if (!handle) handle = dlopen(NULL, RTLD_NOW);
  if (!handle) return 0;
  int rc = 0;
  /* A libhdf5 is an object that itself defines H5open (not merely one whose
   * dependencies do). */
  if (h5open_base(handle) == info.dli_fbase) {
    pthread_mutex_lock(&g_bind_lock);
    int b = bind_handle_locked(handle, info.dli_fbase);
    pthread_mutex_unlock(&g_bind_lock);
    rc = b < 0 ? -1 : 1;
    if (b == 1) return 1; /* a bound handle stays open for the life of the process */
  }
  dlclose(handle);
  return rc;
}

/* Callers that are not libhdf5: a libhdf5 in the global scope (a program
 * linked to it, or one loaded RTLD_GLOBAL). */
static void bind_from_global_scope(void)
{
  if (h5fz_filter_api()) return;
  const void *base = h5open_base(RTLD_DEFAULT);
  if (!base) return;
  pthread_mutex_lock(&g_bind_lock);
  (void)bind_handle_locked(RTLD_DEFAULT, base);
  pthread_mutex_unlock(&g_bind_lock);
}

int h5fz_hdf5_bind_entry(const void *caller)
{
  int rc = bind_to_caller(caller);
  if (rc < 0) return -1;
  if (rc == 0) bind_from_global_scope();
  return 0;
}

/* Explicit binding for callers that are not libhdf5 (ctypes registration,
 * as hdf5plugin does): libhdf5_path is the libhdf5 the caller uses (for
 * h5py, the one h5py loaded). Returns 0 when bound to it (or it was already
 * bound to that very library), -1 when it cannot be opened or is not a
 * libhdf5, or another libhdf5 is bound already. */
H5FZ_EXPORT int init_filter(const char *libhdf5_path)
{
  if (!libhdf5_path || !libhdf5_path[0]) return -1;
  void *handle = dlopen(libhdf5_path, RTLD_NOW | RTLD_LOCAL);
  if (!handle) return -1;
  const void *base = h5open_base(handle);
  Dl_info info;
  int b = -1;
  /* The path must name a libhdf5 itself, not something depending on one. */
  if (base && dladdr(dlsym(handle, "H5open"), &info) && info.dli_fbase == base) {
    void *self = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
    int is_itself = self != NULL && h5open_base(self) == base;
    if (self) dlclose(self);
    if (is_itself) {
      pthread_mutex_lock(&g_bind_lock);
      b = bind_handle_locked(handle, base);
      pthread_mutex_unlock(&g_bind_lock);
    }
  }
  if (b != 1) dlclose(handle); /* a bound handle stays open for the life of the process */
  return b < 0 ? -1 : 0;
}