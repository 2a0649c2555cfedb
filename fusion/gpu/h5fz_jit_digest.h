/*
 * h5fz_jit_digest.h - the key of a compiled module (h5fz_jit_digest.c):
 * what the JIT's memory and disk caches and the table of modules embedded
 * at build time are looked up by, and NVRTC's fixed options it covers.
 */
#ifndef H5FZ_JIT_DIGEST_H
#define H5FZ_JIT_DIGEST_H

#include <stddef.h>
#include <stdint.h>

#include "h5fz_sha256.h"

/* Options that keep GPU arithmetic identical to the CPU's (docs/format.md),
 * handed to every NVRTC compile and hashed into every key. */
#define H5FZ_JIT_N_FIXED 6
extern const char *const h5fz_jit_fixed_options[H5FZ_JIT_N_FIXED];

/* The SHA-256 of every input of the compile of src for arch_name: the
 * source, the embedded op headers (names and texts), the arch, the NVRTC
 * version, the fixed options and the plan digest. Keys both cache levels; a
 * disk entry is used only when it records exactly this digest. */
void h5fz_jit_digest(const char *src, const char *arch_name, uint64_t plan_digest,
                     unsigned char digest[H5FZ_SHA256_BYTES]);

/* The same digest for a compile by NVRTC major.minor (h5fz_jit_digest uses
 * this process's NVRTC, 0.0 when there is none). The table of kernels
 * embedded at build time is keyed with the version that built it. */
void h5fz_jit_digest_nvrtc(const char *src, const char *arch_name, uint64_t plan_digest, int major, int minor,
                           unsigned char digest[H5FZ_SHA256_BYTES]);

#endif /* H5FZ_JIT_DIGEST_H */
