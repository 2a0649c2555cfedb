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

#include "bench_ranks.h"

#define NY BENCH_NY
#define NX BENCH_NX
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
  bench_buffers buf; /* this rank's part: the whole of its file */
  char spec[64];
  double bound;
  const char *dir;
} bench;

static void file_name(const bench *b, bench_path p, int rank, char *out, size_t cap)
{
  snprintf(out, cap, "%s/h5fz_bench_node_%s_r%d.h5", b->dir, bench_path_names[p], rank);
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

static double timed_write(const bench *b, bench_path p, int *on_gpu)
{
  char path[1100];
  file_name(b, p, me, path, sizeof path);
  sync_all();
  double t0 = bench_now_s();
  hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), d;
  if (f < 0) die("H5Fcreate", path);
  if (h5fz_dataset_create(f, "x", H5T_NATIVE_FLOAT, 3, b->dims, b->chunk, b->spec, &d))
    die("create", h5fz_last_error());
  h5fz_dataset_report rep = {0};
  if (p == BENCH_FILTER) {
    if (H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, b->buf.host) < 0) die("H5Dwrite", path);
  } else if (h5fz_dataset_write(d, bench_source(&b->buf, p), bench_mem(p), &rep)) {
    die("h5fz_dataset_write", h5fz_last_error());
  }
  H5Dclose(d);
  H5Fclose(f);
  *on_gpu = rep.on_gpu;
  return aggregate(t0, bench_now_s());
}

static double timed_read(const bench *b, bench_path p)
{
  char path[1100];
  file_name(b, p, me, path, sizeof path);
  sync_all();
  double t0 = bench_now_s();
  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT), d = H5Dopen2(f, "x", H5P_DEFAULT);
  if (d < 0) die("H5Dopen", path);
  if (p == BENCH_FILTER) {
    if (H5Dread(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, b->buf.back) < 0) die("H5Dread", path);
  } else if (h5fz_dataset_read(d, bench_destination(&b->buf, p), bench_mem(p), NULL)) {
    die("h5fz_dataset_read", h5fz_last_error());
  }
  H5Dclose(d);
  H5Fclose(f);
  return aggregate(t0, bench_now_s());
}

/* This rank's checks into the shared slots: bound on every element, chunks equal to the filter's. */
static void check(const bench *b, bench_path p)
{
  double e = 0;
  long bad = 0;
  if (bench_check_back(cu, &b->buf, p, b->bound, &e, &bad)) die("cuMemcpyDtoH", "read-back");
  int same = 1;
  if (p != BENCH_FILTER) {
    char pa[1100], pb[1100];
    file_name(b, BENCH_FILTER, me, pa, sizeof pa);
    file_name(b, p, me, pb, sizeof pb);
    hid_t fa = H5Fopen(pa, H5F_ACC_RDONLY, H5P_DEFAULT), fb = H5Fopen(pb, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t da = H5Dopen2(fa, "x", H5P_DEFAULT), db = H5Dopen2(fb, "x", H5P_DEFAULT);
    same = bench_same_chunks(da, db, 0, b->dims[0], b->chunk[0]);
    H5Dclose(da);
    H5Dclose(db);
    H5Fclose(fa);
    H5Fclose(fb);
  }
  sh->err[me] = e;
  sh->bad[me] = bad != 0;
  sh->same[me] = same;
  sync_all();
}

int main(int argc, char **argv)
{
  const char *sync = NULL;
  bench_options o;
  bench_options_default(&o);
  nranks = 0;
  me = -1;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--rank") && i + 1 < argc)
      me = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--ranks") && i + 1 < argc)
      nranks = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--sync") && i + 1 < argc)
      sync = argv[++i];
    else if (!bench_option(&o, argc, argv, &i)) {
      fprintf(stderr, "usage: h5fz_bench_node --rank R --ranks N --sync FILE --data DIR [--gib-per-rank G] "
                      "[--chunk-planes P] [--dir D] [--reps R] [--paths LIST] [--label TEXT]\n");
      return 2;
    }
  }
  const char *data = o.data, *paths = o.paths, *label = o.label;
  int planes = o.planes, reps = o.reps;
  bench b = {.dir = o.dir};
  if (nranks < 1 || nranks > MAX_RANKS || me < 0 || me >= nranks || !sync || !bench_options_valid(&o))
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
    /* before this process's first h5fz call: the codec (here and in the
     * plugin HDF5 loads) reads H5FZ_GPU_ORDINAL once per process */
    setenv("H5FZ_GPU_ORDINAL", text, 1);
  }
  double range;
  float *field = bench_load_field(data, &range);
  if (!field) die("cannot read the um_sea_ice field from", data);
  b.bound = 1e-4 * range;
  snprintf(b.spec, sizeof b.spec, "abs=%.17g", b.bound);
  hsize_t plane = (hsize_t)NY * NX, nz = bench_planes_per_rank(&o);
  b.dims[0] = nz;
  b.dims[1] = NY;
  b.dims[2] = NX;
  b.chunk[0] = (hsize_t)planes;
  b.chunk[1] = NY;
  b.chunk[2] = NX;
  if (bench_host_buffers(&b.buf, (size_t)(nz * plane))) die("malloc", "the array");
  bench_tile_field(field, b.buf.host, nz * (hsize_t)me, nz);
  free(field);
  int gpu = bench_gpu_buffers(cu, ordinal, &b.buf);
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
           (unsigned long long)(b.buf.elems * 4), (unsigned long long)(b.buf.elems * 4 * (size_t)nranks), b.spec, b.dir,
           reps, all_gpu ? "true" : "false");
  int first = 1, all_ok = 1;
  for (int p = 0; p < BENCH_N_PATHS; p++) {
    if (!strstr(paths, bench_path_names[p]) || ((p == BENCH_PINNED || p == BENCH_DEVICE) && !all_gpu)) continue;
    double best_w = INFINITY, best_r = INFINITY;
    int on_gpu = 0;
    for (int rep = 0; rep <= reps; rep++) { /* rep 0: warm-up */
      double w = timed_write(&b, (bench_path)p, &on_gpu), r = timed_read(&b, (bench_path)p);
      if (rep && w < best_w) best_w = w;
      if (rep && r < best_r) best_r = r;
    }
    sh->on_gpu[me] = on_gpu;
    check(&b, (bench_path)p);
    int ok = 1, same = 1, gpu_ranks = 0;
    double err = 0;
    for (int r = 0; r < nranks; r++) {
      ok &= !sh->bad[r];
      same &= sh->same[r];
      gpu_ranks += sh->on_gpu[r];
      if (sh->err[r] > err) err = sh->err[r];
    }
    all_ok &= ok && same;
    double total = (double)(b.buf.elems * 4) * nranks;
    if (me == 0) {
      char f0[1100];
      file_name(&b, (bench_path)p, 0, f0, sizeof f0);
      bench_print_row(first, (bench_path)p, best_w, best_r, total, bench_stored_ratio(f0, H5P_DEFAULT, b.buf.elems * 4),
                      err, b.bound, ok, p == BENCH_FILTER ? 1 : same, gpu_ranks);
    }
    first = 0;
    sync_all();
  }
  sync_all();
  for (int p = 0; p < BENCH_N_PATHS; p++) {
    char f[1100];
    file_name(&b, (bench_path)p, me, f, sizeof f);
    unlink(f);
  }
  if (me == 0) {
    printf("\n  ],\n  \"all_checks_passed\": %s\n}\n", all_ok ? "true" : "false");
    unlink(sync);
  }
  return all_ok ? 0 : 1;
}
