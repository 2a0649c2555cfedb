/*
 * h5fz_plugin.c - the plugin entry points of the h5fz filter and their
 * run-time binding to the libhdf5 that loads the plugin; the class and its
 * callbacks are h5fz_filter_class.c's (shared with api/'s library mode).
 *
 * The plugin is NOT linked to libhdf5: it binds itself at run time to the
 * libhdf5 that loads it (self-binding, see docs/filter.md and HDF5_NOTES.md, "Two copies of
 * libhdf5 in one process"). A process can hold several libhdf5 copies (an
 * h5py wheel carries a private one, loaded RTLD_LOCAL), and hid_t values and
 * the H5E_*_g / H5T_*_g globals belong to one copy: calling another copy
 * with them fails ("error during user callback"). So:
 *
 *   - H5PLget_plugin_type/H5PLget_plugin_info find the calling library with
 *     dladdr(__builtin_return_address(0)); when it exports H5open, every
 *     function and global below is dlsym'ed from it (RTLD_NOLOAD handle).
 *   - Otherwise (a ctypes caller), the global scope (RTLD_DEFAULT) is tried,
 *     and init_filter(libhdf5_path) binds explicitly.
 *   - Globals are read through their addresses at call time, after H5open
 *     (as the HDF5 macros do), never copied at bind time.
 *   - Unbound, every callback fails cleanly (can_apply/set_local -1,
 *     filter 0) and nothing is called.
 *   - The binding is made once. A different libhdf5 copy that later loads
 *     this same plugin file gets NULL from H5PLget_plugin_info (filter not
 *     available there) instead of a class that would call the wrong copy.
 *
 * The HDF5 headers are used for types and prototypes only; the function
 * pointer types are taken from the prototypes with __typeof__, so a
 * signature change in the headers shows up at compile time.
 *
 * h5fz_filter_class.c's callbacks never print and never abort (the one
 * exception, say_unbound_once, is here).
 */
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hdf5.h>
#include <H5PLextern.h>

#include "h5fz.h"
#include "h5fz_filter_class.h"
#include "h5fz_prepared_take.h"
#include "h5fz_settings.h"

#define H5FZ_EXPORT __attribute__((visibility("default")))

/* ---- run-time binding ------------------------------------------------- */

/* Serializes the dlsym work of concurrent first calls (h5fz_filter_bind
 * decides who binds). */
static pthread_mutex_t g_bind_lock = PTHREAD_MUTEX_INITIALIZER;

/* The bound API, or NULL when no libhdf5 is bound yet. */
static const h5fz_hdf5_api *api(void) { return h5fz_filter_api(); }

/* Base address of the object that defines H5open in handle, or NULL. */
static const void *h5open_base(void *handle)
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
  return h5fz_filter_bind(&a, base);
}

/* Bind to the libhdf5 whose code contains addr (the caller of an entry
 * point). 1 bound (or already bound to that very library), 0 addr is not in
 * a libhdf5, -1 addr is in a libhdf5 other than the bound one. */
static int bind_to_caller(const void *addr)
{
  Dl_info info;
  if (!addr || !dladdr(addr, &info) || !info.dli_fbase) return 0;
  if (h5fz_filter_bound_base() == info.dli_fbase)
    return 1; /* the common case: the same libhdf5 calls again */
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
  if (api()) return;
  const void *base = h5open_base(RTLD_DEFAULT);
  if (!base) return;
  pthread_mutex_lock(&g_bind_lock);
  (void)bind_handle_locked(RTLD_DEFAULT, base);
  pthread_mutex_unlock(&g_bind_lock);
}

/* Both entry points: bind to the calling libhdf5 if it is one, else to the
 * global scope. 0 when the caller may use the filter class, -1 when the
 * caller is a libhdf5 other than the bound one. */
static int bind_entry(const void *caller)
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


/* Plugin entry point: this library provides a filter. Binds to the calling
 * libhdf5 and does nothing else: HDF5 opens every library in the plugin
 * folder while searching, so no work (CUDA, threads) may happen here. */
H5FZ_EXPORT H5PL_type_t H5PLget_plugin_type(void)
{
  (void)bind_entry(__builtin_return_address(0));
  return H5PL_TYPE_FILTER;
}

/* Plugin entry point: the filter class (static storage, never freed),
 * after binding to the calling libhdf5 (dlopen/dlsym only: no HDF5 call, no
 * other work). NULL for a libhdf5 other than the one bound already: the
 * filter is then unavailable in that copy rather than calling the other. */
/* Said once on stderr when HDF5 loads the plugin and no libhdf5 can be
 * found to bind to: every callback would then fail with nothing on HDF5's
 * error stack but "error during user callback". The usual cause is a
 * libhdf5 linked statically into the program (Debian's h5cc/h5fc link
 * statically unless given -shlib), which exports none of its symbols. The
 * one exception to "callbacks never print": there is no error stack to use. */
static void say_unbound_once(void)
{
  static int said;
  if (__atomic_exchange_n(&said, 1, __ATOMIC_ACQ_REL) || h5fz_settings_quiet()) return;
  fprintf(stderr, "h5fz: the plugin cannot find the HDF5 library that loaded it (a libhdf5 linked statically "
                  "into the program exports no symbols), so the h5fz filter cannot run: link HDF5 as a shared "
                  "library (h5cc/h5fc -shlib, or CMake's HDF5 shared targets), or the program with -rdynamic "
                  "(docs/filter.md, \"Self-binding\")\n");
}

H5FZ_EXPORT const void *H5PLget_plugin_info(void)
{
  if (bind_entry(__builtin_return_address(0)) < 0) return NULL;
  if (!api()) say_unbound_once();
  return h5fz_filter_class();
}

/* The h5fz release this plugin file was built from ("0.2.0"), the same
 * string as `h5fz version` and the package files (CMake project VERSION).
 * Exported so a packager or a support question can ask a plugin file for
 * its version without HDF5: dlopen + dlsym("h5fz_plugin_version"), or
 * `strings`/`nm -D`. Static storage; needs no HDF5 binding. */
H5FZ_EXPORT const char *h5fz_plugin_version(void) { return h5fz_version(); }

/* The collective dataset API's way in (h5fz_prepared.h): it finds this
 * entry point in the loaded plugin with dlsym and installs the containers
 * it made for its next collective H5Dwrite, then removes them (NULL).
 * *bound_hdf5: the load address of the libhdf5 this copy is bound to, so
 * the API uses it only when that is the libhdf5 it calls itself. */
H5FZ_EXPORT int h5fz_plugin_prepared(h5fz_prepared_chunks *p, const void **bound_hdf5)
{
  if (bound_hdf5) *bound_hdf5 = h5fz_filter_bound_base();
  return h5fz_prepared_install(p);
}
