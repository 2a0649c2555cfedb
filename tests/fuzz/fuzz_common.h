/*
 * fuzz_common.h - shared bits of the h5fz fuzz targets (tests/fuzz).
 *
 * Each target defines LLVMFuzzerTestOneInput(). Built with clang
 * -fsanitize=fuzzer,... it is a libFuzzer target; built without (gcc, the
 * CTest replay, -DH5FZ_FUZZ_REPLAY_MAIN) replay_main.c supplies a main() that
 * runs every file named on the command line (or found in a folder) through
 * it once.
 */
#ifndef H5FZ_FUZZ_COMMON_H
#define H5FZ_FUZZ_COMMON_H

#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* An invariant of the library does not hold: report and abort, so that the
 * fuzzer records the input (and the replay test fails). */
#define FUZZ_CHECK(cond, ...)                                                                                          \
  do {                                                                                                                 \
    if (!(cond)) {                                                                                                     \
      fprintf(stderr, "fuzz invariant failed at %s:%d: %s: ", __FILE__, __LINE__, #cond);                              \
      fprintf(stderr, __VA_ARGS__);                                                                                    \
      fputc('\n', stderr);                                                                                             \
      abort();                                                                                                         \
    }                                                                                                                  \
  } while (0)

/* The environment every target runs in: CPU executor, one thread (no GPU,
 * deterministic, fast), no warnings on stderr. */
static inline void fuzz_setup_env(void)
{
  setenv("H5FZ_DEVICE", "cpu", 1);
  setenv("H5FZ_THREADS", "1", 1);
  setenv("H5FZ_QUIET", "1", 1);
}

#endif
