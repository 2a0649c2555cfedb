/*
 * cli_json.c - JSON strings and numbers for the subcommands' --json output.
 */
#include "h5fz_cli.h"

#include <math.h>
#include <stdio.h>

void h5fz_cli_json_string(FILE *out, const char *s)
{
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

void h5fz_cli_json_number(FILE *out, double v)
{
  if (isfinite(v))
    fprintf(out, "%.17g", v);
  else
    fputs("null", out);
}
