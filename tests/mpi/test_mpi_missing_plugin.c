/*
 * test_mpi_missing_plugin.c - the h5fz plugin loadable on rank 0 only (rank
 * 1's plugin folders taken away before HDF5 looked for it):
 * h5fz_dataset_create_mpi must fail on every rank with H5FZ_ERR_HDF5 and a
 * message naming rank 1, not leave rank 0 waiting in the create's
 * collective calls (a tester saw that hang; CTest's timeout fails a hang).
 *
 *   mpirun -n 2 test_mpi_missing_plugin   (in a scratch folder)
 */
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "h5fz_dataset_mpi.h"

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  if (rank == 1) {
    unsigned n = 0;
    H5PLsize(&n);
    for (unsigned i = 0; i < n; i++) H5PLremove(0);
  }
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
  hid_t file = H5Fcreate("missing_plugin.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl), d = H5I_INVALID_HID;
  hsize_t dims[2] = {40, 30}, chunk[2] = {10, 30};
  int rc = h5fz_dataset_create_mpi(file, "x", H5T_NATIVE_FLOAT, 2, dims, chunk, "abs=1e-3", &d);
  const char *msg = h5fz_last_error(), *want = "rank 1: the h5fz filter (id 32770) is not available";
  int ok = size < 2 || (rc == H5FZ_ERR_HDF5 && strstr(msg, want) && d < 0), all = 0;
  if (!ok) fprintf(stderr, "rank %d: status %d, message '%s' (want %d and '%s')\n", rank, rc, msg, H5FZ_ERR_HDF5, want);
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  if (rank == 0) printf("test_mpi_missing_plugin: %s (%d ranks): %s\n", all ? "OK" : "FAILED", size, msg);
  if (d >= 0) H5Dclose(d);
  H5Fclose(file);
  H5Pclose(fapl);
  MPI_Finalize();
  return all ? 0 : 1;
}
