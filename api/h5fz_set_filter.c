/*
 * h5fz_set_filter.c - h5fz_set_filter (h5fz_dataset.h): a spec in text
 * form onto a dataset creation property list, the H5Pset_*-style way to
 * ask for h5fz without typing cd_values.
 */
#include "h5fz_dataset.h"
#include "h5fz_error.h"
#include "h5fz_hdf5_reason.h"
#include "h5fz_options.h"

int h5fz_set_filter(hid_t dcpl, const char *spec_text)
{
  h5fz_clear_error();
  h5fz_spec spec;
  int rc = spec_text ? h5fz_spec_parse(spec_text, &spec) : h5fz_spec_default(&spec);
  if (rc) return rc; /* the parser's message names the word it refused */
  if (spec.dtype != H5FZ_DTYPE_UNKNOWN || spec.rank || spec.has_fill)
    return h5fz_fail(H5FZ_ERR_SPEC, "h5fz_set_filter: the spec may not set dtype, dims or fill: they come from "
                                    "the dataset (its type, chunk dims and fill value)");
  htri_t is_dcpl = H5Iis_valid(dcpl) > 0 ? H5Pisa_class(dcpl, H5P_DATASET_CREATE) : -1;
  if (is_dcpl <= 0)
    return h5fz_fail(H5FZ_ERR_ARG, "h5fz_set_filter: dcpl is not a dataset creation property list "
                                   "(H5Pcreate(H5P_DATASET_CREATE))");
  unsigned cd[H5FZ_CD_MAX];
  size_t n_cd = 0;
  if ((rc = h5fz_spec_to_cd_values(&spec, 0, cd, H5FZ_CD_MAX, &n_cd))) return rc;
  /* a plugin copy loaded since h5fz_set_process_options has them by set_local */
  h5fz_process_options_retell();
  /* mandatory: a chunk the filter cannot take fails the write rather than
   * being stored raw (set_local makes it so on float datasets anyway) */
  if (H5Pset_filter(dcpl, H5FZ_FILTER_ID, H5Z_FLAG_MANDATORY, n_cd, cd) < 0) {
    char why[400];
    h5fz_hdf5_innermost_reason(why, sizeof why);
    return h5fz_fail(H5FZ_ERR_HDF5, "h5fz_set_filter: H5Pset_filter failed: %s",
                     why[0] ? why : "HDF5 gave no reason (see the HDF5 error stack)");
  }
  return H5FZ_OK;
}
