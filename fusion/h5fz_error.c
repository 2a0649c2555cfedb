/* h5fz_error.c - the version string and the warnings said once per kind
 * (h5fz_error.h); status names and the thread's message: errors/. */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "h5fz_error.h"
#include "h5fz_settings.h"

const char *h5fz_version(void) { return H5FZ_VERSION_STRING; }

void h5fz_log_once(h5fz_log_kind kind, const char *fmt, ...)
{
  static atomic_int logged[H5FZ_LOG_KINDS];
  if ((unsigned)kind >= H5FZ_LOG_KINDS) return;
  if (h5fz_settings_quiet() || atomic_exchange(&logged[kind], 1)) return;
  va_list ap;
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
}
