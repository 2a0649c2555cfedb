/*
 * bench_filter_parts.c - where the time of one H5Dwrite chunk goes, measured
 * by parts outside HDF5 (the device has no perf, strace or nsys).
 *
 *   h5fz_bench_filter_parts --data DIR [--chunk-planes N] [--chunks C] [--reps R] [--chain WORDS]
 *
 * The sea-ice field (120 x 215 x 360 float32) tiled into C chunks of
 * N x 215 x 360 (default 48: 14.2 MiB, as h5fz_bench_dataset's second row),
 * ABS 1e-4 of its range, the default chain (--chain: another, e.g. "ratio"). Each part is timed per chunk
 * (median over the chunks of the best of R passes) on pageable memory, as
 * HDF5 hands it to the filter:
 *   codec_encode   h5fz_chunk_encode, what the filter calls (GPU route when
 *                  the planner takes it), output freed
 *   codec_decode   h5fz_chunk_decode of that chunk, output freed
 *   copy_1thread   memcpy of the chunk into page-locked memory, one thread
 *   copy_threads   the same cut in 1 MiB pieces over every core, the
 *                  threads created for the call (what staging does)
 *   threads_only   creating and joining those threads with no work
 *   copy_pool      the copy through h5fz_parallel_for (its worker pool)
 *   pool_only      h5fz_parallel_for with no work
 *   copy_pageable  memcpy pageable -> pageable (HDF5's own gather)
 *   crc32          zlib crc32 over the encoded chunk's bytes
 *   alloc_copy_out malloc of the chunk size, the encoded bytes copied in, free
 * JSON on stdout; ms per chunk and GB/s of the chunk's bytes.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "h5fz.h"
#include "h5fz_cuda.h"
#include "h5fz_parallel.h"

#define MAX_THREADS 64

static double now_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct {
  const unsigned char *src;
  unsigned char *dst;
  size_t lo, hi;
} copy_task;

static void *copy_range(void *arg)
{
  copy_task *t = arg;
  if (t->dst) memcpy(t->dst + t->lo, t->src + t->lo, t->hi - t->lo);
  return NULL;
}

/* Copy bytes on nt threads created for the call (dst NULL: no work). */
static void copy_on_threads(unsigned char *dst, const unsigned char *src, size_t bytes, unsigned nt)
{
  pthread_t th[MAX_THREADS];
  copy_task tk[MAX_THREADS];
  for (unsigned t = 0; t < nt; t++) {
    tk[t] = (copy_task){src, dst, bytes * t / nt, bytes * (t + 1) / nt};
    if (t && pthread_create(&th[t], NULL, copy_range, &tk[t])) {
      fprintf(stderr, "pthread_create failed\n");
      exit(1);
    }
  }
  copy_range(&tk[0]);
  for (unsigned t = 1; t < nt; t++) pthread_join(th[t], NULL);
}

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

enum { CODEC_ENC, CODEC_DEC, COPY_1, COPY_T, THREADS, COPY_POOL, POOL, COPY_PAGEABLE, CRC, ALLOC_OUT, N_PARTS };
static const char *const part_names[N_PARTS] = {"codec_encode", "codec_decode",  "copy_1thread", "copy_threads",
                                                "threads_only", "copy_pool",     "pool_only",    "copy_pageable",
                                                "crc32",        "alloc_copy_out"};

typedef struct {
  unsigned char *dst;
  const unsigned char *src;
  size_t bytes;
  unsigned pieces;
} pool_copy;

static int pool_copy_one(void *ctx, uint64_t i)
{
  pool_copy *c = ctx;
  if (c->dst) {
    size_t lo = c->bytes * i / c->pieces, hi = c->bytes * (i + 1) / c->pieces;
    memcpy(c->dst + lo, c->src + lo, hi - lo);
  }
  return 0;
}

int main(int argc, char **argv)
{
  const char *data_dir = NULL;
  int planes = 48, n_chunks = 24, reps = 3;
  const char *chain = "";
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--data") && i + 1 < argc)
      data_dir = argv[++i];
    else if (!strcmp(argv[i], "--chunk-planes") && i + 1 < argc)
      planes = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--chunks") && i + 1 < argc)
      n_chunks = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
      reps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--chain") && i + 1 < argc)
      chain = argv[++i];
    else {
      fprintf(stderr,
              "usage: h5fz_bench_filter_parts --data DIR [--chunk-planes N] [--chunks C] [--reps R] [--chain WORDS]\n");
      return 2;
    }
  }
  if (!data_dir || planes < 1 || planes > 120 || n_chunks < 1 || n_chunks > 1024 || reps < 1) {
    fprintf(stderr, "%s\n", !data_dir ? "--data DIR is required"
                             : planes < 1 || planes > 120 ? "--chunk-planes must be in 1..120"
                             : n_chunks < 1 || n_chunks > 1024 ? "--chunks must be in 1..1024"
                                                                : "--reps must be >= 1");
    return 2;
  }
  char path[1024];
  snprintf(path, sizeof path, "%s/um_sea_ice_northward_velocity_float32_120x215x360.f32", data_dir);
  size_t one_n = 120u * 215u * 360u, chunk_n = (size_t)planes * 215u * 360u, chunk_bytes = chunk_n * 4;
  float *one = malloc(one_n * 4);
  FILE *f = fopen(path, "rb");
  if (!one || !f || fread(one, 4, one_n, f) != one_n) {
    fprintf(stderr, "cannot read %s\n", path);
    return 1;
  }
  fclose(f);
  double lo = INFINITY, hi = -INFINITY;
  for (size_t i = 0; i < one_n; i++) {
    lo = one[i] < lo ? one[i] : lo;
    hi = one[i] > hi ? one[i] : hi;
  }
  size_t total = (size_t)n_chunks * chunk_n;
  float *data = malloc(total * 4), *scratch = malloc(chunk_bytes);
  if (!data || !scratch) return 1;
  for (size_t i = 0; i < total; i++) data[i] = one[i % one_n];
  free(one);
  h5fz_spec spec;
  char text[400];
  snprintf(text, sizeof text, "abs=%.9g%s%.300s", 1e-4 * (hi - lo), *chain ? " " : "", chain);
  if (h5fz_spec_parse(text, &spec)) {
    fprintf(stderr, "spec: %s\n", h5fz_last_error());
    return 1;
  }
  spec.dtype = H5FZ_DTYPE_F32;
  spec.rank = 3;
  spec.dims[0] = (uint32_t)planes;
  spec.dims[1] = 215;
  spec.dims[2] = 360;
  const char *why = NULL;
  const h5fz_cuda_api *cu = h5fz_cuda_get(&why);
  CUdevice dev;
  CUcontext ctx;
  unsigned char *pinned = NULL;
  int gpu = cu && !cu->cuInit(0) && !cu->cuDeviceGet(&dev, 0) && !cu->cuDevicePrimaryCtxRetain(&ctx, dev) &&
            !cu->cuCtxSetCurrent(ctx) && !cu->cuMemAllocHost((void **)&pinned, chunk_bytes);
  if (!gpu) pinned = malloc(chunk_bytes); /* no GPU: the copies still run, into pageable memory */
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  unsigned nt = (unsigned)(chunk_bytes >> 20);
  if (nt > (unsigned)cores) nt = (unsigned)cores;
  if (nt > MAX_THREADS) nt = MAX_THREADS;
  if (nt < 1) nt = 1;
  void **enc = calloc((size_t)n_chunks, sizeof *enc);
  size_t *enc_bytes = calloc((size_t)n_chunks, sizeof *enc_bytes);
  double *best = malloc(sizeof(double) * N_PARTS * (size_t)n_chunks);
  for (size_t i = 0; i < (size_t)N_PARTS * (size_t)n_chunks; i++) best[i] = INFINITY;
  volatile uLong crc_sink = 0;
  /* one warm-up encode (kernels, staging buffers) */
  void *warm = NULL;
  size_t warm_bytes = 0;
  if (h5fz_chunk_encode(&spec, data, chunk_bytes, &warm, &warm_bytes)) {
    fprintf(stderr, "encode: %s\n", h5fz_last_error());
    return 1;
  }
  free(warm);
  for (int r = 0; r < reps; r++) {
    for (int c = 0; c < n_chunks; c++) {
      const unsigned char *src = (const unsigned char *)(data + (size_t)c * chunk_n);
      double *b = best + (size_t)c * N_PARTS, t0 = now_s(), t;
      void *out = NULL, *back = NULL;
      size_t out_bytes = 0, back_bytes = 0;
      if (h5fz_chunk_encode(&spec, src, chunk_bytes, &out, &out_bytes)) {
        fprintf(stderr, "encode: %s\n", h5fz_last_error());
        return 1;
      }
      t = now_s() - t0;
      b[CODEC_ENC] = fmin(b[CODEC_ENC], t);
      t0 = now_s();
      if (h5fz_chunk_decode(out, out_bytes, &back, &back_bytes) || back_bytes != chunk_bytes) {
        fprintf(stderr, "decode: %s\n", h5fz_last_error());
        return 1;
      }
      b[CODEC_DEC] = fmin(b[CODEC_DEC], now_s() - t0);
      free(back);
      t0 = now_s();
      memcpy(pinned, src, chunk_bytes);
      b[COPY_1] = fmin(b[COPY_1], now_s() - t0);
      t0 = now_s();
      copy_on_threads(pinned, src, chunk_bytes, nt);
      b[COPY_T] = fmin(b[COPY_T], now_s() - t0);
      t0 = now_s();
      copy_on_threads(NULL, src, chunk_bytes, nt);
      b[THREADS] = fmin(b[THREADS], now_s() - t0);
      pool_copy pc = {pinned, src, chunk_bytes, nt};
      t0 = now_s();
      h5fz_parallel_for(nt, pool_copy_one, &pc);
      b[COPY_POOL] = fmin(b[COPY_POOL], now_s() - t0);
      pc.dst = NULL;
      t0 = now_s();
      h5fz_parallel_for(nt, pool_copy_one, &pc);
      b[POOL] = fmin(b[POOL], now_s() - t0);
      t0 = now_s();
      memcpy(scratch, src, chunk_bytes);
      b[COPY_PAGEABLE] = fmin(b[COPY_PAGEABLE], now_s() - t0);
      t0 = now_s();
      crc_sink += crc32(0L, out, (uInt)out_bytes);
      b[CRC] = fmin(b[CRC], now_s() - t0);
      t0 = now_s();
      void *o = malloc(chunk_bytes + 4096);
      memcpy(o, out, out_bytes);
      free(o);
      b[ALLOC_OUT] = fmin(b[ALLOC_OUT], now_s() - t0);
      if (r == 0) {
        enc[c] = out;
        enc_bytes[c] = out_bytes;
      } else {
        free(out);
      }
    }
  }
  size_t stored = 0;
  for (int c = 0; c < n_chunks; c++) stored += enc_bytes[c];
  printf("{\n  \"benchmark\": \"filter chunk by parts\",\n  \"field\": \"um_sea_ice\",\n  \"chunk_bytes\": %zu,\n"
         "  \"chunks\": %d,\n  \"reps\": %d,\n  \"gpu\": %s,\n  \"threads\": %u,\n  \"spec\": \"%s\",\n"
         "  \"ratio\": %.3f,\n  \"parts\": {",
         chunk_bytes, n_chunks, reps, gpu ? "true" : "false", nt, text, (double)total * 4 / (double)stored);
  double *col = malloc(sizeof(double) * (size_t)n_chunks);
  for (int p = 0; p < N_PARTS; p++) {
    for (int c = 0; c < n_chunks; c++) col[c] = best[(size_t)c * N_PARTS + (size_t)p];
    qsort(col, (size_t)n_chunks, sizeof *col, cmp_double);
    double med = col[n_chunks / 2];
    printf("%s\n    \"%s\": {\"ms\": %.4f, \"gb_s\": %.2f}", p ? "," : "", part_names[p], med * 1e3,
           (double)chunk_bytes / med / 1e9);
  }
  printf("\n  }\n}\n");
  for (int c = 0; c < n_chunks; c++) free(enc[c]);
  return crc_sink == 1 ? 3 : 0; /* uses the sink so the CRCs are computed */
}
