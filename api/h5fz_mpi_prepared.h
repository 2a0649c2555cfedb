/*
 * h5fz_mpi_prepared.h - the collective API's write of its own chunks
 * through HDF5's collective filtered H5Dwrite, the filter handing over the
 * containers the rank made on its GPU (filter/h5fz_prepared.h says why and
 * how). Not installed.
 */
#ifndef H5FZ_MPI_PREPARED_H
#define H5FZ_MPI_PREPARED_H

#include <hdf5.h>
#include <mpi.h>

#include "h5fz_dataset_info.h"
#include "h5fz_mpi_exchange.h"

/* 1 when this process's HDF5 calls an h5fz plugin that takes prepared
 * containers: a loaded plugin file exports h5fz_plugin_prepared and is
 * bound to the libhdf5 this library calls. Local (no MPI); looked up once. */
int h5fz_mpi_prepared_usable(void);

/* Store this rank's chunks `mine` (containers coded from native values,
 * by chunk index; a big-endian dataset's get their byte-order mark here)
 * of dset with one collective H5Dwrite: the chunks' origins are selected
 * and tagged, and the plugin hands HDF5 the containers. Collective over
 * comm (the file's communicator): every rank calls it, with n = 0 too; the
 * ranks agree before the H5Dwrite, so either all call it or none. Only for
 * a whole-chunk write (every chunk of mine is this rank's alone and whole).
 * H5FZ_OK when the write succeeded and the plugin handed over exactly this
 * rank's chunks. Failures before the H5Dwrite are agreed (every rank
 * returns the first one): H5FZ_ERR_NOMEM, H5FZ_ERR_HDF5, or
 * H5FZ_ERR_UNSUPPORTED (no plugin takes them). After it, per rank:
 * H5FZ_ERR_HDF5 (the write failed) or H5FZ_ERR_UNSUPPORTED (the plugin did
 * not hand over every chunk: the stored chunks are then not the
 * containers and must be written again; h5fz_dataset_mpi.c does so); the
 * caller agrees on those. */
int h5fz_mpi_write_prepared(MPI_Comm comm, hid_t dset, const h5fz_dataset_info *di, h5fz_mpi_chunks *mine);

#endif /* H5FZ_MPI_PREPARED_H */
