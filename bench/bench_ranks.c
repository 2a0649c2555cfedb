/* bench_ranks.c - the field, buffers, checks and JSON rows of the
 * many-process benchmarks (bench_ranks.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_ranks.h"

const char *const bench_path_names[BENCH_N_PATHS] = {"filter", "api_host", "api_pinned", "api_device"};

void bench_options_default(bench_options *o)
{
  o->data = getenv("H5FZ_DATA_DIR");
  o->paths = "filter,api_host,api_pinned,api_device";
  o->label = "";
  o->dir = "/dev/shm";
  o->gib = 1.0;
  o->planes = 16;
  o->reps = 2;
}

int bench_option(bench_options *o, int argc, char **argv, int *i)
{
  const char *a = argv[*i];
  if (*i + 1 >= argc) return 0;
  if (!strcmp(a, "--data"))
    o->data = argv[++*i];
  else if (!strcmp(a, "--gib-per-rank"))
    o->gib = atof(argv[++*i]);
  else if (!strcmp(a, "--chunk-planes"))
    o->planes = atoi(argv[++*i]);
  else if (!strcmp(a, "--dir"))
    o->dir = argv[++*i];
  else if (!strcmp(a, "--reps"))
    o->reps = atoi(argv[++*i]);
  else if (!strcmp(a, "--paths"))
    o->paths = argv[++*i];
  else if (!strcmp(a, "--label"))
    o->label = argv[++*i];
  else
    return 0;
  return 1;
}

int bench_options_valid(const bench_options *o) { return o->data && o->gib > 0 && o->planes >= 1 && o->reps >= 1; }

uint64_t bench_planes_per_rank(const bench_options *o)
{
  uint64_t plane_bytes = (uint64_t)BENCH_NY * BENCH_NX * 4, planes = (uint64_t)o->planes;
  uint64_t n = (uint64_t)ceil(o->gib * 1073741824.0 / (double)plane_bytes);
  return (n + planes - 1) / planes * planes;
}

double bench_now_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

float *bench_load_field(const char *dir, double *range)
{
  char path[1024];
  snprintf(path, sizeof path, "%s/um_sea_ice_northward_velocity_float32_120x215x360.f32", dir);
  size_t n = (size_t)BENCH_FIELD_T * BENCH_NY * BENCH_NX;
  float *f = malloc(n * sizeof *f);
  FILE *fp = fopen(path, "rb");
  int ok = f && fp && fread(f, sizeof *f, n, fp) == n;
  if (fp) fclose(fp);
  if (!ok) {
    free(f);
    return NULL;
  }
  float lo = f[0], hi = f[0];
  for (size_t i = 1; i < n; i++) {
    if (f[i] < lo) lo = f[i];
    if (f[i] > hi) hi = f[i];
  }
  *range = (double)hi - (double)lo;
  return f;
}

void bench_tile_field(const float *field, float *host, uint64_t z0, uint64_t nz)
{
  size_t plane = (size_t)BENCH_NY * BENCH_NX;
  for (uint64_t z = 0; z < nz; z++) memcpy(host + z * plane, field + ((z0 + z) % BENCH_FIELD_T) * plane, plane * 4);
}

int bench_host_buffers(bench_buffers *b, size_t elems)
{
  b->elems = elems;
  b->host = malloc(elems * sizeof *b->host);
  b->back = malloc(elems * sizeof *b->back);
  return b->host && b->back ? 0 : -1;
}

int bench_gpu_buffers(const h5fz_cuda_api *cu, int ordinal, bench_buffers *b)
{
  CUdevice dev;
  CUcontext ctx;
  size_t bytes = b->elems * sizeof *b->host;
  int gpu = ordinal >= 0 && cu && !cu->cuInit(0) && !cu->cuDeviceGet(&dev, ordinal) &&
            !cu->cuDevicePrimaryCtxRetain(&ctx, dev) && !cu->cuCtxSetCurrent(ctx) && !cu->cuMemAlloc(&b->dev, bytes) &&
            !cu->cuMemAlloc(&b->dev_back, bytes) && !cu->cuMemcpyHtoDAsync(b->dev, b->host, bytes, NULL) &&
            !cu->cuStreamSynchronize(NULL) && !cu->cuMemAllocHost((void **)&b->pinned, bytes) &&
            !cu->cuMemAllocHost((void **)&b->pinned_back, bytes);
  if (gpu) memcpy(b->pinned, b->host, bytes);
  return gpu;
}

const void *bench_source(const bench_buffers *b, bench_path p)
{
  return p == BENCH_PINNED   ? (const void *)b->pinned
         : p == BENCH_DEVICE ? (const void *)(uintptr_t)b->dev
                             : (const void *)b->host;
}

void *bench_destination(const bench_buffers *b, bench_path p)
{
  return p == BENCH_PINNED ? (void *)b->pinned_back : p == BENCH_DEVICE ? (void *)(uintptr_t)b->dev_back : b->back;
}

h5fz_mem bench_mem(bench_path p) { return p == BENCH_DEVICE ? H5FZ_MEM_DEVICE : H5FZ_MEM_HOST; }

int bench_check_back(const h5fz_cuda_api *cu, const bench_buffers *b, bench_path p, double bound, double *max_err,
                     long *bad)
{
  const float *back = p == BENCH_PINNED ? b->pinned_back : b->back;
  if (p == BENCH_DEVICE &&
      (cu->cuMemcpyDtoHAsync(b->back, b->dev_back, b->elems * 4, NULL) || cu->cuStreamSynchronize(NULL)))
    return -1;
  double e = 0;
  long n_bad = 0;
  for (size_t i = 0; i < b->elems; i++) {
    double d = fabs((double)back[i] - (double)b->host[i]);
    if (d > e) e = d;
    if (!(d <= bound)) n_bad++;
  }
  *max_err = e;
  *bad = n_bad;
  return 0;
}

int bench_same_chunks(hid_t a, hid_t b, uint64_t z_lo, uint64_t z_hi, uint64_t chunk0)
{
  int same = a >= 0 && b >= 0;
  for (uint64_t z = z_lo; z < z_hi && same; z += chunk0) {
    hsize_t off[3] = {z, 0, 0}, sa = 0, sb = 0;
    uint32_t ma = 1, mb = 1;
    H5Dget_chunk_storage_size(a, off, &sa);
    H5Dget_chunk_storage_size(b, off, &sb);
    char *ba = malloc(sa + 1), *bb = malloc(sb + 1);
    same = ba && bb && sa && sa == sb && H5Dread_chunk(a, H5P_DEFAULT, off, &ma, ba) >= 0 &&
           H5Dread_chunk(b, H5P_DEFAULT, off, &mb, bb) >= 0 && !ma && !mb && !memcmp(ba, bb, sa);
    free(ba);
    free(bb);
  }
  return same;
}

double bench_stored_ratio(const char *path, hid_t fapl, uint64_t raw_bytes)
{
  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, fapl), d = H5Dopen2(f, "x", H5P_DEFAULT);
  hsize_t stored = d < 0 ? 0 : H5Dget_storage_size(d);
  double r = stored ? (double)raw_bytes / (double)stored : 0.0;
  if (d >= 0) H5Dclose(d);
  if (f >= 0) H5Fclose(f);
  return r;
}

void bench_print_row(int first, bench_path p, double write_s, double read_s, double total_bytes, double ratio,
                     double max_err, double bound, int ok, int identical, int gpu_ranks)
{
  printf("%s\n    {\"path\": \"%s\", \"write_s\": %.4f, \"read_s\": %.4f, \"write_GBps\": %.3f, \"read_GBps\": %.3f, "
         "\"ratio\": %.3f, \"max_abs_error\": %.6g, \"bound\": %.6g, \"bound_ok\": %s, "
         "\"chunks_identical_to_filter\": %s, \"api_ranks_on_gpu\": %d}",
         first ? "" : ",", bench_path_names[p], write_s, read_s, total_bytes / write_s / 1e9,
         total_bytes / read_s / 1e9, ratio, max_err, bound, ok ? "true" : "false",
         identical < 0 ? "null"
         : identical   ? "true"
                       : "false",
         p == BENCH_FILTER ? -1 : gpu_ranks);
}
