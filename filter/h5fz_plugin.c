/*
 * h5fz_plugin.c - the HDF5 plugin entry points of the h5fz filter
 * (H5PLget_plugin_type, H5PLget_plugin_info, h5fz_plugin_version,
 * h5fz_plugin_prepared). The filter class and its callbacks are
 * h5fz_filter_class.c's (shared with api/'s library mode); the binding to
 * the libhdf5 that loads the plugin is h5fz_hdf5_bind.c's (the plugin is
 * not linked to libhdf5), which hands its table to the class.
 *
 * The entry points do no work beyond binding: HDF5 opens every library in
 * the plugin folder while searching.
 */
#include <stdio.h>

#include <hdf5.h>
#include <H5PLextern.h>

#include "h5fz.h"
#include "h5fz_filter_class.h"
#include "h5fz_hdf5_bind.h"
#include "h5fz_prepared_take.h"
#include "h5fz_settings.h"

#define H5FZ_EXPORT __attribute__((visibility("default")))

/* Plugin entry point: this library provides a filter. Binds to the calling
 * libhdf5 and does nothing else: HDF5 opens every library in the plugin
 * folder while searching, so no work (CUDA, threads) may happen here. */
H5FZ_EXPORT H5PL_type_t H5PLget_plugin_type(void)
{
  (void)h5fz_hdf5_bind_entry(__builtin_return_address(0));
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
  if (h5fz_hdf5_bind_entry(__builtin_return_address(0)) < 0) return NULL;
  if (!h5fz_filter_api()) say_unbound_once();
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
