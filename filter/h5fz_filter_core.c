/*
 * h5fz_filter_core.c - cd_values bookkeeping and codec calls of the filter,
 * free of HDF5 (see h5fz_filter_core.h for why).
 */
#include "h5fz_filter_core.h"
#include "h5fz_error.h"
#include "h5fz_settings.h"

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The codec keeps the detail of its last failure per thread; append it to
 * our own context so the HDF5 error stack tells the user both what the
 * filter was doing and why the codec refused. */
static int codec_failure(int status, char *msg, size_t msg_len, const char *what)
{
  const char *detail = h5fz_last_error();
  int has_detail = detail && detail[0];
  /* "invalid spec" adds nothing to a cd_values message, other status names
   * (checksum, version, ...) classify what the detail describes. */
  if (status == H5FZ_ERR_SPEC && has_detail)
    snprintf(msg, msg_len, "h5fz: %s: %s", what, detail);
  else
    snprintf(msg, msg_len, "h5fz: %s: %s%s%s", what, h5fz_status_name(status), has_detail ? ": " : "",
             has_detail ? detail : "");
  return status;
}

int h5fz_filter_fold_dims(size_t rank, const uint64_t *dims, uint32_t *rank_out, uint32_t out[H5FZ_MAX_RANK], char *msg,
                          size_t msg_len)
{
  int st = h5fz_chunk_dims_fold(rank, dims, rank_out, out);
  if (st != H5FZ_OK) snprintf(msg, msg_len, "h5fz: %s", h5fz_last_error());
  return st;
}

/* A REL bound above 1 is kept (SZ3, and so H5Z-SZ3, takes one too) but said on
 * stderr, once per process since set_local runs for every dataset;
 * H5FZ_QUIET=1 silences it, as the other warnings. */
static void warn_caution(const h5fz_spec *spec)
{
  char text[320];
  if (h5fz_spec_caution(spec, text, sizeof text)) h5fz_log_once(H5FZ_LOG_REL_ABOVE_ONE, "h5fz: warning: %s", text);
}

/* A dataset whose fill value HDF5 never writes (fill time NEVER, netCDF's
 * NOFILL: nccopy, ncgen's _NoFill, NCO; or no fill value defined) still
 * hands the filter whole chunks: the parts never written (an edge chunk's
 * padding, steps not written yet) are zero bytes, since HDF5 clears a new
 * chunk's buffer when it writes no fill value into it (H5D__chunk_lock in
 * 1.10 to 2.0; parallel HDF5 1.14's collective filtered write callocs it).
 * So the padding is +0.0, which REL ranges leave out and bin 0 keeps
 * exactly, and a REL chunk written in parts keeps the guarantee of
 * docs/spec.md §6. A fill
 * value set but never written is no padding: it becomes the missing value
 * (kept exactly, left out of REL ranges) unless missing= names another. */
static void padding_is_zero(int *has_fill, double *fill, h5fz_spec *spec)
{
  if (*has_fill && *fill != 0.0 && !isnan(*fill) && !spec->has_missing) {
    spec->has_missing = 1;
    spec->missing = *fill;
  }
  *has_fill = 1;
  *fill = 0.0;
}

int h5fz_filter_local_cd_values(const unsigned *cd_in, size_t n_in, h5fz_dtype dtype, int big_endian, uint32_t rank,
                                const uint32_t *dims, int has_fill, double fill, int padding_known, unsigned *cd_out,
                                size_t cap, size_t *n_out, char *msg, size_t msg_len)
{
  h5fz_spec spec;
  int st = h5fz_spec_from_cd_values(cd_in, n_in, &spec, NULL);
  if (st != H5FZ_OK) return codec_failure(st, msg, msg_len, "invalid cd_values");
  spec.rank = 0;
  for (uint32_t i = 0; i < H5FZ_MAX_RANK; i++) spec.dims[i] = 0;
  spec.has_fill = 0;
  spec.fill = 0.0;
  spec.big_endian = 0;
  if (dtype == H5FZ_DTYPE_UNKNOWN) {
    /* The user part is still validated for a refused type: a bad spec is a
     * mistake worth reporting wherever it is applied (h5repack -f applies
     * one spec to every dataset). */
    spec.dtype = H5FZ_DTYPE_UNKNOWN;
    st = h5fz_spec_validate(&spec);
    if (st != H5FZ_OK) return codec_failure(st, msg, msg_len, "invalid filter parameters");
    st = h5fz_spec_to_cd_values(&spec, 0, cd_out, cap, n_out);
    return st == H5FZ_OK ? st : codec_failure(st, msg, msg_len, "cannot store cd_values");
  }
  if (rank == 0 || rank > H5FZ_MAX_RANK) {
    snprintf(msg, msg_len, "h5fz: chunk rank %u out of range 1..%d", (unsigned)rank, H5FZ_MAX_RANK);
    return H5FZ_ERR_ARG;
  }
  if (!padding_known) padding_is_zero(&has_fill, &fill, &spec);
  spec.dtype = dtype;
  spec.big_endian = big_endian != 0;
  spec.rank = rank;
  for (uint32_t i = 0; i < rank; i++) spec.dims[i] = dims[i];
  spec.has_fill = has_fill;
  spec.fill = fill;
  /* the format's limit, caught at H5Dcreate instead of at the first write */
  if (h5fz_spec_chunk_bytes(&spec) > H5FZ_MAX_CHUNK_BYTES) {
    snprintf(msg, msg_len,
             "h5fz: a chunk of this dataset has more than %u bytes, the limit of the h5fz format (every version); "
             "use smaller chunks (1-16 MiB are typical)",
             H5FZ_MAX_CHUNK_BYTES);
    return H5FZ_ERR_ARG;
  }
  st = h5fz_spec_validate(&spec);
  if (st != H5FZ_OK) return codec_failure(st, msg, msg_len, "invalid filter parameters for this dataset");
  warn_caution(&spec);
  st = h5fz_spec_to_cd_values(&spec, 1, cd_out, cap, n_out);
  return st == H5FZ_OK ? st : codec_failure(st, msg, msg_len, "cannot store cd_values");
}

int h5fz_filter_device_check(const unsigned *cd, size_t n, int strict, char *msg, size_t msg_len)
{
  h5fz_spec spec;
  int st = h5fz_spec_from_cd_values(cd, n, &spec, NULL);
  if (st != H5FZ_OK) return codec_failure(st, msg, msg_len, "invalid cd_values");
  /* one chunk of the dataset part (none: nothing to compress) */
  st = strict ? h5fz_device_check(&spec, 0) : H5FZ_OK;
  /* the GPU's context and the chain's module made on a thread while the
   * program goes on to its first H5Dwrite (docs/filter.md, "First chunks") */
  if (st == H5FZ_OK) return h5fz_device_warm_up(&spec, 0);
  const char *detail = h5fz_last_error();
  snprintf(msg, msg_len, "h5fz: %s", detail && detail[0] ? detail : h5fz_status_name(st));
  return st;
}

int h5fz_filter_caller_stores_raw_on_refusal(void)
{
  /* read once: the executable of a process does not change (an exec
   * starts a new image, with this library loaded afresh) */
  static atomic_int known = 0; /* 0 not read, 1 not h5repack, 2 h5repack */
  int k = atomic_load(&known);
  if (k == 0) {
    char path[4096];
    ssize_t len = readlink("/proc/self/exe", path, sizeof path - 1);
    k = 1;
    if (len > 0) {
      path[len] = '\0';
      const char *base = strrchr(path, '/');
      /* "h5repack", Debian's and conda's names, a build tree's lt-h5repack */
      if (strstr(base ? base + 1 : path, "h5repack")) k = 2;
    }
    atomic_store(&known, k);
  }
  return k == 2;
}

static int run_encode(const unsigned *cd, size_t n, const void *in, size_t in_bytes, void **out, size_t *out_bytes,
                      char *msg, size_t msg_len)
{
  /* Parsing a few dozen words costs nothing next to encoding a chunk, so
   * the spec is parsed per call rather than cached (no shared state, no
   * locking, nothing to invalidate). */
  h5fz_spec spec;
  int st = h5fz_spec_from_cd_values(cd, n, &spec, NULL);
  if (st != H5FZ_OK) return codec_failure(st, msg, msg_len, "invalid cd_values");
  if (spec.dtype == H5FZ_DTYPE_UNKNOWN) {
    snprintf(msg, msg_len,
             "h5fz: cd_values carry no dataset part (the dataset type was refused, "
             "or set_local did not run); chunk not compressed");
    return H5FZ_ERR_SPEC;
  }
  st = h5fz_chunk_encode(&spec, in, in_bytes, out, out_bytes);
  if (st != H5FZ_OK) return codec_failure(st, msg, msg_len, "cannot compress chunk");
  return H5FZ_OK;
}

int h5fz_filter_run(int reverse, const unsigned *cd, size_t n, const void *in, size_t in_bytes, void **out,
                    size_t *out_bytes, char *msg, size_t msg_len)
{
  *out = NULL;
  *out_bytes = 0;
  int st;
  if (reverse) {
    /* The container must hold a chunk of this dataset, of its type and
     * size (HDF5 copies the chunk's full size out of what we return). */
    h5fz_spec spec;
    /* of its chunk shape (same count, other dims would come back in another
     * order) and bound (a looser one would break the dataset's promise);
     * cd_values without a dataset part: the bound only */
    int have_spec = h5fz_spec_from_cd_values(cd, n, &spec, NULL) == H5FZ_OK;
    /* the first decode of the process starts the GPU's warm-up (a reader
     * runs no set_local); this chunk and those until it is ready go to the
     * CPU under H5FZ_DEVICE=auto */
    static atomic_int decoded;
    if (have_spec && !atomic_exchange(&decoded, 1)) h5fz_device_warm_up(&spec, 0);
    st = have_spec ? h5fz_chunk_decode_for(in, in_bytes, &spec, out, out_bytes)
                   : h5fz_chunk_decode(in, in_bytes, out, out_bytes);
    if (st != H5FZ_OK) {
      char what[96];
      snprintf(what, sizeof what, "cannot decompress chunk of %zu bytes", in_bytes);
      return codec_failure(st, msg, msg_len, what);
    }
  } else {
    st = run_encode(cd, n, in, in_bytes, out, out_bytes, msg, msg_len);
    if (st != H5FZ_OK) return st;
  }
  /* HDF5 reads a returned size of 0 as failure; a codec that produced no
   * bytes for a non-empty chunk is broken, so say so rather than let HDF5
   * report a bare "filter failed". */
  if (*out == NULL || *out_bytes == 0) {
    free(*out);
    *out = NULL;
    snprintf(msg, msg_len, "h5fz: codec returned an empty buffer for a %zu-byte chunk (%s)", in_bytes,
             reverse ? "decode" : "encode");
    return H5FZ_ERR_CORRUPT;
  }
  return H5FZ_OK;
}
