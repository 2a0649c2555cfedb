/*
 * op_negabinary_cpu.c - the CPU fast form of negabinary (twin of
 * op_negabinary.h; see op_negabinary_cpu.h): the word map in a plain loop
 * the compiler vectorises.
 */
#include "op_cpu_transform.h"
#include "op_negabinary_cpu.h"

#define NEGABINARY(W, WORD)                                                                                            \
  void h5fz_fast_negabinary_encode_##W(const WORD *in, WORD *out, uint32_t n)                                          \
  {                                                                                                                    \
    for (uint32_t i = 0; i < n; i++) out[i] = H5FZ_NEGA_ENC(WORD, in[i]);                                              \
  }                                                                                                                    \
  void h5fz_fast_negabinary_decode_##W(const WORD *in, WORD *out, uint32_t n)                                          \
  {                                                                                                                    \
    for (uint32_t i = 0; i < n; i++) out[i] = H5FZ_NEGA_DEC(WORD, in[i]);                                              \
  }

NEGABINARY(32, uint32_t)
NEGABINARY(64, uint64_t)

/* The op table's forms (op_cpu_transform.h). */
H5FZ_CPU_TRANSFORM_WORDS(negabinary, h5fz_fast_negabinary_encode, h5fz_fast_negabinary_decode);
