/*
 * op_delta_cpu.h - the CPU fast forms of delta, alone and fused with the
 * zigzag or negabinary that follows it (op_delta_cpu.c).
 *
 * Twin of op_delta.h (the reference, SPMD, also the GPU's generic path;
 * the fused forms are the reference ops applied in turn: op_delta.h then
 * op_zigzag.h or op_negabinary.h), and of the delta stage of
 * op_warp_fused.h. What must stay equal: the words, in wrapping integer
 * arithmetic, with in[-1] = 0 at the sub-chunk's start.
 */
#ifndef H5FZ_OP_DELTA_CPU_H
#define H5FZ_OP_DELTA_CPU_H

#include "op_cpu_words.h"

/* n words in[] -> out[]; in and out must differ for the encodes (they may
 * be the same buffer for delta's decode). No errors. */
h5fz_words32_fn h5fz_fast_delta_encode_32, h5fz_fast_delta_decode_32;
h5fz_words64_fn h5fz_fast_delta_encode_64, h5fz_fast_delta_decode_64;

/* delta then zigzag (or negabinary) in one pass, and the inverse
 * (zigzag^-1 (or negabinary^-1) then delta^-1); in and out must differ. */
h5fz_words32_fn h5fz_fast_delta_zigzag_encode_32, h5fz_fast_delta_zigzag_decode_32,
    h5fz_fast_delta_negabinary_encode_32, h5fz_fast_delta_negabinary_decode_32;
h5fz_words64_fn h5fz_fast_delta_zigzag_encode_64, h5fz_fast_delta_zigzag_decode_64,
    h5fz_fast_delta_negabinary_encode_64, h5fz_fast_delta_negabinary_decode_64;

#endif /* H5FZ_OP_DELTA_CPU_H */
