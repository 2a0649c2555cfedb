/*
 * bench_first_chunk.c - the first chunk through the HDF5 filter in a fresh
 * process (JSON to stdout): for H5FZ_DEVICE=auto and H5FZ_DEVICE=gpu, a new
 * process with an empty JIT cache (H5FZ_CACHE_DIR a new empty folder)
 * creates a file and a dataset with the h5fz filter (H5Dcreate: set_local,
 * which starts the GPU warm-up under auto and makes the context at once
 * under gpu), writes one chunk with H5Dwrite and closes the dataset (the
 * chunk is encoded by then). Reported per mode: the seconds of H5Dcreate,
 * of H5Dwrite + H5Dclose, their sum (first_chunk_s: what the user waits
 * for the first chunk), and the process's whole life (process_s, with the
 * exit, which waits for a warm-up still running). Every value read back is
 * checked against the bound (not timed).
 *   h5fz_bench_first_chunk [--chunk-mib M] [--spec TEXT]
 * HDF5_PLUGIN_PATH must name the folder of the plugin (build/plugin).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <hdf5.h>

#include "h5fz.h"

static double now_s(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

/* The h5fz entry of the HDF5 error stack (the reason), for the JSON. */
static herr_t find_ours(unsigned n, const H5E_error2_t *e, void *out)
{
  (void)n;
  if (e->desc && strstr(e->desc, "h5fz")) snprintf(out, 400, "%s", e->desc);
  return 0;
}

/* The child: one chunk of chunk_n float32 values through the filter into
 * path; prints its JSON object. Returns the exit status. */
static int one_chunk(const char *path, size_t chunk_n, const char *text)
{
  h5fz_spec spec;
  unsigned cd[H5FZ_CD_MAX];
  size_t n_cd = 0;
  if (h5fz_spec_parse(text, &spec) || h5fz_spec_to_cd_values(&spec, 0, cd, H5FZ_CD_MAX, &n_cd)) {
    printf("{\"ok\": false, \"error\": \"spec: %s\"}", h5fz_last_error());
    return 1;
  }
  float *v = malloc(chunk_n * sizeof *v), *back = malloc(chunk_n * sizeof *back);
  if (!v || !back) return 1;
  for (size_t i = 0; i < chunk_n; i++) v[i] = (float)(sin(i * 1e-3) * 50.0 + cos(i * 0.37));
  hsize_t dims[1] = {chunk_n};
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  char why[400] = "";
  double t0 = now_s();
  hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  hid_t space = H5Screate_simple(1, dims, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(dcpl, 1, dims);
  H5Pset_filter(dcpl, H5FZ_FILTER_ID, H5Z_FLAG_MANDATORY, n_cd, cd);
  double t1 = now_s();
  hid_t d = H5Dcreate2(f, "first", H5T_NATIVE_FLOAT, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  double t2 = now_s();
  if (d < 0) H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, find_ours, why);
  int ok = d >= 0 && H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0;
  ok = H5Dclose(d) >= 0 && ok;
  double t3 = now_s();
  H5Sclose(space);
  H5Pclose(dcpl);
  H5Fclose(f);
  /* check every value (after the timing) */
  f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  d = f < 0 ? -1 : H5Dopen2(f, "first", H5P_DEFAULT);
  ok = ok && d >= 0 && H5Dread(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, back) >= 0;
  size_t bad = 0;
  for (size_t i = 0; ok && i < chunk_n; i++) bad += !(fabs((double)back[i] - (double)v[i]) <= spec.bound);
  if (d >= 0) H5Dclose(d);
  if (f >= 0) H5Fclose(f);
  printf("{\"ok\": %s, \"setup_s\": %.4f, \"create_s\": %.4f, \"write_close_s\": %.4f, \"first_chunk_s\": %.4f, "
         "\"values_off_bound\": %zu%s%s%s",
         ok && !bad ? "true" : "false", t1 - t0, t2 - t1, t3 - t2, t3 - t1, bad, why[0] ? ", \"error\": \"" : "", why,
         why[0] ? "\"" : "");
  free(v);
  free(back);
  return ok && !bad ? 0 : 1;
}

/* A fresh process runs one_chunk under device with an empty cache. */
static int run_mode(const char *self, const char *device, size_t chunk_n, const char *text, int last)
{
  char cache[] = "/tmp/h5fz-first-chunk-cache-XXXXXX", file[] = "/tmp/h5fz-first-chunk-XXXXXX";
  int fd = mkstemp(file);
  if (!mkdtemp(cache) || fd < 0) return 1;
  close(fd);
  printf("    \"%s\": ", device);
  fflush(stdout);
  double t0 = now_s();
  pid_t pid = fork();
  if (pid == 0) {
    char n[32];
    snprintf(n, sizeof n, "%zu", chunk_n);
    setenv("H5FZ_CACHE_DIR", cache, 1);
    setenv("H5FZ_DEVICE", device, 1);
    execl(self, self, "--one", file, n, text, (char *)NULL);
    _exit(127);
  }
  int st = 0;
  waitpid(pid, &st, 0);
  double t1 = now_s();
  int status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  if (status == 127) printf("{\"ok\": false, \"error\": \"exec failed\"");
  printf(", \"process_s\": %.4f, \"exit_status\": %d}%s\n", t1 - t0, status, last ? "" : ",");
  unlink(file);
  char rm[128];
  snprintf(rm, sizeof rm, "rm -rf '%s'", cache);
  if (system(rm)) { /* the cache folder stays; nothing else to do */
  }
  return status != 0;
}

int main(int argc, char **argv)
{
  if (argc == 5 && !strcmp(argv[1], "--one")) return one_chunk(argv[2], (size_t)strtoull(argv[3], NULL, 10), argv[4]);
  double mib = 4.0;
  const char *text = "abs=1e-3 dtype=f32";
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--chunk-mib") && i + 1 < argc)
      mib = atof(argv[++i]);
    else if (!strcmp(argv[i], "--spec") && i + 1 < argc)
      text = argv[++i];
    else {
      printf("usage: h5fz_bench_first_chunk [--chunk-mib M] [--spec TEXT]\n"
             "the first chunk through the h5fz filter in a fresh process with an empty JIT cache, under\n"
             "H5FZ_DEVICE=auto and =gpu (JSON on stdout; HDF5_PLUGIN_PATH names the plugin's folder)\n");
      return strcmp(argv[i], "--help") ? 2 : 0;
    }
  }
  size_t chunk_n = (size_t)(mib * 1048576.0 / 4.0);
  if (chunk_n < 1) chunk_n = 1;
  printf("{\n  \"benchmark\": \"h5fz first chunk through the filter, fresh process, empty JIT cache\",\n"
         "  \"chunk_bytes\": %zu,\n  \"spec\": \"%s\",\n  \"modes\": {\n",
         chunk_n * 4, text);
  int bad = run_mode(argv[0], "auto", chunk_n, text, 0);
  bad |= run_mode(argv[0], "gpu", chunk_n, text, 1);
  printf("  }\n}\n");
  return bad;
}
