/*
 * h5fz_plugin.c - the HDF5 side of the h5fz filter: plugin entry points and
 * the H5Z_class2_t callbacks.
 *
 * Every HDF5 call of the plugin lives in this file, so that binding to the
 * calling libhdf5 at run time (self-binding, see HDF5_NOTES.md) has one
 * place to cover. The codec work is in h5fz_filter_core.c.
 *
 * Callbacks never print and never abort: failures go onto the HDF5 error
 * stack with H5Epush2 (message text starts with "h5fz: ") and are returned
 * as HDF5 expects (can_apply -1/0, set_local -1, filter 0).
 */
#include <stdio.h>
#include <stdlib.h>

#include <hdf5.h>
#include <H5PLextern.h>

#include "h5fz_filter_core.h"

#ifndef H5FZ_FILTER_ID
#error "H5FZ_FILTER_ID must be defined by the build (CMake option H5FZ_FILTER_ID)"
#endif

/* Enough for any user part plus one dataset part; anything longer is
 * refused before parsing (H5Pget_filter_by_id2 reports the true count). */
#define H5FZ_PLUGIN_CD_CAP 64

#define H5FZ_EXPORT __attribute__((visibility("default")))

/* H5Epush2's message is a format string: pass our text as an argument so a
 * '%' in a codec message cannot be read as a conversion. */
#define H5FZ_PUSH(minor, text)                                                             \
  H5Epush2(H5E_DEFAULT, __FILE__, __func__, __LINE__, H5E_ERR_CLS, H5E_PLINE, (minor), "%s", \
           (text))

static const char *type_class_name(H5T_class_t cls)
{
  switch (cls) {
  case H5T_INTEGER: return "integer";
  case H5T_FLOAT: return "float";
  case H5T_TIME: return "time";
  case H5T_STRING: return "string";
  case H5T_BITFIELD: return "bitfield";
  case H5T_OPAQUE: return "opaque";
  case H5T_COMPOUND: return "compound";
  case H5T_REFERENCE: return "reference";
  case H5T_ENUM: return "enum";
  case H5T_VLEN: return "variable-length";
  case H5T_ARRAY: return "array";
  default: return "unknown class";
  }
}

/* Decide whether the dataset's (file) type is one h5fz compresses.
 * Returns 1 with *dtype set, 0 with why filled (refused), -1 on an HDF5
 * error. Big-endian floats are refused rather than byte-swapped: HDF5
 * converts memory data to the file type before the filter, and writing the
 * dataset as H5T_IEEE_F*LE costs the user nothing while a byte-order field
 * would have to travel in every chunk. */
static int classify_type(hid_t type, h5fz_dtype *dtype, char *why, size_t why_len)
{
  *dtype = H5FZ_DTYPE_UNKNOWN;
  H5T_class_t cls = H5Tget_class(type);
  if (cls == H5T_NO_CLASS)
    return -1;
  if (cls != H5T_FLOAT) {
    snprintf(why, why_len,
             "h5fz: dataset type is not IEEE float32/float64 (%s); h5fz is a lossy float compressor",
             type_class_name(cls));
    return 0;
  }
  size_t size = H5Tget_size(type);
  if (size == 0)
    return -1;
  if (size != 4 && size != 8) {
    snprintf(why, why_len,
             "h5fz: dataset type is a %zu-byte float, not IEEE float32/float64; h5fz is a "
             "lossy float compressor",
             size);
    return 0;
  }
  H5T_order_t order = H5Tget_order(type);
  if (order == H5T_ORDER_ERROR)
    return -1;
  if (order != H5T_ORDER_LE) {
    snprintf(why, why_len,
             "h5fz: dataset type is a %s float%zu; h5fz needs little-endian IEEE floats "
             "(create the dataset with H5T_IEEE_F%zuLE; HDF5 converts on write)",
             order == H5T_ORDER_BE ? "big-endian" : "non-little-endian", size * 8, size * 8);
    return 0;
  }
  htri_t same = H5Tequal(type, size == 4 ? H5T_IEEE_F32LE : H5T_IEEE_F64LE);
  if (same < 0)
    return -1;
  if (!same) {
    snprintf(why, why_len,
             "h5fz: dataset type is a %zu-byte float with a non-IEEE layout (precision, offset "
             "or exponent fields); h5fz needs IEEE float32/float64",
             size);
    return 0;
  }
  *dtype = size == 4 ? H5FZ_DTYPE_F32 : H5FZ_DTYPE_F64;
  return 1;
}

/* H5Z can_apply: 1 for little-endian IEEE float32/float64, 0 (with the
 * reason on the error stack) for anything else, -1 if HDF5 fails. An
 * optional filter refused here stays in the pipeline; set_local then stores
 * no dataset part and every chunk is written unfiltered. */
static htri_t h5fz_can_apply(hid_t dcpl_id, hid_t type_id, hid_t space_id)
{
  (void)dcpl_id;
  (void)space_id;
  char why[H5FZ_FILTER_MSG_LEN];
  h5fz_dtype dtype;
  int ok = classify_type(type_id, &dtype, why, sizeof why);
  if (ok < 0) {
    H5FZ_PUSH(H5E_CANAPPLY, "h5fz: cannot inspect the dataset type");
    return -1;
  }
  if (ok == 0) {
    H5FZ_PUSH(H5E_CANAPPLY, why);
    return 0;
  }
  return 1;
}

/* Read the chunk dims of dcpl and fold them to H5FZ_MAX_RANK. 0 or -1. */
static int chunk_dims(hid_t dcpl_id, uint32_t *rank, uint32_t dims[H5FZ_MAX_RANK])
{
  char msg[H5FZ_FILTER_MSG_LEN];
  hsize_t hdims[H5S_MAX_RANK];
  int hrank = H5Pget_chunk(dcpl_id, H5S_MAX_RANK, hdims);
  if (hrank <= 0) {
    H5FZ_PUSH(H5E_SETLOCAL, "h5fz: cannot read the chunk dims (h5fz needs a chunked layout)");
    return -1;
  }
  uint64_t dims64[H5S_MAX_RANK];
  for (int i = 0; i < hrank; i++)
    dims64[i] = (uint64_t)hdims[i];
  if (h5fz_filter_fold_dims((size_t)hrank, dims64, rank, dims, msg, sizeof msg) != H5FZ_OK) {
    H5FZ_PUSH(H5E_SETLOCAL, msg);
    return -1;
  }
  return 0;
}

/* h5fz must be the first filter of the pipeline: a filter before it sees
 * the exact bytes, and after a lossy round trip it gets different ones back
 * (Fletcher32 reports a checksum error on every read; shuffle or a
 * compressor would hand us, and get back, bytes that are not floats).
 * Returns 0 when h5fz is first, -1 (with the reason pushed) otherwise. */
static int check_first_in_pipeline(hid_t dcpl_id)
{
  int n = H5Pget_nfilters(dcpl_id);
  if (n < 0) {
    H5FZ_PUSH(H5E_SETLOCAL, "h5fz: cannot read the dataset's filter pipeline");
    return -1;
  }
  for (int i = 0; i < n; i++) {
    unsigned flags = 0, filter_config = 0;
    size_t n_cd = 0;
    char name[64] = "";
    H5Z_filter_t id =
        H5Pget_filter2(dcpl_id, (unsigned)i, &flags, &n_cd, NULL, sizeof name, name, &filter_config);
    if (id < 0) {
      H5FZ_PUSH(H5E_SETLOCAL, "h5fz: cannot read the dataset's filter pipeline");
      return -1;
    }
    if (id == H5FZ_FILTER_ID)
      return 0;
    char msg[H5FZ_FILTER_MSG_LEN];
    snprintf(msg, sizeof msg,
             "h5fz: filter '%s' (id %d) comes before h5fz in the pipeline; h5fz is lossy, so "
             "a filter before it would not get its exact bytes back on read (Fletcher32 fails "
             "its checksum). Add h5fz first, then other filters (e.g. H5Pset_fletcher32 after "
             "H5Pset_filter)",
             name[0] ? name : "?", (int)id);
    H5FZ_PUSH(H5E_SETLOCAL, msg);
    return -1;
  }
  return 0;
}

/* H5Z set_local: check h5fz is the first filter, replace any dataset part
 * in the cd_values with this dataset's (type, chunk dims) and make the
 * filter mandatory for float datasets (docs/filter.md, "Optional or
 * mandatory"). Returns 0 or -1; never 0 on error, which HDF5 would take as
 * success. */
static herr_t h5fz_set_local(hid_t dcpl_id, hid_t type_id, hid_t space_id)
{
  (void)space_id;
  char msg[H5FZ_FILTER_MSG_LEN];
  unsigned flags = 0;
  size_t n = H5FZ_PLUGIN_CD_CAP;
  unsigned cd[H5FZ_PLUGIN_CD_CAP];
  if (H5Pget_filter_by_id2(dcpl_id, H5FZ_FILTER_ID, &flags, &n, cd, 0, NULL, NULL) < 0) {
    H5FZ_PUSH(H5E_SETLOCAL, "h5fz: cannot read the filter's cd_values");
    return -1;
  }
  if (n > H5FZ_PLUGIN_CD_CAP) {
    snprintf(msg, sizeof msg,
             "h5fz: invalid cd_values: %zu words; a spec has at most %d user words plus the "
             "dataset part",
             n, H5FZ_CD_USER_MAX);
    H5FZ_PUSH(H5E_SETLOCAL, msg);
    return -1;
  }
  h5fz_dtype dtype;
  int ok = classify_type(type_id, &dtype, msg, sizeof msg);
  if (ok < 0) {
    H5FZ_PUSH(H5E_SETLOCAL, "h5fz: cannot inspect the dataset type");
    return -1;
  }
  uint32_t rank = 0, dims[H5FZ_MAX_RANK] = {0};
  if (ok == 1 && (check_first_in_pipeline(dcpl_id) < 0 || chunk_dims(dcpl_id, &rank, dims) < 0))
    return -1;
  unsigned out[H5FZ_CD_MAX];
  size_t n_out = 0;
  if (h5fz_filter_local_cd_values(cd, n, dtype, rank, dims, out, H5FZ_CD_MAX, &n_out, msg,
                                  sizeof msg) != H5FZ_OK) {
    H5FZ_PUSH(H5E_SETLOCAL, msg);
    return -1;
  }
  /* h5py adds every third-party filter as optional, and HDF5 stores a chunk
   * raw without a word when an optional filter fails. Our encoder fails
   * only on memory exhaustion or an internal error, so an error is the
   * honest outcome; a refused type keeps the user's flag so an optional
   * filter can still pass over integer datasets. */
  if (ok == 1)
    flags &= ~(unsigned)H5Z_FLAG_OPTIONAL;
  if (H5Pmodify_filter(dcpl_id, H5FZ_FILTER_ID, flags, n_out, out) < 0) {
    H5FZ_PUSH(H5E_SETLOCAL, "h5fz: cannot store the dataset's cd_values");
    return -1;
  }
  return 0;
}

/* H5Z filter function, both directions. *buf holds nbytes valid bytes of a
 * *buf_size allocation made by HDF5 (H5MM_malloc). On success the old buffer
 * is released with H5free_memory (HDF5's own allocator), *buf becomes the
 * codec's malloc'd result, *buf_size its size, and the byte count is
 * returned; HDF5 later frees it with H5MM_xfree, which is free() in release
 * builds. On failure *buf is untouched and 0 is returned. */
static size_t h5fz_filter(unsigned flags, size_t cd_nelmts, const unsigned cd_values[],
                          size_t nbytes, size_t *buf_size, void **buf)
{
  char msg[H5FZ_FILTER_MSG_LEN];
  void *out = NULL;
  size_t out_bytes = 0;
  int reverse = (flags & H5Z_FLAG_REVERSE) != 0;
  if (h5fz_filter_run(reverse, cd_values, cd_nelmts, *buf, nbytes, &out, &out_bytes, msg,
                      sizeof msg) != H5FZ_OK) {
    H5FZ_PUSH(H5E_CANTFILTER, msg);
    return 0;
  }
  H5free_memory(*buf);
  *buf = out;
  *buf_size = out_bytes;
  return out_bytes;
}

static const H5Z_class2_t H5FZ_CLASS = {
    H5Z_CLASS_T_VERS,
    (H5Z_filter_t)H5FZ_FILTER_ID,
    1, /* encoder present */
    1, /* decoder present */
    "h5fz",
    h5fz_can_apply,
    h5fz_set_local,
    h5fz_filter,
};

/* Plugin entry point: this library provides a filter. Does nothing else:
 * HDF5 opens every library in the plugin folder while searching, so no
 * work (CUDA, threads) may happen at load time. */
H5FZ_EXPORT H5PL_type_t H5PLget_plugin_type(void)
{
  return H5PL_TYPE_FILTER;
}

/* Plugin entry point: the filter class (static storage, never freed). */
H5FZ_EXPORT const void *H5PLget_plugin_info(void)
{
  return &H5FZ_CLASS;
}
