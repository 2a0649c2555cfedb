/*
 * h5fz_elf_got.h - the addresses a loaded shared object really uses for
 * some of its global variables, read from its GOT (the plugin's
 * self-binding to libhdf5, h5fz_hdf5_bind.c). Linux/ELF only; no HDF5.
 */
#ifndef H5FZ_ELF_GOT_H
#define H5FZ_ELF_GOT_H

#include <stddef.h>

/* For each of the n global variables named in names[], the address that
 * the object whose code holds `inside` (an address in it, e.g. one of its
 * functions) uses for it: the target of its GLOB_DAT relocation naming the
 * variable. addr[k] is set only where it is NULL on entry and the object
 * has such a relocation, so the caller fills it with NULL first and keeps
 * its dlsym'ed address where this leaves NULL (no relocation: -Bsymbolic,
 * a static build; or an architecture or ELF class this does not read). */
void h5fz_elf_got_addresses(const void *inside, const char *const names[], size_t n, void *addr[]);

#endif /* H5FZ_ELF_GOT_H */
