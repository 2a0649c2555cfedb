/*
 * op_lorenzo_nd_cpu.h - the CPU fast forms of lorenzo_nd's per-sub-chunk
 * steps (op_lorenzo_nd_cpu.c).
 *
 * Twin of op_lorenzo_nd.h (the reference, SPMD, the GPU's code too). What
 * must stay equal: the residual words of h5fz_lnd_encode_* with qc = q, the
 * cost sums of h5fz_lnd_cost_*, and the words and aux of h5fz_lnd_xscan_*,
 * each run with the one-thread block {0, 1, NULL}.
 * tests/core/test_lnd_spmd.c checks them against the reference.
 */
#ifndef H5FZ_OP_LORENZO_ND_CPU_H
#define H5FZ_OP_LORENZO_ND_CPU_H

#include "h5fz_ops.h"

/* Encode of a sub-chunk (m values from chunk element first, m_pad words
 * out, words m..m_pad zero) from the chunk's quantizer words q (all of the
 * chunk, read behind first for the neighbours). */
void h5fz_fast_lnd_encode_32(const uint32_t *q, uint32_t *out, uint32_t first, uint32_t m, uint32_t m_pad,
                             h5fz_lnd_geom g);
void h5fz_fast_lnd_encode_64(const uint64_t *q, uint64_t *out, uint32_t first, uint32_t m, uint32_t m_pad,
                             h5fz_lnd_geom g);

/* The cost pass over the groups of 128 words h5fz_lnd_sample picks (k_lo,
 * k_hi, T) of the chunk's quantizer words q: cost[d] estimates the bits of
 * the (d + 1)-D predictor, cost[3] those of interpolation (0 for the
 * predictors g does not allow). */
void h5fz_fast_lnd_cost_32(const uint32_t *q, h5fz_lnd_geom g, uint64_t k_lo, uint64_t k_hi, uint64_t T,
                           uint64_t cost[H5FZ_LND_NCOST]);
void h5fz_fast_lnd_cost_64(const uint64_t *q, h5fz_lnd_geom g, uint64_t k_lo, uint64_t k_hi, uint64_t T,
                           uint64_t cost[H5FZ_LND_NCOST]);

/* Decode inside a sub-chunk: the prefix sums along x of w[0..m) (chunk
 * element first onwards), in place; aux[0..2) gets what the chunk-wide
 * carry needs (the last sum, whether a row starts inside). */
void h5fz_fast_lnd_xscan_32(uint32_t *w, uint32_t m, uint32_t first, h5fz_lnd_geom g, uint64_t *aux);
void h5fz_fast_lnd_xscan_64(uint64_t *w, uint32_t m, uint32_t first, h5fz_lnd_geom g, uint64_t *aux);

#endif /* H5FZ_OP_LORENZO_ND_CPU_H */
