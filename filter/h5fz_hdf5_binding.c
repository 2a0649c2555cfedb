/*
 * h5fz_hdf5_binding.c - making a binding (h5fz_hdf5_binding.h) from a
 * dlopen handle: dlsym for the functions, libhdf5's own GOT for the
 * globals. Stateless: h5fz_plugin_slots.c keeps the bindings.
 */
#include "h5fz_hdf5_binding.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <string.h>

const void *h5fz_hdf5_base(void *handle)
{
  void *sym = dlsym(handle, "H5open");
  Dl_info info;
  if (!sym || !dladdr(sym, &info)) return NULL;
  return info.dli_fbase;
}

/* ---- where libhdf5 itself keeps its globals ----
 * dlsym(handle, "H5T_IEEE_F32LE_g") gives libhdf5's own definition, but the
 * library's code may use another one: when a program linked to libhdf5
 * reads a global (the H5T_NATIVE_* macros do), the linker makes a copy of it
 * in the program (copy relocation) and libhdf5's GOT points at that copy;
 * the definition inside libhdf5 then never leaves its initial -1. The exact
 * address libhdf5 uses is in its GOT: the GLOB_DAT relocation naming the
 * symbol. So the globals are taken from there, and from dlsym only where
 * libhdf5 has no such relocation (-Bsymbolic, a static build). */
#if defined(__x86_64__)
#define H5FZ_R_GLOB_DAT R_X86_64_GLOB_DAT
#elif defined(__aarch64__)
#define H5FZ_R_GLOB_DAT R_AARCH64_GLOB_DAT
#elif defined(__powerpc64__)
#define H5FZ_R_GLOB_DAT R_PPC64_GLOB_DAT
#endif

#define H5FZ_VAR_NAME(name) #name,
static const char *const k_var_names[] = {H5FZ_HDF5_VARS(H5FZ_VAR_NAME)};
#undef H5FZ_VAR_NAME
#define H5FZ_NVARS (sizeof k_var_names / sizeof k_var_names[0])

#if defined(H5FZ_R_GLOB_DAT) && __SIZEOF_POINTER__ == 8
typedef struct got_query {
  uintptr_t inside;       /* an address in the libhdf5 (its H5open) */
  void *addr[H5FZ_NVARS]; /* out: the address of each global libhdf5 uses */
} got_query;

static int got_scan(struct dl_phdr_info *info, size_t size, void *data)
{
  (void)size;
  got_query *q = data;
  const ElfW(Dyn) *dyn = NULL;
  int inside = 0;
  for (size_t i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
    if (ph->p_type == PT_LOAD && q->inside >= lo && q->inside < lo + ph->p_memsz)
      inside = 1;
    else if (ph->p_type == PT_DYNAMIC)
      dyn = (const ElfW(Dyn) *)lo;
  }
  if (!inside) return 0;
  if (!dyn) return 1;
  uintptr_t symtab = 0, strtab = 0, rela = 0, relasz = 0, jmprel = 0, pltrelsz = 0;
  uintptr_t relaent = sizeof(ElfW(Rela));
  for (; dyn->d_tag != DT_NULL; dyn++) {
    switch (dyn->d_tag) {
    case DT_SYMTAB: symtab = dyn->d_un.d_ptr; break;
    case DT_STRTAB: strtab = dyn->d_un.d_ptr; break;
    case DT_RELA: rela = dyn->d_un.d_ptr; break;
    case DT_RELASZ: relasz = dyn->d_un.d_val; break;
    case DT_RELAENT: relaent = dyn->d_un.d_val; break;
    case DT_JMPREL: jmprel = dyn->d_un.d_ptr; break;
    case DT_PLTRELSZ: pltrelsz = dyn->d_un.d_val; break;
    default: break;
    }
  }
  /* glibc relocates these entries in place on most targets; where it does
   * not (read-only .dynamic), they are still offsets from the load bias. */
#define H5FZ_ABS(p) ((p) && (p) < info->dlpi_addr ? (p) + info->dlpi_addr : (p))
  symtab = H5FZ_ABS(symtab);
  strtab = H5FZ_ABS(strtab);
  rela = H5FZ_ABS(rela);
  jmprel = H5FZ_ABS(jmprel);
#undef H5FZ_ABS
  if (!symtab || !strtab || relaent < sizeof(ElfW(Rela))) return 1;
  const uintptr_t tables[2][2] = {{rela, relasz}, {jmprel, pltrelsz}};
  for (int t = 0; t < 2; t++) {
    if (!tables[t][0]) continue;
    for (uintptr_t off = 0; off + relaent <= tables[t][1]; off += relaent) {
      const ElfW(Rela) *r = (const ElfW(Rela) *)(tables[t][0] + off);
      if (ELF64_R_TYPE(r->r_info) != H5FZ_R_GLOB_DAT) continue;
      const ElfW(Sym) *sym = (const ElfW(Sym) *)symtab + ELF64_R_SYM(r->r_info);
      const char *name = (const char *)strtab + sym->st_name;
      for (size_t k = 0; k < H5FZ_NVARS; k++)
        if (!q->addr[k] && strcmp(name, k_var_names[k]) == 0)
          q->addr[k] = *(void *const *)(info->dlpi_addr + r->r_offset);
    }
  }
  return 1;
}

/* The addresses libhdf5 (the object holding `inside`) uses for the
 * globals; NULL where its GOT does not say. */
static void globals_from_got(const void *inside, void *addr[H5FZ_NVARS])
{
  got_query q;
  memset(&q, 0, sizeof q);
  q.inside = (uintptr_t)inside;
  dl_iterate_phdr(got_scan, &q);
  memcpy(addr, q.addr, sizeof q.addr);
}
#else
static void globals_from_got(const void *inside, void *addr[H5FZ_NVARS])
{
  (void)inside;
  memset(addr, 0, H5FZ_NVARS * sizeof addr[0]);
}
#endif

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
  void *got[H5FZ_NVARS];
  void *h5open_addr;
  memcpy(&h5open_addr, &a.H5open, sizeof h5open_addr);
  globals_from_got(h5open_addr, got);
  size_t k = 0;
#define H5FZ_FROM_GOT(name)                                                                                            \
  if (got[k]) memcpy(&a.name, &got[k], sizeof got[k]);                                                                 \
  k++;
  H5FZ_HDF5_VARS(H5FZ_FROM_GOT)
#undef H5FZ_FROM_GOT
  *out = a;
  return 0;
}
