/*
 * op_quant_cpu.h - the CPU fast form of the quantizer (op_quant_cpu.c).
 *
 * Twin of op_quant.h (the reference, SPMD, also the GPU's generic path) and
 * of the quantizer stage of op_warp_fused.h. What must stay equal: the
 * words, the escape list (positions in index order and the values' bits)
 * and the decoded values, exactly those of h5fz_quant_encode_* /
 * h5fz_quant_decode_* run with the one-thread block {0, 1, NULL}: the same
 * expressions in the same order (the bound is a promise every executor
 * keeps the same way). tests/core/test_cpu_fast.c checks them byte for byte.
 */
#ifndef H5FZ_OP_QUANT_CPU_H
#define H5FZ_OP_QUANT_CPU_H

#include "h5fz_ops.h"

/* Encode m values in[] into m_pad words out[] (words m..m_pad zero); the
 * values it cannot bound are listed: their positions in out_pos[] and bits
 * in out_val[] (room for m each, owned by the caller). Returns how many
 * escaped. */
uint32_t h5fz_fast_quant_encode_32(const float *in, uint32_t m, uint32_t m_pad, const h5fz_quant_params *p,
                                   uint32_t *out, uint32_t *out_pos, uint32_t *out_val);
uint32_t h5fz_fast_quant_encode_64(const double *in, uint32_t m, uint32_t m_pad, const h5fz_quant_params *p,
                                   uint64_t *out, uint32_t *out_pos, uint64_t *out_val);

/* Decode n words in[] into n values out[] (out may be in: in place). */
void h5fz_fast_quant_decode_32(const uint32_t *in, uint32_t n, const h5fz_quant_params *p, float *out);
void h5fz_fast_quant_decode_64(const uint64_t *in, uint32_t n, const h5fz_quant_params *p, double *out);

#endif /* H5FZ_OP_QUANT_CPU_H */
