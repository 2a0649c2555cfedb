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

#include "h5fz.h"

static int failures;
#define CHECK(cond, ...)                                      \
  do {                                                        \
    if (!(cond)) {                                            \
      failures++;                                             \
      fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);    \
      fprintf(stderr, __VA_ARGS__);                           \
      fprintf(stderr, "\n");                                  \
    }                                                         \
  } while (0)

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next_u64(void)
{
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}
static double uniform(void) { return (double)(next_u64() >> 11) * 0x1p-53; }

typedef enum { GEN_SMOOTH, GEN_RANDOM_BITS, GEN_CONSTANT, GEN_HUGE_TINY, GEN_SPECIALS, GEN_NAN_RUNS } gen_kind;

static void fill(double *v, size_t n, gen_kind g)
{
  for (size_t i = 0; i < n; i++) {
    switch (g) {
    case GEN_SMOOTH: v[i] = 20.0 + 0.07 * sin(i * 0.01) + 1e-3 * uniform(); break;
    case GEN_RANDOM_BITS: { uint64_t b = next_u64(); memcpy(&v[i], &b, 8); } break;
    case GEN_CONSTANT: v[i] = 3.25; break;
    case GEN_HUGE_TINY: v[i] = (i & 1) ? 1e30 * uniform() : 1e-30 * uniform(); break;
    case GEN_SPECIALS: {
      static const double s[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 1e-310, -1e-310, 3.4e38, -3.4e38, 1.0};
      v[i] = s[next_u64() % 10];
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
    if (isfinite(x) && !(x == 0 && signbit(x))) ok = fabs(x - y) <= eb;
    else ok = !memcmp((const char *)orig + i * (f64 ? 8 : 4), (const char *)back + i * (f64 ? 8 : 4), f64 ? 8 : 4);
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
    if (f64) memcpy(in + i * 8, &d[i], 8);
    else { float f = (float)d[i]; memcpy(in + i * 4, &f, 4); }
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
  free(enc); free(dec); free(in); free(d);
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
    if (f64) memcpy(in + i * 8, &d[i], 8);
    else { float f = (float)d[i]; memcpy(in + i * 4, &f, 4); }
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
  free(enc); free(dec); free(in); free(d);
}

static void test_spec_forms(void)
{
  h5fz_spec s, t;
  CHECK(h5fz_spec_parse("abs=1e-3", &s) == 0, "parse abs: %s", h5fz_last_error());
  CHECK(s.mode == H5FZ_MODE_ABS && s.bound == 1e-3 && s.n_ops == 5, "abs alone = default chain");
  unsigned cd[H5FZ_CD_MAX];
  size_t n;
  s.dtype = H5FZ_DTYPE_F64; s.rank = 3; s.dims[0] = 5; s.dims[1] = 6; s.dims[2] = 7;
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
  CHECK(h5fz_spec_parse("abs=1e-3 -> delta -> negabinary -> bitshuffle -> rze subchunk=8192", &t) == 0,
        "arrow form: %s", h5fz_last_error());
  char buf[256];
  CHECK(h5fz_spec_format(&t, buf, sizeof buf) == 0 && !strcmp(buf, "abs=0.001 quant delta negabinary bitshuffle rze subchunk=8192"),
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
    if (rc == 0) { undetected++; free(dec); }
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
  free(c);
  free(enc);
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
        t.has_fill && t.fill == 0.0, "fill through cd_values: %s", h5fz_last_error());
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

int main(void)
{
  static const char *chains[] = {"", "delta zigzag bitshuffle rze", "delta negabinary bitshuffle rze",
                                 "zigzag rze", "bitshuffle rze", "delta zigzag raw", "raw",
                                 "delta delta zigzag bitshuffle rze", "delta zigzag bitpack", "bitpack", "lorenzo zigzag bitshuffle rze",
                                 "lorenzo negabinary bitshuffle rze dims=7x13", "lorenzo zigzag rze dims=3x100",
                                 "lorenzo zigzag bitshuffle rze dims=5x4x4096"};
  static const size_t sizes[] = {1, 63, 64, 65, 4095, 4096, 4097, 100000};
  test_spec_forms();
  for (size_t c = 0; c < sizeof chains / sizeof *chains; c++)
    for (int f64 = 0; f64 < 2; f64++)
      for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++)
        for (int g = 0; g <= GEN_NAN_RUNS; g++)
          roundtrip(chains[c], f64, sizes[z], (gen_kind)g, g == GEN_HUGE_TINY ? 1e20 : 1e-3, z % 3 == 1 ? 3 : 0);
  for (double eb = 1e-7; eb < 10; eb *= 10) roundtrip("", 0, 50000, GEN_SMOOTH, eb, 0);
  roundtrip("", 1, 50000, GEN_SMOOTH, 1e-12, 0);
  test_corruption();
  test_rel_ignores_fill();
  for (int f64 = 0; f64 < 2; f64++)
    for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++)
      for (int g = 0; g <= GEN_NAN_RUNS; g++) {
        roundtrip_mode("lossless", H5FZ_MODE_LOSSLESS, 0, f64, sizes[z], (gen_kind)g);
        roundtrip_mode("lossless delta negabinary bitshuffle rze", H5FZ_MODE_LOSSLESS, 0, f64, sizes[z], (gen_kind)g);
        roundtrip_mode("pw_rel=1e-3", H5FZ_MODE_PW_REL, 1e-3, f64, sizes[z], (gen_kind)g);
        roundtrip_mode("pw_rel=1e-6", H5FZ_MODE_PW_REL, 1e-6, f64, sizes[z], (gen_kind)g);
      }
  if (failures) fprintf(stderr, "%d checks failed\n", failures);
  else printf("all core checks passed\n");
  return failures ? 1 : 0;
}
