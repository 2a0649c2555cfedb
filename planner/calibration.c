/*
 * calibration.c - the cache folder and measured figures stored beside the
 * JIT cache (calibration.txt), which override the roofline for the route.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner_internal.h"

int h5fz_planner_cache_dir(const char *dir, char *out, size_t out_len)
{
  const char *d = dir, *x = getenv("XDG_CACHE_HOME"), *h = getenv("HOME");
  int n;
  if (out == NULL || out_len == 0) return h5fz_fail(H5FZ_ERR_ARG, "h5fz_planner_cache_dir: NULL or empty buffer");
  if (d != NULL && d[0] != '\0')
    n = snprintf(out, out_len, "%s", d);
  else if (x != NULL && x[0] != '\0')
    n = snprintf(out, out_len, "%s/h5fz", x);
  else if (h != NULL && h[0] != '\0')
    n = snprintf(out, out_len, "%s/.cache/h5fz", h);
  else {
    out[0] = '\0';
    return h5fz_fail(H5FZ_ERR_ARG, "no cache folder: H5FZ_CACHE_DIR, XDG_CACHE_HOME and HOME are all unset");
  }
  return n > 0 && (size_t)n < out_len
             ? H5FZ_OK
             : h5fz_fail(H5FZ_ERR_ARG, "the cache folder's path does not fit %zu bytes", out_len);
}

static char *trim(char *s)
{
  char *e;
  while (*s == ' ' || *s == '\t' || *s == '\r') s++;
  e = s + strlen(s);
  while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r')) *--e = '\0';
  return s;
}

/* Split "a | b | rest" into three trimmed fields (in place). */
static int split3(char *s, char **a, char **b, char **rest)
{
  char *p1 = strchr(s, '|'), *p2;
  if (p1 == NULL || (p2 = strchr(p1 + 1, '|')) == NULL) return -1;
  *p1 = *p2 = '\0';
  *a = trim(s);
  *b = trim(p1 + 1);
  *rest = trim(p2 + 1);
  return 0;
}

/* "kernel_GBps=3000 overhead_us=25 cpu_GBps=2" into cal. */
static int apply_fields(char *rest, h5fz_calibration *cal)
{
  char *tok, *save = NULL;
  for (tok = strtok_r(rest, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
    char *eq = strchr(tok, '=');
    double v;
    if (eq == NULL) return -1;
    *eq = '\0';
    if (pl_parse_double(eq + 1, &v) != 0 || v <= 0.0) return -1;
    if (strcmp(tok, "kernel_GBps") == 0)
      cal->kernel_GBps = v;
    else if (strcmp(tok, "overhead_us") == 0)
      cal->overhead_us = v;
    else if (strcmp(tok, "cpu_GBps") == 0)
      cal->cpu_GBps = v;
    else
      return -1;
  }
  return 0;
}

static int matches(const char *pattern, const char *name)
{
  return strcmp(pattern, "*") == 0 || strcmp(pattern, name) == 0;
}

/* Next line of text into line[cap] without its comment; 0 at the end,
 * -1 if too long. */
static int next_line(const char **p, char *line, size_t cap)
{
  const char *b = *p, *e, *hash;
  if (*b == '\0') return 0;
  e = strchr(b, '\n');
  if (e == NULL) e = b + strlen(b);
  *p = *e ? e + 1 : e;
  hash = memchr(b, '#', (size_t)(e - b));
  if (hash != NULL) e = hash;
  if ((size_t)(e - b) >= cap) return -1;
  memcpy(line, b, (size_t)(e - b));
  line[e - b] = '\0';
  return 1;
}

static int lookup_text(const char *text, const char *path, const char *dev, const char *klass, h5fz_calibration *cal,
                       char *err, size_t err_len)
{
  const char *p = text;
  char line[1024], *a, *b, *rest;
  int r, n = 0;
  while ((r = next_line(&p, line, sizeof line)) != 0) {
    h5fz_calibration scratch = *cal;
    int hit;
    n++;
    if (r > 0 && trim(line)[0] == '\0') continue;
    if (r < 0 || split3(line, &a, &b, &rest) != 0) {
      return pl_fail(H5FZ_ERR_PARSE, err, err_len, "%s:%d: expected 'device | class | key=value ...'", path, n);
    }
    hit = matches(a, dev) && matches(b, klass);
    /* a line that does not match is still checked */
    if (apply_fields(rest, hit ? cal : &scratch) != 0) {
      return pl_fail(H5FZ_ERR_PARSE, err, err_len,
                     "%s:%d: bad field (kernel_GBps, overhead_us, cpu_GBps take "
                     "positive numbers)",
                     path, n);
    }
    if (hit) {
      cal->found = 1;
      cal->line = n;
    }
  }
  return H5FZ_OK;
}

int h5fz_calibration_lookup(const char *path, const char *device_name, const char *class_name, h5fz_calibration *cal,
                            char *err, size_t err_len)
{
  char dir[H5FZ_PLAN_PATH_MAX], def[H5FZ_PLAN_PATH_MAX + 32], *text;
  int r;
  if (cal == NULL || device_name == NULL || class_name == NULL)
    return pl_fail(H5FZ_ERR_ARG, err, err_len, "h5fz_calibration_lookup: NULL argument");
  memset(cal, 0, sizeof *cal);
  cal->kernel_GBps = cal->overhead_us = cal->cpu_GBps = -1.0;
  if (path == NULL) {
    if (h5fz_planner_cache_dir(NULL, dir, sizeof dir) != H5FZ_OK) {
      h5fz_clear_error();
      return H5FZ_OK; /* no cache folder: nothing calibrated */
    }
    snprintf(def, sizeof def, "%s/calibration.txt", dir);
    path = def;
  }
  pl_copy(cal->path, sizeof cal->path, path);
  r = pl_read_file(path, &text, err, err_len);
  if (r == H5FZ_ERR_IO) {
    if (err != NULL && err_len > 0) err[0] = '\0';
    h5fz_clear_error();
    return H5FZ_OK; /* no file: nothing calibrated */
  }
  if (r != H5FZ_OK) return r;
  r = lookup_text(text, path, device_name, class_name, cal, err, err_len);
  free(text);
  return r;
}
