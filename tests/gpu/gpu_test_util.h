/*
 * gpu_test_util.h - shared by the GPU tests: whether a GPU is usable, the
 * codec's calls on a chosen device (an options value, since h5fz reads
 * H5FZ_DEVICE once per process), a variable switched between calls, and
 * (from bench/field_data.h) the real fields of a data folder and a check of
 * a reconstruction against a bound.
 */
#ifndef GPU_TEST_UTIL_H
#define GPU_TEST_UTIL_H

#include "../../bench/field_data.h"
#include "h5fz.h"
#include "h5fz_settings.h"

#define CTEST_SKIP 77

/* Put in force on the calling thread, until h5fz_overrides_leave(the
 * returned value), an options value (*o) that runs the codec's calls on
 * device ("cpu", "gpu" or "auto"), strict (1: a GPU failure fails the
 * call, never a CPU fallback, so the GPU must have run; 0: the CPU takes
 * over; -1: the environment's). Why not setenv("H5FZ_DEVICE"): h5fz reads
 * its variables once per process, and these tests switch the device
 * between calls; an options value says it per call, as a dataset
 * handle's or h5fz.Options do. */
static inline const h5fz_overrides *gpu_test_device_enter(h5fz_overrides *o, const char *device, int strict)
{
  h5fz_overrides_init(o);
  o->device = !strcmp(device, "gpu")   ? H5FZ_SETTING_DEVICE_GPU
              : !strcmp(device, "cpu") ? H5FZ_SETTING_DEVICE_CPU
                                       : H5FZ_SETTING_DEVICE_AUTO;
  if (strict >= 0) o->device_strict = strict;
  return h5fz_overrides_enter(o);
}

/* h5fz_chunk_encode on device, strict (gpu_test_device_enter). */
static inline int gpu_test_encode_on(const char *device, const h5fz_spec *s, const void *in, size_t n, void **out,
                                     size_t *out_n)
{
  h5fz_overrides o;
  const h5fz_overrides *previous = gpu_test_device_enter(&o, device, 1);
  int rc = h5fz_chunk_encode(s, in, n, out, out_n);
  h5fz_overrides_leave(previous);
  return rc;
}

/* h5fz_chunk_decode on device, strict (gpu_test_device_enter). */
static inline int gpu_test_decode_on(const char *device, const void *in, size_t n, void **out, size_t *out_n)
{
  h5fz_overrides o;
  const h5fz_overrides *previous = gpu_test_device_enter(&o, device, 1);
  int rc = h5fz_chunk_decode(in, n, out, out_n);
  h5fz_overrides_leave(previous);
  return rc;
}

/* setenv(name, value) (value NULL: unsetenv) for a variable that no
 * options value carries (H5FZ_GPU_WARP_FUSED, H5FZ_JIT_EMBEDDED, ...),
 * then h5fz_settings_reload: h5fz reads its variables once per process,
 * and this process's next call must see the new value. Reaches this
 * process's copy of the codec only, not the filter plugin's. */
static inline void gpu_test_setenv(const char *name, const char *value) { h5fz_settings_setenv(name, value); }

/* Sets H5FZ_DEVICE=gpu and H5FZ_DEVICE_STRICT=1 as this process's defaults
 * (the environment, reloaded; a filter plugin not loaded yet takes them at
 * its first call too) and encodes a small chunk: 1 when the GPU executor
 * is usable, else 0 after printing "SKIP: no usable GPU: <why>" (the
 * caller then exits with CTEST_SKIP). */
static inline int gpu_test_have_gpu(void)
{
  setenv("H5FZ_DEVICE", "gpu", 1);
  setenv("H5FZ_DEVICE_STRICT", "1", 1); /* a CPU fallback would pass the probe */
  h5fz_settings_reload();
  h5fz_spec probe;
  float zeros[64] = {0};
  void *tmp = NULL;
  size_t tmp_n = 0;
  if (h5fz_spec_parse("abs=1 dtype=f32", &probe) || h5fz_chunk_encode(&probe, zeros, sizeof zeros, &tmp, &tmp_n)) {
    printf("SKIP: no usable GPU: %s\n", h5fz_last_error());
    return 0;
  }
  free(tmp);
  return 1;
}

#endif /* GPU_TEST_UTIL_H */
