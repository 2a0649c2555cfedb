/* h5fz_jit_cache.c - the JIT module cache on disk (h5fz_jit_cache.h).
 *
 * Entry layout: magic "H5FZJIT2" (8 bytes), the SHA-256 of the compile
 * inputs (32), the image's size (4, little-endian) and CRC-32 (4), then the
 * image (cubin or PTX). "H5FZJIT1" entries (a 128-bit FNV-1a key) are not
 * read: they are recompiled and replaced. */
#include "h5fz_jit_cache.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "h5fz_container.h"
#include "h5fz_planner.h"

#define ENTRY_MAGIC "H5FZJIT2"
#define ENTRY_HEADER 48u /* magic 8, digest 32, image bytes 4, crc32 4 */

int h5fz_jit_cache_path(const unsigned char digest[H5FZ_SHA256_BYTES], char *path, size_t len)
{
  char dir[512], hex[33];
  if (h5fz_settings_cache_dir(dir, sizeof dir)) return -1;
  for (int i = 0; i < 16; i++) snprintf(hex + 2 * i, 3, "%02x", digest[i]);
  int n = snprintf(path, len, "%s/jit/%s.bin", dir, hex);
  return n > 0 && (size_t)n < len ? 0 : -1;
}

static void mkdir_parents(const char *path)
{
  char tmp[800];
  if (strlen(path) >= sizeof tmp) return;
  memcpy(tmp, path, strlen(path) + 1);
  for (char *p = tmp + 1; *p; p++)
    if (*p == '/') {
      *p = '\0';
      mkdir(tmp, 0755);
      *p = '/';
    }
}

void *h5fz_jit_cache_load(const char *path, const unsigned char digest[H5FZ_SHA256_BYTES], size_t *size)
{
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  unsigned char head[ENTRY_HEADER];
  void *img = NULL;
  if (fread(head, 1, ENTRY_HEADER, f) == ENTRY_HEADER && !memcmp(head, ENTRY_MAGIC, 8) &&
      !memcmp(head + 8, digest, H5FZ_SHA256_BYTES)) {
    uint32_t n = h5fz_get_u32(head + 40), crc = h5fz_get_u32(head + 44);
    img = n ? malloc(n + 1) : NULL;
    if (img && (fread(img, 1, n, f) != n || fgetc(f) != EOF || h5fz_checksum(img, n) != crc)) {
      free(img);
      img = NULL;
    }
    *size = n;
  }
  fclose(f);
  return img;
}

void h5fz_jit_cache_store(const char *path, const unsigned char digest[H5FZ_SHA256_BYTES], const void *img, size_t n)
{
  char tmp[800];
  if (n > UINT32_MAX || snprintf(tmp, sizeof tmp, "%.700s.tmp.%ld.%lx", path, (long)getpid(),
                                 (unsigned long)pthread_self()) >= (int)sizeof tmp)
    return;
  mkdir_parents(path);
  int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0644);
  if (fd < 0) return;
  unsigned char head[ENTRY_HEADER];
  memcpy(head, ENTRY_MAGIC, 8);
  memcpy(head + 8, digest, H5FZ_SHA256_BYTES);
  h5fz_put_u32(head + 40, (uint32_t)n);
  h5fz_put_u32(head + 44, h5fz_checksum(img, n));
  int ok = write(fd, head, ENTRY_HEADER) == (ssize_t)ENTRY_HEADER && write(fd, img, n) == (ssize_t)n;
  ok = close(fd) == 0 && ok;
  if (!ok || rename(tmp, path)) unlink(tmp);
}
