/*
 * h5fz_plugin_options.c - the portable options of h5fz_plugin_settings.h
 * (the plugin's message, the Python package's h5fzpy_options) to and from
 * the codec's overrides (fusion/h5fz_settings.h), checked in one place for
 * every side that receives them.
 */
#include <stdio.h>
#include <string.h>

#include "h5fz_plugin_settings.h"

void h5fz_plugin_options_init(h5fz_plugin_options *p)
{
  memset(p, 0, sizeof *p);
  p->device = p->gpu_ordinal = p->threads = p->strict = p->quiet = -1;
}

/* value (-1: unset) into *field when it is in [lo, hi]; 0, or -1 with the reason in why. */
static int take(const char *name, int32_t value, int lo, int hi, int *field, char *why, size_t len)
{
  if (value == -1) return 0;
  if (value < lo || value > hi) {
    snprintf(why, len, "%s=%d is out of range (%d..%d, or -1 for the environment's)", name, (int)value, lo, hi);
    return -1;
  }
  *field = (int)value;
  return 0;
}

int h5fz_plugin_options_to_overrides(const h5fz_plugin_options *p, h5fz_overrides *o, char *why, size_t len)
{
  h5fz_overrides_init(o);
  static const int devices[] = {H5FZ_SETTING_DEVICE_AUTO, H5FZ_SETTING_DEVICE_CPU, H5FZ_SETTING_DEVICE_GPU};
  int device = H5FZ_UNSET;
  if (take("device", p->device, 0, 2, &device, why, len) ||
      take("gpu_ordinal", p->gpu_ordinal, 0, H5FZ_GPU_ORDINAL_MAX, &o->gpu_ordinal, why, len) ||
      take("threads", p->threads, 0, H5FZ_HOST_THREADS_MAX, &o->host_threads, why, len) ||
      take("strict", p->strict, 0, 1, &o->device_strict, why, len) ||
      take("quiet", p->quiet, 0, 1, &o->quiet, why, len))
    return -1;
  if (device != H5FZ_UNSET) o->device = devices[device];
  if (memchr(p->cache_dir, '\0', sizeof p->cache_dir) == NULL) {
    snprintf(why, len, "the cache folder's path is not NUL-terminated");
    return -1;
  }
  _Static_assert(sizeof o->cache_dir >= sizeof p->cache_dir, "the overrides hold the portable cache_dir");
  snprintf(o->cache_dir, sizeof o->cache_dir, "%s", p->cache_dir);
  return 0;
}

/* An overrides field as a portable one. */
static int32_t portable(int v) { return v == H5FZ_UNSET ? -1 : (int32_t)v; }

void h5fz_plugin_options_of_overrides(const h5fz_overrides *o, h5fz_plugin_options *p)
{
  h5fz_plugin_options_init(p);
  p->device = o->device == H5FZ_SETTING_DEVICE_CPU   ? 1
              : o->device == H5FZ_SETTING_DEVICE_GPU ? 2
              : o->device == H5FZ_UNSET              ? -1
                                                     : 0;
  p->gpu_ordinal = portable(o->gpu_ordinal);
  p->threads = portable(o->host_threads);
  p->strict = portable(o->device_strict);
  p->quiet = portable(o->quiet);
  snprintf(p->cache_dir, sizeof p->cache_dir, "%s", o->cache_dir);
}
