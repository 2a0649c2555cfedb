/*
 * bench_mpi.c - aggregate write and read GB/s of N MPI ranks on one node,
 * through parallel HDF5 into one shared file: the filter path (collective
 * H5Dwrite / H5Dread, each rank's plugin compressing the chunks HDF5 gives
 * it) and the collective dataset API (h5fz_dataset_write_part /
 * _read_part) from host, page-locked host and device memory.
 *
 *   mpirun -n N h5fz_bench_mpi --data DIR [--gib-per-rank G] [--chunk-planes P]
 *                              [--dir D] [--reps R] [--paths LIST] [--label TEXT]
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
 * JSON on rank 0's stdout (bench/mpi/run.sh collects it).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "h5fz_cuda.h"
#include "h5fz_dataset_mpi.h"

#define NY 215
#define NX 360
#define FIELD_T 120

static int me, nranks;
static const h5fz_cuda_api *cu;

typedef enum { P_FILTER, P_HOST, P_PINNED, P_DEVICE, N_PATHS } path_kind;
static const char *const path_names[] = {"filter", "api_host", "api_pinned", "api_device"};

static double now_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void die(const char *what, const char *why)
{
  fprintf(stderr, "h5fz_bench_mpi: rank %d: %s: %s\n", me, what, why);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

static float *load_field(const char *dir, double *range)
{
  char path[1024];
  snprintf(path, sizeof path, "%s/um_sea_ice_northward_velocity_float32_120x215x360.f32", dir);
  size_t n = (size_t)FIELD_T * NY * NX;
  float *f = malloc(n * sizeof *f);
  FILE *fp = fopen(path, "rb");
  if (!f || !fp || fread(f, sizeof *f, n, fp) != n) die("cannot read", path);
  fclose(fp);
  float lo = f[0], hi = f[0];
  for (size_t i = 1; i < n; i++) {
    if (f[i] < lo) lo = f[i];
    if (f[i] > hi) hi = f[i];
  }
  *range = (double)hi - (double)lo;
  return f;
}

typedef struct {
  hsize_t dims[3], chunk[3], start[3], count[3];
  size_t elems; /* this rank's */
  float *host, *pinned, *back, *pinned_back;
  CUdeviceptr dev, dev_back;
  char spec[64];
  double bound;
  hid_t fapl, dxpl;
  const char *dir;
} bench;

static void file_name(const bench *b, path_kind p, char *out, size_t cap)
{
  snprintf(out, cap, "%s/h5fz_bench_mpi_%s.h5", b->dir, path_names[p]);
}

/* Time one collective write (create, write, close, flush); the slowest rank's seconds. */
static double timed_write(const bench *b, path_kind p, h5fz_dataset_report *rep)
{
  char path[1100];
  file_name(b, p, path, sizeof path);
  hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, b->fapl);
  if (f < 0) die("H5Fcreate", path);
  memset(rep, 0, sizeof *rep);
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = now_s();
  hid_t d;
  if (p == P_FILTER) {
    /* the same pipeline as the API's datasets: created by the API's create, written by HDF5 */
    if (h5fz_dataset_create_mpi(f, "x", H5T_NATIVE_FLOAT, 3, b->dims, b->chunk, b->spec, &d))
      die("create", h5fz_last_error());
    hid_t fs = H5Dget_space(d), ms = H5Screate_simple(3, b->count, NULL);
    H5Sselect_hyperslab(fs, H5S_SELECT_SET, b->start, NULL, b->count, NULL);
    if (H5Dwrite(d, H5T_NATIVE_FLOAT, ms, fs, b->dxpl, b->host) < 0) die("collective H5Dwrite", path);
    H5Sclose(fs);
    H5Sclose(ms);
  } else {
    if (h5fz_dataset_create_mpi(f, "x", H5T_NATIVE_FLOAT, 3, b->dims, b->chunk, b->spec, &d))
      die("create", h5fz_last_error());
    const void *src = p == P_HOST     ? (const void *)b->host
                      : p == P_PINNED ? (const void *)b->pinned
                                      : (const void *)(uintptr_t)b->dev;
    if (h5fz_dataset_write_part(d, H5T_NATIVE_FLOAT, b->start, b->count, src,
                                p == P_DEVICE ? H5FZ_MEM_DEVICE : H5FZ_MEM_HOST, rep))
      die("h5fz_dataset_write_part", h5fz_last_error());
  }
  H5Dclose(d);
  H5Fflush(f, H5F_SCOPE_GLOBAL);
  double t = now_s() - t0, slowest = 0;
  MPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  H5Fclose(f);
  return slowest;
}

/* Time one collective read back of this rank's part into its buffer. */
static double timed_read(const bench *b, path_kind p)
{
  char path[1100];
  file_name(b, p, path, sizeof path);
  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, b->fapl);
  if (f < 0) die("H5Fopen", path);
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = now_s();
  hid_t d = H5Dopen2(f, "x", H5P_DEFAULT);
  if (p == P_FILTER) {
    hid_t fs = H5Dget_space(d), ms = H5Screate_simple(3, b->count, NULL);
    H5Sselect_hyperslab(fs, H5S_SELECT_SET, b->start, NULL, b->count, NULL);
    if (H5Dread(d, H5T_NATIVE_FLOAT, ms, fs, b->dxpl, b->back) < 0) die("collective H5Dread", path);
    H5Sclose(fs);
    H5Sclose(ms);
  } else {
    void *dst = p == P_HOST ? (void *)b->back : p == P_PINNED ? (void *)b->pinned_back : (void *)(uintptr_t)b->dev_back;
    if (h5fz_dataset_read_part(d, H5T_NATIVE_FLOAT, b->start, b->count, dst,
                               p == P_DEVICE ? H5FZ_MEM_DEVICE : H5FZ_MEM_HOST, NULL))
      die("h5fz_dataset_read_part", h5fz_last_error());
  }
  H5Dclose(d);
  double t = now_s() - t0, slowest = 0;
  MPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  H5Fclose(f);
  return slowest;
}

/* Every element of this rank's read-back within the bound; the largest error over all ranks. */
static int check_back(const bench *b, path_kind p, double *max_err)
{
  const float *back = b->back;
  if (p == P_PINNED) back = b->pinned_back;
  if (p == P_DEVICE) {
    if (cu->cuMemcpyDtoHAsync(b->back, b->dev_back, b->elems * 4, NULL) || cu->cuStreamSynchronize(NULL))
      die("cuMemcpyDtoH", "read-back");
  }
  double e = 0;
  long bad = 0;
  for (size_t i = 0; i < b->elems; i++) {
    double d = fabs((double)back[i] - (double)b->host[i]);
    if (d > e) e = d;
    if (!(d <= b->bound)) bad++;
  }
  long all_bad = 0;
  MPI_Allreduce(&bad, &all_bad, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(&e, max_err, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return all_bad == 0;
}

/* This rank's chunks of path p's file equal the filter file's (all ranks agree). */
static int same_chunks(const bench *b, path_kind p)
{
  char pa[1100], pb[1100];
  file_name(b, P_FILTER, pa, sizeof pa);
  file_name(b, p, pb, sizeof pb);
  hid_t fa = H5Fopen(pa, H5F_ACC_RDONLY, b->fapl), fb = H5Fopen(pb, H5F_ACC_RDONLY, b->fapl);
  hid_t da = H5Dopen2(fa, "x", H5P_DEFAULT), db = H5Dopen2(fb, "x", H5P_DEFAULT);
  int same = 1;
  for (hsize_t z = b->start[0]; z < b->start[0] + b->count[0] && same; z += b->chunk[0]) {
    hsize_t off[3] = {z, 0, 0}, sa = 0, sb = 0;
    uint32_t ma = 1, mb = 1;
    H5Dget_chunk_storage_size(da, off, &sa);
    H5Dget_chunk_storage_size(db, off, &sb);
    char *ba = malloc(sa + 1), *bb = malloc(sb + 1);
    same = sa && sa == sb && H5Dread_chunk(da, H5P_DEFAULT, off, &ma, ba) >= 0 &&
           H5Dread_chunk(db, H5P_DEFAULT, off, &mb, bb) >= 0 && !ma && !mb && !memcmp(ba, bb, sa);
    free(ba);
    free(bb);
  }
  H5Dclose(da);
  H5Dclose(db);
  H5Fclose(fa);
  H5Fclose(fb);
  int all = 0;
  MPI_Allreduce(&same, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  return all;
}

static double stored_ratio(const bench *b, path_kind p)
{
  char path[1100];
  file_name(b, p, path, sizeof path);
  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, b->fapl), d = H5Dopen2(f, "x", H5P_DEFAULT);
  double r = (double)(b->dims[0] * b->dims[1] * b->dims[2] * 4) / (double)H5Dget_storage_size(d);
  H5Dclose(d);
  H5Fclose(f);
  return r;
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  const char *data = getenv("H5FZ_DATA_DIR"), *paths = "filter,api_host,api_pinned,api_device", *label = "";
  double gib = 1.0;
  int planes = 16, reps = 2;
  bench b = {.dir = "/dev/shm"};
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--data") && i + 1 < argc)
      data = argv[++i];
    else if (!strcmp(argv[i], "--gib-per-rank") && i + 1 < argc)
      gib = atof(argv[++i]);
    else if (!strcmp(argv[i], "--chunk-planes") && i + 1 < argc)
      planes = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--dir") && i + 1 < argc)
      b.dir = argv[++i];
    else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
      reps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--paths") && i + 1 < argc)
      paths = argv[++i];
    else if (!strcmp(argv[i], "--label") && i + 1 < argc)
      label = argv[++i];
    else {
      if (me == 0)
        fprintf(stderr, "usage: mpirun -n N h5fz_bench_mpi --data DIR [--gib-per-rank G] [--chunk-planes P] "
                        "[--dir D] [--reps R] [--paths LIST] [--label TEXT]\n");
      MPI_Finalize();
      return 2;
    }
  }
  if (!data || gib <= 0 || planes < 1 || reps < 1) die("arguments", "--data DIR (or H5FZ_DATA_DIR) is required");
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  int ordinal = -1;
  h5fz_mpi_select_gpu(MPI_COMM_WORLD, &ordinal);
  double range;
  float *field = load_field(data, &range);
  b.bound = 1e-4 * range;
  snprintf(b.spec, sizeof b.spec, "abs=%.17g", b.bound);
  hsize_t plane_bytes = (hsize_t)NY * NX * 4, per_rank = (hsize_t)ceil(gib * 1073741824.0 / (double)plane_bytes);
  per_rank = (per_rank + (hsize_t)planes - 1) / (hsize_t)planes * (hsize_t)planes;
  hsize_t dims[3] = {per_rank * (hsize_t)nranks, NY, NX}, chunk[3] = {(hsize_t)planes, NY, NX};
  memcpy(b.dims, dims, sizeof dims);
  memcpy(b.chunk, chunk, sizeof chunk);
  b.start[0] = per_rank * (hsize_t)me;
  b.count[0] = per_rank;
  b.count[1] = NY;
  b.count[2] = NX;
  b.elems = (size_t)per_rank * NY * NX;
  b.host = malloc(b.elems * 4);
  b.back = malloc(b.elems * 4);
  if (!b.host || !b.back) die("malloc", "the rank's part");
  for (hsize_t z = 0; z < per_rank; z++)
    memcpy(b.host + z * NY * NX, field + ((b.start[0] + z) % FIELD_T) * NY * NX, plane_bytes);
  free(field);
  /* GPU buffers where there is a GPU on every rank */
  cu = h5fz_cuda_get(NULL);
  CUdevice dev;
  CUcontext ctx;
  int gpu = ordinal >= 0 && cu && !cu->cuInit(0) && !cu->cuDeviceGet(&dev, ordinal) &&
            !cu->cuDevicePrimaryCtxRetain(&ctx, dev) && !cu->cuCtxSetCurrent(ctx) &&
            !cu->cuMemAlloc(&b.dev, b.elems * 4) && !cu->cuMemAlloc(&b.dev_back, b.elems * 4) &&
            !cu->cuMemcpyHtoDAsync(b.dev, b.host, b.elems * 4, NULL) && !cu->cuStreamSynchronize(NULL) &&
            !cu->cuMemAllocHost((void **)&b.pinned, b.elems * 4) &&
            !cu->cuMemAllocHost((void **)&b.pinned_back, b.elems * 4);
  int all_gpu = 0;
  MPI_Allreduce(&gpu, &all_gpu, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  if (gpu) memcpy(b.pinned, b.host, b.elems * 4);
  b.fapl = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_fapl_mpio(b.fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
  b.dxpl = H5Pcreate(H5P_DATASET_XFER);
  H5Pset_dxpl_mpio(b.dxpl, H5FD_MPIO_COLLECTIVE);
  unsigned maj, min, rel;
  H5get_libversion(&maj, &min, &rel);
  if (me == 0)
    printf(
        "{\n  \"benchmark\": \"h5fz_bench_mpi\",\n  \"label\": \"%s\",\n  \"ranks\": %d,\n  \"hdf5\": \"%u.%u.%u\",\n"
        "  \"field\": \"um_sea_ice tiled\",\n  \"dims\": [%llu, %d, %d],\n  \"chunk\": [%d, %d, %d],\n"
        "  \"bytes_per_rank\": %llu,\n  \"total_bytes\": %llu,\n  \"spec\": \"%s\",\n  \"file_dir\": \"%s\",\n"
        "  \"reps\": %d,\n  \"gpu_on_every_rank\": %s,\n  \"gpu_ordinal_rank0\": %d,\n  \"results\": [",
        label, nranks, maj, min, rel, (unsigned long long)dims[0], NY, NX, planes, NY, NX,
        (unsigned long long)(b.elems * 4), (unsigned long long)(b.elems * 4 * (size_t)nranks), b.spec, b.dir, reps,
        all_gpu ? "true" : "false", ordinal);
  int first = 1, all_ok = 1, have_filter = 0;
  for (int p = 0; p < N_PATHS; p++) {
    if (!strstr(paths, path_names[p])) continue;
    if ((p == P_PINNED || p == P_DEVICE) && !all_gpu) continue;
    double best_w = INFINITY, best_r = INFINITY, err = 0;
    int on_gpu = 0;
    for (int rep = 0; rep <= reps; rep++) { /* rep 0: warm-up */
      h5fz_dataset_report report;
      double w = timed_write(&b, (path_kind)p, &report), r = timed_read(&b, (path_kind)p);
      if (rep && w < best_w) best_w = w;
      if (rep && r < best_r) best_r = r;
      on_gpu = report.on_gpu;
    }
    int ok = check_back(&b, (path_kind)p, &err);
    int identical = p == P_FILTER ? 1 : have_filter ? same_chunks(&b, (path_kind)p) : -1;
    int gpu_ranks = 0;
    MPI_Allreduce(&on_gpu, &gpu_ranks, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    double ratio = stored_ratio(&b, (path_kind)p);
    all_ok &= ok && identical != 0;
    if (p == P_FILTER) have_filter = 1;
    double total = (double)(b.elems * 4) * nranks;
    if (me == 0)
      printf(
          "%s\n    {\"path\": \"%s\", \"write_s\": %.4f, \"read_s\": %.4f, \"write_GBps\": %.3f, \"read_GBps\": %.3f, "
          "\"ratio\": %.3f, \"max_abs_error\": %.6g, \"bound\": %.6g, \"bound_ok\": %s, "
          "\"chunks_identical_to_filter\": %s, \"api_ranks_on_gpu\": %d}",
          first ? "" : ",", path_names[p], best_w, best_r, total / best_w / 1e9, total / best_r / 1e9, ratio, err,
          b.bound, ok ? "true" : "false",
          identical < 0 ? "null"
          : identical   ? "true"
                        : "false",
          p == P_FILTER ? -1 : gpu_ranks);
    first = 0;
  }
  if (me == 0) {
    printf("\n  ],\n  \"all_checks_passed\": %s\n}\n", all_ok ? "true" : "false");
    for (int p = 0; p < N_PATHS; p++) {
      char path[1100];
      file_name(&b, (path_kind)p, path, sizeof path);
      unlink(path);
    }
  }
  H5Pclose(b.fapl);
  H5Pclose(b.dxpl);
  MPI_Finalize();
  return all_ok ? 0 : 1;
}
