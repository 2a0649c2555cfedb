/*
 * h5fz_dataset_create.c - making an h5fz dataset: the creation property
 * list (chunk dims, the filter's cd_values, dense attributes) and
 * H5Dcreate2, for h5fz_dataset_create and h5fz_dataset_create_mpi
 * (h5fz_dataset_create.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h5fz_batch.h"
#include "h5fz_dataset.h"
#include "h5fz_dataset_create.h"
#include "h5fz_error.h"
#include "h5fz_hdf5_reason.h"
#include "h5fz_options.h"

int h5fz_dataset_create_allocated(hid_t loc, const char *name, hid_t mem_type, int rank, const hsize_t *dims,
                                  const hsize_t *chunk_dims, const char *spec_text, H5D_alloc_time_t alloc_time,
                                  hid_t dapl, hid_t *dset)
{
  h5fz_clear_error();
  if (!name || !dims || !chunk_dims || !dset || rank < 1 || rank > H5FZ_ARRAY_MAX_RANK)
    return h5fz_fail(H5FZ_ERR_ARG, "h5fz_dataset_create: NULL argument or rank outside 1..%d", H5FZ_ARRAY_MAX_RANK);
  if (H5Tequal(mem_type, H5T_NATIVE_FLOAT) <= 0 && H5Tequal(mem_type, H5T_NATIVE_DOUBLE) <= 0)
    return h5fz_fail(H5FZ_ERR_ARG, "h5fz_dataset_create: the type must be H5T_NATIVE_FLOAT or H5T_NATIVE_DOUBLE");
  *dset = H5I_INVALID_HID;
  h5fz_spec spec;
  int rc = spec_text ? h5fz_spec_parse(spec_text, &spec) : h5fz_spec_default(&spec);
  if (rc) return rc;
  if (spec.dtype != H5FZ_DTYPE_UNKNOWN || spec.rank || spec.has_fill)
    return h5fz_fail(H5FZ_ERR_SPEC, "h5fz_dataset_create: the spec may not set dtype, dims or fill: they come "
                                    "from the dataset (type, chunk dims, fill value)");
  uint64_t chunk_elems = 1;
  for (int d = 0; d < rank; d++) {
    if (!chunk_dims[d]) return h5fz_fail(H5FZ_ERR_ARG, "h5fz_dataset_create: chunk dim %d is 0", d);
    chunk_elems *= chunk_dims[d];
  }
  if (chunk_elems * H5Tget_size(mem_type) > 0x7fff0000u)
    return h5fz_fail(H5FZ_ERR_ARG,
                     "h5fz_dataset_create: a chunk of %llu values is larger than the chunk format "
                     "allows (2 GiB)",
                     (unsigned long long)chunk_elems);
  unsigned cd[H5FZ_CD_MAX];
  size_t n_cd = 0;
  if ((rc = h5fz_spec_to_cd_values(&spec, 0, cd, H5FZ_CD_MAX, &n_cd))) return rc;
  if ((rc = h5fz_dataset_register_filter())) return rc; /* set_local runs in the plugin */
  h5fz_process_options_retell(); /* a plugin copy loaded since h5fz_set_process_options: before set_local */
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE), space = H5Screate_simple(rank, dims, NULL);
  if (dcpl < 0 || space < 0 || H5Pset_chunk(dcpl, rank, chunk_dims) < 0 ||
      H5Pset_filter(dcpl, H5FZ_FILTER_ID, H5Z_FLAG_MANDATORY, n_cd, cd) < 0 ||
      H5Pset_attr_phase_change(dcpl, 0, 0) < 0 ||
      (alloc_time != H5D_ALLOC_TIME_DEFAULT && H5Pset_alloc_time(dcpl, alloc_time) < 0)) {
    rc = h5fz_fail(H5FZ_ERR_HDF5, "cannot build the dataset creation property list");
  } else {
    /* Dense attribute storage needs a version-2 object header, which the
     * file's lowest library version bound decides: raise it to 1.8 for this
     * dataset only, then put the caller's bounds back. */
    hid_t file = H5Iget_file_id(loc), fapl = file < 0 ? -1 : H5Fget_access_plist(file);
    H5F_libver_t lo = H5F_LIBVER_LATEST, hi = H5F_LIBVER_LATEST;
    int raised = fapl >= 0 && H5Pget_libver_bounds(fapl, &lo, &hi) >= 0 && lo < H5F_LIBVER_V18 &&
                 H5Fset_libver_bounds(file, H5F_LIBVER_V18, hi >= H5F_LIBVER_V18 ? hi : H5F_LIBVER_LATEST) >= 0;
    *dset = H5Dcreate2(loc, name, mem_type, space, H5P_DEFAULT, dcpl, dapl);
    if (*dset < 0) {
      /* the filter's refusal (a bad H5FZ_DEVICE, a GPU asked for and
       * missing) is only on HDF5's stack: carry it, so a caller (and every
       * rank of the MPI API) sees why */
      char why[400];
      h5fz_hdf5_innermost_reason(why, sizeof why);
      rc = h5fz_fail(H5FZ_ERR_HDF5, "H5Dcreate2(%s) failed: %s", name,
                     why[0] ? why : "HDF5 gave no reason (see the HDF5 error stack)");
    }
    if (raised && H5Fset_libver_bounds(file, lo, hi) < 0 && !rc)
      rc = h5fz_fail(H5FZ_ERR_HDF5, "cannot restore the file's library version bounds");
    if (fapl >= 0) H5Pclose(fapl);
    if (file >= 0) H5Fclose(file);
  }
  if (dcpl >= 0) H5Pclose(dcpl);
  if (space >= 0) H5Sclose(space);
  return rc;
}
