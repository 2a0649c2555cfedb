/*
 * h5fz_mpi_pieces.c - a rank's part cut into pieces, each encoded on a
 * thread of its own (h5fz_mpi_pieces.h).
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "h5fz_error.h"
#include "h5fz_mpi_pieces.h"

h5fz_array_geom h5fz_mpi_part_geom(const h5fz_dataset_info *di, const uint64_t *lo, const uint64_t *hi)
{
  h5fz_array_geom g = di->g;
  for (uint32_t d = 0; d < g.rank; d++) g.dims[d] = hi[d] - lo[d];
  return g;
}

uint64_t h5fz_mpi_dataset_chunk(const h5fz_dataset_info *di, const h5fz_array_geom *pg, const uint64_t *lo,
                                uint64_t local, hsize_t *origin)
{
  uint64_t o[H5FZ_ARRAY_MAX_RANK], idx = 0;
  h5fz_array_chunk_origin(pg, local, o);
  for (uint32_t d = 0; d < pg->rank; d++) {
    origin[d] = lo[d] + o[d];
    idx = idx * ((di->g.dims[d] + di->g.chunk[d] - 1) / di->g.chunk[d]) + origin[d] / di->g.chunk[d];
  }
  return idx;
}

/* Values in one element step along dim 0 of the part (a plane). */
static uint64_t plane_elems(const h5fz_mpi_pieces *ps)
{
  uint64_t n = 1;
  for (uint32_t d = 1; d < ps->di->g.rank; d++) n *= ps->hi[d] - ps->lo[d];
  return n;
}

void h5fz_mpi_pieces_init(h5fz_mpi_pieces *ps, const h5fz_dataset_info *di, const uint64_t *lo, const uint64_t *hi,
                          const void *data, int on_device, unsigned long long piece_bytes, h5fz_attr_tables *t)
{
  memset(ps, 0, sizeof *ps);
  ps->di = di;
  ps->data = data;
  ps->on_device = on_device;
  ps->t = t;
  uint64_t elems = 1;
  for (uint32_t d = 0; d < di->g.rank; d++) {
    ps->lo[d] = lo[d];
    ps->hi[d] = hi[d];
    elems *= hi[d] - lo[d];
  }
  if (!elems) return;
  uint64_t k0 = di->g.chunk[0], rows = (hi[0] - lo[0] + k0 - 1) / k0;
  uint64_t row_bytes = k0 * plane_elems(ps) * h5fz_dtype_size(di->dtype);
  uint64_t most = piece_bytes ? piece_bytes / row_bytes : rows;
  if (most < 1) most = 1;
  if (most > rows) most = rows;
  /* as many pieces as `most` rows need, the rows spread evenly over them
   * (217 rows at most 51 a piece: 5 of 44, not 4 of 51 and one of 13) */
  ps->n = (rows + most - 1) / most;
  ps->rows_per_piece = (rows + ps->n - 1) / ps->n;
  ps->n = (rows + ps->rows_per_piece - 1) / ps->rows_per_piece;
}

static double now_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int piece_sink(void *ctx, const h5fz_encoded_chunk *c)
{
  h5fz_mpi_piece *p = ctx;
  hsize_t origin[H5FZ_ARRAY_MAX_RANK];
  uint64_t idx = h5fz_mpi_dataset_chunk(p->of->di, &p->g, p->lo, c->index, origin);
  int rc = h5fz_mpi_chunks_add(&p->chunks, idx, c->container, c->bytes);
  return rc ? rc : h5fz_attr_tables_add(p->of->t, c, idx, origin);
}

static void *encode(void *arg)
{
  h5fz_mpi_piece *p = arg;
  double t0 = now_s();
  h5fz_clear_error();
  const h5fz_overrides *previous = h5fz_overrides_enter(p->of->overrides);
  p->rc = h5fz_array_encode(&p->of->di->spec, &p->g, p->data, p->of->on_device, piece_sink, p, &p->ex);
  h5fz_overrides_leave(previous);
  if (p->rc) snprintf(p->message, sizeof p->message, "%s", h5fz_last_error());
  p->seconds = now_s() - t0;
  return NULL;
}

void h5fz_mpi_piece_start(const h5fz_mpi_pieces *ps, uint64_t k, int in_background, h5fz_mpi_piece *p)
{
  memset(p, 0, sizeof *p);
  p->of = ps;
  snprintf(p->ex.kernel_class, sizeof p->ex.kernel_class, "cpu");
  if (k >= ps->n) return; /* an empty piece: this rank's part has fewer */
  const h5fz_dataset_info *di = ps->di;
  uint64_t hi[H5FZ_ARRAY_MAX_RANK];
  for (uint32_t d = 0; d < di->g.rank; d++) {
    p->lo[d] = ps->lo[d];
    hi[d] = ps->hi[d];
  }
  uint64_t rows = ps->rows_per_piece * di->g.chunk[0];
  p->lo[0] = ps->lo[0] + k * rows;
  if (hi[0] > p->lo[0] + rows) hi[0] = p->lo[0] + rows;
  p->g = h5fz_mpi_part_geom(di, p->lo, hi);
  p->data = ps->data + (p->lo[0] - ps->lo[0]) * plane_elems(ps) * h5fz_dtype_size(di->dtype);
  /* a piece that cannot have a thread is encoded here: slower, as right */
  p->threaded = in_background && pthread_create(&p->thread, NULL, encode, p) == 0;
  if (!p->threaded) encode(p);
}

int h5fz_mpi_piece_finish(h5fz_mpi_piece *p)
{
  if (p->threaded) {
    pthread_join(p->thread, NULL);
    p->threaded = 0;
  }
  return p->rc ? h5fz_fail(p->rc, "%s", p->message) : H5FZ_OK;
}

void h5fz_mpi_piece_free(h5fz_mpi_piece *p) { h5fz_mpi_chunks_free(&p->chunks); }
