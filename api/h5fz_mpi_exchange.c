/*
 * h5fz_mpi_exchange.c - every rank's chunk containers and attribute tables
 * to every rank (h5fz_mpi_exchange.h).
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "h5fz_error.h"
#include "h5fz_mpi_exchange.h"
#include "h5fz_mpi_parts.h"

/* MPI counts are int: big buffers go in pieces of this many bytes. */
#define PIECE (1ull << 30)

/* The gathers below send a table as 3 * n MPI_UINT64_T. */
_Static_assert(sizeof(h5fz_mpi_chunk) == 3 * sizeof(uint64_t), "h5fz_mpi_chunk is three uint64_t, unpadded");

int h5fz_mpi_chunks_add(h5fz_mpi_chunks *c, uint64_t index, const void *container, size_t bytes)
{
  if (c->n == c->cap) {
    uint64_t cap = c->cap ? 2 * c->cap : 64;
    h5fz_mpi_chunk *t = realloc(c->chunk, cap * sizeof *t);
    if (!t) return h5fz_fail(H5FZ_ERR_NOMEM, "chunk table of %llu entries", (unsigned long long)cap);
    c->chunk = t;
    c->cap = cap;
  }
  if (c->used + bytes > c->payload_cap) {
    uint64_t cap = (c->used + bytes) * 2 + 4096;
    uint8_t *p = realloc(c->payload, cap);
    if (!p) return h5fz_fail(H5FZ_ERR_NOMEM, "%llu bytes of chunk containers", (unsigned long long)cap);
    c->payload = p;
    c->payload_cap = cap;
  }
  memcpy(c->payload + c->used, container, bytes);
  c->chunk[c->n++] = (h5fz_mpi_chunk){.index = index, .offset = c->used, .bytes = bytes};
  c->used += bytes;
  return H5FZ_OK;
}

void h5fz_mpi_chunks_free(h5fz_mpi_chunks *c)
{
  free(c->chunk);
  free(c->payload);
  memset(c, 0, sizeof *c);
}

static void bcast_bytes(void *buf, uint64_t n, int root, MPI_Comm comm)
{
  for (uint64_t at = 0; at < n; at += PIECE)
    MPI_Bcast((uint8_t *)buf + at, (int)(n - at < PIECE ? n - at : PIECE), MPI_BYTE, root, comm);
}

static const uint64_t *g_sort_keys, *g_sort_minor;
static int by_key(const void *a, const void *b)
{
  uint64_t i = *(const uint64_t *)a, j = *(const uint64_t *)b;
  uint64_t x = g_sort_keys[i], y = g_sort_keys[j];
  if (x != y || !g_sort_minor) return x < y ? -1 : x > y;
  x = g_sort_minor[i];
  y = g_sort_minor[j];
  return x < y ? -1 : x > y;
}

/* order[0..n) = the permutation that sorts by keys, then by minor (may be
 * NULL). Not reentrant: called on the MPI thread only. */
static void sort_order(const uint64_t *keys, const uint64_t *minor, uint64_t n, uint64_t *order)
{
  for (uint64_t i = 0; i < n; i++) order[i] = i;
  g_sort_keys = keys;
  g_sort_minor = minor;
  qsort(order, n, sizeof *order, by_key);
}

/* The chunk (row-major over g's grid) holding element `pos` (row-major in g). */
static uint64_t chunk_of_element(const h5fz_array_geom *g, uint64_t pos)
{
  uint64_t coord[H5FZ_ARRAY_MAX_RANK], idx = 0;
  for (uint32_t d = g->rank; d-- > 0;) {
    coord[d] = pos % g->dims[d];
    pos /= g->dims[d];
  }
  for (uint32_t d = 0; d < g->rank; d++)
    idx = idx * ((g->dims[d] + g->chunk[d] - 1) / g->chunk[d]) + coord[d] / g->chunk[d];
  return idx;
}

/* qsort order of chunk records: by chunk index (unique across ranks). */
static int by_chunk_index(const void *a, const void *b)
{
  uint64_t x = ((const h5fz_mpi_chunk *)a)->index, y = ((const h5fz_mpi_chunk *)b)->index;
  return x < y ? -1 : x > y;
}

int h5fz_mpi_chunks_allgather(MPI_Comm comm, const h5fz_mpi_chunks *mine, h5fz_mpi_chunks *all)
{
  int size = 1;
  MPI_Comm_size(comm, &size);
  memset(all, 0, sizeof *all);
  uint64_t sizes[2] = {mine->n, mine->used}, *per = malloc((size_t)size * 2 * 8);
  int rc = per ? H5FZ_OK : h5fz_fail(H5FZ_ERR_NOMEM, "chunk counts");
  if ((rc = h5fz_mpi_agree(comm, rc))) return rc;
  MPI_Allgather(sizes, 2, MPI_UINT64_T, per, 2, MPI_UINT64_T, comm);
  uint64_t n = 0, bytes = 0;
  for (int r = 0; r < size; r++) {
    n += per[2 * r];
    bytes += per[2 * r + 1];
  }
  h5fz_mpi_chunk *table = malloc((n + 1) * sizeof *table);
  uint8_t *payload = malloc(bytes + 1);
  int *counts = malloc((size_t)size * 2 * sizeof *counts), *displs = counts ? counts + size : NULL;
  rc = table && payload && counts
           ? H5FZ_OK
           : h5fz_fail(H5FZ_ERR_NOMEM, "%llu bytes of chunk containers from all ranks", (unsigned long long)bytes);
  if ((rc = h5fz_mpi_agree(comm, rc))) goto fail;
  /* rank r's table and payload land after ranks 0..r-1's. One Allgatherv
   * each where MPI's int counts and displacements hold them (one collective
   * instead of a broadcast per rank: on the H200 node, 8 ranks' 84 MB of
   * containers took 0.11-0.25 s as 4 x 8 broadcasts); else a broadcast from
   * each rank, in pieces. A table entry is 3 MPI_UINT64_T. */
  int me = 0;
  MPI_Comm_rank(comm, &me);
  int fits = n <= (uint64_t)INT_MAX / 3 && bytes <= (uint64_t)INT_MAX;
  uint64_t at = 0, base = 0;
  if (fits) {
    for (int r = 0; r < size; r++) {
      counts[r] = (int)(3 * per[2 * r]);
      displs[r] = (int)(3 * at);
      at += per[2 * r];
    }
    MPI_Allgatherv(mine->chunk, (int)(3 * mine->n), MPI_UINT64_T, table, counts, displs, MPI_UINT64_T, comm);
    for (int r = 0; r < size; r++) {
      counts[r] = (int)per[2 * r + 1];
      displs[r] = (int)base;
      base += per[2 * r + 1];
    }
    MPI_Allgatherv(mine->payload, (int)mine->used, MPI_BYTE, payload, counts, displs, MPI_BYTE, comm);
  } else {
    for (int r = 0; r < size; r++) {
      uint64_t nr = per[2 * r], br = per[2 * r + 1];
      if (r == me) {
        if (nr) memcpy(table + at, mine->chunk, nr * sizeof *table);
        if (br) memcpy(payload + base, mine->payload, br);
      }
      bcast_bytes(table + at, nr * sizeof *table, r, comm);
      bcast_bytes(payload + base, br, r, comm);
      at += nr;
      base += br;
    }
  }
  /* each rank's offsets are into its own payload: move them to where it landed */
  at = base = 0;
  for (int r = 0; r < size; r++) {
    for (uint64_t i = at; i < at + per[2 * r]; i++) table[i].offset += base;
    at += per[2 * r];
    base += per[2 * r + 1];
  }
  /* every rank writes in the same (increasing index) order */
  qsort(table, n, sizeof *table, by_chunk_index);
  all->chunk = table;
  all->n = all->cap = n;
  all->payload = payload;
  all->used = all->payload_cap = bytes;
  table = NULL;
  payload = NULL;
fail:
  free(per);
  free(table);
  free(payload);
  free(counts);
  return rc;
}

/* The outlier lists of every rank, merged in the order a serial write lists
 * them: chunk by chunk (row-major over the grid), increasing within each. */
static int merge_outliers(MPI_Comm comm, h5fz_attr_tables *t)
{
  int size = 1, full = t->lists_full, any_full = 0;
  MPI_Comm_size(comm, &size);
  MPI_Allreduce(&full, &any_full, 1, MPI_INT, MPI_LOR, comm);
  uint64_t mine = t->n_listed, total = 0;
  MPI_Allreduce(&mine, &total, 1, MPI_UINT64_T, MPI_SUM, comm);
  if (any_full || total > H5FZ_ATTR_MAX_OUTLIERS) {
    t->lists_full = 1;
    return H5FZ_OK;
  }
  size_t esize = h5fz_dtype_size(t->di->dtype);
  uint64_t *per = malloc((size_t)size * 8), *pos = malloc((total + 1) * 8), *order = malloc((total + 1) * 8);
  uint8_t *val = malloc((total + 1) * esize);
  int rc = per && pos && order && val ? H5FZ_OK : h5fz_fail(H5FZ_ERR_NOMEM, "outlier lists");
  if ((rc = h5fz_mpi_agree(comm, rc))) goto out;
  MPI_Allgather(&mine, 1, MPI_UINT64_T, per, 1, MPI_UINT64_T, comm);
  int me = 0;
  MPI_Comm_rank(comm, &me);
  uint64_t at = 0;
  for (int r = 0; r < size; r++) {
    if (r == me && per[r]) {
      memcpy(pos + at, t->opos, per[r] * 8);
      memcpy(val + at * esize, t->oval, per[r] * esize);
    }
    bcast_bytes(pos + at, per[r] * 8, r, comm);
    bcast_bytes(val + at * esize, per[r] * esize, r, comm);
    at += per[r];
  }
  if (total && !t->opos) {
    t->opos = malloc(((size_t)H5FZ_ATTR_MAX_OUTLIERS) * 8u);
    t->oval = malloc(((size_t)H5FZ_ATTR_MAX_OUTLIERS) * esize);
  }
  rc = !total || (t->opos && t->oval) ? H5FZ_OK : h5fz_fail(H5FZ_ERR_NOMEM, "outlier lists");
  if ((rc = h5fz_mpi_agree(comm, rc))) goto out;
  /* the serial write's order: chunk by chunk, increasing within a chunk */
  for (uint64_t i = 0; i < total; i++) order[i] = chunk_of_element(&t->di->g, pos[i]);
  uint64_t *chunk_keys = order;
  order = malloc((total + 1) * 8);
  if ((rc = h5fz_mpi_agree(comm, order ? H5FZ_OK : h5fz_fail(H5FZ_ERR_NOMEM, "outlier order")))) {
    order = chunk_keys;
    goto out;
  }
  sort_order(chunk_keys, pos, total, order);
  free(chunk_keys);
  for (uint64_t i = 0; i < total; i++) {
    t->opos[i] = pos[order[i]];
    memcpy(t->oval + i * esize, val + order[i] * esize, esize);
  }
  t->n_listed = total;
out:
  free(per);
  free(pos);
  free(order);
  free(val);
  return rc;
}

int h5fz_mpi_tables_allreduce(MPI_Comm comm, h5fz_attr_tables *t)
{
  int rc;
  uint64_t own_chunks = t->rep.n_chunks;
  MPI_Allreduce(MPI_IN_PLACE, t->abs_bound, (int)t->n_chunks, MPI_DOUBLE, MPI_SUM, comm);
  MPI_Allreduce(MPI_IN_PLACE, t->outliers, (int)t->n_chunks, MPI_UINT32_T, MPI_SUM, comm);
  uint64_t counts[6] = {t->rep.n_chunks,     t->rep.input_bytes, t->rep.chunk_bytes,
                        t->rep.stored_bytes, t->rep.n_outliers,  t->rep.n_raw_chunks};
  MPI_Allreduce(MPI_IN_PLACE, counts, 6, MPI_UINT64_T, MPI_SUM, comm);
  t->rep.n_chunks = counts[0];
  t->rep.input_bytes = counts[1];
  t->rep.chunk_bytes = counts[2];
  t->rep.stored_bytes = counts[3];
  t->rep.n_outliers = counts[4];
  t->rep.n_raw_chunks = counts[5];
  /* the executor: the one every rank that wrote chunks names, else "mixed" */
  typedef struct {
    uint64_t n_chunks;
    char kernel_class[sizeof t->rep.kernel_class];
    char plan_digest[sizeof t->rep.plan_digest];
  } executor;
  int size = 1;
  MPI_Comm_size(comm, &size);
  executor mine, *all = malloc((size_t)size * sizeof *all);
  if ((rc = h5fz_mpi_agree(comm, all ? H5FZ_OK : h5fz_fail(H5FZ_ERR_NOMEM, "executor table")))) return rc;
  memset(&mine, 0, sizeof mine);
  mine.n_chunks = own_chunks;
  memcpy(mine.kernel_class, t->rep.kernel_class, sizeof mine.kernel_class);
  memcpy(mine.plan_digest, t->rep.plan_digest, sizeof mine.plan_digest);
  MPI_Allgather(&mine, (int)sizeof mine, MPI_BYTE, all, (int)sizeof mine, MPI_BYTE, comm);
  const executor *first = NULL;
  int mixed = 0;
  for (int r = 0; r < size; r++) {
    if (!all[r].n_chunks) continue; /* wrote nothing: ran nothing */
    if (!first)
      first = &all[r];
    else if (strcmp(first->kernel_class, all[r].kernel_class) || strcmp(first->plan_digest, all[r].plan_digest))
      mixed = 1;
  }
  if (first && !mixed) {
    memcpy(t->rep.kernel_class, first->kernel_class, sizeof t->rep.kernel_class);
    memcpy(t->rep.plan_digest, first->plan_digest, sizeof t->rep.plan_digest);
  } else if (mixed) {
    snprintf(t->rep.kernel_class, sizeof t->rep.kernel_class, "mixed");
    snprintf(t->rep.plan_digest, sizeof t->rep.plan_digest, "mixed");
  }
  free(all);
  return merge_outliers(comm, t);
}
