/*
 * h5fz_mpi_pieces.h - a rank's part of a collective write as the arrays the
 * encoder takes: the part itself (its chunk grid is the dataset's, shifted
 * by the part's start) and its pieces, cut along the slowest axis at chunk
 * rows, each encoded on a thread of its own so that the collective API
 * (h5fz_dataset_mpi.c) can write one piece while the next is encoded: from
 * host memory the encode is bound by the PCIe link and HDF5's collective
 * write by the host, and the two in series left the 8-rank write at about
 * half of either (docs/mpi.md "Speed"). Not installed.
 */
#ifndef H5FZ_MPI_PIECES_H
#define H5FZ_MPI_PIECES_H

#include <hdf5.h>
#include <pthread.h>
#include <stdint.h>

#include "h5fz_dataset_attrs.h"
#include "h5fz_dataset_info.h"
#include "h5fz_mpi_exchange.h"
#include "h5fz_settings.h"

/* The box [lo, hi) of the dataset as an array of its own: the dataset's
 * chunk dims and fill, the box's extent. */
h5fz_array_geom h5fz_mpi_part_geom(const h5fz_dataset_info *di, const uint64_t *lo, const uint64_t *hi);

/* Chunk `local` of the box array pg whose first element is the dataset's
 * element lo[] (lo on chunk boundaries): its index in the dataset's chunk
 * grid (the return value) and its first element in origin[0..rank). */
uint64_t h5fz_mpi_dataset_chunk(const h5fz_dataset_info *di, const h5fz_array_geom *pg, const uint64_t *lo,
                                uint64_t local, hsize_t *origin);

/* A write's part [lo, hi) (lo on chunk boundaries, as the whole-chunk
 * check of h5fz_mpi_parts.c ensures) of row-major values at data (host or
 * device memory), cut into n pieces along dim 0 of rows_per_piece chunk
 * rows each (the last one shorter). */
typedef struct {
  const h5fz_dataset_info *di;
  uint64_t lo[H5FZ_ARRAY_MAX_RANK], hi[H5FZ_ARRAY_MAX_RANK];
  const uint8_t *data;
  int on_device;
  uint64_t rows_per_piece;
  uint64_t n;          /* 0 for an empty part */
  h5fz_attr_tables *t; /* every piece's chunks are entered here (one piece encodes at a time) */
  /* the caller's overrides (a handle's options; NULL: none), put in force
   * on a piece's own thread, which does not have the caller's */
  const h5fz_overrides *overrides;
} h5fz_mpi_pieces;

/* The pieces of part [lo, hi) of di at data: as few as hold at most
 * piece_bytes of values each (whole chunk rows, at least one), the rows
 * spread evenly over them; piece_bytes 0: one piece, the whole part. Their chunks are entered in t as they are encoded. */
void h5fz_mpi_pieces_init(h5fz_mpi_pieces *ps, const h5fz_dataset_info *di, const uint64_t *lo, const uint64_t *hi,
                          const void *data, int on_device, unsigned long long piece_bytes, h5fz_attr_tables *t);

/* One piece being encoded, and what came of it. */
typedef struct {
  const h5fz_mpi_pieces *of;
  h5fz_array_geom g;                /* the piece as an array */
  uint64_t lo[H5FZ_ARRAY_MAX_RANK]; /* its first element in the dataset */
  const uint8_t *data;              /* its first value */
  h5fz_mpi_chunks chunks;           /* its containers, by the dataset's chunk index */
  h5fz_array_exec ex;               /* the executor that made them */
  double seconds;                   /* the encode's own time */
  int rc;
  char message[512]; /* the encode's message when rc fails (it ran on another thread) */
  pthread_t thread;
  int threaded;
} h5fz_mpi_piece;

/* Begin encoding piece k of ps into *p: on a thread of its own when
 * in_background (or here, when no thread can be started), else here
 * before returning. A k past the last piece is an empty piece (no chunks,
 * status H5FZ_OK). Call h5fz_mpi_piece_finish before reading *p, and
 * h5fz_mpi_piece_free after. The encode calls neither HDF5 nor MPI. */
void h5fz_mpi_piece_start(const h5fz_mpi_pieces *ps, uint64_t k, int in_background, h5fz_mpi_piece *p);

/* Wait for piece p: its encode's status (h5fz_array_encode's); on failure
 * the message is this thread's h5fz_last_error. */
int h5fz_mpi_piece_finish(h5fz_mpi_piece *p);

/* Release p's containers (after h5fz_mpi_piece_finish). */
void h5fz_mpi_piece_free(h5fz_mpi_piece *p);

#endif /* H5FZ_MPI_PIECES_H */
