/*
 * h5fz_filter_class.c - the H5Z_class2_t callbacks of the h5fz filter
 * (can_apply, set_local, the filter function) and the binding they call
 * HDF5 through (h5fz_filter_class.h). Every HDF5 call of the filter is in
 * this file; the plugin (h5fz_plugin.c) and the library mode
 * (api/h5fz_register.c) only bind it and hand out the class.
 *
 * Callbacks never print and never abort: failures go onto the HDF5 error
 * stack with H5Epush2 (message text starts with "h5fz: ") and are returned
 * as HDF5 expects (can_apply -1/0, set_local -1, filter 0).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h5fz_filter_class.h"
#include "h5fz_filter_core.h"
#include "h5fz_prepared_take.h"
#include "h5fz_settings.h"

/* Enough for any user part plus one dataset part; anything longer is
 * refused before parsing (H5Pget_filter_by_id2 reports the true count). */
#define H5FZ_PLUGIN_CD_CAP 64

/* ---- the slots: one binding per libhdf5 copy ---------------------------- */

typedef struct slot {
  h5fz_hdf5_api api;
  const void *base; /* load address of the libhdf5 */
  int bound;        /* set once, with release order, after api and base */
} slot;

static slot g_slots[H5FZ_SLOTS];
static pthread_mutex_t g_slots_lock = PTHREAD_MUTEX_INITIALIZER;

static int is_bound(int k) { return __atomic_load_n(&g_slots[k].bound, __ATOMIC_ACQUIRE); }

const h5fz_hdf5_api *h5fz_filter_api(int k) { return k >= 0 && k < H5FZ_SLOTS && is_bound(k) ? &g_slots[k].api : NULL; }

const void *h5fz_filter_bound_base(int k) { return k >= 0 && k < H5FZ_SLOTS && is_bound(k) ? g_slots[k].base : NULL; }

int h5fz_filter_slot_of_base(const void *base)
{
  if (!base) return -1;
  for (int k = 0; k < H5FZ_SLOTS; k++)
    if (is_bound(k) && g_slots[k].base == base) return k;
  return -1;
}

int h5fz_filter_bind(const h5fz_hdf5_api *a, const void *base)
{
  pthread_mutex_lock(&g_slots_lock);
  int k = h5fz_filter_slot_of_base(base);
  for (int i = 0; i < H5FZ_SLOTS && k < 0; i++)
    if (!g_slots[i].bound) {
      g_slots[i].api = *a;
      g_slots[i].base = base;
      __atomic_store_n(&g_slots[i].bound, 1, __ATOMIC_RELEASE);
      k = i;
    }
  pthread_mutex_unlock(&g_slots_lock);
  return k < 0 ? H5FZ_SLOT_FULL : k;
}

/* ---- the callbacks ------------------------------------------------------ */

/* What a refusal's reader would have to change: h5repack -f applies one
 * spec to every dataset, and only a fault in the filter's words is fixed
 * by other words (an integer dataset was told to "fix the -f words"). */
typedef enum {
  REFUSED_SPEC,   /* the user's words, or anything else set_local refuses */
  REFUSED_TYPE,   /* the dataset's type (can_apply): no words fit it */
  REFUSED_TYPE_MANDATORY, /* the same, the filter mandatory: H5Dcreate fails (nothing is stored) */
  REFUSED_CHUNKS, /* the dataset's chunks (h5repack -l sets them) */
} refusal;

/* The line after a refusal's reason: what becomes of the dataset, and how
 * to do better. h5repack retries a failed H5Dcreate without the filter and
 * exits 0 (h5fz_filter_caller_stores_raw_on_refusal): say so, or the user
 * takes the copy for compressed. A type refused by can_apply: a program
 * that made the filter optional (h5py's compression=, h5py's own choice)
 * creates the dataset anyway and writes every chunk unfiltered; say so
 * rather than store it raw in silence (a fresh user's finding: float16
 * through h5py). */
static const char *refusal_outcome(refusal kind)
{
  if (!h5fz_filter_caller_stores_raw_on_refusal())
    return kind == REFUSED_TYPE ? "\nh5fz: where the filter is optional (h5py's compression=), this dataset is stored "
                                  "UNCOMPRESSED"
                                : "";
  switch (kind) {
  case REFUSED_TYPE:
  case REFUSED_TYPE_MANDATORY:
    return "\nh5fz: h5repack now copies this dataset UNCOMPRESSED and exits 0, as it must: h5fz takes float32/float64 "
           "datasets only; name only the float datasets (h5repack -f /a,/b:UD=...) to leave the others unfiltered "
           "without this line, or use h5fz compress, which copies them unchanged";
  case REFUSED_CHUNKS:
    return "\nh5fz: h5repack now copies this dataset UNCOMPRESSED and exits 0; give it chunks h5fz takes "
           "(h5repack -l /name:CHUNK=DIMS) or use h5fz compress, which refuses";
  default:
    return "\nh5fz: h5repack now copies this dataset UNCOMPRESSED and exits 0; fix the -f words "
           "(h5fz cd-values --ud SPEC prints them) or use h5fz compress, which refuses";
  }
}

/* A refused dataset (set_local failed, so H5Dcreate fails) whose program
 * prints no HDF5 error stack would never show the reason: netCDF turns the
 * stack's printing off (H5Eset_auto2 NULL) unless built with logging, so
 * nccopy, ncgen and NCO said only "NetCDF: HDF error". So when automatic
 * printing is off the reason also goes to stderr, one line, once per
 * distinct reason (h5repack -f applies one spec to every dataset), with
 * refusal_outcome's line; H5FZ_QUIET=1 silences it. A program that prints
 * the stack (HDF5's default) gets it there only. */
static void say_refusal_once(const h5fz_hdf5_api *h, const char *text, refusal kind)
{
  /* the reasons said so far (a file's datasets alternate between a few: int, float16, int, ...); past the
   * table's end a reason is said again rather than kept from the user */
  static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
  static char said[16][H5FZ_FILTER_MSG_LEN];
  static unsigned n_said;
  H5E_auto2_t printer = NULL;
  void *printer_data = NULL;
  if (h->H5Eget_auto2(H5E_DEFAULT, &printer, &printer_data) < 0 || printer || h5fz_settings_quiet()) return;
  pthread_mutex_lock(&lock);
  int fresh = 1;
  for (unsigned i = 0; i < n_said && fresh; i++) fresh = strncmp(said[i], text, sizeof said[i] - 1) != 0;
  if (fresh) {
    snprintf(said[n_said % 16u], sizeof said[0], "%s", text);
    n_said += n_said < 16u ? 1u : 0u;
    fprintf(stderr, "%s%s\n", text, refusal_outcome(kind));
  }
  pthread_mutex_unlock(&lock);
}

/* H5Epush2's message is a format string: pass our text as an argument so a
 * '%' in a codec message cannot be read as a conversion. The globals are
 * read at call time, after H5open, as HDF5's own H5E_* macros do. kind
 * matters to a refusal only (can_apply's, set_local's). */
static void push_refusal(const h5fz_hdf5_api *h, const hid_t *minor_g, refusal kind, const char *func, unsigned line,
                         const char *text)
{
  if (h->H5open() < 0) return;
  /* first: an API call such as H5Eget_auto2 clears the error stack */
  if (minor_g == h->H5E_SETLOCAL_g || minor_g == h->H5E_CANAPPLY_g) say_refusal_once(h, text, kind);
  h->H5Epush2(H5E_DEFAULT, __FILE__, func, line, *h->H5E_ERR_CLS_g, *h->H5E_PLINE_g, *minor_g, "%s", text);
}

/* push_refusal with the kind the minor implies: can_apply refuses types. */
static void push_error(const h5fz_hdf5_api *h, const hid_t *minor_g, const char *func, unsigned line, const char *text)
{
  push_refusal(h, minor_g, minor_g == h->H5E_CANAPPLY_g ? REFUSED_TYPE : REFUSED_SPEC, func, line, text);
}
/* minor: H5E_CANAPPLY_g, H5E_SETLOCAL_g or H5E_CANTFILTER_g. */
#define H5FZ_PUSH(h, minor, text)                                                                                      \
  do {                                                                                                                 \
    if (h) push_error((h), (h)->minor, __func__, __LINE__, (text));                                                    \
  } while (0)
/* set_local's refusal of the dataset's chunks (not of the words). */
#define H5FZ_PUSH_CHUNKS(h, text)                                                                                      \
  do {                                                                                                                 \
    if (h) push_refusal((h), (h)->H5E_SETLOCAL_g, REFUSED_CHUNKS, __func__, __LINE__, (text));                         \
  } while (0)

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

/* Is type, an IEEE-sized float of either byte order, the IEEE layout?
 * A big-endian type is compared as its little-endian copy (the binding has
 * no H5T_IEEE_F*BE globals). 1, 0, or -1 on an HDF5 error. */
static htri_t is_ieee_layout(const h5fz_hdf5_api *h, hid_t type, size_t size, int big_endian)
{
  if (h->H5open() < 0) /* what the H5T_IEEE_* macros do before reading the global */
    return -1;
  hid_t ieee = size == 4 ? *h->H5T_IEEE_F32LE_g : *h->H5T_IEEE_F64LE_g;
  if (!big_endian) return h->H5Tequal(type, ieee);
  hid_t le = h->H5Tcopy(type);
  if (le < 0) return -1;
  htri_t same = h->H5Tset_order(le, H5T_ORDER_LE) < 0 ? -1 : h->H5Tequal(le, ieee);
  h->H5Tclose(le);
  return same;
}

/* Decide whether the dataset's (file) type is one h5fz compresses: IEEE
 * float32/float64, little- or big-endian (*big_endian). Big-endian chunks
 * are swapped to little-endian, coded as those are, and the container
 * records the order (docs/format.md §3), so files written on or for
 * big-endian systems are compressed as they are.
 * Returns 1 with *dtype set, 0 with why filled (refused), -1 on an HDF5
 * error. */
static int classify_type(const h5fz_hdf5_api *h, hid_t type, h5fz_dtype *dtype, int *big_endian, char *why,
                         size_t why_len)
{
  *dtype = H5FZ_DTYPE_UNKNOWN;
  *big_endian = 0;
  H5T_class_t cls = h->H5Tget_class(type);
  if (cls == H5T_NO_CLASS) return -1;
  if (cls != H5T_FLOAT) {
    snprintf(why, why_len, "h5fz: dataset type is not IEEE float32/float64 (%s); h5fz is a lossy float compressor",
             type_class_name(cls));
    return 0;
  }
  size_t size = h->H5Tget_size(type);
  if (size == 0) return -1;
  if (size != 4 && size != 8) {
    snprintf(why, why_len,
             "h5fz: dataset type is a %zu-byte float, not IEEE float32/float64; h5fz is a "
             "lossy float compressor",
             size);
    return 0;
  }
  H5T_order_t order = h->H5Tget_order(type);
  if (order == H5T_ORDER_ERROR) return -1;
  if (order != H5T_ORDER_LE && order != H5T_ORDER_BE) {
    snprintf(why, why_len,
             "h5fz: dataset type is a float%zu of mixed (VAX) byte order; h5fz needs little- or "
             "big-endian IEEE floats (create the dataset with H5T_IEEE_F%zuLE; HDF5 converts on write)",
             size * 8, size * 8);
    return 0;
  }
  htri_t same = is_ieee_layout(h, type, size, order == H5T_ORDER_BE);
  if (same < 0) return -1;
  if (!same) {
    snprintf(why, why_len,
             "h5fz: dataset type is a %zu-byte float with a non-IEEE layout (precision, offset "
             "or exponent fields); h5fz needs IEEE float32/float64",
             size);
    return 0;
  }
  *dtype = size == 4 ? H5FZ_DTYPE_F32 : H5FZ_DTYPE_F64;
  *big_endian = order == H5T_ORDER_BE;
  return 1;
}

/* classify_type, with an HDF5 failure pushed under minor_g (the caller's
 * H5E_CANAPPLY_g or H5E_SETLOCAL_g). */
static int classify_or_push(const h5fz_hdf5_api *h, const hid_t *minor_g, hid_t type, h5fz_dtype *dtype,
                            int *big_endian, char *why, size_t why_len)
{
  int ok = classify_type(h, type, dtype, big_endian, why, why_len);
  if (ok < 0) push_error(h, minor_g, __func__, __LINE__, "h5fz: cannot inspect the dataset type");
  return ok;
}

/* The filter's flags and its cd_values in dcpl: cd holds the first
 * H5FZ_PLUGIN_CD_CAP words, *n their true count (more than the cap: words
 * no spec writes). 0, or -1 when HDF5 cannot read them. */
static int filter_words(const h5fz_hdf5_api *h, hid_t dcpl_id, unsigned *flags, unsigned cd[H5FZ_PLUGIN_CD_CAP],
                        size_t *n)
{
  *flags = 0;
  *n = H5FZ_PLUGIN_CD_CAP;
  return h->H5Pget_filter_by_id2(dcpl_id, H5FZ_FILTER_ID, flags, n, cd, 0, NULL, NULL) < 0 ? -1 : 0;
}

/* Words set_local refuses whatever the dataset's type
 * (h5fz_filter_local_cd_values with no type)? */
static int words_refused_anyway(const unsigned *cd, size_t n)
{
  unsigned out[H5FZ_CD_MAX];
  size_t n_out = 0;
  char msg[H5FZ_FILTER_MSG_LEN];
  return n > H5FZ_PLUGIN_CD_CAP || h5fz_filter_local_cd_values(cd, n, H5FZ_DTYPE_UNKNOWN, 0, 0, NULL, 0, 0.0, 1, out,
                                                               H5FZ_CD_MAX, &n_out, msg, sizeof msg) != H5FZ_OK;
}

/* H5Z can_apply: 1 for IEEE float32/float64 of either byte order, 0 (with the
 * reason on the error stack) for anything else, -1 if HDF5 fails. An
 * optional filter refused here stays in the pipeline; set_local then stores
 * no dataset part and every chunk is written unfiltered. */
static htri_t h5fz_can_apply(const h5fz_hdf5_api *h, hid_t dcpl_id, hid_t type_id, hid_t space_id)
{
  (void)space_id;
  if (!h) return -1; /* no libhdf5 bound (docs/filter.md, "Self-binding") */
  char why[H5FZ_FILTER_MSG_LEN];
  h5fz_dtype dtype;
  int big_endian;
  int ok = classify_or_push(h, h->H5E_CANAPPLY_g, type_id, &dtype, &big_endian, why, sizeof why);
  if (ok < 0) return -1;
  if (ok == 0) {
    /* words set_local refuses for every type: leave the refusal to it. HDF5
     * calls set_local after a can_apply of 0 too, and H5Dcreate then fails
     * on the words; the type's line would first have told an h5py user (an
     * optional filter) that the dataset is stored uncompressed (a fresh
     * user's finding: an int dataset with bad cd_values got both). */
    unsigned flags, cd[H5FZ_PLUGIN_CD_CAP];
    size_t n;
    if (filter_words(h, dcpl_id, &flags, cd, &n) < 0) { /* set_local reports what it finds */
      flags = H5Z_FLAG_OPTIONAL;
    } else if (words_refused_anyway(cd, n)) {
      return 1;
    }
    /* a mandatory filter (H5Pset_filter's H5Z_FLAG_MANDATORY) makes H5Dcreate fail: say nothing of a dataset
     * stored uncompressed (a fresh user's finding through h5py's low-level API) */
    push_refusal(h, h->H5E_CANAPPLY_g, flags & H5Z_FLAG_OPTIONAL ? REFUSED_TYPE : REFUSED_TYPE_MANDATORY, __func__,
                 __LINE__, why);
    return 0;
  }
  return 1;
}

/* Read the chunk dims of dcpl and fold them to H5FZ_MAX_RANK. 0 or -1. */
static int chunk_dims(const h5fz_hdf5_api *h, hid_t dcpl_id, uint32_t *rank, uint32_t dims[H5FZ_MAX_RANK])
{
  char msg[H5FZ_FILTER_MSG_LEN];
  hsize_t hdims[H5S_MAX_RANK];
  int hrank = h->H5Pget_chunk(dcpl_id, H5S_MAX_RANK, hdims);
  if (hrank <= 0) {
    H5FZ_PUSH_CHUNKS(h, "h5fz: cannot read the chunk dims (h5fz needs a chunked layout)");
    return -1;
  }
  uint64_t dims64[H5S_MAX_RANK];
  for (int i = 0; i < hrank; i++) dims64[i] = (uint64_t)hdims[i];
  if (h5fz_filter_fold_dims((size_t)hrank, dims64, rank, dims, msg, sizeof msg) != H5FZ_OK) {
    H5FZ_PUSH_CHUNKS(h, msg);
    return -1;
  }
  return 0;
}

/* The dataset's fill value, which HDF5 writes into the padding of edge
 * chunks: REL ranges leave it out, and values equal to it escape. It is
 * read in the dataset's own type (dtype), so that *fill (a double, exact
 * for a float32) has the bits HDF5 writes: a fill value set in another
 * type, e.g. a big-endian double halfway between two floats, is converted
 * by HDF5's own rounding, which a later (float) of a double need not
 * repeat (a tester's finding: FLT_MAX's tie became +Inf, the padding
 * counted in a REL range, and an edge chunk decoded as zeros). It is read
 * as the little-endian type of that precision whatever the dataset's byte
 * order: the codec works on little-endian values (a swap is exact).
 * *padding_known is 0 when the padding is not defined (no fill value, or
 * fill time NEVER), which REL cannot accept. Returns 0, or -1 with the
 * reason pushed. */
static int fill_value(const h5fz_hdf5_api *h, hid_t dcpl_id, h5fz_dtype dtype, int *has_fill, double *fill,
                      int *padding_known)
{
  H5D_fill_value_t status;
  H5D_fill_time_t when;
  *has_fill = 0;
  *fill = 0.0;
  if (h->H5Pfill_value_defined(dcpl_id, &status) < 0 || h->H5Pget_fill_time(dcpl_id, &when) < 0) {
    H5FZ_PUSH(h, H5E_SETLOCAL_g, "h5fz: cannot read the dataset's fill value");
    return -1;
  }
  *padding_known = status != H5D_FILL_VALUE_UNDEFINED && when != H5D_FILL_TIME_NEVER;
  if (status == H5D_FILL_VALUE_UNDEFINED) return 0;
  float fill32 = 0.0f;
  herr_t rc = dtype == H5FZ_DTYPE_F32 ? h->H5Pget_fill_value(dcpl_id, *h->H5T_IEEE_F32LE_g, &fill32)
                                      : h->H5Pget_fill_value(dcpl_id, *h->H5T_IEEE_F64LE_g, fill);
  if (rc < 0) {
    H5FZ_PUSH(h, H5E_SETLOCAL_g, "h5fz: cannot read the dataset's fill value");
    return -1;
  }
  if (dtype == H5FZ_DTYPE_F32) *fill = (double)fill32;
  *has_fill = 1;
  return 0;
}

/* h5fz must be the first filter of the pipeline: a filter before it sees
 * the exact bytes, and after a lossy round trip it gets different ones back
 * (Fletcher32 reports a checksum error on every read; shuffle or a
 * compressor would hand us, and get back, bytes that are not floats).
 * And it must be there once: HDF5 gives set_local the first entry's
 * cd_values and H5Pmodify_filter changes only that entry, so a second h5fz
 * kept the user's words without the dataset part, failed on every chunk
 * when the chunk cache was flushed at close, and the data was lost.
 * Returns 0 when h5fz is first and alone, -1 (with the reason pushed)
 * otherwise. */
static int check_first_in_pipeline(const h5fz_hdf5_api *h, hid_t dcpl_id)
{
  int n = h->H5Pget_nfilters(dcpl_id);
  if (n < 0) {
    H5FZ_PUSH(h, H5E_SETLOCAL_g, "h5fz: cannot read the dataset's filter pipeline");
    return -1;
  }
  int h5fz_at = -1;
  for (int i = 0; i < n; i++) {
    unsigned flags = 0, filter_config = 0;
    size_t n_cd = 0;
    char name[64] = "";
    H5Z_filter_t id = h->H5Pget_filter2(dcpl_id, (unsigned)i, &flags, &n_cd, NULL, sizeof name, name, &filter_config);
    if (id < 0) {
      H5FZ_PUSH(h, H5E_SETLOCAL_g, "h5fz: cannot read the dataset's filter pipeline");
      return -1;
    }
    char msg[H5FZ_FILTER_MSG_LEN];
    if (id == H5FZ_FILTER_ID && h5fz_at >= 0) {
      snprintf(msg, sizeof msg,
               "h5fz: the filter pipeline holds h5fz twice (filters %d and %d); give it once "
               "(H5Pset_filter was called twice with its id, e.g. on a creation property list that already had it)",
               h5fz_at, i);
      H5FZ_PUSH(h, H5E_SETLOCAL_g, msg);
      return -1;
    }
    if (id == H5FZ_FILTER_ID) h5fz_at = i;
    if (h5fz_at >= 0) continue; /* filters after h5fz get its exact output back */
    snprintf(msg, sizeof msg,
             "h5fz: filter '%s' (id %d) comes before h5fz in the pipeline; h5fz is lossy, so "
             "a filter before it would not get its exact bytes back on read (Fletcher32 fails "
             "its checksum). Add h5fz first, then other filters (e.g. H5Pset_fletcher32 after "
             "H5Pset_filter)%s",
             name[0] ? name : "?", (int)id,
             /* h5py orders its own filters before a third-party one: there the fix is to leave the keyword out */
             id == H5Z_FILTER_SHUFFLE       ? "; in h5py leave shuffle=True out (h5fz needs no shuffle)"
             : id == H5Z_FILTER_SCALEOFFSET ? "; in h5py leave scaleoffset= out (h5fz bounds the error itself)"
                                            : "");
    H5FZ_PUSH(h, H5E_SETLOCAL_g, msg);
    return -1;
  }
  return 0;
}

/* H5Z set_local: check h5fz is the first filter, replace any dataset part
 * in the cd_values with this dataset's (type, chunk dims) and make the
 * filter mandatory for float datasets (docs/filter.md, "Optional or
 * mandatory"). Returns 0 or -1; never 0 on error, which HDF5 would take as
 * success. */
static herr_t h5fz_set_local(const h5fz_hdf5_api *h, hid_t dcpl_id, hid_t type_id, hid_t space_id)
{
  (void)space_id;
  if (!h) return -1; /* no libhdf5 bound (docs/filter.md, "Self-binding") */
  char msg[H5FZ_FILTER_MSG_LEN];
  unsigned flags, cd[H5FZ_PLUGIN_CD_CAP];
  size_t n;
  if (filter_words(h, dcpl_id, &flags, cd, &n) < 0) {
    H5FZ_PUSH(h, H5E_SETLOCAL_g, "h5fz: cannot read the filter's cd_values");
    return -1;
  }
  if (n > H5FZ_PLUGIN_CD_CAP) {
    snprintf(msg, sizeof msg,
             "h5fz: invalid cd_values: %zu words; a spec has at most %d user words plus the "
             "dataset part",
             n, H5FZ_CD_USER_MAX);
    H5FZ_PUSH(h, H5E_SETLOCAL_g, msg);
    return -1;
  }
  h5fz_dtype dtype;
  int big_endian;
  int ok = classify_or_push(h, h->H5E_SETLOCAL_g, type_id, &dtype, &big_endian, msg, sizeof msg);
  if (ok < 0) return -1;
  uint32_t rank = 0, dims[H5FZ_MAX_RANK] = {0};
  if (ok == 1 && (check_first_in_pipeline(h, dcpl_id) < 0 || chunk_dims(h, dcpl_id, &rank, dims) < 0)) return -1;
  int has_fill = 0, padding_known = 1;
  double fill = 0.0;
  if (ok == 1 && fill_value(h, dcpl_id, dtype, &has_fill, &fill, &padding_known) < 0) return -1;
  unsigned out[H5FZ_CD_MAX];
  size_t n_out = 0;
  int st = h5fz_filter_local_cd_values(cd, n, dtype, big_endian, rank, dims, has_fill, fill, padding_known, out,
                                       H5FZ_CD_MAX, &n_out, msg, sizeof msg);
  if (st != H5FZ_OK) {
    /* H5FZ_ERR_SPEC: the words; otherwise a chunk the format cannot hold */
    push_refusal(h, h->H5E_SETLOCAL_g, st == H5FZ_ERR_SPEC ? REFUSED_SPEC : REFUSED_CHUNKS, __func__, __LINE__, msg);
    return -1;
  }
  /* h5py adds every third-party filter as optional, and HDF5 stores a chunk
   * raw without a word when an optional filter fails. Our encoder fails
   * only on memory exhaustion or an internal error, so an error is the
   * honest outcome; a refused type keeps the user's flag so an optional
   * filter can still pass over integer datasets. */
  if (ok == 1) flags &= ~(unsigned)H5Z_FLAG_OPTIONAL;
  /* a bad H5FZ_DEVICE, or a GPU asked for and missing, fails H5Dcreate
   * here: at the first write HDF5 may have cached the chunk and report
   * nothing until a flush or close (h5py then only warns). Not under
   * h5repack, which answers a failed H5Dcreate by copying the dataset raw
   * with exit status 0: there the chunks go to the CPU executor with one
   * warning, as in any chunk call (docs/filter.md, "h5repack"). */
  int strict = !h5fz_filter_caller_stores_raw_on_refusal();
  if (ok == 1 && h5fz_filter_device_check(out, n_out, strict, msg, sizeof msg) != H5FZ_OK) {
    H5FZ_PUSH(h, H5E_SETLOCAL_g, msg);
    return -1;
  }
  if (h->H5Pmodify_filter(dcpl_id, H5FZ_FILTER_ID, flags, n_out, out) < 0) {
    H5FZ_PUSH(h, H5E_SETLOCAL_g, "h5fz: cannot store the dataset's cd_values");
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
static size_t h5fz_filter(const h5fz_hdf5_api *h, unsigned flags, size_t cd_nelmts, const unsigned cd_values[],
                          size_t nbytes, size_t *buf_size, void **buf)
{
  if (!h) return 0; /* no libhdf5 bound: cannot free HDF5's buffer nor report */
  char msg[H5FZ_FILTER_MSG_LEN];
  void *out = NULL;
  size_t out_bytes = 0;
  int reverse = (flags & H5Z_FLAG_REVERSE) != 0;
  /* a collective dataset write's containers, made before its H5Dwrite */
  int prepared = h5fz_prepared_answer(reverse, *buf, nbytes, &out, &out_bytes, msg, sizeof msg);
  if (prepared < 0) {
    H5FZ_PUSH(h, H5E_CANTFILTER_g, msg);
    return 0;
  }
  if (!prepared &&
      h5fz_filter_run(reverse, cd_values, cd_nelmts, *buf, nbytes, &out, &out_bytes, msg, sizeof msg) != H5FZ_OK) {
    H5FZ_PUSH(h, H5E_CANTFILTER_g, msg);
    return 0;
  }
  h->H5free_memory(*buf);
  *buf = out;
  *buf_size = out_bytes;
  return out_bytes;
}

/* ---- one filter class per libhdf5 copy ----------------------------------
 * H5Z callbacks carry no user pointer, so the class itself must say which
 * libhdf5 to call: slot k's class has callbacks that call slot k's binding.
 * A slot not (yet) bound makes them fail cleanly. */
#define H5FZ_SLOT_CLASS_CALLBACKS(k)                                                                                   \
  static htri_t can_apply_##k(hid_t dcpl_id, hid_t type_id, hid_t space_id)                                            \
  {                                                                                                                    \
    return h5fz_can_apply(h5fz_filter_api(k), dcpl_id, type_id, space_id);                                             \
  }                                                                                                                    \
  static herr_t set_local_##k(hid_t dcpl_id, hid_t type_id, hid_t space_id)                                            \
  {                                                                                                                    \
    return h5fz_set_local(h5fz_filter_api(k), dcpl_id, type_id, space_id);                                             \
  }                                                                                                                    \
  static size_t filter_##k(unsigned flags, size_t cd_nelmts, const unsigned cd_values[], size_t nbytes,                \
                           size_t *buf_size, void **buf)                                                               \
  {                                                                                                                    \
    return h5fz_filter(h5fz_filter_api(k), flags, cd_nelmts, cd_values, nbytes, buf_size, buf);                        \
  }
#define H5FZ_SLOT_CLASS(k)                                                                                             \
  {                                                                                                                    \
    H5Z_CLASS_T_VERS, (H5Z_filter_t)H5FZ_FILTER_ID, 1, 1, "h5fz", can_apply_##k, set_local_##k, filter_##k             \
  }

H5FZ_SLOT_CLASS_CALLBACKS(0)
H5FZ_SLOT_CLASS_CALLBACKS(1)
H5FZ_SLOT_CLASS_CALLBACKS(2)
H5FZ_SLOT_CLASS_CALLBACKS(3)
H5FZ_SLOT_CLASS_CALLBACKS(4)
H5FZ_SLOT_CLASS_CALLBACKS(5)
H5FZ_SLOT_CLASS_CALLBACKS(6)
H5FZ_SLOT_CLASS_CALLBACKS(7)

static const H5Z_class2_t k_classes[] = {H5FZ_SLOT_CLASS(0), H5FZ_SLOT_CLASS(1), H5FZ_SLOT_CLASS(2),
                                         H5FZ_SLOT_CLASS(3), H5FZ_SLOT_CLASS(4), H5FZ_SLOT_CLASS(5),
                                         H5FZ_SLOT_CLASS(6), H5FZ_SLOT_CLASS(7)};
_Static_assert(sizeof k_classes / sizeof k_classes[0] == H5FZ_SLOTS, "one filter class per slot");

const H5Z_class2_t *h5fz_filter_class(int k) { return k >= 0 && k < H5FZ_SLOTS ? &k_classes[k] : NULL; }
