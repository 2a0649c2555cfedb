/*
 * op_zigzag_cpu.h - the CPU fast form of zigzag (op_zigzag_cpu.c).
 *
 * Twin of op_zigzag.h (the reference, SPMD, also the GPU's generic path).
 * What must stay equal: the words, those of h5fz_zigzag_encode_* /
 * h5fz_zigzag_decode_*; both apply the one word map of op_delta.h
 * (h5fz_zigzag_word_*, h5fz_unzigzag_word_*), so only the loop differs.
 */
#ifndef H5FZ_OP_ZIGZAG_CPU_H
#define H5FZ_OP_ZIGZAG_CPU_H

#include "op_cpu_words.h"

/* n words in[] -> out[]; in may equal out. No errors. */
h5fz_words32_fn h5fz_fast_zigzag_encode_32, h5fz_fast_zigzag_decode_32;
h5fz_words64_fn h5fz_fast_zigzag_encode_64, h5fz_fast_zigzag_decode_64;

#endif /* H5FZ_OP_ZIGZAG_CPU_H */
