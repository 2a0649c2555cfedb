/*
 * core_check.h - what the core tests share: a CHECK that counts and prints
 * the first failures, a xorshift64 generator (rnd), and one float32 chunk
 * through the public codec (core_encode_f32). Define CORE_RNG_SEED and
 * CORE_MAX_PRINTED before including it to change them.
 */
#ifndef CORE_CHECK_H
#define CORE_CHECK_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "h5fz.h"

#ifndef CORE_RNG_SEED
#define CORE_RNG_SEED 0x243f6a8885a308d3ull
#endif
#ifndef CORE_MAX_PRINTED
#define CORE_MAX_PRINTED 30
#endif

static int failures;
static long checks;
#define CHECK(cond, ...)                                                                                               \
  do {                                                                                                                 \
    checks++;                                                                                                          \
    if (!(cond)) {                                                                                                     \
      if (failures++ < CORE_MAX_PRINTED) {                                                                             \
        fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                                           \
        fprintf(stderr, __VA_ARGS__);                                                                                  \
        fprintf(stderr, "\n");                                                                                         \
      }                                                                                                                \
    }                                                                                                                  \
  } while (0)

static uint64_t rng = CORE_RNG_SEED;
static inline uint64_t rnd(void)
{
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

/* n float32 values as one chunk at abs=1e-3 through h5fz_chunk_encode
 * (the container is dropped): H5FZ_OK or its failure, so a test sees what
 * the settings in force make of a chunk call (a strict bad H5FZ_DEVICE
 * fails it wherever it is read). */
static inline int core_encode_f32(const float *values, size_t n)
{
  h5fz_spec s;
  if (h5fz_spec_parse("abs=1e-3 dtype=f32", &s)) return -100;
  void *out = NULL;
  size_t bytes = 0;
  int rc = h5fz_chunk_encode(&s, values, n * sizeof *values, &out, &bytes);
  free(out);
  return rc;
}

#endif /* CORE_CHECK_H */
