/*
 * h5fz_jit_embedded_none.c - the empty table of embedded kernels, for
 * builds without NVRTC (or with H5FZ_EMBED_KERNELS=OFF) and for the
 * embedder itself; the JIT then compiles every module (docs/gpu.md).
 */
#include "h5fz_jit_embedded.h"

const h5fz_embedded_module *h5fz_embedded_modules(size_t *count, int *nvrtc_major, int *nvrtc_minor)
{
  *count = 0;
  *nvrtc_major = 0;
  *nvrtc_minor = 0;
  return NULL;
}
