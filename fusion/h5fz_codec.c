/*
 * h5fz_codec.c - the public chunk codec (h5fz.h), one chunk at a time: plan
 * the chunk, choose the device, run the executor, fall back to the CPU,
 * and have the container written (encode) or read (decode).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h5fz_chunk_read.h"
#include "h5fz_codec.h"
#include "h5fz_cpu_exec.h"
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
  h5fz_log_once("h5fz: %s; the CPU executor takes the chunks", h5fz_last_error());
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
    h5fz_log_once("h5fz: H5FZ_DEVICE=gpu, but the GPU executor is not usable (%s); the CPU executor takes the "
                  "chunks",
                  why);
    h5fz_clear_error();
  }
  return 0;
}

/* A chunk call's choice: never fails for a device reason unless H5FZ_DEVICE_STRICT. */
static int choose_gpu(const h5fz_chunk_plan *p, size_t chunk_bytes, const h5fz_settings *s)
{
  return choose_gpu_as(p, chunk_bytes, 0, s);
}

/* h5fz_spec_chunk_bytes as a size, 0 (does not say) past what a size holds. */
static size_t spec_chunk_bytes(const h5fz_spec *spec)
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
  if (!chunk_bytes) chunk_bytes = spec_chunk_bytes(spec);
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
  if (!chunk_bytes) chunk_bytes = spec_chunk_bytes(spec);
  h5fz_chunk_plan p;
  h5fz_header h;
  /* the chain's kernels depend on the chain, type and sub-chunk, not on the bound */
  int have_plan = chunk_bytes && chunk_bytes <= H5FZ_MAX_CHUNK_BYTES && spec->dtype != H5FZ_DTYPE_UNKNOWN &&
                  h5fz_chunk_plan_make_eb(spec, chunk_bytes, spec->bound, &p, &h) == H5FZ_OK && p.n_subchunks;
  h5fz_clear_error();
  h5fz_gpu_warm_up(have_plan ? &p : NULL);
  return H5FZ_OK;
}

static int encode_little_endian(const h5fz_spec *spec, const void *in, size_t in_bytes, void **out, size_t *out_bytes);

int h5fz_chunk_encode(const h5fz_spec *spec, const void *in, size_t in_bytes, void **out, size_t *out_bytes)
{
  h5fz_clear_error();
  if (!spec || (!in && in_bytes) || !out || !out_bytes)
    return h5fz_fail(H5FZ_ERR_ARG, "h5fz_chunk_encode: NULL argument");
  if (!spec->big_endian || !in_bytes) return encode_little_endian(spec, in, in_bytes, out, out_bytes);
  /* Big-endian values: swapped to little-endian first, so that every
   * executor codes exactly the bytes (and the REL range, fill value and
   * escapes) of the same values stored little-endian; trailing bytes past
   * the last whole element stay as they are. */
  size_t esize = h5fz_dtype_size(spec->dtype);
  if (!esize) return h5fz_fail(H5FZ_ERR_SPEC, "the spec does not say whether values are float32 or float64");
  uint8_t *le = malloc(in_bytes);
  if (!le) return h5fz_fail(H5FZ_ERR_NOMEM, "cannot allocate %zu bytes", in_bytes);
  memcpy(le, in, in_bytes);
  h5fz_swap_elements(le, in_bytes / esize, esize);
  int rc = encode_little_endian(spec, le, in_bytes, out, out_bytes);
  free(le);
  return rc;
}

static int encode_little_endian(const h5fz_spec *spec, const void *in, size_t in_bytes, void **out, size_t *out_bytes)
{
  h5fz_chunk_plan p;
  h5fz_header h;
  int rc = h5fz_chunk_plan_make(spec, in, in_bytes, &p, &h);
  if (rc) return rc;
  if (p.n_subchunks == 0) {
    h5fz_payload none = {NULL, 0, NULL};
    return h5fz_container_write(&h, &none, NULL, NULL, in, in_bytes, out, out_bytes);
  }
  h5fz_settings s; /* the device group, once for this chunk */
  h5fz_settings_read(&s, H5FZ_SETTINGS_DEVICE);
  int gpu = choose_gpu(&p, in_bytes, &s);
  if (gpu < 0) return gpu;
  if (gpu) {
    h5fz_header gh = h;
    int gpu_rc = h5fz_gpu_encode_chunk(&p, &gh, in, in_bytes, out, out_bytes);
    if (gpu_rc == H5FZ_OK || s.device_strict) return gpu_rc;
    h5fz_log_once("h5fz: GPU encode failed, this and later failing chunks use the CPU executor: %s", h5fz_last_error());
  }
  h5fz_clear_error();
  return h5fz_cpu_encode_chunk(&p, &h, in, in_bytes, out, out_bytes);
}

/* want_bytes 0: any chunk; else it must hold want_bytes bytes of want_dtype, and, with want (the
 * dataset's spec), have its chunk shape (when recorded) and keep its bound. */
static int decode_chunk(const void *in_v, size_t in_bytes, void **out, size_t *out_bytes, h5fz_dtype want_dtype,
                        size_t want_bytes, const h5fz_spec *want)
{
  h5fz_clear_error();
  if (!in_v || !out || !out_bytes) return h5fz_fail(H5FZ_ERR_ARG, "h5fz_chunk_decode: NULL argument");
  h5fz_chunk_read r;
  int rc = h5fz_chunk_read_begin(in_v, in_bytes, want_dtype, want_bytes, want, &r);
  if (rc) return rc;
  if (!r.complete && r.h.n_subchunks) {
    const h5fz_chunk_plan *p = &r.p;
    h5fz_settings s; /* the device group, once for this chunk */
    h5fz_settings_read(&s, H5FZ_SETTINGS_DEVICE);
    rc = choose_gpu(p, r.h.input_bytes, &s);
    if (rc < 0) {
      h5fz_chunk_read_free(&r);
      return rc;
    }
    int gpu_rc =
        rc ? h5fz_gpu_decode_chunk(p, r.entries, r.payload, r.payload_bytes, r.offsets, r.values) : H5FZ_ERR_DEVICE;
    if (rc && gpu_rc == H5FZ_OK) {
      rc = H5FZ_OK;
    } else if (rc && s.device_strict) {
      h5fz_chunk_read_free(&r);
      return gpu_rc;
    } else {
      if (rc)
        h5fz_log_once("h5fz: GPU decode failed, this and later failing chunks use the CPU executor: %s",
                      h5fz_last_error());
      if ((rc = h5fz_cpu_decode_chunk(p, r.entries, r.payload, r.offsets, r.values))) {
        h5fz_chunk_read_free(&r);
        return rc;
      }
    }
  }
  return h5fz_chunk_read_end(&r, want, out, out_bytes);
}

int h5fz_chunk_decode(const void *in_v, size_t in_bytes, void **out, size_t *out_bytes)
{
  return decode_chunk(in_v, in_bytes, out, out_bytes, H5FZ_DTYPE_UNKNOWN, 0, NULL);
}

int h5fz_chunk_decode_as(const void *in_v, size_t in_bytes, h5fz_dtype dtype, size_t chunk_bytes, void **out,
                         size_t *out_bytes)
{
  return decode_chunk(in_v, in_bytes, out, out_bytes, dtype, chunk_bytes, NULL);
}

int h5fz_chunk_decode_for(const void *in_v, size_t in_bytes, const h5fz_spec *dataset, void **out, size_t *out_bytes)
{
  h5fz_clear_error();
  if (!dataset) return h5fz_fail(H5FZ_ERR_ARG, "h5fz_chunk_decode_for: NULL spec");
  size_t bytes = spec_chunk_bytes(dataset); /* 0 without a dataset part: type and size unchecked */
  return decode_chunk(in_v, in_bytes, out, out_bytes, bytes ? dataset->dtype : H5FZ_DTYPE_UNKNOWN, bytes, dataset);
}

int h5fz_chunk_inspect(const void *in_v, size_t in_bytes, h5fz_chunk_info *info)
{
  h5fz_clear_error();
  if (!in_v || !info) return h5fz_fail(H5FZ_ERR_ARG, "h5fz_chunk_inspect: NULL argument");
  const uint8_t *in = in_v;
  h5fz_header h;
  int rc = h5fz_container_open(in, in_bytes, &h);
  if (rc) return rc;
  h5fz_chunk_info_from_header(&h, info);
  if (!info->stored_raw) {
    size_t body_len = in_bytes - H5FZ_HEADER_BYTES - H5FZ_CHECKSUM_BYTES;
    if (4u * (size_t)h.n_subchunks > body_len) return h5fz_fail(H5FZ_ERR_TRUNCATED, "chunk ends inside its size table");
    for (uint32_t s = 0; s < h.n_subchunks; s++)
      if (h5fz_get_u32(in + H5FZ_HEADER_BYTES + 4u * (size_t)s) & H5FZ_SUB_RAW) info->n_raw_subchunks++;
  }
  return H5FZ_OK;
}

int h5fz_chunk_outliers(const void *in_v, size_t in_bytes, uint32_t *pos, void *vals, size_t cap, size_t *n)
{
  h5fz_clear_error();
  if (!in_v || !n || (cap && (!pos || !vals))) return h5fz_fail(H5FZ_ERR_ARG, "h5fz_chunk_outliers: NULL argument");
  const uint8_t *in = in_v;
  h5fz_header h;
  int rc = h5fz_container_open(in, in_bytes, &h);
  if (rc) return rc;
  *n = 0;
  if ((h.flags & H5FZ_FLAG_STORED_RAW) || !h.n_outliers) return H5FZ_OK;
  uint32_t *p = NULL;
  uint8_t *v = NULL;
  if ((rc = h5fz_chunk_read_outliers(in, in_bytes, &h, &p, &v))) return rc;
  size_t k = h.n_outliers < cap ? h.n_outliers : cap, esize = h5fz_dtype_size((h5fz_dtype)h.dtype);
  memcpy(pos, p, k * 4u);
  memcpy(vals, v, k * esize);
  if (h.flags & H5FZ_FLAG_BIG_ENDIAN) h5fz_swap_elements(vals, k, esize);
  *n = h.n_outliers;
  free(p);
  free(v);
  return H5FZ_OK;
}
