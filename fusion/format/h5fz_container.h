/*
 * h5fz_container.h - the chunk container v1 (docs/format.md): header layout,
 * writing a container around an executor's payload and outliers, and
 * opening one with every size checked.
 */
#ifndef H5FZ_CONTAINER_H
#define H5FZ_CONTAINER_H

#include "h5fz_format.h"
#include "h5fz_internal.h"

typedef struct {
  uint8_t version;
  uint8_t dtype;
  uint8_t flags;
  uint8_t mode;
  uint8_t n_ops;
  uint8_t rank;
  uint8_t predictor; /* byte 35: lorenzo_nd's dimension 1..3; 0 without lorenzo_nd */
  uint64_t input_bytes;
  uint64_t n_elements;
  double abs_bound;
  uint32_t subchunk_elems;
  uint32_t n_subchunks;
  uint32_t n_outliers;
  uint8_t ops[H5FZ_MAX_OPS];
  uint32_t dims[H5FZ_MAX_RANK];
} h5fz_header;

/* An executor's encoded sub-chunks: sub-chunk s's bytes start at
 * base + s * stride (stride 0: packed back to back), sizes in entries[]. */
typedef struct {
  const uint8_t *base;
  size_t stride;
  const uint32_t *entries;
} h5fz_payload;

/* h5fz_container_write's answer when the container would be stored raw
 * and in is NULL: call again with the chunk's input. */
#define H5FZ_NEED_RAW_INPUT 1

/* Write a container (malloc'd, caller frees): header h (n_outliers set),
 * size table and payload, side section of h->n_outliers outliers
 * (pos[] global, strictly increasing; vals[] raw bits), the trailing
 * bytes of in (past the last whole element), checksum. Falls back to a
 * stored-raw container when that is not larger; in may be NULL when
 * in_bytes holds whole elements, and then that case returns
 * H5FZ_NEED_RAW_INPUT instead (call again with the input). */
int h5fz_container_write(const h5fz_header *h, const h5fz_payload *payload, const uint32_t *pos, const void *vals,
                         const uint8_t *in, size_t in_bytes, void **out, size_t *out_bytes);

/* Serialise h to out[0..H5FZ_HEADER_BYTES) (little-endian). */
void h5fz_header_write(const h5fz_header *h, uint8_t *out);

/* Check a whole container: magic, version, checksum, header fields and
 * their consistency. On success *h holds the header. The body (size table,
 * payload, side section, trailing bytes) is in[H5FZ_HEADER_BYTES .. len-4).
 * Returns H5FZ_OK or a negative status with h5fz_last_error() set. */
int h5fz_container_open(const uint8_t *in, size_t len, h5fz_header *h);

/* The size table at the start of body (body_len bytes after the header) of
 * a container with header h, checked entry by entry before either executor
 * runs: H5FZ_ERR_TRUNCATED when the table or a sub-chunk runs past the
 * body, H5FZ_ERR_CORRUPT when an entry claims more than its sub-chunk's L
 * raw bytes, exactly L coded (the encoder stores such a sub-chunk raw), or
 * raw with any other size than L (a raw sub-chunk is its L bytes; a
 * decoder copying L would read into the next sub-chunk or past the
 * payload). offsets (n_subchunks entries, may be NULL) receives each
 * sub-chunk's payload offset, *payload_end the body offset where the
 * payload ends. Used by the codec and by the dataset API's GPU batches. */
int h5fz_size_table_check(const h5fz_header *h, const uint8_t *body, size_t body_len, uint64_t *offsets,
                          size_t *payload_end);

/* Reverse the bytes of each of the n elements of esize (4 or 8) bytes in
 * buf: little-endian <-> big-endian. */
void h5fz_swap_elements(void *buf, uint64_t n, size_t esize);

/* h5fz_container_set_byte_order: in h5fz_batch.h, for the dataset API. */

/* CRC-32 (zlib) of buf[0..len). */
uint32_t h5fz_checksum(const uint8_t *buf, size_t len);

#endif /* H5FZ_CONTAINER_H */
