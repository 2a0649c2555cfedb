/*
 * heat3d_mpi.c - heat3d.c's 3-D heat diffusion decomposed over MPI ranks,
 * each saved step written to one file through parallel HDF5 in two ways.
 *
 * The temperature T on a 64 x 96 x 128 grid (z, y, x; float32) starts at 20
 * with two hot Gaussian blobs and diffuses by explicit finite differences
 * (7-point Laplacian, r = 0.1, walls held at 20), as in heat3d.c. The grid
 * is cut into slabs along z, one per rank, on the chunk grid (chunks of
 * 8 x 96 x 128; a rank may get none when there are more ranks than
 * chunks); each step exchanges one halo plane with each neighbour
 * (MPI_Sendrecv). Every SAVE_EVERY steps the field is written twice:
 *
 *   /filter/T_NNNN  collective H5Dwrite of each rank's slab into a dataset
 *                   whose pipeline is the h5fz filter (HDF5 1.10.2+ writes
 *                   filtered datasets collectively; each rank compresses
 *                   the chunks HDF5 assigns it)
 *   /api/T_NNNN     h5fz_dataset_create_mpi + h5fz_dataset_write_part
 *                   (api/h5fz_dataset_mpi.h): each rank compresses its
 *                   slab's chunks in batches on its GPU (h5fz_mpi_select_gpu)
 *                   or CPU
 *
 * and checked: both read back collectively (H5Dread through the plugin and
 * h5fz_dataset_read_part) within the bound, decoding to the same bits; rank
 * 0 then compares every stored chunk of the two datasets (byte-identical)
 * and keeps the exact field of each saved step in OUT_ref.h5 with a line in
 * manifest.txt, for serial readers (tests/mpi/check_serial.py).
 *
 * Run (after the MPI build, cmake -DH5FZ_MPI=ON; docs/mpi.md):
 *   HDF5_PLUGIN_PATH=build-mpi/plugin mpirun -n 4 build-mpi/bin/heat3d_mpi [OUT.h5] [SPEC]
 * OUT.h5 (default heat3d_mpi.h5) is replaced; SPEC (default "abs=1e-3") is
 * an abs= spec. Prints one line per saved step and "heat3d_mpi: OK";
 * exit status 1 when a check fails, 2 on an error.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hdf5.h>
#include <mpi.h>

#include "h5fz.h"
#include "h5fz_dataset_mpi.h"

#ifndef H5FZ_FILTER_ID
#define H5FZ_FILTER_ID 32770
#endif

#define NZ 64
#define NY 96
#define NX 128
#define STEPS 100
#define SAVE_EVERY 25
#define R 0.1f
#define WALL 20.0f
#define PLANE ((size_t)NY * NX)

static const hsize_t dims[3] = {NZ, NY, NX};
static const hsize_t chunk[3] = {8, NY, NX};
static int rank_, size_;

/* This rank's planes [z0, z0 + nz): whole chunks, split as evenly as they go. */
static void my_slab(int *z0, int *nz)
{
  int chunks = NZ / (int)chunk[0], a = chunks * rank_ / size_, b = chunks * (rank_ + 1) / size_;
  *z0 = a * (int)chunk[0];
  *nz = (b - a) * (int)chunk[0];
}

/* t holds planes z0-1 .. z0+nz (halo planes at both ends), PLANE floats each. */
static void initial_field(float *t, int z0, int nz)
{
  for (int k = -1; k <= nz; k++) {
    int z = z0 + k;
    if (z < 0 || z >= NZ) continue;
    for (int y = 0; y < NY; y++)
      for (int x = 0; x < NX; x++) {
        double d1 = (z - 24.0) * (z - 24.0) + (y - 40.0) * (y - 40.0) + (x - 44.0) * (x - 44.0);
        double d2 = (z - 42.0) * (z - 42.0) + (y - 62.0) * (y - 62.0) + (x - 90.0) * (x - 90.0);
        int wall = z == 0 || y == 0 || x == 0 || z == NZ - 1 || y == NY - 1 || x == NX - 1;
        t[(size_t)(k + 1) * PLANE + (size_t)y * NX + x] =
            wall ? WALL : (float)(WALL + 60.0 * exp(-d1 / 200.0) + 80.0 * exp(-d2 / 72.0));
      }
  }
}

/* Swap halo planes with the neighbouring ranks (that have planes). */
static void exchange_halos(float *t, int nz)
{
  int below = rank_ - 1, above = rank_ + 1, z0, n;
  while (below >= 0 && (rank_ = below, my_slab(&z0, &n), n == 0)) below--;
  while (above < size_ && (rank_ = above, my_slab(&z0, &n), n == 0)) above++;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  if (nz == 0) return;
  int lo = below >= 0 ? below : MPI_PROC_NULL, hi = above < size_ ? above : MPI_PROC_NULL;
  MPI_Sendrecv(t + PLANE, (int)PLANE, MPI_FLOAT, lo, 0, t + (size_t)(nz + 1) * PLANE, (int)PLANE, MPI_FLOAT, hi, 0,
               MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Sendrecv(t + (size_t)nz * PLANE, (int)PLANE, MPI_FLOAT, hi, 1, t, (int)PLANE, MPI_FLOAT, lo, 1, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
}

static void diffuse(const float *t, float *next, int z0, int nz)
{
  memcpy(next, t, (size_t)(nz + 2) * PLANE * sizeof *t);
  for (int k = 1; k <= nz; k++) {
    int z = z0 + k - 1;
    if (z == 0 || z == NZ - 1) continue;
    for (int y = 1; y < NY - 1; y++)
      for (int x = 1; x < NX - 1; x++) {
        size_t i = (size_t)k * PLANE + (size_t)y * NX + x;
        float lap = t[i - 1] + t[i + 1] + t[i - NX] + t[i + NX] + t[i - PLANE] + t[i + PLANE] - 6.0f * t[i];
        next[i] = t[i] + R * lap;
      }
  }
}

/* This rank's slab as file and memory dataspaces (nothing when nz is 0). */
static void slab_spaces(hid_t d, int z0, int nz, hid_t *fs, hid_t *ms)
{
  hsize_t start[3] = {(hsize_t)z0, 0, 0}, count[3] = {(hsize_t)nz, NY, NX};
  *fs = H5Dget_space(d);
  *ms = H5Screate_simple(3, count, NULL);
  if (nz) {
    H5Sselect_hyperslab(*fs, H5S_SELECT_SET, start, NULL, count, NULL);
  } else {
    H5Sselect_none(*fs);
    H5Sselect_none(*ms);
  }
}

static int fail_with(const char *what, const char *why)
{
  fprintf(stderr, "heat3d_mpi: rank %d: %s: %s\n", rank_, what, why && why[0] ? why : "no reason given");
  MPI_Abort(MPI_COMM_WORLD, 2);
  return 2;
}

/* A failed h5fz call: its reason is h5fz_last_error(). */
static int fail(const char *what) { return fail_with(what, h5fz_last_error()); }

/* Upward walks start at the innermost frame, where the failure began. */
static herr_t first_desc(unsigned n, const H5E_error2_t *err, void *data)
{
  char *why = data;
  (void)n;
  if (!why[0] && err->desc) snprintf(why, 256, "%s", err->desc);
  return 0;
}

/* A failed HDF5 call: the reason (the filter's, e.g. a bad H5FZ_DEVICE)
 * is on HDF5's error stack, not in h5fz_last_error(). */
static int fail_hdf5(const char *what)
{
  char why[256] = "";
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, first_desc, why);
  return fail_with(what, why);
}

/* Write step `name` of the slab both ways. */
static void save(hid_t file, const char *name, const float *slab, int z0, int nz, const char *spec, hid_t dxpl)
{
  char path[64];
  h5fz_spec s;
  unsigned cd[H5FZ_CD_MAX];
  size_t n_cd = 0;
  if (h5fz_spec_parse(spec, &s) || h5fz_spec_to_cd_values(&s, 0, cd, H5FZ_CD_MAX, &n_cd)) fail("spec");
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE), space = H5Screate_simple(3, dims, NULL), fs, ms;
  H5Pset_chunk(dcpl, 3, chunk);
  H5Pset_filter(dcpl, H5FZ_FILTER_ID, H5Z_FLAG_MANDATORY, n_cd, cd);
  snprintf(path, sizeof path, "/filter/%s", name);
  hid_t d = H5Dcreate2(file, path, H5T_NATIVE_FLOAT, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  if (d < 0) fail_hdf5("H5Dcreate2 through the filter");
  slab_spaces(d, z0, nz, &fs, &ms);
  if (H5Dwrite(d, H5T_NATIVE_FLOAT, ms, fs, dxpl, slab) < 0) fail_hdf5("collective H5Dwrite");
  H5Sclose(fs);
  H5Sclose(ms);
  H5Dclose(d);
  H5Pclose(dcpl);
  H5Sclose(space);
  snprintf(path, sizeof path, "/api/%s", name);
  hsize_t start[3] = {(hsize_t)z0, 0, 0}, count[3] = {(hsize_t)nz, NY, NX};
  if (h5fz_dataset_create_mpi(file, path, H5T_NATIVE_FLOAT, 3, dims, chunk, spec, &d)) fail("h5fz_dataset_create_mpi");
  if (h5fz_dataset_write_part(d, H5T_NATIVE_FLOAT, start, count, slab, H5FZ_MEM_HOST, NULL))
    fail("h5fz_dataset_write_part");
  H5Dclose(d);
}

/* Read step `name` back both ways; elements out of bound (summed over ranks)
 * and this rank's largest error into *max_err. */
static long check(hid_t file, const char *name, const float *slab, int z0, int nz, double bound, hid_t dxpl,
                  double *max_err)
{
  char path[64];
  size_t n = (size_t)nz * PLANE;
  float *a = malloc((n ? n : 1) * sizeof *a), *b = malloc((n ? n : 1) * sizeof *b);
  hsize_t start[3] = {(hsize_t)z0, 0, 0}, count[3] = {(hsize_t)nz, NY, NX};
  snprintf(path, sizeof path, "/filter/%s", name);
  hid_t d = H5Dopen2(file, path, H5P_DEFAULT), fs, ms;
  slab_spaces(d, z0, nz, &fs, &ms);
  if (H5Dread(d, H5T_NATIVE_FLOAT, ms, fs, dxpl, a) < 0) fail_hdf5("collective H5Dread");
  H5Sclose(fs);
  H5Sclose(ms);
  H5Dclose(d);
  snprintf(path, sizeof path, "/api/%s", name);
  d = H5Dopen2(file, path, H5P_DEFAULT);
  if (h5fz_dataset_read_part(d, H5T_NATIVE_FLOAT, start, count, b, H5FZ_MEM_HOST, NULL)) fail("h5fz_dataset_read_part");
  H5Dclose(d);
  long bad = 0, all = 0;
  *max_err = 0;
  for (size_t i = 0; i < n; i++) {
    double e = fabs((double)a[i] - (double)slab[i]);
    if (e > *max_err) *max_err = e;
    if (!(e <= bound) || memcmp(&a[i], &b[i], sizeof a[i])) bad++;
  }
  MPI_Allreduce(&bad, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, max_err, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  free(a);
  free(b);
  return all;
}

/* Rank 0, after the parallel file is closed: every chunk of /filter/NAME and
 * /api/NAME the same bytes. Returns the chunks that differ. */
static long compare_chunks(const char *out, const char *name)
{
  char pa[64], pb[64];
  snprintf(pa, sizeof pa, "/filter/%s", name);
  snprintf(pb, sizeof pb, "/api/%s", name);
  hid_t f = H5Fopen(out, H5F_ACC_RDONLY, H5P_DEFAULT), da = H5Dopen2(f, pa, H5P_DEFAULT),
        db = H5Dopen2(f, pb, H5P_DEFAULT);
  long differ = 0;
  for (hsize_t z = 0; z < NZ; z += chunk[0]) {
    hsize_t off[3] = {z, 0, 0}, sa = 0, sb = 0;
    uint32_t ma = 1, mb = 1;
    H5Dget_chunk_storage_size(da, off, &sa);
    H5Dget_chunk_storage_size(db, off, &sb);
    void *ba = malloc(sa + 1), *bb = malloc(sb + 1);
    if (!sa || sa != sb || H5Dread_chunk(da, H5P_DEFAULT, off, &ma, ba) < 0 ||
        H5Dread_chunk(db, H5P_DEFAULT, off, &mb, bb) < 0 || ma || mb || memcmp(ba, bb, sa))
      differ++;
    free(ba);
    free(bb);
  }
  H5Dclose(da);
  H5Dclose(db);
  H5Fclose(f);
  return differ;
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || argv[1][0] == '-' || argc > 3)) {
    /* as heat3d: an option is not a file name */
    if (rank_ == 0)
      fprintf(stderr, "usage: mpirun -n N heat3d_mpi [OUT.h5] [SPEC]   (default heat3d_mpi.h5 \"abs=1e-3\")\n");
    MPI_Finalize();
    return strcmp(argv[1], "--help") && strcmp(argv[1], "-h") ? 2 : 0;
  }
  const char *out = argc > 1 ? argv[1] : "heat3d_mpi.h5", *spec = argc > 2 ? argv[2] : "abs=1e-3";
  h5fz_spec s;
  if (h5fz_spec_parse(spec, &s) || s.mode != H5FZ_MODE_ABS) {
    if (rank_ == 0) fprintf(stderr, "heat3d_mpi: SPEC must be an abs= spec, got '%s'\n", spec);
    MPI_Finalize();
    return 2;
  }
  int ordinal = -1;
  h5fz_mpi_select_gpu(MPI_COMM_WORLD, &ordinal); /* before the first compression, for the filter too */
  /* the plugin found before anything is created: its folder in the message
   * instead of HDF5's error stack at the first H5Dcreate2 */
  if (h5fz_dataset_register_filter()) return fail("the h5fz filter");
  int z0, nz;
  my_slab(&z0, &nz);
  float *t = calloc((size_t)(nz + 2) * PLANE, sizeof *t), *next = calloc((size_t)(nz + 2) * PLANE, sizeof *next);
  float *whole = rank_ == 0 ? malloc((size_t)NZ * PLANE * sizeof *whole) : NULL;
  int *counts = malloc((size_t)size_ * sizeof *counts), *displs = malloc((size_t)size_ * sizeof *displs);
  for (int r = 0; r < size_; r++) {
    int a = rank_, zr, nr;
    rank_ = r;
    my_slab(&zr, &nr);
    rank_ = a;
    counts[r] = nr * (int)PLANE;
    displs[r] = zr * (int)PLANE;
  }
  initial_field(t, z0, nz);
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS), dxpl = H5Pcreate(H5P_DATASET_XFER);
  H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
  H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE); /* filters need collective transfers */
  hid_t file = H5Fcreate(out, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  if (file < 0) return fail_hdf5("H5Fcreate with the MPI-IO driver");
  H5Gclose(H5Gcreate2(file, "filter", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  H5Gclose(H5Gcreate2(file, "api", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  char ref[256];
  snprintf(ref, sizeof ref, "%.*s_ref.h5", (int)(strlen(out) > 3 ? strlen(out) - 3 : strlen(out)), out);
  if (rank_ == 0) remove(ref), remove("manifest.txt");
  long bad = 0;
  for (int step = 0; step <= STEPS; step++) {
    if (step % SAVE_EVERY == 0) {
      char name[32];
      double err;
      snprintf(name, sizeof name, "T_%04d", step);
      save(file, name, t + PLANE, z0, nz, spec, dxpl);
      long b = check(file, name, t + PLANE, z0, nz, s.bound, dxpl, &err);
      bad += b;
      MPI_Gatherv(t + PLANE, nz * (int)PLANE, MPI_FLOAT, whole, counts, displs, MPI_FLOAT, 0, MPI_COMM_WORLD);
      if (rank_ == 0) {
        printf("heat3d_mpi: step %4d  %d ranks  max error %.3g (bound %g)  %s\n", step, size_, err, s.bound,
               b ? "OUT OF BOUND or the two ways differ" : "both ways within the bound, same bits");
        hid_t fr;
        H5E_BEGIN_TRY { fr = H5Fopen(ref, H5F_ACC_RDWR, H5P_DEFAULT); } /* made at the first saved step */
        H5E_END_TRY;
        if (fr < 0) fr = H5Fcreate(ref, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
        for (int w = 0; w < 2; w++) {
          char path[64];
          snprintf(path, sizeof path, "/%s/%s", w ? "api" : "filter", name);
          hid_t lcpl = H5Pcreate(H5P_LINK_CREATE), sp = H5Screate_simple(3, dims, NULL);
          H5Pset_create_intermediate_group(lcpl, 1);
          hid_t d = H5Dcreate2(fr, path, H5T_NATIVE_FLOAT, sp, lcpl, H5P_DEFAULT, H5P_DEFAULT);
          H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, whole);
          H5Dclose(d);
          H5Sclose(sp);
          H5Pclose(lcpl);
          FILE *m = fopen("manifest.txt", "a");
          if (m) fprintf(m, "%s %s abs %.17g %s\n", out, path, s.bound, ref), fclose(m);
        }
        H5Fclose(fr);
      }
    }
    exchange_halos(t, nz);
    diffuse(t, next, z0, nz);
    float *swap = t;
    t = next;
    next = swap;
  }
  H5Fclose(file);
  long differ = 0;
  if (rank_ == 0)
    for (int step = 0; step <= STEPS; step += SAVE_EVERY) {
      char name[32];
      snprintf(name, sizeof name, "T_%04d", step);
      differ += compare_chunks(out, name);
    }
  MPI_Bcast(&differ, 1, MPI_LONG, 0, MPI_COMM_WORLD);
  if (rank_ == 0) {
    printf("heat3d_mpi: chunks of /filter and /api %s\n", differ ? "DIFFER" : "byte-identical at every saved step");
    printf("heat3d_mpi: %s (GPU ordinal of rank 0: %d)\n", bad || differ ? "FAILED" : "OK", ordinal);
  }
  H5Pclose(fapl);
  H5Pclose(dxpl);
  free(t);
  free(next);
  free(whole);
  free(counts);
  free(displs);
  MPI_Finalize();
  return bad || differ ? 1 : 0;
}
