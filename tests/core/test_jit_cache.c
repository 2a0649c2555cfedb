/*
 * test_jit_cache.c - the JIT disk cache uses an entry only when it records
 * the SHA-256 of exactly the compile inputs at hand (fusion/gpu/h5fz_jit_cache.h):
 * an entry copied or forged under another compile's file name, one whose
 * recorded digest differs only past the 16 bytes the file name shows (a
 * file-name collision), an entry of the old H5FZJIT1 format, a truncated
 * one and one with a bad CRC are all refused; the right entry is used. Also
 * checks SHA-256 against FIPS 180-4's test vectors. Needs no GPU.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "h5fz_jit.h"
#include "h5fz_jit_cache.h"
#include "h5fz_jit_digest.h"
#include "h5fz_sha256.h"

static int failures;

#define CHECK(c, ...)                                                                                                  \
  do {                                                                                                                 \
    if (!(c)) {                                                                                                        \
      failures++;                                                                                                      \
      printf("FAIL %s:%d: ", __FILE__, __LINE__);                                                                      \
      printf(__VA_ARGS__);                                                                                             \
      printf("\n");                                                                                                    \
    }                                                                                                                  \
  } while (0)

static void hex(const unsigned char *d, size_t n, char *out)
{
  for (size_t i = 0; i < n; i++) snprintf(out + 2 * i, 3, "%02x", d[i]);
}

static void sha256_vectors(void)
{
  static const char *const msgs[] = {"", "abc", "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"};
  static const char *const want[] = {"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
                                     "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
                                     "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"};
  for (int k = 0; k < 3; k++) {
    h5fz_sha256 h;
    unsigned char d[H5FZ_SHA256_BYTES];
    char got[65];
    h5fz_sha256_init(&h);
    /* one byte at a time for the long one: the block boundary logic */
    if (k == 2)
      for (size_t i = 0; i < strlen(msgs[k]); i++) h5fz_sha256_update(&h, msgs[k] + i, 1);
    else
      h5fz_sha256_update(&h, msgs[k], strlen(msgs[k]));
    h5fz_sha256_final(&h, d);
    hex(d, sizeof d, got);
    CHECK(!strcmp(got, want[k]), "sha256(\"%s\") = %s, want %s", msgs[k], got, want[k]);
  }
}

static void copy_file(const char *from, const char *to)
{
  FILE *a = fopen(from, "rb"), *b = fopen(to, "wb");
  int c;
  while (a && b && (c = fgetc(a)) != EOF) fputc(c, b);
  if (a) fclose(a);
  if (b) fclose(b);
}

/* Rewrite byte at offset of the file at path. */
static void poke(const char *path, long offset, int byte)
{
  FILE *f = fopen(path, "r+b");
  if (!f) return;
  fseek(f, offset, SEEK_SET);
  fputc(byte, f);
  fclose(f);
}

int main(void)
{
  sha256_vectors();
  char dir[] = "/tmp/h5fz_jit_cache_XXXXXX";
  if (!mkdtemp(dir)) return 1;
  setenv("H5FZ_CACHE_DIR", dir, 1);
  const char *src_a = "extern \"C\" __global__ void k(float *x) { x[0] = 1.0f; }\n";
  const char *src_b = "extern \"C\" __global__ void k(float *x) { x[0] = 2.0f; }\n";
  unsigned char a[H5FZ_SHA256_BYTES], b[H5FZ_SHA256_BYTES], a2[H5FZ_SHA256_BYTES];
  h5fz_jit_digest(src_a, "sm_90", 7, a);
  h5fz_jit_digest(src_b, "sm_90", 7, b);
  CHECK(memcmp(a, b, sizeof a), "two sources, one digest");
  h5fz_jit_digest(src_a, "sm_80", 7, a2);
  CHECK(memcmp(a, a2, sizeof a), "two archs, one digest");
  h5fz_jit_digest(src_a, "sm_90", 8, a2);
  CHECK(memcmp(a, a2, sizeof a), "two plan digests, one digest");
  h5fz_jit_digest(src_a, "sm_90", 7, a2);
  CHECK(!memcmp(a, a2, sizeof a), "the digest is not deterministic");

  char path_a[700], path_b[700];
  CHECK(!h5fz_jit_cache_path(a, path_a, sizeof path_a) && !h5fz_jit_cache_path(b, path_b, sizeof path_b),
        "no cache path");
  const char image_a[] = "cubin of A";
  h5fz_jit_cache_store(path_a, a, image_a, sizeof image_a);
  size_t n = 0;
  void *img = h5fz_jit_cache_load(path_a, a, &n);
  CHECK(img && n == sizeof image_a && !memcmp(img, image_a, n), "the stored entry is not loaded back");
  free(img);

  /* A's entry under B's file name (a forged or colliding entry): refused */
  copy_file(path_a, path_b);
  CHECK(!h5fz_jit_cache_load(path_b, b, &n), "an entry for other compile inputs was used under the right name");

  /* an entry whose digest matches the name's 16 bytes and differs after */
  unsigned char b_collide[H5FZ_SHA256_BYTES];
  memcpy(b_collide, b, sizeof b);
  b_collide[31] ^= 1;
  h5fz_jit_cache_store(path_b, b_collide, image_a, sizeof image_a);
  CHECK(!h5fz_jit_cache_load(path_b, b, &n), "a file-name collision was used");

  /* the old format's magic under the right name, with the right digest after it */
  h5fz_jit_cache_store(path_b, b, image_a, sizeof image_a);
  img = h5fz_jit_cache_load(path_b, b, &n);
  CHECK(img != NULL, "B's own entry is not used");
  free(img);
  poke(path_b, 7, '1'); /* "H5FZJIT1" */
  CHECK(!h5fz_jit_cache_load(path_b, b, &n), "an H5FZJIT1 entry was used");

  /* a bad CRC and a truncated image */
  h5fz_jit_cache_store(path_b, b, image_a, sizeof image_a);
  poke(path_b, 48, 'X');
  CHECK(!h5fz_jit_cache_load(path_b, b, &n), "an entry with a bad CRC was used");
  h5fz_jit_cache_store(path_b, b, image_a, sizeof image_a);
  CHECK(truncate(path_b, 48 + 3) == 0, "truncate");
  CHECK(!h5fz_jit_cache_load(path_b, b, &n), "a truncated entry was used");

  unlink(path_a);
  unlink(path_b);
  char sub[800];
  snprintf(sub, sizeof sub, "%s/jit", dir);
  rmdir(sub);
  rmdir(dir);
  if (failures) {
    printf("%d failures\n", failures);
    return 1;
  }
  printf("jit cache: all checks passed\n");
  return 0;
}
