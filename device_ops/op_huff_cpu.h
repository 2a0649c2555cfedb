/*
 * op_huff_cpu.h - the CPU forms of huff and huffctx, zero runs and canonical Huffman
 * (op_huff.h): the reference with a one-thread block, in the op table's
 * coder shape (op_cpu_coder.h). Same bytes as the GPU's block of threads:
 * tests/core/test_huff.c runs the reference with several threads too.
 */
#ifndef H5FZ_OP_HUFF_CPU_H
#define H5FZ_OP_HUFF_CPU_H

#include "op_cpu_coder.h"

/* Scratch bytes a huff or huffctx encode or decode needs (h5fz_huff_scratch). */
uint32_t h5fz_cpu_huff_scratch_bytes(void);

/* Encode n words (L bytes, n <= 16384) with huff; see h5fz_cpu_coder_encode_fn
 * (scratch: h5fz_cpu_huff_scratch_bytes, tmp: L bytes). */
uint32_t h5fz_cpu_coder_huff_encode(int wide, const uint8_t *in, uint32_t L, uint32_t n, uint8_t *out, uint32_t cap,
                                    void *scratch, void *tmp);
/* Its inverse; see h5fz_cpu_coder_decode_fn. */
int h5fz_cpu_coder_huff_decode(int wide, const uint8_t *in, uint32_t size, uint8_t *out, uint32_t L, uint32_t n,
                               void *scratch);
/* The same with huffctx (two codes: the token after a zero run has its own). */
uint32_t h5fz_cpu_coder_huffctx_encode(int wide, const uint8_t *in, uint32_t L, uint32_t n, uint8_t *out,
                                       uint32_t cap, void *scratch, void *tmp);
/* Its inverse; see h5fz_cpu_coder_decode_fn. */
int h5fz_cpu_coder_huffctx_decode(int wide, const uint8_t *in, uint32_t size, uint8_t *out, uint32_t L, uint32_t n,
                                  void *scratch);

#endif /* H5FZ_OP_HUFF_CPU_H */
