/*
 * h5fz_sha256.h - SHA-256 (FIPS 180-4) of byte streams, for the JIT cache's
 * keys: a module is loaded from disk only when the entry records the
 * SHA-256 of exactly the compile inputs at hand, so two different kernels
 * cannot share an entry by a hash collision.
 */
#ifndef H5FZ_SHA256_H
#define H5FZ_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define H5FZ_SHA256_BYTES 32

typedef struct {
  uint32_t state[8];
  uint64_t length; /* bytes hashed so far */
  unsigned char block[64];
  size_t used; /* bytes in block */
} h5fz_sha256;

/* Start a hash. */
void h5fz_sha256_init(h5fz_sha256 *h);
/* Add n bytes at data (n may be 0). */
void h5fz_sha256_update(h5fz_sha256 *h, const void *data, size_t n);
/* Finish: the 32-byte digest into out; h is then spent. */
void h5fz_sha256_final(h5fz_sha256 *h, unsigned char out[H5FZ_SHA256_BYTES]);

#endif /* H5FZ_SHA256_H */
