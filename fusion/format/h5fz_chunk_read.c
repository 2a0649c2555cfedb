/*
 * h5fz_chunk_read.c - a container's parts for an executor to decode, then
 * the chunk put together from the decoded sub-chunks, its outliers and its
 * trailing bytes. Statuses and their order are the decoder's contract
 * (docs/format.md §9; the fuzz targets hold it).
 */
#include <stdlib.h>
#include <string.h>

#include "h5fz_chunk_check.h"
#include "h5fz_chunk_read.h"
#include "h5fz_side.h"

/* The checks that need no table: the dataset's type, size, shape and
 * bound, the raw size or the table's. */
static int check_before_alloc(const h5fz_header *h, size_t body_len, h5fz_dtype want_dtype, size_t want_bytes,
                              const h5fz_spec *want)
{
  int rc;
  if (want_bytes && (h->dtype != (uint8_t)want_dtype || h->input_bytes != want_bytes))
    return h5fz_fail(H5FZ_ERR_CORRUPT, "the chunk holds %llu bytes of %s, the dataset's chunks are %zu bytes of %s",
                     (unsigned long long)h->input_bytes, h5fz_dtype_name(h->dtype), want_bytes,
                     h5fz_dtype_name(want_dtype));
  if (want && (rc = h5fz_header_check_spec(h, want))) return rc;
  /* The size checks that need no table come before any allocation, so a
   * small corrupt chunk cannot make the decoder allocate the up to 2 GiB its
   * header claims: past them input_bytes <= 16384 * body_len + 8 (at most
   * 65536 bytes per 4-byte size-table entry). Same statuses, same order. */
  if (h->flags & H5FZ_FLAG_STORED_RAW) {
    if (body_len != h->input_bytes)
      return h5fz_fail(H5FZ_ERR_CORRUPT, "stored-raw chunk holds %zu bytes, header says %llu", body_len,
                       (unsigned long long)h->input_bytes);
  } else if (4u * (size_t)h->n_subchunks > body_len) {
    return h5fz_fail(H5FZ_ERR_TRUNCATED, "chunk ends inside its size table");
  }
  return H5FZ_OK;
}

/* The size table, side section and trailing bytes of a checked header. */
static int read_tables(h5fz_chunk_read *r, const uint8_t *body, size_t body_len)
{
  const h5fz_header *h = &r->h;
  r->offsets = malloc(((size_t)h->n_subchunks + 1u) * sizeof *r->offsets);
  r->entries = malloc(((size_t)h->n_subchunks + 1u) * 4u);
  r->pos = malloc(((size_t)h->n_outliers + 1u) * 4u);
  r->vals = malloc(((size_t)h->n_outliers + 1u) * r->p.esize);
  size_t payload_end = 0, used = 0;
  if (!r->offsets || !r->entries || !r->pos || !r->vals)
    return h5fz_fail(H5FZ_ERR_NOMEM, "cannot allocate decode tables");
  int rc = h5fz_size_table_check(h, body, body_len, r->offsets, &payload_end);
  if (rc) return rc;
  for (uint32_t s = 0; s < h->n_subchunks; s++) r->entries[s] = h5fz_get_u32(body + 4u * (size_t)s);
  if (h->n_outliers) {
    rc = h5fz_side_decode(body + payload_end, body_len - payload_end, h->n_outliers, r->p.esize, h->n_elements, r->pos,
                          r->vals, &used);
    if (rc) return rc;
  }
  size_t trailing = h->input_bytes - h->n_elements * r->p.esize;
  if (payload_end + used + trailing != body_len)
    return h5fz_fail(H5FZ_ERR_CORRUPT, "chunk body has %zu bytes, its parts add up to %zu", body_len,
                     payload_end + used + trailing);
  r->payload = body + 4u * (size_t)h->n_subchunks;
  r->payload_bytes = payload_end - 4u * (size_t)h->n_subchunks;
  r->trailing = body + payload_end + used;
  r->trailing_bytes = trailing;
  return H5FZ_OK;
}

int h5fz_chunk_read_begin(const uint8_t *in, size_t in_bytes, h5fz_dtype want_dtype, size_t want_bytes,
                          const h5fz_spec *want, h5fz_chunk_read *r)
{
  memset(r, 0, sizeof *r);
  int rc = h5fz_container_open(in, in_bytes, &r->h);
  if (rc) return rc;
  const uint8_t *body = in + H5FZ_HEADER_BYTES;
  size_t body_len = in_bytes - H5FZ_HEADER_BYTES - H5FZ_CHECKSUM_BYTES;
  if ((rc = check_before_alloc(&r->h, body_len, want_dtype, want_bytes, want))) return rc;
  r->values = malloc(r->h.input_bytes ? r->h.input_bytes : 1u);
  if (!r->values) return h5fz_fail(H5FZ_ERR_NOMEM, "cannot allocate %llu bytes", (unsigned long long)r->h.input_bytes);
  if (r->h.flags & H5FZ_FLAG_STORED_RAW) {
    memcpy(r->values, body, body_len);
    if (r->h.flags & H5FZ_FLAG_BIG_ENDIAN) h5fz_swap_elements(r->values, r->h.n_elements, h5fz_dtype_size(r->h.dtype));
    r->complete = 1;
    return H5FZ_OK;
  }
  h5fz_chunk_plan_from_header(&r->h, &r->p);
  if ((rc = read_tables(r, body, body_len))) h5fz_chunk_read_free(r);
  return rc;
}

static void free_tables(h5fz_chunk_read *r)
{
  free(r->offsets);
  free(r->entries);
  free(r->pos);
  free(r->vals);
  r->offsets = NULL;
  r->entries = NULL;
  r->pos = NULL;
  r->vals = NULL;
}

void h5fz_chunk_read_free(h5fz_chunk_read *r)
{
  free_tables(r);
  free(r->values);
  r->values = NULL;
}

void h5fz_chunk_place_outliers(uint8_t *values, uint32_t esize, const uint32_t *pos, const uint8_t *vals, uint32_t lo,
                               uint32_t hi)
{
  /* a copy of a constant size a width: one load and store each, where a
   * memcpy of esize bytes was a call per outlier (there are millions in
   * the realistic array: its NaN and fill values) */
  if (esize == 8)
    for (uint32_t i = lo; i < hi; i++) memcpy(values + (size_t)pos[i] * 8u, vals + (size_t)i * 8u, 8);
  else
    for (uint32_t i = lo; i < hi; i++) memcpy(values + (size_t)pos[i] * 4u, vals + (size_t)i * 4u, 4);
}

uint32_t h5fz_outlier_lower_bound(const uint32_t *pos, uint32_t n, uint64_t at)
{
  uint32_t lo = 0, hi = n;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2u;
    if (pos[mid] < at)
      lo = mid + 1u;
    else
      hi = mid;
  }
  return lo;
}

int h5fz_chunk_read_end(h5fz_chunk_read *r, const h5fz_spec *want, void **out, size_t *out_bytes)
{
  if (!r->complete) {
    const h5fz_header *h = &r->h;
    uint32_t esize = r->p.esize;
    if (!r->outliers_placed) h5fz_chunk_place_outliers(r->values, esize, r->pos, r->vals, 0, h->n_outliers);
    memcpy(r->values + h->n_elements * esize, r->trailing, r->trailing_bytes);
    free_tables(r);
    int rc = h5fz_rel_check_decoded(h, want, r->values);
    if (rc) {
      h5fz_chunk_read_free(r);
      return rc;
    }
    if (h->flags & H5FZ_FLAG_BIG_ENDIAN)
      h5fz_swap_elements(r->values, h->n_elements, esize); /* the body is little-endian */
  }
  *out = r->values;
  *out_bytes = r->h.input_bytes;
  r->values = NULL;
  return H5FZ_OK;
}

int h5fz_chunk_read_outliers(const uint8_t *in, size_t in_bytes, const h5fz_header *h, uint32_t **pos, uint8_t **vals)
{
  const uint8_t *body = in + H5FZ_HEADER_BYTES;
  size_t body_len = in_bytes - H5FZ_HEADER_BYTES - H5FZ_CHECKSUM_BYTES, payload_end = 0, used = 0;
  uint32_t esize = (uint32_t)h5fz_dtype_size((h5fz_dtype)h->dtype);
  if (4u * (size_t)h->n_subchunks > body_len) return h5fz_fail(H5FZ_ERR_TRUNCATED, "chunk ends inside its size table");
  uint64_t *offsets = malloc(((size_t)h->n_subchunks + 1u) * sizeof *offsets);
  *pos = malloc(((size_t)h->n_outliers + 1u) * 4u);
  *vals = malloc(((size_t)h->n_outliers + 1u) * esize);
  int rc = H5FZ_OK;
  if (!offsets || !*pos || !*vals) rc = h5fz_fail(H5FZ_ERR_NOMEM, "cannot allocate the outlier lists");
  if (!rc) rc = h5fz_size_table_check(h, body, body_len, offsets, &payload_end);
  if (!rc)
    rc = h5fz_side_decode(body + payload_end, body_len - payload_end, h->n_outliers, esize, h->n_elements, *pos, *vals,
                          &used);
  free(offsets);
  if (rc) {
    free(*pos);
    free(*vals);
    *pos = NULL;
    *vals = NULL;
  }
  return rc;
}
