/* cli_space.c - a dataspace's shape in words and compress's rule for
 * datasets too small to filter (cli_space.h). */
#include <stdio.h>

#include "cli_space.h"
#include "h5fz_cli.h"

const char *h5fz_cli_space_shape(hid_t space, char *buf, size_t len)
{
  hsize_t dims[H5S_MAX_RANK];
  if (len == 0) return buf;
  switch (space < 0 ? H5S_NO_CLASS : H5Sget_simple_extent_type(space)) {
  case H5S_SCALAR: snprintf(buf, len, "scalar"); break;
  case H5S_NULL: snprintf(buf, len, "null"); break;
  case H5S_SIMPLE: {
    int rank = H5Sget_simple_extent_dims(space, dims, NULL);
    if (rank < 0)
      snprintf(buf, len, "?");
    else
      h5fz_cli_format_dims(dims, rank, buf, len);
    break;
  }
  default: snprintf(buf, len, "?");
  }
  return buf;
}

int h5fz_cli_space_can_grow(hid_t space)
{
  hsize_t dims[H5S_MAX_RANK], max[H5S_MAX_RANK];
  if (space < 0 || H5Sget_simple_extent_type(space) != H5S_SIMPLE) return 0;
  int rank = H5Sget_simple_extent_dims(space, dims, max);
  for (int d = 0; d < rank; d++)
    if (max[d] == H5S_UNLIMITED || max[d] > dims[d]) return 1;
  return 0;
}

const char *h5fz_cli_space_unfiltered_reason(hid_t space)
{
  H5S_class_t cls = space < 0 ? H5S_NO_CLASS : H5Sget_simple_extent_type(space);
  if (cls == H5S_SCALAR) return "scalar";
  if (cls == H5S_NULL) return "null dataspace (no elements)";
  if (cls != H5S_SIMPLE) return "dataspace HDF5 cannot describe";
  /* an extendable dataset is compressed whatever it holds now: the rows
   * appended later would otherwise be stored without the filter */
  if (H5Sget_simple_extent_npoints(space) < 2 && !h5fz_cli_space_can_grow(space)) return "fewer than 2 elements";
  return NULL;
}
