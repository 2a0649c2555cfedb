/*
 * test_modes.c - the mode table (fusion/format/h5fz_modes.c) as its readers
 * see it: every row's name parses, formats and round-trips through
 * cd_values and a chunk; the element check's rules, the same in every
 * mode for NaN and Inf; which chunks keep which dataset's promise; an
 * unknown number refused everywhere with the table's names.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core_check.h"
#include "h5fz.h"

static double nan_with_payload(uint64_t payload)
{
  uint64_t u = 0x7ff8000000000000ull | (payload & 0x0007ffffffffffffull);
  double d;
  memcpy(&d, &u, sizeof d);
  return d;
}

static size_t mode_count(void)
{
  h5fz_mode_info m;
  size_t n = 0;
  while (h5fz_mode_at(n, &m) == H5FZ_OK) n++;
  return n;
}

/* Each row: name, number, spec text, canonical text, cd_values, a chunk
 * coded and decoded with every element within the bound. */
static void check_row(size_t i)
{
  h5fz_mode_info m, g;
  CHECK(h5fz_mode_at(i, &m) == H5FZ_OK, "entry %zu", i);
  CHECK(m.name && m.name[0] && m.promise && m.promise[0], "entry %zu has a name and a promise", i);
  CHECK(h5fz_mode_get((unsigned)m.mode, &g) == H5FZ_OK && g.name == m.name, "%s: h5fz_mode_get", m.name);
  CHECK(h5fz_mode_name((unsigned)m.mode) == m.name, "%s: h5fz_mode_name", m.name);
  char text[96], canon[256];
  if (m.takes_bound)
    snprintf(text, sizeof text, "%s=0.01 dtype=f32", m.name);
  else
    snprintf(text, sizeof text, "%s dtype=f32", m.name);
  h5fz_spec spec, back;
  CHECK(h5fz_spec_parse(text, &spec) == H5FZ_OK, "%s: '%s' parses: %s", m.name, text, h5fz_last_error());
  CHECK(spec.mode == m.mode && spec.bound == (m.takes_bound ? 0.01 : 0.0), "%s: mode and bound", m.name);
  CHECK(h5fz_spec_format(&spec, canon, sizeof canon) == H5FZ_OK && !strncmp(canon, text, strcspn(text, " ")) &&
            canon[strcspn(text, " ")] == ' ',
        "%s: canonical '%s' starts with the mode's word of '%s'", m.name, canon, text);
  unsigned cd[H5FZ_CD_MAX];
  size_t n_cd = 0;
  CHECK(h5fz_spec_to_cd_values(&spec, 1, cd, H5FZ_CD_MAX, &n_cd) == H5FZ_OK &&
            h5fz_spec_from_cd_values(cd, n_cd, &back, NULL) == H5FZ_OK && back.mode == m.mode &&
            back.bound == spec.bound,
        "%s: cd_values round trip", m.name);
  /* a chunk with every kind of value the rules name */
  enum { N = 4096 };
  float *in = malloc(N * sizeof *in);
  uint32_t bits = 0x7fc01234u; /* a NaN with a payload */
  for (int k = 0; k < N; k++) in[k] = (float)sin(k * 0.01) * 10.0f + (float)(rnd() % 1000) * 1e-3f;
  in[1] = 0.0f;
  in[2] = -0.0f;
  in[3] = INFINITY;
  in[4] = -INFINITY;
  memcpy(&in[5], &bits, 4);
  void *enc = NULL, *dec = NULL;
  size_t enc_n = 0, dec_n = 0;
  CHECK(h5fz_chunk_encode(&spec, in, N * sizeof *in, &enc, &enc_n) == H5FZ_OK &&
            h5fz_chunk_decode(enc, enc_n, &dec, &dec_n) == H5FZ_OK && dec_n == N * sizeof *in,
        "%s: chunk round trip: %s", m.name, h5fz_last_error());
  h5fz_chunk_info info;
  CHECK(enc && h5fz_chunk_inspect(enc, enc_n, &info) == H5FZ_OK && info.mode == m.mode, "%s: the header's mode",
        m.name);
  double lo = INFINITY, hi = -INFINITY;
  for (int k = 0; k < N; k++)
    if (isfinite(in[k])) lo = fmin(lo, in[k]), hi = fmax(hi, in[k]);
  double bound = m.range_relative ? spec.bound * (hi - lo) : spec.bound, worst = 0.0;
  for (int k = 0; dec && k < N; k++) {
    double e = h5fz_element_error((unsigned)m.mode, in[k], ((const float *)dec)[k]);
    if (!(e <= worst)) worst = e;
  }
  CHECK(worst <= bound, "%s: largest element error %g, bound %g", m.name, worst, bound);
  free(in);
  free(enc);
  free(dec);
}

/* The rules every mode shares, and each mode's own. */
static void check_element_rules(size_t count)
{
  const double nan1 = nan_with_payload(1), nan2 = nan_with_payload(0x5a5a5);
  for (size_t i = 0; i < count; i++) {
    h5fz_mode_info m;
    h5fz_mode_at(i, &m);
    unsigned id = (unsigned)m.mode;
    CHECK(h5fz_element_error(id, nan1, nan2) == 0.0, "%s: a NaN back as another NaN is no error", m.name);
    CHECK(h5fz_element_error(id, nan1, 1.0) == INFINITY, "%s: a NaN back as a number", m.name);
    CHECK(h5fz_element_error(id, INFINITY, INFINITY) == 0.0, "%s: an infinity back as itself", m.name);
    CHECK(h5fz_element_error(id, INFINITY, -INFINITY) == INFINITY, "%s: an infinity back with the other sign", m.name);
    CHECK(h5fz_element_error(id, -INFINITY, 1e300) == INFINITY, "%s: an infinity back as a number", m.name);
    CHECK(h5fz_element_error(id, 1.0, nan1) == INFINITY, "%s: a number back as a NaN", m.name);
    CHECK(h5fz_element_error(id, 1.0, INFINITY) == INFINITY, "%s: a number back as an infinity", m.name);
    CHECK(h5fz_element_error(id, 3.5, 3.5) == 0.0, "%s: equal values", m.name);
  }
  CHECK(h5fz_element_error(H5FZ_MODE_ABS, 1.0, 1.5) == 0.5, "abs: |x - x'|");
  CHECK(h5fz_element_error(H5FZ_MODE_REL, -2.0, -1.0) == 1.0, "rel: |x - x'| (the caller scales the bound)");
  CHECK(fabs(h5fz_element_error(H5FZ_MODE_PW_REL, 2.0, 2.2) - 0.1) < 1e-12, "pw_rel: |x - x'| / |x|");
  CHECK(h5fz_element_error(H5FZ_MODE_PW_REL, 2.0, -2.0) == INFINITY, "pw_rel: a sign flipped");
  CHECK(h5fz_element_error(H5FZ_MODE_PW_REL, 0.0, -0.0) == INFINITY, "pw_rel: a zero back as the other zero");
  CHECK(h5fz_element_error(H5FZ_MODE_PW_REL, 0.0, 1e-300) == INFINITY, "pw_rel: a zero back as a number");
  CHECK(h5fz_element_error(H5FZ_MODE_LOSSLESS, 0.0, -0.0) == INFINITY, "lossless: the bits of a zero");
  CHECK(h5fz_element_error(H5FZ_MODE_LOSSLESS, 1.0, nextafter(1.0, 2.0)) == INFINITY, "lossless: one ulp");
  CHECK(isnan(h5fz_element_error((unsigned)count, 1.0, 1.0)), "an unknown mode: NaN, which fails every bound");
}

/* Which chunk (mode, header bound) keeps which dataset's promise. */
static void check_compatibility(void)
{
  static const struct {
    h5fz_mode dataset;
    double bound;
    h5fz_mode chunk;
    double chunk_bound;
    int keeps;
  } cases[] = {
      {H5FZ_MODE_ABS, 0.1, H5FZ_MODE_ABS, 0.05, 1},       {H5FZ_MODE_ABS, 0.1, H5FZ_MODE_ABS, 0.2, 0},
      {H5FZ_MODE_ABS, 0.1, H5FZ_MODE_REL, 0.05, 1},       {H5FZ_MODE_ABS, 0.1, H5FZ_MODE_REL, 0.2, 0},
      {H5FZ_MODE_ABS, 0.1, H5FZ_MODE_PW_REL, 0.01, 0},    {H5FZ_MODE_ABS, 0.1, H5FZ_MODE_LOSSLESS, 0.0, 1},
      {H5FZ_MODE_REL, 1e-3, H5FZ_MODE_ABS, 5.0, 1},       {H5FZ_MODE_REL, 1e-3, H5FZ_MODE_REL, 5.0, 1},
      {H5FZ_MODE_REL, 1e-3, H5FZ_MODE_PW_REL, 1e-4, 0},   {H5FZ_MODE_PW_REL, 0.1, H5FZ_MODE_PW_REL, 0.05, 1},
      {H5FZ_MODE_PW_REL, 0.1, H5FZ_MODE_PW_REL, 0.2, 0},  {H5FZ_MODE_PW_REL, 0.1, H5FZ_MODE_ABS, 0.01, 0},
      {H5FZ_MODE_PW_REL, 0.1, H5FZ_MODE_LOSSLESS, 0, 1},  {H5FZ_MODE_LOSSLESS, 0, H5FZ_MODE_ABS, 1e-9, 0},
      {H5FZ_MODE_LOSSLESS, 0, H5FZ_MODE_PW_REL, 1e-9, 0}, {H5FZ_MODE_LOSSLESS, 0, H5FZ_MODE_LOSSLESS, 0, 1},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    h5fz_spec want;
    h5fz_chunk_info info;
    h5fz_spec_default(&want);
    want.mode = cases[i].dataset;
    want.bound = cases[i].bound;
    memset(&info, 0, sizeof info);
    info.mode = cases[i].chunk;
    info.abs_bound = cases[i].chunk_bound;
    int rc = h5fz_chunk_info_check_spec(&info, &want);
    CHECK((rc == H5FZ_OK) == cases[i].keeps, "case %zu: dataset %s %g, chunk %s %g: want %s, got %s", i,
          h5fz_mode_name(cases[i].dataset), cases[i].bound, h5fz_mode_name(cases[i].chunk), cases[i].chunk_bound,
          cases[i].keeps ? "kept" : "refused", rc == H5FZ_OK ? "kept" : h5fz_last_error());
    info.stored_raw = 1;
    CHECK(h5fz_chunk_info_check_spec(&info, &want) == H5FZ_OK, "case %zu: a chunk stored raw keeps every promise", i);
  }
}

/* A number no row has: refused by the spec and named in messages by the
 * table's words. */
static void check_unknown(size_t count)
{
  h5fz_spec spec;
  h5fz_mode_info m;
  CHECK(h5fz_mode_at(count, &m) == H5FZ_ERR_ARG, "entry past the end");
  CHECK(h5fz_mode_get((unsigned)count, &m) == H5FZ_ERR_ARG && !h5fz_mode_name((unsigned)count), "unknown number");
  h5fz_spec_default(&spec);
  spec.mode = (h5fz_mode)count;
  CHECK(h5fz_spec_validate(&spec) == H5FZ_ERR_SPEC && strstr(h5fz_last_error(), "unknown error-bound mode"),
        "unknown mode refused: %s", h5fz_last_error());
  char text[64];
  CHECK(h5fz_spec_format(&spec, text, sizeof text) == H5FZ_ERR_ARG, "no text for an unknown mode");
  CHECK(h5fz_spec_parse("x=1", &spec) == H5FZ_ERR_SPEC, "unknown setting");
  const char *why = h5fz_last_error();
  for (size_t i = 0; i < count; i++) {
    h5fz_mode_at(i, &m);
    CHECK(strstr(why, m.name) != NULL, "the unknown-setting message names %s: %s", m.name, why);
  }
}

int main(void)
{
  size_t count = mode_count();
  CHECK(count >= 4, "the table has abs, rel, pw_rel and lossless (%zu rows)", count);
  for (size_t i = 0; i < count; i++) check_row(i);
  check_element_rules(count);
  check_compatibility();
  check_unknown(count);
  printf("test_modes: %ld checks, %d failures (%zu modes)\n", checks, failures, count);
  return failures ? 1 : 0;
}
