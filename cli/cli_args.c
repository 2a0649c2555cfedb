/*
 * cli_args.c - the subcommands' argument values: dims ("50x100x100"),
 * numbers, lists of names, a spec given as several words, whether two
 * paths are one file, and the default chunk shape.
 */
#include "h5fz_cli.h"
#include "cli_status.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int h5fz_cli_same_file(const char *a, const char *b)
{
  struct stat sa, sb;
  char *ra, *rb;
  int same = 0;
  if (stat(a, &sa) == 0 && stat(b, &sb) == 0) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  /* b may not exist yet: compare the canonical paths of what exists. */
  ra = realpath(a, NULL);
  rb = realpath(b, NULL);
  if (ra && rb) same = !strcmp(ra, rb);
  free(ra);
  free(rb);
  return same;
}

int h5fz_cli_parse_dims(const char *text, hsize_t *dims, int max_rank, int *rank)
{
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

void h5fz_cli_format_dims(const hsize_t *dims, int rank, char *buf, size_t len)
{
  size_t used = 0;
  if (len == 0) return;
  buf[0] = '\0';
  for (int i = 0; i < rank && used < len; i++) {
    int n = snprintf(buf + used, len - used, "%s%llu", i ? "x" : "", (unsigned long long)dims[i]);
    if (n < 0) break;
    used += (size_t)n;
  }
}

int h5fz_cli_parse_double(const char *text, double *out)
{
  char *end;
  double v;
  if (!text || !*text) return -1;
  errno = 0;
  v = strtod(text, &end);
  if (errno || *end != '\0' || !isfinite(v)) return -1;
  *out = v;
  return 0;
}

int h5fz_cli_names_add(h5fz_cli_names *list, const char *name)
{
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

void h5fz_cli_names_free(h5fz_cli_names *list)
{
  for (size_t i = 0; i < list->n; i++) free(list->names[i]);
  free(list->names);
  list->names = NULL;
  list->n = list->cap = 0;
}

void h5fz_cli_default_chunk(const hsize_t *dims, int rank, size_t elem, size_t target, hsize_t *chunk)
{
  hsize_t inner = elem;
  for (int i = rank - 1; i >= 0; i--) {
    if (inner * dims[i] <= target) {
      chunk[i] = dims[i];
      inner *= dims[i];
    } else {
      hsize_t fit = target / inner, pieces;
      if (fit == 0) fit = 1;
      pieces = (dims[i] + fit - 1) / fit;
      chunk[i] = (dims[i] + pieces - 1) / pieces;
      for (int j = i - 1; j >= 0; j--) chunk[j] = 1;
      return;
    }
  }
}

h5fz_dtype h5fz_cli_parse_dtype(const char *s)
{
  if (!strcmp(s, "f32") || !strcmp(s, "float32")) return H5FZ_DTYPE_F32;
  if (!strcmp(s, "f64") || !strcmp(s, "float64")) return H5FZ_DTYPE_F64;
  return H5FZ_DTYPE_UNKNOWN;
}

/* argv[*i] as option o: 1 if it is ("--name", "--name=V", "--name V", the
 * value then taken, *i moved past it), else 0. */
static int take_option(const h5fz_cli_word_option *o, int argc, char **argv, int *i)
{
  const char *a = argv[*i];
  size_t n = strlen(o->name);
  if (strncmp(a, o->name, n) != 0 || (a[n] != '\0' && !(o->takes_value && a[n] == '='))) return 0;
  if (!o->takes_value)
    *o->flag = 1;
  else if (a[n] == '=')
    *o->value = a + n + 1;
  else
    *o->value = *i + 1 < argc ? argv[++*i] : "";
  return 1;
}

char *h5fz_cli_spec_words(const char *cmd, int argc, char **argv, const h5fz_cli_word_option *opts, int *status)
{
  char **words = malloc((size_t)argc * sizeof *words), *text = NULL;
  int n_words = 0, only_words = 0, known = 0;
  *status = H5FZ_CLI_USAGE;
  if (!words) {
    h5fz_cli_error(cmd, "out of memory");
    return NULL;
  }
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (only_words || strncmp(a, "-", 1) != 0) {
      words[n_words++] = argv[i];
      continue;
    }
    if (!strcmp(a, "--")) {
      only_words = 1;
      continue;
    }
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      *status = H5FZ_CLI_OK;
      free(words);
      return NULL;
    }
    known = 0;
    for (const h5fz_cli_word_option *o = opts; o->name && !known; o++) known = take_option(o, argc, argv, &i);
    if (known) continue;
    if (strncmp(a, "--", 2) != 0) { /* "-" or "->": a spec word */
      words[n_words++] = argv[i];
      continue;
    }
    char list[256] = "";
    for (const h5fz_cli_word_option *o = opts; o->name; o++)
      snprintf(list + strlen(list), sizeof list - strlen(list), "%s, ", o->name);
    h5fz_cli_error(cmd, "unknown option '%s' (options: %s--help)", a, list);
    h5fz_cli_usage_hint(cmd);
    free(words);
    return NULL;
  }
  if (n_words == 0) {
    h5fz_cli_error(cmd, "missing SPEC (e.g. \"abs=1e-3\")");
    h5fz_cli_usage_hint(cmd);
  } else if (!(text = h5fz_cli_join_words(n_words, words, 0))) {
    h5fz_cli_error(cmd, "out of memory");
  } else {
    *status = H5FZ_CLI_OK;
  }
  free(words);
  return text;
}

char *h5fz_cli_join_words(int argc, char **argv, int first)
{
  size_t len = 1;
  char *text;
  for (int i = first; i < argc; i++) len += strlen(argv[i]) + 1;
  text = malloc(len);
  if (!text) return NULL;
  text[0] = '\0';
  for (int i = first; i < argc; i++) {
    if (i > first) strcat(text, " ");
    strcat(text, argv[i]);
  }
  return text;
}
