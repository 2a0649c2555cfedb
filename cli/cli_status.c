/* cli_status.c - library statuses to messages and exit statuses
 * (cli_status.h). */
#include <stdarg.h>
#include <stdio.h>

#include "cli_status.h"
#include "h5fz.h"

/* The last error's text (h5fz_cli_error, h5fz_cli_library_error). */
static char last_error[2048];

void h5fz_cli_note_error(const char *text) { snprintf(last_error, sizeof last_error, "%s", text); }

const char *h5fz_cli_last_error(void) { return last_error; }

int h5fz_cli_exit_status(int status) { return status == H5FZ_OK ? H5FZ_CLI_OK : H5FZ_CLI_USAGE; }

int h5fz_cli_library_error(const char *cmd, int status, const char *fmt, ...)
{
  char context[1024];
  const char *why = h5fz_last_error();
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(context, sizeof context, fmt, ap);
  va_end(ap);
  /* the library's messages are one line (no HDF5 stack text in them); kept for a JSON report */
  snprintf(last_error, sizeof last_error, "%s: %s", context, why && why[0] ? why : h5fz_status_name(status));
  fprintf(stderr, "h5fz %s: %s\n", cmd, last_error);
  return h5fz_cli_exit_status(status);
}
