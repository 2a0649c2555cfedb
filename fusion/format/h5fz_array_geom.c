/*
 * h5fz_array_geom.c - the chunk grid of an array (h5fz_batch.h): chunk
 * counts and origins, and moving a chunk's rows between the array and a
 * chunk-contiguous buffer on the host, padded with the fill value as HDF5
 * pads edge chunks.
 */
#include <string.h>

#include "h5fz_array_geom.h"

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

uint64_t h5fz_array_chunk_rows(const h5fz_array_geom *g) { return h5fz_array_chunk_elems(g) / g->chunk[g->rank - 1]; }

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
