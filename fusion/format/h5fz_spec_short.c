/*
 * h5fz_spec_short.c - a spec as one cd_values word ("M SSS EE"), for NCO
 * 5.1.4, whose --cmp hands the filter only its last word.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h5fz_internal.h"
#include "h5fz_spec_short.h"

/* The bound "S e-E" reads as: the text form's own number. */
static double short_bound(unsigned s, unsigned e)
{
  char text[32];
  snprintf(text, sizeof text, "%ue-%u", s, e);
  return strtod(text, NULL);
}

int h5fz_spec_from_short_word(unsigned word, h5fz_spec *spec)
{
  h5fz_spec_default(spec);
  if (word < H5FZ_SHORT_WORD_MIN || word > H5FZ_SHORT_WORD_MAX)
    return h5fz_fail(H5FZ_ERR_SPEC,
                     "a single cd_values word %u is neither the version word (1) nor a one-word spec "
                     "(%u..%u: decimal digits M SSS EE, mode M = 1 abs, 2 rel, 3 pw_rel, 4 lossless, bound "
                     "SSS x 10^-EE; e.g. 100103 = abs=1e-3; docs/netcdf.md)",
                     word, H5FZ_SHORT_WORD_MIN, H5FZ_SHORT_WORD_MAX);
  unsigned m = word / 100000u, s = word / 100u % 1000u, e = word % 100u;
  spec->mode = (h5fz_mode)(m - 1);
  if (spec->mode == H5FZ_MODE_LOSSLESS) {
    if (s || e)
      return h5fz_fail(H5FZ_ERR_SPEC, "one-word spec %u: lossless (4) takes no bound, so the word is 400000", word);
    spec->bound = 0.0;
  } else {
    if (!s)
      return h5fz_fail(H5FZ_ERR_SPEC, "one-word spec %u: the bound's digits SSS are 000 (want 001..999)", word);
    spec->bound = short_bound(s, e);
  }
  return h5fz_spec_validate(spec);
}

int h5fz_spec_short_word(const h5fz_spec *spec, unsigned *word)
{
  h5fz_spec d;
  h5fz_spec_default(&d);
  if (spec->has_missing || spec->subchunk_bytes != d.subchunk_bytes || spec->n_ops != d.n_ops ||
      memcmp(spec->ops, d.ops, d.n_ops) || (unsigned)spec->mode > H5FZ_MODE_LOSSLESS)
    return 0;
  if (spec->mode == H5FZ_MODE_LOSSLESS) {
    *word = 400000u;
    return 1;
  }
  for (unsigned e = 0; e < 100; e++)
    for (unsigned s = 1; s < 1000; s++)
      if (short_bound(s, e) == spec->bound) {
        *word = ((unsigned)spec->mode + 1u) * 100000u + s * 100u + e;
        return 1;
      }
  return 0;
}
