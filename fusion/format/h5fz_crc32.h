/*
 * h5fz_crc32.h - the container's checksum function (h5fz_crc32.c): zlib's
 * CRC-32, by carry-less multiplication where the CPU has it.
 *
 * Why not zlib's crc32 alone: it ran at about 2 GB/s here, and a decode
 * checks the whole container before anything else, on the calling thread:
 * 7 % of a 4 MiB chunk's decode on 2 cores (docs/performance.md, issue 28).
 */
#ifndef H5FZ_CRC32_H
#define H5FZ_CRC32_H

#include <stddef.h>
#include <stdint.h>

/* crc32(crc, buf, len) of zlib (the IEEE 802.3 polynomial, reflected, with
 * its pre- and post-inversion: h5fz_crc32(0, NULL, 0) == 0, and one call
 * over a buffer equals calls over its parts in turn), for any len. */
uint32_t h5fz_crc32(uint32_t crc, const uint8_t *buf, size_t len);

#endif /* H5FZ_CRC32_H */
