/*
 * h5fz_cpu_fast_bits.h - CPU-specialised bitshuffle and RZE
 * (h5fz_cpu_fast_bits.c): exactly the bytes of the device_ops/ ops of the
 * same name run with the one-thread block {0, 1, NULL}, written for one
 * CPU thread (8x8 bit-matrix transposes, SWAR bitmaps).
 * tests/core/test_cpu_fast.c checks them byte for byte against the reference.
 */
#ifndef H5FZ_CPU_FAST_BITS_H
#define H5FZ_CPU_FAST_BITS_H

#include "h5fz_ops.h"

/* Bitshuffle, n words (a multiple of 8); in and out must differ. */
void h5fz_fast_bitshuffle_encode_32(const uint32_t *in, uint8_t *out, uint32_t n);
void h5fz_fast_bitshuffle_encode_64(const uint64_t *in, uint8_t *out, uint32_t n);
void h5fz_fast_bitshuffle_decode_32(const uint8_t *in, uint32_t *out, uint32_t n);
void h5fz_fast_bitshuffle_decode_64(const uint8_t *in, uint64_t *out, uint32_t n);

/* RZE: same contract as h5fz_rze_encode / h5fz_rze_decode (scratch of
 * h5fz_rze_scratch_bytes(L) bytes). */
uint32_t h5fz_fast_rze_encode(const uint8_t *in, uint32_t L, uint8_t *out, uint32_t cap, uint8_t *scratch);
int h5fz_fast_rze_decode(const uint8_t *in, uint32_t size, uint8_t *out, uint32_t L, uint8_t *scratch);

#endif /* H5FZ_CPU_FAST_BITS_H */
