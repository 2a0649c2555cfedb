/*
 * compress_attrs.c - the attributes of an object onto its copy in another
 * file, for `h5fz compress` (compress_attrs.h).
 */
#include "compress_attrs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h5fz_cli.h"

/* The failure message goes to the state's err (the first one is kept);
 * WHY() is HDF5's reason, into a local buffer `why`. */
#define FAIL(state, ...) h5fz_cli_keep_error((state)->err, (state)->err_len, __VA_ARGS__)
#define WHY() h5fz_cli_hdf5_why(why, sizeof why)

/* The dimension-scale bookkeeping attributes hold object references, which
 * cannot be copied between files: they are rebuilt by attach_scales. */
static int is_scale_reference_attribute(const char *name)
{
  return !strcmp(name, "DIMENSION_LIST") || !strcmp(name, "REFERENCE_LIST");
}

typedef struct {
  hid_t to;
  const char *path;
  char *err;
  size_t err_len;
} attr_copy;

static herr_t copy_one_attribute(hid_t from, const char *name, const H5A_info_t *ainfo, void *data)
{
  attr_copy *c = data;
  hid_t attr = -1, ftype = -1, mtype = -1, space = -1, acpl = -1, copy = -1;
  void *buf = NULL;
  hssize_t n;
  size_t bytes;
  int rc = -1, read_ok = 0;
  char why[400];
  (void)ainfo;
  if (is_scale_reference_attribute(name)) return 0;
  attr = H5Aopen(from, name, H5P_DEFAULT);
  ftype = attr < 0 ? -1 : H5Aget_type(attr);
  space = attr < 0 ? -1 : H5Aget_space(attr);
  if (attr < 0 || ftype < 0 || space < 0) {
    FAIL(c, "%s: cannot open attribute '%s': %s", c->path, name, WHY());
    goto done;
  }
  if (H5Tdetect_class(ftype, H5T_REFERENCE) > 0) {
    FAIL(c,
         "%s: attribute '%s' holds object references, which h5fz compress cannot copy "
         "between files (only dimension scales' are rebuilt)",
         c->path, name);
    goto done;
  }
  mtype = H5Tget_native_type(ftype, H5T_DIR_DEFAULT);
  n = H5Sget_simple_extent_npoints(space);
  bytes = mtype < 0 || n < 0 ? 0 : H5Tget_size(mtype) * (size_t)n;
  buf = calloc(bytes ? bytes : 1, 1);
  acpl = H5Aget_create_plist(attr);
  if (mtype < 0 || n < 0 || !buf || acpl < 0 || (bytes && H5Aread(attr, mtype, buf) < 0)) {
    FAIL(c, "%s: cannot read attribute '%s': %s", c->path, name, WHY());
    goto done;
  }
  read_ok = bytes > 0;
  copy = H5Acreate2(c->to, name, ftype, space, acpl, H5P_DEFAULT);
  if (copy < 0 || (bytes && H5Awrite(copy, mtype, buf) < 0)) {
    FAIL(c, "%s: cannot write attribute '%s': %s", c->path, name, WHY());
    goto done;
  }
  rc = 0;
done:
  /* variable-length data (strings, also inside compounds) was allocated by
   * the read; reclaiming a buffer without any is a no-op */
  if (read_ok) h5fz_cli_reclaim(mtype, space, buf);
  free(buf);
  H5FZ_CLI_CLOSE(copy, acpl, mtype, space, ftype, attr);
  return rc;
}

/* 1 if the object's creation property list tracks attribute creation order. */
static int tracks_attribute_order(hid_t obj)
{
  hid_t cpl = -1;
  unsigned flags = 0;
  switch (H5Iget_type(obj)) {
  case H5I_GROUP: cpl = H5Gget_create_plist(obj); break;
  case H5I_DATASET: cpl = H5Dget_create_plist(obj); break;
  default: return 0;
  }
  if (cpl < 0) return 0;
  if (H5Pget_attr_creation_order(cpl, &flags) < 0) flags = 0;
  H5Pclose(cpl);
  return (flags & H5P_CRT_ORDER_TRACKED) != 0;
}

int h5fz_compress_copy_attributes(hid_t from, hid_t to, const char *path, char *err, size_t err_len)
{
  attr_copy c = {to, path, err, err_len};
  hsize_t idx = 0;
  H5_index_t order = tracks_attribute_order(from) ? H5_INDEX_CRT_ORDER : H5_INDEX_NAME;
  if (H5Aiterate2(from, order, H5_ITER_INC, &idx, copy_one_attribute, &c) < 0) {
    char why[400];
    return FAIL(&c, "%s: cannot copy its attributes: %s", path, WHY());
  }
  return 0;
}
