/*
 * cli_messages.c - how the subcommands speak: one-line errors and warnings,
 * usage hints, and HDF5's reason for a failure taken from its error stack.
 */
#include "h5fz_cli.h"

#include <ctype.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

char *h5fz_cli_one_line(char *s)
{
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

void h5fz_cli_error(const char *cmd, const char *fmt, ...)
{
  va_list ap;
  char msg[2048];
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  /* One line, always: HDF5 messages embed newlines (a time string). */
  fprintf(stderr, "h5fz %s: %s\n", cmd, h5fz_cli_one_line(msg));
  h5fz_cli_note_error(msg); /* for a JSON report (h5fz_cli_last_error) */
}

void h5fz_cli_spec_caution(const char *cmd, const h5fz_spec *spec)
{
  char text[320];
  if (h5fz_spec_caution(spec, text, sizeof text)) fprintf(stderr, "h5fz %s: warning: %s\n", cmd, text);
}

/* HDF5 calls it where it would print the stack; the stack stays for the
 * command to read (h5fz_cli_hdf5_reason). */
static herr_t leave_stack_to_the_command(hid_t stack, void *data)
{
  (void)stack;
  (void)data;
  return 0;
}

/* A printer that prints nothing, not none: the filter says a refusal on
 * stderr itself when it finds no printer (for netCDF's tools, which print
 * no stack), and every command says that reason in its own line too, so
 * with none a refused H5Dcreate was said twice (from-raw, compress). */
void h5fz_cli_quiet_hdf5(void) { H5Eset_auto2(H5E_DEFAULT, leave_stack_to_the_command, NULL); }

typedef struct {
  char *buf;
  size_t len;
  size_t used;
  int filter_alone; /* keep only an innermost entry of the filter's */
} reason_state;

static herr_t collect_reason(unsigned n, const H5E_error2_t *err, void *data)
{
  reason_state *st = data;
  int w;
  if (n == 0 && st->filter_alone) st->filter_alone = err->desc && !strncmp(err->desc, "h5fz:", 5);
  if (n > 0 && st->filter_alone) return 0;
  if (!err->desc || !*err->desc || st->used + 1 >= st->len) return 0;
  w = snprintf(st->buf + st->used, st->len - st->used, "%s%s", st->used ? "; " : "", err->desc);
  if (w > 0) st->used += (size_t)w;
  if (st->used >= st->len) st->used = st->len - 1;
  return 0;
}

static const char *stack_reason(char *buf, size_t len, int filter_alone)
{
  reason_state st = {buf, len, 0, filter_alone};
  if (len == 0) return buf;
  buf[0] = '\0';
  /* H5E_WALK_UPWARD starts at the innermost frame: the library (or the
   * filter) function where the error began. */
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, collect_reason, &st);
  return h5fz_cli_one_line(buf);
}

const char *h5fz_cli_hdf5_reason(char *buf, size_t len) { return stack_reason(buf, len, 0); }

const char *h5fz_cli_hdf5_filter_reason(char *buf, size_t len) { return stack_reason(buf, len, 1); }

void h5fz_cli_usage_hint(const char *cmd) { fprintf(stderr, "h5fz %s: see `h5fz %s --help`\n", cmd, cmd); }

void h5fz_cli_bad_option(const char *cmd, int c, char **argv)
{
  const char *arg = optind > 0 ? argv[optind - 1] : "";
  if (c == ':')
    h5fz_cli_error(cmd, "option '%s' needs a value", arg);
  else if (optopt && optopt != '?')
    h5fz_cli_error(cmd, "unknown option '-%c'", optopt);
  else
    h5fz_cli_error(cmd, "unknown option '%s'", arg);
}

int h5fz_cli_keep_error(char *err, size_t len, const char *fmt, ...)
{
  va_list ap;
  if (err[0]) return -1;
  va_start(ap, fmt);
  vsnprintf(err, len, fmt, ap);
  va_end(ap);
  return -1;
}

const char *h5fz_cli_hdf5_why(char *buf, size_t len)
{
  h5fz_cli_hdf5_reason(buf, len);
  if (!buf[0]) snprintf(buf, len, "HDF5 gave no reason");
  return buf;
}
