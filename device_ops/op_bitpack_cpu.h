/*
 * op_bitpack_cpu.h - the CPU form of bitpack (op_bitpack.h): the reference
 * itself with a one-thread block, in the op table's coder shape
 * (op_cpu_coder.h). Same bytes by construction.
 */
#ifndef H5FZ_OP_BITPACK_CPU_H
#define H5FZ_OP_BITPACK_CPU_H

#include "op_cpu_coder.h"

/* Bit packing of n words (L bytes); see h5fz_cpu_coder_encode_fn. */
uint32_t h5fz_cpu_coder_bitpack_encode(int wide, const uint8_t *in, uint32_t L, uint32_t n, uint8_t *out,
                                       uint32_t cap, void *scratch, void *tmp);
/* Its inverse; see h5fz_cpu_coder_decode_fn. */
int h5fz_cpu_coder_bitpack_decode(int wide, const uint8_t *in, uint32_t size, uint8_t *out, uint32_t L, uint32_t n,
                                  void *scratch);

#endif /* H5FZ_OP_BITPACK_CPU_H */
