/*
 * bench_cpu.c - CPU throughput and ratio of the chunk codec on real fields.
 *
 * For each raw field (<what>_<float32|float64>_<shape>.<f32|f64>) of a
 * folder, for each bound (REL x the field's finite value range, given to
 * the codec as ABS), encode the field chunk by chunk, decode it, check the
 * bound, and print one JSON object per line. Times are wall clock
 * (CLOCK_MONOTONIC), the median of --runs runs, in GB/s of input (1e9
 * bytes of uncompressed data per second).
 */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "h5fz.h"
#include "realistic_array.h"

#ifndef H5FZ_SOURCE_DIR
#define H5FZ_SOURCE_DIR "."
#endif

#define MAX_FIELDS 64
#define MAX_BOUNDS 8

typedef struct {
  const char *data_dir;
  const char *spec_tail; /* chain words after the bound, may be "" */
  double rel[MAX_BOUNDS];
  int n_rel;
  size_t chunk_bytes;
  int runs;
  double realistic_gib; /* the realistic array's size; 0 = no realistic rows */
  double realistic_rel[MAX_BOUNDS];
  int n_realistic_rel;
  int realistic_only;          /* skip the per-field rows */
  const char *write_realistic; /* write the array as raw float32 here and stop */
} bench_options;

static void help(FILE *out)
{
  fprintf(out,
          "usage: h5fz_bench_cpu [options]\n"
          "\n"
          "Encode and decode every raw field of a folder with the CPU executor, chunk\n"
          "by chunk, at ABS bounds of REL x the field's finite value range; print one\n"
          "JSON object per (field, bound) and one with the machine.\n"
          "\n"
          "options:\n"
          "  --data DIR        folder of <what>_<dtype>_<shape>.f32/.f64 fields\n"
          "                    (default: %s/../shared/data, else tests/data)\n"
          "  --rel R[,R...]    bounds relative to the range (default 1e-2,1e-4,1e-6)\n"
          "  --chain WORDS     chain after the bound, e.g. \"delta zigzag bitshuffle rze\"\n"
          "                    (default: the default chain)\n"
          "  --chunk-bytes N   bytes per chunk (default 4194304)\n"
          "  --runs N          timed runs per case, the median is reported (default 5)\n"
          "  --realistic-gib G the realistic array first (every float32 field scaled to its\n"
          "                    own finite range [0, 1], NaN and fill kept, tiled whole to >= G\n"
          "                    GiB; bench/realistic_array.h), 0 = leave it out (default 1)\n"
          "  --realistic-rel R[,R...]  its ABS bounds (default 1e-2,1e-3,1e-4)\n"
          "  --realistic-only  only the realistic array's rows\n"
          "  --write-realistic FILE  write the realistic array as raw little-endian float32\n"
          "                    to FILE (for the peers' benchmarks, bench/suite/peers.py) and stop\n",
          H5FZ_SOURCE_DIR);
}

static double now_s(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* CPU seconds of all the process's threads: throughput per CPU second is
 * the per-core figure, and does not depend on how busy the machine is. */
static double cpu_s(void)
{
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n)
{
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static int is_field_name(const char *name, h5fz_dtype *dtype)
{
  size_t n = strlen(name);
  if (n > 4 && !strcmp(name + n - 4, ".f32") && strstr(name, "_float32_")) {
    *dtype = H5FZ_DTYPE_F32;
    return 1;
  }
  if (n > 4 && !strcmp(name + n - 4, ".f64") && strstr(name, "_float64_")) {
    *dtype = H5FZ_DTYPE_F64;
    return 1;
  }
  return 0;
}

static void *read_file(const char *path, size_t *bytes)
{
  FILE *f = fopen(path, "rb");
  void *buf = NULL;
  long size;
  if (!f) return NULL;
  if (fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0 &&
      (buf = malloc((size_t)size)) != NULL && fread(buf, 1, (size_t)size, f) != (size_t)size) {
    free(buf);
    buf = NULL;
  }
  if (buf) *bytes = (size_t)size;
  fclose(f);
  return buf;
}

static double value_at(const void *data, h5fz_dtype dtype, size_t i)
{
  return dtype == H5FZ_DTYPE_F32 ? ((const float *)data)[i] : ((const double *)data)[i];
}

/* max - min of the finite values, skipping the -1073741824 fill value of
 * the satellite field (it would make every bound meaningless). */
static double value_range(const void *data, h5fz_dtype dtype, size_t n)
{
  double lo = INFINITY, hi = -INFINITY;
  for (size_t i = 0; i < n; i++) {
    double v = value_at(data, dtype, i);
    if (!isfinite(v) || v == -1073741824.0) continue;
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  return hi >= lo ? hi - lo : 0.0;
}

typedef struct {
  void **enc;
  size_t *enc_bytes;
  size_t n_chunks;
} encoded_field;

static void free_encoded(encoded_field *e)
{
  for (size_t i = 0; e->enc && i < e->n_chunks; i++) free(e->enc[i]);
  free(e->enc);
  free(e->enc_bytes);
  e->enc = NULL;
  e->enc_bytes = NULL;
}

static int encode_all(const h5fz_spec *spec, const unsigned char *data, size_t bytes, size_t chunk_bytes,
                      encoded_field *e)
{
  e->n_chunks = (bytes + chunk_bytes - 1) / chunk_bytes;
  e->enc = calloc(e->n_chunks, sizeof *e->enc);
  e->enc_bytes = calloc(e->n_chunks, sizeof *e->enc_bytes);
  if (!e->enc || !e->enc_bytes) return H5FZ_ERR_NOMEM;
  for (size_t c = 0; c < e->n_chunks; c++) {
    size_t off = c * chunk_bytes, len = bytes - off < chunk_bytes ? bytes - off : chunk_bytes;
    int st = h5fz_chunk_encode(spec, data + off, len, &e->enc[c], &e->enc_bytes[c]);
    if (st != H5FZ_OK) return st;
  }
  return H5FZ_OK;
}

/* Decodes every chunk into out (bytes long); returns a status. */
static int decode_all(const encoded_field *e, unsigned char *out, size_t bytes, size_t chunk_bytes)
{
  for (size_t c = 0; c < e->n_chunks; c++) {
    void *dec = NULL;
    size_t dec_bytes = 0, off = c * chunk_bytes;
    int st = h5fz_chunk_decode(e->enc[c], e->enc_bytes[c], &dec, &dec_bytes);
    if (st != H5FZ_OK) return st;
    if (off + dec_bytes > bytes) {
      free(dec);
      return H5FZ_ERR_CORRUPT;
    }
    memcpy(out + off, dec, dec_bytes);
    free(dec);
  }
  return H5FZ_OK;
}

static double max_error(const void *a, const void *b, h5fz_dtype dtype, size_t n, int *specials_ok)
{
  double m = 0.0;
  *specials_ok = 1;
  for (size_t i = 0; i < n; i++) {
    double x = value_at(a, dtype, i), y = value_at(b, dtype, i);
    if (isfinite(x)) {
      double e = fabs(x - y);
      if (!(e <= m)) m = isnan(e) ? INFINITY : e;
    } else if (isnan(x) != isnan(y) || (!isnan(x) && x != y)) {
      *specials_ok = 0;
    }
  }
  return m;
}

static void bench_case(const bench_options *o, const char *name, h5fz_dtype dtype, const unsigned char *data,
                       size_t bytes, double range, double rel)
{
  char text[512];
  h5fz_spec spec;
  size_t elem = h5fz_dtype_size(dtype), n = bytes / elem, stored = 0;
  double bound = rel * range, *t_enc, *t_dec, *c_enc, *c_dec, err = NAN;
  int st, specials_ok = 0;
  unsigned char *out = malloc(bytes);
  encoded_field e = {NULL, NULL, 0};

  t_enc = calloc((size_t)o->runs, sizeof *t_enc);
  t_dec = calloc((size_t)o->runs, sizeof *t_dec);
  c_enc = calloc((size_t)o->runs, sizeof *c_enc);
  c_dec = calloc((size_t)o->runs, sizeof *c_dec);
  snprintf(text, sizeof text, "abs=%.17g%s%s", bound, o->spec_tail[0] ? " " : "", o->spec_tail);
  st = h5fz_spec_parse(text, &spec);
  spec.dtype = dtype;
  for (int r = 0; st == H5FZ_OK && r < o->runs; r++) {
    double t0, c0;
    free_encoded(&e);
    t0 = now_s();
    c0 = cpu_s();
    st = encode_all(&spec, data, bytes, o->chunk_bytes, &e);
    c_enc[r] = cpu_s() - c0;
    t_enc[r] = now_s() - t0;
    if (st != H5FZ_OK) break;
    t0 = now_s();
    c0 = cpu_s();
    st = decode_all(&e, out, bytes, o->chunk_bytes);
    c_dec[r] = cpu_s() - c0;
    t_dec[r] = now_s() - t0;
  }
  if (st == H5FZ_OK) {
    for (size_t c = 0; c < e.n_chunks; c++) stored += e.enc_bytes[c];
    err = max_error(data, out, dtype, n, &specials_ok);
  }
  printf("{\"field\": \"%s\", \"dtype\": \"%s\", \"bytes\": %zu, \"rel_bound\": %g, "
         "\"bound\": %.17g, \"spec\": \"%s\", \"chunk_bytes\": %zu, \"runs\": %d",
         name, dtype == H5FZ_DTYPE_F32 ? "float32" : "float64", bytes, rel, bound, text, o->chunk_bytes, o->runs);
  if (st != H5FZ_OK) {
    printf(", \"error\": \"%s: %s\"}\n", h5fz_status_name(st), h5fz_last_error());
  } else {
    double te = median(t_enc, o->runs), td = median(t_dec, o->runs);
    double ce = median(c_enc, o->runs), cd = median(c_dec, o->runs);
    printf(", \"ratio\": %.6g, \"max_error\": %.17g, \"bound_held\": %s, "
           "\"special_values_exact\": %s, \"compress_gbps\": %.6g, "
           "\"decompress_gbps\": %.6g, \"compress_gbps_per_cpu_s\": %.6g, \"decompress_gbps_per_cpu_s\": %.6g}\n",
           stored ? (double)bytes / (double)stored : 0.0, err, err <= bound ? "true" : "false",
           specials_ok ? "true" : "false", bytes / te * 1e-9, bytes / td * 1e-9, bytes / ce * 1e-9, bytes / cd * 1e-9);
  }
  fflush(stdout);
  free_encoded(&e);
  free(out);
  free(t_enc);
  free(t_dec);
  free(c_enc);
  free(c_dec);
}

static int parse_list(const char *s, double *out, int *n_out)
{
  char *copy = strdup(s), *save = NULL;
  int n = 0;
  for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    char *end;
    double v = strtod(tok, &end);
    if (*end || !(v > 0) || n == MAX_BOUNDS) {
      free(copy);
      return -1;
    }
    out[n++] = v;
  }
  free(copy);
  *n_out = n;
  return n ? 0 : -1;
}

static void print_machine(void)
{
  struct utsname u;
  char model[256] = "unknown";
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (f) {
    char line[512];
    while (fgets(line, sizeof line, f))
      if (!strncmp(line, "model name", 10)) {
        char *colon = strchr(line, ':');
        if (colon) {
          snprintf(model, sizeof model, "%s", colon + 2);
          model[strcspn(model, "\n\"\\")] = '\0';
        }
        break;
      }
    fclose(f);
  }
  uname(&u);
  const char *threads = getenv("H5FZ_THREADS");
  printf("{\"machine\": {\"cpu\": \"%s\", \"online_cpus\": %ld, \"kernel\": \"%s %s\", "
         "\"arch\": \"%s\", \"h5fz\": \"%s\", \"executor\": \"cpu\", \"executor_threads\": %ld}}\n",
         model, sysconf(_SC_NPROCESSORS_ONLN), u.sysname, u.release, u.machine, h5fz_version(),
         threads && atol(threads) > 0 ? atol(threads) : sysconf(_SC_NPROCESSORS_ONLN));
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int main(int argc, char **argv)
{
  bench_options o = {NULL, "", {1e-2, 1e-4, 1e-6}, 3, 4u << 20, 5, 1.0, {1e-2, 1e-3, 1e-4}, 3, 0, NULL};
  static char default_dir[4096];
  char *names[MAX_FIELDS];
  int n_names = 0;
  DIR *dir;
  struct dirent *ent;

  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      help(stdout);
      return 0;
    } else if (!strcmp(a, "--data") && v) {
      o.data_dir = v, i++;
    } else if (!strcmp(a, "--chain") && v) {
      o.spec_tail = v, i++;
    } else if (!strcmp(a, "--rel") && v && parse_list(v, o.rel, &o.n_rel) == 0) {
      i++;
    } else if (!strcmp(a, "--realistic-rel") && v && parse_list(v, o.realistic_rel, &o.n_realistic_rel) == 0) {
      i++;
    } else if (!strcmp(a, "--realistic-gib") && v && atof(v) >= 0 && atof(v) <= 64) {
      o.realistic_gib = atof(v), i++;
    } else if (!strcmp(a, "--realistic-only")) {
      o.realistic_only = 1;
    } else if (!strcmp(a, "--write-realistic") && v) {
      o.write_realistic = v, i++;
    } else if (!strcmp(a, "--chunk-bytes") && v && atol(v) > 0) {
      o.chunk_bytes = (size_t)atol(v), i++;
    } else if (!strcmp(a, "--runs") && v && atoi(v) > 0) {
      o.runs = atoi(v), i++;
    } else {
      fprintf(stderr, "h5fz_bench_cpu: bad argument '%s'\n", a);
      help(stderr);
      return 2;
    }
  }
  /* The CPU executor is what this measures, whatever the machine has. */
  setenv("H5FZ_DEVICE", "cpu", 1);
  if (!o.data_dir) {
    snprintf(default_dir, sizeof default_dir, "%s/../shared/data", H5FZ_SOURCE_DIR);
    dir = opendir(default_dir);
    if (!dir)
      snprintf(default_dir, sizeof default_dir, "%s/tests/data", H5FZ_SOURCE_DIR);
    else
      closedir(dir);
    o.data_dir = default_dir;
  }
  if (o.write_realistic || o.realistic_gib > 0) {
    h5fz_realistic ra;
    char why[512];
    size_t want = (size_t)((o.write_realistic && o.realistic_gib <= 0 ? 1.0 : o.realistic_gib) * (1u << 30));
    if (h5fz_realistic_make(o.data_dir, want, &ra, why, sizeof why)) {
      fprintf(stderr, "h5fz_bench_cpu: realistic array: %s\n", why);
      return 2;
    }
    if (o.write_realistic) {
      FILE *f = fopen(o.write_realistic, "wb");
      int ok = f && fwrite(ra.values, 4, ra.n, f) == ra.n;
      if (f && fclose(f)) ok = 0;
      if (!ok)
        fprintf(stderr, "h5fz_bench_cpu: cannot write %s: %s\n", o.write_realistic, strerror(errno));
      else
        printf("{\"realistic_array\": \"%s\", \"bytes\": %zu, \"fields\": %d, \"repeats\": %d, "
               "\"special_values\": %zu}\n",
               o.write_realistic, ra.n * 4, ra.n_fields, ra.repeats, ra.n_special);
      h5fz_realistic_free(&ra);
      return ok ? 0 : 2;
    }
    print_machine();
    printf("{\"realistic_array\": {\"bytes\": %zu, \"fields\": %d, \"repeats\": %d, \"special_values\": %zu, "
           "\"note\": \"every float32 field scaled to its own finite range [0, 1], NaN and fill kept, tiled whole; "
           "ABS R = R x every field's range\"}}\n",
           ra.n * 4, ra.n_fields, ra.repeats, ra.n_special);
    for (int b = 0; b < o.n_realistic_rel; b++)
      bench_case(&o, "realistic", H5FZ_DTYPE_F32, (const unsigned char *)ra.values, ra.n * 4, 1.0, o.realistic_rel[b]);
    h5fz_realistic_free(&ra);
    if (o.realistic_only) return 0;
  } else {
    print_machine();
  }
  dir = opendir(o.data_dir);
  if (!dir) {
    fprintf(stderr, "h5fz_bench_cpu: cannot open %s: %s\n", o.data_dir, strerror(errno));
    return 2;
  }
  while ((ent = readdir(dir)) != NULL && n_names < MAX_FIELDS) {
    h5fz_dtype dt;
    if (is_field_name(ent->d_name, &dt)) names[n_names++] = strdup(ent->d_name);
  }
  closedir(dir);
  qsort(names, (size_t)n_names, sizeof names[0], cmp_str);

  for (int f = 0; f < n_names; f++) {
    char path[8192];
    h5fz_dtype dtype = H5FZ_DTYPE_UNKNOWN;
    size_t bytes = 0;
    unsigned char *data;
    is_field_name(names[f], &dtype);
    snprintf(path, sizeof path, "%s/%s", o.data_dir, names[f]);
    data = read_file(path, &bytes);
    if (!data) {
      fprintf(stderr, "h5fz_bench_cpu: cannot read %s\n", path);
      continue;
    }
    double range = value_range(data, dtype, bytes / h5fz_dtype_size(dtype));
    for (int b = 0; b < o.n_rel; b++) bench_case(&o, names[f], dtype, data, bytes, range, o.rel[b]);
    free(data);
    free(names[f]);
  }
  return 0;
}
