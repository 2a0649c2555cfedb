/*
 * op_cpu_words.h - the shapes of the CPU fast forms' word loops, so each
 * op's header declares its encode and decode in one line a word width
 * (op_zigzag_cpu.h, op_delta_cpu.h, op_bitshuffle_cpu.h). Host C only.
 */
#ifndef H5FZ_OP_CPU_WORDS_H
#define H5FZ_OP_CPU_WORDS_H

#include <stdint.h>

/* n words in[] -> out[] (what may alias is the op's to say). */
typedef void h5fz_words32_fn(const uint32_t *in, uint32_t *out, uint32_t n);
typedef void h5fz_words64_fn(const uint64_t *in, uint64_t *out, uint32_t n);
/* n words <-> their bit planes, n * word-size bytes. */
typedef void h5fz_planes_from32_fn(const uint32_t *in, uint8_t *out, uint32_t n);
typedef void h5fz_planes_from64_fn(const uint64_t *in, uint8_t *out, uint32_t n);
typedef void h5fz_planes_to32_fn(const uint8_t *in, uint32_t *out, uint32_t n);
typedef void h5fz_planes_to64_fn(const uint8_t *in, uint64_t *out, uint32_t n);

#endif /* H5FZ_OP_CPU_WORDS_H */
