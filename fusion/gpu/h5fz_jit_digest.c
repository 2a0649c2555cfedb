/*
 * h5fz_jit_digest.c - the SHA-256 key of a module: its source, the
 * architecture, the plan digest, NVRTC's version, the fixed options and
 * every embedded header, each string with its NUL.
 */
#include <string.h>

#include "h5fz_codegen.h"
#include "h5fz_cuda.h"
#include "h5fz_jit_digest.h"

/* Options that keep GPU arithmetic identical to the CPU's (docs/format.md). */
const char *const h5fz_jit_fixed_options[H5FZ_JIT_N_FIXED] = {"--fmad=false", "--prec-div=true", "--prec-sqrt=true",
                                                              "--ftz=false",  "-default-device", "--std=c++17"};

/* A NUL-terminated string into the hash with its NUL, so that "ab"+"c" and
 * "a"+"bc" differ. */
static void hash_text(h5fz_sha256 *h, const char *text) { h5fz_sha256_update(h, text, strlen(text) + 1); }

void h5fz_jit_digest(const char *src, const char *arch_name, uint64_t plan_digest,
                     unsigned char digest[H5FZ_SHA256_BYTES])
{
  int major = 0, minor = 0;
  const h5fz_nvrtc_api *nv = h5fz_nvrtc_get(NULL);
  if (nv) nv->nvrtcVersion(&major, &minor);
  h5fz_jit_digest_nvrtc(src, arch_name, plan_digest, major, minor, digest);
}

void h5fz_jit_digest_nvrtc(const char *src, const char *arch_name, uint64_t plan_digest, int major, int minor,
                           unsigned char digest[H5FZ_SHA256_BYTES])
{
  size_t n_headers;
  const char *const *names, *const *texts;
  h5fz_embedded_headers(&n_headers, &names, &texts);
  h5fz_sha256 h;
  h5fz_sha256_init(&h);
  hash_text(&h, src);
  hash_text(&h, arch_name);
  h5fz_sha256_update(&h, &plan_digest, sizeof plan_digest);
  h5fz_sha256_update(&h, &major, sizeof major);
  h5fz_sha256_update(&h, &minor, sizeof minor);
  for (size_t i = 0; i < H5FZ_JIT_N_FIXED; i++) hash_text(&h, h5fz_jit_fixed_options[i]);
  for (size_t i = 0; i < n_headers; i++) {
    hash_text(&h, names[i]);
    hash_text(&h, texts[i]);
  }
  h5fz_sha256_final(&h, digest);
}
