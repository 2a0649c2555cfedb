/*
 * h5fz_jit_embedded.c - look-up of the kernels embedded at build time.
 */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "h5fz_internal.h"
#include "h5fz_jit_digest.h"
#include "h5fz_jit_embedded.h"
#include "h5fz_settings.h"

void h5fz_embedded_key_hex(const unsigned char digest[H5FZ_SHA256_BYTES], char hex[2 * H5FZ_SHA256_BYTES + 1])
{
  static const char digits[] = "0123456789abcdef";
  for (int i = 0; i < H5FZ_SHA256_BYTES; i++) {
    hex[2 * i] = digits[digest[i] >> 4];
    hex[2 * i + 1] = digits[digest[i] & 15];
  }
  hex[2 * H5FZ_SHA256_BYTES] = '\0';
}

void *h5fz_embedded_find(const char *src, const char *arch_name, uint64_t plan_digest, size_t *size)
{
  size_t n = 0;
  int major = 0, minor = 0;
  const h5fz_embedded_module *t = h5fz_embedded_modules(&n, &major, &minor);
  h5fz_settings s;
  h5fz_settings_read(&s, H5FZ_SETTINGS_JIT);
  if (!n || !s.jit_embedded) return NULL;
  unsigned char digest[H5FZ_SHA256_BYTES];
  char key[2 * H5FZ_SHA256_BYTES + 1];
  h5fz_jit_digest_nvrtc(src, arch_name, plan_digest, major, minor, digest);
  h5fz_embedded_key_hex(digest, key);
  for (size_t i = 0; i < n; i++) {
    if (strcmp(t[i].key, key) || strcmp(t[i].arch_name, arch_name)) continue;
    unsigned char *img = malloc(t[i].image_bytes + 1);
    uLongf got = (uLongf)t[i].image_bytes;
    if (!img) return NULL;
    if (uncompress(img, &got, t[i].zimage, (uLong)t[i].zbytes) != Z_OK || got != t[i].image_bytes) {
      free(img); /* a damaged table entry: the JIT compiles instead */
      return NULL;
    }
    img[got] = 0;
    *size = got;
    return img;
  }
  return NULL;
}
