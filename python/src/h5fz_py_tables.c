/*
 * h5fz_py_tables.c - the modes and ops for h5fz.get_config(), read from the
 * codec (fusion/h5fz.h) so that Python keeps no list of its own.
 */
#include <string.h>

#include "h5fz.h"
#include "h5fz_py_tables.h"

int h5fzpy_mode_id_at(size_t i, int *id, char *name, size_t cap)
{
  h5fz_mode_info m;
  if (!id || !name || !cap || h5fz_mode_at(i, &m) != H5FZ_OK || strlen(m.name) >= cap) return H5FZ_ERR_ARG;
  memcpy(name, m.name, strlen(m.name) + 1);
  *id = (int)m.mode;
  return H5FZ_OK;
}

int h5fzpy_op_at(size_t i, unsigned *id, const char **name, const char **kind, const char **summary)
{
  return h5fz_op_at(i, id, name, kind, summary);
}
