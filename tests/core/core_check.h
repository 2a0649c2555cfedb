/*
 * core_check.h - what the core tests share: a CHECK that counts and prints
 * the first failures, and a xorshift64 generator (rnd). Define CORE_RNG_SEED and
 * CORE_MAX_PRINTED before including it to change them.
 */
#ifndef CORE_CHECK_H
#define CORE_CHECK_H

#include <stdint.h>
#include <stdio.h>

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

#endif /* CORE_CHECK_H */
