/*
 * h5fz_jit_cache.h - the JIT module cache on disk: one file per compile,
 * named by its digest (the SHA-256 of every compile input: generated source,
 * embedded op headers, target arch, NVRTC version, options, plan digest),
 * shared by every process that uses the same cache folder.
 */
#ifndef H5FZ_JIT_CACHE_H
#define H5FZ_JIT_CACHE_H

#include <stddef.h>

#include "h5fz_sha256.h"

/* The entry's file for digest: <dir>/jit/<the digest's first 16 bytes as 32
 * hex digits>.bin, dir from H5FZ_CACHE_DIR / XDG_CACHE_HOME / HOME
 * (h5fz_planner_cache_dir). Returns 0, or -1 when no cache folder is known
 * or the path does not fit in len bytes. */
int h5fz_jit_cache_path(const unsigned char digest[H5FZ_SHA256_BYTES], char *path, size_t len);

/* The module image of the entry at path, malloc'd (caller frees), *size its
 * bytes; NULL when the file is missing, short, of another format, records
 * another digest than `digest` (the whole 32 bytes are compared, so an entry
 * for other compile inputs is never used, even under the right name) or
 * fails its CRC-32. */
void *h5fz_jit_cache_load(const char *path, const unsigned char digest[H5FZ_SHA256_BYTES], size_t *size);

/* Store img (n bytes) as the entry at path recording digest: written to a
 * private temporary file and renamed over the entry, so concurrent processes
 * see either no entry or a whole one. Failures are ignored (the cache only
 * saves time). */
void h5fz_jit_cache_store(const char *path, const unsigned char digest[H5FZ_SHA256_BYTES], const void *img, size_t n);

#endif /* H5FZ_JIT_CACHE_H */
