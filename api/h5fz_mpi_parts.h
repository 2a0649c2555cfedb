/*
 * h5fz_mpi_parts.h - what every rank of a collective dataset call tells the
 * others before any HDF5 call (its claim: type, dataset, part), and the
 * checks every rank runs on all claims, so that all ranks reach the same
 * verdict with the same message. Not installed.
 */
#ifndef H5FZ_MPI_PARTS_H
#define H5FZ_MPI_PARTS_H

#include <mpi.h>
#include <stdint.h>

#include "h5fz_batch.h"

typedef struct {
  int32_t status;          /* this rank's own checks (H5FZ_OK or a status) */
  int32_t where;           /* h5fz_mem */
  int32_t dtype;           /* the caller's element type: h5fz_dtype, H5FZ_DTYPE_UNKNOWN if neither float type */
  int32_t rank;            /* dims of the dataset (0 when it could not be described) */
  uint64_t dataset_digest; /* of the dataset's dims, chunk dims and pipeline cd_values */
  uint64_t dims[H5FZ_ARRAY_MAX_RANK];
  uint64_t chunk[H5FZ_ARRAY_MAX_RANK];
  uint64_t start[H5FZ_ARRAY_MAX_RANK];
  uint64_t count[H5FZ_ARRAY_MAX_RANK];
  char message[256]; /* why status fails */
} h5fz_mpi_claim;

/* FNV-1a over bytes, continuing from h (start with H5FZ_FNV_START). */
#define H5FZ_FNV_START 0xcbf29ce484222325ull
uint64_t h5fz_fnv1a(uint64_t h, const void *bytes, size_t n);

/* Gather every rank's claim (MPI_Allgather): *all receives a malloc'd
 * array of *n claims in rank order (free it). H5FZ_OK, H5FZ_ERR_NOMEM
 * (on any rank: agreed), or H5FZ_ERR_ARG (an MPI error). */
int h5fz_mpi_claims_gather(MPI_Comm comm, const h5fz_mpi_claim *mine, h5fz_mpi_claim **all, int *n);

/* The checks every rank runs on all n claims, in this order: a rank's own
 * failure; ranks that differ in dataset or element type; the element type
 * against the dataset's (dataset_dtype); a part outside the extent; and,
 * when whole_chunks, a chunk that two parts share or one part covers only
 * partly. fn names the call in the message. H5FZ_OK or the first failure's
 * status with its message (the same on every rank). */
int h5fz_mpi_check_claims(const char *fn, const h5fz_mpi_claim *all, int n, int dataset_dtype, int whole_chunks);

/* Make every rank return the same status: rc is this rank's; when any rank
 * failed, every rank returns the lowest failing rank's status and message
 * ("rank R: ..."). Collective over comm. */
int h5fz_mpi_agree(MPI_Comm comm, int rc);

/* "50x100x100" of v[0..rank) into buf. */
const char *h5fz_mpi_shape(char *buf, size_t cap, const uint64_t *v, int rank);

#endif /* H5FZ_MPI_PARTS_H */
