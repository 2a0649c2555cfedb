/*
 * Wrong cd_values make H5Dcreate fail in set_local with a message that says
 * what is wrong. The words are built from a valid spec and then damaged,
 * following the layout of docs/spec.md: version, mode, bound (low, high
 * word), sub-chunk bytes, op count, op ids; then the dataset part.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "filter_test_util.h"

#define CAP 128
#define W_VERSION 0
#define W_MODE 1
#define W_BOUND 2
#define W_SUBCHUNK 4
#define W_NOPS 5
#define W_OPS 6

typedef struct {
  unsigned cd[CAP];
  size_t n;
} words;

static words base(void)
{
  words w;
  memset(&w, 0, sizeof w);
  w.n = ft_cd_from_text("abs=1e-3 delta zigzag bitshuffle rze", w.cd);
  return w;
}

static words with_bound(double b)
{
  words w = base();
  uint64_t u;
  memcpy(&u, &b, sizeof u);
  w.cd[W_BOUND] = (unsigned)(u & 0xffffffffu);
  w.cd[W_BOUND + 1] = (unsigned)(u >> 32);
  return w;
}

/* Create a float dataset with these words (mandatory filter); expect
 * failure with "h5fz:" and every expect[] text on the error stack. */
static void expect_refused(hid_t f, const char *what, const words *w, const char *expect)
{
  static int serial = 0;
  char name[32];
  snprintf(name, sizeof name, "d%d", serial++);
  hsize_t dims[2] = {40, 40}, chunk[2] = {16, 16};
  hid_t space = H5Screate_simple(2, dims, NULL);
  hid_t dcpl = ft_dcpl(2, chunk, H5Z_FLAG_MANDATORY, w->n, w->cd, 0);
  hid_t d = H5Dcreate2(f, name, H5T_IEEE_F32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  char stack[4096];
  ft_error_stack(stack, sizeof stack);
  FT_CHECK(d < 0, "%s: H5Dcreate2 succeeded", what);
  FT_CHECK(ft_contains(stack, "h5fz:"), "%s: no h5fz message: %s", what, stack);
  FT_CHECK(ft_contains(stack, expect), "%s: message lacks \"%s\": %s", what, expect, stack);
  printf("%-24s -> %s\n", what, ft_ours(stack));
  if (d >= 0) H5Dclose(d);
  H5Pclose(dcpl);
  H5Sclose(space);
}

static void expect_accepted(hid_t f, const char *what, const words *w)
{
  hsize_t dims[2] = {40, 40}, chunk[2] = {16, 16};
  hid_t space = H5Screate_simple(2, dims, NULL);
  hid_t dcpl = ft_dcpl(2, chunk, H5Z_FLAG_MANDATORY, w->n, w->cd, 0);
  hid_t d = H5Dcreate2(f, what, H5T_IEEE_F32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  char stack[4096];
  ft_error_stack(stack, sizeof stack);
  FT_CHECK(d >= 0, "%s: H5Dcreate2 failed: %s", what, stack);
  if (d >= 0) H5Dclose(d);
  H5Pclose(dcpl);
  H5Sclose(space);
}

int main(void)
{
  if (ft_begin("filter_bad_cd_values") < 0) return ft_finish();
  hid_t f = ft_create_file("bad_cd_values");
  words w = base();
  expect_accepted(f, "control", &w);
  words none = {{0}, 0};
  expect_accepted(f, "no_words_means_defaults", &none);

  w = base();
  w.cd[W_VERSION] = 99;
  expect_refused(f, "version word 99", &w, "version");

  w = with_bound(0.0);
  expect_refused(f, "zero bound", &w, "bound");
  w = with_bound(-1e-3);
  expect_refused(f, "negative bound", &w, "bound");
  w = with_bound(NAN);
  expect_refused(f, "NaN bound", &w, "bound");
  w = with_bound(INFINITY);
  expect_refused(f, "infinite bound", &w, "bound");

  w = base();
  w.cd[W_MODE] = 7;
  expect_refused(f, "unknown mode", &w, "mode");

  w = base();
  w.cd[W_SUBCHUNK] = 100;
  expect_refused(f, "sub-chunk 100 bytes", &w, "sub-chunk");

  w = base();
  w.cd[W_OPS + 1] = 77;
  expect_refused(f, "unknown op id 77", &w, "unknown id");

  w = base(); /* quant rze zigzag bitshuffle delta: coder in the middle */
  w.cd[W_OPS + 1] = H5FZ_OP_RZE;
  w.cd[W_OPS + 4] = H5FZ_OP_DELTA;
  expect_refused(f, "coder in the middle", &w, "coder");

  w = base(); /* quant bitshuffle delta zigzag rze: words after bytes */
  w.cd[W_OPS + 1] = H5FZ_OP_BITSHUFFLE;
  w.cd[W_OPS + 2] = H5FZ_OP_DELTA;
  w.cd[W_OPS + 3] = H5FZ_OP_ZIGZAG;
  expect_refused(f, "transform after bytes", &w, "needs integer words");

  w = base();
  w.cd[W_OPS] = H5FZ_OP_DELTA;
  expect_refused(f, "no map first", &w, "map");

  w = base();
  w.cd[W_NOPS] = 11;
  expect_refused(f, "11 ops", &w, "ops");

  w = base();
  w.cd[W_NOPS] = 9;
  expect_refused(f, "op count past the end", &w, "ops");

  w = base();
  for (size_t i = w.n; i < 30; i++) w.cd[i] = 5;
  w.n = 30;
  expect_refused(f, "30 words", &w, "unexpected");

  w = base();
  for (size_t i = w.n; i < 100; i++) w.cd[i] = 0;
  w.n = 100;
  expect_refused(f, "100 words", &w, "words");

  w = base();
  w.n = 3;
  expect_refused(f, "truncated to 3 words", &w, "bound");

  w = base(); /* a forged dataset part naming an unknown element type */
  w.cd[w.n++] = H5FZ_CD_LOCAL_MARKER;
  w.cd[w.n++] = 9;
  w.cd[w.n++] = 4;
  w.cd[w.n++] = 0;
  expect_refused(f, "forged dataset part", &w, "element type");

  H5Fclose(f);
  return ft_finish();
}
