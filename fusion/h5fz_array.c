/*
 * h5fz_array.c - whole arrays through the codec (h5fz_batch.h): the chunk
 * grid, moving chunks between the array and chunk-contiguous buffers on the
 * host, the choice of executor, and the CPU path (one chunk at a time
 * through h5fz_chunk_encode / h5fz_chunk_decode, so its bytes are the
 * filter's by construction). The GPU batches are in h5fz_gpu_batch.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h5fz_array.h"
#include "h5fz_codec.h"

uint64_t h5fz_array_chunks(const h5fz_array_geom *g)
{
  if (!g || g->rank < 1 || g->rank > H5FZ_ARRAY_MAX_RANK) return 0;
  uint64_t n = 1;
  for (uint32_t d = 0; d < g->rank; d++) {
    if (!g->chunk[d]) return 0;
    n *= (g->dims[d] + g->chunk[d] - 1) / g->chunk[d];
  }
  return n;
}

uint32_t h5fz_array_chunk_shape(const h5fz_array_geom *g, uint32_t dims[H5FZ_MAX_RANK])
{
  uint32_t rank = 0;
  int rc = h5fz_chunk_dims_fold(g->rank, g->chunk, &rank, dims);
  h5fz_clear_error();
  return rc ? 0u : rank;
}

uint64_t h5fz_array_chunk_elems(const h5fz_array_geom *g)
{
  uint64_t n = 1;
  for (uint32_t d = 0; d < g->rank; d++) n *= g->chunk[d];
  return n;
}

void h5fz_array_fill_bits(const h5fz_array_geom *g, h5fz_dtype dtype, double fill, uint64_t *bits)
{
  *bits = 0;
  if (g->exact_fill) {
    *bits = dtype == H5FZ_DTYPE_F32 ? (uint32_t)g->fill_bits : g->fill_bits;
    return;
  }
  if (dtype == H5FZ_DTYPE_F32) {
    float f = (float)fill;
    memcpy(bits, &f, 4);
  } else {
    memcpy(bits, &fill, 8);
  }
}

void h5fz_array_chunk_origin(const h5fz_array_geom *g, uint64_t index, uint64_t *origin)
{
  for (uint32_t d = g->rank; d-- > 0;) {
    uint64_t grid = (g->dims[d] + g->chunk[d] - 1) / g->chunk[d];
    origin[d] = index % grid * g->chunk[d];
    index /= grid;
  }
}

/* Visit rows [row_lo, row_hi) (along the last dim, row-major in the chunk)
 * of chunk `index`: for each, the element offset of its first value in the
 * array, how many of its values lie inside the array, and the row's offset
 * inside the chunk. */
typedef void (*row_fn)(void *ctx, uint64_t array_off, uint64_t inside, uint64_t chunk_off);

static void for_each_row(const h5fz_array_geom *g, uint64_t index, uint64_t row_lo, uint64_t row_hi, row_fn fn,
                         void *ctx)
{
  uint32_t rank = g->rank, last = rank - 1;
  uint64_t origin[H5FZ_ARRAY_MAX_RANK], at[H5FZ_ARRAY_MAX_RANK] = {0};
  h5fz_array_chunk_origin(g, index, origin);
  uint64_t rest = row_lo;
  for (uint32_t d = last; d-- > 0;) {
    at[d] = rest % g->chunk[d];
    rest /= g->chunk[d];
  }
  uint64_t L = g->chunk[last];
  uint64_t inside_x = origin[last] + L <= g->dims[last] ? L : g->dims[last] - origin[last];
  for (uint64_t row = row_lo; row < row_hi; row++) {
    int inside = 1;
    uint64_t off = origin[last], stride = g->dims[last];
    for (uint32_t d = last; d-- > 0;) {
      uint64_t pos = origin[d] + at[d];
      if (pos >= g->dims[d]) inside = 0;
      off += pos * stride;
      stride *= g->dims[d];
    }
    fn(ctx, off, inside ? inside_x : 0, row * L);
    for (uint32_t d = last; d-- > 0;) {
      if (++at[d] < g->chunk[d]) break;
      at[d] = 0;
    }
  }
}

uint64_t h5fz_array_chunk_rows(const h5fz_array_geom *g)
{
  return h5fz_array_chunk_elems(g) / g->chunk[g->rank - 1];
}

typedef struct {
  const uint8_t *src;
  uint8_t *dst;
  size_t esize;
  uint64_t chunk_row;
  uint64_t fill;
} row_copy;

static void gather_row(void *ctx, uint64_t array_off, uint64_t inside, uint64_t chunk_off)
{
  row_copy *c = ctx;
  uint8_t *dst = c->dst + chunk_off * c->esize;
  memcpy(dst, c->src + array_off * c->esize, inside * c->esize);
  for (uint64_t x = inside; x < c->chunk_row; x++) memcpy(dst + x * c->esize, &c->fill, c->esize);
}

static void scatter_row(void *ctx, uint64_t array_off, uint64_t inside, uint64_t chunk_off)
{
  row_copy *c = ctx;
  memcpy(c->dst + array_off * c->esize, c->src + chunk_off * c->esize, inside * c->esize);
}

void h5fz_array_gather_rows(const h5fz_array_geom *g, size_t esize, const void *data, uint64_t index,
                            uint64_t fill_bits, void *out, uint64_t row_lo, uint64_t row_hi)
{
  row_copy c = {data, out, esize, g->chunk[g->rank - 1], fill_bits};
  for_each_row(g, index, row_lo, row_hi, gather_row, &c);
}

void h5fz_array_scatter_rows(const h5fz_array_geom *g, size_t esize, const void *chunk, uint64_t index, void *data,
                             uint64_t row_lo, uint64_t row_hi)
{
  row_copy c = {chunk, data, esize, g->chunk[g->rank - 1], 0};
  for_each_row(g, index, row_lo, row_hi, scatter_row, &c);
}

void h5fz_array_gather_chunk(const h5fz_array_geom *g, size_t esize, const void *data, uint64_t index,
                             uint64_t fill_bits, void *out)
{
  h5fz_array_gather_rows(g, esize, data, index, fill_bits, out, 0, h5fz_array_chunk_rows(g));
}

void h5fz_array_scatter_chunk(const h5fz_array_geom *g, size_t esize, const void *chunk, uint64_t index, void *data)
{
  h5fz_array_scatter_rows(g, esize, chunk, index, data, 0, h5fz_array_chunk_rows(g));
}

int h5fz_array_check(const h5fz_array_geom *g, h5fz_dtype dtype)
{
  if (!g || g->rank < 1 || g->rank > H5FZ_ARRAY_MAX_RANK)
    return h5fz_fail(H5FZ_ERR_ARG, "array rank must be 1..%d", H5FZ_ARRAY_MAX_RANK);
  if (!h5fz_dtype_size(dtype)) return h5fz_fail(H5FZ_ERR_ARG, "array values must be float32 or float64");
  for (uint32_t d = 0; d < g->rank; d++)
    if (!g->chunk[d]) return h5fz_fail(H5FZ_ERR_ARG, "chunk dim %u is 0", d);
  if (h5fz_array_chunk_elems(g) * h5fz_dtype_size(dtype) > H5FZ_MAX_CHUNK_BYTES)
    return h5fz_fail(H5FZ_ERR_ARG, "a chunk of %llu values is larger than format v1 allows",
                     (unsigned long long)h5fz_array_chunk_elems(g));
  return H5FZ_OK;
}

static void exec_cpu(h5fz_array_exec *ex)
{
  if (!ex) return;
  memset(ex, 0, sizeof *ex);
  snprintf(ex->kernel_class, sizeof ex->kernel_class, "cpu");
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
  if ((rc = h5fz_read_device_mode(&mode))) return rc;
  uint64_t done = 0;
  if (mode != H5FZ_DEVICE_CPU || on_device) {
    int sink_rc = 0;
    rc = h5fz_gpu_array_encode(spec, g, data, on_device, sink, ctx, ex, &done, &sink_rc);
    /* H5FZ_ERR_UNSUPPORTED: a chain the batches do not take (lorenzo_nd); the
     * per-chunk path below still runs it on the GPU */
    if (rc == H5FZ_OK || sink_rc == 1 || on_device || (mode == H5FZ_DEVICE_GPU && rc != H5FZ_ERR_UNSUPPORTED))
      return rc;
    if (sink_rc != H5FZ_GPU_UNUSABLE) /* no GPU at all is the normal CPU case, not worth a word */
      h5fz_log_once("h5fz: GPU batch encode failed, the CPU executor writes the remaining chunks: %s",
                  h5fz_last_error());
    h5fz_clear_error();
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
  if ((rc = h5fz_read_device_mode(&mode))) return rc;
  uint64_t done = 0;
  if (mode != H5FZ_DEVICE_CPU || on_device) {
    int source_rc = 0;
    rc = h5fz_gpu_array_decode(g, &want, fill, source, ctx, data, on_device, ex, &done, &source_rc);
    if (rc == H5FZ_OK || source_rc == 1 || on_device || (mode == H5FZ_DEVICE_GPU && rc != H5FZ_ERR_UNSUPPORTED) ||
        rc == H5FZ_ERR_CORRUPT ||
        rc == H5FZ_ERR_CHECKSUM || rc == H5FZ_ERR_TRUNCATED || rc == H5FZ_ERR_VERSION)
      return rc;
    if (source_rc != H5FZ_GPU_UNUSABLE)
      h5fz_log_once("h5fz: GPU batch decode failed, the CPU executor reads the remaining chunks: %s",
                  h5fz_last_error());
    h5fz_clear_error();
  }
  exec_cpu(ex);
  return cpu_decode(g, &want, fill, done, source, ctx, data);
}
