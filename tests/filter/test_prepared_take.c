/*
 * test_prepared_take.c - the plugin's answers from a collective write's
 * prepared containers (filter/h5fz_prepared_take.c): the container a valid
 * tag names, a chunk-sized buffer for HDF5's read-before-modify, and a refusal
 * (never a compressed tag) for a buffer without a valid tag, of the wrong
 * size, or asked for twice; nothing answered once the table is removed,
 * nor on another thread while it is installed.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h5fz_prepared_take.h"

static int failures;
#define CHECK(cond, ...)                                                                                               \
  do {                                                                                                                 \
    if (!(cond)) {                                                                                                     \
      failures++;                                                                                                      \
      fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                                             \
      fprintf(stderr, __VA_ARGS__);                                                                                    \
      fputc('\n', stderr);                                                                                             \
    }                                                                                                                  \
  } while (0)

enum { CHUNK = 64 }; /* bytes of a chunk: 16 float32 */

static int answer(int reverse, const void *in, size_t in_bytes, void **out, size_t *out_bytes, char *msg)
{
  *out = NULL;
  *out_bytes = 0;
  msg[0] = 0;
  return h5fz_prepared_answer(reverse, in, in_bytes, out, out_bytes, msg, 256);
}

static void tagged(uint8_t *chunk, uint32_t tag)
{
  memset(chunk, 0, CHUNK);
  memcpy(chunk, &tag, 4);
}

/* Another thread's encode calls while this one has a table: the codec's
 * turn there (its data is never taken for a tag). */
static void *other_thread(void *chunk)
{
  void *out = NULL;
  size_t out_bytes = 0;
  char msg[256];
  return (void *)(intptr_t)answer(0, chunk, CHUNK, &out, &out_bytes, msg);
}

int main(void)
{
  const uint8_t a[] = {1, 2, 3}, b[] = {4, 5, 6, 7, 8};
  const uint8_t *containers[] = {a, b};
  const uint64_t sizes[] = {sizeof a, sizeof b};
  uint8_t taken[2] = {0, 0}, chunk[CHUNK];
  char msg[256];
  void *out;
  size_t out_bytes;
  h5fz_prepared_chunks p;
  memset(&p, 0, sizeof p);
  p.version = H5FZ_PREPARED_VERSION;
  p.tag_bytes = 4;
  p.n = 2;
  p.chunk_bytes = CHUNK;
  p.nonce = 0xfffffffeu; /* the tags wrap around 2^32: 0xfffffffe and 0xffffffff... and 0 */
  p.container = containers;
  p.bytes = sizes;
  p.taken = taken;

  tagged(chunk, 0xfffffffeu);
  CHECK(answer(0, chunk, CHUNK, &out, &out_bytes, msg) == 0 && !out, "nothing installed: the codec's turn");
  h5fz_prepared_chunks wrong = p;
  wrong.version = H5FZ_PREPARED_VERSION + 1;
  CHECK(h5fz_prepared_install(&wrong) == -1, "an unknown version is refused");
  CHECK(h5fz_prepared_install(&p) == 0, "install");

  tagged(chunk, 0xffffffffu); /* chunk 1 */
  pthread_t t;
  void *other = (void *)(intptr_t)-7;
  CHECK(pthread_create(&t, NULL, other_thread, chunk) == 0 && pthread_join(t, &other) == 0 && other == NULL,
        "another thread does not see this thread's table");
  CHECK(answer(0, chunk, CHUNK, &out, &out_bytes, msg) == 1 && out_bytes == sizeof b && !memcmp(out, b, sizeof b),
        "chunk 1's container");
  free(out);
  tagged(chunk, 0xfffffffeu); /* chunk 0 */
  CHECK(answer(0, chunk, CHUNK, &out, &out_bytes, msg) == 1 && out_bytes == sizeof a && !memcmp(out, a, sizeof a),
        "chunk 0's container");
  free(out);
  CHECK(p.n_taken == 2 && taken[0] && taken[1], "both counted as taken");

  CHECK(answer(0, chunk, CHUNK, &out, &out_bytes, msg) == -1 && !out && strstr(msg, "twice"), "chunk 0 again: %s", msg);
  tagged(chunk, 0u); /* index 2: outside the table */
  CHECK(answer(0, chunk, CHUNK, &out, &out_bytes, msg) == -1 && !out && strstr(msg, "no valid tag"),
        "a tag outside the table: %s", msg);
  tagged(chunk, 0xffffffffu);
  CHECK(answer(0, chunk, CHUNK - 4, &out, &out_bytes, msg) == -1 && !out && strstr(msg, "whole chunk"),
        "a buffer shorter than the chunk: %s", msg);
  CHECK(p.n_refused == 3, "three refusals counted, got %llu", (unsigned long long)p.n_refused);
  CHECK(strstr(p.refusal, "asked for twice") != NULL, "the first refusal kept for the API: '%s'", p.refusal);

  /* HDF5 reading a stored chunk before modifying it: a chunk-sized buffer
   * (not decoded), into which HDF5 writes the tag; then the encode answers */
  uint8_t stored[7] = {9, 9, 9, 9, 9, 9, 9};
  CHECK(answer(1, stored, sizeof stored, &out, &out_bytes, msg) == 1 && out && out_bytes == CHUNK,
        "the read gets a chunk-sized buffer");
  free(out);

  CHECK(h5fz_prepared_install(NULL) == 0, "remove");
  tagged(chunk, 0xffffffffu);
  CHECK(answer(0, chunk, CHUNK, &out, &out_bytes, msg) == 0 && !out, "removed: the codec's turn again");

  /* float64 tags: 8 bytes */
  uint8_t taken1[1] = {0};
  h5fz_prepared_chunks q = p;
  q.tag_bytes = 8;
  q.n = 1;
  q.nonce = 0x0123456789abcdefull;
  q.taken = taken1;
  q.n_taken = q.n_refused = 0;
  CHECK(h5fz_prepared_install(&q) == 0, "install f64");
  memset(chunk, 0, CHUNK);
  memcpy(chunk, &q.nonce, 8);
  CHECK(answer(0, chunk, CHUNK, &out, &out_bytes, msg) == 1 && out_bytes == sizeof a, "f64 tag of chunk 0");
  free(out);
  h5fz_prepared_install(NULL);

  if (failures) {
    fprintf(stderr, "test_prepared_take: %d failures\n", failures);
    return 1;
  }
  printf("test_prepared_take: OK\n");
  return 0;
}
