/*
 * test_core_roundtrip.c - the chunk codec without HDF5: every chain of v1 on
 * generated and adversarial arrays, float32 and float64, checked element by
 * element against the bound; special values bit-exact; cd_values and text
 * forms round-trip; corrupt containers fail cleanly.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "h5fz.h"
#include "h5fz_internal.h"
#include "h5fz_rel_bound.h"

#define CORE_RNG_SEED 0x9e3779b97f4a7c15ull
#include "core_check.h"

static double uniform(void) { return (double)(rnd() >> 11) * 0x1p-53; }

typedef enum { GEN_SMOOTH, GEN_RANDOM_BITS, GEN_CONSTANT, GEN_HUGE_TINY, GEN_SPECIALS, GEN_NAN_RUNS } gen_kind;

static void fill(double *v, size_t n, gen_kind g)
{
  for (size_t i = 0; i < n; i++) {
    switch (g) {
    case GEN_SMOOTH: v[i] = 20.0 + 0.07 * sin(i * 0.01) + 1e-3 * uniform(); break;
    case GEN_RANDOM_BITS: {
      uint64_t b = rnd();
      memcpy(&v[i], &b, 8);
    } break;
    case GEN_CONSTANT: v[i] = 3.25; break;
    case GEN_HUGE_TINY: v[i] = (i & 1) ? 1e30 * uniform() : 1e-30 * uniform(); break;
    case GEN_SPECIALS: {
      static const double s[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 1e-310, -1e-310, 3.4e38, -3.4e38, 1.0};
      v[i] = s[rnd() % 10];
    } break;
    case GEN_NAN_RUNS: v[i] = ((i / 700) % 3 == 0) ? NAN : 280.0 + 10 * sin(i * 0.003); break;
    }
  }
}

/* Bound on each finite element, bit-exact NaN/Inf/-0.0. */
static void check_values(const void *orig, const void *back, size_t n, int f64, double eb, const char *what)
{
  size_t bad = 0;
  for (size_t i = 0; i < n; i++) {
    double x = f64 ? ((const double *)orig)[i] : ((const float *)orig)[i];
    double y = f64 ? ((const double *)back)[i] : ((const float *)back)[i];
    int ok;
    if (isfinite(x) && !(x == 0 && signbit(x)))
      ok = fabs(x - y) <= eb;
    else
      ok = !memcmp((const char *)orig + i * (f64 ? 8 : 4), (const char *)back + i * (f64 ? 8 : 4), f64 ? 8 : 4);
    if (!ok && bad++ < 3) fprintf(stderr, "  %s: element %zu: %.17g -> %.17g (eb %g)\n", what, i, x, y, eb);
  }
  CHECK(bad == 0, "%s: %zu of %zu elements out of bound", what, bad, n);
}

/* Per element: |x - x'| <= eb |x| (PW_REL), bit-exact (LOSSLESS). */
static void check_mode_values(const void *orig, const void *back, size_t n, int f64, int mode, double eb,
                              const char *what)
{
  size_t bad = 0, es = f64 ? 8 : 4;
  for (size_t i = 0; i < n; i++) {
    double x = f64 ? ((const double *)orig)[i] : ((const float *)orig)[i];
    double y = f64 ? ((const double *)back)[i] : ((const float *)back)[i];
    int ok;
    if (mode == H5FZ_MODE_PW_REL && isfinite(x) && x != 0)
      ok = fabs(x - y) <= eb * fabs(x) && signbit(x) == signbit(y);
    else
      ok = !memcmp((const char *)orig + i * es, (const char *)back + i * es, es);
    if (!ok && bad++ < 3) fprintf(stderr, "  %s: element %zu: %.17g -> %.17g\n", what, i, x, y);
  }
  CHECK(bad == 0, "%s: %zu of %zu elements out of bound", what, bad, n);
}

static void roundtrip_mode(const char *mode_text, int mode, double eb, int f64, size_t n, gen_kind g)
{
  char text[256], what[320];
  snprintf(text, sizeof text, "%s dtype=%s", mode_text, f64 ? "f64" : "f32");
  snprintf(what, sizeof what, "[%s n=%zu gen=%d]", text, n, (int)g);
  h5fz_spec s;
  if (h5fz_spec_parse(text, &s)) {
    CHECK(0, "%s: parse: %s", what, h5fz_last_error());
    return;
  }
  double *d = malloc(n * 8 + 16);
  fill(d, n, g);
  size_t es = f64 ? 8 : 4;
  unsigned char *in = malloc(n * es + 1);
  for (size_t i = 0; i < n; i++) {
    if (f64)
      memcpy(in + i * 8, &d[i], 8);
    else {
      float f = (float)d[i];
      memcpy(in + i * 4, &f, 4);
    }
  }
  void *enc = NULL, *dec = NULL;
  size_t en = 0, dn = 0;
  CHECK(h5fz_chunk_encode(&s, in, n * es, &enc, &en) == 0, "%s: encode: %s", what, h5fz_last_error());
  if (enc && h5fz_chunk_decode(enc, en, &dec, &dn) == 0) {
    check_mode_values(in, dec, n, f64, mode, eb, what);
    if (g == GEN_SMOOTH && n >= 4096 && mode == H5FZ_MODE_PW_REL && eb >= 1e-3)
      CHECK(en * 2 < n * es, "%s: smooth data compressed only to %zu of %zu bytes", what, en, n * es);
  } else {
    CHECK(0, "%s: decode: %s", what, h5fz_last_error());
  }
  free(enc);
  free(dec);
  free(in);
  free(d);
}

static void roundtrip(const char *chain, int f64, size_t n, gen_kind g, double eb, size_t extra_bytes)
{
  char text[256], what[320];
  snprintf(text, sizeof text, "abs=%.17g %s dtype=%s", eb, chain, f64 ? "f64" : "f32");
  snprintf(what, sizeof what, "[%s n=%zu gen=%d +%zu]", text, n, (int)g, extra_bytes);
  h5fz_spec s;
  int rc = h5fz_spec_parse(text, &s);
  CHECK(rc == 0, "%s: parse: %s", what, h5fz_last_error());
  if (rc) return;
  double *d = malloc(n * 8 + 16);
  fill(d, n, g);
  size_t esize = f64 ? 8 : 4, bytes = n * esize + extra_bytes;
  unsigned char *in = malloc(bytes + 1);
  for (size_t i = 0; i < n; i++) {
    if (f64)
      memcpy(in + i * 8, &d[i], 8);
    else {
      float f = (float)d[i];
      memcpy(in + i * 4, &f, 4);
    }
  }
  for (size_t i = 0; i < extra_bytes; i++) in[n * esize + i] = (unsigned char)(0xA0 + i);
  void *enc = NULL, *dec = NULL;
  size_t enc_n = 0, dec_n = 0;
  rc = h5fz_chunk_encode(&s, in, bytes, &enc, &enc_n);
  CHECK(rc == 0, "%s: encode: %s", what, h5fz_last_error());
  if (!rc) {
    rc = h5fz_chunk_decode(enc, enc_n, &dec, &dec_n);
    CHECK(rc == 0, "%s: decode: %s", what, h5fz_last_error());
    if (!rc) {
      CHECK(dec_n == bytes, "%s: decoded %zu bytes, want %zu", what, dec_n, bytes);
      check_values(in, dec, n, f64, eb, what);
      CHECK(!memcmp((char *)in + n * esize, (char *)dec + n * esize, extra_bytes), "%s: trailing bytes", what);
      if (g == GEN_SMOOTH && n >= 4096 && eb >= 1e-4 && !strstr(chain, "raw"))
        CHECK(enc_n * 3 < bytes * 2, "%s: smooth data compressed only to %zu of %zu bytes", what, enc_n, bytes);
    }
  }
  free(enc);
  free(dec);
  free(in);
  free(d);
}

static void test_spec_forms(void)
{
  h5fz_spec s, t;
  CHECK(h5fz_spec_parse("abs=1e-3", &s) == 0, "parse abs: %s", h5fz_last_error());
  CHECK(s.mode == H5FZ_MODE_ABS && s.bound == 1e-3 && s.n_ops == 5, "abs alone = default chain");
  unsigned cd[H5FZ_CD_MAX];
  size_t n;
  s.dtype = H5FZ_DTYPE_F64;
  s.rank = 3;
  s.dims[0] = 5;
  s.dims[1] = 6;
  s.dims[2] = 7;
  CHECK(h5fz_spec_to_cd_values(&s, 0, cd, H5FZ_CD_MAX, &n) == 0 && n <= H5FZ_CD_USER_MAX, "user words");
  CHECK(cd[0] == 1 && cd[2] == 0xd2f1a9fcu && cd[3] == 0x3f50624du, "bound words low first: %08x %08x", cd[2], cd[3]);
  CHECK(h5fz_spec_to_cd_values(&s, 1, cd, H5FZ_CD_MAX, &n) == 0, "local words");
  size_t user = 0;
  CHECK(h5fz_spec_from_cd_values(cd, n, &t, &user) == 0, "from cd: %s", h5fz_last_error());
  CHECK(user == 11 && t.dtype == H5FZ_DTYPE_F64 && t.rank == 3 && t.dims[2] == 7 && t.bound == 1e-3, "cd round trip");
  CHECK(h5fz_spec_from_cd_values(NULL, 0, &t, NULL) == 0 && t.mode == H5FZ_MODE_REL, "zero words = defaults");
  unsigned bad_version[] = {2};
  CHECK(h5fz_spec_from_cd_values(bad_version, 1, &t, NULL) == H5FZ_ERR_SPEC, "bad version");
  unsigned half_bound[] = {1, 0, 5};
  CHECK(h5fz_spec_from_cd_values(half_bound, 3, &t, NULL) == H5FZ_ERR_SPEC, "half bound");
  CHECK(strstr(h5fz_last_error(), "two words") != NULL, "half bound message: %s", h5fz_last_error());
  unsigned unknown_op[] = {1, 0, 0xd2f1a9fcu, 0x3f50624du, 0, 3, 1, 99, 30};
  CHECK(h5fz_spec_from_cd_values(unknown_op, 9, &t, NULL) == H5FZ_ERR_SPEC, "unknown op");
  unsigned nan_bound[] = {1, 0, 0, 0x7ff80000u};
  CHECK(h5fz_spec_from_cd_values(nan_bound, 4, &t, NULL) == H5FZ_ERR_SPEC, "NaN bound");
  CHECK(h5fz_spec_parse("abs=1e-3 bitshuffle delta rze", &t) == H5FZ_ERR_SPEC, "delta after bitshuffle");
  CHECK(strstr(h5fz_last_error(), "delta") != NULL, "type-check message: %s", h5fz_last_error());
  CHECK(h5fz_spec_parse("abs=1e-3 delta zigzag", &t) == H5FZ_ERR_SPEC, "no coder");
  CHECK(h5fz_spec_parse("abs=1e-3 delta bitshuffle bitpack", &t) == H5FZ_ERR_SPEC, "bitpack after bit planes");
  CHECK(strstr(h5fz_last_error(), "bitpack") != NULL, "bitpack type-check message: %s", h5fz_last_error());
  CHECK(h5fz_spec_parse("abs=0", &t) == H5FZ_ERR_SPEC, "zero bound");
  CHECK(h5fz_spec_parse("abs=1e400", &t) == H5FZ_ERR_SPEC && strstr(h5fz_last_error(), "out of the range"),
        "a number past a double's range is named as such: %s", h5fz_last_error());
  CHECK(h5fz_spec_parse("abs=1e-3x", &t) == H5FZ_ERR_SPEC && strstr(h5fz_last_error(), "not a number"),
        "a word that is no number: %s", h5fz_last_error());
  /* a mistyped word: the nearest known one is named (one edit for short words, two for longer), none when nothing
   * is that near */
  static const char *const typos[][2] = {{"abs=1e-3 raito", "did you mean 'ratio'?"},
                                         {"abs=1e-3 lorenzo_ndd zigzag huffctx", "did you mean 'lorenzo_nd'?"},
                                         {"abs=1e-3 RATIO", "did you mean 'ratio'?"},
                                         {"abs=1e-3 quant delta zigzag bitshufle rze", "did you mean 'bitshuffle'?"},
                                         {"abs=1e-3 huffcxt", "did you mean 'huffctx'?"},
                                         {"abs=1e-3 rz", "did you mean 'rze'?"},
                                         {"lossles", "did you mean 'lossless'?"},
                                         {"abss=1e-3", "did you mean 'abs='?"},
                                         {"pwrel=1e-3", "did you mean 'pw_rel='?"},
                                         {"abs=1e-3 subchnk=65536", "did you mean 'subchunk='?"},
                                         {"abs=1e-3 rat", "did you mean 'ratio'?"},
                                         {"abs=1e-3 lorenzo_int zigzag huff", "did you mean 'lorenzo_interp'?"},
                                         {"abs=1e-3 lorenzo_i zigzag huff", "did you mean 'lorenzo_interp'?"},
                                         {"abs=1e-3 xyz", NULL},
                                         {"abs=1e-3 zzzzzzz", NULL},
                                         {"abs=1e-3 qq=1", NULL}};
  for (size_t i = 0; i < sizeof typos / sizeof typos[0]; i++) {
    CHECK(h5fz_spec_parse(typos[i][0], &t) == H5FZ_ERR_SPEC, "typo '%s' refused", typos[i][0]);
    const char *e = h5fz_last_error();
    CHECK(typos[i][1] ? strstr(e, typos[i][1]) != NULL : strstr(e, "did you mean") == NULL, "typo '%s': %s", typos[i][0],
          e);
  }
  CHECK(h5fz_spec_parse("abs=1e-3 -> delta -> negabinary -> bitshuffle -> rze subchunk=8192", &t) == 0,
        "arrow form: %s", h5fz_last_error());
  char buf[256];
  CHECK(h5fz_spec_format(&t, buf, sizeof buf) == 0 &&
            !strcmp(buf, "abs=0.001 quant delta negabinary bitshuffle rze subchunk=8192"),
        "format: %s", buf);
}

static void test_corruption(void)
{
  h5fz_spec s;
  h5fz_spec_parse("abs=1e-2 dtype=f32", &s);
  float v[3000];
  for (int i = 0; i < 3000; i++) v[i] = (float)sin(i * 0.01) + (i % 97 == 0 ? NAN : 0.0f);
  void *enc, *dec;
  size_t enc_n, dec_n;
  CHECK(h5fz_chunk_encode(&s, v, sizeof v, &enc, &enc_n) == 0, "encode");
  unsigned char *c = malloc(enc_n);
  size_t undetected = 0;
  for (size_t i = 0; i < enc_n; i++) {
    memcpy(c, enc, enc_n);
    c[i] ^= 0x5a;
    int rc = h5fz_chunk_decode(c, enc_n, &dec, &dec_n);
    if (rc == 0) {
      undetected++;
      free(dec);
    }
  }
  CHECK(undetected == 0, "%zu of %zu byte flips decoded without error", undetected, enc_n);
  for (size_t len = 0; len < enc_n; len++) {
    int rc = h5fz_chunk_decode(enc, len, &dec, &dec_n);
    CHECK(rc != 0, "truncated to %zu bytes decoded", len);
    if (!rc) free(dec);
  }
  memcpy(c, enc, enc_n);
  c[4] = 99;
  CHECK(h5fz_chunk_decode(c, enc_n, &dec, &dec_n) == H5FZ_ERR_VERSION, "future version");
  CHECK(strstr(h5fz_last_error(), "version 99") != NULL, "version message: %s", h5fz_last_error());
  c[4] = (uint8_t)(h5fz_newest_format_version() + 1u);
  CHECK(h5fz_chunk_decode(c, enc_n, &dec, &dec_n) == H5FZ_ERR_VERSION, "the version after the newest");
  char want[64];
  snprintf(want, sizeof want, "reads up to version %u", h5fz_newest_format_version());
  CHECK(strstr(h5fz_last_error(), want) != NULL, "version message: %s", h5fz_last_error());
  free(c);
  free(enc);
}

/* h5fz_chunk_decode_for: a container must be a chunk of the dataset (type,
 * size, recorded shape: same element count, other dims = values in another
 * order) and keep its bound; dims folded as set_local folds them. */
static void test_decode_for(void)
{
  h5fz_spec s, ds;
  h5fz_spec_parse("abs=1e-3 dtype=f32 dims=10x20", &s);
  float v[200];
  for (int i = 0; i < 200; i++) v[i] = (float)i * 0.5f;
  void *enc, *dec;
  size_t enc_n, dec_n;
  CHECK(h5fz_chunk_encode(&s, v, sizeof v, &enc, &enc_n) == 0, "encode: %s", h5fz_last_error());
  ds = s;
  CHECK(h5fz_chunk_decode_for(enc, enc_n, &ds, &dec, &dec_n) == 0 && dec_n == sizeof v, "same: %s", h5fz_last_error());
  check_values(v, dec, 200, 0, 1e-3, "decode_for");
  free(dec);
  static const struct {
    const char *dataset, *why;
  } refused[] = {
      {"abs=1e-3 dtype=f32 dims=20x10", "the chunk is 10 x 20 elements, the dataset's chunks are 20 x 10"},
      {"abs=1e-3 dtype=f32 dims=200", "the dataset's chunks are 200"},
      {"abs=1e-3 dtype=f32 dims=10x10", "the dataset's chunks are 400 bytes"},
      {"abs=1e-3 dtype=f64 dims=10x10", "float64"},
      {"abs=1e-4 dtype=f32 dims=10x20", "looser than or unlike the dataset's ABS 0.0001"},
      {"pw_rel=1e-2 dtype=f32 dims=10x20", "the chunk was coded ABS"},
      {"lossless dtype=f32 dims=10x20", "lossless"},
  };
  for (size_t k = 0; k < sizeof refused / sizeof *refused; k++) {
    h5fz_spec_parse(refused[k].dataset, &ds);
    CHECK(h5fz_chunk_decode_for(enc, enc_n, &ds, &dec, &dec_n) == H5FZ_ERR_CORRUPT, "%s accepted", refused[k].dataset);
    CHECK(strstr(h5fz_last_error(), refused[k].why) != NULL, "%s: message %s", refused[k].dataset, h5fz_last_error());
  }
  /* a tighter bound, and a REL bound its values' range allows (abs 1e-3 <= 2e-5 x 99.5) */
  static const char *const accepted[] = {"abs=1e-2 dtype=f32 dims=10x20", "rel=2e-5 dtype=f32 dims=10x20", "abs=1e-3",
                                         "abs=1e-2"};
  for (size_t k = 0; k < sizeof accepted / sizeof *accepted; k++) {
    h5fz_spec_parse(accepted[k], &ds);
    dec = NULL;
    CHECK(h5fz_chunk_decode_for(enc, enc_n, &ds, &dec, &dec_n) == 0, "%s refused: %s", accepted[k], h5fz_last_error());
    free(dec);
  }
  /* REL: checked against the decoded range (about 99.5): abs 1e-3 > 1e-6 x (99.5 + 2e-3) */
  h5fz_spec_parse("rel=1e-6 dtype=f32 dims=10x20", &ds);
  CHECK(h5fz_chunk_decode_for(enc, enc_n, &ds, &dec, &dec_n) == H5FZ_ERR_CORRUPT &&
            strstr(h5fz_last_error(), "more than the dataset's REL 1e-06 of its values' range"),
        "abs=1e-3 chunk in a rel=1e-6 dataset: %s", h5fz_last_error());
  /* without a dataset part (cd_values of an old writer): the bound only */
  h5fz_spec_parse("abs=1e-4", &ds);
  CHECK(h5fz_chunk_decode_for(enc, enc_n, &ds, &dec, &dec_n) == H5FZ_ERR_CORRUPT, "looser, no dataset part");
  CHECK(h5fz_chunk_decode_for(enc, enc_n, NULL, &dec, &dec_n) == H5FZ_ERR_ARG, "NULL spec");
  free(enc);
  /* a REL chunk in REL datasets: its own bound and a looser one pass, a tighter one does not */
  h5fz_spec_parse("rel=1e-3 dtype=f32 dims=10x20", &s);
  CHECK(h5fz_chunk_encode(&s, v, sizeof v, &enc, &enc_n) == 0, "encode: %s", h5fz_last_error());
  static const struct {
    const char *dataset;
    int status;
  } rel_cases[] = {{"rel=1e-3 dtype=f32 dims=10x20", 0},
                   {"rel=1e-2 dtype=f32 dims=10x20", 0},
                   {"rel=1e-4 dtype=f32 dims=10x20", H5FZ_ERR_CORRUPT}};
  for (size_t k = 0; k < 3; k++) {
    h5fz_spec_parse(rel_cases[k].dataset, &ds);
    dec = NULL;
    int rc = h5fz_chunk_decode_for(enc, enc_n, &ds, &dec, &dec_n);
    CHECK(rc == rel_cases[k].status, "rel=1e-3 chunk in %s: %d %s", rel_cases[k].dataset, rc, h5fz_last_error());
    if (!rc) free(dec);
  }
  free(enc);
  /* without a recorded shape only type, size and bound count; a lossless chunk keeps any bound */
  h5fz_spec_parse("lossless dtype=f32", &s);
  CHECK(h5fz_chunk_encode(&s, v, sizeof v, &enc, &enc_n) == 0, "encode: %s", h5fz_last_error());
  h5fz_spec_parse("pw_rel=1e-3 dtype=f32 dims=20x10", &ds);
  CHECK(h5fz_chunk_decode_for(enc, enc_n, &ds, &dec, &dec_n) == 0, "lossless, no shape recorded: %s",
        h5fz_last_error());
  CHECK(!memcmp(dec, v, sizeof v), "lossless exact");
  free(dec);
  free(enc);
  /* folding: rank 6 -> the first three multiplied */
  const uint64_t d6[6] = {2, 3, 4, 5, 6, 7};
  uint32_t r = 0, f[H5FZ_MAX_RANK];
  CHECK(h5fz_chunk_dims_fold(6, d6, &r, f) == 0 && r == 4 && f[0] == 24 && f[1] == 5 && f[2] == 6 && f[3] == 7,
        "fold 6 -> %u", r);
  const uint64_t z[2] = {3, 0};
  CHECK(h5fz_chunk_dims_fold(2, z, &r, f) == H5FZ_ERR_ARG && strstr(h5fz_last_error(), "chunk dim 1 is 0"),
        "zero dim: %s", h5fz_last_error());
}

/* The tuning variables: a value out of range or not a whole number is
 * ignored (the default comes back), never an error. */
static void test_env_int(void)
{
  setenv("H5FZ_TEST_INT", "48", 1);
  CHECK(h5fz_env_int("H5FZ_TEST_INT", 16, 255, 1, 0) == 48, "48");
  CHECK(h5fz_env_int("H5FZ_TEST_INT", 64, 1024, 32, 7) == 7, "48 is not in 64..1024");
  setenv("H5FZ_TEST_INT", "96", 1);
  CHECK(h5fz_env_int("H5FZ_TEST_INT", 64, 1024, 32, 7) == 96, "96 is a multiple of 32");
  setenv("H5FZ_TEST_INT", "100", 1);
  CHECK(h5fz_env_int("H5FZ_TEST_INT", 64, 1024, 32, 7) == 7, "100 is not a multiple of 32");
  static const char *const junk[] = {"abc", "12x", " ", "-3", "99999999999999999999999", "0x10"};
  for (size_t i = 0; i < sizeof junk / sizeof *junk; i++) {
    setenv("H5FZ_TEST_INT", junk[i], 1);
    CHECK(h5fz_env_int("H5FZ_TEST_INT", 1, 1024, 1, 5) == 5, "'%s' must give the default", junk[i]);
  }
  static const char *const pow2[][2] = {{"4", "4"}, {"1", "1"},  {"8", "8"}, {"3", "0"},
                                        {"6", "0"}, {"16", "0"}, {"x", "0"}};
  for (size_t i = 0; i < sizeof pow2 / sizeof *pow2; i++) { /* H5FZ_GPU_WF_WARPS's kind */
    setenv("H5FZ_TEST_INT", pow2[i][0], 1);
    CHECK(h5fz_env_pow2("H5FZ_TEST_INT", 1, 8, 0) == atoll(pow2[i][1]), "power of two '%s'", pow2[i][0]);
  }
  unsetenv("H5FZ_TEST_INT");
  CHECK(h5fz_env_int("H5FZ_TEST_INT", 1, 1024, 1, 5) == 5, "unset");
  CHECK(h5fz_env_pow2("H5FZ_TEST_INT", 1, 8, 0) == 0, "unset power of two");
  setenv("H5FZ_THREADS", "many", 1); /* the CPU executor still runs, on every core */
  h5fz_settings_reload(); /* H5FZ_THREADS is read once per process */
  roundtrip("", 0, 100000, GEN_SMOOTH, 1e-3, 0);
  unsetenv("H5FZ_THREADS");
  h5fz_settings_reload();
}

/* REL leaves the fill value out of the range: an edge chunk padded with
 * fill 0 keeps the bound of its real values (1000..1001 -> eb 1e-4). */
static void test_rel_ignores_fill(void)
{
  float v[4096];
  for (int i = 0; i < 4096; i++) v[i] = i < 3000 ? 1000.0f + (float)i / 3000.0f : 0.0f;
  h5fz_spec s;
  CHECK(h5fz_spec_parse("rel=1e-4 dtype=f32 fill=0", &s) == 0 && s.has_fill && s.fill == 0.0, "parse fill");
  unsigned cd[H5FZ_CD_MAX];
  size_t n, user;
  h5fz_spec t;
  CHECK(h5fz_spec_to_cd_values(&s, 1, cd, H5FZ_CD_MAX, &n) == 0 && h5fz_spec_from_cd_values(cd, n, &t, &user) == 0 &&
            t.has_fill && t.fill == 0.0,
        "fill through cd_values: %s", h5fz_last_error());
  void *enc, *dec;
  size_t en, dn;
  CHECK(h5fz_chunk_encode(&s, v, sizeof v, &enc, &en) == 0, "encode");
  h5fz_chunk_info info;
  CHECK(h5fz_chunk_inspect(enc, en, &info) == 0 && info.abs_bound <= 1e-4 * (1001.0 - 1000.0) * 1.0001,
        "REL bound %g ignores the padding", info.abs_bound);
  CHECK(h5fz_chunk_decode(enc, en, &dec, &dn) == 0, "decode");
  check_values(v, dec, 4096, 0, info.abs_bound, "rel with fill");
  free(enc);
  free(dec);
}

/* The dataset's fill value comes back exactly (it escapes: spec.md §7)
 * in ABS, REL and PW_REL, f32 and f64, whether it lies inside the data's
 * range (5, 10.001), outside it (-999, 1e30) or is NaN, in runs and
 * scattered; fill=0 keeps zeros in bin 0 (no outliers for them); other
 * values keep the bound. */
/* missing= (docs/spec.md §2.2): text and cd_values forms, the one-word
 * form NCO's --cmp carries, the one-marker rule beside a fill value, and a
 * REL chunk whose missing values come back exactly and stay out of the
 * range (with and without the +0.0 padding of a NOFILL dataset). */
static void test_missing_forms(void)
{
  h5fz_spec s, t;
  char buf[256];
  unsigned cd[H5FZ_CD_MAX];
  size_t n = 0, user = 0;
  CHECK(h5fz_spec_parse("rel=1e-3 missing=-999", &s) == 0 && s.has_missing && s.missing == -999.0, "parse missing=: %s",
        h5fz_last_error());
  CHECK(h5fz_spec_format(&s, buf, sizeof buf) == 0 &&
            !strcmp(buf, "rel=0.001 quant delta zigzag bitshuffle rze missing=-999"),
        "format missing=: %s", buf);
  CHECK(h5fz_spec_to_cd_values(&s, 0, cd, H5FZ_CD_MAX, &n) == 0 && n == 14 && cd[11] == H5FZ_CD_MISSING_MARKER,
        "missing= words: %zu", n);
  CHECK(h5fz_spec_from_cd_values(cd, n, &t, &user) == 0 && user == 14 && t.has_missing && t.missing == -999.0,
        "missing= words read back: %s", h5fz_last_error());
  CHECK(h5fz_spec_from_cd_values(cd, 13, &t, NULL) == H5FZ_ERR_SPEC && strstr(h5fz_last_error(), "missing value"),
        "truncated missing words: %s", h5fz_last_error());
  CHECK(h5fz_spec_parse("abs=1e-3 missing=5 fill=-999 dtype=f32", &t) == H5FZ_ERR_SPEC &&
            strstr(h5fz_last_error(), "one marker exact"),
        "missing= beside another fill value: %s", h5fz_last_error());
  CHECK(h5fz_spec_parse("abs=1e-3 missing=5 fill=0 dtype=f32", &t) == 0 &&
            h5fz_spec_parse("abs=1e-3 missing=5 fill=5 dtype=f32", &t) == 0,
        "missing= beside fill 0 or the same fill: %s", h5fz_last_error());
  /* the one-word form: M SSS EE */
  static const struct {
    unsigned word;
    const char *text;
  } words[] = {{100103, "abs=1e-3"}, {200104, "rel=1e-4"}, {302502, "pw_rel=25e-2"}, {400000, "lossless"}};
  for (size_t i = 0; i < sizeof words / sizeof *words; i++) {
    CHECK(h5fz_spec_from_cd_values(&words[i].word, 1, &t, NULL) == 0 && h5fz_spec_parse(words[i].text, &s) == 0,
          "one word %u: %s", words[i].word, h5fz_last_error());
    CHECK(t.mode == s.mode && !memcmp(&t.bound, &s.bound, sizeof t.bound) && t.n_ops == s.n_ops, "one word %u = %s",
          words[i].word, words[i].text);
  }
  static const unsigned bad_words[] = {0, 2, 30, 99999, 100003, 400103, 500000};
  for (size_t i = 0; i < sizeof bad_words / sizeof *bad_words; i++)
    CHECK(h5fz_spec_from_cd_values(&bad_words[i], 1, &t, NULL) == H5FZ_ERR_SPEC, "one word %u refused", bad_words[i]);
  /* REL: the range leaves the marker (and a NOFILL chunk's zeros) out */
  for (int zeros = 0; zeros < 2; zeros++) {
    const size_t m = 4096;
    float *x = malloc(m * sizeof *x);
    for (size_t i = 0; i < m; i++)
      x[i] = i % 3 == 0 ? -999.0f : zeros && i % 5 == 0 ? 0.0f : 1000.0f + (float)(i % 100) * 0.01f;
    CHECK(h5fz_spec_parse(zeros ? "rel=1e-3 missing=-999 fill=0 dtype=f32" : "rel=1e-3 missing=-999 dtype=f32", &s) ==
              0,
          "parse: %s", h5fz_last_error());
    void *enc = NULL, *dec = NULL;
    size_t en = 0, dn = 0;
    h5fz_chunk_info info;
    CHECK(h5fz_chunk_encode(&s, x, m * 4, &enc, &en) == 0 && h5fz_chunk_inspect(enc, en, &info) == 0 &&
              h5fz_chunk_decode(enc, en, &dec, &dn) == 0 && dn == m * 4,
          "REL missing round trip: %s", h5fz_last_error());
    size_t lost = 0, made = 0, bad = 0;
    for (size_t i = 0; dec && i < m; i++) {
      float y = ((float *)dec)[i];
      if (x[i] == -999.0f)
        lost += y != -999.0f;
      else
        made += y == -999.0f, bad += !(fabs((double)y - (double)x[i]) <= info.abs_bound);
    }
    CHECK(info.abs_bound > 0 && info.abs_bound <= 1e-3 * 0.99, "eb %g within rel x the range 0.99 (zeros %d)",
          info.abs_bound, zeros);
    CHECK(lost == 0 && made == 0 && bad == 0, "missing lost %zu, made %zu, out of bound %zu (zeros %d)", lost, made,
          bad, zeros);
    free(enc), free(dec), free(x);
  }
}

static void test_fill_exact(void)
{
  static const char *fills[] = {"", "fill=-999", "fill=5", "fill=10.001", "fill=1e30", "fill=nan", "fill=0"};
  static const char *modes[] = {"abs=1e-3", "rel=1e-3", "pw_rel=1e-3"};
  const size_t n = 20000;
  for (int f64 = 0; f64 < 2; f64++)
    for (size_t k = 0; k < sizeof fills / sizeof *fills; k++)
      for (int mode = 0; mode < 3; mode++) {
        char text[128];
        snprintf(text, sizeof text, "%s dtype=%s %s", modes[mode], f64 ? "f64" : "f32", fills[k]);
        h5fz_spec s;
        CHECK(h5fz_spec_parse(text, &s) == 0, "parse '%s': %s", text, h5fz_last_error());
        const int has_fill = s.has_fill;
        const double fill = has_fill ? s.fill : 0.0;
        double *d = malloc(n * sizeof *d);
        float *f = malloc(n * sizeof *f);
        for (size_t i = 0; i < n; i++) {
          double x = 10.0 * sin(0.001 * (double)i) + 0.01 * cos(0.37 * (double)i);
          d[i] = has_fill && ((i / 1000u) % 4u == 1u || i % 97u == 3u) ? fill : x; /* runs and scattered */
          f[i] = (float)d[i];
        }
        const void *in = f64 ? (const void *)d : (const void *)f;
        size_t bytes = n * (f64 ? 8u : 4u);
        void *enc = NULL, *dec = NULL;
        size_t en = 0, dn = 0;
        h5fz_chunk_info info;
        CHECK(h5fz_chunk_encode(&s, in, bytes, &enc, &en) == 0 && h5fz_chunk_inspect(enc, en, &info) == 0 &&
                  h5fz_chunk_decode(enc, en, &dec, &dn) == 0 && dn == bytes,
              "%s: round trip: %s", text, h5fz_last_error());
        if (!dec) {
          free(enc), free(d), free(f);
          continue;
        }
        size_t bad = 0, n_fill = 0, fill_kept = 0;
        for (size_t i = 0; i < n; i++) {
          double want = f64 ? d[i] : (double)f[i];
          double got = f64 ? ((double *)dec)[i] : (double)((float *)dec)[i];
          int same = f64 ? !memcmp(&d[i], (double *)dec + i, 8) : !memcmp(&f[i], (float *)dec + i, 4);
          int is_fill = has_fill && (f64 ? d[i] == fill || (isnan(fill) && isnan(d[i]))
                                         : f[i] == (float)fill || (isnan(fill) && isnan(f[i])));
          n_fill += is_fill;
          fill_kept += is_fill && same;
          if (isnan(want) || is_fill) continue;
          double allowed = mode == 2 ? info.abs_bound * fabs(want) : info.abs_bound;
          bad += !(fabs(got - want) <= allowed);
        }
        CHECK(bad == 0, "%s: %zu values out of bound", text, bad);
        CHECK(fill_kept == n_fill, "%s: %zu of %zu fill values exact", text, fill_kept, n_fill);
        /* fill values are outliers, except +0.0, which bin 0 keeps */
        CHECK(fill == 0.0 ? info.n_outliers < n / 1000u : info.n_outliers >= n_fill,
              "%s: %u outliers for %zu fill values", text, info.n_outliers, n_fill);
        free(enc), free(dec), free(d), free(f);
      }
}

/* A real value within the bound of an in-range fill value must not decode
 * to exactly the fill value's bits (a mask by equality would flag it as
 * missing): it escapes too (spec.md §7). Fill 280 at abs=0.01 in data
 * 270..300 (a tester: 280.004 read back as 280.0), REL, and fill 1 under
 * PW_REL; float32 and float64; values at fill +- 0.1, 0.4 and 0.9 bounds
 * and the fill's neighbours one unit in the last place away. */
static void test_fill_near(void)
{
  static const struct {
    const char *spec;
    double fill, lo, hi, near; /* data in lo..hi; near: about the bound near the fill */
  } cases[] = {
      {"abs=0.01 fill=280", 280.0, 270.0, 300.0, 0.01},
      {"abs=0.01 fill=280.5", 280.5, 270.0, 300.0, 0.01},
      {"rel=1e-3 fill=280", 280.0, 270.0, 300.0, 0.01},
      {"pw_rel=1e-2 fill=1", 1.0, 0.9, 1.1, 0.01},
  };
  const size_t n = 20000;
  for (int f64 = 0; f64 < 2; f64++)
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
      char text[128];
      snprintf(text, sizeof text, "%s dtype=%s", cases[k].spec, f64 ? "f64" : "f32");
      h5fz_spec s;
      CHECK(h5fz_spec_parse(text, &s) == 0, "parse '%s': %s", text, h5fz_last_error());
      const double span = cases[k].hi - cases[k].lo;
      double fill = cases[k].fill;
      double *d = malloc(n * sizeof *d);
      float *f = malloc(n * sizeof *f);
      if (s.mode == H5FZ_MODE_REL) { /* REL: move the fill onto a reconstruction of the chunk's eb */
        for (size_t i = 0; i < n; i++) d[i] = cases[k].lo + span * (0.5 + 0.5 * sin(0.001 * (double)i));
        for (size_t i = 0; i < n; i++) f[i] = (float)d[i];
        void *probe = NULL;
        size_t pn = 0;
        h5fz_chunk_info pi;
        CHECK(h5fz_chunk_encode(&s, f64 ? (void *)d : (void *)f, n * (f64 ? 8u : 4u), &probe, &pn) == 0 &&
                  h5fz_chunk_inspect(probe, pn, &pi) == 0,
              "%s: probe: %s", text, h5fz_last_error());
        free(probe);
        double step = 2.0 * pi.abs_bound;
        fill = rint(fill / step) * step;
        if (!f64) fill = (float)fill;
        s.fill = fill;
      }
      static const double offsets[] = {0.1, -0.1, 0.4, -0.4, 0.9, -0.9};
      for (size_t i = 0; i < n; i++) {
        double x = cases[k].lo + span * (0.5 + 0.5 * sin(0.001 * (double)i));
        if (i % 50u == 7u) x = fill + offsets[(i / 50u) % 6u] * cases[k].near; /* near the fill */
        if (i % 331u == 11u) x = fill;
        d[i] = x;
        f[i] = (float)x;
        if (i % 50u == 29u) { /* the fill's neighbours in the element type */
          if (f64)
            d[i] = nextafter(fill, (i / 50u) % 2u ? 1e300 : -1e300);
          else
            f[i] = nextafterf((float)fill, (i / 50u) % 2u ? 1e30f : -1e30f);
        }
      }
      const void *in = f64 ? (const void *)d : (const void *)f;
      size_t bytes = n * (f64 ? 8u : 4u);
      void *enc = NULL, *dec = NULL;
      size_t en = 0, dn = 0;
      h5fz_chunk_info info;
      CHECK(h5fz_chunk_encode(&s, in, bytes, &enc, &en) == 0 && h5fz_chunk_inspect(enc, en, &info) == 0 &&
                h5fz_chunk_decode(enc, en, &dec, &dn) == 0 && dn == bytes,
            "%s: round trip: %s", text, h5fz_last_error());
      if (!dec) {
        free(enc), free(d), free(f);
        continue;
      }
      size_t bad = 0, masked = 0, real_near = 0, fills = 0, fills_kept = 0;
      for (size_t i = 0; i < n; i++) {
        double want = f64 ? d[i] : (double)f[i];
        double got = f64 ? ((double *)dec)[i] : (double)((float *)dec)[i];
        int is_fill = f64 ? d[i] == fill : f[i] == (float)fill;
        int reads_as_fill = f64 ? ((double *)dec)[i] == fill : ((float *)dec)[i] == (float)fill;
        fills += is_fill;
        fills_kept += is_fill && reads_as_fill;
        if (is_fill) continue;
        real_near += fabs(want - fill) <= cases[k].near;
        masked += reads_as_fill;
        double allowed = s.mode == H5FZ_MODE_PW_REL ? info.abs_bound * fabs(want) : info.abs_bound;
        bad += !(fabs(got - want) <= allowed);
      }
      CHECK(bad == 0, "%s: %zu values out of bound", text, bad);
      CHECK(fills_kept == fills && fills > 0, "%s: %zu of %zu fill values exact", text, fills_kept, fills);
      CHECK(masked == 0, "%s: %zu real values read back as the fill (%zu lie within %g of it)", text, masked, real_near,
            cases[k].near);
      free(enc), free(dec), free(d), free(f);
    }
}

/* ---- lorenzo_nd ----------------------------------------------------------- */

/* A Z x Y x X field that each predictor wins on: smooth along x only (D=1:
 * rows unrelated), smooth in the plane with planes unrelated (D=2), smooth in
 * 3-D at a tight bound (D=3); NaN, Inf, -0.0 and huge values sprinkled in. */
static float *lnd_field(int kind, uint32_t Z, uint32_t Y, uint32_t X)
{
  float *v = malloc((size_t)Z * Y * X * sizeof *v);
  for (uint32_t z = 0; z < Z; z++)
    for (uint32_t y = 0; y < Y; y++) {
      double row = 1000.0 * uniform(), plane = 1000.0 * (z % 7);
      for (uint32_t x = 0; x < X; x++) {
        double f;
        if (kind == 1)
          f = row + 0.01 * x;
        else if (kind == 2)
          f = plane + 3.0 * sin(0.05 * x + 0.07 * y) + 0.002 * x * y;
        else
          f = (100.0 + 10.0 * z) * sin(0.1 * x) * sin(0.1 * y) + 0.3 * x;
        size_t i = ((size_t)z * Y + y) * X + x;
        uint64_t r = rnd() % 500u;
        v[i] = r == 0 ? NAN : r == 1 ? INFINITY : r == 2 ? -0.0f : r == 3 ? 3e38f : (float)f;
      }
    }
  return v;
}

static int lnd_encode(const char *text, const void *in, size_t bytes, void **enc, size_t *en)
{
  h5fz_spec s;
  if (h5fz_spec_parse(text, &s)) return -1;
  return h5fz_chunk_encode(&s, in, bytes, enc, en);
}

static void fix_crc(unsigned char *c, size_t n)
{
  uLong crc = crc32(0L, Z_NULL, 0);
  crc = crc32(crc, c, (uInt)(n - 4));
  c[n - 4] = (unsigned char)crc;
  c[n - 3] = (unsigned char)(crc >> 8);
  c[n - 2] = (unsigned char)(crc >> 16);
  c[n - 1] = (unsigned char)(crc >> 24);
}

/* A size-table entry marked raw must hold its sub-chunk's L bytes: a coded
 * one of 32 bytes flipped to raw (checksum mended) is refused before any
 * executor reads 16384 bytes from it (the GPU's warp-fused decode would
 * have read past the payload). */
static void test_raw_entry_size(void)
{
  h5fz_spec s;
  h5fz_spec_parse("abs=1e-3 dtype=f32", &s);
  static float zeros[3 * 4096];
  void *enc = NULL, *dec = NULL;
  size_t en = 0, dn = 0;
  CHECK(h5fz_chunk_encode(&s, zeros, sizeof zeros, &enc, &en) == 0, "encode zeros: %s", h5fz_last_error());
  if (!enc) return;
  unsigned char *c = malloc(en);
  memcpy(c, enc, en);
  uint32_t e0 = (uint32_t)c[80] | (uint32_t)c[81] << 8 | (uint32_t)c[82] << 16 | (uint32_t)c[83] << 24;
  CHECK(!(e0 & 0x80000000u) && e0 < 16384u, "sub-chunk 0 of zeros is coded (entry %#x)", e0);
  c[83] ^= 0x80; /* the raw bit */
  fix_crc(c, en);
  CHECK(h5fz_chunk_decode(c, en, &dec, &dn) == H5FZ_ERR_CORRUPT && strstr(h5fz_last_error(), "raw sub-chunk 0 holds"),
        "a raw entry of %u bytes must be refused: %s", e0, h5fz_last_error());
  free(dec);
  free(c);
  free(enc);
}

static void test_lorenzo_nd(void)
{
  /* the type check: right after quant, once */
  h5fz_spec t;
  CHECK(h5fz_spec_parse("abs=1e-3 zigzag lorenzo_nd bitshuffle rze", &t) == H5FZ_ERR_SPEC, "lorenzo_nd after zigzag");
  CHECK(strstr(h5fz_last_error(), "right after quant") != NULL, "placement message: %s", h5fz_last_error());
  CHECK(h5fz_spec_parse("abs=1e-3 lorenzo_nd lorenzo_nd rze", &t) == H5FZ_ERR_SPEC, "lorenzo_nd twice");
  CHECK(h5fz_spec_parse("abs=1e-3 delta lorenzo_nd rze", &t) == H5FZ_ERR_SPEC, "lorenzo_nd after delta");
  CHECK(h5fz_spec_parse("abs=1e-3 lorenzo_nd bitshuffle rze", &t) == 0 && t.ops[1] == H5FZ_OP_LORENZO_ND &&
            !strcmp(h5fz_op_name(15), "lorenzo_nd"),
        "lorenzo_nd parses: %s", h5fz_last_error());
  /* each predictor is chosen where it wins, and every value comes back */
  static const uint32_t Z = 12, Y = 40, X = 50;
  for (int kind = 1; kind <= 3; kind++) {
    float *v = lnd_field(kind, Z, Y, X);
    size_t bytes = (size_t)Z * Y * X * sizeof *v;
    double eb = kind == 3 ? 1e-3 : 1e-2;
    char text[200], what[240];
    snprintf(text, sizeof text, "abs=%g lorenzo_nd zigzag bitshuffle rze dtype=f32 dims=%ux%ux%u subchunk=1024", eb, Z,
             Y, X);
    snprintf(what, sizeof what, "[%s field %d]", text, kind);
    void *enc = NULL, *enc1 = NULL, *dec = NULL;
    size_t en = 0, en1 = 0, dn = 0;
    h5fz_chunk_info info;
    CHECK(lnd_encode(text, v, bytes, &enc, &en) == 0, "%s: encode: %s", what, h5fz_last_error());
    CHECK(h5fz_chunk_inspect(enc, en, &info) == 0 && !info.stored_raw && info.predictor == (uint32_t)kind,
          "%s: predictor %u, want %d", what, info.predictor, kind);
    CHECK(h5fz_chunk_decode(enc, en, &dec, &dn) == 0 && dn == bytes, "%s: decode: %s", what, h5fz_last_error());
    if (dec) check_values(v, dec, bytes / 4, 0, eb, what);
    /* the same bytes whatever the CPU thread count */
    setenv("H5FZ_THREADS", "1", 1);
    h5fz_settings_reload(); /* H5FZ_THREADS is read once per process */
    CHECK(lnd_encode(text, v, bytes, &enc1, &en1) == 0 && en1 == en && !memcmp(enc, enc1, en),
          "%s: other bytes with one thread", what);
    setenv("H5FZ_THREADS", "3", 1);
    h5fz_settings_reload();
    free(enc1);
    enc1 = NULL;
    CHECK(lnd_encode(text, v, bytes, &enc1, &en1) == 0 && en1 == en && !memcmp(enc, enc1, en),
          "%s: other bytes with three threads", what);
    unsetenv("H5FZ_THREADS");
    h5fz_settings_reload();
    /* header byte 35 is checked: 0, and above what the rank allows, are corrupt */
    unsigned char *c = malloc(en);
    static const unsigned char bad_pred[] = {0, 4, 255};
    for (size_t b = 0; b < sizeof bad_pred; b++) {
      memcpy(c, enc, en);
      c[35] = bad_pred[b];
      fix_crc(c, en);
      void *d2 = NULL;
      size_t n2 = 0;
      CHECK(h5fz_chunk_decode(c, en, &d2, &n2) == H5FZ_ERR_CORRUPT, "%s: predictor byte %u accepted", what,
            bad_pred[b]);
      free(d2);
    }
    memcpy(c, enc, en);
    c[34] = 2; /* rank 2: predictor 3 is too high */
    fix_crc(c, en);
    void *d3 = NULL;
    size_t n3 = 0;
    int rc3 = h5fz_chunk_decode(c, en, &d3, &n3);
    CHECK(kind == 3 ? rc3 == H5FZ_ERR_CORRUPT : rc3 == 0, "%s: rank 2 header with predictor %d: %d", what, kind, rc3);
    free(d3);
    free(c);
    free(enc);
    free(enc1);
    free(dec);
    free(v);
  }
  /* REL: the chunk's own bound, fill values left out of the range, every
   * value checked against the bound in the header */
  {
    float *v = lnd_field(3, Z, Y, X);
    size_t bytes = (size_t)Z * Y * X * sizeof *v;
    for (size_t i = 0; i < bytes / 4; i++)
      if (isfinite(v[i]) && fabsf(v[i]) > 1e6f) v[i] = 1.0f;    /* keep NaN, Inf, -0.0; no huge range */
    for (size_t i = 0; i < (size_t)Y * X; i++) v[i] = -9999.0f; /* a plane of fill */
    char text[160];
    snprintf(text, sizeof text, "rel=1e-5 lorenzo_nd zigzag bitshuffle rze dtype=f32 dims=%ux%ux%u fill=-9999", Z, Y,
             X);
    void *e = NULL, *dd = NULL;
    size_t en2 = 0, dn2 = 0;
    h5fz_chunk_info info;
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < bytes / 4; i++)
      if (isfinite(v[i]) && v[i] != -9999.0f) {
        if (v[i] < lo) lo = v[i];
        if (v[i] > hi) hi = v[i];
      }
    CHECK(lnd_encode(text, v, bytes, &e, &en2) == 0 && h5fz_chunk_inspect(e, en2, &info) == 0 &&
              info.abs_bound == h5fz_rel_abs_bound(1e-5, lo, hi, H5FZ_DTYPE_F32) &&
              h5fz_chunk_decode(e, en2, &dd, &dn2) == 0,
          "%s: %s (bound %g, range %g)", text, h5fz_last_error(), info.abs_bound, hi - lo);
    if (dd) check_values(v, dd, bytes / 4, 0, info.abs_bound, text);
    free(e);
    free(dd);
    free(v);
  }
  /* a chain without lorenzo_nd must have byte 35 = 0 */
  float w[1000];
  for (int i = 0; i < 1000; i++) w[i] = (float)sin(i * 0.01);
  void *enc = NULL, *dec = NULL;
  size_t en = 0, dn = 0;
  CHECK(lnd_encode("abs=1e-3 dtype=f32", w, sizeof w, &enc, &en) == 0, "default encode");
  ((unsigned char *)enc)[35] = 1;
  fix_crc(enc, en);
  CHECK(h5fz_chunk_decode(enc, en, &dec, &dn) == H5FZ_ERR_CORRUPT, "predictor byte on a chain without lorenzo_nd");
  free(enc);
  free(dec);
  /* a chunk whose dims say nothing useful (a 0 dim, dims larger than the
   * chunk) decodes, and a 1-element chunk */
  static const char *odd[] = {"abs=1e-3 lorenzo_nd zigzag bitshuffle rze dtype=f32 dims=1000000x3",
                              "abs=1e-3 lorenzo_nd zigzag bitshuffle rze dtype=f32 dims=1x1x1x1",
                              "abs=1e-3 lorenzo_nd zigzag bitshuffle rze dtype=f32 dims=7x1000000x999999"};
  for (size_t k = 0; k < sizeof odd / sizeof *odd; k++)
    for (size_t n = 1; n <= 1000; n = n * 10 - 1) {
      enc = dec = NULL;
      CHECK(lnd_encode(odd[k], w, n * 4, &enc, &en) == 0 && h5fz_chunk_decode(enc, en, &dec, &dn) == 0 && dn == n * 4,
            "%s n=%zu: %s", odd[k], n, h5fz_last_error());
      if (dec) check_values(w, dec, n, 0, 1e-3, odd[k]);
      free(enc);
      free(dec);
    }
}

/* Every op's row has the CPU forms of its kind, the one way the CPU chain
 * reaches an op (op_cpu_transform.h, op_cpu_coder.h): a transform both
 * directions (lorenzo_nd and lorenzo_interp forward only: their inverse is chunk-wide), a
 * coder both or neither (raw), and a fused pair names a transform. */
static void test_op_table_cpu_forms(void)
{
  size_t count;
  const h5fz_op_info *ops = h5fz_op_table(&count);
  for (size_t i = 0; i < count; i++) {
    const h5fz_op_info *op = &ops[i];
    if (op->kind == H5FZ_KIND_TRANSFORM) {
      CHECK(op->cpu_transform && op->cpu_transform->forward, "%s: no CPU forward form", op->name);
      int chunk_wide = op->id == H5FZ_OP_LORENZO_ND || op->id == h5fz_op_id_of("lorenzo_interp");
      CHECK(op->cpu_transform && (op->cpu_transform->inverse != NULL) == !chunk_wide,
            "%s: CPU inverse form", op->name);
      for (const h5fz_cpu_fusion *f = op->cpu_fused; f && f->next; f++) {
        const h5fz_op_info *next = h5fz_op_lookup(f->next);
        CHECK(next && next->kind == H5FZ_KIND_TRANSFORM && f->forms && f->forms->forward && f->forms->inverse,
              "%s: fused with op %u, not a transform with both forms", op->name, f->next);
      }
    } else {
      CHECK(!op->cpu_transform && !op->cpu_fused, "%s: transform forms on a %s", op->name,
            op->kind == H5FZ_KIND_MAP ? "map" : "coder");
      CHECK((op->cpu_encode == NULL) == (op->cpu_decode == NULL), "%s: one coder form of two", op->name);
    }
  }
}

/* The op table defines the ops and their ids (h5fz_optable.c): every id is
 * one byte of the header's op list, not 0, and names one op; names are
 * unique; and the public constants of h5fz.h, frozen when the table became
 * the definition, still name the ops they always did (the ids are in every
 * chunk written, docs/format.md §5.1). */
static void test_op_table_ids(void)
{
  static const struct {
    unsigned id;
    const char *name;
  } frozen[] = {{H5FZ_OP_QUANT, "quant"},         {H5FZ_OP_DELTA, "delta"},
                {H5FZ_OP_ZIGZAG, "zigzag"},       {H5FZ_OP_NEGABINARY, "negabinary"},
                {H5FZ_OP_BITSHUFFLE, "bitshuffle"}, {H5FZ_OP_LORENZO, "lorenzo"},
                {H5FZ_OP_LORENZO_ND, "lorenzo_nd"}, {H5FZ_OP_RZE, "rze"},
                {H5FZ_OP_RAW, "raw"},             {H5FZ_OP_BITPACK, "bitpack"},
                {H5FZ_OP_HUFF, "huff"},           {H5FZ_OP_HUFFCTX, "huffctx"}};
  size_t count;
  const h5fz_op_info *ops = h5fz_op_table(&count);
  for (size_t i = 0; i < count; i++) {
    CHECK(ops[i].id > 0 && ops[i].id <= 255, "%s: id %u is not one byte > 0", ops[i].name, ops[i].id);
    for (size_t j = 0; j < i; j++) {
      CHECK(ops[i].id != ops[j].id, "%s and %s share id %u", ops[i].name, ops[j].name, ops[i].id);
      CHECK(strcmp(ops[i].name, ops[j].name) != 0, "two rows are named %s", ops[i].name);
    }
    CHECK(h5fz_op_id_of(ops[i].name) == ops[i].id, "%s: h5fz_op_id_of", ops[i].name);
  }
  for (size_t k = 0; k < sizeof frozen / sizeof frozen[0]; k++) {
    const char *name = h5fz_op_name(frozen[k].id);
    CHECK(name && !strcmp(name, frozen[k].name), "constant %u is %s, not %s", frozen[k].id, name ? name : "no op",
          frozen[k].name);
  }
  CHECK(h5fz_op_id_of("no-such-op") == H5FZ_OP_NONE && h5fz_op_id_of(NULL) == H5FZ_OP_NONE, "unknown names");
  /* the newest readable version comes from the rows (lorenzo_interp's 5 today): a
   * new op's since_version raises it without another file */
  unsigned newest = 2u;
  for (size_t i = 0; i < count; i++) newest = ops[i].since_version > newest ? ops[i].since_version : newest;
  CHECK(h5fz_newest_format_version() == newest && newest == 5u, "newest format version %u, rows say %u",
        h5fz_newest_format_version(), newest);
}

int main(void)
{
  static const char *chains[] = {
      "", "delta zigzag bitshuffle rze", "delta negabinary bitshuffle rze", "zigzag rze", "bitshuffle rze",
      "delta zigzag raw", "raw", "delta delta zigzag bitshuffle rze", "delta zigzag bitpack", "bitpack",
      "lorenzo zigzag bitshuffle rze", "lorenzo negabinary bitshuffle rze dims=7x13", "lorenzo zigzag rze dims=3x100",
      "lorenzo zigzag bitshuffle rze dims=5x4x4096",
      /* lorenzo_nd: rank 0 and 1 (1-D), 2, 3, 4; dims that do not match the
                                  * element count or the sub-chunk */
      "lorenzo_nd zigzag bitshuffle rze", "lorenzo_nd zigzag bitshuffle rze dims=100000",
      "lorenzo_nd negabinary bitshuffle rze dims=7x13", "lorenzo_nd zigzag rze dims=3x100",
      "lorenzo_nd zigzag bitshuffle rze dims=5x4x4096", "lorenzo_nd zigzag bitpack dims=9x11x13",
      "lorenzo_nd zigzag bitshuffle rze dims=2x3x5x7 subchunk=512", "lorenzo_nd raw dims=4x4x4"};
  static const size_t sizes[] = {1, 63, 64, 65, 4095, 4096, 4097, 100000};
  test_spec_forms();
  test_op_table_cpu_forms();
  test_op_table_ids();
  for (size_t c = 0; c < sizeof chains / sizeof *chains; c++)
    for (int f64 = 0; f64 < 2; f64++)
      for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++)
        for (int g = 0; g <= GEN_NAN_RUNS; g++)
          roundtrip(chains[c], f64, sizes[z], (gen_kind)g, g == GEN_HUGE_TINY ? 1e20 : 1e-3, z % 3 == 1 ? 3 : 0);
  for (double eb = 1e-7; eb < 10; eb *= 10) roundtrip("", 0, 50000, GEN_SMOOTH, eb, 0);
  roundtrip("", 1, 50000, GEN_SMOOTH, 1e-12, 0);
  test_corruption();
  test_decode_for();
  test_env_int();
  test_rel_ignores_fill();
  test_fill_exact();
  test_missing_forms();
  test_fill_near();
  for (int f64 = 0; f64 < 2; f64++)
    for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++)
      for (int g = 0; g <= GEN_NAN_RUNS; g++) {
        roundtrip_mode("lossless", H5FZ_MODE_LOSSLESS, 0, f64, sizes[z], (gen_kind)g);
        roundtrip_mode("lossless delta negabinary bitshuffle rze", H5FZ_MODE_LOSSLESS, 0, f64, sizes[z], (gen_kind)g);
        roundtrip_mode("pw_rel=1e-3", H5FZ_MODE_PW_REL, 1e-3, f64, sizes[z], (gen_kind)g);
        roundtrip_mode("pw_rel=1e-6", H5FZ_MODE_PW_REL, 1e-6, f64, sizes[z], (gen_kind)g);
        roundtrip_mode("lossless lorenzo_nd zigzag bitshuffle rze dims=3x7x11", H5FZ_MODE_LOSSLESS, 0, f64, sizes[z],
                       (gen_kind)g);
        roundtrip_mode("pw_rel=1e-3 lorenzo_nd zigzag bitshuffle rze dims=10x10", H5FZ_MODE_PW_REL, 1e-3, f64, sizes[z],
                       (gen_kind)g);
        roundtrip_mode("pw_rel=1e-5 lorenzo_nd negabinary bitpack dims=5x6x7x8", H5FZ_MODE_PW_REL, 1e-5, f64, sizes[z],
                       (gen_kind)g);
      }
  test_lorenzo_nd();
  test_raw_entry_size();
  if (failures)
    fprintf(stderr, "%d checks failed\n", failures);
  else
    printf("all core checks passed\n");
  return failures ? 1 : 0;
}
