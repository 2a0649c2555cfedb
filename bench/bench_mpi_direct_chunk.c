/*
 * bench_mpi_direct_chunk.c - which ways of calling H5Dwrite_chunk (direct
 * chunk write) the linked parallel HDF5 allows under the MPI-IO driver, and
 * what the working ones cost.
 *
 * The collective dataset API (api/h5fz_dataset_mpi.c) stores chunks it
 * compressed itself with H5Dwrite_chunk. This program checks each way of
 * doing that against the HDF5 it is linked with, so that the choice in the
 * API can be re-checked on a new HDF5 (docs/mpi.md, "Store"):
 *
 *   mode 0  collective transfer, each rank writes only its own chunks
 *   mode 1  collective transfer, every rank writes every chunk, same order
 *   mode 2  independent transfer, each rank writes only its own chunks
 *   mode 3  independent transfer, every rank writes every chunk (the API's)
 *   mode 4  collective transfer with H5FD_MPIO_INDIVIDUAL_IO, own chunks
 *   mode 5  collective create of a filtered dataset, no write: how many
 *           chunks the file holds afterwards (allocation at create)
 *
 * Each mode makes its own file (deflate-compressed int32 chunks, compressed
 * here with zlib before the timed loop), closes it, and rank 0 reopens it
 * with the serial sec2 driver and checks every element. Output: one JSON
 * object per mode on stdout (rank 0):
 *   {"hdf5": "1.14.5", "ranks": 2, "mode": 3, "what": "...",
 *    "write_chunk_ok": true, "reads_back": true, "seconds": 0.025,
 *    "chunks": 256, "compressed_bytes": 16000000, "chunks_stored": 256}
 * A mode whose ranks disagree on HDF5 metadata may hang in H5Fclose (HDF5
 * 1.14.5 does for modes 0, 2, 4): run one mode per process under a timeout
 * (bench/mpi/run.sh does, and records a hang as such).
 *
 *   mpirun -n N h5fz_bench_mpi_direct_chunk [--mode M] [--chunks C] [--dir DIR]
 *
 * Exit status 0 when every mode run gave an answer (whatever it was), 2 on
 * bad arguments or a failure outside the call being probed.
 */
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define PROBE_CHUNK_ELEMS 16384 /* int32 values per chunk: 64 KiB raw */
#define PROBE_MODES 6

static const char *const mode_what[PROBE_MODES] = {
    "collective transfer, each rank its own chunks",
    "collective transfer, every rank every chunk in the same order",
    "independent transfer, each rank its own chunks",
    "independent transfer, every rank every chunk in the same order",
    "collective transfer with H5FD_MPIO_INDIVIDUAL_IO, each rank its own chunks",
    "collective create of a filtered dataset, nothing written: chunks stored after close",
};

/* The value of element i of chunk c: varied enough that zlib keeps most bytes. */
static int32_t probe_value(uint64_t c, uint64_t i)
{
  return (int32_t)(c * 100003u + (uint32_t)((i * 2654435761u) >> 18));
}

/* The deflate-compressed bytes of chunk c into *out (malloc'd); 0 or -1. */
static int compressed_chunk(uint64_t c, unsigned char **out, size_t *bytes)
{
  int32_t *v = malloc(PROBE_CHUNK_ELEMS * sizeof *v);
  uLongf cap = compressBound(PROBE_CHUNK_ELEMS * sizeof *v);
  *out = malloc(cap);
  if (!v || !*out) {
    free(v);
    return -1;
  }
  for (uint64_t i = 0; i < PROBE_CHUNK_ELEMS; i++) v[i] = probe_value(c, i);
  int rc = compress2(*out, &cap, (const Bytef *)v, PROBE_CHUNK_ELEMS * sizeof *v, 1);
  free(v);
  *bytes = cap;
  return rc == Z_OK ? 0 : -1;
}

/* Rank 0, after every rank closed the file: reopen serially and check every
 * element (mode 5: count the stored chunks instead). 1 right, 0 wrong or
 * unreadable. */
static int check_serially(const char *path, uint64_t chunks, int mode, hsize_t *stored)
{
  int ok = 0;
  H5E_BEGIN_TRY
  {
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t d = f >= 0 ? H5Dopen2(f, "x", H5P_DEFAULT) : H5I_INVALID_HID;
    hid_t space = d >= 0 ? H5Dget_space(d) : H5I_INVALID_HID;
    if (space >= 0 && H5Dget_num_chunks(d, space, stored) >= 0) ok = 1;
    int32_t *v = malloc(chunks * PROBE_CHUNK_ELEMS * sizeof *v);
    if (mode != 5 && ok) {
      ok = v && H5Dread(d, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0;
      for (uint64_t c = 0; ok && c < chunks; c++)
        for (uint64_t i = 0; i < PROBE_CHUNK_ELEMS; i++)
          if (v[c * PROBE_CHUNK_ELEMS + i] != probe_value(c, i)) {
            ok = 0;
            break;
          }
    }
    free(v);
    if (space >= 0) H5Sclose(space);
    if (d >= 0) H5Dclose(d);
    if (f >= 0) H5Fclose(f);
  }
  H5E_END_TRY
  return ok;
}

/* One mode, collective over MPI_COMM_WORLD. 0, or 2 on a failure outside
 * the probed calls. */
static int probe(int mode, uint64_t chunks, const char *dir, unsigned char **pre, const size_t *pre_bytes)
{
  int rank, ranks;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  char path[4096];
  snprintf(path, sizeof path, "%s/h5fz_direct_chunk_probe_%d.h5", dir, mode);
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
  hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  hsize_t dims[1] = {chunks * PROBE_CHUNK_ELEMS}, cdims[1] = {PROBE_CHUNK_ELEMS};
  hid_t space = H5Screate_simple(1, dims, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(dcpl, 1, cdims);
  H5Pset_deflate(dcpl, 6);
  hid_t d = f >= 0 ? H5Dcreate2(f, "x", H5T_NATIVE_INT32, space, H5P_DEFAULT, dcpl, H5P_DEFAULT) : H5I_INVALID_HID;
  hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
  int collective = mode == 0 || mode == 1 || mode == 4, every_chunk = mode == 1 || mode == 3;
  if (collective) H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE);
  if (mode == 4) H5Pset_dxpl_mpio_collective_opt(dxpl, H5FD_MPIO_INDIVIDUAL_IO);
  int failed = d < 0;
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  H5E_BEGIN_TRY
  {
    for (uint64_t c = 0; mode != 5 && !failed && c < chunks; c++) {
      if (!every_chunk && c % (uint64_t)ranks != (uint64_t)rank) continue;
      hsize_t off[1] = {c * PROBE_CHUNK_ELEMS};
      if (H5Dwrite_chunk(d, dxpl, 0, off, pre_bytes[c], pre[c]) < 0) failed = 1;
    }
  }
  H5E_END_TRY
  double secs = MPI_Wtime() - t0, slowest;
  MPI_Reduce(&secs, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  int any_failed;
  MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  H5E_BEGIN_TRY
  {
    if (d >= 0) H5Dclose(d);
    if (f >= 0) H5Fclose(f);
  }
  H5E_END_TRY
  H5Pclose(dxpl);
  H5Pclose(dcpl);
  H5Sclose(space);
  H5Pclose(fapl);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    hsize_t stored = 0;
    int reads_back = check_serially(path, chunks, mode, &stored);
    size_t total = 0;
    for (uint64_t c = 0; c < chunks; c++) total += pre_bytes[c];
    printf("{\"hdf5\": \"%d.%d.%d\", \"ranks\": %d, \"mode\": %d, \"what\": \"%s\", \"write_chunk_ok\": %s, "
           "\"reads_back\": %s, \"seconds\": %.6f, \"chunks\": %llu, \"compressed_bytes\": %zu, "
           "\"chunks_stored\": %llu}\n",
           H5_VERS_MAJOR, H5_VERS_MINOR, H5_VERS_RELEASE, ranks, mode, mode_what[mode], any_failed ? "false" : "true",
           reads_back ? "true" : "false", slowest, (unsigned long long)chunks, mode == 5 ? (size_t)0 : total,
           (unsigned long long)stored);
    fflush(stdout);
    remove(path);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  return 0;
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int only = -1;
  uint64_t chunks = 256;
  const char *dir = ".";
  for (int a = 1; a < argc; a++) {
    if (!strcmp(argv[a], "--mode") && a + 1 < argc)
      only = atoi(argv[++a]);
    else if (!strcmp(argv[a], "--chunks") && a + 1 < argc)
      chunks = strtoull(argv[++a], NULL, 10);
    else if (!strcmp(argv[a], "--dir") && a + 1 < argc)
      dir = argv[++a];
    else {
      if (rank == 0) fprintf(stderr, "usage: h5fz_bench_mpi_direct_chunk [--mode 0-5] [--chunks C] [--dir DIR]\n");
      MPI_Finalize();
      return 2;
    }
  }
  if (only < -1 || only >= PROBE_MODES || chunks == 0) {
    if (rank == 0) fprintf(stderr, "h5fz_bench_mpi_direct_chunk: --mode must be 0-5, --chunks at least 1\n");
    MPI_Finalize();
    return 2;
  }
  /* every rank compresses every chunk, so any rank can write any of them */
  unsigned char **pre = calloc(chunks, sizeof *pre);
  size_t *pre_bytes = calloc(chunks, sizeof *pre_bytes);
  int rc = pre && pre_bytes ? 0 : 2;
  for (uint64_t c = 0; !rc && c < chunks; c++)
    if (compressed_chunk(c, &pre[c], &pre_bytes[c])) rc = 2;
  if (rc) fprintf(stderr, "h5fz_bench_mpi_direct_chunk: out of memory or zlib failed\n");
  for (int m = 0; !rc && m < PROBE_MODES; m++)
    if (only < 0 || only == m) rc = probe(m, chunks, dir, pre, pre_bytes);
  for (uint64_t c = 0; pre && c < chunks; c++) free(pre[c]);
  free(pre);
  free(pre_bytes);
  MPI_Finalize();
  return rc;
}
