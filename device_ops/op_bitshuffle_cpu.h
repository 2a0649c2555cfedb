/*
 * op_bitshuffle_cpu.h - the CPU fast form of bitshuffle (op_bitshuffle_cpu.c).
 *
 * Twin of op_bitshuffle.h (the reference, SPMD, also the GPU's generic
 * path) and of the bit-plane stage of op_warp_fused.h. What must stay
 * equal: the bytes, exactly those of h5fz_bitshuffle_encode_* /
 * h5fz_bitshuffle_decode_* run with the one-thread block {0, 1, NULL}
 * (docs/format.md); a change to one twin is a change to all of them.
 * tests/core/test_cpu_fast.c checks them byte for byte.
 */
#ifndef H5FZ_OP_BITSHUFFLE_CPU_H
#define H5FZ_OP_BITSHUFFLE_CPU_H

#include "op_cpu_words.h"

/* Bit planes of n words (a multiple of 8): in[0..n) -> out[0..n * size of
 * a word); in and out must differ. Decode is the inverse. No errors. */
h5fz_planes_from32_fn h5fz_fast_bitshuffle_encode_32;
h5fz_planes_from64_fn h5fz_fast_bitshuffle_encode_64;
h5fz_planes_to32_fn h5fz_fast_bitshuffle_decode_32;
h5fz_planes_to64_fn h5fz_fast_bitshuffle_decode_64;

#endif /* H5FZ_OP_BITSHUFFLE_CPU_H */
