/*
 * text_util.c - line splitting, number parsing, messages and hashing shared
 * by the description, registry and calibration readers.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner_internal.h"

void pl_msg(char *buf, size_t len, const char *fmt, ...)
{
  va_list ap;
  if (buf == NULL || len == 0) return;
  va_start(ap, fmt);
  vsnprintf(buf, len, fmt, ap);
  va_end(ap);
}

int pl_fail(int status, char *err, size_t err_len, const char *fmt, ...)
{
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  pl_copy(err, err_len, msg);
  return h5fz_fail(status, "%s", msg);
}

void pl_copy(char *dst, size_t len, const char *src)
{
  if (dst == NULL || len == 0) return;
  snprintf(dst, len, "%s", src ? src : "");
}

void pl_lines_init(pl_lines *it, const char *text)
{
  it->p = text ? text : "";
  it->line = 0;
}

/* Copy [b, e) trimmed into dst[cap]; -1 if it does not fit. */
static int copy_trimmed(char *dst, size_t cap, const char *b, const char *e)
{
  while (b < e && isspace((unsigned char)*b)) b++;
  while (e > b && isspace((unsigned char)e[-1])) e--;
  if ((size_t)(e - b) >= cap) return -1;
  memcpy(dst, b, (size_t)(e - b));
  dst[e - b] = '\0';
  return 0;
}

int pl_next_line(pl_lines *it, pl_kv *kv)
{
  while (*it->p != '\0') {
    const char *b = it->p, *e = strchr(b, '\n'), *hash, *eq;
    if (e == NULL) e = b + strlen(b);
    it->p = *e ? e + 1 : e;
    it->line++;
    hash = memchr(b, '#', (size_t)(e - b));
    if (hash != NULL) e = hash;
    kv->line = it->line;
    eq = memchr(b, '=', (size_t)(e - b));
    kv->has_eq = eq != NULL;
    if (eq != NULL) {
      if (copy_trimmed(kv->key, sizeof kv->key, b, eq) != 0) return -1;
      if (copy_trimmed(kv->value, sizeof kv->value, eq + 1, e) != 0) return -1;
    } else {
      if (copy_trimmed(kv->value, sizeof kv->value, b, e) != 0) return -1;
      if (kv->value[0] == '\0') continue;
      pl_copy(kv->key, sizeof kv->key, kv->value);
    }
    if (kv->key[0] == '\0' && !kv->has_eq) continue;
    return 1;
  }
  return 0;
}

int pl_parse_int(const char *s, long long lo, long long hi, long long *out)
{
  char *end;
  long long v;
  if (s == NULL || *s == '\0') return -1;
  errno = 0;
  v = strtoll(s, &end, 10);
  if (errno != 0 || *end != '\0' || v < lo || v > hi) return -1;
  *out = v;
  return 0;
}

int pl_parse_double(const char *s, double *out)
{
  char *end;
  double v;
  if (s == NULL || *s == '\0') return -1;
  errno = 0;
  v = strtod(s, &end);
  if (errno != 0 || *end != '\0' || v != v) return -1;
  *out = v;
  return 0;
}

int pl_parse_version(const char *s, int *major, int *minor)
{
  char tmp[32];
  char *dot;
  long long a, b = 0;
  if (s == NULL || strlen(s) >= sizeof tmp) return -1;
  pl_copy(tmp, sizeof tmp, s);
  dot = strchr(tmp, '.');
  if (dot != NULL) {
    *dot = '\0';
    if (pl_parse_int(dot + 1, 0, 99, &b) != 0) return -1;
  }
  if (pl_parse_int(tmp, 0, 999, &a) != 0) return -1;
  *major = (int)a;
  *minor = (int)b;
  return 0;
}

int pl_parse_arch(const char *s, int *arch)
{
  long long v;
  if (strncmp(s, "sm_", 3) == 0)
    s += 3;
  else if (strncmp(s, "compute_", 8) == 0)
    s += 8;
  /* arch-specific suffixes (sm_90a) are not planned for */
  if (pl_parse_int(s, 10, 999, &v) != 0) return -1;
  *arch = (int)v;
  return 0;
}

int pl_read_file(const char *path, char **out, char *err, size_t err_len)
{
  FILE *f;
  char *buf = NULL;
  size_t cap = 0, n = 0;
  *out = NULL;
  f = fopen(path, "rb");
  if (f == NULL) {
    return pl_fail(H5FZ_ERR_IO, err, err_len, "%s: cannot open: %s", path, strerror(errno));
  }
  for (;;) {
    size_t got;
    if (n + 4096 + 1 > cap) {
      size_t ncap = cap ? cap * 2 : 8192;
      char *nb = realloc(buf, ncap);
      if (nb == NULL) {
        free(buf);
        fclose(f);
        return pl_fail(H5FZ_ERR_NOMEM, err, err_len, "%s: out of memory", path);
      }
      buf = nb;
      cap = ncap;
    }
    got = fread(buf + n, 1, 4096, f);
    n += got;
    if (got < 4096) break;
  }
  if (ferror(f)) {
    free(buf);
    fclose(f);
    return pl_fail(H5FZ_ERR_IO, err, err_len, "%s: read error", path);
  }
  fclose(f);
  buf[n] = '\0';
  if (strlen(buf) != n) {
    free(buf);
    return pl_fail(H5FZ_ERR_PARSE, err, err_len, "%s: contains NUL bytes (not a text file)", path);
  }
  *out = buf;
  return H5FZ_OK;
}

uint64_t pl_fnv1a64(const void *data, size_t n)
{
  const unsigned char *p = data;
  uint64_t h = 0xcbf29ce484222325ull;
  size_t i;
  for (i = 0; i < n; i++) {
    h ^= p[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

void pl_out_init(pl_out *o, char *buf, size_t len)
{
  o->buf = buf;
  o->len = buf ? len : 0;
  o->used = 0;
  if (o->len > 0) o->buf[0] = '\0';
}

void pl_out_printf(pl_out *o, const char *fmt, ...)
{
  va_list ap;
  int n;
  char *dst = NULL;
  size_t room = 0;
  if (o->used < o->len) {
    dst = o->buf + o->used;
    room = o->len - o->used;
  }
  va_start(ap, fmt);
  n = vsnprintf(dst, room, fmt, ap);
  va_end(ap);
  if (n > 0) o->used += (size_t)n;
}

void pl_out_json_string(pl_out *o, const char *s)
{
  pl_out_printf(o, "\"");
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      pl_out_printf(o, "\\%c", c);
    else if (c == '\n')
      pl_out_printf(o, "\\n");
    else if (c == '\t')
      pl_out_printf(o, "\\t");
    else if (c < 0x20)
      pl_out_printf(o, "\\u%04x", c);
    else
      pl_out_printf(o, "%c", c);
  }
  pl_out_printf(o, "\"");
}

int pl_parse_file(const char *path, pl_parse_fn parse, void *out, char *err, size_t err_len)
{
  char *text;
  if (path == NULL || out == NULL) return pl_fail(H5FZ_ERR_ARG, err, err_len, "NULL argument");
  int r = pl_read_file(path, &text, err, err_len);
  if (r != H5FZ_OK) return r;
  r = parse(text, path, out, err, err_len);
  free(text);
  return r;
}
