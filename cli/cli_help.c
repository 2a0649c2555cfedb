/*
 * cli_help.c - a command's --help text: the data of cli/help/CMD.txt,
 * embedded at build time, with the values only the program knows (the
 * filter id, the mode names, a default) filled in for their @NAME@.
 * Why data and not C strings: a help text is prose, edited as prose, and
 * one function prints every command's.
 */
#include <stdio.h>
#include <string.h>

#include "h5fz_cli.h"

void h5fz_cli_help_texts(size_t *count, const char *const **names, const char *const **texts); /* generated */

int h5fz_cli_print_help(FILE *out, const char *cmd, const char *const *vars)
{
  size_t count;
  const char *const *names, *const *texts;
  h5fz_cli_help_texts(&count, &names, &texts);
  char id[16]; /* FILTER_ID: every text may name it */
  snprintf(id, sizeof id, "%d", H5FZ_FILTER_ID);
  const size_t cl = strlen(cmd);
  for (size_t i = 0; i < count; i++) {
    if (strncmp(names[i], cmd, cl) || strcmp(names[i] + cl, ".txt")) continue;
    for (const char *p = texts[i]; *p;) {
      const char *at = strchr(p, '@'), *end = at ? strchr(at + 1, '@') : NULL;
      if (!end) {
        fputs(p, out);
        break;
      }
      fwrite(p, 1, (size_t)(at - p), out);
      const char *value = (size_t)(end - at - 1) == 9 && !strncmp(at + 1, "FILTER_ID", 9) ? id : NULL;
      for (const char *const *v = vars; v && v[0]; v += 2)
        if (strlen(v[0]) == (size_t)(end - at - 1) && !strncmp(v[0], at + 1, (size_t)(end - at - 1))) value = v[1];
      if (value) {
        fputs(value, out);
        p = end + 1;
      } else { /* not a name of ours: an @ of the text itself */
        fputc('@', out);
        p = at + 1;
      }
    }
    return 0;
  }
  fprintf(out, "h5fz %s: no help text (cli/help/%s.txt)\n", cmd, cmd);
  return -1;
}
