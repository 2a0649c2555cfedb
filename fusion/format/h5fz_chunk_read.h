/*
 * h5fz_chunk_read.h - reading a container into what an executor decodes
 * (h5fz_chunk_read.c): the checks in the order of docs/format.md, the size
 * table, the side section; then, once an executor has decoded the
 * sub-chunks, the outliers, the trailing bytes and the REL check.
 * The codec (either executor) and the CPU path of the batches share it.
 */
#ifndef H5FZ_CHUNK_READ_H
#define H5FZ_CHUNK_READ_H

#include "h5fz_chunk_plan.h"

/* One container being read. values (h.input_bytes, malloc'd) is the
 * chunk's output; the rest is owned by the read until h5fz_chunk_read_end
 * or h5fz_chunk_read_free. */
typedef struct {
  h5fz_header h;
  h5fz_chunk_plan p; /* from the header */
  int complete;      /* stored raw: values already hold the chunk */
  uint8_t *values;
  uint64_t *offsets;      /* payload offset of each sub-chunk */
  uint32_t *entries;      /* the size table */
  const uint8_t *payload; /* the sub-chunks' bytes, payload_bytes of them */
  size_t payload_bytes;
  uint32_t *pos; /* h.n_outliers outliers: positions, raw value bits */
  uint8_t *vals;
  const uint8_t *trailing; /* the bytes past the last whole element */
  size_t trailing_bytes;
  int outliers_placed; /* the executor put the outliers in place (read_end leaves them) */
} h5fz_chunk_read;

/* Open and check in[0..in_bytes) (want_bytes 0: any chunk; else it must
 * hold want_bytes bytes of want_dtype; want, when not NULL, the dataset's
 * spec: the chunk must have its shape when recorded and keep its bound),
 * allocate the values and read the size table and side section.
 * A small corrupt chunk never makes it allocate what its header claims
 * (the size checks that need no table come first). Returns H5FZ_OK (then
 * call h5fz_chunk_read_end, or h5fz_chunk_read_free on failure) or a
 * negative status with nothing to free. */
int h5fz_chunk_read_begin(const uint8_t *in, size_t in_bytes, h5fz_dtype want_dtype, size_t want_bytes,
                          const h5fz_spec *want, h5fz_chunk_read *r);

/* After the executor decoded r's sub-chunks into r->values (nothing to do
 * when r->complete): the outliers and trailing bytes into place, the REL
 * check against want (may be NULL). On H5FZ_OK *out (caller frees) and
 * *out_bytes receive the chunk; on failure everything is freed. */
int h5fz_chunk_read_end(h5fz_chunk_read *r, const h5fz_spec *want, void **out, size_t *out_bytes);

/* Outliers lo .. hi - 1 of the lists pos (element positions) and vals
 * (raw bits, esize bytes each) into values. */
void h5fz_chunk_place_outliers(uint8_t *values, uint32_t esize, const uint32_t *pos, const uint8_t *vals, uint32_t lo,
                               uint32_t hi);

/* The first of the n increasing positions pos[] that is >= at (n if none). */
uint32_t h5fz_outlier_lower_bound(const uint32_t *pos, uint32_t n, uint64_t at);

/* Free what a read holds (after h5fz_chunk_read_begin succeeded and the
 * decode failed). */
void h5fz_chunk_read_free(h5fz_chunk_read *r);

/* The outliers of a container, for h5fz_chunk_outliers: positions and raw
 * value bits of its h.n_outliers outliers in malloc'd lists (*pos, *vals;
 * caller frees both), checked as the decoder checks them. */
int h5fz_chunk_read_outliers(const uint8_t *in, size_t in_bytes, const h5fz_header *h, uint32_t **pos, uint8_t **vals);

#endif /* H5FZ_CHUNK_READ_H */
