/*
 * h5fz_py_tables.c - the modes and ops for h5fz.get_config(), read from the
 * codec (fusion/h5fz.h) so that Python keeps no list of its own.
 */
#include <string.h>

#include "h5fz.h"
#include "h5fz_py_tables.h"

int h5fzpy_mode_at(size_t i, int *id, char *name, size_t cap)
{
  if (!id || !name || !cap || i > H5FZ_MODE_LOSSLESS) return H5FZ_ERR_ARG;
  /* The keyword is the one the spec formatter writes for the mode (its
   * name table is the codec's only one), cut before the bound. */
  h5fz_spec spec;
  char text[256];
  if (h5fz_spec_default(&spec)) return H5FZ_ERR_ARG;
  spec.mode = (h5fz_mode)i;
  spec.bound = spec.mode == H5FZ_MODE_LOSSLESS ? 0.0 : 0.5;
  if (h5fz_spec_format(&spec, text, sizeof text)) return H5FZ_ERR_ARG;
  size_t n = strcspn(text, "= ");
  if (n >= cap) return H5FZ_ERR_ARG;
  memcpy(name, text, n);
  name[n] = '\0';
  *id = (int)i;
  return H5FZ_OK;
}

int h5fzpy_op_at(size_t i, unsigned *id, const char **name, const char **kind, const char **summary)
{
  return h5fz_op_at(i, id, name, kind, summary);
}
