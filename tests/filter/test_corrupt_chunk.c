/*
 * Corrupt and truncated chunks read through HDF5 must fail with an HDF5
 * error carrying our message, never crash and never return data outside
 * the bound. The stored chunk is rewritten with H5Dwrite_chunk: every byte
 * flipped in turn, every truncated length, a future format version, and a
 * wrong header length under each format version.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "filter_test_util.h"
#include "h5fz_internal.h" /* h5fz_newest_format_version */

#define N 96
#define BOUND 1e-3
#define VERSION_BYTE 4
#define HEADER_LENGTH_BYTE 5

typedef struct {
  hid_t f, d;
  float want[N];
  unsigned char *chunk; /* the good stored chunk */
  size_t chunk_len;
} fixture;

static int setup(fixture *fx)
{
  hsize_t dims[1] = {N}, chunk[1] = {N};
  unsigned cd[H5FZ_CD_MAX];
  size_t ncd = ft_cd_from_text("abs=1e-3", cd);
  fx->f = ft_create_file("corrupt_chunk");
  hid_t space = H5Screate_simple(1, dims, NULL);
  hid_t dcpl = ft_dcpl(1, chunk, H5Z_FLAG_MANDATORY, ncd, cd, 0);
  /* No chunk cache, so every H5Dread decodes the bytes on disk. */
  hid_t dapl = H5Pcreate(H5P_DATASET_ACCESS);
  H5Pset_chunk_cache(dapl, 0, 0, 1.0);
  fx->d = H5Dcreate2(fx->f, "data", H5T_IEEE_F32LE, space, H5P_DEFAULT, dcpl, dapl);
  H5Pclose(dapl);
  H5Pclose(dcpl);
  H5Sclose(space);
  if (fx->d < 0) return -1;
  for (int i = 0; i < N; i++) fx->want[i] = (float)(sin(0.1 * i) * 3.0 + (i == 17 ? NAN : 0.0));
  if (H5Dwrite(fx->d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, fx->want) < 0 || H5Dflush(fx->d) < 0) return -1;
  hsize_t off[1] = {0}, sz = 0;
  uint32_t mask = 0;
  if (H5Dget_chunk_storage_size(fx->d, off, &sz) < 0 || sz == 0) return -1;
  fx->chunk_len = (size_t)sz;
  fx->chunk = malloc(fx->chunk_len);
  if (H5Dread_chunk(fx->d, H5P_DEFAULT, off, &mask, fx->chunk) < 0 || mask != 0) return -1;
  return 0;
}

/* 1 if the values read are the ones written, within the bound. */
static int within_bound(const fixture *fx, const float *got)
{
  for (int i = 0; i < N; i++) {
    if (isnan(fx->want[i]) ? !isnan(got[i]) : !(fabs((double)fx->want[i] - got[i]) <= BOUND)) return 0;
  }
  return 1;
}

typedef enum { READ_FAILED, READ_OK_IN_BOUND, READ_OK_WRONG, WRITE_REFUSED } outcome;

/* Store bytes as the chunk, read the dataset, classify what happened;
 * stack receives the error stack of a failed read. */
static outcome try_chunk(const fixture *fx, const unsigned char *bytes, size_t len, char *stack, size_t stack_len)
{
  hsize_t off[1] = {0};
  stack[0] = '\0';
  if (H5Dwrite_chunk(fx->d, H5P_DEFAULT, 0, off, len, bytes) < 0) {
    ft_error_stack(stack, stack_len);
    return WRITE_REFUSED;
  }
  float got[N];
  if (H5Dread(fx->d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, got) < 0) {
    ft_error_stack(stack, stack_len);
    return READ_FAILED;
  }
  return within_bound(fx, got) ? READ_OK_IN_BOUND : READ_OK_WRONG;
}

static void flip_every_byte(const fixture *fx)
{
  unsigned char *b = malloc(fx->chunk_len);
  size_t failed = 0, silent = 0, ours = 0;
  char stack[4096];
  for (size_t i = 0; i < fx->chunk_len; i++) {
    memcpy(b, fx->chunk, fx->chunk_len);
    b[i] ^= 0xFF;
    outcome o = try_chunk(fx, b, fx->chunk_len, stack, sizeof stack);
    FT_CHECK(o != READ_OK_WRONG, "flip byte %zu: read succeeded with wrong values", i);
    FT_CHECK(o != READ_OK_IN_BOUND, "flip byte %zu: read succeeded (checksum missed it)", i);
    FT_CHECK(o != WRITE_REFUSED, "flip byte %zu: H5Dwrite_chunk refused: %s", i, stack);
    failed += o == READ_FAILED;
    silent += o == READ_OK_IN_BOUND;
    if (o == READ_FAILED) {
      ours += ft_contains(stack, "h5fz:");
      FT_CHECK(ft_contains(stack, "h5fz:"), "flip byte %zu: error lacks our message: %s", i, stack);
    }
  }
  printf("byte flips: %zu bytes, %zu reads failed (%zu with an h5fz message), %zu in bound\n", fx->chunk_len, failed,
         ours, silent);
  free(b);
}

static void truncate_every_length(const fixture *fx)
{
  size_t failed = 0, refused = 0;
  char stack[4096];
  for (size_t len = 0; len < fx->chunk_len; len++) {
    outcome o = try_chunk(fx, fx->chunk, len, stack, sizeof stack);
    FT_CHECK(o == READ_FAILED || o == WRITE_REFUSED, "truncated to %zu bytes: read succeeded", len);
    if (o == READ_FAILED)
      FT_CHECK(ft_contains(stack, "h5fz:"), "truncated to %zu: error lacks our message: %s", len, stack);
    failed += o == READ_FAILED;
    refused += o == WRITE_REFUSED;
  }
  printf("truncations: %zu lengths, %zu reads failed, %zu writes refused by HDF5\n", fx->chunk_len, failed, refused);
}

static void future_version(const fixture *fx)
{
  unsigned char *b = malloc(fx->chunk_len);
  memcpy(b, fx->chunk, fx->chunk_len);
  b[VERSION_BYTE] = 99;
  char stack[4096];
  outcome o = try_chunk(fx, b, fx->chunk_len, stack, sizeof stack);
  FT_CHECK(o == READ_FAILED, "future version: outcome %d, expected a failed read", (int)o);
  FT_CHECK(ft_contains(stack, "h5fz:") && ft_contains(stack, "version"),
           "future version: error does not mention the version: %s", stack);
  printf("future version: %s\n", ft_ours(stack));
  free(b);
}

/* A header length the version does not have: the message names the
 * chunk's own version (it said "version 1" for every version). */
static void wrong_header_length(const fixture *fx)
{
  unsigned char *b = malloc(fx->chunk_len);
  char stack[4096], want[64];
  unsigned header_bytes = fx->chunk[HEADER_LENGTH_BYTE];
  for (unsigned v = 1; v <= h5fz_newest_format_version(); v++) {
    memcpy(b, fx->chunk, fx->chunk_len);
    b[VERSION_BYTE] = (unsigned char)v;
    b[HEADER_LENGTH_BYTE] = (unsigned char)(header_bytes + 1);
    outcome o = try_chunk(fx, b, fx->chunk_len, stack, sizeof stack);
    FT_CHECK(o == READ_FAILED, "header length under version %u: outcome %d, expected a failed read", v, (int)o);
    snprintf(want, sizeof want, "chunk header length %u, version %u has %u", header_bytes + 1, v, header_bytes);
    FT_CHECK(ft_contains(stack, want), "header length under version %u: error lacks \"%s\": %s", v, want, stack);
  }
  printf("header length: %s\n", ft_ours(stack));
  free(b);
}

int main(void)
{
  if (ft_begin("filter_corrupt_chunk") < 0) return ft_finish();
  fixture fx = {0};
  if (setup(&fx) < 0) {
    char stack[4096];
    ft_error_stack(stack, sizeof stack);
    FT_CHECK(0, "setup failed: %s", stack);
    return ft_finish();
  }
  printf("good chunk: %zu bytes for %d floats\n", fx.chunk_len, N);
  char stack[4096];
  FT_CHECK(try_chunk(&fx, fx.chunk, fx.chunk_len, stack, sizeof stack) == READ_OK_IN_BOUND,
           "the good chunk does not read back: %s", stack);
  flip_every_byte(&fx);
  truncate_every_length(&fx);
  future_version(&fx);
  wrong_header_length(&fx);
  FT_CHECK(try_chunk(&fx, fx.chunk, fx.chunk_len, stack, sizeof stack) == READ_OK_IN_BOUND,
           "the good chunk no longer reads back: %s", stack);
  free(fx.chunk);
  H5Dclose(fx.d);
  H5Fclose(fx.f);
  return ft_finish();
}
