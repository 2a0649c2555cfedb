/*
 * h5fz_spec.c - the ChunkFusionSpec: defaults, validation, text form and
 * cd_values form. docs/spec.md is the reference for both forms.
 */
#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h5fz_internal.h"
#include "h5fz_modes.h"
#include "h5fz_spec_short.h"
#include "h5fz_spec_suggest.h"

#define DEFAULT_REL_BOUND 1e-4

size_t h5fz_dtype_size(h5fz_dtype dtype) { return dtype == H5FZ_DTYPE_F32 ? 4u : dtype == H5FZ_DTYPE_F64 ? 8u : 0u; }

int h5fz_spec_default(h5fz_spec *spec)
{
  if (!spec) return h5fz_fail(H5FZ_ERR_ARG, "h5fz_spec_default: NULL spec");
  memset(spec, 0, sizeof *spec);
  spec->mode = H5FZ_MODE_REL;
  spec->bound = DEFAULT_REL_BOUND;
  spec->subchunk_bytes = H5FZ_DEFAULT_SUBCHUNK_BYTES;
  spec->n_ops = sizeof h5fz_default_chain;
  memcpy(spec->ops, h5fz_default_chain, sizeof h5fz_default_chain);
  return H5FZ_OK;
}

/* The coders' names from the op table, comma-separated, for messages. */
static void coder_names(char *buf, size_t len)
{
  size_t count, used = 0;
  const h5fz_op_info *ops = h5fz_op_table(&count);
  buf[0] = '\0';
  for (size_t i = 0; i < count; i++)
    if (ops[i].kind == H5FZ_KIND_CODER && used < len)
      used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? ", " : "", ops[i].name);
}

static int validate_chain(const h5fz_spec *s)
{
  if (s->n_ops < 2 || s->n_ops > H5FZ_MAX_OPS)
    return h5fz_fail(H5FZ_ERR_SPEC, "chain has %u ops; it needs a map, 0..%d transforms and a coder", s->n_ops,
                     H5FZ_MAX_TRANSFORMS);
  h5fz_stream stream = H5FZ_STREAM_FLOAT;
  for (uint32_t i = 0; i < s->n_ops; i++) {
    const h5fz_op_info *op = h5fz_op_lookup(s->ops[i]);
    if (!op) return h5fz_fail(H5FZ_ERR_SPEC, "op %u of the chain has unknown id %u", i, s->ops[i]);
    int first = i == 0, last = i + 1 == s->n_ops;
    if (first != (op->kind == H5FZ_KIND_MAP))
      return h5fz_fail(H5FZ_ERR_SPEC,
                       first ? "the chain must start with a map (quant), not '%s'"
                             : "'%s' is a map; only the first op may be a map",
                       op->name);
    if (last != (op->kind == H5FZ_KIND_CODER)) {
      char coders[128];
      if (last) coder_names(coders, sizeof coders);
      return last ? h5fz_fail(H5FZ_ERR_SPEC, "the chain must end with a coder (%s), not '%s'", coders, op->name)
                  : h5fz_fail(H5FZ_ERR_SPEC, "'%s' is a coder; only the last op may be a coder", op->name);
    }
    /* rze and raw take words as little-endian bytes; bitpack and the
     * transforms need integer words */
    if (op->kind == H5FZ_KIND_CODER && op->input == H5FZ_STREAM_WORDS && stream != H5FZ_STREAM_WORDS)
      return h5fz_fail(H5FZ_ERR_SPEC, "coder '%s' needs integer words but follows '%s', which makes bytes", op->name,
                       h5fz_op_lookup(s->ops[i - 1])->name);
    if (op->kind == H5FZ_KIND_TRANSFORM && op->input != stream)
      return h5fz_fail(H5FZ_ERR_SPEC, "'%s' needs integer words but follows '%s', which makes bytes", op->name,
                       h5fz_op_lookup(s->ops[i - 1])->name);
    /* it predicts from the bins of neighbours in other sub-chunks, which it
     * quantizes again from the chunk's values: only quant's own words will do */
    if (h5fz_op_is_lnd(op->id) && i != 1)
      return h5fz_fail(H5FZ_ERR_SPEC,
                       "'%s' must come right after quant (it predicts from the bins of "
                       "neighbours in other sub-chunks, quantized again), not after '%s'",
                       op->name, h5fz_op_lookup(s->ops[i - 1])->name);
    stream = op->output;
  }
  return H5FZ_OK;
}

/* The quantizer keeps one value's bits exact (h5fz_fill_bits): missing=
 * takes that place, so it cannot stand beside a fill value that needs it
 * too. Zero (its own bin) and NaN (always stored exactly) need no place. */
static int validate_missing(const h5fz_spec *s)
{
  if (!s->has_missing || !s->has_fill || s->fill == 0.0 || isnan(s->fill) || s->mode == H5FZ_MODE_LOSSLESS)
    return H5FZ_OK;
  int f32 = s->dtype == H5FZ_DTYPE_F32;
  double fill = f32 ? (double)(float)s->fill : s->fill, missing = f32 ? (double)(float)s->missing : s->missing;
  if (fill == missing) return H5FZ_OK;
  return h5fz_fail(H5FZ_ERR_SPEC,
                   "missing=%g differs from the dataset's fill value %g, and h5fz keeps one marker exact per "
                   "dataset: give the fill value as missing= (netCDF: the same value as _FillValue), or set no "
                   "fill value (H5Pset_fill_time NEVER, netCDF NOFILL)",
                   s->missing, s->fill);
}

uint64_t h5fz_spec_chunk_bytes(const h5fz_spec *spec)
{
  if (!spec->rank || spec->rank > H5FZ_MAX_RANK || !h5fz_dtype_size(spec->dtype)) return 0;
  uint64_t bytes = h5fz_dtype_size(spec->dtype);
  for (uint32_t d = 0; d < spec->rank; d++) {
    if (!spec->dims[d]) return 0;
    bytes = bytes > UINT64_MAX / spec->dims[d] ? UINT64_MAX : bytes * spec->dims[d];
  }
  return bytes;
}

int h5fz_spec_caution(const h5fz_spec *s, char *buf, size_t len)
{
  if (buf && len) buf[0] = '\0';
  const h5fz_mode_row *mode = s ? h5fz_mode_lookup((unsigned)s->mode) : NULL;
  if (!mode || mode->resolve != H5FZ_RESOLVE_CHUNK_RANGE || !(s->bound > 1)) return 0;
  if (buf && len)
    snprintf(buf, len,
             "%s=%g allows errors of up to %g %% of each chunk's value range, so any value may come back "
             "as any other value of its chunk (did you mean %s=%g, i.e. %g %%?)",
             mode->name, s->bound, s->bound * 100, mode->name, s->bound / 100, s->bound);
  return 1;
}

int h5fz_spec_validate(const h5fz_spec *s)
{
  if (!s) return h5fz_fail(H5FZ_ERR_ARG, "NULL spec");
  const h5fz_mode_row *mode = h5fz_mode_lookup((unsigned)s->mode);
  if (!mode) {
    char known[160];
    size_t count, n = 0;
    const h5fz_mode_row *all = h5fz_mode_table(&count);
    for (size_t i = 0; i < count && n < sizeof known; i++)
      n +=
          (size_t)snprintf(known + n, sizeof known - n, "%s%u = %s", i ? ", " : "", (unsigned)all[i].mode, all[i].name);
    return h5fz_fail(H5FZ_ERR_SPEC, "unknown error-bound mode %u (%s)", (unsigned)s->mode, known);
  }
  int rc = h5fz_mode_check_bound(mode, s->bound);
  if (rc) return rc;
  if (s->subchunk_bytes < H5FZ_MIN_SUBCHUNK_BYTES || s->subchunk_bytes > H5FZ_MAX_SUBCHUNK_BYTES ||
      s->subchunk_bytes % H5FZ_MIN_SUBCHUNK_BYTES)
    return h5fz_fail(H5FZ_ERR_SPEC, "sub-chunk size %u bytes must be a multiple of %u in [%u, %u]", s->subchunk_bytes,
                     H5FZ_MIN_SUBCHUNK_BYTES, H5FZ_MIN_SUBCHUNK_BYTES, H5FZ_MAX_SUBCHUNK_BYTES);
  if (s->dtype != H5FZ_DTYPE_UNKNOWN && s->dtype != H5FZ_DTYPE_F32 && s->dtype != H5FZ_DTYPE_F64)
    return h5fz_fail(H5FZ_ERR_SPEC, "unknown element type %d (1 = float32, 2 = float64)", (int)s->dtype);
  if (s->rank > H5FZ_MAX_RANK) return h5fz_fail(H5FZ_ERR_SPEC, "rank %u exceeds %d", s->rank, H5FZ_MAX_RANK);
  rc = validate_missing(s);
  return rc ? rc : validate_chain(s);
}

/* ---- cd_values ------------------------------------------------------------ */

static void put_double(unsigned *cd, double v)
{
  uint64_t u;
  memcpy(&u, &v, sizeof u);
  cd[0] = (unsigned)(u & 0xffffffffu);
  cd[1] = (unsigned)(u >> 32);
}

static double get_double(const unsigned *cd)
{
  uint64_t u = (uint64_t)(cd[0] & 0xffffffffu) | ((uint64_t)(cd[1] & 0xffffffffu) << 32);
  double v;
  memcpy(&v, &u, sizeof v);
  return v;
}

int h5fz_spec_to_cd_values(const h5fz_spec *s, int include_local, unsigned *cd, size_t cap, size_t *n_out)
{
  h5fz_clear_error();
  if (!s || !cd || !n_out) return h5fz_fail(H5FZ_ERR_ARG, "h5fz_spec_to_cd_values: NULL argument");
  int rc = h5fz_spec_validate(s);
  if (rc) return rc;
  /* a dataset part without an element type would not read back */
  if (include_local && s->dtype == H5FZ_DTYPE_UNKNOWN)
    return h5fz_fail(H5FZ_ERR_SPEC, "cd_values dataset part needs the element type (f32 or f64)");
  size_t need = 6 + s->n_ops + (s->has_missing ? 3 : 0) + (include_local ? 4 + s->rank + (s->has_fill ? 3 : 0) : 0);
  if (cap < need) return h5fz_fail(H5FZ_ERR_ARG, "cd_values needs %zu words, room for %zu", need, cap);
  size_t n = 0;
  cd[n++] = H5FZ_CD_VERSION;
  cd[n++] = (unsigned)s->mode;
  put_double(cd + n, s->bound);
  n += 2;
  cd[n++] = s->subchunk_bytes;
  cd[n++] = s->n_ops;
  for (uint32_t i = 0; i < s->n_ops; i++) cd[n++] = s->ops[i];
  if (s->has_missing) { /* missing=: its marker word, then the value as two words */
    cd[n++] = H5FZ_CD_MISSING_MARKER;
    put_double(cd + n, s->missing);
    n += 2;
  }
  if (include_local) {
    cd[n++] = H5FZ_CD_LOCAL_MARKER;
    cd[n++] = (unsigned)s->dtype | (s->big_endian ? H5FZ_CD_BIG_ENDIAN : 0u);
    cd[n++] = (unsigned)h5fz_dtype_size(s->dtype);
    cd[n++] = s->rank;
    for (uint32_t i = 0; i < s->rank; i++) cd[n++] = s->dims[i];
    if (s->has_fill) {
      cd[n++] = 1;
      put_double(cd + n, s->fill);
      n += 2;
    }
  }
  *n_out = n;
  return H5FZ_OK;
}

static int parse_local(const unsigned *cd, size_t n, h5fz_spec *s)
{
  if (n < 4) return h5fz_fail(H5FZ_ERR_SPEC, "dataset part of cd_values is truncated (%zu words)", n);
  /* bit 8 of the type word: big-endian values (written only for them, so
   * little-endian datasets keep the words older h5fz builds read) */
  unsigned dtype = cd[1] & ~H5FZ_CD_BIG_ENDIAN, esize = cd[2], rank = cd[3];
  if (dtype != H5FZ_DTYPE_F32 && dtype != H5FZ_DTYPE_F64)
    return h5fz_fail(H5FZ_ERR_SPEC,
                     "cd_values names element type %u (1 = float32, 2 = float64, plus 256 when "
                     "big-endian)",
                     cd[1]);
  if (esize != h5fz_dtype_size((h5fz_dtype)dtype))
    return h5fz_fail(H5FZ_ERR_SPEC, "cd_values element size %u does not match type %u", esize, dtype);
  if (rank > H5FZ_MAX_RANK || (n != 4 + (size_t)rank && n != 7 + (size_t)rank))
    return h5fz_fail(H5FZ_ERR_SPEC, "cd_values dataset part has rank %u and %zu words", rank, n);
  if (n == 7 + (size_t)rank && cd[4 + rank] != 1)
    return h5fz_fail(H5FZ_ERR_SPEC, "cd_values dataset part: fill-value flag is %u, want 1", cd[4 + rank]);
  s->dtype = (h5fz_dtype)dtype;
  s->big_endian = (cd[1] & H5FZ_CD_BIG_ENDIAN) != 0;
  s->rank = rank;
  for (unsigned i = 0; i < rank; i++) s->dims[i] = cd[4 + i];
  s->has_fill = n == 7 + (size_t)rank;
  if (s->has_fill) s->fill = get_double(cd + 5 + rank);
  return H5FZ_OK;
}

int h5fz_spec_from_cd_values(const unsigned *cd, size_t n, h5fz_spec *s, size_t *user_words)
{
  h5fz_clear_error();
  if (!s || (n && !cd)) return h5fz_fail(H5FZ_ERR_ARG, "h5fz_spec_from_cd_values: NULL argument");
  h5fz_spec_default(s);
  size_t p = 0;
  /* one word other than the version: the one-word form (NCO's --cmp) */
  if (n == 1 && cd[0] != H5FZ_CD_VERSION) {
    if (user_words) *user_words = 1;
    int rc = h5fz_spec_short_word_decode(cd[0], &s->mode, &s->bound);
    return rc ? rc : h5fz_spec_validate(s);
  }
  if (n > p) {
    if (cd[0] != H5FZ_CD_VERSION)
      return h5fz_fail(H5FZ_ERR_SPEC, "cd_values version word is %u; this h5fz reads version %d", cd[0],
                       H5FZ_CD_VERSION);
    p = 1;
  }
  if (n > p) {
    s->mode = (h5fz_mode)cd[p++];
    const h5fz_mode_row *mode = h5fz_mode_lookup((unsigned)s->mode);
    if (mode && mode->bound_rule == H5FZ_BOUND_NONE) s->bound = 0.0; /* unless bound words follow */
  }
  if (n == p + 1)
    return h5fz_fail(H5FZ_ERR_SPEC,
                     "cd_values end inside the error bound: it takes two words (low 32 bits, then high)");
  if (n > p) {
    s->bound = get_double(cd + p);
    /* lossless takes bound 0; -0.0 is read as +0.0, the one bound the text
     * form and the chunk header (abs_bound) can carry for it */
    const h5fz_mode_row *mode = h5fz_mode_lookup((unsigned)s->mode);
    if (mode && mode->bound_rule == H5FZ_BOUND_NONE && s->bound == 0) s->bound = 0.0;
    p += 2;
  }
  if (n > p) {
    if (cd[p]) s->subchunk_bytes = cd[p];
    p++;
  }
  if (n > p) {
    unsigned n_ops = cd[p++];
    if (n_ops > H5FZ_MAX_OPS) return h5fz_fail(H5FZ_ERR_SPEC, "cd_values name %u ops; at most %d", n_ops, H5FZ_MAX_OPS);
    if (n_ops) {
      if (n < p + n_ops)
        return h5fz_fail(H5FZ_ERR_SPEC, "cd_values name %u ops but only %zu words follow", n_ops, n - p);
      s->n_ops = n_ops;
      memset(s->ops, 0, sizeof s->ops);
      for (unsigned i = 0; i < n_ops; i++) {
        if (cd[p + i] > 255 || !h5fz_op_lookup(cd[p + i]))
          return h5fz_fail(H5FZ_ERR_SPEC, "cd_values op %u has unknown id %u", i, cd[p + i]);
        s->ops[i] = (uint8_t)cd[p + i];
      }
      p += n_ops;
    }
  }
  if (n > p && cd[p] == H5FZ_CD_MISSING_MARKER) {
    if (n < p + 3)
      return h5fz_fail(H5FZ_ERR_SPEC, "cd_values end inside the missing value: its marker takes two words after it");
    s->has_missing = 1;
    s->missing = get_double(cd + p + 1);
    p += 3;
  }
  if (user_words) *user_words = p;
  if (n > p) {
    if (cd[p] != H5FZ_CD_LOCAL_MARKER)
      return h5fz_fail(H5FZ_ERR_SPEC, "%zu unexpected cd_values words after the spec (word %zu = %u)", n - p, p, cd[p]);
    int rc = parse_local(cd + p, n - p, s);
    if (rc) return rc;
  }
  return h5fz_spec_validate(s);
}

/* ---- text form -------------------------------------------------------------- */

static int parse_number(const char *key, const char *val, double *out)
{
  char *end;
  errno = 0;
  double v = strtod(val, &end);
  /* ERANGE: overflow (inf) or underflow; a nonzero subnormal result is exact
   * enough and is what h5fz_spec_format writes for a subnormal double */
  if (end == val || *end) return h5fz_fail(H5FZ_ERR_SPEC, "'%s=%s': not a number", key, val);
  if (errno == ERANGE && !(v != 0 && fabs(v) < DBL_MIN))
    return h5fz_fail(H5FZ_ERR_SPEC, "'%s=%s': out of the range of a double (magnitudes about 4.9e-324 to 1.8e308)", key,
                     val);
  *out = v;
  return H5FZ_OK;
}

static int parse_dims(const char *val, h5fz_spec *s)
{
  uint32_t rank = 0;
  const char *p = val;
  /* a later dims= replaces an earlier one whole: no stale dims past rank */
  memset(s->dims, 0, sizeof s->dims);
  while (*p) {
    char *end;
    errno = 0;
    unsigned long d = strtoul(p, &end, 10);
    if (end == p || errno || d == 0 || d > 0xffffffffUL || rank == H5FZ_MAX_RANK)
      return h5fz_fail(H5FZ_ERR_SPEC, "'dims=%s': want up to %d positive integers like 50x100x100", val, H5FZ_MAX_RANK);
    s->dims[rank++] = (uint32_t)d;
    p = end;
    if (*p == 'x')
      p++;
    else if (*p)
      return h5fz_fail(H5FZ_ERR_SPEC, "'dims=%s': separate dims with 'x'", val);
  }
  s->rank = rank;
  return H5FZ_OK;
}

/* tok gives a mode after one was given already (s->mode): tok is its word
 * (lossless) or key=value (abs=1e-3). */
static int bound_given_twice(const char *tok, const h5fz_spec *s)
{
  const h5fz_mode_row *had = h5fz_mode_lookup((unsigned)s->mode);
  const h5fz_mode_row *now = h5fz_mode_by_name(tok);
  char keys[160];
  h5fz_mode_keys_text(keys, sizeof keys);
  if (had && had->bound_rule == H5FZ_BOUND_NONE) {
    if (now == had) return h5fz_fail(H5FZ_ERR_SPEC, "'%s': given twice", tok);
    return h5fz_fail(H5FZ_ERR_SPEC, "'%s': %s was given already (no error at all): give one of %s", tok, had->name,
                     keys);
  }
  if (!now) return h5fz_fail(H5FZ_ERR_SPEC, "'%s': the error bound is given twice", tok);
  return h5fz_fail(H5FZ_ERR_SPEC, "'%s': an error bound is given already: give one of %s", tok, keys);
}

/* What parse_token has seen besides the spec itself. */
typedef struct {
  int have_bound;
  int subchunk_given;
  const h5fz_chain_preset *preset;
} parse_state;

static int parse_token(const char *tok, h5fz_spec *s, parse_state *st, uint8_t *ops, uint32_t *n_ops)
{
  int *have_bound = &st->have_bound;
  const char *eq = strchr(tok, '=');
  if (eq) {
    char key[32];
    size_t kl = (size_t)(eq - tok);
    if (kl >= sizeof key) return h5fz_fail(H5FZ_ERR_SPEC, "unknown setting '%s'", tok);
    memcpy(key, tok, kl);
    key[kl] = '\0';
    const char *val = eq + 1;
    double v = 0.0;
    const h5fz_mode_row *mode = h5fz_mode_by_name(key);
    if (mode && mode->bound_rule != H5FZ_BOUND_NONE) {
      if (*have_bound) return bound_given_twice(tok, s);
      if (parse_number(key, val, &v)) return H5FZ_ERR_SPEC;
      s->mode = mode->mode;
      s->bound = v;
      *have_bound = 1;
      return H5FZ_OK;
    }
    if (!strcmp(key, "subchunk")) {
      if (parse_number(key, val, &v)) return H5FZ_ERR_SPEC;
      if (!(v >= 0 && v <= 1e9) || v != floor(v))
        return h5fz_fail(H5FZ_ERR_SPEC, "'%s': sub-chunk size must be a whole number of bytes up to 1e9", tok);
      s->subchunk_bytes = (uint32_t)v;
      st->subchunk_given = 1;
      return H5FZ_OK;
    }
    if (!strcmp(key, "dtype")) {
      if (!strcmp(val, "f32") || !strcmp(val, "float32"))
        s->dtype = H5FZ_DTYPE_F32;
      else if (!strcmp(val, "f64") || !strcmp(val, "float64"))
        s->dtype = H5FZ_DTYPE_F64;
      else
        return h5fz_fail(H5FZ_ERR_SPEC, "'%s': dtype is f32 or f64", tok);
      return H5FZ_OK;
    }
    if (!strcmp(key, "dims")) return parse_dims(val, s);
    if (!strcmp(key, "order")) {
      if (!strcmp(val, "big") || !strcmp(val, "be"))
        s->big_endian = 1;
      else if (!strcmp(val, "little") || !strcmp(val, "le"))
        s->big_endian = 0;
      else
        return h5fz_fail(H5FZ_ERR_SPEC, "'%s': order is big or little (the values' byte order)", tok);
      return H5FZ_OK;
    }
    if (!strcmp(key, "missing")) {
      if (parse_number(key, val, &v)) return H5FZ_ERR_SPEC;
      s->has_missing = 1;
      s->missing = v;
      return H5FZ_OK;
    }
    if (!strcmp(key, "fill")) {
      if (parse_number(key, val, &v)) return H5FZ_ERR_SPEC;
      s->has_fill = 1;
      s->fill = v;
      return H5FZ_OK;
    }
    char keys[240];
    h5fz_mode_keys_text(keys, sizeof keys);
    for (unsigned long i = 0, n = strlen(keys); h5fz_spec_setting_key(i) && n < sizeof keys; i++, n = strlen(keys))
      snprintf(keys + n, sizeof keys - n, ", %s=", h5fz_spec_setting_key(i));
    const char *near = h5fz_spec_nearest(key, kl, 1);
    return h5fz_fail(H5FZ_ERR_SPEC, "unknown setting '%s'%s%s%s (known: %s)", tok, near ? " (did you mean '" : "",
                     near ? near : "", near ? "='?)" : "", keys);
  }
  const h5fz_mode_row *word = h5fz_mode_by_name(tok);
  if (word && word->bound_rule == H5FZ_BOUND_NONE) {
    if (*have_bound) return bound_given_twice(tok, s);
    s->mode = word->mode;
    s->bound = 0.0;
    *have_bound = 1;
    return H5FZ_OK;
  }
  const h5fz_chain_preset *preset = h5fz_chain_preset_by_name(tok);
  if (preset) {
    if (st->preset || *n_ops)
      return h5fz_fail(H5FZ_ERR_SPEC, "'%s' names a whole chain (%s); give it alone, without %s", tok, preset->summary,
                       st->preset ? "another chain name" : "ops");
    st->preset = preset;
    return H5FZ_OK;
  }
  const h5fz_op_info *op = h5fz_op_by_name(tok);
  if (!op) {
    const char *near = h5fz_spec_nearest(tok, strlen(tok), 0);
    return h5fz_fail(H5FZ_ERR_SPEC, "unknown op '%s', nor a named chain%s%s%s: `h5fz ops` lists both (docs/spec.md)",
                     tok, near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "");
  }
  if (st->preset)
    return h5fz_fail(H5FZ_ERR_SPEC, "'%s' names a whole chain (%s); give it alone, without ops", st->preset->name,
                     st->preset->summary);
  if (op->kind == H5FZ_KIND_MAP && *n_ops == 0) return H5FZ_OK; /* 'quant' first is implicit */
  if (*n_ops + 1 >= H5FZ_MAX_OPS)
    return h5fz_fail(H5FZ_ERR_SPEC, "too many ops: a chain holds at most %d transforms and a coder",
                     H5FZ_MAX_TRANSFORMS);
  ops[(*n_ops)++] = (uint8_t)op->id;
  return H5FZ_OK;
}

int h5fz_spec_parse(const char *text, h5fz_spec *s)
{
  h5fz_clear_error();
  if (!text || !s) return h5fz_fail(H5FZ_ERR_ARG, "h5fz_spec_parse: NULL argument");
  h5fz_spec_default(s);
  uint8_t ops[H5FZ_MAX_OPS];
  uint32_t n_ops = 0;
  parse_state st = {0, 0, NULL};
  const char *p = text;
  for (;;) {
    while (*p && (isspace((unsigned char)*p) || *p == ',' || *p == '>' || (*p == '-' && p[1] == '>'))) p++;
    if (!*p) break;
    char tok[128];
    size_t len = 0;
    while (p[len] && !isspace((unsigned char)p[len]) && p[len] != ',' && !(p[len] == '-' && p[len + 1] == '>')) len++;
    if (len >= sizeof tok) return h5fz_fail(H5FZ_ERR_SPEC, "token too long near '%.20s'", p);
    memcpy(tok, p, len);
    tok[len] = '\0';
    p += len;
    int rc = parse_token(tok, s, &st, ops, &n_ops);
    if (rc) return rc;
  }
  if (st.preset) {
    memset(s->ops, 0, sizeof s->ops);
    memcpy(s->ops, st.preset->ops, st.preset->n_ops);
    s->n_ops = st.preset->n_ops;
    if (!st.subchunk_given) s->subchunk_bytes = st.preset->subchunk_bytes;
  }
  if (n_ops) {
    memset(s->ops, 0, sizeof s->ops);
    s->ops[0] = H5FZ_OP_QUANT;
    memcpy(s->ops + 1, ops, n_ops);
    s->n_ops = n_ops + 1;
  }
  return h5fz_spec_validate(s);
}

/* Shortest decimal that reads back as the same double. */
static void format_double(double v, char *buf, size_t len)
{
  for (int prec = 1; prec <= 17; prec++) {
    snprintf(buf, len, "%.*g", prec, v);
    if (strtod(buf, NULL) == v) return;
  }
}

int h5fz_spec_format(const h5fz_spec *s, char *buf, size_t buf_len)
{
  if (!s || !buf || !buf_len) return h5fz_fail(H5FZ_ERR_ARG, "h5fz_spec_format: NULL argument");
  const h5fz_mode_row *mode = h5fz_mode_lookup((unsigned)s->mode);
  if (!mode) return h5fz_fail(H5FZ_ERR_ARG, "h5fz_spec_format: unknown error-bound mode %u", (unsigned)s->mode);
  char num[40];
  format_double(s->bound, num, sizeof num);
  size_t n = mode->bound_rule == H5FZ_BOUND_NONE ? (size_t)snprintf(buf, buf_len, "%s", mode->name)
                                                 : (size_t)snprintf(buf, buf_len, "%s=%s", mode->name, num);
  if (n < buf_len) n += h5fz_chain_words(s->ops, s->n_ops, s->subchunk_bytes, buf + n, buf_len - n);
  if (n < buf_len && s->has_missing) {
    format_double(s->missing, num, sizeof num);
    n += (size_t)snprintf(buf + n, buf_len - n, " missing=%s", num);
  }
  if (n < buf_len && s->dtype)
    n += (size_t)snprintf(buf + n, buf_len - n, " dtype=%s", s->dtype == H5FZ_DTYPE_F32 ? "f32" : "f64");
  for (uint32_t i = 0; i < s->rank && n < buf_len; i++)
    n += (size_t)snprintf(buf + n, buf_len - n, "%s%u", i ? "x" : " dims=", s->dims[i]);
  if (n < buf_len && s->has_fill) {
    format_double(s->fill, num, sizeof num);
    n += (size_t)snprintf(buf + n, buf_len - n, " fill=%s", num);
  }
  if (n < buf_len && s->big_endian) n += (size_t)snprintf(buf + n, buf_len - n, " order=big");
  if (n >= buf_len) return h5fz_fail(H5FZ_ERR_ARG, "spec text needs more than %zu bytes", buf_len);
  return H5FZ_OK;
}

int h5fz_chunk_dims_fold(size_t rank, const uint64_t *dims, uint32_t *rank_out, uint32_t out[H5FZ_MAX_RANK])
{
  h5fz_clear_error();
  if (rank == 0 || dims == NULL || !rank_out || !out)
    return h5fz_fail(H5FZ_ERR_ARG, "the dataset has no chunk dims (h5fz needs a chunked layout)");
  size_t fold = rank > H5FZ_MAX_RANK ? rank - H5FZ_MAX_RANK + 1 : 1;
  uint64_t slowest = 1;
  for (size_t i = 0; i < rank; i++) {
    if (dims[i] == 0) return h5fz_fail(H5FZ_ERR_ARG, "chunk dim %zu is 0", i);
    if (i < fold) {
      slowest *= dims[i];
      if (slowest > UINT32_MAX)
        return h5fz_fail(H5FZ_ERR_ARG, "chunk dims %zu..%zu fold to more than 2^32-1 elements", (size_t)0, i);
    } else if (dims[i] > UINT32_MAX) {
      return h5fz_fail(H5FZ_ERR_ARG, "chunk dim %zu is larger than 2^32-1", i);
    }
  }
  out[0] = (uint32_t)slowest;
  for (size_t i = fold; i < rank; i++) out[i - fold + 1] = (uint32_t)dims[i];
  *rank_out = (uint32_t)(rank - fold + 1);
  return H5FZ_OK;
}
