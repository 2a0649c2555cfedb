/*
 * cli_json.c - JSON strings and numbers for the subcommands' --json output.
 */
#include "h5fz_cli.h"

#include <math.h>
#include <stdio.h>

/* The length (2..4) of the well-formed UTF-8 sequence of a non-ASCII
 * character at p (Unicode's table 3-7: no overlong forms, no surrogates,
 * nothing above U+10FFFF), or 0 when p does not start one. */
static size_t utf8_sequence_length(const unsigned char *p)
{
  unsigned char lo = 0x80, hi = 0xbf;
  size_t n;
  if (p[0] >= 0xc2 && p[0] <= 0xdf)
    n = 2;
  else if (p[0] >= 0xe0 && p[0] <= 0xef) {
    n = 3;
    if (p[0] == 0xe0) lo = 0xa0;
    if (p[0] == 0xed) hi = 0x9f;
  } else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
    n = 4;
    if (p[0] == 0xf0) lo = 0x90;
    if (p[0] == 0xf4) hi = 0x8f;
  } else
    return 0;
  if (p[1] < lo || p[1] > hi) return 0; /* also the terminating NUL */
  for (size_t i = 2; i < n; i++)
    if (p[i] < 0x80 || p[i] > 0xbf) return 0;
  return n;
}

void h5fz_cli_json_string(FILE *out, const char *s)
{
  fputc('"', out);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    size_t n;
    if (*p == '"' || *p == '\\')
      fprintf(out, "\\%c", *p);
    else if (*p < 0x20)
      fprintf(out, "\\u%04x", *p);
    else if (*p < 0x80)
      fputc(*p, out);
    else if ((n = utf8_sequence_length(p)) != 0) {
      fwrite(p, 1, n, out);
      p += n - 1;
    } else
      fputs("\\ufffd", out); /* not UTF-8 (an HDF5 name is any bytes): JSON must be */
  }
  fputc('"', out);
}

void h5fz_cli_json_number(FILE *out, double v)
{
  if (isfinite(v))
    fprintf(out, "%.17g", v);
  else
    fputs("null", out);
}
