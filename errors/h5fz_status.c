/* h5fz_status.c - status names and the thread-local last-error message
 * (h5fz_status.h, h5fz_fail.h). */
#include <stdarg.h>
#include <stdio.h>

#include "h5fz_fail.h"

static _Thread_local char last_error[512];

const char *h5fz_status_name(int status)
{
  switch (status) {
  case H5FZ_OK: return "ok";
  case H5FZ_ERR_ARG: return "invalid argument";
  case H5FZ_ERR_NOMEM: return "out of memory";
  case H5FZ_ERR_SPEC: return "invalid spec";
  case H5FZ_ERR_TRUNCATED: return "truncated chunk";
  case H5FZ_ERR_CORRUPT: return "corrupt chunk";
  case H5FZ_ERR_CHECKSUM: return "chunk checksum mismatch";
  case H5FZ_ERR_VERSION: return "unsupported chunk format version";
  case H5FZ_ERR_UNSUPPORTED: return "unsupported";
  case H5FZ_ERR_DEVICE: return "device error";
  case H5FZ_ERR_HDF5: return "HDF5 error";
  case H5FZ_ERR_PARSE: return "malformed file";
  case H5FZ_ERR_IO: return "cannot read file";
  default: return "unknown error";
  }
}

const char *h5fz_last_error(void) { return last_error; }

void h5fz_clear_error(void) { last_error[0] = '\0'; }

int h5fz_fail(int status, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(last_error, sizeof last_error, fmt, ap);
  va_end(ap);
  return status;
}
