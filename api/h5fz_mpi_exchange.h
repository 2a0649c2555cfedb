/*
 * h5fz_mpi_exchange.h - moving what each rank compressed to every rank:
 * the chunk containers, for the collective API's direct way (every rank
 * writes every chunk, so that HDF5's metadata changes are the same on all
 * ranks; h5fz_dataset_mpi.c says when that way is taken), and the
 * attribute tables, for both ways. Not installed.
 */
#ifndef H5FZ_MPI_EXCHANGE_H
#define H5FZ_MPI_EXCHANGE_H

#include <mpi.h>

#include "h5fz_dataset_attrs.h"

/* One entry of a chunk table. Three uint64_t and nothing else, so that a
 * table travels between ranks as 3 * n MPI_UINT64_T. */
typedef struct {
  uint64_t index;  /* chunk index in the dataset's grid */
  uint64_t offset; /* where its container starts in payload */
  uint64_t bytes;  /* its container's size */
} h5fz_mpi_chunk;

/* Chunk containers, by the dataset's chunk index. The table is one array
 * of records (not one array per field) so that it grows, travels, sorts
 * and is freed as one piece. */
typedef struct {
  uint64_t n, cap;
  h5fz_mpi_chunk *chunk; /* [n] */
  uint8_t *payload;
  uint64_t used, payload_cap;
} h5fz_mpi_chunks;

/* Append a copy of container (bytes) as chunk index. H5FZ_OK or H5FZ_ERR_NOMEM. */
int h5fz_mpi_chunks_add(h5fz_mpi_chunks *c, uint64_t index, const void *container, size_t bytes);
void h5fz_mpi_chunks_free(h5fz_mpi_chunks *c);

/* Every rank's chunks into *all on every rank (collective), in increasing
 * chunk index (the parts are disjoint, so each index appears once).
 * H5FZ_OK or H5FZ_ERR_NOMEM (agreed: every rank returns it). */
int h5fz_mpi_chunks_allgather(MPI_Comm comm, const h5fz_mpi_chunks *mine, h5fz_mpi_chunks *all);

/* Sum every rank's tables into t on every rank (collective): per-chunk
 * entries (each chunk has one writer), the report's byte and chunk counts,
 * and the outlier lists merged in the serial write's order (chunk by chunk,
 * increasing within a chunk), or marked full when
 * they hold more than H5FZ_ATTR_MAX_OUTLIERS together. The kernel class
 * and plan digest become those of the ranks that wrote chunks when they
 * all agree, else "mixed" (a rank fell back to the CPU, say).
 * H5FZ_OK or H5FZ_ERR_NOMEM (agreed). */
int h5fz_mpi_tables_allreduce(MPI_Comm comm, h5fz_attr_tables *t);

#endif /* H5FZ_MPI_EXCHANGE_H */
