/*
 * h5fz_dataset_mpi.h - the collective dataset API, for simulations that
 * write one HDF5 file from many MPI ranks through parallel HDF5 (a file
 * opened with H5Pset_fapl_mpio). Each rank passes its part of the global
 * array; the chunks a part covers are compressed on that rank's GPU (its
 * CPU without one) in batches, as h5fz_dataset_write does, and the stored
 * chunks are byte for byte what the filter stores for the same array
 * (docs/mpi.md). Built only against a parallel HDF5 (cmake -DH5FZ_MPI=ON);
 * link h5fz_dataset_mpi (it brings h5fz_dataset and MPI).
 *
 * Every function here is collective over the communicator the file was
 * opened with (H5Pget_fapl_mpio): every rank calls it, in the same order,
 * with the same dataset. Arguments are checked collectively before any
 * HDF5 call, so bad use on one rank fails the call on every rank with the
 * same message, never a hang. Statuses as in h5fz_dataset.h; the message
 * (h5fz_last_error()) names the rank, part or chunk at fault.
 */
#ifndef H5FZ_DATASET_MPI_H
#define H5FZ_DATASET_MPI_H

#include <mpi.h>

#include "h5fz_dataset.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Choose this rank's GPU: H5FZ_GPU_ORDINAL when it is set; otherwise the
 * node-local rank (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED)) modulo
 * the GPUs the driver shows (CUDA_VISIBLE_DEVICES limits those: a launcher
 * that gives each rank one GPU makes that one ordinal 0), made the GPU of
 * this process's settings (read once per process: h5fz_settings.h) in this
 * library and in the filter plugin (loaded now and told through its
 * h5fz_plugin_settings entry point), and stored in H5FZ_GPU_ORDINAL of
 * this process for a plugin loaded later and for child processes.
 * Call it after MPI_Init and before the first compression in the process
 * (a GPU context opened before stays open); the collective calls below call it
 * themselves on their first use. Collective over comm. *ordinal (may be
 * NULL) receives the ordinal, -1 when no GPU is visible (the CPU runs).
 * Returns H5FZ_OK or H5FZ_ERR_ARG (an MPI error). */
int h5fz_mpi_select_gpu(MPI_Comm comm, int *ordinal);

/* h5fz_dataset_create on every rank of the file's communicator (parallel
 * HDF5 creates datasets collectively), after checking that every rank
 * passed the same name, type, rank, dims, chunk dims and spec (a mismatch
 * fails on every rank with H5FZ_ERR_ARG naming the first differing rank).
 * loc must be in a file opened with the MPI-IO driver. The dataset's
 * chunks are allocated at creation (H5D_ALLOC_TIME_EARLY, each holding the
 * filtered fill value), so that h5fz_dataset_write_part's collective
 * filtered write reads them instead of filling a buffer per chunk
 * (docs/mpi.md). Arguments and statuses as h5fz_dataset_create. */
int h5fz_dataset_create_mpi(hid_t loc, const char *name, hid_t mem_type, int rank, const hsize_t *dims,
                            const hsize_t *chunk_dims, const char *spec_text, hid_t *dset);

/* Write this rank's part of the dataset: the box start[0..rank) +
 * count[0..rank) (elements, slowest dim first) of the dataset's extent,
 * from data (prod(count) values, row-major in the box, mem_type
 * H5T_NATIVE_FLOAT or H5T_NATIVE_DOUBLE, the dataset's type) at `where`
 * (host or device memory, as h5fz_dataset_write). A rank with nothing to
 * write passes a count with a 0 (data may be NULL) and still calls.
 *
 * The parts are written as whole chunks: each part must start on the
 * chunk grid and end on it or at the dataset's end, and no two parts may
 * overlap; a chunk two parts share, or one part covers only partly, is
 * refused up front (H5FZ_ERR_ARG naming the chunk and the ranks), since
 * writing it would need the other rank's values (the filter path,
 * collective H5Dwrite, assembles such chunks). Chunks no part covers are
 * left as they are.
 *
 * Each rank compresses its chunks in batches on its GPU (h5fz_mpi_select_gpu),
 * in pieces of its part along dim 0 (whole chunk rows, at most
 * H5FZ_MPI_PIECE_BYTES of values each, default 512 MiB; the next piece is
 * encoded on a thread of the library's while the last is stored; that
 * thread calls neither HDF5 nor MPI), and all ranks store each piece with
 * a collective filtered H5Dwrite (as many as the rank with the most
 * pieces; the others store empty ones) in which
 * the h5fz plugin hands HDF5 each rank's containers, so each rank writes
 * only its own compressed bytes (needs the plugin HDF5 loads to be of this
 * release; else, or with H5FZ_MPI_WRITE=direct, the containers are
 * exchanged and every rank writes every chunk with H5Dwrite_chunk, since
 * chunk allocations must be identical on all ranks: docs/mpi.md). Then the attributes of
 * docs/dataset_api.md are written for the whole dataset (per-chunk bounds
 * and outlier counts gathered from all ranks, 0 for chunks not written;
 * ratio and stored bytes of the chunks written by this call). report (may
 * be NULL) receives this rank's part: its chunks, bytes, executor.
 * Returns H5FZ_OK, H5FZ_ERR_ARG (a part outside the dataset, a type that
 * is not the dataset's or differs between ranks, ranks writing different
 * datasets, parts sharing a chunk, a file not opened with MPI-IO), or the
 * statuses of h5fz_dataset_write (a failure on any rank fails every rank;
 * the message names the rank; pieces stored before it stay stored). */
int h5fz_dataset_write_part(hid_t dset, hid_t mem_type, const hsize_t *start, const hsize_t *count, const void *data,
                            h5fz_mem where, h5fz_dataset_report *report);

/* Read this rank's part (any box inside the extent, chunk-aligned or not;
 * parts may overlap) into data (prod(count) values, row-major in the box,
 * mem_type the dataset's type) at `where`; the chunks the box touches are
 * read with H5Dread_chunk and decoded in batches, as h5fz_dataset_read
 * does. A device array needs a chunk-aligned box (else
 * H5FZ_ERR_UNSUPPORTED). Checked collectively like the write. report (may
 * be NULL): this rank's chunks. Returns H5FZ_OK, H5FZ_ERR_ARG, or the
 * statuses of h5fz_dataset_read. */
int h5fz_dataset_read_part(hid_t dset, hid_t mem_type, const hsize_t *start, const hsize_t *count, void *data,
                           h5fz_mem where, h5fz_dataset_report *report);

#ifdef __cplusplus
}
#endif
#endif /* H5FZ_DATASET_MPI_H */
