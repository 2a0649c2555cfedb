/*
 * compress_missing.c - a netCDF variable's missing-value marker into the
 * spec of its compressed copy (compress_missing.h).
 */
#include <math.h>
#include <stdio.h>

#include "compress_missing.h"

/* The value of attribute name of dset when it is one float; 1, else 0. */
static int one_float_attr(hid_t dset, const char *name, double *v)
{
  if (H5Aexists(dset, name) <= 0) return 0;
  hid_t a = H5Aopen(dset, name, H5P_DEFAULT), t = a < 0 ? -1 : H5Aget_type(a), s = a < 0 ? -1 : H5Aget_space(a);
  int ok = t >= 0 && s >= 0 && H5Tget_class(t) == H5T_FLOAT && H5Sget_simple_extent_npoints(s) == 1 &&
           H5Aread(a, H5T_NATIVE_DOUBLE, v) >= 0;
  if (s >= 0) H5Sclose(s);
  if (t >= 0) H5Tclose(t);
  if (a >= 0) H5Aclose(a);
  return ok;
}

/* HDF5's fill value as HDF5 writes it, when it does (fill time not NEVER). */
static int written_fill(hid_t dcpl, double *fill)
{
  H5D_fill_value_t status;
  H5D_fill_time_t when;
  if (H5Pfill_value_defined(dcpl, &status) < 0 || status == H5D_FILL_VALUE_UNDEFINED ||
      H5Pget_fill_time(dcpl, &when) < 0 || when == H5D_FILL_TIME_NEVER)
    return 0;
  return H5Pget_fill_value(dcpl, H5T_NATIVE_DOUBLE, fill) >= 0;
}

int h5fz_compress_missing_cd(hid_t dset, hid_t dcpl, const h5fz_spec *spec, const char *path, unsigned *cd, size_t cap,
                             size_t *n_cd)
{
  h5fz_spec s = *spec;
  double v = 0.0, fill = 0.0;
  int marked = !s.has_missing && (one_float_attr(dset, "_FillValue", &v) || one_float_attr(dset, "missing_value", &v));
  if (marked && !isnan(v) && v != 0.0) { /* NaN and +0.0 come back exactly anyway */
    if (!written_fill(dcpl, &fill) || fill == 0.0 || isnan(fill)) {
      s.has_missing = 1;
      s.missing = v;
    } else if (fill != v) {
      fprintf(stderr,
              "h5fz compress: %s: its marker %g (_FillValue or missing_value) is not HDF5's fill value %g; h5fz "
              "keeps one value exact per dataset, the fill value, so %g may not come back exactly\n",
              path, v, fill, v);
    }
  }
  return h5fz_spec_to_cd_values(&s, 0, cd, cap, n_cd) == H5FZ_OK ? 0 : -1;
}
