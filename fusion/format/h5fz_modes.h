/*
 * h5fz_modes.h - the error-bound modes, one row each (h5fz_modes.c): the
 * only place that knows a mode's name, its quantizer, how its bound turns
 * into a chunk's absolute bound, which chunks keep its promise and how one
 * element's error is measured. The spec parser, the chunk checks, the
 * container check and the chunk plan read the rows; the layers above
 * fusion/ read the public part through h5fz_mode_at and
 * h5fz_element_error (h5fz.h). docs/modes.md says how to add a mode.
 */
#ifndef H5FZ_MODES_H
#define H5FZ_MODES_H

#include <stddef.h>

#include "h5fz.h"

/* Which bounds a spec in this mode takes. */
typedef enum {
  H5FZ_BOUND_POSITIVE, /* a finite number in (0, 1e300] (2 x bound stays finite) */
  H5FZ_BOUND_FRACTION, /* a number in (0, 1) */
  H5FZ_BOUND_NONE      /* none: bound 0, the mode is a bare word of the spec */
} h5fz_bound_rule;

/* How the spec's bound becomes the absolute bound of one chunk (the
 * quantizer's eb, stored in the chunk header). */
typedef enum {
  H5FZ_RESOLVE_FIXED,      /* the spec's bound itself, for every chunk */
  H5FZ_RESOLVE_CHUNK_RANGE /* a fraction of the chunk's finite range, fill values left out
                              (h5fz_rel_abs_bound, docs/spec.md §6): the filter needs the
                              dataset's fill value, and a chunk's bound can be checked
                              only against its decoded values */
} h5fz_bound_resolve;

/* What the bound in a chunk header promises: a chunk serves a dataset of
 * another mode when both make the same kind of promise. */
typedef enum {
  H5FZ_PROMISE_ABSOLUTE,  /* |x - x'| <= header bound */
  H5FZ_PROMISE_POINTWISE, /* |x - x'| <= header bound x |x|, header bound < 1 */
  H5FZ_PROMISE_EXACT      /* bit-exact, header bound 0: serves every dataset */
} h5fz_promise;

typedef struct {
  h5fz_mode mode;           /* the number in cd_values and in every chunk header */
  const char *name;         /* the spec's key (abs=1e-3) or, for H5FZ_BOUND_NONE, its word
                          (lossless); also the attribute value, the CLI's option
                          (with '-' for '_') and Python's keyword */
  const char *label;        /* how messages name it ("ABS") */
  const char *promise_text; /* the promise, for `h5fz ops` and docs */
  int qmode;                /* the quantizer's mode (H5FZ_QMODE_*, device_ops/h5fz_ops.h); which
                          fast forms take it follows from it (H5FZ_QMODE_FAST) */
  h5fz_bound_rule bound_rule;
  h5fz_bound_resolve resolve;
  h5fz_promise promise;
  /* One finite original value against its decoded value, in the units the
   * bound is given in (ABS/REL: absolute, PW_REL: relative to |orig|):
   * INFINITY when a rule with no tolerance (sign, zero, bits) is broken.
   * h5fz_element_error applies the rules of NaN and Inf first. */
  double (*element_error)(double orig, double decoded);
} h5fz_mode_row;

/* The row of mode (a number from cd_values or a chunk header), or NULL
 * when no mode has it. */
const h5fz_mode_row *h5fz_mode_lookup(unsigned mode);

/* The row whose name is name (case-sensitive), or NULL. */
const h5fz_mode_row *h5fz_mode_by_name(const char *name);

/* All rows (*count of them), in the order of their numbers. */
const h5fz_mode_row *h5fz_mode_table(size_t *count);

/* 1 when mode (a number; unknown: 0) resolves its bound from each chunk's
 * range (H5FZ_RESOLVE_CHUNK_RANGE): the chunk plan, REL's range, the GPU
 * batch and the filter's fill-value rule ask this. */
int h5fz_mode_from_chunk_range(unsigned mode);

/* Does a spec of row m take bound? H5FZ_OK, or H5FZ_ERR_SPEC with the
 * reason (the mode's own wording: "pointwise relative bound 2 must be in
 * (0, 1)"). */
int h5fz_mode_check_bound(const h5fz_mode_row *m, double bound);

/* 1 when abs_bound can be the bound a chunk header of row m records
 * (finite and >= 0; below 1 for a pointwise promise; 0 when exact). */
int h5fz_mode_header_bound_ok(const h5fz_mode_row *m, double abs_bound);

/* 1 when a chunk coded in mode have (NULL: unknown) with header bound
 * have_bound keeps the promise of a dataset of row want with spec bound
 * want_bound: an exact chunk always; otherwise the same kind of promise,
 * and, when want's bound is fixed, one no looser. */
int h5fz_mode_chunk_keeps(const h5fz_mode_row *have, double have_bound, const h5fz_mode_row *want, double want_bound);

/* "abs=, rel=, pw_rel=, lossless": the spec's words for the modes, for
 * messages, into buf (len bytes, NUL-terminated, cut when too small). */
void h5fz_mode_keys_text(char *buf, size_t len);

#endif /* H5FZ_MODES_H */
