/*
 * h5fz_spec_short.c - a spec as one cd_values word ("M SSS EE"), for NCO
 * 5.1.4, whose --cmp hands the filter only its last word.
 */
#include <stdio.h>
#include <stdlib.h>

#include "h5fz_internal.h"
#include "h5fz_spec_short.h"

int h5fz_spec_short_word_decode(unsigned word, h5fz_mode *mode, double *bound)
{
  if (word < H5FZ_SHORT_WORD_MIN || word > H5FZ_SHORT_WORD_MAX)
    return h5fz_fail(H5FZ_ERR_SPEC,
                     "a single cd_values word %u is neither the version word (1) nor a one-word spec "
                     "(%u..%u: decimal digits M SSS EE, mode M = 1 abs, 2 rel, 3 pw_rel, 4 lossless, bound "
                     "SSS x 10^-EE; e.g. 100103 = abs=1e-3; docs/netcdf.md)",
                     word, H5FZ_SHORT_WORD_MIN, H5FZ_SHORT_WORD_MAX);
  unsigned m = word / 100000u, s = word / 100u % 1000u, e = word % 100u;
  *mode = (h5fz_mode)(m - 1);
  *bound = 0.0;
  if (*mode == H5FZ_MODE_LOSSLESS)
    return s || e
               ? h5fz_fail(H5FZ_ERR_SPEC, "one-word spec %u: lossless (4) takes no bound, so the word is 400000", word)
               : H5FZ_OK;
  if (!s) return h5fz_fail(H5FZ_ERR_SPEC, "one-word spec %u: the bound's digits SSS are 000 (want 001..999)", word);
  /* the text form's own number: "1e-3" reads as the double abs=1e-3 gives */
  char text[32];
  snprintf(text, sizeof text, "%ue-%u", s, e);
  *bound = strtod(text, NULL);
  return H5FZ_OK;
}
