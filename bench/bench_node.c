/*
 * bench_node.c - the node case without MPI: N processes on one machine,
 * each writing and reading its own file (1 GiB of um_sea_ice by default)
 * through the filter (H5Dwrite / H5Dread) and through the dataset API
 * (h5fz_dataset_write / _read from host, page-locked host and device
 * memory), all sharing the GPU(s). For machines without a parallel HDF5,
 * where bench_mpi.c cannot run; bench/mpi/run.sh starts it.
 *
 *   h5fz_bench_node --rank R --ranks N --sync FILE --data DIR [--gib-per-rank G]
 *                   [--chunk-planes P] [--dir D] [--reps R] [--paths LIST] [--label TEXT]
 *
 * Start N copies with R = 0..N-1 and the same --sync FILE (a new path in
 * /dev/shm): rank 0 creates a process-shared barrier there, the others wait
 * for it. Every measured call runs between two barriers; the aggregate GB/s
 * is all ranks' bytes over (latest end - earliest start), CLOCK_MONOTONIC
 * being one clock for the whole machine. Best of R after one warm-up; every
 * element read back is checked against the bound (ABS 1e-4 of the field's
 * range) and the API's chunks against the filter's. Rank 0 prints the JSON
 * (the same fields as h5fz_bench_mpi's, "layout": "file per process").
 * Ranks choose GPU R modulo the visible GPUs unless H5FZ_GPU_ORDINAL is set.
 */
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "h5fz_cuda.h"
#include "h5fz_dataset.h"

#define NY 215
#define NX 360
#define FIELD_T 120
#define MAX_RANKS 256

typedef struct {
  atomic_int ready;
  pthread_barrier_t barrier;
  double start[MAX_RANKS], end[MAX_RANKS];
  double err[MAX_RANKS];
  int bad[MAX_RANKS], same[MAX_RANKS], on_gpu[MAX_RANKS];
} shared_state;

static shared_state *sh;
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
  fprintf(stderr, "h5fz_bench_node: rank %d: %s: %s\n", me, what, why);
  exit(1);
}

static void sync_all(void) { pthread_barrier_wait(&sh->barrier); }

/* Rank 0 makes the shared barrier in file path; the others map it once it is ready. */
static void attach(const char *path)
{
  int fd = -1;
  if (me == 0) {
    fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0 || ftruncate(fd, sizeof *sh)) die("cannot create the barrier file (remove a stale one)", path);
  } else {
    for (int i = 0; i < 6000 && fd < 0; i++) {
      fd = open(path, O_RDWR);
      if (fd < 0) usleep(10000);
    }
    if (fd < 0) die("no barrier file from rank 0", path);
  }
  for (int i = 0; i < 6000; i++) { /* rank 0's ftruncate may not be there yet */
    off_t size = lseek(fd, 0, SEEK_END);
    if (size >= (off_t)sizeof *sh) break;
    usleep(10000);
  }
  sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (sh == MAP_FAILED) die("mmap", path);
  if (me == 0) {
    pthread_barrierattr_t a;
    pthread_barrierattr_init(&a);
    pthread_barrierattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
    pthread_barrier_init(&sh->barrier, &a, (unsigned)nranks);
    atomic_store(&sh->ready, 1);
  } else {
    for (int i = 0; i < 60000 && !atomic_load(&sh->ready); i++) usleep(1000);
    if (!atomic_load(&sh->ready)) die("rank 0 never made the barrier", path);
  }
}

typedef struct {
  hsize_t dims[3], chunk[3];
  size_t elems;
  float *host, *pinned, *back, *pinned_back;
  CUdeviceptr dev, dev_back;
  char spec[64];
  double bound;
  const char *dir;
} bench;

static void file_name(const bench *b, path_kind p, int rank, char *out, size_t cap)
{
  snprintf(out, cap, "%s/h5fz_bench_node_%s_r%d.h5", b->dir, path_names[p], rank);
}

/* One measured call between barriers: the aggregate seconds (latest end - earliest start). */
static double aggregate(double t0, double t1)
{
  sh->start[me] = t0;
  sh->end[me] = t1;
  sync_all();
  double lo = sh->start[0], hi = sh->end[0];
  for (int r = 1; r < nranks; r++) {
    if (sh->start[r] < lo) lo = sh->start[r];
    if (sh->end[r] > hi) hi = sh->end[r];
  }
  sync_all();
  return hi - lo;
}

static double timed_write(const bench *b, path_kind p, int *on_gpu)
{
  char path[1100];
  file_name(b, p, me, path, sizeof path);
  sync_all();
  double t0 = now_s();
  hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), d;
  if (f < 0) die("H5Fcreate", path);
  if (h5fz_dataset_create(f, "x", H5T_NATIVE_FLOAT, 3, b->dims, b->chunk, b->spec, &d))
    die("create", h5fz_last_error());
  h5fz_dataset_report rep = {0};
  if (p == P_FILTER) {
    if (H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, b->host) < 0) die("H5Dwrite", path);
  } else {
    const void *src = p == P_HOST     ? (const void *)b->host
                      : p == P_PINNED ? (const void *)b->pinned
                                      : (const void *)(uintptr_t)b->dev;
    if (h5fz_dataset_write(d, src, p == P_DEVICE ? H5FZ_MEM_DEVICE : H5FZ_MEM_HOST, &rep))
      die("h5fz_dataset_write", h5fz_last_error());
  }
  H5Dclose(d);
  H5Fclose(f);
  *on_gpu = rep.on_gpu;
  return aggregate(t0, now_s());
}

static double timed_read(const bench *b, path_kind p)
{
  char path[1100];
  file_name(b, p, me, path, sizeof path);
  sync_all();
  double t0 = now_s();
  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT), d = H5Dopen2(f, "x", H5P_DEFAULT);
  if (d < 0) die("H5Dopen", path);
  if (p == P_FILTER) {
    if (H5Dread(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, b->back) < 0) die("H5Dread", path);
  } else {
    void *dst = p == P_HOST ? (void *)b->back : p == P_PINNED ? (void *)b->pinned_back : (void *)(uintptr_t)b->dev_back;
    if (h5fz_dataset_read(d, dst, p == P_DEVICE ? H5FZ_MEM_DEVICE : H5FZ_MEM_HOST, NULL))
      die("h5fz_dataset_read", h5fz_last_error());
  }
  H5Dclose(d);
  H5Fclose(f);
  return aggregate(t0, now_s());
}

/* This rank's checks into the shared slots: bound on every element, chunks equal to the filter's. */
static void check(const bench *b, path_kind p)
{
  const float *back = p == P_PINNED ? b->pinned_back : b->back;
  if (p == P_DEVICE &&
      (cu->cuMemcpyDtoHAsync(b->back, b->dev_back, b->elems * 4, NULL) || cu->cuStreamSynchronize(NULL)))
    die("cuMemcpyDtoH", "read-back");
  double e = 0;
  int bad = 0;
  for (size_t i = 0; i < b->elems; i++) {
    double d = fabs((double)back[i] - (double)b->host[i]);
    if (d > e) e = d;
    if (!(d <= b->bound)) bad = 1;
  }
  int same = 1;
  if (p != P_FILTER) {
    char pa[1100], pb[1100];
    file_name(b, P_FILTER, me, pa, sizeof pa);
    file_name(b, p, me, pb, sizeof pb);
    hid_t fa = H5Fopen(pa, H5F_ACC_RDONLY, H5P_DEFAULT), fb = H5Fopen(pb, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t da = H5Dopen2(fa, "x", H5P_DEFAULT), db = H5Dopen2(fb, "x", H5P_DEFAULT);
    same = da >= 0 && db >= 0;
    for (hsize_t z = 0; z < b->dims[0] && same; z += b->chunk[0]) {
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
  }
  sh->err[me] = e;
  sh->bad[me] = bad;
  sh->same[me] = same;
  sync_all();
}

static double stored_ratio(const bench *b, path_kind p)
{
  char path[1100];
  file_name(b, p, 0, path, sizeof path);
  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT), d = H5Dopen2(f, "x", H5P_DEFAULT);
  double r = (double)(b->elems * 4) / (double)H5Dget_storage_size(d);
  H5Dclose(d);
  H5Fclose(f);
  return r;
}

int main(int argc, char **argv)
{
  const char *data = getenv("H5FZ_DATA_DIR"), *paths = "filter,api_host,api_pinned,api_device", *label = "",
             *sync = NULL;
  double gib = 1.0;
  int planes = 16, reps = 2;
  bench b = {.dir = "/dev/shm"};
  nranks = 0;
  me = -1;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--rank") && i + 1 < argc)
      me = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--ranks") && i + 1 < argc)
      nranks = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--sync") && i + 1 < argc)
      sync = argv[++i];
    else if (!strcmp(argv[i], "--data") && i + 1 < argc)
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
      fprintf(stderr, "usage: h5fz_bench_node --rank R --ranks N --sync FILE --data DIR [--gib-per-rank G] "
                      "[--chunk-planes P] [--dir D] [--reps R] [--paths LIST] [--label TEXT]\n");
      return 2;
    }
  }
  if (nranks < 1 || nranks > MAX_RANKS || me < 0 || me >= nranks || !sync || !data || gib <= 0 || planes < 1 ||
      reps < 1)
    die("arguments", "--rank R --ranks N (1..256) --sync FILE --data DIR are required");
  attach(sync);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  /* the GPU: rank modulo the visible ones, unless H5FZ_GPU_ORDINAL says */
  cu = h5fz_cuda_get(NULL);
  int n_gpus = 0, ordinal = -1;
  if (cu && !cu->cuInit(0) && !cu->cuDeviceGetCount(&n_gpus) && n_gpus > 0) {
    const char *set = getenv("H5FZ_GPU_ORDINAL");
    ordinal = set && *set ? atoi(set) : me % n_gpus;
    char text[16];
    snprintf(text, sizeof text, "%d", ordinal);
    setenv("H5FZ_GPU_ORDINAL", text, 1);
  }
  char path[1024];
  snprintf(path, sizeof path, "%s/um_sea_ice_northward_velocity_float32_120x215x360.f32", data);
  size_t fn = (size_t)FIELD_T * NY * NX;
  float *field = malloc(fn * 4);
  FILE *fp = fopen(path, "rb");
  if (!field || !fp || fread(field, 4, fn, fp) != fn) die("cannot read", path);
  fclose(fp);
  float lo = field[0], hi = field[0];
  for (size_t i = 1; i < fn; i++) {
    if (field[i] < lo) lo = field[i];
    if (field[i] > hi) hi = field[i];
  }
  b.bound = 1e-4 * ((double)hi - (double)lo);
  snprintf(b.spec, sizeof b.spec, "abs=%.17g", b.bound);
  hsize_t plane = (hsize_t)NY * NX, nz = (hsize_t)ceil(gib * 1073741824.0 / (double)(plane * 4));
  nz = (nz + (hsize_t)planes - 1) / (hsize_t)planes * (hsize_t)planes;
  b.dims[0] = nz;
  b.dims[1] = NY;
  b.dims[2] = NX;
  b.chunk[0] = (hsize_t)planes;
  b.chunk[1] = NY;
  b.chunk[2] = NX;
  b.elems = (size_t)(nz * plane);
  b.host = malloc(b.elems * 4);
  b.back = malloc(b.elems * 4);
  if (!b.host || !b.back) die("malloc", "the array");
  for (hsize_t z = 0; z < nz; z++)
    memcpy(b.host + z * plane, field + ((z + nz * (hsize_t)me) % FIELD_T) * plane, plane * 4);
  free(field);
  CUdevice dev;
  CUcontext ctx;
  int gpu = ordinal >= 0 && !cu->cuDeviceGet(&dev, ordinal) && !cu->cuDevicePrimaryCtxRetain(&ctx, dev) &&
            !cu->cuCtxSetCurrent(ctx) && !cu->cuMemAlloc(&b.dev, b.elems * 4) &&
            !cu->cuMemAlloc(&b.dev_back, b.elems * 4) && !cu->cuMemcpyHtoDAsync(b.dev, b.host, b.elems * 4, NULL) &&
            !cu->cuStreamSynchronize(NULL) && !cu->cuMemAllocHost((void **)&b.pinned, b.elems * 4) &&
            !cu->cuMemAllocHost((void **)&b.pinned_back, b.elems * 4);
  if (gpu) memcpy(b.pinned, b.host, b.elems * 4);
  sh->on_gpu[me] = gpu;
  sync_all();
  int all_gpu = 1;
  for (int r = 0; r < nranks; r++) all_gpu &= sh->on_gpu[r];
  unsigned maj, min, rel;
  H5get_libversion(&maj, &min, &rel);
  if (me == 0)
    printf("{\n  \"benchmark\": \"h5fz_bench_node\",\n  \"layout\": \"file per process\",\n  \"label\": \"%s\",\n"
           "  \"ranks\": %d,\n  \"hdf5\": \"%u.%u.%u\",\n  \"field\": \"um_sea_ice tiled\",\n  \"dims_per_rank\": "
           "[%llu, %d, %d],\n"
           "  \"chunk\": [%d, %d, %d],\n  \"bytes_per_rank\": %llu,\n  \"total_bytes\": %llu,\n  \"spec\": \"%s\",\n"
           "  \"file_dir\": \"%s\",\n  \"reps\": %d,\n  \"gpu_on_every_rank\": %s,\n  \"results\": [",
           label, nranks, maj, min, rel, (unsigned long long)nz, NY, NX, planes, NY, NX,
           (unsigned long long)(b.elems * 4), (unsigned long long)(b.elems * 4 * (size_t)nranks), b.spec, b.dir, reps,
           all_gpu ? "true" : "false");
  int first = 1, all_ok = 1;
  for (int p = 0; p < N_PATHS; p++) {
    if (!strstr(paths, path_names[p]) || ((p == P_PINNED || p == P_DEVICE) && !all_gpu)) continue;
    double best_w = INFINITY, best_r = INFINITY;
    int on_gpu = 0;
    for (int rep = 0; rep <= reps; rep++) { /* rep 0: warm-up */
      double w = timed_write(&b, (path_kind)p, &on_gpu), r = timed_read(&b, (path_kind)p);
      if (rep && w < best_w) best_w = w;
      if (rep && r < best_r) best_r = r;
    }
    sh->on_gpu[me] = on_gpu;
    check(&b, (path_kind)p);
    int ok = 1, same = 1, gpu_ranks = 0;
    double err = 0;
    for (int r = 0; r < nranks; r++) {
      ok &= !sh->bad[r];
      same &= sh->same[r];
      gpu_ranks += sh->on_gpu[r];
      if (sh->err[r] > err) err = sh->err[r];
    }
    all_ok &= ok && same;
    double total = (double)(b.elems * 4) * nranks;
    if (me == 0)
      printf(
          "%s\n    {\"path\": \"%s\", \"write_s\": %.4f, \"read_s\": %.4f, \"write_GBps\": %.3f, \"read_GBps\": %.3f, "
          "\"ratio\": %.3f, \"max_abs_error\": %.6g, \"bound\": %.6g, \"bound_ok\": %s, "
          "\"chunks_identical_to_filter\": %s, \"api_ranks_on_gpu\": %d}",
          first ? "" : ",", path_names[p], best_w, best_r, total / best_w / 1e9, total / best_r / 1e9,
          stored_ratio(&b, (path_kind)p), err, b.bound, ok ? "true" : "false",
          p == P_FILTER ? "true"
          : same        ? "true"
                        : "false",
          p == P_FILTER ? -1 : gpu_ranks);
    first = 0;
    sync_all();
  }
  sync_all();
  for (int p = 0; p < N_PATHS; p++) {
    char f[1100];
    file_name(&b, (path_kind)p, me, f, sizeof f);
    unlink(f);
  }
  if (me == 0) {
    printf("\n  ],\n  \"all_checks_passed\": %s\n}\n", all_ok ? "true" : "false");
    unlink(sync);
  }
  return all_ok ? 0 : 1;
}
