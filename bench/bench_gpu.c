/*
 * bench_gpu.c - GPU executor benchmark (JSON to stdout): NVRTC JIT time cold
 * and cached, kernel-only encode/decode throughput per real field and on a
 * >= 1 GiB array made by tiling the real float32 fields, and end-to-end time
 * per HDF5-sized chunk (1, 4, 16 MiB) through h5fz_chunk_encode/decode.
 * GB/s = 1e9 bytes of uncompressed input per second.
 * The headline is the realistic array (realistic_array.h: every float32
 * field scaled to its own range [0, 1], tiled whole to >= G GiB) at ABS
 * 1e-2, 1e-3, 1e-4, with the default chain and the fast chain (quant delta
 * zigzag bitpack, rows "realistic fast R=..."), each encoded and decoded
 * once more through the public API on the GPU and checked element by
 * element; the old tiled array (the
 * fields as they are, bound 1e-4 of the whole array's range) is the second
 * row. The JIT probes time the first chunk of a fresh process with an
 * empty cache, with the embedded kernels and without them, per chain.
 * --sweep adds the tuning sweep (threads per block x sub-chunk bytes) on the
 * tiled array, and --write-calibration stores the measured kernel rate, the
 * fixed per-chunk cost and the CPU rate where the planner reads them.
 *   h5fz_bench_gpu [--data DIR] [--reps N] [--tiled-gib G] [--sweep] [--write-calibration] [--jit-only]
 *                  [--realistic-kernels] [--realistic-r R]
 * --realistic-kernels prints only the realistic rows (for profilers:
 * tests/gpu/profile.sh --realistic), --realistic-r only those of one bound.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "h5fz_planner.h"
#include "field_data.h"
#include "h5fz_gpu.h"
#include "realistic_array.h"
#include "h5fz_settings.h"

/* setenv (value NULL: unsetenv) of a variable the executor reads, then
 * h5fz_settings_reload: h5fz reads its variables once per process (a
 * snapshot at the first read), and this benchmark switches the device and
 * the GPU tuning between rows of one process, so the next call must take
 * the environment again (H5FZ_CACHE_DIR too: a child process's is set
 * before its exec, plain setenv). */
static void bench_env(const char *name, const char *value) { h5fz_settings_setenv(name, value); }

static double now_s(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static int plan_for(const char *text, const void *in, size_t bytes, h5fz_chunk_plan *p, h5fz_header *h)
{
  h5fz_spec s;
  if (h5fz_spec_parse(text, &s)) return -1;
  return h5fz_chunk_plan_make(&s, in, bytes, p, h);
}

/* One encode through the public API, reporting where its module came from;
 * chain: the chain words after the bound ("" = default), dtype f32 or f64. */
static int jit_probe(const char *chain, const char *dtype)
{
  double v[4096];
  int f64 = !strcmp(dtype, "f64");
  for (int i = 0; i < 4096; i++) {
    if (f64)
      v[i] = sin(i * 0.01);
    else
      ((float *)v)[i] = (float)sin(i * 0.01);
  }
  char text[256];
  snprintf(text, sizeof text, "abs=1e-3 dtype=%s %s", dtype, chain);
  h5fz_spec s;
  if (h5fz_spec_parse(text, &s)) {
    printf("{\"ok\": false, \"error\": \"%s\"}", h5fz_last_error());
    return 1;
  }
  bench_env("H5FZ_DEVICE", "gpu");
  bench_env("H5FZ_DEVICE_STRICT", "1"); /* fail, never fall back to the CPU: the GPU must have run */
  void *out;
  size_t n;
  double t0 = now_s();
  int rc = h5fz_chunk_encode(&s, v, f64 ? sizeof v : sizeof v / 2, &out, &n);
  double t1 = now_s();
  h5fz_gpu_stats st;
  h5fz_gpu_get_stats(&st);
  static const char *const from[] = {"compiled", "disk cache", "memory cache", "embedded"};
  int src = st.last_jit_source >= 0 && st.last_jit_source < 4 ? st.last_jit_source : 0;
  /* the same chunk again: the steady cost of a chunk in this process */
  void *out2 = NULL;
  size_t n2;
  double t2 = now_s();
  int rc2 = rc ? rc : h5fz_chunk_encode(&s, v, f64 ? sizeof v : sizeof v / 2, &out2, &n2);
  double t3 = now_s();
  printf("{\"ok\": %s, \"chain\": \"%s\", \"dtype\": \"%s\", \"first_chunk_s\": %.4f, \"jit_ms\": %.2f, "
         "\"module_from\": \"%s\", \"phases_ms\": {\"cuInit\": %.2f, \"context\": %.2f, \"context_setup_total\": "
         "%.2f, \"module_load\": %.2f, \"first_launch\": %.2f}, \"second_chunk_s\": %.4f%s%s%s}",
         rc ? "false" : "true", chain[0] ? chain : "default", dtype, t1 - t0, st.last_jit_ms, rc ? "-" : from[src],
         st.init_cuinit_ms, st.init_context_ms, st.init_ms, st.last_jit_ms, st.first_exec_ms, rc2 ? -1.0 : t3 - t2,
         rc ? ", \"error\": \"" : "", rc ? h5fz_last_error() : "", rc ? "\"" : "");
  if (!rc) free(out);
  free(out2);
  return rc ? 1 : 0;
}

/* A fresh process runs one jit_probe; cache: its H5FZ_CACHE_DIR (NULL:
 * a new empty one); embedded 0 sets H5FZ_JIT_EMBEDDED=0. */
static void run_probe(const char *self, const char *label, const char *cache, int embedded, const char *chain,
                      const char *dtype, int last)
{
  char fresh[] = "/tmp/h5fz-bench-cache-XXXXXX";
  if (!cache && !(cache = mkdtemp(fresh))) return;
  fflush(stdout);
  printf("    \"%s\": ", label);
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    setenv("H5FZ_CACHE_DIR", cache, 1);
    setenv("H5FZ_JIT_EMBEDDED", embedded ? "1" : "0", 1);
    execl(self, self, "--jit-probe", chain, dtype, (char *)NULL);
    _exit(127);
  }
  int st;
  waitpid(pid, &st, 0);
  printf("%s\n", last ? "" : ",");
}

/* Kernel-only encode GB/s of the last kernel_row (for the calibration). */
static double last_encode_GBps;

static void kernel_row(const char *name, const char *spec, const void *data, size_t bytes, int reps, int last)
{
  h5fz_chunk_plan p;
  h5fz_header h;
  double enc = 0, dec = 0;
  size_t payload = 0;
  int rc = plan_for(spec, data, bytes, &p, &h);
  if (!rc) rc = h5fz_gpu_time_kernels(&p, data, reps, &enc, &dec, &payload);
  if (rc) {
    printf("    {\"field\": \"%s\", \"error\": \"%s\"}%s\n", name, h5fz_last_error(), last ? "" : ",");
    return;
  }
  printf("    {\"field\": \"%s\", \"bytes\": %zu, \"spec\": \"%s\", \"encode_ms\": %.4f, \"decode_ms\": %.4f, "
         "\"encode_GBps\": %.1f, \"decode_GBps\": %.1f, \"payload_ratio\": %.2f}%s\n",
         name, bytes, spec, enc, dec, bytes / enc / 1e6, bytes / dec / 1e6, (double)bytes / (double)payload,
         last ? "" : ",");
  last_encode_GBps = bytes / enc / 1e6;
}

static int cmp_d(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Median seconds to encode a chunk of `chunk` bytes through the public API. */
static double median_encode_s(const char *device, const unsigned char *data, size_t total, double eb, size_t chunk,
                              int count)
{
  char spec[128];
  snprintf(spec, sizeof spec, "abs=%.17g dtype=f32", eb);
  h5fz_spec s;
  h5fz_spec_parse(spec, &s);
  bench_env("H5FZ_DEVICE", device);
  bench_env("H5FZ_DEVICE_STRICT", "1"); /* fail, never fall back to the CPU: the GPU must have run */
  double *t = calloc((size_t)count, sizeof *t);
  for (int i = 0; i < count; i++) {
    size_t off = ((size_t)i * chunk) % (total - chunk);
    void *enc = NULL;
    size_t en;
    double t0 = now_s();
    h5fz_chunk_encode(&s, data + off, chunk, &enc, &en);
    t[i] = now_s() - t0;
    free(enc);
  }
  qsort(t, (size_t)count, sizeof *t, cmp_d);
  double m = t[count / 2];
  free(t);
  return m;
}

static void e2e_row(const unsigned char *data, size_t total, double eb, size_t chunk, int last)
{
  char spec[128];
  snprintf(spec, sizeof spec, "abs=%.17g dtype=f32", eb);
  h5fz_spec s;
  h5fz_spec_parse(spec, &s);
  size_t n_chunks = total / chunk;
  if (n_chunks > 64) n_chunks = 64;
  double *te = calloc(n_chunks, sizeof *te), *td = calloc(n_chunks, sizeof *td);
  size_t in_total = 0, out_total = 0;
  int errors = 0;
  bench_env("H5FZ_DEVICE", "gpu");
  bench_env("H5FZ_DEVICE_STRICT", "1"); /* fail, never fall back to the CPU: the GPU must have run */
  for (size_t i = 0; i < n_chunks; i++) {
    void *enc = NULL, *dec = NULL;
    size_t en = 0, dn = 0;
    double t0 = now_s();
    errors += h5fz_chunk_encode(&s, data + i * chunk, chunk, &enc, &en) != 0;
    double t1 = now_s();
    if (enc) errors += h5fz_chunk_decode(enc, en, &dec, &dn) != 0;
    double t2 = now_s();
    te[i] = t1 - t0;
    td[i] = t2 - t1;
    in_total += chunk;
    out_total += en;
    free(enc);
    free(dec);
  }
  if (errors || !n_chunks || !out_total) { /* no rate for calls that failed */
    printf("    {\"chunk_MiB\": %zu, \"chunks\": %zu, \"errors\": %d, \"error\": \"%s\"}%s\n", chunk >> 20, n_chunks,
           errors, n_chunks ? "a GPU encode or decode failed (H5FZ_DEVICE=gpu)" : "array smaller than one chunk",
           last ? "" : ",");
    free(te);
    free(td);
    return;
  }
  qsort(te, n_chunks, sizeof *te, cmp_d);
  qsort(td, n_chunks, sizeof *td, cmp_d);
  printf("    {\"chunk_MiB\": %zu, \"chunks\": %zu, \"encode_ms_median\": %.3f, \"decode_ms_median\": %.3f, "
         "\"encode_GBps\": %.2f, \"decode_GBps\": %.2f, \"ratio\": %.2f, \"errors\": %d}%s\n",
         chunk >> 20, n_chunks, te[n_chunks / 2] * 1e3, td[n_chunks / 2] * 1e3, chunk / te[n_chunks / 2] / 1e9,
         chunk / td[n_chunks / 2] / 1e9, (double)in_total / out_total, errors, last ? "" : ",");
  free(te);
  free(td);
}

/* The headline: the realistic array at ABS 1e-2, 1e-3, 1e-4 (every field at
 * R times its own range), kernel-only times, then one encode and decode of
 * the whole array through the public API on the GPU, checked element by
 * element (the kernels timed are the ones that run there). The default
 * chain, then the fast chain (rows "realistic fast R=..."); only_r > 0:
 * that bound's rows only (--realistic-r).
 * H5FZ_BENCH_REALISTIC_CHAINS="lorenzo_nd zigzag bitshuffle rze;...": the
 * same rows for more chains (after those two). */
static void realistic_section(const char *dir, double gib, int reps, double only_r)
{
  h5fz_realistic ra;
  char why[512];
  if (h5fz_realistic_make(dir, (size_t)(gib * (1u << 30)), &ra, why, sizeof why)) {
    printf("  \"realistic\": {\"error\": \"%s\"},\n", why);
    return;
  }
  size_t bytes = ra.n * 4;
  printf("  \"realistic\": {\"note\": \"every real float32 field scaled to its own finite range [0, 1], NaN and "
         "fill values kept, concatenated whole %d times; ABS R = R x every field's own range; each row checked on "
         "every element after an encode and decode through h5fz_chunk_encode/decode on the GPU\", "
         "\"bytes\": %zu, \"fields\": %d, \"special_values\": %zu, \"kernel\": [\n",
         ra.repeats, bytes, ra.n_fields, ra.n_special);
  static const double rel[] = {1e-2, 1e-3, 1e-4};
  const char *more = getenv("H5FZ_BENCH_REALISTIC_CHAINS");
  char list[1024];
  snprintf(list, sizeof list, "%s", more ? more : "");
  const char *chains[16] = {"", "delta zigzag bitpack"};
  /* H5FZ_BENCH_REALISTIC_ONLY=1: only the chains of H5FZ_BENCH_REALISTIC_CHAINS (a profiler then sees
   * their kernels alone) */
  const char *only = getenv("H5FZ_BENCH_REALISTIC_ONLY");
  int n_chains = only && !strcmp(only, "1") && more ? 0 : 2;
  for (char *save = NULL, *t = strtok_r(list, ";", &save); t && n_chains < 16; t = strtok_r(NULL, ";", &save))
    chains[n_chains++] = t;
  for (int r = 0; r < 3 * n_chains; r++) {
    char spec[600], name[600];
    const char *chain = chains[r / 3];
    if (only_r > 0 && rel[r % 3] != only_r) continue;
    int last = only_r > 0 ? r / 3 == n_chains - 1 : r == 3 * n_chains - 1;
    snprintf(spec, sizeof spec, "abs=%.17g dtype=f32%s%s", rel[r % 3], *chain ? " " : "", chain);
    if (!strcmp(chain, "delta zigzag bitpack"))
      snprintf(name, sizeof name, "realistic fast R=%g", rel[r % 3]);
    else
      snprintf(name, sizeof name, "realistic R=%g%s%s", rel[r % 3], *chain ? " " : "", chain);
    kernel_row(name, spec, ra.values, bytes, reps, 1);
    /* kernel_row ended the object; the check adds a second one for this R */
    h5fz_spec s;
    h5fz_spec_parse(spec, &s);
    bench_env("H5FZ_DEVICE", "gpu");
    void *enc = NULL, *out = NULL;
    size_t en = 0, on = 0;
    int rc = h5fz_chunk_encode(&s, ra.values, bytes, &enc, &en);
    if (!rc) rc = h5fz_chunk_decode(enc, en, &out, &on);
    int short_out = !rc && on != bytes;
    printf("    ,{\"field\": \"%s check\", ", name);
    if (rc || short_out) {
      printf("\"error\": \"%s\"}%s\n", short_out ? "decoded size differs" : h5fz_last_error(), last ? "" : ",");
    } else {
      h5fz_realistic_check_result cr;
      h5fz_realistic_check(ra.values, out, ra.n, rel[r % 3], &cr);
      printf("\"checked\": %zu, \"violations\": %zu, \"nan_lost\": %zu, \"max_error\": %.9g, "
             "\"bound_held\": %s, \"container_ratio\": %.3f}%s\n",
             cr.checked, cr.violations, cr.nan_lost, cr.max_error, cr.violations ? "false" : "true",
             (double)bytes / (double)en, last ? "" : ",");
    }
    free(enc);
    free(out);
  }
  printf("  ]},\n");
  h5fz_realistic_free(&ra);
}

int main(int argc, char **argv)
{
  const char *dir = getenv("H5FZ_DATA_DIR");
  int reps = 9, sweep = 0, write_cal = 0, kernels_only = 0, tiled_kernels = 0, jit_only = 0, realistic_kernels = 0;
  double tiled_gib = 1.0, only_r = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--jit-probe") && i + 2 < argc) return jit_probe(argv[i + 1], argv[i + 2]);
    if (!strcmp(argv[i], "--data") && i + 1 < argc)
      dir = argv[++i];
    else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
      reps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--tiled-gib") && i + 1 < argc)
      tiled_gib = atof(argv[++i]);
    else if (!strcmp(argv[i], "--sweep"))
      sweep = 1;
    else if (!strcmp(argv[i], "--kernels-only"))
      kernels_only = 1;
    else if (!strcmp(argv[i], "--tiled-kernels"))
      tiled_kernels = 1;
    else if (!strcmp(argv[i], "--jit-only"))
      jit_only = 1;
    else if (!strcmp(argv[i], "--realistic-kernels"))
      realistic_kernels = 1;
    else if (!strcmp(argv[i], "--realistic-r") && i + 1 < argc &&
             (!strcmp(argv[i + 1], "1e-2") || !strcmp(argv[i + 1], "1e-3") || !strcmp(argv[i + 1], "1e-4")))
      only_r = atof(argv[++i]);
    else if (!strcmp(argv[i], "--write-calibration"))
      write_cal = 1;
    else {
      printf("usage: h5fz_bench_gpu [--data DIR] [--reps N] [--tiled-gib G] [--sweep] [--write-calibration] "
             "[--kernels-only] [--tiled-kernels] [--jit-only] [--realistic-kernels] [--realistic-r 1e-2|1e-3|1e-4]\n"
             "GPU benchmark of h5fz (JSON on stdout): JIT cold/cached, kernel-only throughput per\n"
             "field and on a tiled array of >= G GiB, end-to-end time per 1/4/16 MiB chunk.\n"
             "--realistic-kernels: only the realistic array's rows (default and fast chain), for\n"
             "profilers; --realistic-r: only that bound's rows.\n");
      return strcmp(argv[i], "--help") ? 2 : 0;
    }
  }
  test_field *fields = NULL;
  int n = dir ? load_fields(dir, &fields) : 0;
  if (!n) {
    fprintf(stderr, "no fields in %s\n", dir ? dir : "(set --data or H5FZ_DATA_DIR)");
    return 2;
  }
  char cache[] = "/tmp/h5fz-bench-cache-XXXXXX";
  if (!mkdtemp(cache)) return 2;
  char user_cache[512];
  if (h5fz_settings_cache_dir(user_cache, sizeof user_cache)) user_cache[0] = '\0';
  bench_env("H5FZ_CACHE_DIR", cache); /* the JIT probes start from an empty cache */
  printf("{\n  \"benchmark\": \"h5fz GPU executor\",\n  \"units\": \"GB/s = 1e9 input bytes per second\",\n");
  if (realistic_kernels) { /* the realistic rows alone, for profilers */
    realistic_section(dir, tiled_gib, reps, only_r);
    printf("  \"realistic_kernels_only\": true\n}\n");
    return 0;
  }
  if (!kernels_only && !tiled_kernels) {
    /* the first chunk of a fresh process, empty cache: with the kernels
     * embedded at build time (no NVRTC compile), then without them (NVRTC
     * compiles and fills the disk cache), then from that disk cache */
    static const char *const probe_chains[][2] = {
        {"", "f32"}, {"", "f64"}, {"delta zigzag bitpack", "f32"}, {"lorenzo_nd zigzag bitshuffle rze", "f32"}};
    printf("  \"jit\": {\n    \"note\": \"each probe is a fresh process encoding one 16 KiB chunk with an empty "
           "H5FZ_CACHE_DIR unless said, H5FZ_DEVICE=gpu; first_chunk_s includes CUDA context creation; phases_ms: "
           "cuInit, the primary context with its streams (context), all of the context's setup with the device and "
           "NVRTC queries (context_setup_total), the module (module_load: embedded, disk or compiled), the first "
           "chunk's staging, launches and copies (first_launch); second_chunk_s: the same chunk again\",\n");
    for (int c = 0; c < 4; c++) {
      char label[160];
      snprintf(label, sizeof label, "cold_empty_cache %s %s", probe_chains[c][0][0] ? probe_chains[c][0] : "default",
               probe_chains[c][1]);
      run_probe(argv[0], label, NULL, 1, probe_chains[c][0], probe_chains[c][1], 0);
    }
    run_probe(argv[0], "cold_empty_cache_jit_only default f32", cache, 0, "", "f32", 0);
    run_probe(argv[0], "new_process_disk_cache_jit_only default f32", cache, 0, "", "f32", 1);
    printf("  }%s\n", jit_only ? "\n}" : ",");
    if (jit_only) return 0; /* the cold-start rows only (tests/gpu/run.sh) */
  }

  h5fz_plan plan;
  h5fz_chunk_plan p0;
  h5fz_header h0;
  plan_for("abs=1 dtype=f32", fields[0].data, 4096, &p0, &h0);
  if (h5fz_gpu_plan_for(&p0, &plan) == 0)
    printf("  \"plan\": {\"device\": \"%s\", \"class\": \"%s\", \"arch\": \"%s\", \"threads_per_block\": %d, "
           "\"predicted_kernel_GBps\": %.0f, \"hbm_GBps\": %.0f, \"pcie_GBps\": %.1f, \"digest\": \"%s\"},\n",
           plan.device.name, plan.klass, plan.arch_name, plan.tuning.threads_per_block,
           plan.roofline.predicted_kernel_GBps, plan.roofline.hbm_GBps, plan.roofline.pcie_GBps, plan.digest_hex);
  else
    printf("  \"plan\": {\"error\": \"%s\"},\n", h5fz_last_error());

  printf("  \"kernel_per_field_rel_1e-4\": [\n");
  if (kernels_only) { /* one field, for profilers */
    char spec[128];
    snprintf(spec, sizeof spec, "abs=%.17g dtype=%s", 1e-4 * fields[0].range, fields[0].f64 ? "f64" : "f32");
    kernel_row(fields[0].name, spec, fields[0].data, fields[0].bytes, reps, 1);
    printf("  ]\n}\n");
    return 0;
  }
  for (int f = 0; f < n && !tiled_kernels; f++) {
    char spec[128];
    snprintf(spec, sizeof spec, "abs=%.17g dtype=%s", 1e-4 * fields[f].range, fields[f].f64 ? "f64" : "f32");
    kernel_row(fields[f].name, spec, fields[f].data, fields[f].bytes, reps, f == n - 1);
  }
  printf("  ],\n");

  realistic_section(dir, tiled_gib, reps, only_r);

  /* tiled array of the float32 fields, whole fields repeated to >= tiled_gib */
  size_t want = (size_t)(tiled_gib * (1u << 30)), total = 0;
  unsigned char *tiled = malloc(want + (64u << 20));
  double lo = INFINITY, hi = -INFINITY;
  int reps_tiled = 0;
  while (tiled && total < want) {
    for (int f = 0; f < n && total < want + (1u << 20); f++) {
      if (fields[f].f64) continue;
      memcpy(tiled + total, fields[f].data, fields[f].bytes);
      total += fields[f].bytes;
    }
    reps_tiled++;
  }
  total &= ~(size_t)3;
  for (size_t i = 0; tiled && i < total / 4; i++) {
    float x = ((float *)tiled)[i];
    if (isfinite(x) && fabsf(x) < 1e9f) {
      if (x < lo) lo = x;
      if (x > hi) hi = x;
    }
  }
  double eb = 1e-4 * (hi - lo);
  printf("  \"tiled\": {\"note\": \"the real float32 fields concatenated whole, %d times; bound 1e-4 x the "
         "array's finite range (fill values left out)\", \"bytes\": %zu, \"abs_bound\": %.6g, \"kernel\": [\n",
         reps_tiled, total, eb);
  char spec[256];
  snprintf(spec, sizeof spec, "abs=%.17g dtype=f32", eb);
  /* H5FZ_BENCH_CHAINS="quant raw;quant delta zigzag bitshuffle raw": more
   * chains on the tiled array, to see what each op costs */
  const char *chains = getenv("H5FZ_BENCH_CHAINS");
  /* H5FZ_BENCH_TUNINGS="512:64;512:40;256:32": the default chain with
   * THREADS per block and a cap of REGS registers per thread each */
  const char *tunings = getenv("H5FZ_BENCH_TUNINGS");
  /* H5FZ_BENCH_WARP_FUSED="off;2;8": the default chain without the
   * warp-fused kernels (off), or with N warps per block of them */
  const char *wf = getenv("H5FZ_BENCH_WARP_FUSED");
  int more_chains = tiled_kernels && chains && *chains, more_tunings = tiled_kernels && tunings && *tunings;
  int more_wf = tiled_kernels && wf && *wf;
  kernel_row("tiled", spec, tiled, total, reps, !more_chains && !more_tunings && !more_wf);
  if (more_wf) {
    char list[256], *save = NULL;
    snprintf(list, sizeof list, "%s", wf);
    for (char *t = strtok_r(list, ";", &save); t; t = strtok_r(NULL, ";", &save)) {
      char nm[64];
      int off = !strcmp(t, "off"), w = off ? 0 : atoi(t);
      if (!off && w != 1 && w != 2 && w != 4 && w != 8) {
        printf("    {\"field\": \"warp_fused %s\", \"error\": \"want off, 1, 2, 4 or 8\"},\n", t);
        continue;
      }
      snprintf(nm, sizeof nm, off ? "warp_fused=off" : "warp_fused warps=%d", w);
      bench_env("H5FZ_GPU_WARP_FUSED", off ? "0" : "1");
      if (!off) bench_env("H5FZ_GPU_WF_WARPS", t);
      kernel_row(nm, spec, tiled, total, reps, !(save && *save) && !more_chains && !more_tunings);
      bench_env("H5FZ_GPU_WARP_FUSED", NULL);
      bench_env("H5FZ_GPU_WF_WARPS", NULL);
    }
  }
  double kernel_GBps = last_encode_GBps;
  if (more_chains) {
    char list[1024], *save = NULL;
    snprintf(list, sizeof list, "%s", chains);
    for (char *c = strtok_r(list, ";", &save); c; c = strtok_r(NULL, ";", &save)) {
      char sp[400];
      snprintf(sp, sizeof sp, "abs=%.17g dtype=f32 %s", eb, c);
      char *peek = save && *save ? save : NULL;
      kernel_row(c, sp, tiled, total, reps, peek == NULL && !more_tunings);
    }
  }
  if (more_tunings) {
    char list[1024], *save = NULL;
    snprintf(list, sizeof list, "%s", tunings);
    for (char *t = strtok_r(list, ";", &save); t; t = strtok_r(NULL, ";", &save)) {
      int th = 0, rg = 0;
      char nm[64], tv[16], rv[16];
      snprintf(nm, sizeof nm, "%s", t);
      if (sscanf(t, "%d:%d", &th, &rg) != 2 || th < 64 || th > 1024 || th % 32 || rg < 16 || rg > 255) {
        /* the executor would ignore it and run the plan's: say so instead of mislabelling a row */
        printf("    {\"field\": \"%s\", \"error\": \"want THREADS:REGS, threads a multiple of 32 in 64..1024, "
               "registers 16..255\"}%s\n",
               nm, save && *save ? "," : "");
        continue;
      }
      snprintf(nm, sizeof nm, "threads=%d regs=%d", th, rg);
      snprintf(tv, sizeof tv, "%d", th);
      snprintf(rv, sizeof rv, "%d", rg);
      bench_env("H5FZ_GPU_THREADS", tv);
      bench_env("H5FZ_GPU_REGS", rv);
      kernel_row(nm, spec, tiled, total, reps, !(save && *save));
    }
    bench_env("H5FZ_GPU_THREADS", NULL);
    bench_env("H5FZ_GPU_REGS", NULL);
  }
  printf("  ]}%s\n", tiled_kernels ? "\n}" : ",");
  if (tiled_kernels) { /* the tiled kernels alone, for performance work */
    free(tiled);
    return 0;
  }
  if (sweep) {
    static const int threads[] = {128, 256, 512, 1024};
    static const int subs[] = {4096, 8192, 16384, 32768, 65536};
    printf("  \"tuning_sweep_tiled\": [\n");
    for (int t = 0; t < 4; t++)
      for (int k = 0; k < 5; k++) {
        char tv[16], sp[160], nm[64];
        snprintf(tv, sizeof tv, "%d", threads[t]);
        bench_env("H5FZ_GPU_THREADS", tv);
        snprintf(sp, sizeof sp, "abs=%.17g subchunk=%d dtype=f32", eb, subs[k]);
        snprintf(nm, sizeof nm, "threads=%d subchunk=%d", threads[t], subs[k]);
        kernel_row(nm, sp, tiled, total, reps, t == 3 && k == 4);
      }
    bench_env("H5FZ_GPU_THREADS", NULL);
    printf("  ],\n");
  }
  double overhead_us = median_encode_s("gpu", tiled, total, eb, 64u << 10, 33) * 1e6;
  double cpu_s = median_encode_s("cpu", tiled, total, eb, 4u << 20, 5);
  double cpu_GBps = (4u << 20) / cpu_s / 1e9;
  printf("  \"calibration\": {\"device\": \"%s\", \"class\": \"%s\", \"kernel_GBps\": %.1f, "
         "\"overhead_us\": %.1f, \"cpu_GBps\": %.3f, \"note\": \"overhead = median GPU encode of a 64 KiB chunk; "
         "cpu = median CPU encode of a 4 MiB chunk on this host\"},\n",
         plan.device.name, plan.klass, kernel_GBps, overhead_us, cpu_GBps);
  if (write_cal && user_cache[0]) {
    char path[700];
    snprintf(path, sizeof path, "%s/calibration.txt", user_cache);
    FILE *cf = fopen(path, "a");
    if (cf) {
      fprintf(cf, "%s | %s | kernel_GBps=%.1f overhead_us=%.1f cpu_GBps=%.3f\n", plan.device.name, plan.klass,
              kernel_GBps, overhead_us, cpu_GBps);
      fclose(cf);
    }
  }
  printf("  \"end_to_end_per_chunk\": [\n");
  static const size_t sizes[] = {1u << 20, 4u << 20, 16u << 20};
  for (int i = 0; i < 3; i++) e2e_row(tiled, total, eb, sizes[i], i == 2);
  printf("  ]\n}\n");
  free(tiled);
  for (int f = 0; f < n; f++) free(fields[f].data);
  free(fields);
  return 0;
}
