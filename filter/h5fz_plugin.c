/*
 * h5fz_plugin.c - the HDF5 plugin entry points of the h5fz filter
 * (H5PLget_plugin_type, H5PLget_plugin_info, init_filter,
 * h5fz_plugin_version, h5fz_plugin_prepared, h5fz_plugin_settings).
 *
 * The plugin is NOT linked to libhdf5 (self-binding, see docs/filter.md
 * and HDF5_NOTES.md, "Two copies of libhdf5 in one process"). A process
 * can hold several libhdf5 copies (an h5py wheel and a netCDF4 wheel each
 * carry a private one, loaded RTLD_LOCAL, next to the system's), yet all of
 * them get this one loaded file. So:
 *
 *   - Each libhdf5 copy gets a slot and its own filter class, whose
 *     callbacks call that copy only (h5fz_filter_class.c, shared with api/'s
 *     library mode).
 *   - H5PLget_plugin_type/H5PLget_plugin_info find the calling library with
 *     dladdr(__builtin_return_address(0)); when it defines H5open, its slot
 *     is bound (h5fz_plugin_slots.c, h5fz_hdf5_bind.c) and its class
 *     returned.
 *   - Otherwise (a ctypes caller), init_filter(libhdf5_path) names the
 *     library (the class of the thread's last init_filter is returned),
 *     else the global scope (RTLD_DEFAULT) is tried.
 *
 * The entry points do no work beyond binding: HDF5 opens every library in
 * the plugin folder while searching.
 */
#include <stdio.h>

#include <hdf5.h>
#include <H5PLextern.h>

#include "h5fz.h"
#include "h5fz_filter_class.h"
#include "h5fz_plugin_settings.h"
#include "h5fz_plugin_slots.h"
#include "h5fz_prepared_take.h"
#include "h5fz_settings.h"

#define H5FZ_EXPORT __attribute__((visibility("default")))

/* The slot the calling thread's last successful init_filter bound (-1:
 * none). A caller that is not libhdf5 (ctypes) binds with init_filter and
 * then asks H5PLget_plugin_info for the class, as hdf5plugin does; per
 * thread, so two threads registering with two libhdf5s do not cross. */
static __thread int t_init_slot = -1;

/* The slot whose class an entry point called from caller hands out:
 * the calling libhdf5's own, claimed on first sight; for a caller that is
 * not libhdf5, this thread's last init_filter, else the global scope's
 * libhdf5, else slot 0 (unbound when nothing is: its callbacks then fail
 * cleanly). Negative (no class: the filter is unavailable there) when
 * that libhdf5 finds every slot taken by others or lacks a symbol the
 * plugin needs. */
static int slot_for_entry(const void *caller)
{
  int k = h5fz_slot_for_caller(caller);
  if (k != H5FZ_SLOT_NOT_HDF5) return k;
  if (t_init_slot >= 0) return t_init_slot;
  k = h5fz_slot_for_global_scope();
  return k == H5FZ_SLOT_NOT_HDF5 ? 0 : k;
}

/* Explicit binding for callers that are not libhdf5 (ctypes registration,
 * as hdf5plugin does): libhdf5_path is the libhdf5 the caller uses (for
 * h5py, the one h5py loaded). The next H5PLget_plugin_info on this thread
 * returns that libhdf5's class. Returns 0 when bound to it (or it was
 * bound already), -1 when it cannot be opened or is not a libhdf5, or
 * H5FZ_SLOTS other libhdf5 copies are bound already. */
H5FZ_EXPORT int init_filter(const char *libhdf5_path)
{
  int k = h5fz_slot_for_path(libhdf5_path);
  if (k < 0) return -1;
  t_init_slot = k;
  return 0;
}

/* Plugin entry point: this library provides a filter. Binds to the calling
 * libhdf5 and does nothing else: HDF5 opens every library in the plugin
 * folder while searching, so no work (CUDA, threads) may happen here. */
H5FZ_EXPORT H5PL_type_t H5PLget_plugin_type(void)
{
  (void)slot_for_entry(__builtin_return_address(0));
  return H5PL_TYPE_FILTER;
}

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

/* Plugin entry point: the filter class of the calling libhdf5's slot
 * (static storage, never freed), after binding that slot (dlopen/dlsym
 * only: no HDF5 call, no other work). NULL when H5FZ_SLOTS other libhdf5
 * copies hold every slot, or the calling libhdf5 lacks a symbol (older
 * than 1.10): the filter is then unavailable in that copy rather than
 * calling another one or nothing. */
H5FZ_EXPORT const void *H5PLget_plugin_info(void)
{
  int k = slot_for_entry(__builtin_return_address(0));
  if (k < 0) return NULL;
  if (!h5fz_filter_api(k)) say_unbound_once();
  return h5fz_filter_class(k);
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
 * *bound_hdf5: in, the load address of the caller's libhdf5 (or NULL);
 * out, that same address when a slot of this copy is bound to it, else
 * the first bound slot's (NULL: none), so the API uses this copy only when
 * the libhdf5 it calls itself runs this copy's filter. */
H5FZ_EXPORT int h5fz_plugin_prepared(h5fz_prepared_chunks *p, const void **bound_hdf5)
{
  if (bound_hdf5) {
    const void *want = *bound_hdf5;
    const void *first = NULL;
    for (int k = 0; k < H5FZ_SLOTS && !first; k++) first = h5fz_filter_bound_base(k);
    *bound_hdf5 = want && h5fz_filter_slot_of_base(want) >= 0 ? want : first;
  }
  return h5fz_prepared_install(p);
}

/* The way in for a program that must tell this copy of the codec its
 * settings after the copy took its snapshot of the environment
 * (h5fz_plugin_settings.h): h5fz_mpi_select_gpu's GPU of the rank,
 * h5fz_set_process_options' (and h5fz.set_process_options') options of
 * the process, and tests that switch a variable between calls. One copy
 * serves every libhdf5 slot, so a call reaches all of them. Versions 1
 * and 2 (a version-1 caller's message is the shorter struct: its fields
 * only are read). Every field is checked before anything changes. */
H5FZ_EXPORT int h5fz_plugin_settings(const h5fz_plugin_settings_msg *m)
{
  if (!m || m->version < 1 || m->version > H5FZ_PLUGIN_SETTINGS_VERSION) return -1;
  if (m->gpu_ordinal != -1 && (m->gpu_ordinal < 0 || m->gpu_ordinal > H5FZ_GPU_ORDINAL_MAX)) return -1;
  uint32_t process = m->version >= 2 ? m->process : H5FZ_PLUGIN_PROCESS_KEEP;
  h5fz_overrides o;
  char why[200];
  if (process > H5FZ_PLUGIN_PROCESS_CLEAR ||
      (process == H5FZ_PLUGIN_PROCESS_SET && h5fz_plugin_options_to_overrides(&m->options, &o, why, sizeof why)))
    return -1;
  if (m->reload) h5fz_settings_reload();
  if (m->gpu_ordinal != -1 && h5fz_settings_set_gpu_ordinal(m->gpu_ordinal) != H5FZ_OK) return -1;
  if (process != H5FZ_PLUGIN_PROCESS_KEEP &&
      h5fz_overrides_set_process(process == H5FZ_PLUGIN_PROCESS_SET ? &o : NULL) != H5FZ_OK)
    return -1;
  return 0;
}
