/*
 * test_crc32.c - h5fz_crc32 (fusion/format/h5fz_crc32.c) equals zlib's
 * crc32 on every length from 0 to 4200 bytes and on large buffers, from
 * any start value and at any alignment, whole or in parts.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <zlib.h>

#include "h5fz_crc32.h"

static uint64_t state = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(void)
{
  state ^= state << 13, state ^= state >> 7, state ^= state << 17;
  return (uint32_t)(state >> 11);
}

int main(void)
{
  enum { MAX = 1u << 20 };
  uint8_t *buf = malloc(MAX + 64u);
  int failures = 0;
  long checks = 0;
  for (size_t i = 0; i < MAX + 64u; i++) buf[i] = (uint8_t)rnd();
  for (uint32_t len = 0; len <= 4200u; len++)
    for (uint32_t k = 0; k < 3; k++) {
      const uint8_t *p = buf + (len * 7u + k) % 64u; /* every alignment */
      uint32_t start = k == 0 ? 0u : rnd();
      uint32_t want = (uint32_t)crc32(start, p, len), got = h5fz_crc32(start, p, len);
      checks++;
      if (want != got && failures++ < 20)
        fprintf(stderr, "len %u start %08x: %08x, zlib %08x\n", len, start, got, want);
    }
  /* large buffers, and one buffer in parts of random lengths */
  uint32_t sizes[] = {65536u, 65537u, 320017u, MAX};
  for (int s = 0; s < 4; s++) {
    uint32_t want = (uint32_t)crc32(0, buf + 3, sizes[s]), whole = h5fz_crc32(0, buf + 3, sizes[s]), parts = 0;
    for (uint32_t at = 0; at < sizes[s];) {
      uint32_t n = rnd() % 3000u;
      if (n > sizes[s] - at) n = sizes[s] - at;
      parts = h5fz_crc32(parts, buf + 3 + at, n);
      at += n;
    }
    checks += 2;
    if (want != whole || want != parts) {
      fprintf(stderr, "size %u: whole %08x, parts %08x, zlib %08x\n", sizes[s], whole, parts, want);
      failures++;
    }
  }
  if (h5fz_crc32(0, NULL, 0) != 0) failures++;
  printf("test_crc32: %ld checks, %d failures\n", checks, failures);
  free(buf);
  return failures ? 1 : 0;
}
