/*
 * op_rze_cpu.h - the CPU fast form of RZE, repeated-zero elimination
 * (op_rze_cpu.c).
 *
 * Twin of op_rze.h (the reference, SPMD, also the GPU's generic path) and
 * of the RZE stage of op_warp_fused.h. What must stay equal: the encoded
 * bytes and sizes, exactly those of h5fz_rze_encode run with the
 * one-thread block {0, 1, NULL}, and which inputs the decoder refuses
 * (h5fz_rze_decode's checks). tests/core/test_cpu_fast.c checks them.
 */
#ifndef H5FZ_OP_RZE_CPU_H
#define H5FZ_OP_RZE_CPU_H

#include "h5fz_ops.h" /* H5FZ_RZE_NOT_SMALLER, h5fz_rze_scratch_bytes */
#include "op_cpu_coder.h"

/* Encode L bytes in[] into out[0..cap). scratch holds
 * h5fz_rze_scratch_bytes(L) bytes (op_rze.h), owned by the caller. Returns
 * the encoded size, or H5FZ_RZE_NOT_SMALLER when it would not be smaller
 * than L or would not fit cap (the caller stores the bytes raw). */
uint32_t h5fz_fast_rze_encode(const uint8_t *in, uint32_t L, uint8_t *out, uint32_t cap, uint8_t *scratch);

/* Decode size bytes in[] into L bytes out[] (scratch as above). Returns 0,
 * or -1 when the stream is inconsistent (bits past a level's end, counts
 * that overrun or do not use up the input); every read is bounds-checked. */
int h5fz_fast_rze_decode(const uint8_t *in, uint32_t size, uint8_t *out, uint32_t L, uint8_t *scratch);

/* h5fz_fast_rze_decode that also says where the output's zeros begin: on
 * success every byte of out from *extent on is 0 (*extent <= L; a decoder
 * after it may skip them, op_fused_decode_cpu.h). Same returns. */
int h5fz_fast_rze_decode_extent(const uint8_t *in, uint32_t size, uint8_t *out, uint32_t L, uint8_t *scratch,
                                uint32_t *extent);

/* The two above in the op table's coder shape (op_cpu_coder.h). */
uint32_t h5fz_cpu_coder_rze_encode(int wide, const uint8_t *in, uint32_t L, uint32_t n, uint8_t *out, uint32_t cap,
                                   void *scratch, void *tmp);
int h5fz_cpu_coder_rze_decode(int wide, const uint8_t *in, uint32_t size, uint8_t *out, uint32_t L, uint32_t n,
                              void *scratch);

#endif /* H5FZ_OP_RZE_CPU_H */
