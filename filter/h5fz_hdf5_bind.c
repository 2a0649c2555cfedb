/*
 * h5fz_hdf5_bind.c - a binding to one libhdf5 (h5fz_hdf5_bind.h): every
 * function and global of the filter class's table dlsym'ed from a dlopen
 * handle, the globals then corrected from that libhdf5's GOT
 * (h5fz_elf_got.c). Which libhdf5 copies of the process are bound, and to
 * which filter class, is h5fz_plugin_slots.c's job.
 *
 * Globals are read through their addresses at call time, after H5open (as
 * the HDF5 macros do), never copied at bind time. The function pointer
 * types are taken from the HDF5 prototypes with __typeof__, so a signature
 * change in the headers shows up at compile time; no HDF5 function is
 * called here.
 */
#include <dlfcn.h>
#include <string.h>

#include "h5fz_elf_got.h"
#include "h5fz_hdf5_bind.h"

const void *h5fz_hdf5_base(void *handle)
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

int h5fz_hdf5_bind(void *handle, h5fz_hdf5_api *out)
{
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
  *out = a;
  return 0;
}
