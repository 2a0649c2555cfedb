/*
 * fuzz_cd_values.c - libFuzzer target: h5fz_spec_from_cd_values on arbitrary
 * words, and the round trip through h5fz_spec_to_cd_values and the text form
 * when it succeeds.
 *
 * Input: the bytes as little-endian 32-bit words (a trailing partial word is
 * dropped), at most H5FZ_CD_MAX + 8 words, in a buffer of exactly that many
 * words (ASan sees a read past the last one).
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "h5fz.h"
#include "fuzz_common.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
  (void)argc;
  (void)argv;
  fuzz_setup_env();
  return 0;
}

static int same_double(double a, double b) { return !memcmp(&a, &b, sizeof a); }

static void same_spec(const h5fz_spec *a, const h5fz_spec *b, int with_local, const char *what)
{
  FUZZ_CHECK(a->mode == b->mode, "%s: mode %d != %d", what, (int)a->mode, (int)b->mode);
  FUZZ_CHECK(same_double(a->bound, b->bound), "%s: bound %.17g != %.17g", what, a->bound, b->bound);
  FUZZ_CHECK(a->subchunk_bytes == b->subchunk_bytes, "%s: subchunk %u != %u", what, a->subchunk_bytes,
             b->subchunk_bytes);
  FUZZ_CHECK(a->n_ops == b->n_ops && !memcmp(a->ops, b->ops, H5FZ_MAX_OPS), "%s: chains differ", what);
  if (!with_local) return;
  FUZZ_CHECK(a->dtype == b->dtype, "%s: dtype %d != %d", what, (int)a->dtype, (int)b->dtype);
  FUZZ_CHECK(a->rank == b->rank, "%s: rank %u != %u", what, a->rank, b->rank);
  FUZZ_CHECK(!memcmp(a->dims, b->dims, sizeof a->dims), "%s: dims differ", what);
  FUZZ_CHECK(a->has_fill == b->has_fill, "%s: has_fill %d != %d", what, a->has_fill, b->has_fill);
  if (a->has_fill) FUZZ_CHECK(same_double(a->fill, b->fill), "%s: fill differs", what);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
  size_t n = size / 4;
  if (n > H5FZ_CD_MAX + 8) return 0;
  unsigned *cd = malloc((n ? n : 1) * sizeof *cd);
  if (!cd) return 0;
  for (size_t i = 0; i < n; i++)
    cd[i] = (unsigned)data[4 * i] | (unsigned)data[4 * i + 1] << 8 | (unsigned)data[4 * i + 2] << 16 |
            (unsigned)data[4 * i + 3] << 24;
  h5fz_spec s;
  size_t user = 12345;
  int rc = h5fz_spec_from_cd_values(n ? cd : NULL, n, &s, &user);
  if (rc) {
    FUZZ_CHECK(rc == H5FZ_ERR_SPEC, "from_cd_values returned %d", rc);
    FUZZ_CHECK(h5fz_last_error()[0] != '\0', "from_cd_values failed without a message");
    free(cd);
    return 0;
  }
  FUZZ_CHECK(user <= n, "user_words %zu > %zu words", user, n);
  FUZZ_CHECK(h5fz_spec_validate(&s) == H5FZ_OK, "accepted spec does not validate: %s", h5fz_last_error());

  /* words -> spec -> words -> spec: the same spec */
  unsigned cd2[H5FZ_CD_MAX];
  size_t n2 = 0;
  int local = s.dtype != H5FZ_DTYPE_UNKNOWN;
  if (!local) /* a dataset part needs the element type */
    FUZZ_CHECK(h5fz_spec_to_cd_values(&s, 1, cd2, H5FZ_CD_MAX, &n2) == H5FZ_ERR_SPEC,
               "to_cd_values wrote a dataset part without an element type");
  rc = h5fz_spec_to_cd_values(&s, local, cd2, H5FZ_CD_MAX, &n2);
  FUZZ_CHECK(rc == H5FZ_OK, "to_cd_values of an accepted spec failed: %s", h5fz_last_error());
  h5fz_spec s2;
  size_t user2 = 0;
  rc = h5fz_spec_from_cd_values(cd2, n2, &s2, &user2);
  FUZZ_CHECK(rc == H5FZ_OK, "re-read of written cd_values failed: %s", h5fz_last_error());
  same_spec(&s, &s2, local, "cd_values round trip");
  /* the user part alone fits the limit of h5repack */
  size_t n3 = 0;
  rc = h5fz_spec_to_cd_values(&s, 0, cd2, H5FZ_CD_USER_MAX, &n3);
  FUZZ_CHECK(rc == H5FZ_OK && n3 <= H5FZ_CD_USER_MAX, "user part does not fit %d words", H5FZ_CD_USER_MAX);

  /* spec -> text: always fits a generous buffer and is NUL-terminated */
  char text[512];
  rc = h5fz_spec_format(&s, text, sizeof text);
  FUZZ_CHECK(rc == H5FZ_OK, "format of an accepted spec failed: %s", h5fz_last_error());
  FUZZ_CHECK(memchr(text, '\0', sizeof text) != NULL, "format text not terminated");
  /* the text reads back as the same spec (docs/spec.md 2.3), except dims
   * of 0, which cd_values carry but the text form does not accept */
  int zero_dim = 0;
  for (uint32_t i = 0; i < s.rank; i++) zero_dim |= s.dims[i] == 0;
  if (!zero_dim) {
    h5fz_spec s3;
    rc = h5fz_spec_parse(text, &s3);
    FUZZ_CHECK(rc == H5FZ_OK, "canonical text [%s] does not parse: %s", text, h5fz_last_error());
    if (!(s.has_fill && s.fill != s.fill)) /* NaN fill: text keeps NaN, not its payload */
      same_spec(&s, &s3, local, "text round trip");
  }
  /* a small buffer fails cleanly, never overflows */
  char small[8];
  (void)h5fz_spec_format(&s, small, sizeof small);
  FUZZ_CHECK(memchr(small, '\0', sizeof small) != NULL, "small format text not terminated");
  free(cd);
  return 0;
}
