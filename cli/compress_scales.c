/*
 * compress_scales.c - dimension scales attached again in the copy made by
 * `h5fz compress` (compress_scales.h).
 */
#include "compress_scales.h"

#include <stdio.h>
#include <string.h>

#include <hdf5_hl.h>

/* The failure message goes to the state's err (the first one is kept);
 * WHY() is HDF5's reason, into a local buffer `why`. */
#define FAIL(state, ...) h5fz_cli_keep_error((state)->err, (state)->err_len, __VA_ARGS__)
#define WHY() h5fz_cli_hdf5_why(why, sizeof why)

typedef struct {
  hid_t out; /* the output file */
  char *err;
  size_t err_len;
} scale_state;

typedef struct {
  scale_state *st;
  hid_t out_dset;
  const char *path;
} scale_walk;

static herr_t attach_one(hid_t did, unsigned dim, hid_t scale, void *data)
{
  scale_walk *w = data;
  char name[4096], why[400];
  hid_t out_scale;
  (void)did;
  if (H5Iget_name(scale, name, sizeof name) <= 0) {
    FAIL(w->st, "%s: dimension %u: cannot name its scale", w->path, dim);
    return -1;
  }
  out_scale = H5Dopen2(w->st->out, name, H5P_DEFAULT);
  if (out_scale < 0 || H5DSattach_scale(w->out_dset, out_scale, dim) < 0) {
    FAIL(w->st, "%s: dimension %u: cannot attach the scale %s: %s", w->path, dim, name, WHY());
    if (out_scale >= 0) H5Dclose(out_scale);
    return -1;
  }
  H5Dclose(out_scale);
  return 0;
}

static int drop_attribute(scale_state *st, const char *path, const char *attr)
{
  hid_t d = H5Dopen2(st->out, path, H5P_DEFAULT);
  int rc = 0;
  char why[400];
  if (d < 0) return FAIL(st, "%s: cannot open the copy: %s", path, WHY());
  if (H5Aexists(d, attr) > 0 && H5Adelete(d, attr) < 0)
    rc = FAIL(st, "%s: cannot remove the copied %s: %s", path, attr, WHY());
  H5Dclose(d);
  return rc;
}

int h5fz_compress_attach_scales(hid_t in_file, hid_t out_file, const h5fz_cli_names *with_scales,
                                const h5fz_cli_names *scales, char *err, size_t err_len)
{
  scale_state state = {out_file, err, err_len}, *st = &state;
  for (size_t i = 0; i < scales->n; i++)
    if (drop_attribute(st, scales->names[i], "REFERENCE_LIST") < 0) return -1;
  for (size_t i = 0; i < with_scales->n; i++)
    if (drop_attribute(st, with_scales->names[i], "DIMENSION_LIST") < 0) return -1;
  for (size_t i = 0; i < with_scales->n; i++) {
    const char *path = with_scales->names[i];
    hid_t in = H5Dopen2(in_file, path, H5P_DEFAULT), out = H5Dopen2(out_file, path, H5P_DEFAULT);
    hid_t space = in < 0 ? -1 : H5Dget_space(in);
    int rank = space < 0 ? -1 : H5Sget_simple_extent_ndims(space), rc = 0;
    scale_walk w = {st, out, path};
    if (in < 0 || out < 0 || rank < 0) rc = FAIL(st, "%s: cannot open it to attach its scales", path);
    for (int dim = 0; rc == 0 && dim < rank; dim++) {
      int n = H5DSget_num_scales(in, (unsigned)dim);
      int idx = 0;
      if (n > 0 && H5DSiterate_scales(in, (unsigned)dim, &idx, attach_one, &w) < 0) rc = -1;
    }
    if (space >= 0) H5Sclose(space);
    if (in >= 0) H5Dclose(in);
    if (out >= 0) H5Dclose(out);
    if (rc < 0) return FAIL(st, "%s: cannot attach its dimension scales", path);
  }
  return 0;
}
