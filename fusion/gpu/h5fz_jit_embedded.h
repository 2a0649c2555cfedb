/*
 * h5fz_jit_embedded.h - kernel modules compiled at build time and linked
 * into the library (a generated C file, see tools/h5fz_embed_kernels.c and
 * docs/gpu.md "Kernels embedded at build time"), looked up by the JIT before
 * its disk cache and NVRTC.
 */
#ifndef H5FZ_JIT_EMBEDDED_H
#define H5FZ_JIT_EMBEDDED_H

#include <stddef.h>
#include <stdint.h>

#include "h5fz_sha256.h"

/* One embedded module. key: the JIT cache digest (h5fz_jit_digest_nvrtc:
 * SHA-256 of every compile input) as 64 lowercase hex digits; zimage: the cubin or PTX, zlib-compressed,
 * zbytes long; image_bytes: its size uncompressed. */
typedef struct {
  const char *key;
  const char *arch_name;
  const char *what; /* "class arch dtype chain", for listings */
  const unsigned char *zimage;
  size_t zbytes;
  size_t image_bytes;
} h5fz_embedded_module;

/* The table linked into this build: *count entries (0 when the build had
 * no NVRTC or H5FZ_EMBED_KERNELS=OFF), all compiled by NVRTC
 * *nvrtc_major.*nvrtc_minor. Static storage. */
const h5fz_embedded_module *h5fz_embedded_modules(size_t *count, int *nvrtc_major, int *nvrtc_minor);

/* digest as the table writes keys: 64 lowercase hex digits and a NUL. */
void h5fz_embedded_key_hex(const unsigned char digest[H5FZ_SHA256_BYTES], char hex[2 * H5FZ_SHA256_BYTES + 1]);

/* The embedded image for (src, arch_name, plan_digest), keyed exactly as
 * the disk cache keys a compile by the table's NVRTC, so an entry is used
 * only for the very source, architecture, plan, options and op headers it
 * was compiled from. On a hit returns a malloc'd image (caller frees; one
 * byte more than *size, NUL) and fills *size; NULL on a miss, when
 * H5FZ_JIT_EMBEDDED=0, or when the image does not inflate to its size. */
void *h5fz_embedded_find(const char *src, const char *arch_name, uint64_t plan_digest, size_t *size);

#endif /* H5FZ_JIT_EMBEDDED_H */
