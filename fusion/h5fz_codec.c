/*
 * h5fz_codec.c - the public chunk codec (h5fz.h), one chunk at a time: plan
 * the chunk, have the device chosen (h5fz_device_choice.c), run the
 * executor, fall back to the CPU, and have the container written (encode)
 * or read (decode).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h5fz_chunk_read.h"
#include "h5fz_device_choice.h"
#include "h5fz_cpu_exec.h"
#include "h5fz_gpu.h"

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
  int gpu = h5fz_choose_gpu(&p, in_bytes, &s);
  if (gpu < 0) return gpu;
  if (gpu) {
    h5fz_header gh = h;
    int gpu_rc = h5fz_gpu_encode_chunk(&p, &gh, in, in_bytes, out, out_bytes);
    if (gpu_rc == H5FZ_OK || s.device_strict) return gpu_rc;
    h5fz_log_once(H5FZ_LOG_GPU_ENCODE,
                  "h5fz: GPU encode failed, this and later failing chunks use the CPU executor: %s", h5fz_last_error());
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
    rc = h5fz_choose_gpu(p, r.h.input_bytes, &s);
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
        h5fz_log_once(H5FZ_LOG_GPU_DECODE,
                      "h5fz: GPU decode failed, this and later failing chunks use the CPU executor: %s",
                      h5fz_last_error());
      if ((rc = h5fz_cpu_decode_read(&r))) return rc;
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
  size_t bytes = h5fz_spec_chunk_size(dataset); /* 0 without a dataset part: type and size unchecked */
  return decode_chunk(in_v, in_bytes, out, out_bytes, bytes ? dataset->dtype : H5FZ_DTYPE_UNKNOWN, bytes, dataset);
}
