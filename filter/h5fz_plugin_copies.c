/*
 * h5fz_plugin_copies.c - the one walk over the h5fz plugin copies loaded in
 * a process (h5fz_plugin_settings.h): each object the loader lists that
 * exports a symbol, for the dataset API's, the collective API's, the
 * Python package's and the tests' messages to the plugins. No HDF5: the
 * copies are found by their exports, whichever libhdf5 loaded them.
 */
#include <dlfcn.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>

#include "h5fz_plugin_settings.h"

typedef struct {
  char **names;
  size_t n, cap;
  int failed; /* out of memory: the list is short */
} object_names;

static int collect_name(struct dl_phdr_info *info, size_t size, void *data)
{
  (void)size;
  object_names *o = data;
  if (!info->dlpi_name || !info->dlpi_name[0]) return 0; /* the program itself (and the vDSO) */
  if (o->n == o->cap) {
    size_t cap = o->cap ? 2 * o->cap : 64;
    char **p = realloc(o->names, cap * sizeof *p);
    if (!p) return o->failed = 1;
    o->names = p;
    o->cap = cap;
  }
  if ((o->names[o->n] = strdup(info->dlpi_name)))
    o->n++;
  else
    o->failed = 1;
  return 0;
}

int h5fz_plugin_copies_each(const char *symbol, int (*visit)(void *sym, void *ctx), void *ctx)
{
  /* listed first, opened after: dlopen inside dl_iterate_phdr's callback
   * would take the loader's lock twice */
  object_names o = {0};
  dl_iterate_phdr(collect_name, &o);
  /* dlsym on a handle also searches the object's dependencies: a copy
   * another object depends on is met again, and visited once */
  void *seen[64];
  size_t n_seen = 0;
  int r = 0;
  for (size_t i = 0; i < o.n; i++) {
    void *h = r ? NULL : dlopen(o.names[i], RTLD_LAZY | RTLD_NOLOAD);
    void *sym = h ? dlsym(h, symbol) : NULL;
    int again = 0;
    for (size_t k = 0; sym && k < n_seen; k++) again |= seen[k] == sym;
    if (sym && !again) {
      if (n_seen < sizeof seen / sizeof *seen) seen[n_seen++] = sym;
      r = visit(sym, ctx);
    }
    if (h) dlclose(h); /* a NOLOAD handle only counts a reference: the object stays loaded */
    free(o.names[i]);
  }
  free(o.names);
  return r;
}

typedef struct {
  const h5fz_plugin_settings_msg *m;
  int told, refused;
} telling;

static int tell_one(void *sym, void *ctx)
{
  telling *t = ctx;
  h5fz_plugin_settings_fn fn;
  memcpy(&fn, &sym, sizeof fn);
  if (fn(t->m) == 0)
    t->told++;
  else
    t->refused++;
  return 0;
}

int h5fz_plugin_copies_tell(const h5fz_plugin_settings_msg *m, int *refused)
{
  telling t = {.m = m};
  h5fz_plugin_copies_each(H5FZ_PLUGIN_SETTINGS_SYMBOL, tell_one, &t);
  if (refused) *refused = t.refused;
  return t.told;
}
