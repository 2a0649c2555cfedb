/*
 * h5fz_process_options.c - h5fz_set_process_options (h5fz_dataset.h): the
 * options of every h5fz call of the process that has no handle options.
 *
 * HDF5 hands the filter cd_values only, with no per-dataset context, and
 * runtime options must never go into the file, so what has no handle (the
 * filter, set_local, a handle without options) can only follow options of
 * the process. Each copy of the codec keeps its own: this library's (the
 * library mode's filter class, set_local of h5fz_register_filter, the
 * dataset and collective APIs) takes them with h5fz_overrides_set_process,
 * and every plugin copy loaded in the process is told through its
 * h5fz_plugin_settings entry point (filter/h5fz_plugin_settings.h).
 */
#include <pthread.h>

#include "h5fz_dataset.h"
#include "h5fz_error.h"
#include "h5fz_options.h"
#include "h5fz_plugin_settings.h"

/* The last message set (for h5fz_process_options_retell); has_options: it
 * sets options (a clear needs no telling again: a copy loaded later has
 * none). */
static pthread_mutex_t last_lock = PTHREAD_MUTEX_INITIALIZER;
static h5fz_plugin_settings_msg last;
static int has_options;

/* Make libhdf5 load its plugin (HDF5 loads it lazily, at the filter's first
 * use: H5Zfilter_avail loads it from HDF5_PLUGIN_PATH; in library mode it
 * answers from the registered class), then hand *m to every loaded copy. */
static int tell_plugins(const h5fz_plugin_settings_msg *m, int *refused)
{
  H5E_BEGIN_TRY { (void)H5Zfilter_avail(H5FZ_FILTER_ID); }
  H5E_END_TRY;
  return h5fz_plugin_copies_tell(m, refused);
}

int h5fz_set_process_options(const h5fz_options *opts)
{
  h5fz_clear_error();
  const h5fz_overrides *o = opts ? h5fz_options_overrides(opts) : NULL;
  h5fz_plugin_settings_msg m = {.version = H5FZ_PLUGIN_SETTINGS_VERSION,
                                .gpu_ordinal = -1,
                                .process = o ? H5FZ_PLUGIN_PROCESS_SET : H5FZ_PLUGIN_PROCESS_CLEAR};
  h5fz_plugin_options_init(&m.options);
  if (o) h5fz_plugin_options_of_overrides(o, &m.options);
  /* one lock over this copy, the record and the telling: two threads
   * setting options at once leave every copy with the same last ones */
  pthread_mutex_lock(&last_lock);
  int rc = h5fz_overrides_set_process(o); /* the setters checked every field: no refusal here */
  int refused = 0;
  if (!rc) {
    last = m;
    __atomic_store_n(&has_options, o != NULL, __ATOMIC_RELEASE);
    (void)tell_plugins(&m, &refused);
  }
  pthread_mutex_unlock(&last_lock);
  if (rc) return rc;
  if (refused)
    return h5fz_fail(H5FZ_ERR_UNSUPPORTED,
                     "h5fz_set_process_options: %d loaded h5fz plugin cop%s refused the options (a plugin older "
                     "than this library, which knows no process options: it keeps the environment's settings)",
                     refused, refused == 1 ? "y" : "ies");
  return H5FZ_OK;
}

void h5fz_process_options_retell(void)
{
  if (!__atomic_load_n(&has_options, __ATOMIC_ACQUIRE)) return;
  pthread_mutex_lock(&last_lock);
  if (has_options) (void)tell_plugins(&last, NULL);
  pthread_mutex_unlock(&last_lock);
}
