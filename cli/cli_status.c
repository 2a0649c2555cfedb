/* cli_status.c - library statuses to messages and exit statuses
 * (cli_status.h). */
#include <stdarg.h>
#include <stdio.h>

#include "cli_status.h"
#include "h5fz.h"

int h5fz_cli_exit_status(int status) { return status == H5FZ_OK ? H5FZ_CLI_OK : H5FZ_CLI_USAGE; }

int h5fz_cli_library_error(const char *cmd, int status, const char *fmt, ...)
{
  char context[1024];
  const char *why = h5fz_last_error();
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(context, sizeof context, fmt, ap);
  va_end(ap);
  /* the library's messages are one line (no HDF5 stack text in them) */
  fprintf(stderr, "h5fz %s: %s: %s\n", cmd, context, why && why[0] ? why : h5fz_status_name(status));
  return h5fz_cli_exit_status(status);
}
