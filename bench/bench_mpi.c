/*
 * bench_mpi.c - aggregate write and read GB/s of N MPI ranks on one node,
 * through parallel HDF5 into one shared file: the filter path (collective
 * H5Dwrite / H5Dread, each rank's plugin compressing the chunks HDF5 gives
 * it) and the collective dataset API (h5fz_dataset_write_part /
 * _read_part) from host, page-locked host and device memory.
 *
 *   mpirun -n N h5fz_bench_mpi --data DIR [--gib-per-rank G] [--chunk-planes P]
 *                              [--dir D] [--reps R] [--paths LIST] [--label TEXT]
 *                              [--filter-alloc default|early] [--libver earliest|latest]
 *
 * Each rank owns a slab of planes of a global float32 array: the real
 * um_sea_ice field (120 x 215 x 360) repeated along time, G GiB per rank
 * (default 1), P planes per chunk (default 16: 4.7 MiB), slabs on the
 * chunk grid. Bound ABS 1e-4 x the field's range, the default chain. Each
 * path writes a fresh file in D (default /dev/shm) and reads it back; the
 * time of a call is the slowest rank's, between barriers, including
 * H5Dcreate/H5Dclose and H5Fflush; GB/s = the array's bytes (all ranks) /
 * that time; best of R runs after one warm-up (JIT, pinned buffers). Every
 * rank checks every element it reads back against the bound, and each API
 * file's chunks against the filter file's (byte-identical). LIST: any of
 * filter,api_host,api_pinned,api_device (default all; the last two need a
 * GPU on every rank). --label is copied into the JSON (e.g. "mps").
 * The filter path's dataset is made by h5fz_dataset_create (H5Dcreate2
 * with the filter) with HDF5's default allocation time, as a code using
 * the filter makes it; --filter-alloc
 * early makes it with h5fz_dataset_create_mpi (chunks allocated at
 * create, as the API's datasets are). --libver latest creates the files
 * in the newest format (H5Pset_libver_bounds; default: HDF5's earliest).
 * JSON on rank 0's stdout (bench/mpi/run.sh collects it).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_ranks.h"
#include "h5fz_dataset_mpi.h"

#define NY BENCH_NY
#define NX BENCH_NX

static int me, nranks;
static const h5fz_cuda_api *cu;

static void die(const char *what, const char *why)
{
  fprintf(stderr, "h5fz_bench_mpi: rank %d: %s: %s\n", me, what, why);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

typedef struct {
  hsize_t dims[3], chunk[3], start[3], count[3];
  bench_buffers buf; /* this rank's part */
  char spec[64];
  double bound;
  hid_t fapl, dxpl;
  const char *dir;
  int filter_early; /* --filter-alloc early: the filter path's dataset made by h5fz_dataset_create_mpi */
} bench;

static void file_name(const bench *b, bench_path p, char *out, size_t cap)
{
  snprintf(out, cap, "%s/h5fz_bench_mpi_%s.h5", b->dir, bench_path_names[p]);
}

/* Time one collective write (create, write, close, flush); the slowest rank's seconds. */
static double timed_write(const bench *b, bench_path p, h5fz_dataset_report *rep)
{
  char path[1100];
  file_name(b, p, path, sizeof path);
  hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, b->fapl);
  if (f < 0) die("H5Fcreate", path);
  memset(rep, 0, sizeof *rep);
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = bench_now_s();
  hid_t d;
  if (p == BENCH_FILTER) {
    /* the same pipeline as the API's datasets, with HDF5's allocation
     * time as a code using the filter gets it (h5fz_dataset_create, on
     * every rank: the chunk dims and the filter, HDF5's defaults otherwise)
     * unless --filter-alloc early (the API's create: chunks allocated at once) */
    if (b->filter_early ? h5fz_dataset_create_mpi(f, "x", H5T_NATIVE_FLOAT, 3, b->dims, b->chunk, b->spec, &d)
                        : h5fz_dataset_create(f, "x", H5T_NATIVE_FLOAT, 3, b->dims, b->chunk, b->spec, &d))
      die("create", h5fz_last_error());
    hid_t fs = H5Dget_space(d), ms = H5Screate_simple(3, b->count, NULL);
    H5Sselect_hyperslab(fs, H5S_SELECT_SET, b->start, NULL, b->count, NULL);
    if (H5Dwrite(d, H5T_NATIVE_FLOAT, ms, fs, b->dxpl, b->buf.host) < 0) die("collective H5Dwrite", path);
    H5Sclose(fs);
    H5Sclose(ms);
  } else {
    if (h5fz_dataset_create_mpi(f, "x", H5T_NATIVE_FLOAT, 3, b->dims, b->chunk, b->spec, &d))
      die("create", h5fz_last_error());
    if (h5fz_dataset_write_part(d, H5T_NATIVE_FLOAT, b->start, b->count, bench_source(&b->buf, p), bench_mem(p), rep))
      die("h5fz_dataset_write_part", h5fz_last_error());
  }
  H5Dclose(d);
  H5Fflush(f, H5F_SCOPE_GLOBAL);
  double t = bench_now_s() - t0, slowest = 0;
  MPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  H5Fclose(f);
  return slowest;
}

/* Time one collective read back of this rank's part into its buffer. */
static double timed_read(const bench *b, bench_path p)
{
  char path[1100];
  file_name(b, p, path, sizeof path);
  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, b->fapl);
  if (f < 0) die("H5Fopen", path);
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = bench_now_s();
  hid_t d = H5Dopen2(f, "x", H5P_DEFAULT);
  if (p == BENCH_FILTER) {
    hid_t fs = H5Dget_space(d), ms = H5Screate_simple(3, b->count, NULL);
    H5Sselect_hyperslab(fs, H5S_SELECT_SET, b->start, NULL, b->count, NULL);
    if (H5Dread(d, H5T_NATIVE_FLOAT, ms, fs, b->dxpl, b->buf.back) < 0) die("collective H5Dread", path);
    H5Sclose(fs);
    H5Sclose(ms);
  } else {
    if (h5fz_dataset_read_part(d, H5T_NATIVE_FLOAT, b->start, b->count, bench_destination(&b->buf, p), bench_mem(p),
                               NULL))
      die("h5fz_dataset_read_part", h5fz_last_error());
  }
  H5Dclose(d);
  double t = bench_now_s() - t0, slowest = 0;
  MPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  H5Fclose(f);
  return slowest;
}

/* Every element of this rank's read-back within the bound; the largest error over all ranks. */
static int check_back(const bench *b, bench_path p, double *max_err)
{
  double e = 0;
  long bad = 0, all_bad = 0;
  if (bench_check_back(cu, &b->buf, p, b->bound, &e, &bad)) die("cuMemcpyDtoH", "read-back");
  MPI_Allreduce(&bad, &all_bad, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(&e, max_err, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return all_bad == 0;
}

/* This rank's chunks of path p's file equal the filter file's (all ranks agree). */
static int same_chunks(const bench *b, bench_path p)
{
  char pa[1100], pb[1100];
  file_name(b, BENCH_FILTER, pa, sizeof pa);
  file_name(b, p, pb, sizeof pb);
  hid_t fa = H5Fopen(pa, H5F_ACC_RDONLY, b->fapl), fb = H5Fopen(pb, H5F_ACC_RDONLY, b->fapl);
  hid_t da = H5Dopen2(fa, "x", H5P_DEFAULT), db = H5Dopen2(fb, "x", H5P_DEFAULT);
  int same = bench_same_chunks(da, db, b->start[0], b->start[0] + b->count[0], b->chunk[0]), all = 0;
  H5Dclose(da);
  H5Dclose(db);
  H5Fclose(fa);
  H5Fclose(fb);
  MPI_Allreduce(&same, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  return all;
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  bench_options o;
  bench_options_default(&o);
  int filter_early = 0, libver_latest = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--libver") && i + 1 < argc &&
        (!strcmp(argv[i + 1], "latest") || !strcmp(argv[i + 1], "earliest"))) {
      libver_latest = !strcmp(argv[++i], "latest");
      continue;
    }
    if (!strcmp(argv[i], "--filter-alloc") && i + 1 < argc &&
        (!strcmp(argv[i + 1], "early") || !strcmp(argv[i + 1], "default"))) {
      filter_early = !strcmp(argv[++i], "early");
      continue;
    }
    if (!bench_option(&o, argc, argv, &i)) {
      if (me == 0)
        fprintf(stderr, "usage: mpirun -n N h5fz_bench_mpi --data DIR [--gib-per-rank G] [--chunk-planes P] "
                        "[--dir D] [--reps R] [--paths LIST] [--label TEXT] [--filter-alloc default|early] "
                        "[--libver earliest|latest]\n");
      MPI_Finalize();
      return 2;
    }
  }
  const char *data = o.data, *paths = o.paths, *label = o.label;
  int planes = o.planes, reps = o.reps;
  bench b = {.dir = o.dir, .filter_early = filter_early};
  if (!bench_options_valid(&o)) die("arguments", "--data DIR (or H5FZ_DATA_DIR) is required");
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  int ordinal = -1;
  h5fz_mpi_select_gpu(MPI_COMM_WORLD, &ordinal);
  double range;
  float *field = bench_load_field(data, &range);
  if (!field) die("cannot read the um_sea_ice field from", data);
  b.bound = 1e-4 * range;
  snprintf(b.spec, sizeof b.spec, "abs=%.17g", b.bound);
  hsize_t per_rank = bench_planes_per_rank(&o);
  hsize_t dims[3] = {per_rank * (hsize_t)nranks, NY, NX}, chunk[3] = {(hsize_t)planes, NY, NX};
  memcpy(b.dims, dims, sizeof dims);
  memcpy(b.chunk, chunk, sizeof chunk);
  b.start[0] = per_rank * (hsize_t)me;
  b.count[0] = per_rank;
  b.count[1] = NY;
  b.count[2] = NX;
  if (bench_host_buffers(&b.buf, (size_t)per_rank * NY * NX)) die("malloc", "the rank's part");
  bench_tile_field(field, b.buf.host, b.start[0], per_rank);
  free(field);
  /* GPU buffers where there is a GPU on every rank */
  cu = h5fz_cuda_get(NULL);
  int gpu = bench_gpu_buffers(cu, ordinal, &b.buf), all_gpu = 0;
  MPI_Allreduce(&gpu, &all_gpu, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  b.fapl = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_fapl_mpio(b.fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
  /* latest: the newest file format, whose chunk index for a fixed-size
   * dataset is a fixed array instead of a version-1 B-tree */
  if (libver_latest) H5Pset_libver_bounds(b.fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST);
  b.dxpl = H5Pcreate(H5P_DATASET_XFER);
  H5Pset_dxpl_mpio(b.dxpl, H5FD_MPIO_COLLECTIVE);
  unsigned maj, min, rel;
  H5get_libversion(&maj, &min, &rel);
  if (me == 0)
    printf("{\n  \"benchmark\": \"h5fz_bench_mpi\",\n  \"label\": \"%s\",\n  \"filter_alloc\": \"%s\",\n  \"libver\": "
           "\"%s\",\n"
           "  \"ranks\": %d,\n  \"hdf5\": \"%u.%u.%u\",\n"
           "  \"field\": \"um_sea_ice tiled\",\n  \"dims\": [%llu, %d, %d],\n  \"chunk\": [%d, %d, %d],\n"
           "  \"bytes_per_rank\": %llu,\n  \"total_bytes\": %llu,\n  \"spec\": \"%s\",\n  \"file_dir\": \"%s\",\n"
           "  \"reps\": %d,\n  \"gpu_on_every_rank\": %s,\n  \"gpu_ordinal_rank0\": %d,\n  \"results\": [",
           label, filter_early ? "early" : "default", libver_latest ? "latest" : "earliest", nranks, maj, min, rel,
           (unsigned long long)dims[0], NY, NX, planes, NY, NX, (unsigned long long)(b.buf.elems * 4),
           (unsigned long long)(b.buf.elems * 4 * (size_t)nranks), b.spec, b.dir, reps, all_gpu ? "true" : "false",
           ordinal);
  int first = 1, all_ok = 1, have_filter = 0;
  for (int p = 0; p < BENCH_N_PATHS; p++) {
    if (!strstr(paths, bench_path_names[p])) continue;
    if ((p == BENCH_PINNED || p == BENCH_DEVICE) && !all_gpu) continue;
    double best_w = INFINITY, best_r = INFINITY, err = 0;
    int on_gpu = 0;
    for (int rep = 0; rep <= reps; rep++) { /* rep 0: warm-up */
      h5fz_dataset_report report;
      double w = timed_write(&b, (bench_path)p, &report), r = timed_read(&b, (bench_path)p);
      if (rep && w < best_w) best_w = w;
      if (rep && r < best_r) best_r = r;
      on_gpu = report.on_gpu;
    }
    int ok = check_back(&b, (bench_path)p, &err);
    int identical = p == BENCH_FILTER ? 1 : have_filter ? same_chunks(&b, (bench_path)p) : -1;
    int gpu_ranks = 0;
    MPI_Allreduce(&on_gpu, &gpu_ranks, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    char file[1100];
    file_name(&b, (bench_path)p, file, sizeof file);
    double ratio = bench_stored_ratio(file, b.fapl, (uint64_t)(b.dims[0] * b.dims[1] * b.dims[2] * 4));
    all_ok &= ok && identical != 0;
    if (p == BENCH_FILTER) have_filter = 1;
    double total = (double)(b.buf.elems * 4) * nranks;
    if (me == 0)
      bench_print_row(first, (bench_path)p, best_w, best_r, total, ratio, err, b.bound, ok, identical, gpu_ranks);
    first = 0;
  }
  if (me == 0) {
    printf("\n  ],\n  \"all_checks_passed\": %s\n}\n", all_ok ? "true" : "false");
    for (int p = 0; p < BENCH_N_PATHS; p++) {
      char path[1100];
      file_name(&b, (bench_path)p, path, sizeof path);
      unlink(path);
    }
  }
  H5Pclose(b.fapl);
  H5Pclose(b.dxpl);
  MPI_Finalize();
  return all_ok ? 0 : 1;
}
