/*
 * h5fz_mpi_parts.c - claims and their checks for the collective dataset
 * calls (h5fz_mpi_parts.h). Every rank runs the same checks on the same
 * gathered claims, so a bad part on one rank fails every rank at once,
 * with one message, before anything collective in HDF5 can hang.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h5fz_error.h"
#include "h5fz_mpi_parts.h"

uint64_t h5fz_fnv1a(uint64_t h, const void *bytes, size_t n)
{
  const unsigned char *p = bytes;
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

const char *h5fz_mpi_shape(char *buf, size_t cap, const uint64_t *v, int rank)
{
  size_t at = 0;
  buf[0] = '\0';
  for (int d = 0; d < rank && at < cap; d++)
    at += (size_t)snprintf(buf + at, cap - at, d ? "x%llu" : "%llu", (unsigned long long)v[d]);
  return buf;
}

int h5fz_mpi_claims_gather(MPI_Comm comm, const h5fz_mpi_claim *mine, h5fz_mpi_claim **all, int *n)
{
  *all = NULL;
  if (MPI_Comm_size(comm, n) != MPI_SUCCESS) return h5fz_fail(H5FZ_ERR_ARG, "MPI_Comm_size failed");
  *all = malloc((size_t)*n * sizeof **all);
  /* every rank must reach the Allgather, or none */
  int rc = h5fz_mpi_agree(comm, *all ? H5FZ_OK : h5fz_fail(H5FZ_ERR_NOMEM, "claims of %d ranks", *n));
  if (!rc && MPI_Allgather(mine, (int)sizeof *mine, MPI_BYTE, *all, (int)sizeof *mine, MPI_BYTE, comm) != MPI_SUCCESS)
    rc = h5fz_fail(H5FZ_ERR_ARG, "MPI_Allgather of the parts failed");
  if (rc) {
    free(*all);
    *all = NULL;
  }
  return rc;
}

static int part_empty(const h5fz_mpi_claim *c)
{
  for (int d = 0; d < c->rank; d++)
    if (!c->count[d]) return 1;
  return 0;
}

static const char *type_name(int dtype)
{
  return dtype == H5FZ_DTYPE_F32 ? "float32" : dtype == H5FZ_DTYPE_F64 ? "float64" : "neither float32 nor float64";
}

/* Row-major index over the chunk grid of the chunk with coordinates cc. */
static uint64_t chunk_index(const h5fz_mpi_claim *g, const uint64_t *cc)
{
  uint64_t idx = 0;
  for (int d = 0; d < g->rank; d++) idx = idx * ((g->dims[d] + g->chunk[d] - 1) / g->chunk[d]) + cc[d];
  return idx;
}

/* Does part p touch the chunk at chunk coordinates cc? */
static int touches(const h5fz_mpi_claim *p, const uint64_t *cc)
{
  if (part_empty(p)) return 0;
  for (int d = 0; d < p->rank; d++) {
    uint64_t lo = cc[d] * p->chunk[d], hi = lo + p->chunk[d];
    if (p->start[d] >= hi || p->start[d] + p->count[d] <= lo) return 0;
  }
  return 1;
}

/* The failure for the chunk at cc, which part `who` does not cover whole. */
static int refuse_chunk(const char *fn, const h5fz_mpi_claim *all, int n, int who, const uint64_t *cc)
{
  const h5fz_mpi_claim *g = &all[0];
  char at[160], cd[160], ranks[200], s[160], c[160];
  uint64_t origin[H5FZ_ARRAY_MAX_RANK];
  for (int d = 0; d < g->rank; d++) origin[d] = cc[d] * g->chunk[d];
  size_t len = 0;
  int touching = 0;
  ranks[0] = '\0';
  for (int r = 0; r < n; r++)
    if (touches(&all[r], cc)) {
      touching++;
      if (len < sizeof ranks) len += (size_t)snprintf(ranks + len, sizeof ranks - len, len ? ", %d" : "%d", r);
    }
  h5fz_mpi_shape(at, sizeof at, origin, g->rank);
  h5fz_mpi_shape(cd, sizeof cd, g->chunk, g->rank);
  h5fz_mpi_shape(s, sizeof s, all[who].start, g->rank);
  h5fz_mpi_shape(c, sizeof c, all[who].count, g->rank);
  if (touching > 1)
    return h5fz_fail(H5FZ_ERR_ARG,
                     "%s: chunk %llu (elements from %s, chunk dims %s) is shared by the parts of ranks %s "
                     "(rank %d: start %s, count %s); the collective API writes whole chunks: align the parts to the "
                     "chunk grid, or write through the filter (collective H5Dwrite), which assembles shared chunks",
                     fn, (unsigned long long)chunk_index(g, cc), at, cd, ranks, who, s, c);
  return h5fz_fail(H5FZ_ERR_ARG,
                   "%s: chunk %llu (elements from %s, chunk dims %s) is covered only partly, by rank %d's "
                   "part (start %s, count %s); the collective API writes whole chunks: a part must start on the chunk "
                   "grid and end on it or at the dataset's end",
                   fn, (unsigned long long)chunk_index(g, cc), at, cd, who, s, c);
}

/* A part that does not start and end on the chunk grid: refuse the first
 * chunk it covers only partly. */
static int check_aligned(const char *fn, const h5fz_mpi_claim *all, int n, int r)
{
  const h5fz_mpi_claim *p = &all[r];
  for (int d = 0; d < p->rank; d++) {
    uint64_t end = p->start[d] + p->count[d];
    int bad_start = p->start[d] % p->chunk[d] != 0, bad_end = end % p->chunk[d] != 0 && end != p->dims[d];
    if (!bad_start && !bad_end) continue;
    uint64_t cc[H5FZ_ARRAY_MAX_RANK];
    for (int e = 0; e < p->rank; e++) cc[e] = p->start[e] / p->chunk[e];
    if (!bad_start) cc[d] = (end - 1) / p->chunk[d];
    return refuse_chunk(fn, all, n, r, cc);
  }
  return H5FZ_OK;
}

/* Two aligned parts that overlap share whole chunks: refuse the first. */
static int check_disjoint(const char *fn, const h5fz_mpi_claim *all, int n)
{
  for (int i = 0; i < n; i++)
    for (int j = i + 1; j < n; j++) {
      const h5fz_mpi_claim *a = &all[i], *b = &all[j];
      if (part_empty(a) || part_empty(b)) continue;
      int meet = 1;
      uint64_t cc[H5FZ_ARRAY_MAX_RANK];
      for (int d = 0; d < a->rank && meet; d++) {
        uint64_t lo = a->start[d] > b->start[d] ? a->start[d] : b->start[d];
        uint64_t ea = a->start[d] + a->count[d], eb = b->start[d] + b->count[d];
        meet = lo < (ea < eb ? ea : eb);
        cc[d] = lo / a->chunk[d];
      }
      if (meet) return refuse_chunk(fn, all, n, i, cc);
    }
  return H5FZ_OK;
}

int h5fz_mpi_check_claims(const char *fn, const h5fz_mpi_claim *all, int n, int dataset_dtype, int whole_chunks)
{
  char a[160], b[160];
  for (int r = 0; r < n; r++)
    if (all[r].status) return h5fz_fail(all[r].status, "%s: rank %d: %s", fn, r, all[r].message);
  for (int r = 1; r < n; r++) {
    if (all[r].rank != all[0].rank || all[r].dataset_digest != all[0].dataset_digest)
      return h5fz_fail(
          H5FZ_ERR_ARG,
          "%s: rank %d's dataset (dims %s) is not rank 0's (dims %s, or another chunk shape "
          "or pipeline, i.e. another spec or bound; at create, another name or group): every rank must pass "
          "the same dataset",
          fn, r, h5fz_mpi_shape(a, sizeof a, all[r].dims, all[r].rank),
          h5fz_mpi_shape(b, sizeof b, all[0].dims, all[0].rank));
    if (all[r].dtype != all[0].dtype)
      return h5fz_fail(H5FZ_ERR_ARG, "%s: rank %d passes %s values, rank 0 %s: every rank must pass the dataset's type",
                       fn, r, type_name(all[r].dtype), type_name(all[0].dtype));
  }
  if (all[0].dtype != dataset_dtype)
    return h5fz_fail(H5FZ_ERR_ARG, "%s: the ranks pass %s values, the dataset stores %s", fn, type_name(all[0].dtype),
                     type_name(dataset_dtype));
  for (int r = 0; r < n; r++) {
    const h5fz_mpi_claim *p = &all[r];
    if (part_empty(p)) continue;
    for (int d = 0; d < p->rank; d++)
      if (p->start[d] > p->dims[d] || p->count[d] > p->dims[d] - p->start[d])
        return h5fz_fail(H5FZ_ERR_ARG,
                         "%s: rank %d's part (start %s, count %s) lies outside the dataset (dims %s) in dim %d", fn, r,
                         h5fz_mpi_shape(a, sizeof a, p->start, p->rank), h5fz_mpi_shape(b, sizeof b, p->count, p->rank),
                         h5fz_mpi_shape((char[160]){0}, 160, p->dims, p->rank), d);
  }
  if (!whole_chunks) return H5FZ_OK;
  for (int r = 0; r < n; r++) {
    if (part_empty(&all[r])) continue;
    int rc = check_aligned(fn, all, n, r);
    if (rc) return rc;
  }
  return check_disjoint(fn, all, n);
}

int h5fz_mpi_agree(MPI_Comm comm, int rc)
{
  int me = 0, size = 1, first;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &size);
  int mine = rc ? me : size;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm);
  if (first == size) return H5FZ_OK;
  struct {
    int rc;
    char message[512];
  } why = {rc, ""};
  if (me == first) snprintf(why.message, sizeof why.message, "%s", h5fz_last_error());
  MPI_Bcast(&why, (int)sizeof why, MPI_BYTE, first, comm);
  return h5fz_fail(why.rc, "rank %d: %s", first, why.message);
}
