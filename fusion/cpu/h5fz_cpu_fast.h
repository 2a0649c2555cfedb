/*
 * h5fz_cpu_fast.h - CPU-specialised versions of the hot word ops of
 * device_ops/ (quantizer, transforms, lorenzo_nd); bitshuffle and RZE are
 * in h5fz_cpu_fast_bits.h.
 *
 * Each function writes exactly the bytes (and returns exactly the values) of
 * the device_ops/ op of the same name run with the one-thread block
 * {0, 1, NULL}; the SPMD ops stay the reference definition of the format
 * (docs/format.md). These are written for one CPU thread: 8x8 bit-matrix
 * transposes on uint64 for bitshuffle, bitmaps built 8 bytes at a time with
 * SWAR tests for RZE, and loops the compiler can vectorise.
 * tests/core/test_cpu_fast.c checks them byte for byte against the reference.
 */
#ifndef H5FZ_CPU_FAST_H
#define H5FZ_CPU_FAST_H

#include "h5fz_ops.h"

/* Quantizer: same contract as h5fz_quant_encode_* / h5fz_quant_decode_*. */
uint32_t h5fz_fast_quant_encode_32(const float *in, uint32_t m, uint32_t m_pad, const h5fz_quant_params *p,
                                   uint32_t *out, uint32_t *out_pos, uint32_t *out_val);
uint32_t h5fz_fast_quant_encode_64(const double *in, uint32_t m, uint32_t m_pad, const h5fz_quant_params *p,
                                   uint64_t *out, uint32_t *out_pos, uint64_t *out_val);
void h5fz_fast_quant_decode_32(const uint32_t *in, uint32_t n, const h5fz_quant_params *p, float *out);
void h5fz_fast_quant_decode_64(const uint64_t *in, uint32_t n, const h5fz_quant_params *p, double *out);

/* Word transforms (op = H5FZ_OP_DELTA / ZIGZAG / NEGABINARY); in may equal
 * out except for delta. Returns 0, or -1 for an op it does not know. */
int h5fz_fast_transform_encode_32(uint8_t op, const uint32_t *in, uint32_t *out, uint32_t n);
int h5fz_fast_transform_encode_64(uint8_t op, const uint64_t *in, uint64_t *out, uint32_t n);
int h5fz_fast_transform_decode_32(uint8_t op, const uint32_t *in, uint32_t *out, uint32_t n);
int h5fz_fast_transform_decode_64(uint8_t op, const uint64_t *in, uint64_t *out, uint32_t n);

/* Fused delta then op2 (ZIGZAG or NEGABINARY) in one pass, and its inverse
 * (op2^-1 then delta^-1). in and out must differ. */
void h5fz_fast_delta_then_encode_32(uint8_t op2, const uint32_t *in, uint32_t *out, uint32_t n);
void h5fz_fast_delta_then_encode_64(uint8_t op2, const uint64_t *in, uint64_t *out, uint32_t n);
void h5fz_fast_undo_then_delta_decode_32(uint8_t op2, const uint32_t *in, uint32_t *out, uint32_t n);
void h5fz_fast_undo_then_delta_decode_64(uint8_t op2, const uint64_t *in, uint64_t *out, uint32_t n);

/* lorenzo_nd encode of a sub-chunk (m values from chunk element first, m_pad
 * words out) from the chunk's quantizer words q: the words of
 * h5fz_lnd_encode_* with qc = q. */
void h5fz_fast_lnd_encode_32(const uint32_t *q, uint32_t *out, uint32_t first, uint32_t m, uint32_t m_pad,
                             h5fz_lnd_geom g);
void h5fz_fast_lnd_encode_64(const uint64_t *q, uint64_t *out, uint32_t first, uint32_t m, uint32_t m_pad,
                             h5fz_lnd_geom g);

/* lorenzo_nd's cost pass from the chunk's quantizer words q: the sums of
 * h5fz_lnd_cost_* with qc = q. */
void h5fz_fast_lnd_cost_32(const uint32_t *q, h5fz_lnd_geom g, uint64_t k_lo, uint64_t k_hi, uint64_t T,
                           uint64_t cost[3]);
void h5fz_fast_lnd_cost_64(const uint64_t *q, h5fz_lnd_geom g, uint64_t k_lo, uint64_t k_hi, uint64_t T,
                           uint64_t cost[3]);

/* lorenzo_nd's decode inside a sub-chunk (m words from chunk element
 * first): the words and aux of h5fz_lnd_xscan_* in one pass. */
void h5fz_fast_lnd_xscan_32(uint32_t *w, uint32_t m, uint32_t first, h5fz_lnd_geom g, uint64_t *aux);
void h5fz_fast_lnd_xscan_64(uint64_t *w, uint32_t m, uint32_t first, h5fz_lnd_geom g, uint64_t *aux);

#endif /* H5FZ_CPU_FAST_H */
