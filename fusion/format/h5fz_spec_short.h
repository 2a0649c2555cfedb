/*
 * h5fz_spec_short.h - the one-word form of a spec (h5fz_spec_short.c), for
 * tools that hand a filter a single cd_values word: NCO 5.1.4's
 * `ncks --cmp=32770,W` passes nc_def_var_filter only the last word it is
 * given (docs/netcdf.md), where a full spec takes 11.
 */
#ifndef H5FZ_SPEC_SHORT_H
#define H5FZ_SPEC_SHORT_H

#include "h5fz.h"

/* Smallest and largest one-word form: words below the smallest are left
 * for cd_values versions (word 0 of a full spec is the version, 1). */
#define H5FZ_SHORT_WORD_MIN 100000u
#define H5FZ_SHORT_WORD_MAX 499999u

/* Decode one word W = M x 100000 + S x 100 + E (decimal digits "M SSS EE")
 * into *mode = M - 1 (1 abs, 2 rel, 3 pw_rel, 4 lossless) and *bound = S x
 * 10^-E (S 1..999, E 0..99; lossless: S = E = 0, i.e. W = 400000, bound
 * 0), the double strtod gives for "Se-E", the same as the text form
 * "abs=Se-E". The rest of the spec is the default (h5fz_spec_from_cd_values
 * fills and validates it). Returns H5FZ_OK, or H5FZ_ERR_SPEC with the
 * reason (a word outside the form, a mantissa of 0). */
int h5fz_spec_short_word_decode(unsigned word, h5fz_mode *mode, double *bound);

#endif /* H5FZ_SPEC_SHORT_H */
