/*
 * cli_util.c - argument parsing and HDF5 helpers shared by the subcommands.
 */
#include "h5fz_cli.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

char *h5fz_cli_one_line(char *s) {
  char *w = s;
  int blank = 0;
  for (const char *r = s; *r; r++) {
    if (isspace((unsigned char)*r)) {
      blank = 1;
      continue;
    }
    /* "... 2026\n, name" reads better as "... 2026, name". */
    if (blank && w != s && *r != ',' && *r != ';') *w++ = ' ';
    blank = 0;
    *w++ = *r;
  }
  *w = '\0';
  return s;
}

void h5fz_cli_error(const char *cmd, const char *fmt, ...) {
  va_list ap;
  char msg[2048];
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  /* One line, always: HDF5 messages embed newlines (a time string). */
  fprintf(stderr, "h5fz %s: %s\n", cmd, h5fz_cli_one_line(msg));
}

const char *h5fz_cli_type_name(hid_t type, char *buf, size_t len) {
  size_t size = type >= 0 ? H5Tget_size(type) : 0;
  if (len == 0) return buf;
  switch (type >= 0 ? H5Tget_class(type) : H5T_NO_CLASS) {
    case H5T_FLOAT: snprintf(buf, len, "float%zu", 8 * size); break;
    case H5T_INTEGER:
      snprintf(buf, len, "%sint%zu", H5Tget_sign(type) == H5T_SGN_NONE ? "u" : "", 8 * size);
      break;
    case H5T_STRING: snprintf(buf, len, "string"); break;
    case H5T_COMPOUND: snprintf(buf, len, "compound (%zu bytes)", size); break;
    case H5T_ENUM: snprintf(buf, len, "enum (%zu bytes)", size); break;
    case H5T_ARRAY: snprintf(buf, len, "array (%zu bytes)", size); break;
    case H5T_BITFIELD: snprintf(buf, len, "bitfield (%zu bytes)", size); break;
    case H5T_OPAQUE: snprintf(buf, len, "opaque (%zu bytes)", size); break;
    case H5T_VLEN: snprintf(buf, len, "variable-length"); break;
    case H5T_REFERENCE: snprintf(buf, len, "reference"); break;
    default: snprintf(buf, len, "unknown type"); break;
  }
  return buf;
}

int h5fz_cli_is_float_type(hid_t type) {
  size_t size = H5Tget_size(type);
  return H5Tget_class(type) == H5T_FLOAT && (size == 4 || size == 8);
}

int h5fz_cli_same_file(const char *a, const char *b) {
  struct stat sa, sb;
  char *ra, *rb;
  int same = 0;
  if (stat(a, &sa) == 0 && stat(b, &sb) == 0)
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  /* b may not exist yet: compare the canonical paths of what exists. */
  ra = realpath(a, NULL);
  rb = realpath(b, NULL);
  if (ra && rb) same = !strcmp(ra, rb);
  free(ra);
  free(rb);
  return same;
}

int h5fz_cli_parse_dims(const char *text, hsize_t *dims, int max_rank, int *rank) {
  const char *p = text;
  int r = 0;
  if (!text || !*text) return -1;
  for (;;) {
    char *end;
    unsigned long long v;
    /* strtoull would accept a sign or blanks; an extent is digits only. */
    if (*p < '0' || *p > '9') return -1;
    errno = 0;
    v = strtoull(p, &end, 10);
    if (errno || v == 0 || r >= max_rank) return -1;
    dims[r++] = (hsize_t)v;
    if (*end == '\0') break;
    if (*end != 'x' && *end != 'X' && *end != ',') return -1;
    p = end + 1;
  }
  *rank = r;
  return 0;
}

void h5fz_cli_format_dims(const hsize_t *dims, int rank, char *buf, size_t len) {
  size_t used = 0;
  if (len == 0) return;
  buf[0] = '\0';
  for (int i = 0; i < rank && used < len; i++) {
    int n = snprintf(buf + used, len - used, "%s%llu", i ? "x" : "",
                     (unsigned long long)dims[i]);
    if (n < 0) break;
    used += (size_t)n;
  }
}

int h5fz_cli_parse_double(const char *text, double *out) {
  char *end;
  double v;
  if (!text || !*text) return -1;
  errno = 0;
  v = strtod(text, &end);
  if (errno || *end != '\0' || !isfinite(v)) return -1;
  *out = v;
  return 0;
}

int h5fz_cli_names_add(h5fz_cli_names *list, const char *name) {
  char *copy;
  if (list->n == list->cap) {
    size_t cap = list->cap ? 2 * list->cap : 16;
    char **grown = realloc(list->names, cap * sizeof *grown);
    if (!grown) return -1;
    list->names = grown;
    list->cap = cap;
  }
  copy = malloc(strlen(name) + 1);
  if (!copy) return -1;
  strcpy(copy, name);
  list->names[list->n++] = copy;
  return 0;
}

void h5fz_cli_names_free(h5fz_cli_names *list) {
  for (size_t i = 0; i < list->n; i++) free(list->names[i]);
  free(list->names);
  list->names = NULL;
  list->n = list->cap = 0;
}

static int is_float_dataset(hid_t obj) {
  hid_t type;
  int yes;
  if (H5Iget_type(obj) != H5I_DATASET) return 0;
  type = H5Dget_type(obj);
  if (type < 0) return 0;
  yes = H5Tget_class(type) == H5T_FLOAT;
  H5Tclose(type);
  return yes;
}

typedef struct {
  h5fz_cli_names *list;
  int failed;
} visit_state;

static herr_t visit_link(hid_t group, const char *name, const H5L_info_t *info, void *data) {
  visit_state *st = data;
  hid_t obj;
  char path[4096];
  /* Soft and external links may dangle or leave the file; hard links reach
   * every object of the file. */
  if (info->type != H5L_TYPE_HARD) return 0;
  obj = H5Oopen(group, name, H5P_DEFAULT);
  if (obj < 0) return 0;
  if (is_float_dataset(obj)) {
    snprintf(path, sizeof path, "/%s", name);
    if (h5fz_cli_names_add(st->list, path) < 0) {
      st->failed = 1;
      H5Oclose(obj);
      return -1;
    }
  }
  H5Oclose(obj);
  return 0;
}

int h5fz_cli_list_float_datasets(hid_t file, h5fz_cli_names *list) {
  visit_state st = {list, 0};
  if (H5Lvisit(file, H5_INDEX_NAME, H5_ITER_INC, visit_link, &st) < 0 || st.failed)
    return -1;
  return 0;
}

int h5fz_cli_find_filter(hid_t dcpl, unsigned *flags, unsigned *cd, size_t cap,
                         size_t *n_cd) {
  int n = H5Pget_nfilters(dcpl);
  for (int i = 0; i < n; i++) {
    size_t n_words = cap;
    char name[64];
    unsigned config;
    H5Z_filter_t id = H5Pget_filter2(dcpl, (unsigned)i, flags, &n_words, cd,
                                     sizeof name, name, &config);
    if (id == H5FZ_FILTER_ID) {
      /* HDF5 reports the full count even when it exceeds cap. */
      *n_cd = n_words < cap ? n_words : cap;
      return i;
    }
  }
  return -1;
}

void h5fz_cli_json_string(FILE *out, const char *s) {
  fputc('"', out);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\')
      fprintf(out, "\\%c", *p);
    else if (*p < 0x20)
      fprintf(out, "\\u%04x", *p);
    else
      fputc(*p, out);
  }
  fputc('"', out);
}

void h5fz_cli_json_number(FILE *out, double v) {
  if (isfinite(v))
    fprintf(out, "%.17g", v);
  else
    fputs("null", out);
}

void h5fz_cli_quiet_hdf5(void) { H5Eset_auto2(H5E_DEFAULT, NULL, NULL); }

typedef struct {
  char *buf;
  size_t len;
  size_t used;
} reason_state;

static herr_t collect_reason(unsigned n, const H5E_error2_t *err, void *data) {
  reason_state *st = data;
  int w;
  (void)n;
  if (!err->desc || !*err->desc || st->used + 1 >= st->len) return 0;
  w = snprintf(st->buf + st->used, st->len - st->used, "%s%s", st->used ? "; " : "",
               err->desc);
  if (w > 0) st->used += (size_t)w;
  if (st->used >= st->len) st->used = st->len - 1;
  return 0;
}

const char *h5fz_cli_hdf5_reason(char *buf, size_t len) {
  reason_state st = {buf, len, 0};
  if (len == 0) return buf;
  buf[0] = '\0';
  /* H5E_WALK_UPWARD starts at the innermost frame: the library (or the
   * filter) function where the error began. */
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, collect_reason, &st);
  return h5fz_cli_one_line(buf);
}

void h5fz_cli_bad_option(const char *cmd, int c, char **argv) {
  const char *arg = optind > 0 ? argv[optind - 1] : "";
  if (c == ':')
    h5fz_cli_error(cmd, "option '%s' needs a value", arg);
  else if (optopt && optopt != '?')
    h5fz_cli_error(cmd, "unknown option '-%c' (see h5fz %s --help)", optopt, cmd);
  else
    h5fz_cli_error(cmd, "unknown option '%s' (see h5fz %s --help)", arg, cmd);
}
