/*
 * h5fz_container.h - the chunk container v1 (docs/format.md): header layout,
 * writing it, and opening a container with every size checked.
 */
#ifndef H5FZ_CONTAINER_H
#define H5FZ_CONTAINER_H

#include "h5fz_internal.h"

/* Version 2 is version 1 with flag bit 1 (the values' byte order); h5fz
 * writes it only for big-endian chunks, so that little-endian chunks stay
 * readable by decoders of version 1 and a big-endian chunk is refused by
 * them as "newer" instead of decoding in the wrong byte order. */
#define H5FZ_FORMAT_VERSION 2u    /* the newest version this h5fz reads */
#define H5FZ_FORMAT_VERSION_LE 1u /* what it writes for little-endian chunks */
#define H5FZ_HEADER_BYTES 80u
#define H5FZ_CHECKSUM_BYTES 4u
#define H5FZ_FLAG_STORED_RAW 0x01u
#define H5FZ_FLAG_BIG_ENDIAN 0x02u    /* version 2: the chunk decodes to big-endian values */
#define H5FZ_SUB_RAW 0x80000000u      /* size-table bit: coder bypassed */
#define H5FZ_SUB_SIZE_MASK 0x7fffffffu

typedef struct {
  uint8_t version;
  uint8_t dtype;
  uint8_t flags;
  uint8_t mode;
  uint8_t n_ops;
  uint8_t rank;
  uint8_t predictor;        /* byte 35: lorenzo_nd's dimension 1..3; 0 without lorenzo_nd */
  uint64_t input_bytes;
  uint64_t n_elements;
  double abs_bound;
  uint32_t subchunk_elems;
  uint32_t n_subchunks;
  uint32_t n_outliers;
  uint8_t ops[H5FZ_MAX_OPS];
  uint32_t dims[H5FZ_MAX_RANK];
} h5fz_header;

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

/* Set the byte order a valid container records (flag bit 1 and the version
 * byte, 2 for big-endian, 1 for little-endian) and its checksum again, in
 * place; the body (little-endian values) is unchanged. For writers that
 * code values in native order for a dataset of the other byte order (the
 * dataset API). Returns H5FZ_OK or the status of h5fz_container_open. */
int h5fz_container_set_byte_order(uint8_t *buf, size_t len, int big_endian);

/* CRC-32 (zlib) of buf[0..len). */
uint32_t h5fz_checksum(const uint8_t *buf, size_t len);

static inline void h5fz_put_u32(uint8_t *p, uint32_t v)
{
  p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); p[2] = (uint8_t)(v >> 16); p[3] = (uint8_t)(v >> 24);
}
static inline uint32_t h5fz_get_u32(const uint8_t *p)
{
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline void h5fz_put_u64(uint8_t *p, uint64_t v)
{
  h5fz_put_u32(p, (uint32_t)v);
  h5fz_put_u32(p + 4, (uint32_t)(v >> 32));
}
static inline uint64_t h5fz_get_u64(const uint8_t *p)
{
  return (uint64_t)h5fz_get_u32(p) | (uint64_t)h5fz_get_u32(p + 4) << 32;
}

#endif /* H5FZ_CONTAINER_H */
