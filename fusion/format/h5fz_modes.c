/*
 * h5fz_modes.c - the mode table (h5fz_modes.h): one row per error-bound
 * mode, and the rules every reader applies to a row. Adding a mode is a row
 * here and its number in h5fz.h (a new quantizer also its H5FZ_QMODE_* and
 * code in device_ops/); docs/modes.md lists the steps.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "h5fz_modes.h"
#include "h5fz_ops.h"
#include "h5fz_internal.h"

#define MAX_BOUND 1e300 /* 2 * bound must stay finite */

static int same_bits(double a, double b) { return !memcmp(&a, &b, sizeof a); }

static double absolute_error(double orig, double decoded) { return fabs(orig - decoded); }

/* Signs kept and zeros exact (the log-domain quantizer's promise). */
static double pointwise_error(double orig, double decoded)
{
  if (orig == 0) return same_bits(orig, decoded) ? 0.0 : INFINITY;
  if (signbit(orig) != signbit(decoded)) return INFINITY;
  return fabs(orig - decoded) / fabs(orig);
}

static double exact_error(double orig, double decoded) { return same_bits(orig, decoded) ? 0.0 : INFINITY; }

/* In the order of their numbers (h5fz_mode_lookup indexes by it). */
static const h5fz_mode_row modes[] = {
    {H5FZ_MODE_ABS, "abs", "ABS", "|x - x'| <= bound", H5FZ_QMODE_ABS, H5FZ_BOUND_POSITIVE, H5FZ_RESOLVE_FIXED,
     H5FZ_PROMISE_ABSOLUTE, absolute_error},
    {H5FZ_MODE_REL, "rel", "REL", "|x - x'| <= bound x (max - min) of the chunk's finite values", H5FZ_QMODE_REL,
     H5FZ_BOUND_POSITIVE, H5FZ_RESOLVE_CHUNK_RANGE, H5FZ_PROMISE_ABSOLUTE, absolute_error},
    {H5FZ_MODE_PW_REL, "pw_rel", "PW_REL", "|x - x'| <= bound x |x|, 0 < bound < 1; signs and zeros exact",
     H5FZ_QMODE_PW_REL, H5FZ_BOUND_FRACTION, H5FZ_RESOLVE_FIXED, H5FZ_PROMISE_POINTWISE, pointwise_error},
    {H5FZ_MODE_LOSSLESS, "lossless", "lossless", "bit-exact", H5FZ_QMODE_LOSSLESS, H5FZ_BOUND_NONE, H5FZ_RESOLVE_FIXED,
     H5FZ_PROMISE_EXACT, exact_error},
};
#define N_MODES (sizeof modes / sizeof modes[0])

const h5fz_mode_row *h5fz_mode_lookup(unsigned mode)
{
  return mode < N_MODES && (unsigned)modes[mode].mode == mode ? &modes[mode] : NULL;
}

const h5fz_mode_row *h5fz_mode_by_name(const char *name)
{
  for (size_t i = 0; name && i < N_MODES; i++)
    if (!strcmp(modes[i].name, name)) return &modes[i];
  return NULL;
}

const h5fz_mode_row *h5fz_mode_table(size_t *count)
{
  *count = N_MODES;
  return modes;
}

int h5fz_mode_from_chunk_range(unsigned mode)
{
  const h5fz_mode_row *m = h5fz_mode_lookup(mode);
  return m && m->resolve == H5FZ_RESOLVE_CHUNK_RANGE;
}

int h5fz_mode_check_bound(const h5fz_mode_row *m, double bound)
{
  switch (m->bound_rule) {
  case H5FZ_BOUND_NONE:
    if (bound != 0) return h5fz_fail(H5FZ_ERR_SPEC, "%s mode takes bound 0, not %g", m->name, bound);
    return H5FZ_OK;
  case H5FZ_BOUND_FRACTION:
    if (!(bound > 0) || !(bound < 1))
      return h5fz_fail(H5FZ_ERR_SPEC, "pointwise relative bound %g must be in (0, 1)", bound);
    return H5FZ_OK;
  case H5FZ_BOUND_POSITIVE:
  default:
    if (!(bound > 0) || !(bound <= MAX_BOUND))
      return h5fz_fail(H5FZ_ERR_SPEC,
                       "error bound %g must be a finite number in (0, 1e300] "
                       "(for bit-exact storage use the lossless mode)",
                       bound);
    return H5FZ_OK;
  }
}

int h5fz_mode_header_bound_ok(const h5fz_mode_row *m, double abs_bound)
{
  if (!(abs_bound >= 0) || !isfinite(abs_bound)) return 0;
  switch (m->promise) {
  case H5FZ_PROMISE_POINTWISE: return abs_bound < 1;
  case H5FZ_PROMISE_EXACT: return abs_bound == 0;
  case H5FZ_PROMISE_ABSOLUTE:
  default: return 1;
  }
}

int h5fz_mode_chunk_keeps(const h5fz_mode_row *have, double have_bound, const h5fz_mode_row *want, double want_bound)
{
  if (have && have->promise == H5FZ_PROMISE_EXACT) return 1;
  if (!have || !want || want->promise == H5FZ_PROMISE_EXACT || have->promise != want->promise) return 0;
  /* a bound resolved per chunk range cannot be compared here: the decoded
   * values are (h5fz_rel_check_decoded) */
  return want->resolve != H5FZ_RESOLVE_FIXED || have_bound <= want_bound;
}

void h5fz_mode_keys_text(char *buf, size_t len)
{
  size_t n = 0;
  if (!buf || !len) return;
  buf[0] = '\0';
  for (size_t i = 0; i < N_MODES && n < len; i++)
    n += (size_t)snprintf(buf + n, len - n, "%s%s%s", i ? ", " : "", modes[i].name,
                          modes[i].bound_rule == H5FZ_BOUND_NONE ? "" : "=");
}

/* ---- the public part (h5fz.h) --------------------------------------------- */

static void fill_info(const h5fz_mode_row *m, h5fz_mode_info *info)
{
  info->mode = m->mode;
  info->name = m->name;
  info->takes_bound = m->bound_rule != H5FZ_BOUND_NONE;
  info->range_relative = m->resolve == H5FZ_RESOLVE_CHUNK_RANGE;
  info->fast_forms = H5FZ_QMODE_FAST(m->qmode);
  info->promise = m->promise_text;
}

int h5fz_mode_at(size_t i, h5fz_mode_info *info)
{
  if (!info) return h5fz_fail(H5FZ_ERR_ARG, "h5fz_mode_at: NULL info");
  if (i >= N_MODES) return h5fz_fail(H5FZ_ERR_ARG, "h5fz_mode_at: entry %zu is past the %zu modes", i, N_MODES);
  fill_info(&modes[i], info);
  return H5FZ_OK;
}

int h5fz_mode_get(unsigned mode, h5fz_mode_info *info)
{
  const h5fz_mode_row *m = h5fz_mode_lookup(mode);
  if (!info) return h5fz_fail(H5FZ_ERR_ARG, "h5fz_mode_get: NULL info");
  if (!m) return h5fz_fail(H5FZ_ERR_ARG, "unknown error-bound mode %u", mode);
  fill_info(m, info);
  return H5FZ_OK;
}

const char *h5fz_mode_name(unsigned mode)
{
  const h5fz_mode_row *m = h5fz_mode_lookup(mode);
  return m ? m->name : NULL;
}

double h5fz_element_error(unsigned mode, double orig, double decoded)
{
  const h5fz_mode_row *m = h5fz_mode_lookup(mode);
  /* the one rule for what no bound covers: a NaN comes back as a NaN (its
   * payload is not compared: values are compared as doubles), an infinity
   * as itself, a finite value as a finite one */
  if (isnan(orig)) return isnan(decoded) ? 0.0 : INFINITY;
  if (isinf(orig) || !isfinite(decoded)) return orig == decoded ? 0.0 : INFINITY;
  return m ? m->element_error(orig, decoded) : NAN;
}
