/*
 * gen_seeds.c - write the seed corpus of the fuzz targets (tests/fuzz/corpus)
 * from chunks the library makes. Run by tests/fuzz/gen_seeds.sh; the output
 * is committed, so this only runs again when the format or the seeds change.
 *
 *   gen_seeds CORPUS_DIR
 *
 * chunk_decode seeds: byte 0 = harness mode (see fuzz_chunk_decode.c), then a
 * real container: several chains, f32/f64, outliers (NaN, Inf, -0.0, huge),
 * stored raw, sub-chunks stored raw (coder bypassed), trailing bytes,
 * lorenzo (1-, 2-, 3-D), lorenzo_nd (its three predictors) and bitpack chains,
 * multi-sub-chunk, empty. cd_values seeds: the words of several specs, with
 * and without a dataset part. spec_parse seeds: spec texts.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h5fz.h"

static const char *dir;
static int count;

static void write_file(const char *sub, const char *name, const void *a, size_t an, const void *b, size_t bn)
{
  char path[1024];
  snprintf(path, sizeof path, "%s/%s/%s", dir, sub, name);
  FILE *f = fopen(path, "wb");
  if (!f) {
    perror(path);
    exit(1);
  }
  if (an) fwrite(a, 1, an, f);
  if (bn) fwrite(b, 1, bn, f);
  fclose(f);
  count++;
}

static uint32_t rng = 12345;
static double urand(void)
{
  rng = rng * 1664525u + 1013904223u;
  return (rng >> 8) / 16777216.0;
}

/* kind: 0 smooth, 1 smooth + outliers, 2 random bits, 3 zeros, 4 steps,
 * 5 smooth in 3-D (rows of 30, planes of 5 rows), 6 = 5 + outliers,
 * 7 smooth in 2-D (rows of 30) + outliers */
static void *make_values(int f64, size_t n, int kind)
{
  size_t es = f64 ? 8 : 4;
  uint8_t *v = malloc(n * es + 8);
  for (size_t i = 0; i < n; i++) {
    double x = sin(i * 0.05) * 10 + 0.01 * urand();
    if (kind == 3) x = 0;
    if (kind == 4) x = (double)(i / 37);
    if (kind == 7)
      x = 10.0 * sin(0.2 * (double)(i % 30) + 0.15 * (double)(i / 30)) + 0.05 * (double)(i % 30) * (double)(i / 30);
    if (kind == 5 || kind == 6)
      x = 10.0 * sin(0.2 * (double)(i % 30)) * sin(0.5 * (double)(i / 30 % 5)) * (1.0 + (double)(i / 150));
    if ((kind == 1 || kind >= 6) && i % 23 == 5) x = (i % 3 == 0) ? NAN : (i % 3 == 1) ? INFINITY : 1e30;
    if ((kind == 1 || kind >= 6) && i % 41 == 7) x = -0.0;
    if (f64)
      memcpy(v + 8 * i, &x, 8);
    else {
      float f = (float)x;
      memcpy(v + 4 * i, &f, 4);
    }
    if (kind == 2)
      for (size_t b = 0; b < es; b++) v[es * i + b] = (uint8_t)(urand() * 256);
  }
  return v;
}

static void chunk_seed(const char *name, const char *spec_text, int f64, size_t n, int kind, size_t trailing)
{
  h5fz_spec s;
  if (h5fz_spec_parse(spec_text, &s)) {
    fprintf(stderr, "%s: %s\n", spec_text, h5fz_last_error());
    exit(1);
  }
  s.dtype = f64 ? H5FZ_DTYPE_F64 : H5FZ_DTYPE_F32;
  size_t es = f64 ? 8 : 4;
  uint8_t *v = make_values(f64, n + 2, kind);
  void *out;
  size_t out_n;
  if (h5fz_chunk_encode(&s, v, n * es + trailing, &out, &out_n)) {
    fprintf(stderr, "encode %s: %s\n", name, h5fz_last_error());
    exit(1);
  }
  /* mode 1: recompute the CRC (reaches the body checks); also one mode-0
   * copy of the first seeds so the checksum path has real inputs */
  unsigned char m = 1;
  write_file("chunk_decode", name, &m, 1, out, out_n);
  free(out);
  free(v);
}

static void cd_seed(const char *name, const char *spec_text, int local)
{
  h5fz_spec s;
  if (h5fz_spec_parse(spec_text, &s)) {
    fprintf(stderr, "%s: %s\n", spec_text, h5fz_last_error());
    exit(1);
  }
  unsigned cd[H5FZ_CD_MAX];
  size_t n;
  if (h5fz_spec_to_cd_values(&s, local, cd, H5FZ_CD_MAX, &n)) {
    fprintf(stderr, "cd %s\n", h5fz_last_error());
    exit(1);
  }
  uint8_t b[4 * H5FZ_CD_MAX];
  for (size_t i = 0; i < n; i++)
    for (int k = 0; k < 4; k++) b[4 * i + k] = (uint8_t)(cd[i] >> (8 * k));
  write_file("cd_values", name, b, 4 * n, NULL, 0);
}

int main(int argc, char **argv)
{
  if (argc != 2) {
    fprintf(stderr, "usage: gen_seeds CORPUS_DIR\n");
    return 2;
  }
  dir = argv[1];
  setenv("H5FZ_DEVICE", "cpu", 1);
  /* chunk_decode: n elements kept small (a few sub-chunks of 512 bytes) */
  chunk_seed("f32_default_smooth", "abs=1e-3 subchunk=512", 0, 300, 0, 0);
  chunk_seed("f64_default_smooth", "abs=1e-6 subchunk=512", 1, 200, 0, 0);
  chunk_seed("f32_outliers", "abs=1e-2 subchunk=512", 0, 300, 1, 0);
  chunk_seed("f64_outliers", "abs=1e-2 delta negabinary bitshuffle rze subchunk=1024", 1, 300, 1, 0);
  chunk_seed("f32_stored_raw_random", "abs=1e-9 subchunk=512", 0, 64, 2, 0);
  chunk_seed("f32_raw_coder", "abs=1e-3 raw subchunk=512", 0, 70, 0, 0);
  chunk_seed("f32_zeros_multilevel", "abs=1e-3 bitshuffle rze subchunk=65536", 0, 16384, 3, 0);
  chunk_seed("f64_zeros_multilevel", "abs=1e-3 rze subchunk=65536", 1, 8192, 3, 0);
  chunk_seed("f32_trailing", "abs=1e-3 subchunk=512", 0, 200, 0, 3);
  chunk_seed("f64_trailing_outliers", "abs=1e-3 zigzag rze subchunk=512", 1, 130, 1, 5);
  chunk_seed("f32_empty", "abs=1e-3", 0, 0, 0, 0);
  chunk_seed("f32_only_trailing", "abs=1e-3", 0, 0, 0, 3);
  chunk_seed("f32_steps_delta_zigzag_delta", "abs=0.5 delta zigzag delta zigzag bitshuffle rze subchunk=512", 0, 400, 4,
             0);
  chunk_seed("f64_lossless_eb0_like", "abs=1e-300 subchunk=512", 1, 100, 0, 0);
  chunk_seed("f32_mixed_raw_subchunks", "abs=1e-7 delta zigzag rze subchunk=512", 0, 512, 0, 0);
  chunk_seed("f32_rel", "rel=1e-3 subchunk=1024", 0, 600, 1, 0);
  chunk_seed("f32_pw_rel_outliers", "pw_rel=1e-3 subchunk=512", 0, 300, 1, 0);
  chunk_seed("f64_pw_rel", "pw_rel=1e-2 delta negabinary bitshuffle rze subchunk=512", 1, 200, 0, 0);
  chunk_seed("f32_lossless", "lossless subchunk=512", 0, 200, 0, 0);
  /* the ratio chain (huffctx since 2026-12-02: format version 4, two codes a sub-chunk), its zero runs,
   * literals and bit-length classes */
  chunk_seed("f32_ratio_smooth", "abs=1e-3 ratio subchunk=4096", 0, 3000, 0, 0);
  chunk_seed("f32_ratio_outliers", "abs=1e-2 ratio subchunk=2048", 0, 900, 1, 0);
  chunk_seed("f64_huffctx_delta", "abs=1e-6 delta zigzag huffctx subchunk=4096", 1, 700, 0, 0);
  chunk_seed("f32_huffctx_zeros", "abs=1e-3 zigzag huffctx subchunk=65536", 0, 16384, 3, 0);
  /* huff (format version 3): the ratio chain until 2026-12-01 */
  chunk_seed("f32_huff_lnd", "abs=1e-3 lorenzo_nd zigzag huff subchunk=4096", 0, 3000, 0, 0);
  chunk_seed("f64_huff_delta", "abs=1e-6 delta zigzag huff subchunk=4096", 1, 700, 0, 0);
  chunk_seed("f32_huff_zeros", "abs=1e-3 zigzag huff subchunk=65536", 0, 16384, 3, 0);
  chunk_seed("f64_lossless_outliers", "lossless delta zigzag bitshuffle rze subchunk=512", 1, 150, 1, 0);
  /* mode 0 (checksum as is) and mode 3 copies of two seeds */
  {
    h5fz_spec s;
    void *out;
    size_t out_n;
    h5fz_spec_parse("abs=1e-2 subchunk=512", &s);
    s.dtype = H5FZ_DTYPE_F32;
    void *v = make_values(0, 100, 1);
    h5fz_chunk_encode(&s, v, 400, &out, &out_n);
    unsigned char m = 0;
    write_file("chunk_decode", "f32_outliers_mode0", &m, 1, out, out_n);
    m = 3;
    write_file("chunk_decode", "f32_outliers_mode3", &m, 1, out, out_n);
    free(out);
    free(v);
  }
  /* lorenzo (2-D over rows of the last dim, 3-D, 1-D without dims) and
   * the bitpack coder; written after the seeds above so that their bytes
   * (same random sequence) do not change */
  chunk_seed("f32_lorenzo_2d", "abs=1e-3 lorenzo zigzag bitshuffle rze dims=7x100 subchunk=1024", 0, 700, 0, 0);
  chunk_seed("f64_lorenzo_2d", "abs=1e-6 lorenzo zigzag bitshuffle rze dims=5x60 subchunk=1024", 1, 300, 0, 0);
  chunk_seed("f32_lorenzo_3d", "abs=1e-3 lorenzo zigzag bitshuffle rze dims=4x5x30 subchunk=1024", 0, 600, 0, 0);
  chunk_seed("f64_lorenzo_3d_outliers", "abs=1e-2 lorenzo zigzag rze dims=3x4x25 subchunk=1024", 1, 300, 1, 0);
  chunk_seed("f32_lorenzo_1d_trailing", "abs=1e-3 lorenzo zigzag rze subchunk=512", 0, 300, 0, 3);
  chunk_seed("f32_bitpack_delta", "abs=1e-3 delta zigzag bitpack subchunk=512", 0, 300, 0, 0);
  chunk_seed("f64_bitpack_delta_outliers", "abs=1e-2 delta zigzag bitpack subchunk=512", 1, 200, 1, 0);
  chunk_seed("f32_bitpack_zeros", "abs=1e-3 delta zigzag bitpack subchunk=1024", 0, 1000, 3, 0);
  chunk_seed("f32_bitpack_random", "abs=1e-9 delta zigzag bitpack subchunk=512", 0, 200, 2, 0);
  chunk_seed("f32_lorenzo_bitpack_2d", "abs=1e-3 lorenzo zigzag bitpack dims=6x50 subchunk=512", 0, 300, 0, 0);
  chunk_seed("f64_lorenzo_bitpack_3d", "abs=1e-4 lorenzo zigzag bitpack dims=3x4x20 subchunk=1024", 1, 240, 4, 0);
  chunk_seed("f32_pw_rel_lorenzo_bitpack", "pw_rel=1e-3 lorenzo zigzag bitpack dims=10x30 subchunk=512", 0, 300, 1, 0);
  chunk_seed("f64_lossless_lorenzo_bitpack", "lossless lorenzo zigzag bitpack dims=8x20 subchunk=512", 1, 160, 0, 0);
  chunk_seed("f32_lossless_lorenzo_rze", "lossless lorenzo zigzag bitshuffle rze dims=10x30 subchunk=512", 0, 300, 1,
             0);
  /* mode 3 (n_elements and n_subchunks rewritten) copies of a lorenzo and a
   * bitpack chunk */
  {
    static const char *specs[2] = {"abs=1e-3 lorenzo zigzag bitpack dims=4x40 subchunk=512",
                                   "abs=1e-3 lorenzo zigzag bitshuffle rze dims=2x4x20 subchunk=512"};
    static const char *names[2] = {"f32_lorenzo_bitpack_mode3", "f32_lorenzo_rze_mode3"};
    for (int i = 0; i < 2; i++) {
      h5fz_spec s;
      void *out;
      size_t out_n;
      if (h5fz_spec_parse(specs[i], &s)) {
        fprintf(stderr, "%s\n", h5fz_last_error());
        return 1;
      }
      s.dtype = H5FZ_DTYPE_F32;
      void *v = make_values(0, 160, 0);
      if (h5fz_chunk_encode(&s, v, 640, &out, &out_n)) {
        fprintf(stderr, "%s\n", h5fz_last_error());
        return 1;
      }
      unsigned char m = 3;
      write_file("chunk_decode", names[i], &m, 1, out, out_n);
      free(out);
      free(v);
    }
  }
  /* lorenzo_nd (1-D, 2-D, 3-D predictors; header byte 35), after the seeds
   * above for the same reason */
  chunk_seed("f32_lorenzo_nd_1d", "abs=1e-3 lorenzo_nd zigzag bitshuffle rze subchunk=512", 0, 300, 0, 0);
  chunk_seed("f32_lorenzo_nd_3d", "abs=1e-3 lorenzo_nd zigzag bitshuffle rze dims=4x5x30 subchunk=512", 0, 600, 5, 0);
  chunk_seed("f64_lorenzo_nd_3d_outliers", "abs=1e-4 lorenzo_nd zigzag rze dims=2x5x30 subchunk=512", 1, 300, 6, 0);
  chunk_seed("f32_lorenzo_nd_2d_bitpack", "abs=1e-3 lorenzo_nd zigzag bitpack dims=20x30 subchunk=512", 0, 600, 7, 2);
  chunk_seed("f32_pw_rel_lorenzo_nd", "pw_rel=1e-3 lorenzo_nd negabinary bitshuffle rze dims=3x5x30 subchunk=512", 0,
             450, 6, 0);
  chunk_seed("f64_lossless_lorenzo_nd", "lossless lorenzo_nd zigzag bitshuffle rze dims=2x5x30 subchunk=512", 1, 300, 5,
             0);
  {
    h5fz_spec s;
    void *out;
    size_t out_n;
    if (h5fz_spec_parse("abs=1e-3 lorenzo_nd zigzag bitshuffle rze dims=4x5x30 subchunk=512", &s)) return 1;
    s.dtype = H5FZ_DTYPE_F32;
    void *v = make_values(0, 600, 5);
    if (h5fz_chunk_encode(&s, v, 2400, &out, &out_n)) {
      fprintf(stderr, "%s\n", h5fz_last_error());
      return 1;
    }
    unsigned char m = 3;
    write_file("chunk_decode", "f32_lorenzo_nd_mode3", &m, 1, out, out_n);
    free(out);
    free(v);
  }
  /* format version 2: big-endian values (flag bit 1), coded and stored
   * raw; after the seeds above for the same reason */
  chunk_seed("f32_big_endian", "abs=1e-3 subchunk=512 order=big", 0, 300, 1, 0);
  chunk_seed("f64_big_endian_stored_raw", "abs=1e-9 subchunk=512 order=big", 1, 64, 2, 0);
  /* cd_values */
  cd_seed("default", "rel=1e-4", 0);
  cd_seed("abs_chain", "abs=1e-3 delta negabinary bitshuffle rze subchunk=8192", 0);
  cd_seed("local_f32", "rel=1e-4 dtype=f32 dims=10x20x30", 1);
  cd_seed("ratio", "abs=1e-3 ratio", 0);
  cd_seed("local_f64_fill", "abs=0.5 zigzag rze dtype=f64 dims=4x4x4x4 fill=-9999", 1);
  cd_seed("raw_coder", "abs=1 raw subchunk=512", 0);
  cd_seed("pw_rel", "pw_rel=1e-3 dtype=f32 dims=8x8", 1);
  cd_seed("lossless", "lossless zigzag rze", 0);
  cd_seed("lorenzo_bitpack_local", "abs=1e-3 lorenzo zigzag bitpack dtype=f32 dims=7x100", 1);
  cd_seed("lorenzo_nd_local", "abs=1e-3 lorenzo_nd zigzag bitshuffle rze dtype=f64 dims=3x4x5x6", 1);
  cd_seed("local_big_endian", "abs=1e-3 dtype=f32 dims=10x20 order=big", 1);
  write_file("cd_values", "empty", NULL, 0, NULL, 0);
  {
    const uint8_t v1[4] = {1, 0, 0, 0};
    write_file("cd_values", "version_only", v1, 4, NULL, 0);
  }
  /* spec_parse */
  static const char *texts[] = {
      "abs=1e-3",
      "rel=1e-4 delta zigzag bitshuffle rze",
      "abs=0.5 -> delta -> negabinary -> bitshuffle -> rze subchunk=8192",
      "rel=1e-2, quant, delta, zigzag, rze, dtype=f32, dims=50x100x100, fill=-9999",
      "abs=1 raw subchunk=512 dtype=f64 fill=nan",
      "quant delta zigzag delta zigzag delta zigzag delta zigzag bitshuffle rze",
      "",
      "rel=1e300 subchunk=65536",
      "abs=0x1p-20 dims=1x1x1x1 fill=inf",
      "pw_rel=0.01 delta zigzag rze",
      "lossless bitshuffle rze dtype=f64",
      "abs=1e-310 fill=-1e-315",
      "abs=1e-3 lorenzo zigzag bitshuffle rze dtype=f32 dims=7x100",
      "abs=1e-3 delta zigzag bitpack dtype=f64 dims=4x5x6",
      "rel=1e-4 lorenzo_nd zigzag bitshuffle rze dims=2x3x4x5",
      "abs=1 zigzag lorenzo_nd rze",
  };
  for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
    char name[32];
    snprintf(name, sizeof name, "text_%02zu", i);
    write_file("spec_parse", name, texts[i], strlen(texts[i]), NULL, 0);
  }
  printf("wrote %d seeds under %s\n", count, dir);
  return 0;
}
