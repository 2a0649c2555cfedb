/*
 * h5fz_format.h - the constants of the chunk container (docs/format.md)
 * and its little-endian byte helpers, shared by the container
 * (h5fz_container.c) and its side section (h5fz_side.c). Header only.
 */
#ifndef H5FZ_FORMAT_H
#define H5FZ_FORMAT_H

#include <stdint.h>

/* Version 2 is version 1 with flag bit 1 (the values' byte order); h5fz
 * writes it only for big-endian chunks, so that little-endian chunks stay
 * readable by decoders of version 1 and a big-endian chunk is refused by
 * them as "newer" instead of decoding in the wrong byte order. */
/* Version 3 is version 2 with the ops of the ratio chain (huff): h5fz
 * writes it only for chunks whose chain has such an op (the op table's
 * since_version), so every other chunk stays readable by older decoders.
 * Version 4 adds huffctx (huff with two codes) the same way, version 5
 * lorenzo_interp (lorenzo_nd with an interpolation predictor). */
/* The newest version this h5fz reads is h5fz_newest_format_version(): the
 * op table's newest since_version (5 today). */
#define H5FZ_FORMAT_VERSION_LE 1u /* what it writes for little-endian chunks */
#define H5FZ_FORMAT_VERSION_BE 2u /* ... and for big-endian ones */
#define H5FZ_HEADER_BYTES 80u
#define H5FZ_CHECKSUM_BYTES 4u
#define H5FZ_FLAG_STORED_RAW 0x01u
#define H5FZ_FLAG_BIG_ENDIAN 0x02u /* version 2: the chunk decodes to big-endian values */
#define H5FZ_SUB_RAW 0x80000000u   /* size-table bit: coder bypassed */
#define H5FZ_SUB_SIZE_MASK 0x7fffffffu

/* m words padded to the multiple of 64 a sub-chunk's ops work on. */
static inline uint32_t h5fz_pad64(uint32_t m) { return (m + 63u) & ~63u; }

static inline void h5fz_put_u32(uint8_t *p, uint32_t v)
{
  p[0] = (uint8_t)v;
  p[1] = (uint8_t)(v >> 8);
  p[2] = (uint8_t)(v >> 16);
  p[3] = (uint8_t)(v >> 24);
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

#endif /* H5FZ_FORMAT_H */
