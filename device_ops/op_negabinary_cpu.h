/*
 * op_negabinary_cpu.h - the CPU fast form of negabinary
 * (op_negabinary_cpu.c), and its word map for the fused delta passes of
 * op_delta_cpu.c.
 *
 * Twin of op_negabinary.h (the reference, SPMD, also the GPU's generic
 * path). What must stay equal: the words, those of
 * h5fz_negabinary_encode_* / h5fz_negabinary_decode_*: u = (v + M) ^ M and
 * v = (u ^ M) - M with M = 0xAA..AA, in wrapping arithmetic.
 */
#ifndef H5FZ_OP_NEGABINARY_CPU_H
#define H5FZ_OP_NEGABINARY_CPU_H

#include <stdint.h>

/* M = 0xAA..AA of a word type, and the word map both ways. */
#define H5FZ_NEGA_M(WORD) ((WORD)((WORD) ~(WORD)0 / 3u * 2u))
#define H5FZ_NEGA_ENC(WORD, v) ((WORD)(((v) + H5FZ_NEGA_M(WORD)) ^ H5FZ_NEGA_M(WORD)))
#define H5FZ_NEGA_DEC(WORD, u) ((WORD)(((u) ^ H5FZ_NEGA_M(WORD)) - H5FZ_NEGA_M(WORD)))

/* n words in[] -> out[]; in may equal out. No errors. */
void h5fz_fast_negabinary_encode_32(const uint32_t *in, uint32_t *out, uint32_t n);
void h5fz_fast_negabinary_encode_64(const uint64_t *in, uint64_t *out, uint32_t n);
void h5fz_fast_negabinary_decode_32(const uint32_t *in, uint32_t *out, uint32_t n);
void h5fz_fast_negabinary_decode_64(const uint64_t *in, uint64_t *out, uint32_t n);

#endif /* H5FZ_OP_NEGABINARY_CPU_H */
