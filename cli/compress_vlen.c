/*
 * compress_vlen.c - variable-length datasets copied by value
 * (compress_vlen.h).
 */
#include "compress_vlen.h"

#include <stdlib.h>

#include "h5fz_cli.h"

int h5fz_compress_has_variable_data(hid_t type)
{
  H5T_class_t cls = H5Tget_class(type);
  int found = 0;
  if (cls == H5T_VLEN) return 1;
  if (cls == H5T_STRING) return H5Tis_variable_str(type) > 0;
  if (cls == H5T_COMPOUND) {
    int n = H5Tget_nmembers(type);
    for (int i = 0; i < n && !found; i++) {
      hid_t m = H5Tget_member_type(type, (unsigned)i);
      found = m >= 0 && h5fz_compress_has_variable_data(m);
      if (m >= 0) H5Tclose(m);
    }
  } else if (cls == H5T_ARRAY || cls == H5T_ENUM) {
    hid_t base = H5Tget_super(type);
    found = base >= 0 && h5fz_compress_has_variable_data(base);
    if (base >= 0) H5Tclose(base);
  }
  return found;
}

int h5fz_compress_copy_by_value(hid_t src, hid_t to, const char *name, hid_t out_type, hid_t lcpl, const char *path,
                                hid_t *out, char *err, size_t err_len)
{
  hid_t space = H5Dget_space(src), dcpl = H5Dget_create_plist(src), ftype = H5Dget_type(src);
  hid_t mtype = ftype < 0 ? -1 : H5Tget_native_type(ftype, H5T_DIR_DEFAULT);
  hssize_t n = space < 0 ? -1 : H5Sget_simple_extent_npoints(space);
  void *buf = NULL;
  int rc = -1, read_ok = 0;
  char why[400];
  *out = -1;
  if (space < 0 || dcpl < 0 || mtype < 0 || n < 0) {
    h5fz_cli_keep_error(err, err_len, "%s: cannot read its type, shape or creation properties: %s", path,
                        h5fz_cli_hdf5_why(why, sizeof why));
    goto done;
  }
  *out = H5Dcreate2(to, name, out_type, space, lcpl, dcpl, H5P_DEFAULT);
  if (*out < 0) {
    h5fz_cli_keep_error(err, err_len, "%s: cannot create its copy: %s", path, h5fz_cli_hdf5_why(why, sizeof why));
    goto done;
  }
  rc = 0;
  /* never written: nothing to copy (reading would give fill values and
   * writing them would allocate storage the input does not have) */
  if (n == 0 || H5Dget_storage_size(src) == 0) goto done;
  buf = calloc((size_t)n, H5Tget_size(mtype));
  if (!buf) {
    rc = h5fz_cli_keep_error(err, err_len, "%s: out of memory for %lld elements", path, (long long)n);
    goto done;
  }
  if (H5Dread(src, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) {
    rc = h5fz_cli_keep_error(err, err_len, "%s: cannot read: %s", path, h5fz_cli_hdf5_why(why, sizeof why));
    goto done;
  }
  read_ok = 1;
  if (H5Dwrite(*out, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0)
    rc = h5fz_cli_keep_error(err, err_len, "%s: cannot write its copy: %s", path, h5fz_cli_hdf5_why(why, sizeof why));
done:
  if (read_ok) h5fz_cli_reclaim(mtype, space, buf);
  free(buf);
  H5FZ_CLI_CLOSE(mtype, ftype, dcpl, space);
  if (rc < 0) h5fz_cli_close_ids(out, 1); /* a half-made copy is the caller's no more */
  return rc;
}
