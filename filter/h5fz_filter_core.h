/*
 * h5fz_filter_core.h - the parts of the HDF5 filter that need no HDF5.
 *
 * The plugin (h5fz_plugin.c) keeps every HDF5 call; this file turns what
 * HDF5 hands it (cd_values words, chunk dims, chunk bytes) into codec calls.
 * Keeping HDF5 out of here means a later self-binding layer (resolving the
 * HDF5 functions from the calling libhdf5 at run time) only has to cover
 * h5fz_plugin.c.
 *
 * All functions are internal to the plugin (hidden visibility). On failure
 * they write a complete, human-readable message starting with "h5fz: " into
 * msg (msg_len bytes, always NUL terminated) for the caller to push onto the
 * HDF5 error stack.
 */
#ifndef H5FZ_FILTER_CORE_H
#define H5FZ_FILTER_CORE_H

#include <stddef.h>
#include <stdint.h>

#include "h5fz.h"

/* Size of the buffers callers pass as msg. */
#define H5FZ_FILTER_MSG_LEN 512

/* Fold an HDF5 chunk shape into the at most H5FZ_MAX_RANK dims the spec
 * keeps. dims[0..rank) are in elements, slowest first (HDF5 order). Dims
 * beyond H5FZ_MAX_RANK are multiplied into the slowest kept dim, because the
 * fastest dims are the ones Lorenzo-style predictors exploit.
 * Output: *rank_out (1..H5FZ_MAX_RANK) and out[0..*rank_out).
 * Returns H5FZ_OK, or H5FZ_ERR_ARG (rank 0, a zero dim, or a folded dim that
 * does not fit 32 bits) with msg filled. */
int h5fz_filter_fold_dims(size_t rank, const uint64_t *dims, uint32_t *rank_out, uint32_t out[H5FZ_MAX_RANK], char *msg,
                          size_t msg_len);

/* Compute the cd_values set_local stores for one dataset.
 * cd_in[0..n_in) are the words currently in the DCPL: the user part,
 * possibly followed by a dataset part this filter stored earlier (a reused
 * DCPL, h5repack -l); the old dataset part is dropped, never duplicated.
 * dtype is the dataset's element type, or H5FZ_DTYPE_UNKNOWN when the type
 * was refused (only reachable with an optional filter): then only the user
 * part is written, so the filter function refuses every chunk and HDF5
 * stores them unfiltered instead of compressing integers as floats.
 * big_endian: the dataset's values are big-endian (recorded in the dataset
 * part; the codec swaps them and the containers record the order).
 * rank/dims are the folded chunk dims (see h5fz_filter_fold_dims).
 * has_fill/fill: the dataset's fill value (HDF5 pads edge chunks with it;
 * REL ranges leave it out); padding_known = 0 when HDF5 writes no fill value
 * (none defined, or fill time NEVER): the padding is then +0.0 (HDF5 clears
 * such chunks), and a fill value set but never written becomes the missing
 * value unless the user part names one (docs/netcdf.md).
 * cd_out holds cap words; *n_out receives the count.
 * Returns H5FZ_OK, or the codec status (H5FZ_ERR_SPEC for a bad user part:
 * version, bound, chain, sub-chunk size; H5FZ_ERR_ARG for chunks the format
 * cannot hold: rank, bytes) with msg filled. */
int h5fz_filter_local_cd_values(const unsigned *cd_in, size_t n_in, h5fz_dtype dtype, int big_endian, uint32_t rank,
                                const uint32_t *dims, int has_fill, double fill, int padding_known, unsigned *cd_out,
                                size_t cap, size_t *n_out, char *msg, size_t msg_len);

/* The executor check of set_local (h5fz_device_check) for the cd_values
 * set_local is about to store (with their dataset part: type and chunk
 * dims give the chunk bytes), then the GPU warm-up. strict = 0 skips the
 * check and only warms up: a bad H5FZ_DEVICE or a missing GPU is then left
 * to the chunk calls, where the CPU executor takes the chunks with one
 * warning (for callers that turn a refusal into raw data:
 * h5fz_filter_caller_stores_raw_on_refusal). Returns H5FZ_OK, or the codec
 * status with msg filled ("h5fz: H5FZ_DEVICE=gpu, but the GPU executor is
 * not usable: ..."). */
int h5fz_filter_device_check(const unsigned *cd, size_t n, int strict, char *msg, size_t msg_len);

/* 1 when the running program is h5repack (any version, any suffix such as
 * h5repack-shared), 0 otherwise or when it cannot be told (no /proc).
 * h5repack creates each dataset inside H5E_BEGIN_TRY and, when that
 * H5Dcreate fails, creates it again with the source's creation properties:
 * a set_local refusal there means the dataset is copied UNCOMPRESSED and
 * h5repack exits 0 (HDF5 1.10 to 1.14; only -v says "Applying original
 * settings"). set_local therefore refuses there only what it must (a spec
 * it cannot code), never a device setting, and says what h5repack will do. */
int h5fz_filter_caller_stores_raw_on_refusal(void);

/* Run the filter on one chunk.
 * reverse = 0: encode in_bytes bytes (need not be whole elements: a
 * Fletcher32 filter before this one appends 4 bytes) with the spec in
 * cd[0..n), which must carry a dataset part. reverse != 0: decode a chunk
 * container (the spec travels inside the container, cd is not used).
 * On success *out is a malloc'd buffer the caller owns (free()) of
 * *out_bytes > 0 bytes. in is never freed or modified here.
 * Returns H5FZ_OK or a negative h5fz_status with msg filled. */
int h5fz_filter_run(int reverse, const unsigned *cd, size_t n, const void *in, size_t in_bytes, void **out,
                    size_t *out_bytes, char *msg, size_t msg_len);

#endif /* H5FZ_FILTER_CORE_H */
