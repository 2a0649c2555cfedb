/*
 * op_delta_cpu.c - the CPU fast forms of delta, alone and fused with the
 * zigzag or negabinary after it (twin of op_delta.h; see op_delta_cpu.h):
 * plain loops, the first word (which has no word before it) taken out so
 * that the loop has no branch. The zigzag map is the reference's
 * (op_delta.h), the negabinary map op_negabinary_cpu.h's.
 */
#include "h5fz_ops.h"
#include "op_cpu_transform.h"
#include "op_delta_cpu.h"
#include "op_negabinary_cpu.h"

/* The first difference, then MAP of it; the inverse sums UNMAP of each word. */
#define DELTA_THEN(NAME, W, WORD, MAP, UNMAP)                                                                          \
  void h5fz_fast_##NAME##_encode_##W(const WORD *in, WORD *out, uint32_t n)                                            \
  {                                                                                                                    \
    if (!n) return;                                                                                                    \
    out[0] = MAP(WORD, W, in[0]);                                                                                      \
    for (uint32_t i = 1; i < n; i++) out[i] = MAP(WORD, W, (WORD)(in[i] - in[i - 1u]));                                \
  }                                                                                                                    \
  void h5fz_fast_##NAME##_decode_##W(const WORD *in, WORD *out, uint32_t n)                                            \
  {                                                                                                                    \
    WORD acc = 0;                                                                                                      \
    for (uint32_t i = 0; i < n; i++) out[i] = acc = (WORD)(acc + UNMAP(WORD, W, in[i]));                               \
  }

#define AS_IS(WORD, W, v) (v)
#define ZZ(WORD, W, v) h5fz_zigzag_word_##W(v)
#define UNZZ(WORD, W, u) h5fz_unzigzag_word_##W(u)
#define NB(WORD, W, v) H5FZ_NEGA_ENC(WORD, v)
#define UNNB(WORD, W, u) H5FZ_NEGA_DEC(WORD, u)

#define DELTAS(W, WORD)                                                                                                \
  DELTA_THEN(delta, W, WORD, AS_IS, AS_IS)                                                                             \
  DELTA_THEN(delta_zigzag, W, WORD, ZZ, UNZZ)                                                                          \
  DELTA_THEN(delta_negabinary, W, WORD, NB, UNNB)

DELTAS(32, uint32_t)
DELTAS(64, uint64_t)

/* The op table's forms (op_cpu_transform.h): delta alone, and fused with
 * the zigzag or negabinary after it (the table's delta row lists both). */
H5FZ_CPU_TRANSFORM_WORDS(delta, h5fz_fast_delta_encode, h5fz_fast_delta_decode);
H5FZ_CPU_TRANSFORM_WORDS(delta_zigzag, h5fz_fast_delta_zigzag_encode, h5fz_fast_delta_zigzag_decode);
H5FZ_CPU_TRANSFORM_WORDS(delta_negabinary, h5fz_fast_delta_negabinary_encode, h5fz_fast_delta_negabinary_decode);
