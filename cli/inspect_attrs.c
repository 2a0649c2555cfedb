/*
 * inspect_attrs.c - the h5fz_* attributes of a dataset (the ones the
 * dataset API writes, docs/dataset_api.md), summarised for `h5fz inspect`:
 * scalars as their value, arrays by length and a few statistics, the
 * outlier lists by their count and the first few (index -> value) pairs.
 * Any other attribute whose name starts with h5fz_ is shown generically.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "h5fz_cli.h"

/* Outlier pairs (index -> value) shown. */
#define FIRST_OUTLIERS 5

/* The attributes of docs/dataset_api.md, in the order they are shown. */
static const char *const known[] = {"h5fz_version",
                                    "h5fz_spec",
                                    "h5fz_mode",
                                    "h5fz_bound",
                                    "h5fz_kernel_class",
                                    "h5fz_plan_digest",
                                    "h5fz_ratio",
                                    "h5fz_stored_bytes",
                                    "h5fz_chunk_abs_bound",
                                    "h5fz_chunk_outliers",
                                    "h5fz_chunk_lists_omitted",
                                    "h5fz_outlier_positions",
                                    "h5fz_outlier_values",
                                    "h5fz_outliers_omitted"};

/* Shown as arrays even when they hold one element (a one-chunk dataset). */
static int is_array_name(const char *name)
{
  return !strcmp(name, "h5fz_chunk_abs_bound") || !strcmp(name, "h5fz_chunk_outliers") ||
         !strcmp(name, "h5fz_outlier_positions") || !strcmp(name, "h5fz_outlier_values");
}

typedef enum { A_STRING, A_FLOAT, A_UINT, A_INT, A_OTHER } attr_kind;

typedef struct {
  const char *name;
  attr_kind kind;
  int array;             /* summarise as an array */
  size_t n;              /* elements */
  size_t esize;          /* bytes of one stored element */
  char type_name[64];    /* "float64", "uint32", "string", ... */
  char *text;            /* A_STRING: the first string */
  double *f;             /* A_FLOAT */
  unsigned long long *u; /* A_UINT */
  long long *s;          /* A_INT */
  char error[300];       /* non-empty: could not be read */
} attr_data;

static void attr_free(attr_data *a)
{
  free(a->text);
  free(a->f);
  free(a->u);
  free(a->s);
  memset(a, 0, sizeof *a);
}

/* Read the strings of a string attribute; keeps the first. */
static int read_strings(hid_t attr, hid_t ftype, size_t n, attr_data *a)
{
  hid_t mtype = H5Tcopy(H5T_C_S1);
  int rc = -1;
  H5Tset_cset(mtype, H5Tget_cset(ftype));
  if (H5Tis_variable_str(ftype) > 0) {
    char **v = calloc(n, sizeof *v);
    H5Tset_size(mtype, H5T_VARIABLE);
    if (v && H5Aread(attr, mtype, v) >= 0) {
      a->text = strdup(v[0] ? v[0] : "");
      for (size_t i = 0; i < n; i++)
        if (v[i]) H5free_memory(v[i]);
      rc = a->text ? 0 : -1;
    }
    free(v);
  } else {
    /* One byte more than stored, so a string that fills its field still
     * gets its NUL. */
    size_t size = H5Tget_size(ftype) + 1;
    char *buf = calloc(n, size);
    H5Tset_size(mtype, size);
    H5Tset_strpad(mtype, H5T_STR_NULLTERM);
    if (buf && H5Aread(attr, mtype, buf) >= 0) {
      buf[size - 1] = '\0';
      a->text = strdup(buf);
      rc = a->text ? 0 : -1;
    }
    free(buf);
  }
  H5Tclose(mtype);
  return rc;
}

static void read_attr(hid_t dset, const char *name, attr_data *a)
{
  hid_t attr = H5Aopen(dset, name, H5P_DEFAULT), type = -1, space = -1;
  hssize_t npoints;
  int ok = -1;

  memset(a, 0, sizeof *a);
  a->name = name;
  a->kind = A_OTHER;
  if (attr < 0) goto fail;
  type = H5Aget_type(attr);
  space = H5Aget_space(attr);
  if (type < 0 || space < 0) goto fail;
  npoints = H5Sget_simple_extent_npoints(space);
  a->n = npoints > 0 ? (size_t)npoints : 0;
  a->esize = H5Tget_size(type);
  a->array = is_array_name(name) || H5Sget_simple_extent_type(space) == H5S_SIMPLE;
  /* A known scalar written as a one-element array is still a scalar. */
  if (a->n == 1 && !is_array_name(name))
    for (size_t k = 0; k < sizeof known / sizeof known[0]; k++)
      if (!strcmp(name, known[k])) a->array = 0;
  h5fz_cli_type_name(type, a->type_name, sizeof a->type_name);
  switch (H5Tget_class(type)) {
  case H5T_STRING: a->kind = A_STRING; break;
  case H5T_FLOAT: a->kind = A_FLOAT; break;
  case H5T_INTEGER: a->kind = H5Tget_sign(type) == H5T_SGN_NONE ? A_UINT : A_INT; break;
  default: a->kind = A_OTHER; break;
  }
  if (a->n == 0 || a->kind == A_OTHER) {
    ok = 0;
  } else if (a->kind == A_STRING) {
    ok = read_strings(attr, type, a->n, a);
  } else if (a->kind == A_FLOAT) {
    a->f = malloc(a->n * sizeof *a->f);
    ok = a->f && H5Aread(attr, H5T_NATIVE_DOUBLE, a->f) >= 0 ? 0 : -1;
  } else if (a->kind == A_UINT) {
    a->u = malloc(a->n * sizeof *a->u);
    ok = a->u && H5Aread(attr, H5T_NATIVE_ULLONG, a->u) >= 0 ? 0 : -1;
  } else {
    a->s = malloc(a->n * sizeof *a->s);
    ok = a->s && H5Aread(attr, H5T_NATIVE_LLONG, a->s) >= 0 ? 0 : -1;
  }
fail:
  if (ok < 0) {
    char why[256];
    h5fz_cli_hdf5_reason(why, sizeof why);
    snprintf(a->error, sizeof a->error, "cannot read: %s", why[0] ? why : "out of memory");
  }
  H5FZ_CLI_CLOSE(space, type, attr);
}

/* The shortest text that reads back as v (as a float when esize is 4):
 * "0.001", not "0.0010000000000000000208"; "nan", "inf", "-inf", "-0". */
static const char *fmt_value(double v, size_t esize, char *buf, size_t len)
{
  if (isnan(v)) {
    snprintf(buf, len, "nan");
  } else if (isinf(v)) {
    snprintf(buf, len, v < 0 ? "-inf" : "inf");
  } else {
    for (int prec = esize == 4 ? 6 : 15; prec <= 17; prec++) {
      snprintf(buf, len, "%.*g", prec, v);
      double back = strtod(buf, NULL);
      if (esize == 4 ? (float)back == (float)v : back == v) break;
    }
  }
  return buf;
}

/* A finite value as a JSON number, otherwise null. */
static void json_value(double v, size_t esize)
{
  char buf[64];
  if (isfinite(v))
    fputs(fmt_value(v, esize, buf, sizeof buf), stdout);
  else
    fputs("null", stdout);
}

/* Element i of a numeric attribute as text. */
static const char *element_text(const attr_data *a, size_t i, char *buf, size_t len)
{
  if (a->kind == A_FLOAT) return fmt_value(a->f[i], a->esize, buf, len);
  if (a->kind == A_UINT)
    snprintf(buf, len, "%llu", a->u[i]);
  else
    snprintf(buf, len, "%lld", a->s[i]);
  return buf;
}

typedef struct {
  size_t imin, imax; /* where min and max are (the first such) */
  size_t counted;    /* elements compared (floats: not NaN) */
  double total;      /* sum (exact for counts below 2^53) */
  unsigned long long utotal;
} stats;

static stats array_stats(const attr_data *a)
{
  stats st;
  memset(&st, 0, sizeof st);
  for (size_t i = 0; i < a->n; i++) {
    if (a->kind == A_FLOAT) {
      if (isnan(a->f[i])) continue;
      if (!st.counted || a->f[i] < a->f[st.imin]) st.imin = i;
      if (!st.counted || a->f[i] > a->f[st.imax]) st.imax = i;
      st.total += a->f[i];
    } else if (a->kind == A_UINT) {
      if (!st.counted || a->u[i] < a->u[st.imin]) st.imin = i;
      if (!st.counted || a->u[i] > a->u[st.imax]) st.imax = i;
      st.utotal += a->u[i];
    } else {
      if (!st.counted || a->s[i] < a->s[st.imin]) st.imin = i;
      if (!st.counted || a->s[i] > a->s[st.imax]) st.imax = i;
      st.utotal += (unsigned long long)a->s[i];
    }
    st.counted++;
  }
  return st;
}

/* 1 when positions and values make a list of pairs. */
static int outlier_pairs(const attr_data *pos, const attr_data *val)
{
  return pos && val && !pos->error[0] && !val->error[0] && pos->n == val->n &&
         (pos->kind == A_UINT || pos->kind == A_INT) && val->kind == A_FLOAT;
}

static unsigned long long position_at(const attr_data *pos, size_t i)
{
  return pos->kind == A_UINT ? pos->u[i] : (unsigned long long)pos->s[i];
}

/* ---- text ---------------------------------------------------------------- */

/* The scalar value of an integer attribute. */
static unsigned long long uint_value(const attr_data *x)
{
  return x->kind == A_UINT ? x->u[0] : (unsigned long long)x->s[0];
}

/* h5fz_ratio as the stored chunks give it: dataset bytes / chunk bytes. */
static double chunks_ratio(const h5fz_cli_chunk_totals *chunks)
{
  return chunks->stored_bytes ? (double)chunks->dataset_bytes / (double)chunks->stored_bytes : 0.0;
}

/* Does one attribute agree with the stored chunks? 1 yes, 0 no (it was
 * written for other chunks: the dataset was rewritten since), -1 nothing
 * to compare. The outlier lists can only be caught holding more outliers
 * than the chunks do (they leave out those in edge-chunk padding). */
static int attr_agrees(const attr_data *x, const h5fz_cli_chunk_totals *chunks)
{
  int integer = x->kind == A_UINT || x->kind == A_INT;
  if (!chunks->chunks || x->error[0] || !x->n) return -1;
  if (!strcmp(x->name, "h5fz_stored_bytes") && !x->array && integer) return uint_value(x) == chunks->stored_bytes;
  if (!strcmp(x->name, "h5fz_chunk_outliers") && integer) return array_stats(x).utotal == chunks->outliers;
  if (!strcmp(x->name, "h5fz_outliers_omitted") && !x->array && integer) return uint_value(x) == chunks->outliers;
  if (!strcmp(x->name, "h5fz_chunk_lists_omitted") && !x->array && integer) return uint_value(x) == chunks->chunks;
  if (!strcmp(x->name, "h5fz_ratio") && !x->array && x->kind == A_FLOAT && chunks->dataset_bytes) {
    double want = chunks_ratio(chunks);
    return fabs(x->f[0] - want) <= 1e-9 * fabs(want);
  }
  if ((!strcmp(x->name, "h5fz_outlier_positions") || !strcmp(x->name, "h5fz_outlier_values")) &&
      x->n > chunks->outliers)
    return 0;
  return -1;
}

/* -1: nothing to compare; 0: the attributes disagree with the stored
 * chunks (the dataset was rewritten after the dataset API wrote them); 1:
 * they agree. */
static int match_chunks(const attr_data *a, size_t n, const h5fz_cli_chunk_totals *chunks)
{
  int verdict = -1;
  for (size_t i = 0; i < n; i++) {
    int r = attr_agrees(&a[i], chunks);
    if (r == 0) return 0;
    if (r == 1) verdict = 1;
  }
  return verdict;
}

/* Written by the same h5fz_dataset_write as the rest, and shown stale with
 * them: h5fz_ratio, the outlier lists, h5fz_outliers_omitted. */
static int stale_with_the_rest(const char *name)
{
  return !strcmp(name, "h5fz_ratio") || !strcmp(name, "h5fz_outlier_positions") ||
         !strcmp(name, "h5fz_outlier_values") || !strcmp(name, "h5fz_outliers_omitted");
}

/* Is attribute a called stale, the set's verdict being m? */
static int is_stale(const attr_data *a, int m, const h5fz_cli_chunk_totals *chunks)
{
  int r = attr_agrees(a, chunks);
  return r == 0 || (m == 0 && r != 1 && stale_with_the_rest(a->name));
}

/* The text note of a stale attribute of the ratio, lists or omitted count. */
static void stale_note(const attr_data *a, int m, const h5fz_cli_chunk_totals *chunks)
{
  if (!is_stale(a, m, chunks)) return;
  if (!strcmp(a->name, "h5fz_ratio") && attr_agrees(a, chunks) == 0)
    printf(" (the stored chunks now give %.17g: the attributes are stale)", chunks_ratio(chunks));
  else if (!strcmp(a->name, "h5fz_chunk_lists_omitted") && attr_agrees(a, chunks) == 0)
    printf(" (the dataset now stores %llu chunks: the attributes are stale)", (unsigned long long)chunks->chunks);
  else if (attr_agrees(a, chunks) == 0)
    printf(" (the stored chunks now hold %llu outliers: the attributes are stale)",
           (unsigned long long)chunks->outliers);
  else
    printf(" (stale: the attributes no longer match the stored chunks)");
}

static void text_attr(const attr_data *a, const attr_data *pos, const attr_data *val,
                      const h5fz_cli_chunk_totals *chunks, int m)
{
  char v[64], w[64];
  printf("    %-24s ", a->name);
  if (a->error[0]) {
    printf("(%s)\n", a->error);
    return;
  }
  if (a->kind == A_OTHER || (a->n == 0 && (!a->array || a->kind == A_STRING))) {
    printf("%s, %zu element%s\n", a->type_name, a->n, a->n == 1 ? "" : "s");
    return;
  }
  if (a->kind == A_STRING) {
    if (a->n > 1)
      printf("%zu strings, first \"%s\"\n", a->n, a->text);
    else if (!a->text[0])
      printf("\"\"\n");
    else
      printf("%s\n", a->text);
    return;
  }
  if (!a->array) {
    printf("%s", element_text(a, 0, v, sizeof v));
    if (!strcmp(a->name, "h5fz_stored_bytes") && chunks->chunks) {
      if (a->kind == A_UINT && a->u[0] == chunks->stored_bytes)
        printf(" (= the stored chunks)");
      else
        printf(" (the stored chunks now hold %llu bytes: the attributes are stale)",
               (unsigned long long)chunks->stored_bytes);
    } else if (!strcmp(a->name, "h5fz_outliers_omitted")) {
      /* Neutral: the writer leaves the lists out when they would pass
       * H5FZ_ATTR_MAX_OUTLIERS or when the dataset's attribute storage
       * (compact: 64 KiB) cannot hold them; the attribute does not say
       * which. */
      printf(" outliers (the outlier lists were not stored as attributes: more than 2^20 "
             "outliers, or the dataset's attribute storage could not hold them)");
      stale_note(a, m, chunks);
    } else if (!strcmp(a->name, "h5fz_chunk_lists_omitted")) {
      printf(" chunks (the per-chunk arrays h5fz_chunk_abs_bound and h5fz_chunk_outliers were "
             "not stored as attributes: the dataset's attribute storage could not hold them)");
      stale_note(a, m, chunks);
    } else if (!strcmp(a->name, "h5fz_ratio")) {
      stale_note(a, m, chunks);
    }
    printf("\n");
    return;
  }
  stats st = array_stats(a);
  if (a == pos && outlier_pairs(pos, val)) {
    printf("%zu outliers (%s)", a->n, a->type_name);
    stale_note(a, m, chunks);
    printf("\n");
    return;
  }
  if (a == val && outlier_pairs(pos, val)) {
    size_t k = a->n < FIRST_OUTLIERS ? a->n : FIRST_OUTLIERS;
    printf("%zu values (%s)", a->n, a->type_name);
    stale_note(a, m, chunks);
    printf("\n");
    if (!a->n) return;
    printf("    %-24s %zu, first %zu (index -> value):", "outliers", a->n, k);
    for (size_t i = 0; i < k; i++)
      printf("%s %llu -> %s", i ? "," : "", position_at(pos, i), fmt_value(val->f[i], val->esize, v, sizeof v));
    printf("%s\n", k < a->n ? ", ..." : "");
    return;
  }
  if (!strcmp(a->name, "h5fz_chunk_outliers") && a->kind != A_FLOAT && a->n) {
    printf("%zu chunks, total %llu, max %s (chunk %zu)", a->n, st.utotal, element_text(a, st.imax, v, sizeof v),
           st.imax);
    if (chunks->chunks && st.utotal != chunks->outliers)
      printf(" (the stored chunks now hold %llu: the attributes are stale)", (unsigned long long)chunks->outliers);
    printf("\n");
    return;
  }
  printf("%zu %s", a->n, !strncmp(a->name, "h5fz_chunk_", 11) ? "chunks" : "values");
  if (st.counted)
    printf(", min %s, max %s", element_text(a, st.imin, v, sizeof v), element_text(a, st.imax, w, sizeof w));
  printf(" (%s)", a->type_name);
  stale_note(a, m, chunks);
  printf("\n");
}

/* ---- JSON ---------------------------------------------------------------- */

static void json_attr(const attr_data *a, const attr_data *pos, const attr_data *val)
{
  char v[64];
  h5fz_cli_json_string(stdout, a->name);
  printf(": ");
  if (a->error[0]) {
    printf("{\"error\": ");
    h5fz_cli_json_string(stdout, a->error);
    printf("}");
    return;
  }
  if (a->kind == A_OTHER || (a->n == 0 && (!a->array || a->kind == A_STRING))) {
    printf("{\"dtype\": ");
    h5fz_cli_json_string(stdout, a->type_name);
    printf(", \"length\": %zu}", a->n);
    return;
  }
  if (a->kind == A_STRING && !a->array) {
    h5fz_cli_json_string(stdout, a->text);
    return;
  }
  if (a->kind == A_STRING) {
    printf("{\"dtype\": \"string\", \"length\": %zu, \"first\": ", a->n);
    h5fz_cli_json_string(stdout, a->text);
    printf("}");
    return;
  }
  if (!a->array) {
    if (a->kind == A_FLOAT)
      json_value(a->f[0], a->esize);
    else
      printf("%s", element_text(a, 0, v, sizeof v));
    return;
  }
  printf("{\"dtype\": \"%s\", \"length\": %zu", a->type_name, a->n);
  if (outlier_pairs(pos, val) && (a == pos || a == val)) {
    size_t k = a->n < FIRST_OUTLIERS ? a->n : FIRST_OUTLIERS;
    printf(", \"first\": [");
    for (size_t i = 0; i < k; i++) {
      if (a == pos) {
        printf("%s%llu", i ? ", " : "", position_at(pos, i));
      } else {
        /* JSON has no NaN or Inf, and outliers are often just that: the
         * value is null then, and "text" always says what it is. */
        printf("%s{\"index\": %llu, \"value\": ", i ? ", " : "", position_at(pos, i));
        json_value(val->f[i], val->esize);
        printf(", \"text\": \"%s\"}", fmt_value(val->f[i], val->esize, v, sizeof v));
      }
    }
    printf("]}");
    return;
  }
  stats st = array_stats(a);
  if (st.counted) {
    printf(", \"min\": ");
    if (a->kind == A_FLOAT)
      json_value(a->f[st.imin], a->esize);
    else
      printf("%s", element_text(a, st.imin, v, sizeof v));
    printf(", \"max\": ");
    if (a->kind == A_FLOAT)
      json_value(a->f[st.imax], a->esize);
    else
      printf("%s", element_text(a, st.imax, v, sizeof v));
    printf(", \"max_index\": %zu", st.imax);
  }
  if (a->kind != A_FLOAT && strcmp(a->name, "h5fz_outlier_positions")) printf(", \"total\": %llu", st.utotal);
  printf("}");
}

/* ---- both ---------------------------------------------------------------- */

typedef struct {
  h5fz_cli_names *names;
  int failed;
} collect_state;

static herr_t collect(hid_t loc, const char *name, const H5A_info_t *info, void *data)
{
  collect_state *st = data;
  (void)loc;
  (void)info;
  if (strncmp(name, "h5fz_", 5)) return 0;
  if (h5fz_cli_names_add(st->names, name) < 0) {
    st->failed = 1;
    return -1;
  }
  return 0;
}

int h5fz_cli_print_attributes(hid_t dset, int json, const h5fz_cli_chunk_totals *chunks)
{
  h5fz_cli_names names = {NULL, 0, 0};
  collect_state st = {&names, 0};
  attr_data *attrs = NULL;
  const attr_data *pos = NULL, *val = NULL;
  size_t n = 0, n_known = sizeof known / sizeof known[0];
  hsize_t idx = 0;
  int m;

  if (H5Aiterate2(dset, H5_INDEX_NAME, H5_ITER_INC, &idx, collect, &st) < 0 || st.failed) {
    h5fz_cli_names_free(&names);
    if (json) printf(", \"attributes\": {}");
    return -1;
  }
  if (names.n) attrs = calloc(names.n, sizeof *attrs);
  if (names.n && !attrs) {
    h5fz_cli_names_free(&names);
    if (json) printf(", \"attributes\": {}");
    return -1;
  }
  /* The table's attributes in the table's order, then any other h5fz_*
   * attribute in name order. */
  for (size_t k = 0; k <= n_known; k++)
    for (size_t i = 0; i < names.n; i++) {
      int is_known = 0;
      for (size_t j = 0; j < n_known; j++)
        if (!strcmp(names.names[i], known[j])) is_known = 1;
      if (k < n_known ? strcmp(names.names[i], known[k]) != 0 : is_known) continue;
      read_attr(dset, names.names[i], &attrs[n]);
      if (!strcmp(names.names[i], "h5fz_outlier_positions")) pos = &attrs[n];
      if (!strcmp(names.names[i], "h5fz_outlier_values")) val = &attrs[n];
      n++;
    }
  m = match_chunks(attrs, n, chunks);
  if (json) {
    printf(", \"attributes\": {");
    for (size_t i = 0; i < n; i++) {
      printf("%s", i ? ", " : "");
      json_attr(&attrs[i], pos, val);
    }
    printf("}");
    if (m >= 0) printf(", \"attributes_match_chunks\": %s", m ? "true" : "false");
    if (m == 0) {
      int k = 0;
      printf(", \"stale_attributes\": [");
      for (size_t i = 0; i < n; i++)
        if (is_stale(&attrs[i], m, chunks)) {
          printf("%s", k++ ? ", " : "");
          h5fz_cli_json_string(stdout, attrs[i].name);
        }
      printf("]");
    }
  } else if (n) {
    printf("  attributes (h5fz_*, as the dataset API wrote them):\n");
    for (size_t i = 0; i < n; i++) text_attr(&attrs[i], pos, val, chunks, m);
  }
  for (size_t i = 0; i < n; i++) attr_free(&attrs[i]);
  free(attrs);
  h5fz_cli_names_free(&names);
  return (int)n;
}
