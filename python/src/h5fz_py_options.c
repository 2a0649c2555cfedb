/*
 * h5fz_py_options.c - h5fz.Options for a call (h5fz_py_options.h): the
 * options become the codec's overrides (fusion/h5fz_settings.h), in force
 * on the calling thread for the call's duration; and
 * h5fz.set_process_options, the process's options, in this library's copy
 * and in every loaded plugin copy.
 */
#include <stdio.h>

#include "h5fz.h"
#include "h5fz_plugin_settings.h"
#include "h5fz_py_error.h"
#include "h5fz_py_options.h"
#include "h5fz_settings.h"

/* opts as overrides; 0, or -1 with the reason in why. */
static int overrides_of(const h5fzpy_options *opts, h5fz_overrides *o, char *why, size_t len)
{
  char reason[160]; /* with the prefix, within the callers' 200 bytes */
  if (!h5fz_plugin_options_to_overrides(opts, o, reason, sizeof reason)) return 0;
  snprintf(why, len, "h5fz.Options: %s", reason);
  return -1;
}

/* The call between enter and leave, with opts as overrides. */
#define WITH_OPTIONS(call)                                                                                             \
  do {                                                                                                                 \
    h5fz_overrides o;                                                                                                  \
    char why[200];                                                                                                     \
    if (opts && overrides_of(opts, &o, why, sizeof why)) return h5fz_py_fail_arg(why);                                 \
    const h5fz_overrides *previous = h5fz_overrides_enter(opts ? &o : NULL);                                           \
    int rc = (call);                                                                                                   \
    h5fz_overrides_leave(previous);                                                                                    \
    return rc;                                                                                                         \
  } while (0)

int h5fzpy_encode_with(const h5fzpy_options *opts, const unsigned *cd, size_t n_cd, const h5fzpy_geom *g,
                       const void *data, int on_device, h5fzpy_sink sink, void *ctx, h5fzpy_exec *ex)
{
  WITH_OPTIONS(h5fzpy_encode(cd, n_cd, g, data, on_device, sink, ctx, ex));
}

int h5fzpy_decode_with(const h5fzpy_options *opts, const unsigned *cd, size_t n_cd, const h5fzpy_geom *g,
                       h5fzpy_source source, void *ctx, void *data, int on_device, h5fzpy_exec *ex)
{
  WITH_OPTIONS(h5fzpy_decode(cd, n_cd, g, source, ctx, data, on_device, ex));
}

int h5fzpy_set_process_options(const h5fzpy_options *opts, int *told)
{
  h5fz_py_clear_error();
  h5fz_overrides o;
  char why[260];
  if (told) *told = 0;
  if (opts && overrides_of(opts, &o, why, sizeof why)) return h5fz_py_fail_arg(why);
  h5fz_plugin_settings_msg m = {.version = H5FZ_PLUGIN_SETTINGS_VERSION,
                                .gpu_ordinal = -1,
                                .process = opts ? H5FZ_PLUGIN_PROCESS_SET : H5FZ_PLUGIN_PROCESS_CLEAR};
  h5fz_plugin_options_init(&m.options);
  if (opts) m.options = *opts;
  int rc = h5fz_overrides_set_process(opts ? &o : NULL); /* checked above: no refusal here */
  if (rc) return h5fz_py_fail(rc, "h5fz.set_process_options: the options were refused");
  int refused = 0, n = h5fz_plugin_copies_tell(&m, &refused);
  if (told) *told = n;
  if (!refused) return H5FZ_OK;
  snprintf(why, sizeof why,
           "h5fz.set_process_options: %d loaded h5fz plugin cop%s refused the options (a plugin older than this "
           "package: it keeps the environment's settings)",
           refused, refused == 1 ? "y" : "ies");
  return h5fz_py_fail(H5FZ_ERR_UNSUPPORTED, "%s", why);
}
