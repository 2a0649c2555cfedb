/*
 * realistic_array.h - the benchmarks' headline array: every real float32
 * field of a data folder scaled to its own finite range [0, 1] (NaN, Inf
 * and fill values, i.e. finite values of magnitude >= 1e9, kept as they
 * are), the fields concatenated whole, in name order, repeated until the
 * array holds at least the bytes asked for. ABS R on it is R times every
 * field's own range, so one bound fits every region of the array.
 */
#ifndef H5FZ_REALISTIC_ARRAY_H
#define H5FZ_REALISTIC_ARRAY_H

#include <stddef.h>

typedef struct {
  float *values;    /* malloc'd, n values (caller frees with h5fz_realistic_free) */
  size_t n;         /* values; n * 4 >= the bytes asked for */
  int n_fields;     /* float32 fields found */
  int repeats;      /* times the set of fields was repeated (the last may be partial: no) */
  size_t n_special; /* NaN, Inf and fill values kept unscaled, over the whole array */
} h5fz_realistic;

/* Build the array from every <what>_float32_<shape>.f32 file of dir, at
 * least min_bytes long (whole fields only, so a little more). Returns 0, or
 * -1 with a reason in why (no float32 field, unreadable file, no memory). */
int h5fz_realistic_make(const char *dir, size_t min_bytes, h5fz_realistic *out, char *why, size_t why_len);

/* Result of checking a decoded array against the original, element by element. */
typedef struct {
  size_t checked;    /* values compared (all of them) */
  size_t violations; /* finite originals off by more than the bound, or specials not exact */
  double max_error;  /* max |x - x'| over finite originals */
  size_t nan_lost;   /* NaN originals that did not come back NaN */
} h5fz_realistic_check_result;

/* Compare dec with orig (n float32 values) at ABS bound eb: every finite
 * value within eb, NaN stays NaN, Inf exact. */
void h5fz_realistic_check(const float *orig, const float *dec, size_t n, double eb, h5fz_realistic_check_result *r);

void h5fz_realistic_free(h5fz_realistic *a);

#endif /* H5FZ_REALISTIC_ARRAY_H */
