/*
 * fuzz_spec_parse.c - libFuzzer target: h5fz_spec_parse on arbitrary text,
 * and the round trip through h5fz_spec_format (and cd_values) when it
 * succeeds.
 *
 * Input: the bytes, NUL-terminated in a buffer of exactly size + 1 bytes (an
 * embedded NUL ends the text early, as it would for a C caller).
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

static int same_double(double a, double b)
{
  if (isnan(a) && isnan(b)) return 1; /* text keeps NaN, not its payload */
  return !memcmp(&a, &b, sizeof a);
}

static void same_spec(const h5fz_spec *a, const h5fz_spec *b, const char *what, const char *text)
{
  FUZZ_CHECK(a->mode == b->mode, "%s [%s]: mode", what, text);
  FUZZ_CHECK(same_double(a->bound, b->bound), "%s [%s]: bound %.17g != %.17g", what, text, a->bound, b->bound);
  FUZZ_CHECK(a->subchunk_bytes == b->subchunk_bytes, "%s [%s]: subchunk", what, text);
  FUZZ_CHECK(a->n_ops == b->n_ops && !memcmp(a->ops, b->ops, H5FZ_MAX_OPS), "%s [%s]: chain", what, text);
  FUZZ_CHECK(a->dtype == b->dtype, "%s [%s]: dtype", what, text);
  FUZZ_CHECK(a->rank == b->rank && !memcmp(a->dims, b->dims, sizeof a->dims), "%s [%s]: dims", what, text);
  FUZZ_CHECK(a->has_fill == b->has_fill, "%s [%s]: has_fill", what, text);
  if (a->has_fill) FUZZ_CHECK(same_double(a->fill, b->fill), "%s [%s]: fill", what, text);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
  if (size > 4096) return 0;
  char *text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = '\0';
  h5fz_spec s;
  int rc = h5fz_spec_parse(text, &s);
  if (rc) {
    FUZZ_CHECK(rc == H5FZ_ERR_SPEC, "parse returned %d", rc);
    FUZZ_CHECK(h5fz_last_error()[0] != '\0', "parse failed without a message");
    free(text);
    return 0;
  }
  FUZZ_CHECK(h5fz_spec_validate(&s) == H5FZ_OK, "accepted spec does not validate: %s", h5fz_last_error());

  /* text -> spec -> canonical text -> spec: the same spec; the canonical
   * text is a fixed point */
  char canon[512], canon2[512];
  rc = h5fz_spec_format(&s, canon, sizeof canon);
  FUZZ_CHECK(rc == H5FZ_OK, "format failed: %s", h5fz_last_error());
  h5fz_spec s2;
  rc = h5fz_spec_parse(canon, &s2);
  FUZZ_CHECK(rc == H5FZ_OK, "canonical text [%s] of [%s] does not parse: %s", canon, text, h5fz_last_error());
  same_spec(&s, &s2, "text round trip", canon);
  rc = h5fz_spec_format(&s2, canon2, sizeof canon2);
  FUZZ_CHECK(rc == H5FZ_OK && !strcmp(canon, canon2), "canonical text not stable: [%s] -> [%s]", canon, canon2);

  /* spec -> cd_values (user part, and with a dataset part) -> spec */
  unsigned cd[H5FZ_CD_MAX];
  size_t n = 0;
  h5fz_spec s3;
  rc = h5fz_spec_to_cd_values(&s, 0, cd, H5FZ_CD_USER_MAX, &n);
  FUZZ_CHECK(rc == H5FZ_OK, "to_cd_values failed: %s", h5fz_last_error());
  rc = h5fz_spec_from_cd_values(cd, n, &s3, NULL);
  FUZZ_CHECK(rc == H5FZ_OK, "from_cd_values failed: %s", h5fz_last_error());
  FUZZ_CHECK(s3.mode == s.mode && same_double(s3.bound, s.bound) && s3.subchunk_bytes == s.subchunk_bytes &&
                 s3.n_ops == s.n_ops && !memcmp(s3.ops, s.ops, H5FZ_MAX_OPS),
             "cd_values user round trip [%s]", text);
  if (s.dtype != H5FZ_DTYPE_UNKNOWN) {
    rc = h5fz_spec_to_cd_values(&s, 1, cd, H5FZ_CD_MAX, &n);
    FUZZ_CHECK(rc == H5FZ_OK, "to_cd_values (local) failed: %s", h5fz_last_error());
    rc = h5fz_spec_from_cd_values(cd, n, &s3, NULL);
    FUZZ_CHECK(rc == H5FZ_OK, "from_cd_values (local) failed: %s", h5fz_last_error());
    same_spec(&s, &s3, "cd_values round trip", text);
  }
  free(text);
  return 0;
}
