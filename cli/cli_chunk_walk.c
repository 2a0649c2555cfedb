/*
 * cli_chunk_walk.c - every stored chunk of a dataset in turn
 * (h5fz_cli_walk_chunks): by HDF5's chunk index, its offsets corrected
 * where HDF5 reports them swizzled, with the stored bytes and filter mask
 * of each when asked.
 */
#include "h5fz_cli.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "h5fz_settings.h" /* H5FZ_CHUNK_WALK, read once in fusion/h5fz_settings.c */

/* The stored bytes of one chunk at a time, grown as needed. */
typedef struct {
  void *buf;
  size_t cap;
} chunk_buffer;

/* Read the stored bytes and filter mask of the chunk at c->offset (c->size
 * bytes) into b. Returns 0, or -1 with c->error set (why holds it). */
static int read_chunk(hid_t dset, h5fz_cli_chunk *c, chunk_buffer *b, char *why, size_t len)
{
  uint32_t filters = 0;
  size_t want = c->size ? (size_t)c->size : 1;
  if (!b->buf || b->cap < want) {
    void *grown = realloc(b->buf, want);
    if (!grown) {
      snprintf(why, len, "out of memory (a chunk of %llu bytes)", (unsigned long long)c->size);
      c->error = why;
      return -1;
    }
    b->buf = grown;
    b->cap = want;
  }
  if (H5Dread_chunk(dset, H5P_DEFAULT, c->offset, &filters, b->buf) < 0) {
    if (!h5fz_cli_hdf5_reason(why, len)[0]) snprintf(why, len, "cannot read the chunk");
    c->error = why;
    return -1;
  }
  c->filter_mask = filters;
  c->bytes = b->buf;
  return 0;
}

/* The grid's geometry, for both walks. */
typedef struct {
  int rank;
  hsize_t dims[H5S_MAX_RANK], chunk[H5S_MAX_RANK];
  int order[H5S_MAX_RANK];
  int swizzled;                     /* order[] is not the identity */
  hsize_t max_chunks[H5S_MAX_RANK]; /* chunks along the maximum extent (unlimited: 0) */
} grid_geom;

/* The grid in the order the chunk index lists chunks: row-major over the
 * scaled chunk coordinates for every index type (v1 and v2 B-trees compare
 * them in dimension order; fixed arrays, implicit and single-chunk indexes
 * are row-major), except an extensible array whose unlimited dimension is
 * not the first: it lists that dimension slowest ("swizzled"), the others
 * row-major. order[0] is the slowest dimension. */
static void index_order(hid_t dset, hid_t space, grid_geom *g)
{
  H5D_chunk_index_t type;
  hsize_t maxdims[H5S_MAX_RANK];
  int unlimited = -1, n_unlimited = 0;
  for (int d = 0; d < g->rank; d++) g->order[d] = d;
  if (H5Dget_chunk_index_type(dset, &type) < 0 || type != H5D_CHUNK_IDX_EARRAY) return;
  if (H5Sget_simple_extent_dims(space, NULL, maxdims) < 0) return;
  for (int d = 0; d < g->rank; d++) {
    if (maxdims[d] == H5S_UNLIMITED) {
      unlimited = d;
      n_unlimited++;
      g->max_chunks[d] = 0;
    } else {
      g->max_chunks[d] = (maxdims[d] + g->chunk[d] - 1) / g->chunk[d];
      if (g->max_chunks[d] == 0) return; /* a zero maximum extent: nothing to swizzle */
    }
  }
  if (n_unlimited != 1 || unlimited <= 0) return;
  g->order[0] = unlimited;
  for (int d = 0, k = 1; d < g->rank; d++)
    if (d != unlimited) g->order[k++] = d;
  g->swizzled = 1;
}

/* 1 when this HDF5 reports the offsets of the chunks of an extensible
 * array (one unlimited dimension, not the first) wrongly: HDF5 1.10 lists
 * such an index by its linear slot, numbered over the "swizzled" maximum
 * chunk grid (the unlimited dimension moved first), but H5Dget_chunk_info
 * (and, the same way round, H5Dget_chunk_info_by_coord) turns the slot
 * back into coordinates by counting over the unswizzled maximum grid, so
 * the offset names another chunk or none. Probed once, on a small
 * in-memory file: one chunk at [2,0] of a 3 x 2 dataset unlimited in its
 * second dimension, reported as [0,2] when the bug is there. */
static int swizzled_offsets(void)
{
  static int known = -1;
  hid_t fapl, file = -1, dcpl = -1, space = -1, mem = -1, dset = -1;
  hsize_t dims[2] = {3, 2}, maxdims[2] = {3, H5S_UNLIMITED}, one[2] = {1, 1};
  hsize_t start[2] = {2, 0}, off[2] = {0, 0}, size = 0;
  unsigned mask = 0;
  haddr_t addr;
  float v = 1.0f;
  if (known >= 0) return known;
  known = 0;
  fapl = H5Pcreate(H5P_FILE_ACCESS);
  if (fapl < 0 || H5Pset_fapl_core(fapl, 4096, 0) < 0 ||
      H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST) < 0)
    goto done;
  file = H5Fcreate("h5fz-swizzle-probe.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  dcpl = H5Pcreate(H5P_DATASET_CREATE);
  space = H5Screate_simple(2, dims, maxdims);
  mem = H5Screate_simple(2, one, NULL);
  if (file < 0 || dcpl < 0 || space < 0 || mem < 0 || H5Pset_chunk(dcpl, 2, one) < 0) goto done;
  dset = H5Dcreate2(file, "probe", H5T_NATIVE_FLOAT, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  if (dset < 0 || H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, one, NULL) < 0 ||
      H5Dwrite(dset, H5T_NATIVE_FLOAT, mem, space, H5P_DEFAULT, &v) < 0 || H5Sselect_all(space) < 0 ||
      H5Dget_chunk_info(dset, space, 0, off, &mask, &addr, &size) < 0)
    goto done;
  known = off[0] == 0 && off[1] == 2;
done:
  H5FZ_CLI_CLOSE(dset, mem, space, dcpl, file, fapl);
  return known;
}

/* An offset as swizzled_offsets() describes it, back to the chunk's own:
 * its slot from the coordinates as reported (the unlimited dimension u
 * never wraps there, so the dimensions before it read 0), then the
 * coordinates from the slot over the swizzled grid (u slowest). */
static void unswizzle_offset(const grid_geom *g, hsize_t *off)
{
  int u = g->order[0];
  hsize_t slot = off[u] / g->chunk[u];
  for (int d = u + 1; d < g->rank; d++) slot = slot * g->max_chunks[d] + off[d] / g->chunk[d];
  for (int k = g->rank - 1; k >= 1; k--) {
    int d = g->order[k];
    off[d] = slot % g->max_chunks[d] * g->chunk[d];
    slot /= g->max_chunks[d];
  }
  off[u] = slot * g->chunk[u];
}

/* The old way, for sparse grids: H5Dget_chunk_info by index. Each call
 * walks the index up to the chunk, so n chunks cost n^2 / 2 steps. */
static int walk_by_index(hid_t dset, hid_t space, const grid_geom *g, hsize_t n, int want_bytes, h5fz_cli_chunk_fn fn,
                         void *data, chunk_buffer *b)
{
  for (hsize_t i = 0; i < n; i++) {
    h5fz_cli_chunk c;
    char why[400];
    haddr_t addr;
    unsigned mask = 0;
    hsize_t size = 0;
    int rc;
    memset(&c, 0, sizeof c);
    c.index = i;
    c.rank = g->rank;
    if (H5Dget_chunk_info(dset, space, i, c.offset, &mask, &addr, &size) < 0) {
      if (!h5fz_cli_hdf5_reason(why, sizeof why)[0]) snprintf(why, sizeof why, "cannot locate the chunk");
      memset(c.offset, 0, sizeof c.offset);
      c.error = why;
    } else {
      if (g->swizzled && swizzled_offsets()) unswizzle_offset(g, c.offset);
      c.size = size;
      c.filter_mask = mask;
      if (want_bytes == H5FZ_CLI_WALK_BYTES) read_chunk(dset, &c, b, why, sizeof why);
    }
    if ((rc = fn(&c, data)) != 0) return rc;
  }
  return 0;
}

int h5fz_cli_walk_chunks(hid_t dset, int want_bytes, h5fz_cli_chunk_fn fn, void *data, hsize_t *n_chunks)
{
  hid_t space = H5Dget_space(dset), dcpl = -1;
  hsize_t grid[H5S_MAX_RANK], scaled[H5S_MAX_RANK];
  hsize_t n = 0, found = 0;
  double cells = 1.0;
  int rc = 0;
  const char *walk;
  char walk_buf[16];
  char lookup_failed[300] = "";
  grid_geom g;
  chunk_buffer b = {NULL, 0};

  memset(&g, 0, sizeof g);
  *n_chunks = 0;
  if (space < 0) return -1;
  g.rank = H5Sget_simple_extent_dims(space, g.dims, NULL);
  dcpl = H5Dget_create_plist(dset);
  if (g.rank < 0 || dcpl < 0 || H5Dget_num_chunks(dset, space, &n) < 0) {
    rc = -1;
    goto done;
  }
  *n_chunks = n;
  if (n == 0) goto done;
  if (g.rank < 1 || H5Pget_chunk(dcpl, g.rank, g.chunk) != g.rank) {
    g.rank = g.rank < 0 ? 0 : g.rank;
    rc = walk_by_index(dset, space, &g, n, want_bytes, fn, data, &b);
    goto done;
  }
  index_order(dset, space, &g);
  for (int d = 0; d < g.rank; d++) {
    grid[d] = g.chunk[d] ? (g.dims[d] + g.chunk[d] - 1) / g.chunk[d] : 0;
    cells *= (double)grid[d];
    scaled[d] = 0;
  }
  /* A grid lookup costs about 50 steps of an index walk: walk the grid
   * unless it is so sparse that n^2 / 2 steps are cheaper.
   * H5FZ_CHUNK_WALK=grid or =index forces one (tests compare the two). */
  walk = h5fz_settings_value("H5FZ_CHUNK_WALK", walk_buf, sizeof walk_buf);
  if (walk && *walk && strcmp(walk, "grid") && strcmp(walk, "index")) {
    static int warned; /* once a run, not once a dataset */
    if (!warned)
      fprintf(stderr, "h5fz: ignoring H5FZ_CHUNK_WALK=%s (want grid or index); choosing by the chunk count\n", walk);
    warned = 1;
    walk = NULL;
  }
  if (cells == 0.0 || (walk && !strcmp(walk, "index")) ||
      (!(walk && !strcmp(walk, "grid")) && cells > 4.0 * (double)n && cells > (double)n * (double)n / 100.0)) {
    rc = walk_by_index(dset, space, &g, n, want_bytes, fn, data, &b);
    goto done;
  }
  for (;;) {
    h5fz_cli_chunk c;
    char why[400];
    hsize_t size = 0;
    int k;
    memset(&c, 0, sizeof c);
    c.rank = g.rank;
    for (int d = 0; d < g.rank; d++) c.offset[d] = scaled[d] * g.chunk[d];
    if (H5Dget_chunk_storage_size(dset, c.offset, &size) < 0) {
      /* HDF5 1.10 fails here for a chunk that is not allocated ("chunk
       * storage is not allocated"); later versions give size 0. A lookup
       * that failed for another reason leaves a chunk unfound, which the
       * count below catches. */
      size = 0;
      if (!lookup_failed[0]) h5fz_cli_hdf5_reason(lookup_failed, sizeof lookup_failed);
    }
    if (size) {
      c.size = size;
      /* The filter mask comes with the bytes only. */
      if (want_bytes != H5FZ_CLI_WALK_LOCATE) read_chunk(dset, &c, &b, why, sizeof why);
    }
    if (c.size) {
      c.index = found++;
      if ((rc = fn(&c, data)) != 0 || found == n) break;
    }
    for (k = g.rank - 1; k >= 0; k--) {
      if (++scaled[g.order[k]] < grid[g.order[k]]) break;
      scaled[g.order[k]] = 0;
    }
    if (k < 0) break;
  }
  if (!rc && found < n) {
    /* H5Dget_num_chunks counted chunks the grid of the extent does not
     * hold: say so rather than show fewer chunks silently. */
    h5fz_cli_chunk c;
    char why[600];
    memset(&c, 0, sizeof c);
    c.index = found;
    c.rank = g.rank;
    snprintf(why, sizeof why,
             "the dataset counts %llu allocated chunks, but only %llu were found in its extent's "
             "chunk grid%s%s",
             (unsigned long long)n, (unsigned long long)found, lookup_failed[0] ? "; a lookup failed: " : "",
             lookup_failed);
    c.error = why;
    rc = fn(&c, data);
  }
done:
  free(b.buf);
  if (dcpl >= 0) H5Pclose(dcpl);
  H5Sclose(space);
  return rc;
}
