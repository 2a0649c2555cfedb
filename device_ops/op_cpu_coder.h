/*
 * op_cpu_coder.h - the one shape of a coder's CPU forms, so that the op
 * table (fusion/format/h5fz_optable.c) reaches every coder the same way.
 */
#ifndef H5FZ_OP_CPU_CODER_H
#define H5FZ_OP_CPU_CODER_H

#include <stdint.h>

/* Encode one sub-chunk: in holds L bytes = n words (esize 4 or 8, wide =
 * esize == 8; n a multiple of 64); out has room for cap bytes; scratch
 * (H5FZ_CPU_CODER_SCRATCH_BYTES(L)) and tmp (L bytes, 8-byte aligned) are
 * the caller's. Returns the coded size (< L), or 0xffffffff when the coder
 * would not shrink the sub-chunk (the caller stores it raw). */
typedef uint32_t (*h5fz_cpu_coder_encode_fn)(int wide, const uint8_t *in, uint32_t L, uint32_t n, uint8_t *out,
                                             uint32_t cap, void *scratch, void *tmp);
/* Decode size bytes into L bytes = n words. Returns 0, or -1 when the
 * stream is inconsistent. */
typedef int (*h5fz_cpu_coder_decode_fn)(int wide, const uint8_t *in, uint32_t size, uint8_t *out, uint32_t L,
                                        uint32_t n, void *scratch);

#endif /* H5FZ_OP_CPU_CODER_H */
