/*
 * h5fz_array.c - whole arrays through the codec (h5fz_batch.h, its public
 * header): the choice of executor, the fallback from the GPU batches
 * (h5fz_gpu_array.c) to the CPU, and the CPU path (one chunk at a time
 * through h5fz_chunk_encode / h5fz_chunk_decode, so its bytes are the
 * filter's by construction). The chunk grid is h5fz_array_geom.c's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h5fz_array_geom.h"
#include "h5fz_device_choice.h"
#include "h5fz_gpu_array_decode.h"
#include "h5fz_gpu_array_encode.h"

static void exec_cpu(h5fz_array_exec *ex)
{
  if (!ex) return;
  memset(ex, 0, sizeof *ex);
  snprintf(ex->kernel_class, sizeof ex->kernel_class, "cpu");
}

/* After the GPU batches returned rc (user_rc: their *user_rc): 1 when rc is
 * the answer (done; the sink or source stopped them; a device array, which
 * only the GPU can reach; H5FZ_DEVICE_STRICT, except for what the batches
 * refuse as unsupported and for no GPU at all under auto; when decoding, a container that is bad on any
 * executor), 0 when
 * the CPU executor takes the remaining chunks: said once, except when
 * there is no GPU at all and H5FZ_DEVICE did not ask for one (the normal
 * CPU case, not worth a word). */
static int gpu_answered(int rc, int user_rc, int on_device, h5fz_device_mode mode, int decoding)
{
  int bad_container = decoding && (rc == H5FZ_ERR_CORRUPT || rc == H5FZ_ERR_CHECKSUM || rc == H5FZ_ERR_TRUNCATED ||
                                   rc == H5FZ_ERR_VERSION);
  /* no GPU at all under auto is the CPU's route, not a device failure: the
   * filter's chunk calls take it even under H5FZ_DEVICE_STRICT, so do the
   * batches (a fresh tester found them refusing the write instead) */
  int cpu_route = user_rc == H5FZ_GPU_UNUSABLE && mode != H5FZ_DEVICE_GPU;
  if (rc == H5FZ_OK || user_rc == 1 || on_device ||
      (h5fz_device_strict() && rc != H5FZ_ERR_UNSUPPORTED && !cpu_route) || bad_container)
    return 1;
  if (user_rc != H5FZ_GPU_UNUSABLE || mode == H5FZ_DEVICE_GPU)
    h5fz_log_once(H5FZ_LOG_GPU_BATCH, "h5fz: GPU batch %s failed, the CPU executor %s the remaining chunks: %s",
                  decoding ? "decode" : "encode", decoding ? "reads" : "writes", h5fz_last_error());
  h5fz_clear_error();
  return 0;
}

/* Chunks [start, n) one by one through the public codec. */
static int cpu_encode(const h5fz_spec *spec, const h5fz_array_geom *g, const void *data, uint64_t start,
                      h5fz_chunk_sink sink, void *ctx)
{
  size_t esize = h5fz_dtype_size(spec->dtype), bytes = h5fz_array_chunk_elems(g) * esize;
  uint64_t fill, n = h5fz_array_chunks(g);
  h5fz_array_fill_bits(g, spec->dtype, spec->has_fill ? spec->fill : 0.0, &fill);
  uint8_t *buf = malloc(bytes ? bytes : 1);
  if (!buf) return h5fz_fail(H5FZ_ERR_NOMEM, "cannot allocate a %zu-byte chunk buffer", bytes);
  int rc = H5FZ_OK;
  for (uint64_t i = start; i < n && !rc; i++) {
    h5fz_array_gather_chunk(g, esize, data, i, fill, buf);
    h5fz_encoded_chunk c = {.index = i};
    void *out = NULL;
    rc = h5fz_chunk_encode(spec, buf, bytes, &out, &c.bytes);
    if (!rc) rc = h5fz_chunk_inspect(out, c.bytes, &c.info);
    c.container = out;
    if (!rc) rc = sink(ctx, &c);
    free(out);
  }
  free(buf);
  return rc;
}

int h5fz_array_encode(const h5fz_spec *spec, const h5fz_array_geom *g, const void *data, int on_device,
                      h5fz_chunk_sink sink, void *ctx, h5fz_array_exec *ex)
{
  h5fz_clear_error();
  if (!spec || !g || !sink || (!data && h5fz_array_chunks(g)))
    return h5fz_fail(H5FZ_ERR_ARG, "h5fz_array_encode: NULL argument");
  int rc = h5fz_spec_validate(spec);
  if (rc) return rc;
  if ((rc = h5fz_array_check(g, spec->dtype))) return rc;
  if (spec->rank) {
    uint64_t n = 1;
    for (uint32_t d = 0; d < spec->rank; d++) n *= spec->dims[d];
    if (n != h5fz_array_chunk_elems(g))
      return h5fz_fail(H5FZ_ERR_ARG, "the spec's chunk dims hold %llu values, the array's chunks %llu",
                       (unsigned long long)n, (unsigned long long)h5fz_array_chunk_elems(g));
  }
  h5fz_device_mode mode;
  if ((rc = h5fz_chunk_device_mode(&mode))) return rc;
  uint64_t done = 0;
  if (mode != H5FZ_DEVICE_CPU || on_device) {
    int sink_rc = 0;
    rc = h5fz_gpu_array_encode(spec, g, data, on_device, sink, ctx, ex, &done, &sink_rc);
    if (gpu_answered(rc, sink_rc, on_device, mode, 0)) return rc;
  }
  exec_cpu(ex);
  return cpu_encode(spec, g, data, done, sink, ctx);
}

/* Chunks [start, n) one by one through the public codec. */
static int cpu_decode(const h5fz_array_geom *g, const h5fz_spec *want, double fill, uint64_t start,
                      h5fz_chunk_source source, void *ctx, void *data)
{
  h5fz_dtype dtype = want->dtype;
  size_t esize = h5fz_dtype_size(dtype), bytes = h5fz_array_chunk_elems(g) * esize;
  uint64_t fill_bits, n = h5fz_array_chunks(g);
  h5fz_array_fill_bits(g, dtype, fill, &fill_bits);
  uint8_t *filled = malloc(bytes ? bytes : 1);
  if (!filled) return h5fz_fail(H5FZ_ERR_NOMEM, "cannot allocate a %zu-byte chunk buffer", bytes);
  for (size_t i = 0; i < bytes / esize; i++) memcpy(filled + i * esize, &fill_bits, esize);
  int rc = H5FZ_OK;
  for (uint64_t i = start; i < n && !rc; i++) {
    void *in = NULL, *out = NULL;
    size_t in_bytes = 0, out_bytes = 0;
    rc = source(ctx, i, &in, &in_bytes);
    if (!rc && in_bytes) {
      /* a container of another type, size or chunk shape, or of a looser bound, is not one of this dataset's */
      rc = want->rank ? h5fz_chunk_decode_for(in, in_bytes, want, &out, &out_bytes)
                      : h5fz_chunk_decode_as(in, in_bytes, dtype, bytes, &out, &out_bytes);
      if (rc) {
        char why[400];
        snprintf(why, sizeof why, "%s", h5fz_last_error());
        h5fz_fail(rc, "chunk %llu: %s", (unsigned long long)i, why);
      }
    }
    if (!rc) h5fz_array_scatter_chunk(g, esize, in_bytes ? out : filled, i, data);
    free(in);
    free(out);
  }
  free(filled);
  return rc;
}

int h5fz_array_decode(const h5fz_array_geom *g, h5fz_dtype dtype, const h5fz_spec *dataset, double fill,
                      h5fz_chunk_source source, void *ctx, void *data, int on_device, h5fz_array_exec *ex)
{
  h5fz_clear_error();
  if (!g || !dataset || !source || (!data && h5fz_array_chunks(g)))
    return h5fz_fail(H5FZ_ERR_ARG, "h5fz_array_decode: NULL argument");
  int rc = h5fz_array_check(g, dtype);
  if (rc) return rc;
  /* what each container must be: a chunk of g (type, size, shape) that keeps the dataset's bound */
  h5fz_spec want = *dataset;
  want.dtype = dtype;
  want.rank = h5fz_array_chunk_shape(g, want.dims);
  h5fz_device_mode mode;
  if ((rc = h5fz_chunk_device_mode(&mode))) return rc;
  uint64_t done = 0;
  if (mode != H5FZ_DEVICE_CPU || on_device) {
    int source_rc = 0;
    rc = h5fz_gpu_array_decode(g, &want, fill, source, ctx, data, on_device, ex, &done, &source_rc);
    if (gpu_answered(rc, source_rc, on_device, mode, 1)) return rc;
  }
  exec_cpu(ex);
  return cpu_decode(g, &want, fill, done, source, ctx, data);
}
