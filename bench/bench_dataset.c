/*
 * bench_dataset.c - the dataset API against the per-chunk filter path,
 * through HDF5 into a file, on a real float32 field tiled to >= 1 GiB.
 *
 *   h5fz_bench_dataset --data DIR [--gib G] [--chunk-planes N,...] [--dir D] [--reps R] [--chain WORDS]
 *
 * The field (um_sea_ice 120 x 215 x 360 float32) is repeated along time to
 * at least G GiB; chunks are N x 215 x 360 (N = 16: 4.7 MiB, 48: 14.2 MiB).
 * The bound is ABS 1e-4 x the value range, the default chain (--chain:
 * another, e.g. "lorenzo_nd zigzag bitshuffle rze"). For each
 * chunk shape, each path writes the whole array into a fresh file in D
 * (default /dev/shm, so the disk does not set the figure) and reads it
 * back; the best of R runs (after one warm-up that compiles or loads the
 * kernels and allocates the staging buffers) is reported:
 *   filter_write  H5Dwrite, the plugin compressing chunk by chunk
 *   api_host      h5fz_dataset_write from host memory (batched GPU)
 *   api_host_pinned  the same from page-locked host memory (cuMemAllocHost)
 *   api_device    h5fz_dataset_write from device memory (no host copy)
 *   filter_read   H5Dread through the plugin
 *   api_read_host h5fz_dataset_read into host memory
 *   api_read_host_pinned  into page-locked host memory
 *   api_read_device h5fz_dataset_read into device memory
 *   null_filter   H5Dwrite / H5Dread with a filter that does no work (its
 *                 encode keeps 8 bytes, its decode hands back an untouched
 *                 buffer of the chunk's size): what HDF5's chunk and filter
 *                 machinery costs by itself on this machine, the ceiling of
 *                 any filter on the plain H5Dwrite/H5Dread path
 * GB/s are of the array's bytes, wall clock of the call plus H5Fclose.
 * Each run checks the read-back against the bound (every element) and the
 * API's chunks against the filter's (byte-identical). JSON on stdout.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "h5fz_cuda.h"
#include "h5fz_dataset.h"

static double now_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static const h5fz_cuda_api *cu;
static CUdeviceptr dev_in, dev_out;

typedef enum { FILTER_WRITE, API_HOST, API_PINNED, API_DEVICE, NULL_WRITE, N_WRITES } write_path;
static const char *const write_names[] = {"filter_write", "api_host", "api_host_pinned", "api_device", "null_filter"};
typedef enum { FILTER_READ, API_READ_HOST, API_READ_PINNED, API_READ_DEVICE, NULL_READ, N_READS } read_path;
static const char *const read_names[] = {"filter_read", "api_read_host", "api_read_host_pinned", "api_read_device",
                                         "null_filter"};
static float *pinned_in, *pinned_out; /* page-locked copies (cuMemAllocHost) */

/* The files of the chunk shape being measured, removed on every exit. */
static char bench_files[N_WRITES][1100];

/* Stop after a failed call: the JSON printed so far is closed with the
 * reason (so it still parses), the files are removed, exit status 1. */
static void fail_exit(const char *what, const char *why)
{
  fprintf(stderr, "%s failed: %s\n", what, why);
  printf("\n  ],\n  \"all_checks_passed\": false,\n  \"error\": \"%s failed\"\n}\n", what);
  for (int p = 0; p < N_WRITES; p++)
    if (bench_files[p][0]) unlink(bench_files[p]);
  exit(1);
}

/* The do-nothing filter (an id in HDF5's range for testing, 256-511);
 * cd_values[0] = the chunk's bytes. */
#define NULL_FILTER_ID 311
static size_t null_filter(unsigned flags, size_t cd_nelmts, const unsigned cd_values[], size_t nbytes, size_t *buf_size,
                          void **buf)
{
  (void)cd_nelmts;
  if (!(flags & H5Z_FLAG_REVERSE)) return nbytes < 8 ? nbytes : 8;
  void *out = malloc(cd_values[0]); /* what any decoder allocates for its output */
  if (!out) return 0;
  free(*buf);
  *buf = out;
  *buf_size = cd_values[0];
  return cd_values[0];
}

static hid_t make_null_dataset(hid_t file, const hsize_t *dims, const hsize_t *chunk)
{
  static const H5Z_class2_t cls = {H5Z_CLASS_T_VERS, NULL_FILTER_ID, 1, 1, "null (benchmark)", NULL, NULL, null_filter};
  unsigned chunk_bytes = (unsigned)(chunk[0] * chunk[1] * chunk[2] * sizeof(float));
  hid_t space = H5Screate_simple(3, dims, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE);
  hid_t d = -1;
  if (H5Zregister(&cls) >= 0 && H5Pset_chunk(dcpl, 3, chunk) >= 0 &&
      H5Pset_filter(dcpl, NULL_FILTER_ID, H5Z_FLAG_MANDATORY, 1, &chunk_bytes) >= 0)
    d = H5Dcreate2(file, "field", H5T_NATIVE_FLOAT, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  H5Pclose(dcpl);
  H5Sclose(space);
  if (d < 0) fail_exit("create (null filter)", "H5Dcreate2");
  return d;
}

static hid_t make_dataset(hid_t file, const char *name, const hsize_t *dims, const hsize_t *chunk, const char *spec)
{
  hid_t d = -1;
  if (h5fz_dataset_create(file, name, H5T_NATIVE_FLOAT, 3, dims, chunk, spec, &d))
    fail_exit("create", h5fz_last_error());
  return d;
}

/* One write of the array by path p into file path; seconds. */
static double time_write(write_path p, const char *path, const float *data, const hsize_t *dims, const hsize_t *chunk,
                         const char *spec, h5fz_dataset_report *rep)
{
  hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (file < 0) fail_exit("H5Fcreate", path);
  hid_t d = p == NULL_WRITE ? make_null_dataset(file, dims, chunk) : make_dataset(file, "field", dims, chunk, spec);
  double t0 = now_s();
  int rc = 0;
  if (p == FILTER_WRITE || p == NULL_WRITE)
    rc = H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0;
  else if (p == API_HOST)
    rc = h5fz_dataset_write(d, data, H5FZ_MEM_HOST, rep);
  else if (p == API_PINNED)
    rc = h5fz_dataset_write(d, pinned_in, H5FZ_MEM_HOST, rep);
  else
    rc = h5fz_dataset_write(d, (const void *)(uintptr_t)dev_in, H5FZ_MEM_DEVICE, rep);
  H5Dclose(d);
  H5Fclose(file);
  double t = now_s() - t0;
  if (rc) fail_exit(write_names[p], h5fz_last_error());
  return t;
}

static double time_read(read_path p, const char *path, float *out, h5fz_dataset_report *rep)
{
  hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT), d = H5Dopen2(file, "field", H5P_DEFAULT);
  double t0 = now_s();
  int rc = 0;
  if (p == FILTER_READ || p == NULL_READ)
    rc = H5Dread(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, out) < 0;
  else if (p == API_READ_HOST)
    rc = h5fz_dataset_read(d, out, H5FZ_MEM_HOST, rep);
  else if (p == API_READ_PINNED)
    rc = h5fz_dataset_read(d, pinned_out, H5FZ_MEM_HOST, rep);
  else
    rc = h5fz_dataset_read(d, (void *)(uintptr_t)dev_out, H5FZ_MEM_DEVICE, rep);
  H5Dclose(d);
  H5Fclose(file);
  double t = now_s() - t0;
  if (rc) fail_exit(read_names[p], h5fz_last_error());
  return t;
}

static double max_error(const float *a, const float *b, size_t n)
{
  double m = 0;
  for (size_t i = 0; i < n; i++) {
    double e = fabs((double)a[i] - (double)b[i]);
    if (e > m || isnan(e)) m = isnan(e) ? INFINITY : e;
  }
  return m;
}

/* Chunks of two files' "field" datasets: all byte-identical? */
static int same_chunks(const char *pa, const char *pb)
{
  hid_t fa = H5Fopen(pa, H5F_ACC_RDONLY, H5P_DEFAULT), fb = H5Fopen(pb, H5F_ACC_RDONLY, H5P_DEFAULT);
  hid_t a = H5Dopen2(fa, "field", H5P_DEFAULT), b = H5Dopen2(fb, "field", H5P_DEFAULT);
  hsize_t n = 0;
  H5Dget_num_chunks(a, H5S_ALL, &n);
  int same = 1;
  for (hsize_t k = 0; k < n && same; k++) {
    hsize_t off[3], sa = 0, sb = 0;
    haddr_t addr;
    unsigned mask;
    H5Dget_chunk_info(a, H5S_ALL, k, off, &mask, &addr, &sa);
    if (H5Dget_chunk_storage_size(b, off, &sb) < 0 || sa != sb) {
      same = 0;
      break;
    }
    uint8_t *ba = malloc(sa), *bb = malloc(sb);
    uint32_t m = 0;
    H5Dread_chunk(a, H5P_DEFAULT, off, &m, ba);
    H5Dread_chunk(b, H5P_DEFAULT, off, &m, bb);
    same = !memcmp(ba, bb, sa);
    free(ba);
    free(bb);
  }
  H5Dclose(a);
  H5Dclose(b);
  H5Fclose(fa);
  H5Fclose(fb);
  return same;
}

int main(int argc, char **argv)
{
  const char *data_dir = NULL, *dir = "/dev/shm", *planes_text = "16,48", *chain = "";
  double gib = 1.0;
  int reps = 3;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--data") && i + 1 < argc)
      data_dir = argv[++i];
    else if (!strcmp(argv[i], "--gib") && i + 1 < argc)
      gib = strtod(argv[++i], NULL);
    else if (!strcmp(argv[i], "--chunk-planes") && i + 1 < argc)
      planes_text = argv[++i];
    else if (!strcmp(argv[i], "--dir") && i + 1 < argc)
      dir = argv[++i];
    else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
      reps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--chain") && i + 1 < argc)
      chain = argv[++i];
    else {
      fprintf(stderr, "usage: h5fz_bench_dataset --data DIR [--gib G] [--chunk-planes N,...] [--dir D] [--reps R] "
                      "[--chain WORDS]\n");
      return 2;
    }
  }
  if (!data_dir) {
    fprintf(stderr, "--data DIR is required\n");
    return 2;
  }
  if (reps < 1 || !(gib > 0 && gib <= 64)) {
    fprintf(stderr, "--reps must be >= 1 and --gib in (0, 64]\n");
    return 2;
  }
  size_t n_planes = 120u * (size_t)ceil(gib * 1073741824.0 / (120.0 * 215 * 360 * 4));
  char check_buf[128], *check_save = NULL;
  snprintf(check_buf, sizeof check_buf, "%s", planes_text);
  for (char *tok = strtok_r(check_buf, ",", &check_save); tok; tok = strtok_r(NULL, ",", &check_save)) {
    char *end = NULL;
    long v = strtol(tok, &end, 10);
    if (end == tok || *end || v < 1 || (size_t)v > n_planes) {
      fprintf(stderr, "--chunk-planes: '%s' is not a plane count in 1..%zu\n", tok, n_planes);
      return 2;
    }
  }
  if (access(dir, W_OK)) {
    fprintf(stderr, "%s is not writable: the files go to /tmp\n", dir);
    dir = "/tmp";
  }
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  char path[1024];
  snprintf(path, sizeof path, "%s/um_sea_ice_northward_velocity_float32_120x215x360.f32", data_dir);
  FILE *f = fopen(path, "rb");
  size_t one_n = 120u * 215u * 360u;
  float *one = malloc(one_n * 4);
  if (!f || fread(one, 4, one_n, f) != one_n) {
    fprintf(stderr, "cannot read %s\n", path);
    return 1;
  }
  fclose(f);
  size_t copies = (size_t)ceil(gib * 1073741824.0 / (double)(one_n * 4));
  size_t n = copies * one_n, bytes = n * 4;
  float *data = malloc(bytes), *back = malloc(bytes);
  if (!data || !back) {
    fprintf(stderr, "cannot allocate 2 x %zu bytes\n", bytes);
    return 1;
  }
  for (size_t c = 0; c < copies; c++) memcpy(data + c * one_n, one, one_n * 4);
  double lo = INFINITY, hi = -INFINITY;
  for (size_t i = 0; i < one_n; i++) {
    lo = one[i] < lo ? one[i] : lo;
    hi = one[i] > hi ? one[i] : hi;
  }
  free(one);
  double bound = 1e-4 * (hi - lo);
  char spec[300];
  snprintf(spec, sizeof spec, "abs=%.9g%s%s", bound, *chain ? " " : "", chain);
  hsize_t dims[3] = {120 * copies, 215, 360};
  const char *why = NULL;
  cu = h5fz_cuda_get(&why);
  CUdevice dev;
  CUcontext ctx;
  int gpu = cu && !cu->cuInit(0) && !cu->cuDeviceGet(&dev, 0) && !cu->cuDevicePrimaryCtxRetain(&ctx, dev) &&
            !cu->cuCtxSetCurrent(ctx) && !cu->cuMemAlloc(&dev_in, bytes) && !cu->cuMemAlloc(&dev_out, bytes) &&
            !cu->cuMemcpyHtoDAsync(dev_in, data, bytes, NULL) && !cu->cuStreamSynchronize(NULL) &&
            !cu->cuMemAllocHost((void **)&pinned_in, bytes) && !cu->cuMemAllocHost((void **)&pinned_out, bytes);
  if (gpu) memcpy(pinned_in, data, bytes);
  printf("{\n  \"benchmark\": \"dataset API vs filter path\",\n  \"field\": \"um_sea_ice x %zu\",\n"
         "  \"array_bytes\": %zu,\n  \"dims\": [%llu, 215, 360],\n  \"spec\": \"%s\",\n  \"gpu\": %s,\n"
         "  \"file_dir\": \"%s\",\n  \"reps\": %d,\n  \"runs\": [",
         copies, bytes, (unsigned long long)dims[0], spec, gpu ? "true" : "false", dir, reps);
  int first_row = 1, ok = 1;
  char *save = NULL, planes_buf[128];
  snprintf(planes_buf, sizeof planes_buf, "%s", planes_text);
  for (char *tok = strtok_r(planes_buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    hsize_t chunk[3] = {(hsize_t)atoi(tok), 215, 360};
    double chunk_mib = (double)(chunk[0] * 215 * 360 * 4) / 1048576.0;
    char(*files)[1100] = bench_files;
    double best_w[N_WRITES] = {0}, best_r[N_READS] = {0};
    double hdf5_w[N_WRITES] = {0}, hdf5_r[N_READS] = {0}; /* the API's hdf5_seconds in the best run */
    h5fz_dataset_report rep = {0};
    for (int p = 0; p < N_WRITES; p++) {
      snprintf(files[p], sizeof files[p], "%s/h5fz_bench_%s.h5", dir, write_names[p]);
      if ((p == API_DEVICE || p == API_PINNED) && !gpu) continue;
      for (int r = -1; r < reps; r++) {
        rep.hdf5_seconds = 0;
        double t = time_write((write_path)p, files[p], data, dims, chunk, spec, &rep);
        if (r >= 0 && (best_w[p] == 0 || t < best_w[p])) {
          best_w[p] = t;
          hdf5_w[p] = rep.hdf5_seconds;
        }
        fprintf(stderr, "chunk %.1f MiB %s run %d: %.3f s (%.2f GB/s)\n", chunk_mib, write_names[p], r, t,
                (double)bytes / t / 1e9);
      }
    }
    int identical = same_chunks(files[FILTER_WRITE], files[API_HOST]) &&
                    (!gpu || (same_chunks(files[FILTER_WRITE], files[API_DEVICE]) &&
                              same_chunks(files[FILTER_WRITE], files[API_PINNED])));
    double err = 0;
    for (int p = 0; p < N_READS; p++) {
      if ((p == API_READ_DEVICE || p == API_READ_PINNED) && !gpu) continue;
      for (int r = -1; r < reps; r++) {
        memset(back, 0, bytes);
        rep.hdf5_seconds = 0;
        double t = time_read((read_path)p, files[p == NULL_READ ? NULL_WRITE : API_HOST], back, &rep);
        if (p == API_READ_DEVICE) {
          cu->cuMemcpyDtoHAsync(back, dev_out, bytes, NULL);
          cu->cuStreamSynchronize(NULL);
        }
        if (p == API_READ_PINNED) memcpy(back, pinned_out, bytes);
        double e = p == NULL_READ ? 0 : max_error(data, back, n); /* the null filter returns no values */
        err = e > err ? e : err;
        if (r >= 0 && (best_r[p] == 0 || t < best_r[p])) {
          best_r[p] = t;
          hdf5_r[p] = rep.hdf5_seconds;
        }
        fprintf(stderr, "chunk %.1f MiB %s run %d: %.3f s (%.2f GB/s), max error %.3g\n", chunk_mib, read_names[p], r,
                t, (double)bytes / t / 1e9, e);
      }
    }
    ok &= identical && err <= bound;
    printf("%s\n    {\"chunk\": [%llu, 215, 360], \"chunk_mib\": %.2f, \"ratio\": %.3f, \"executor\": \"%s\", "
           "\"kernel_class\": \"%s\", \"chunks_identical\": %s, \"max_error\": %.6g, \"bound\": %.6g,\n",
           first_row ? "" : ",", (unsigned long long)chunk[0], chunk_mib,
           rep.stored_bytes ? (double)rep.input_bytes / (double)rep.stored_bytes : 0.0, rep.on_gpu ? "gpu" : "cpu",
           rep.kernel_class, identical ? "true" : "false", err, bound);
    first_row = 0;
    printf("     \"write_GBps\": {");
    for (int p = 0; p < N_WRITES; p++) /* null: not measured (GPU-only path without a GPU) */
      best_w[p] ? printf("%s\"%s\": %.3f", p ? ", " : "", write_names[p], (double)bytes / best_w[p] / 1e9)
                : printf("%s\"%s\": null", p ? ", " : "", write_names[p]);
    printf("},\n     \"read_GBps\": {");
    for (int p = 0; p < N_READS; p++)
      best_r[p] ? printf("%s\"%s\": %.3f", p ? ", " : "", read_names[p], (double)bytes / best_r[p] / 1e9)
                : printf("%s\"%s\": null", p ? ", " : "", read_names[p]);
    printf("},\n     \"api_host_vs_filter_write\": %.2f, ", best_w[FILTER_WRITE] / best_w[API_HOST]);
    if (best_w[API_PINNED] && best_w[API_DEVICE])
      printf("\"api_host_pinned_vs_filter_write\": %.2f, \"api_device_vs_filter_write\": %.2f, ",
             best_w[FILTER_WRITE] / best_w[API_PINNED], best_w[FILTER_WRITE] / best_w[API_DEVICE]);
    else
      printf("\"api_host_pinned_vs_filter_write\": null, \"api_device_vs_filter_write\": null, ");
    printf("\"api_read_host_vs_filter_read\": %.2f,\n     \"api_ms_total_and_in_hdf5\": {",
           best_r[FILTER_READ] / best_r[API_READ_HOST]);
    /* the API rows' best runs: the whole timed call (with H5Dclose/H5Fclose) and, of it,
     * HDF5's chunk writes/reads and attribute tables (h5fz_dataset_report.hdf5_seconds) */
    int first_api = 1;
    for (int p = API_HOST; p <= API_DEVICE; p++)
      if (best_w[p]) {
        printf("%s\"%s\": [%.2f, %.2f]", first_api ? "" : ", ", write_names[p], 1e3 * best_w[p], 1e3 * hdf5_w[p]);
        first_api = 0;
      }
    for (int p = API_READ_HOST; p <= API_READ_DEVICE; p++)
      if (best_r[p]) printf(", \"%s\": [%.2f, %.2f]", read_names[p], 1e3 * best_r[p], 1e3 * hdf5_r[p]);
    printf("}}");
    for (int p = 0; p < N_WRITES; p++) unlink(files[p]);
  }
  printf("\n  ],\n  \"all_checks_passed\": %s\n}\n", ok ? "true" : "false");
  return ok ? 0 : 1;
}
