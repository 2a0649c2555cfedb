/*
 * op_zigzag_cpu.c - the CPU fast form of zigzag (twin of op_zigzag.h; see
 * op_zigzag_cpu.h): the reference's word map in a plain loop the compiler
 * vectorises.
 */
#include "h5fz_ops.h"
#include "op_cpu_transform.h"
#include "op_zigzag_cpu.h"

#define ZIGZAG(W, WORD)                                                                                                \
  void h5fz_fast_zigzag_encode_##W(const WORD *in, WORD *out, uint32_t n)                                              \
  {                                                                                                                    \
    for (uint32_t i = 0; i < n; i++) out[i] = h5fz_zigzag_word_##W(in[i]);                                             \
  }                                                                                                                    \
  void h5fz_fast_zigzag_decode_##W(const WORD *in, WORD *out, uint32_t n)                                              \
  {                                                                                                                    \
    for (uint32_t i = 0; i < n; i++) out[i] = h5fz_unzigzag_word_##W(in[i]);                                           \
  }

ZIGZAG(32, uint32_t)
ZIGZAG(64, uint64_t)

/* The op table's forms (op_cpu_transform.h). */
H5FZ_CPU_TRANSFORM_WORDS(zigzag, h5fz_fast_zigzag_encode, h5fz_fast_zigzag_decode);
