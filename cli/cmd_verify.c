/*
 * cmd_verify.c - `h5fz verify ORIG COMP`: does a compressed file hold what
 * the original held, within the error bound? The check every user of a
 * lossy filter should be able to run in one line.
 */
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "h5fz.h"
#include "cli_input.h"
#include "cli_space.h"
#include "h5fz_cli.h"

static const char *const cmd = "verify";

static void help(FILE *out, const char *modes)
{
  const char *const vars[] = {"MODES", modes, NULL};
  (void)h5fz_cli_print_help(out, cmd, vars);
}

typedef struct {
  const char *name;
  char error[640]; /* non-empty: the dataset could not be compared */
  char shape[256];
  char dtype[64];
  uint64_t n;
  uint64_t n_finite, n_nan, n_inf;
  double min, max; /* finite range of the original */
  double bound, max_err, psnr;
  int nan_match, inf_match, filter_found;
  int is_float;                /* a type h5fz compresses (float32, float64) */
  int chunked, scalar;         /* layout of the compressed dataset (scalar: not a simple dataspace) */
  const char *unfiltered_why;  /* why h5fz compress leaves it unfiltered (cli_space.h), or NULL */
  int dim_scale;               /* a dimension scale (netCDF coordinates and dimensions) */
  uint64_t chunks, unfiltered; /* allocated chunks; those h5fz skipped */
  uint64_t raw_bytes, stored_bytes;
  double ratio;
} dataset_report;

/* Reads a whole dataset converted to double, which holds every float32 and
 * float64 value exactly, NaN payload aside; tname (64 bytes) receives its
 * type's name (h5fz_cli_type_name), which the doubles no longer show. */

/* 1 when dset's pipeline holds the h5fz filter and this process's HDF5
 * cannot load it (no plugin on HDF5_PLUGIN_PATH). */
static int needs_missing_plugin(hid_t dset)
{
  hid_t dcpl = H5Dget_create_plist(dset);
  int uses = 0;
  if (dcpl >= 0) {
    unsigned flags;
    H5E_BEGIN_TRY { uses = H5Pget_filter_by_id2(dcpl, H5FZ_FILTER_ID, &flags, NULL, NULL, 0, NULL, NULL) >= 0; }
    H5E_END_TRY;
    H5Pclose(dcpl);
  }
  return uses && H5Zfilter_avail(H5FZ_FILTER_ID) <= 0;
}

static double *read_doubles(hid_t file, const char *name, hsize_t *dims, int *rank, hsize_t *n, char tname[64],
                            char shape[256], dataset_report *r)
{
  hid_t dset = H5Dopen2(file, name, H5P_DEFAULT), space = -1;
  double *buf = NULL;
  char why[400];
  if (dset < 0) {
    snprintf(r->error, sizeof r->error, "cannot open: %s", h5fz_cli_hdf5_reason(why, sizeof why));
    return NULL;
  }
  hid_t type = H5Dget_type(dset);
  H5T_class_t cls = type < 0 ? H5T_NO_CLASS : H5Tget_class(type);
  h5fz_cli_type_name(type, tname, 64);
  if (type >= 0) H5Tclose(type);
  if (cls != H5T_FLOAT && cls != H5T_INTEGER) {
    /* compound, string, enum, ...: HDF5 cannot convert it to numbers, and
     * h5fz never compresses it (float32/float64 only) */
    snprintf(r->error, sizeof r->error,
             "%s is not a numeric type: not compressed by h5fz (float32/float64 only), "
             "nothing to verify",
             tname);
    H5Dclose(dset);
    return NULL;
  }
  space = H5Dget_space(dset);
  h5fz_cli_space_shape(space, shape, 256);
  *rank = H5Sget_simple_extent_ndims(space);
  if (*rank < 0 || H5Sget_simple_extent_dims(space, dims, NULL) < 0) {
    snprintf(r->error, sizeof r->error, "cannot read the shape");
    goto done;
  }
  *n = (hsize_t)H5Sget_simple_extent_npoints(space);
  buf = malloc(*n ? *n * sizeof *buf : 1);
  if (!buf) {
    snprintf(r->error, sizeof r->error, "out of memory (%llu elements)", (unsigned long long)*n);
    goto done;
  }
  if (H5Dread(dset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) {
    h5fz_cli_hdf5_reason(why, sizeof why);
    if (needs_missing_plugin(dset)) /* HDF5's own words for it end deep in its stack */
      snprintf(r->error, sizeof r->error,
               "read failed: the h5fz filter (id %d) is not available: set HDF5_PLUGIN_PATH to the folder "
               "of libh5fz.so (HDF5: %s)",
               H5FZ_FILTER_ID, why);
    else
      snprintf(r->error, sizeof r->error, "read failed: %s", why);
    free(buf);
    buf = NULL;
  }
done:
  H5Sclose(space);
  H5Dclose(dset);
  return buf;
}

/* count_unfiltered's tally. */
typedef struct {
  int pos;
  dataset_report *r;
} unfiltered_walk;

static int count_chunk(const h5fz_cli_chunk *c, void *data)
{
  unfiltered_walk *w = data;
  if (c->error) return 0; /* not located or not read: its mask is unknown */
  w->r->chunks++;
  if ((c->filter_mask >> w->pos) & 1u) w->r->unfiltered++;
  return 0;
}

/* Counts the allocated chunks of dset and those stored without the filter
 * at pipeline position pos (bit pos of the chunk's filter mask set: an
 * optional filter that failed or refused the chunk). One pass over the
 * chunk grid (h5fz_cli_walk_chunks), near-linear in the chunks. */
static void count_unfiltered(hid_t dset, int pos, dataset_report *r)
{
  unfiltered_walk w = {pos, r};
  hsize_t n = 0;
  h5fz_cli_walk_chunks(dset, 0, count_chunk, &w, &n);
}

static void describe_compressed(hid_t file, const char *name, dataset_report *r)
{
  hid_t dset = H5Dopen2(file, name, H5P_DEFAULT);
  hid_t dcpl, type, space;
  unsigned flags, cd[H5FZ_CD_MAX];
  size_t n_cd;
  int pos;
  if (dset < 0) return;
  dcpl = H5Dget_create_plist(dset);
  type = H5Dget_type(dset);
  space = H5Dget_space(dset);
  pos = h5fz_cli_find_filter(dcpl, &flags, cd, H5FZ_CD_MAX, &n_cd);
  r->filter_found = pos >= 0;
  r->chunked = H5Pget_layout(dcpl) == H5D_CHUNKED;
  r->scalar = H5Sget_simple_extent_type(space) != H5S_SIMPLE;
  r->unfiltered_why = h5fz_cli_space_unfiltered_reason(space);
  r->is_float = h5fz_cli_is_float_type(type);
  r->dim_scale = h5fz_cli_is_dimension_scale(dset);
  if (r->chunked && pos >= 0) count_unfiltered(dset, pos, r);
  r->raw_bytes = r->n * H5Tget_size(type);
  h5fz_cli_type_name(type, r->dtype, sizeof r->dtype);
  r->stored_bytes = H5Dget_storage_size(dset);
  /* nothing stored (an empty or never-written dataset): no ratio, not 0 */
  r->ratio = r->stored_bytes ? (double)r->raw_bytes / (double)r->stored_bytes : NAN;
  H5Sclose(space);
  H5Tclose(type);
  H5Pclose(dcpl);
  H5Dclose(dset);
}

static void finite_range(const double *a, hsize_t n, dataset_report *r)
{
  r->min = INFINITY;
  r->max = -INFINITY;
  for (hsize_t i = 0; i < n; i++) {
    if (isnan(a[i])) {
      r->n_nan++;
    } else if (isinf(a[i])) {
      r->n_inf++;
    } else {
      r->n_finite++;
      if (a[i] < r->min) r->min = a[i];
      if (a[i] > r->max) r->max = a[i];
    }
  }
}

/* Errors over the elements finite in the original, in the units of mode's
 * bound (h5fz_element_error: the one element check, which `h5fz compress`
 * makes too); a finite value decoded as NaN or Inf counts as an infinite
 * error. NaN and Inf are counted apart (nan_match, inf_match), by the same
 * rule: a NaN comes back as a NaN, an infinity as itself. The PSNR is of the
 * absolute errors in every mode. */
static void compare(const double *a, const double *b, hsize_t n, unsigned mode, dataset_report *r)
{
  /* errors are summed in units of the larger magnitude of the range's
   * ends, so that neither their squares nor the range overflow (float64
   * values near 1e300 gave -inf dB) */
  double scale = fmax(fabs(r->min), fabs(r->max));
  if (!(scale > 0.0) || !isfinite(scale)) scale = 1.0;
  double sq = 0.0, range = r->max / scale - r->min / scale;
  r->max_err = 0.0;
  r->nan_match = r->inf_match = 1;
  for (hsize_t i = 0; i < n; i++) {
    if (isnan(a[i]) != isnan(b[i])) r->nan_match = 0;
    if ((isinf(a[i]) || isinf(b[i])) && !(isnan(a[i]) || isnan(b[i])) && a[i] != b[i]) r->inf_match = 0;
    if (isfinite(a[i])) {
      double e = fabs(a[i] - b[i]), m = h5fz_element_error(mode, a[i], b[i]);
      if (isnan(e)) e = INFINITY;
      if (!(m <= r->max_err)) r->max_err = m; /* a NaN (unknown mode) sticks */
      sq += (e / scale) * (e / scale);
    }
  }
  if (r->n_finite == 0 || sq == 0.0)
    r->psnr = INFINITY;
  else
    r->psnr = 20.0 * log10(range) - 10.0 * log10(sq / (double)r->n_finite);
}

typedef struct {
  h5fz_mode_info mode; /* the bound's mode (one option per row of the mode table) */
  double bound;        /* its bound (0 when the mode takes none) */
  int require_filter, json;
} verify_options;

static void check_dataset(hid_t orig, hid_t comp, const verify_options *o, dataset_report *r)
{
  hsize_t dims_a[H5S_MAX_RANK], dims_b[H5S_MAX_RANK], n_a = 0, n_b = 0;
  int rank_a = 0, rank_b = 0;
  double *a, *b;

  char type_a[64], type_b[64], shape_b[256];
  a = read_doubles(orig, r->name, dims_a, &rank_a, &n_a, type_a, r->shape, r);
  if (!a) return;
  b = read_doubles(comp, r->name, dims_b, &rank_b, &n_b, type_b, shape_b, r);
  if (!b) {
    free(a);
    return;
  }
  if (strcmp(r->shape, shape_b) || rank_a != rank_b || memcmp(dims_a, dims_b, (size_t)rank_a * sizeof dims_a[0]) != 0) {
    snprintf(r->error, sizeof r->error, "shape %s in the original, %s in the compressed file", r->shape, shape_b);
  } else if (strcmp(type_a, type_b)) { /* values read as doubles would hide it (a tester: float32 against int32) */
    snprintf(r->error, sizeof r->error, "type %s in the original, %s in the compressed file", type_a, type_b);
  } else {
    r->n = n_a;
    finite_range(a, n_a, r);
    /* a bound relative to the range: the whole original dataset's here */
    r->bound = o->mode.range_relative ? o->bound * (r->n_finite ? r->max - r->min : 0.0) : o->bound;
    compare(a, b, n_a, (unsigned)o->mode.mode, r);
    describe_compressed(comp, r->name, r);
  }
  free(a);
  free(b);
}

/* Did h5fz really compress the dataset: in the pipeline and applied to
 * every allocated chunk. A dataset that h5fz compress leaves unfiltered
 * because of its shape (scalar or null: cannot be chunked, so no filter can
 * ever apply; one fixed element: not worth a chunk; the one rule of
 * cli_space.h) is not held against the file by --require-filter.
 * Nor a dimension scale: netCDF-4's coordinate variables and dimension
 * datasets, which are meant to stay exact (h5fz compress keeps them
 * lossless) and which netCDF itself stores contiguous. */
static int filter_applied(const dataset_report *r) { return r->filter_found && r->unfiltered == 0; }

static int filter_ok(const dataset_report *r, const verify_options *o)
{
  return !o->require_filter || filter_applied(r) || r->unfiltered_why || r->dim_scale;
}

static int report_ok(const dataset_report *r, const verify_options *o)
{
  return !r->error[0] && r->max_err <= r->bound && r->nan_match && r->inf_match && filter_ok(r, o);
}

/* The filter column of the text report. */
static const char *filter_text(const dataset_report *r, const verify_options *o, char *buf, size_t len)
{
  const char *missing = o->require_filter ? "MISSING" : "none";
  if (filter_applied(r))
    snprintf(buf, len, "h5fz");
  else if (r->scalar)
    snprintf(buf, len, "none (%s: not chunked, cannot be compressed)", r->unfiltered_why);
  else if (r->unfiltered_why)
    snprintf(buf, len, "none (%s: h5fz compress leaves it unchanged, not required)", r->unfiltered_why);
  else if (r->dim_scale)
    snprintf(buf, len, "none (dimension scale: coordinates stay exact, not required)");
  else if (r->filter_found)
    snprintf(buf, len, "h5fz %s (%llu of %llu chunks stored unfiltered)",
             o->require_filter ? "NOT APPLIED" : "not applied", (unsigned long long)r->unfiltered,
             (unsigned long long)r->chunks);
  else if (!r->is_float)
    snprintf(buf, len, "%s (%s: not compressed by h5fz, which takes float32/float64)", missing, r->dtype);
  else if (!r->chunked)
    snprintf(buf, len, "%s (not chunked, so not compressed)", missing);
  else
    snprintf(buf, len, "%s", missing);
  return buf;
}

static void print_text(const dataset_report *r, const verify_options *o)
{
  char filter[160];
  if (r->error[0]) {
    printf("%s: ERROR %s\n", r->name, r->error);
    return;
  }
  char ratio[32] = "- (nothing stored)";
  if (!isnan(r->ratio)) snprintf(ratio, sizeof ratio, "%.3f", r->ratio);
  printf("%s: %s %s  bound %.6g  max_err %.6g  psnr %.2f dB  ratio %s  nan %s  inf %s  "
         "filter %s  -> %s\n",
         r->name, r->dtype, r->shape, r->bound, r->max_err, r->psnr, ratio, r->nan_match ? "match" : "MISMATCH",
         r->inf_match ? "match" : "MISMATCH", filter_text(r, o, filter, sizeof filter),
         report_ok(r, o) ? "ok" : "FAIL");
}

static void print_json(const dataset_report *r, const verify_options *o, int first)
{
  printf("%s\n    {\"dataset\": ", first ? "" : ",");
  h5fz_cli_json_string(stdout, r->name);
  if (r->error[0]) {
    printf(", \"ok\": false, \"error\": ");
    h5fz_cli_json_string(stdout, r->error);
    printf("}");
    return;
  }
  printf(", \"dtype\": \"%s\", \"shape\": \"%s\", \"elements\": %llu, \"nan_count\": %llu, "
         "\"inf_count\": %llu, \"min\": ",
         r->dtype, r->shape, (unsigned long long)r->n, (unsigned long long)r->n_nan, (unsigned long long)r->n_inf);
  h5fz_cli_json_number(stdout, r->min);
  printf(", \"max\": ");
  h5fz_cli_json_number(stdout, r->max);
  printf(", \"bound\": ");
  h5fz_cli_json_number(stdout, r->bound);
  printf(", \"max_abs_error\": ");
  h5fz_cli_json_number(stdout, r->max_err);
  printf(", \"psnr_db\": ");
  h5fz_cli_json_number(stdout, r->psnr);
  printf(", \"nan_match\": %s, \"inf_match\": %s, \"raw_bytes\": %llu, \"stored_bytes\": %llu, "
         "\"ratio\": ",
         r->nan_match ? "true" : "false", r->inf_match ? "true" : "false", (unsigned long long)r->raw_bytes,
         (unsigned long long)r->stored_bytes);
  h5fz_cli_json_number(stdout, r->ratio);
  printf(", \"left_unfiltered\": ");
  if (r->unfiltered_why)
    h5fz_cli_json_string(stdout, r->unfiltered_why);
  else
    printf("null");
  printf(", \"filter_found\": %s, \"filter_applied\": %s, \"chunked\": %s, "
         "\"scalar\": %s, \"dimension_scale\": %s, \"chunks\": %llu, \"unfiltered_chunks\": %llu, "
         "\"ok\": %s}",
         r->filter_found ? "true" : "false", filter_applied(r) ? "true" : "false", r->chunked ? "true" : "false",
         r->scalar ? "true" : "false", r->dim_scale ? "true" : "false", (unsigned long long)r->chunks,
         (unsigned long long)r->unfiltered, report_ok(r, o) ? "true" : "false");
}

static int open_pair(const char *a, const char *b, hid_t *fa, hid_t *fb)
{
  *fa = h5fz_cli_open_input(cmd, a);
  if (*fa < 0) return -1;
  *fb = h5fz_cli_open_input(cmd, b);
  if (*fb < 0) {
    H5Fclose(*fa);
    return -1;
  }
  return 0;
}

static void free_lists(h5fz_cli_names *names, h5fz_cli_names *skipped)
{
  h5fz_cli_names_free(names);
  h5fz_cli_names_free(skipped);
}

/* One option per row of the mode table: its name with '-' for '_'
 * (--pw-rel), taking a bound when the mode takes one. */
#define MAX_MODE_OPTIONS 16
#define MODE_OPTION 256 /* getopt's value of mode option i: MODE_OPTION + i */
typedef struct {
  struct option options[MAX_MODE_OPTIONS + 5];
  char names[MAX_MODE_OPTIONS][32];
  char list[MAX_MODE_OPTIONS * 34]; /* "--abs, --rel, ...", for messages */
} verify_option_table;

static void mode_options(verify_option_table *t)
{
  static const struct option fixed[] = {{"dataset", required_argument, NULL, 'd'},
                                        {"require-filter", no_argument, NULL, 'f'},
                                        {"json", no_argument, NULL, 'j'},
                                        {"help", no_argument, NULL, 'h'},
                                        {NULL, 0, NULL, 0}};
  h5fz_mode_info m;
  size_t n = 0, len = 0;
  t->list[0] = '\0';
  for (; n < MAX_MODE_OPTIONS && h5fz_mode_at(n, &m) == H5FZ_OK; n++) {
    snprintf(t->names[n], sizeof t->names[n], "%s", m.name);
    for (char *c = t->names[n]; *c; c++)
      if (*c == '_') *c = '-';
    t->options[n] =
        (struct option){t->names[n], m.takes_bound ? required_argument : no_argument, NULL, MODE_OPTION + (int)n};
    len += (size_t)snprintf(t->list + len, sizeof t->list - len, "%s--%s", n ? ", " : "", t->names[n]);
  }
  memcpy(t->options + n, fixed, sizeof fixed);
}

/* The bound of mode option i (optarg: its value, or NULL) into *o: a bound
 * its mode takes (h5fz_spec_validate's rule) or 0, which checks that every
 * value comes back exactly. -1 with the message printed when it is not. */
static int take_mode_option(int i, const char *optarg, const verify_option_table *t, verify_options *o)
{
  h5fz_spec spec;
  h5fz_mode_at((size_t)i, &o->mode);
  o->bound = 0.0;
  if (!o->mode.takes_bound) return 0;
  if (h5fz_cli_parse_double(optarg, &o->bound) < 0) {
    h5fz_cli_error(cmd, "bad --%s '%s' (a finite number)", t->names[i], optarg);
    return -1;
  }
  h5fz_spec_default(&spec);
  spec.mode = o->mode.mode;
  spec.bound = o->bound;
  if (o->bound != 0 && h5fz_spec_validate(&spec) != H5FZ_OK) {
    h5fz_cli_error(cmd, "bad --%s '%s': %s", t->names[i], optarg, h5fz_last_error());
    return -1;
  }
  return 0;
}

int h5fz_cmd_verify(int argc, char **argv)
{
  verify_option_table t;
  verify_options o;
  int bounds = 0, c, rc = H5FZ_CLI_OK, read_error = 0;
  h5fz_cli_names names = {NULL, 0, 0}, skipped = {NULL, 0, 0};
  hid_t fa, fb;

  memset(&o, 0, sizeof o);
  mode_options(&t);
  optind = 1;
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":h", t.options, NULL)) != -1) {
    switch (c) {
    case 'd':
      if (h5fz_cli_names_add(&names, optarg) < 0) goto usage;
      break;
    case 'f': o.require_filter = 1; break;
    case 'j': o.json = 1; break;
    case 'h':
      help(stdout, t.list);
      free_lists(&names, &skipped);
      return H5FZ_CLI_OK;
    default:
      if (c >= MODE_OPTION && c < MODE_OPTION + MAX_MODE_OPTIONS) {
        if (take_mode_option(c - MODE_OPTION, optarg, &t, &o) < 0) goto usage;
        bounds++;
        break;
      }
      h5fz_cli_bad_option(cmd, c, argv);
      goto usage;
    }
  }
  if (bounds > 1) { /* a second --abs would otherwise silently replace the first */
    h5fz_cli_error(cmd, "give the bound once: exactly one of %s (got %d)", t.list, bounds);
    goto usage;
  }
  if (argc - optind != 2 || bounds != 1) {
    h5fz_cli_error(cmd, "need ORIG.h5, COMPRESSED.h5 and exactly one of %s", t.list);
    goto usage;
  }
  h5fz_cli_quiet_hdf5();
  if (open_pair(argv[optind], argv[optind + 1], &fa, &fb) < 0) {
    free_lists(&names, &skipped);
    return H5FZ_CLI_USAGE;
  }
  /* the whole file: its floating-point datasets; the others are named as skipped */
  if (names.n == 0 && h5fz_cli_list_float_datasets(fa, &names, &skipped) < 0) {
    h5fz_cli_error(cmd, "cannot list the datasets of %s", argv[optind]);
    rc = H5FZ_CLI_USAGE;
  } else if (names.n == 0) {
    h5fz_cli_error(cmd, "%s has no floating-point dataset", argv[optind]);
    rc = H5FZ_CLI_USAGE;
  }
  if (rc == H5FZ_CLI_OK) {
    int failed = 0;
    if (o.json) printf("{\"datasets\": [");
    for (size_t i = 0; i < names.n; i++) {
      dataset_report r;
      memset(&r, 0, sizeof r);
      r.name = names.names[i];
      check_dataset(fa, fb, &o, &r);
      if (o.json)
        print_json(&r, &o, i == 0);
      else
        print_text(&r, &o);
      if (r.error[0])
        read_error = 1;
      else if (!report_ok(&r, &o))
        failed = 1;
    }
    rc = read_error ? H5FZ_CLI_USAGE : failed ? H5FZ_CLI_FAIL : H5FZ_CLI_OK;
    if (o.json) {
      printf("\n  ], \"skipped_not_float\": [");
      for (size_t i = 0; i < skipped.n; i++) {
        printf("%s", i ? ", " : "");
        h5fz_cli_json_string(stdout, skipped.names[i]);
      }
      printf("], \"ok\": %s}\n", rc == H5FZ_CLI_OK ? "true" : "false");
    } else if (skipped.n) {
      printf("skipped %zu dataset%s that %s not floating point (h5fz compresses float32/float64 only):", skipped.n,
             skipped.n > 1 ? "s" : "", skipped.n > 1 ? "are" : "is");
      for (size_t i = 0; i < skipped.n; i++) printf(" %s", skipped.names[i]);
      printf("\n");
    }
  }
  H5Fclose(fa);
  H5Fclose(fb);
  free_lists(&names, &skipped);
  return rc;

usage:
  h5fz_cli_usage_hint(cmd);
  free_lists(&names, &skipped);
  return H5FZ_CLI_USAGE;
}
