/*
 * h5fz_chunk_inspect.c - what a container says without decoding it
 * (h5fz.h): its header as h5fz_chunk_info with the raw sub-chunks counted,
 * and its outliers (positions and exact values).
 */
#include <stdlib.h>
#include <string.h>

#include "h5fz_chunk_read.h"

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
