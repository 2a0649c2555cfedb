/*
 * h5fz_device_choice.c - which executor takes a chunk (h5fz_device_choice.h):
 * the device group of the settings read as a device
 * mode, the GPU's routing with its fallback to the CPU, and the checks and
 * warm-up made where a refusal is still safe (H5Dcreate, the dataset API).
 */
#include <stdio.h>
#include <stdlib.h>

#include "h5fz_device_choice.h"
#include "h5fz_gpu.h"
#include "h5fz_gpu_warmup.h"

/* The device mode of the settings' device group. */
static int device_mode_of(const h5fz_settings *s, h5fz_device_mode *mode)
{
  switch (s->device) {
  case H5FZ_SETTING_DEVICE_AUTO: *mode = H5FZ_DEVICE_AUTO; return H5FZ_OK;
  case H5FZ_SETTING_DEVICE_CPU: *mode = H5FZ_DEVICE_CPU; return H5FZ_OK;
  case H5FZ_SETTING_DEVICE_GPU: *mode = H5FZ_DEVICE_GPU; return H5FZ_OK;
  default: return h5fz_fail(H5FZ_ERR_ARG, "H5FZ_DEVICE=\"%s\": want auto, gpu or cpu (any case)", s->device_text);
  }
}

int h5fz_read_device_mode(h5fz_device_mode *mode)
{
  h5fz_settings s;
  h5fz_settings_read(&s, H5FZ_SETTINGS_DEVICE);
  return device_mode_of(&s, mode);
}

int h5fz_device_strict(void)
{
  h5fz_settings s;
  h5fz_settings_read(&s, H5FZ_SETTINGS_DEVICE);
  return s.device_strict;
}

/* h5fz_chunk_device_mode for settings already read. */
static int chunk_device_mode_of(const h5fz_settings *s, h5fz_device_mode *mode)
{
  int rc = device_mode_of(s, mode);
  if (rc == H5FZ_OK || s->device_strict) return rc;
  /* A chunk call may run inside HDF5's chunk-cache flush at H5Dclose, where
   * a failure cannot be reported and the chunk would be lost: a setting we
   * cannot read sends the data to the CPU executor, which every machine has
   * (set_local already refused it at H5Dcreate, if that ran here). */
  h5fz_log_once(H5FZ_LOG_DEVICE_SETTING, "h5fz: %s; the CPU executor takes the chunks", h5fz_last_error());
  h5fz_clear_error();
  *mode = H5FZ_DEVICE_CPU;
  return H5FZ_OK;
}

int h5fz_chunk_device_mode(h5fz_device_mode *mode)
{
  h5fz_settings s;
  h5fz_settings_read(&s, H5FZ_SETTINGS_DEVICE);
  return chunk_device_mode_of(&s, mode);
}

/* 1: run this chunk on the GPU; 0: on the CPU; <0 only when strict (the
 * safe places: h5fz_device_check, i.e. set_local at H5Dcreate; or
 * H5FZ_DEVICE_STRICT): H5FZ_DEVICE=gpu asked for a GPU that is not usable,
 * or H5FZ_DEVICE holds no device name (the error says which). */
static int choose_gpu_as(const h5fz_chunk_plan *p, size_t chunk_bytes, int strict, const h5fz_settings *s)
{
  h5fz_device_mode mode = H5FZ_DEVICE_AUTO;
  int rc = chunk_device_mode_of(s, &mode);
  if (rc) return rc;
  if (mode == H5FZ_DEVICE_CPU || p->n_subchunks == 0) return 0;
  /* auto, while the GPU context is still being made on the warm-up thread
   * (h5fz_gpu_warmup.h): the CPU executor takes this chunk rather than
   * wait (~0.25 s of CUDA context creation). It writes the same bytes as
   * the GPU executor (the project's invariant, checked by gpu.identical),
   * so nothing is said: nothing failed. gpu waits in h5fz_gpu_route. */
  if (mode == H5FZ_DEVICE_AUTO && !strict && h5fz_gpu_warming()) return 0;
  int route = h5fz_gpu_route(p, chunk_bytes, mode == H5FZ_DEVICE_GPU);
  if (route >= 0) return route;
  if (mode == H5FZ_DEVICE_GPU) {
    char why[400];
    snprintf(why, sizeof why, "%s", h5fz_last_error());
    if (strict || s->device_strict)
      return h5fz_fail(H5FZ_ERR_DEVICE, "H5FZ_DEVICE=gpu, but the GPU executor is not usable: %s", why);
    h5fz_log_once(H5FZ_LOG_GPU_UNUSABLE,
                  "h5fz: H5FZ_DEVICE=gpu, but the GPU executor is not usable (%s); the CPU executor takes the "
                  "chunks",
                  why);
    h5fz_clear_error();
  }
  return 0;
}

int h5fz_choose_gpu(const h5fz_chunk_plan *p, size_t chunk_bytes, const h5fz_settings *s)
{
  return choose_gpu_as(p, chunk_bytes, 0, s);
}

size_t h5fz_spec_chunk_size(const h5fz_spec *spec)
{
  uint64_t bytes = h5fz_spec_chunk_bytes(spec);
  return bytes > (uint64_t)SIZE_MAX / 2u ? 0 : (size_t)bytes;
}

int h5fz_device_check(const h5fz_spec *spec, size_t chunk_bytes)
{
  h5fz_clear_error();
  if (!spec) return h5fz_fail(H5FZ_ERR_ARG, "h5fz_device_check: NULL spec");
  h5fz_settings s;
  h5fz_settings_read(&s, H5FZ_SETTINGS_DEVICE);
  h5fz_device_mode mode = H5FZ_DEVICE_AUTO;
  int rc = device_mode_of(&s, &mode);
  if (rc || mode != H5FZ_DEVICE_GPU) return rc;
  if (!chunk_bytes) chunk_bytes = h5fz_spec_chunk_size(spec);
  if (!chunk_bytes || chunk_bytes > H5FZ_MAX_CHUNK_BYTES) return H5FZ_OK;
  h5fz_chunk_plan p;
  h5fz_header h;
  /* the kernels depend on the chain, type and sub-chunk, not on the bound */
  rc = h5fz_chunk_plan_make_eb(spec, chunk_bytes, spec->bound, &p, &h);
  if (rc) return rc;
  rc = choose_gpu_as(&p, chunk_bytes, 1, &s); /* H5Dcreate can refuse cleanly: say it there */
  return rc < 0 ? rc : H5FZ_OK;
}

int h5fz_device_warm_up(const h5fz_spec *spec, size_t chunk_bytes)
{
  h5fz_clear_error();
  if (!spec) return h5fz_fail(H5FZ_ERR_ARG, "h5fz_device_warm_up: NULL spec");
  h5fz_settings s;
  h5fz_settings_read(&s, H5FZ_SETTINGS_DEVICE);
  if (s.device == H5FZ_SETTING_DEVICE_CPU || s.device == H5FZ_SETTING_DEVICE_BAD) return H5FZ_OK;
  if (!chunk_bytes) chunk_bytes = h5fz_spec_chunk_size(spec);
  h5fz_chunk_plan p;
  h5fz_header h;
  /* the chain's kernels depend on the chain, type and sub-chunk, not on the bound */
  int have_plan = chunk_bytes && chunk_bytes <= H5FZ_MAX_CHUNK_BYTES && spec->dtype != H5FZ_DTYPE_UNKNOWN &&
                  h5fz_chunk_plan_make_eb(spec, chunk_bytes, spec->bound, &p, &h) == H5FZ_OK && p.n_subchunks;
  h5fz_clear_error();
  h5fz_gpu_warm_up(have_plan ? &p : NULL);
  return H5FZ_OK;
}
