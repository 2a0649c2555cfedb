/*
 * gpu_test_util.h - shared by the GPU tests: whether a GPU is usable, and
 * (from bench/field_data.h) the real fields of a data folder and a check of
 * a reconstruction against a bound.
 */
#ifndef GPU_TEST_UTIL_H
#define GPU_TEST_UTIL_H

#include "../../bench/field_data.h"
#include "h5fz.h"

#define CTEST_SKIP 77

/* Sets H5FZ_DEVICE=gpu and encodes a small chunk: 1 when the GPU executor
 * is usable, else 0 after printing "SKIP: no usable GPU: <why>" (the
 * caller then exits with CTEST_SKIP). */
static inline int gpu_test_have_gpu(void)
{
  setenv("H5FZ_DEVICE", "gpu", 1);
  setenv("H5FZ_DEVICE_STRICT", "1", 1); /* a CPU fallback would pass the probe */
  h5fz_spec probe;
  float zeros[64] = {0};
  void *tmp = NULL;
  size_t tmp_n = 0;
  if (h5fz_spec_parse("abs=1 dtype=f32", &probe) || h5fz_chunk_encode(&probe, zeros, sizeof zeros, &tmp, &tmp_n)) {
    printf("SKIP: no usable GPU: %s\n", h5fz_last_error());
    return 0;
  }
  free(tmp);
  return 1;
}

#endif /* GPU_TEST_UTIL_H */
