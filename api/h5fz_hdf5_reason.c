/* h5fz_hdf5_reason.c - the innermost message of HDF5's error stack
 * (h5fz_hdf5_reason.h). */
#include <stdio.h>

#include <hdf5.h>

#include "h5fz_hdf5_reason.h"

typedef struct {
  char *buf;
  size_t len;
} innermost;

/* Upward walks start at the innermost frame: keep the first description. */
static herr_t keep_first(unsigned n, const H5E_error2_t *err, void *data)
{
  innermost *in = data;
  (void)n;
  if (in->buf[0] || !err->desc || !err->desc[0]) return 0;
  snprintf(in->buf, in->len, "%s", err->desc);
  return 0;
}

const char *h5fz_hdf5_innermost_reason(char *buf, size_t len)
{
  innermost in = {buf, len};
  if (len == 0) return buf;
  buf[0] = '\0';
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, keep_first, &in);
  return buf;
}
