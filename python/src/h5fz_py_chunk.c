/*
 * h5fz_py_chunk.c - one chunk through the codec exactly as the HDF5 filter
 * codes it, for the numcodecs and Zarr codecs of the Python package
 * (h5fz_py.h, "One chunk at a time"). The filter's steps, in its order:
 * set_local's dataset part (filter/h5fz_filter_core.c) stored as cd_values
 * and read back, then h5fz_chunk_encode; on the way back the container's
 * own type and shape, h5fz_chunk_decode_for.
 */
#include <stdlib.h>
#include <string.h>

#include "h5fz.h"
#include "h5fz_py.h"
#include "h5fz_py_error.h"

/* The spec the filter would hold for a dataset of this type, chunk shape
 * and fill value: the user part of cd with set_local's dataset part, through
 * cd_values and back (as the filter gets it from HDF5, bit for bit). */
static int dataset_spec(const unsigned *cd, size_t n_cd, int dtype, int big_endian, uint32_t rank,
                        const uint64_t *dims, int has_fill, double fill, h5fz_spec *out)
{
  if (dtype != H5FZ_DTYPE_F32 && dtype != H5FZ_DTYPE_F64)
    return h5fz_py_fail(H5FZ_ERR_ARG, "element type %d: h5fz codes float32 (1) or float64 (2)", dtype);
  if (!dims) return h5fz_py_fail(H5FZ_ERR_ARG, "NULL chunk dims");
  h5fz_spec spec;
  int rc = h5fz_spec_from_cd_values(cd, n_cd, &spec, NULL);
  if (rc) return h5fz_py_keep(rc);
  uint32_t frank = 0, fdims[H5FZ_MAX_RANK] = {0};
  if ((rc = h5fz_chunk_dims_fold(rank, dims, &frank, fdims))) return h5fz_py_keep(rc);
  if (spec.mode == H5FZ_MODE_REL && !has_fill)
    return h5fz_py_fail(H5FZ_ERR_SPEC, "a rel= bound needs the array's fill value: edge chunks are padded with "
                                       "it and the range of each chunk leaves it out");
  spec.dtype = (h5fz_dtype)dtype;
  spec.big_endian = big_endian != 0;
  spec.rank = frank;
  memset(spec.dims, 0, sizeof spec.dims);
  memcpy(spec.dims, fdims, frank * sizeof fdims[0]);
  spec.has_fill = has_fill != 0;
  spec.fill = has_fill ? fill : 0.0;
  if (h5fz_spec_chunk_bytes(&spec) > H5FZ_MAX_CHUNK_BYTES)
    return h5fz_py_fail(H5FZ_ERR_ARG, "a chunk of more than %u bytes, the limit of the h5fz format (every version); use "
                                      "smaller chunks (1-16 MiB are typical)", H5FZ_MAX_CHUNK_BYTES);
  if ((rc = h5fz_spec_validate(&spec))) return h5fz_py_keep(rc);
  unsigned words[H5FZ_CD_MAX];
  size_t n = 0;
  if ((rc = h5fz_spec_to_cd_values(&spec, 1, words, H5FZ_CD_MAX, &n))) return h5fz_py_keep(rc);
  return h5fz_py_keep(h5fz_spec_from_cd_values(words, n, out, NULL));
}

int h5fzpy_chunk_encode(const unsigned *cd, size_t n_cd, int dtype, int big_endian, uint32_t rank,
                        const uint64_t *dims, int has_fill, double fill, const void *in, size_t in_bytes, void **out,
                        size_t *out_bytes)
{
  h5fz_py_clear_error();
  if (!out || !out_bytes || (!in && in_bytes)) return h5fz_py_fail(H5FZ_ERR_ARG, "h5fzpy_chunk_encode: NULL argument");
  *out = NULL;
  *out_bytes = 0;
  h5fz_spec spec;
  int rc = dataset_spec(cd, n_cd, dtype, big_endian, rank, dims, has_fill, fill, &spec);
  if (rc) return rc;
  uint64_t want = h5fz_spec_chunk_bytes(&spec);
  if (in_bytes != want)
    return h5fz_py_fail(H5FZ_ERR_ARG, "the chunk holds %zu bytes; its shape and element type make %llu", in_bytes,
                        (unsigned long long)want);
  return h5fz_py_keep(h5fz_chunk_encode(&spec, in, in_bytes, out, out_bytes));
}

int h5fzpy_chunk_decode(const unsigned *cd, size_t n_cd, const void *in, size_t in_bytes, void **out,
                        size_t *out_bytes, int *dtype, int *big_endian)
{
  h5fz_py_clear_error();
  if (!out || !out_bytes || !in) return h5fz_py_fail(H5FZ_ERR_ARG, "h5fzpy_chunk_decode: NULL argument");
  *out = NULL;
  *out_bytes = 0;
  h5fz_chunk_info info;
  int rc = h5fz_chunk_inspect(in, in_bytes, &info);
  if (rc) return h5fz_py_keep(rc);
  h5fz_spec spec;
  if ((rc = h5fz_spec_from_cd_values(cd, n_cd, &spec, NULL))) return h5fz_py_keep(rc);
  /* The container's type, order and shape (an HDF5 chunk indexed by
   * kerchunk carries its dataset's); the codec's bound: a chunk coded for a
   * looser one is refused. No fill: the REL check then counts every value,
   * which can only make it more lenient (h5fz_rel_check_decoded). */
  spec.dtype = info.dtype;
  spec.big_endian = info.big_endian;
  spec.rank = info.rank;
  memcpy(spec.dims, info.dims, sizeof spec.dims);
  spec.has_fill = 0;
  spec.fill = 0.0;
  if ((rc = h5fz_chunk_decode_for(in, in_bytes, &spec, out, out_bytes))) return h5fz_py_keep(rc);
  if (dtype) *dtype = (int)info.dtype;
  if (big_endian) *big_endian = info.big_endian;
  return H5FZ_OK;
}

void h5fzpy_free(void *p) { free(p); }
