/*
 * compress_copy.h - the copy of `h5fz compress` (cmd_compress.c): a whole
 * HDF5 file into another, compressing its float datasets with an h5fz
 * spec, built on the HDF5 API. Private to cli/.
 *
 * What is copied how:
 *  - groups: created again with their creation properties (link and
 *    attribute creation order, as netCDF-4 sets them), attributes copied
 *    in creation order;
 *  - a float dataset of 2 or more elements that the selection takes:
 *    created again with the dataset's own creation properties (fill value,
 *    allocation time, maximum extent), chunked (its chunks, or about
 *    H5FZ_COMPRESS_CHUNK_BYTES), its filters replaced by h5fz (mandatory),
 *    written slab by slab, attributes copied;
 *  - every other object (non-float datasets, dimension scales, what
 *    --exclude names, named datatypes): H5Ocopy, unchanged;
 *  - soft and external links as links; a second hard link to an object as
 *    a hard link to its copy;
 *  - dimension scales (netCDF-4 coordinates): attached again in the copy
 *    (H5DSattach_scale), since object references cannot be copied between
 *    files.
 * Object references anywhere else (attributes or datasets of reference
 * type) are refused: their copies would point nowhere.
 */
#ifndef H5FZ_COMPRESS_COPY_H
#define H5FZ_COMPRESS_COPY_H

#include <stdint.h>

#include <hdf5.h>

#include "h5fz.h"
#include "h5fz_cli.h"

/* Target chunk bytes for a contiguous or compact float dataset. */
#define H5FZ_COMPRESS_CHUNK_BYTES (4u << 20)

/* What the copy does with the datasets. */
typedef struct {
  h5fz_spec spec;                /* parsed and validated */
  unsigned cd[H5FZ_CD_USER_MAX]; /* its user cd_values */
  size_t n_cd;
  const h5fz_cli_names *only;    /* non-empty: compress only these (paths or groups) */
  const h5fz_cli_names *exclude; /* never compress these (paths or groups) */
  int skip_refused;              /* a dataset the filter refuses is copied unchanged */
  int progress;                  /* draw a progress line on stderr */
} h5fz_compress_options;

/* One dataset of the input and what became of it. */
typedef struct {
  char *path;     /* absolute path in both files (malloc'd) */
  int compressed; /* 1: through h5fz; 0: copied unchanged */
  char why[512];  /* compressed == 0: why (not float, dimension scale, ...) */
  char dtype[64];
  char shape[128];
  uint64_t elements;
  uint64_t raw_bytes;    /* elements x element size */
  uint64_t stored_bytes; /* of the copy, filled after the copy is closed */
  /* filled by the check (compress_check.h) */
  int checked;
  double bound, max_err;
  uint64_t chunks, unfiltered_chunks;
  int ok;
  char problem[512]; /* non-empty: the check failed, and how */
} h5fz_compress_item;

typedef struct {
  h5fz_compress_item *items;
  size_t n, cap;
} h5fz_compress_items;

void h5fz_compress_items_free(h5fz_compress_items *list);

/* Copy the whole of file `in` into the empty file `out` (root attributes,
 * then every link below the root, recursively). Appends one item per
 * dataset to *items. Returns 0, or -1 with the reason, naming the object,
 * in err (err_len bytes). */
int h5fz_compress_copy(hid_t in, hid_t out, const h5fz_compress_options *o, h5fz_compress_items *items, char *err,
                       size_t err_len);

#endif /* H5FZ_COMPRESS_COPY_H */
