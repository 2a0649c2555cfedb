/*
 * op_fused_decode_cpu.h - the CPU's fused decode of the default chain's
 * word ops (op_fused_decode_cpu.c): bit planes -> values in one pass, the
 * inverse of quant, delta, zigzag and bitshuffle for float32 in ABS or REL.
 *
 * Twin of running h5fz_fast_bitshuffle_decode_32,
 * h5fz_fast_delta_zigzag_decode_32 and h5fz_fast_quant_decode_32 in turn
 * (and so of the references op_bitshuffle.h, op_zigzag.h, op_delta.h,
 * op_quant.h with the one-thread block): what must stay equal is every
 * value's bits. tests/core/test_cpu_fast.c checks them. Why fused: the
 * three passes wrote and read the sub-chunk's words twice more and ran the
 * delta's running sum one word at a time; on the realistic array they took
 * 60 % of the CPU decode (docs/performance.md, issue 28).
 */
#ifndef H5FZ_OP_FUSED_DECODE_CPU_H
#define H5FZ_OP_FUSED_DECODE_CPU_H

#include <stdint.h>

/* Whether h5fz_fast_planes_dzq_decode_32 runs on this CPU (it needs AVX2,
 * checked at run time); the caller runs the three ops otherwise. */
int h5fz_fast_planes_dzq_ok(void);

/* The bit planes of n words (planes[0..4n), n a multiple of 64, every byte
 * from extent on zero: extent = 4n when unknown) -> the first m <= n values
 * out[0..m): each word unzigzagged, summed from 0 over the sub-chunk in
 * wrapping arithmetic, and that bin times step rounded to float, as
 * h5fz_quant_recon. Writes nothing past out[m - 1]. No errors. */
void h5fz_fast_planes_dzq_decode_32(const uint8_t *planes, uint32_t n, uint32_t extent, uint32_t m, double step,
                                    float *out);

#endif /* H5FZ_OP_FUSED_DECODE_CPU_H */
