/*
 * planner_internal.h - helpers shared by the planner's files; not installed.
 */
#ifndef H5FZ_PLANNER_INTERNAL_H
#define H5FZ_PLANNER_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "h5fz_fail.h"
#include "h5fz_planner.h"

/* printf into a reason buffer; no-op when buf is NULL or len is 0. For
 * reasons that are not failures (a class refused, a device absent). */
void pl_msg(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* A failure: the message goes to the thread's last error (h5fz_fail) and,
 * when err is not NULL, into err[err_len] as well; returns status. */
int pl_fail(int status, char *err, size_t err_len, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Copy src into dst[len], cut and NUL-terminated. */
void pl_copy(char *dst, size_t len, const char *src);

/* One "key = value" line of a text file. */
typedef struct {
  int line;         /* 1-based line number */
  char key[64];     /* trimmed, lower case as written */
  char value[1024]; /* trimmed, comment removed */
  int has_eq;       /* 1 when the line had '=' */
} pl_kv;

/* Iterator over the lines of a NUL-terminated text. pl_next_line skips blank
 * and comment-only lines and returns 1 with *kv filled, 0 at the end, -1 when
 * a key or value is too long (kv->line says where). A line without '=' keeps
 * its whole trimmed text in key and value (has_eq = 0). */
typedef struct {
  const char *p;
  int line;
} pl_lines;
void pl_lines_init(pl_lines *it, const char *text);
int pl_next_line(pl_lines *it, pl_kv *kv);

/* Strict number parsers: the whole string must be consumed. 0 on success. */
int pl_parse_int(const char *s, long long lo, long long hi, long long *out);
int pl_parse_double(const char *s, double *out);
/* "9.0" or "9" -> major 9 minor 0. "12.8" -> 12, 8. */
int pl_parse_version(const char *s, int *major, int *minor);
/* Parse an arch token: "90", "sm_90", "compute_90" -> 90. */
int pl_parse_arch(const char *s, int *arch);

/* Read a whole file into a malloc'd NUL-terminated buffer (caller frees).
 * H5FZ_OK, H5FZ_ERR_IO, H5FZ_ERR_NOMEM or H5FZ_ERR_PARSE (NUL bytes). */
int pl_read_file(const char *path, char **out, char *err, size_t err_len);

/* A parser of a whole text (origin names it in messages) into *out. */
typedef int (*pl_parse_fn)(const char *text, const char *origin, void *out, char *err, size_t err_len);

/* Read the file at path and parse it with parse into out, the file's path
 * as the origin: the one way the planner loads a description or a
 * registry from a file. H5FZ_ERR_ARG for a NULL path or out, else
 * pl_read_file's or parse's status. */
int pl_parse_file(const char *path, pl_parse_fn parse, void *out, char *err, size_t err_len);

/* FNV-1a 64-bit over n bytes. */
uint64_t pl_fnv1a64(const void *data, size_t n);

/* Output buffer with snprintf semantics across many appends. */
typedef struct {
  char *buf;
  size_t len;
  size_t used; /* characters the full text needs so far */
} pl_out;
void pl_out_init(pl_out *o, char *buf, size_t len);
void pl_out_printf(pl_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Append s as a JSON string literal (with quotes). */
void pl_out_json_string(pl_out *o, const char *s);

/* Name and lowest arch of one H5FZ_FEAT_* flag; NULL if unknown. */
const char *pl_feature_name(unsigned flag, int *min_arch);

#endif
