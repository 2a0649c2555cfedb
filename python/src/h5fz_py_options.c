/*
 * h5fz_py_options.c - h5fz.Options for a call (h5fz_py_options.h): the
 * options become the codec's overrides (fusion/h5fz_settings.h), in force
 * on the calling thread for the call's duration.
 */
#include <stdio.h>
#include <string.h>

#include "h5fz_py_options.h"
#include "h5fz_settings.h"

/* value (-1: unset) into *field when it is in [lo, hi]; 0, or -1 with the reason in why. */
static int take(const char *name, int value, int lo, int hi, int *field, char *why, size_t len)
{
  if (value == -1) return 0;
  if (value < lo || value > hi) {
    snprintf(why, len, "h5fz.Options: %s=%d is out of range (%d..%d)", name, value, lo, hi);
    return -1;
  }
  *field = value;
  return 0;
}

/* opts as overrides; 0, or -1 with the reason in why. */
static int overrides_of(const h5fzpy_options *opts, h5fz_overrides *o, char *why, size_t len)
{
  h5fz_overrides_init(o);
  static const int devices[] = {H5FZ_SETTING_DEVICE_AUTO, H5FZ_SETTING_DEVICE_CPU, H5FZ_SETTING_DEVICE_GPU};
  int device = H5FZ_UNSET;
  if (take("device", opts->device, 0, 2, &device, why, len) ||
      take("gpu_ordinal", opts->gpu_ordinal, 0, 1023, &o->gpu_ordinal, why, len) ||
      take("threads", opts->threads, 0, 1024, &o->host_threads, why, len) ||
      take("strict", opts->strict, 0, 1, &o->device_strict, why, len) ||
      take("quiet", opts->quiet, 0, 1, &o->quiet, why, len))
    return -1;
  if (device != H5FZ_UNSET) o->device = devices[device];
  if (memchr(opts->cache_dir, '\0', sizeof opts->cache_dir) == NULL) {
    snprintf(why, len, "h5fz.Options: the cache folder's path is not NUL-terminated");
    return -1;
  }
  snprintf(o->cache_dir, sizeof o->cache_dir, "%s", opts->cache_dir);
  return 0;
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
