/*
 * test_gpu_robust.c - the GPU executor's promises around the JIT cache and
 * failures, each checked in fresh processes (fork; the parent never touches
 * CUDA): a cold cache compiles, a new process loads from disk, a corrupt or
 * truncated entry is recompiled (never trusted), six processes filling one
 * empty cache at once all succeed and leave no temporary files, and a GPU
 * that cannot hold a chunk (H5FZ_GPU_MEMORY_LIMIT) falls back to the CPU
 * executor with the same bytes; the disk-cache checks run with the
 * embedded kernels off (H5FZ_JIT_EMBEDDED=0), then, where the build embeds
 * kernels, a cold cache takes the module from the table and writes no disk
 * entry (the bytes still the CPU's). Skips (77) without a usable GPU.
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "h5fz.h"
#include "h5fz_gpu.h"
#include "h5fz_jit_embedded.h"
#include "h5fz_settings.h"

#define N (1u << 20) /* a 4 MiB float32 chunk */

static float values[N];
static char cache[256], expected_path[600];
static int failures;

#define CHECK(c, ...)                                                                                                  \
  do {                                                                                                                 \
    if (!(c)) {                                                                                                        \
      failures++;                                                                                                      \
      printf("FAIL %s:%d: ", __FILE__, __LINE__);                                                                      \
      printf(__VA_ARGS__);                                                                                             \
      printf("\n");                                                                                                    \
    }                                                                                                                  \
  } while (0)

/* device through an options value: the child switches from auto to cpu,
 * and H5FZ_DEVICE is read once per process; strictness stays the
 * environment's (none: a GPU that cannot hold the chunk falls back) */
static int encode(const char *device, void **out, size_t *n)
{
  h5fz_spec s;
  h5fz_spec_parse("abs=1e-3 dtype=f32", &s);
  h5fz_overrides o;
  h5fz_overrides_init(&o);
  o.device = !strcmp(device, "cpu") ? H5FZ_SETTING_DEVICE_CPU : H5FZ_SETTING_DEVICE_AUTO;
  const h5fz_overrides *previous = h5fz_overrides_enter(&o);
  int rc = h5fz_chunk_encode(&s, values, sizeof values, out, n);
  h5fz_overrides_leave(previous);
  return rc;
}

/* setenv (value NULL: unsetenv) in the parent, which forks the children
 * after: h5fz_settings_reload too, so that a child never inherits a
 * snapshot of the variables taken before (the parent reads none today;
 * the reload keeps that from mattering) */
static void set_variable(const char *name, const char *value) { h5fz_settings_setenv(name, value); }

/* In a child: encode on the GPU (auto route), compare with the CPU bytes.
 * Exit: 77 no GPU, 10 + where the module came from (0 compiled, 1 disk,
 * 2 memory, 3 embedded), 20 when the chunk ran on the CPU, 1 on any error or mismatch. */
static int child(void)
{
  void *out = NULL, *ref = NULL;
  size_t n = 0, rn = 0;
  if (encode("auto", &out, &n)) return 1;
  h5fz_gpu_stats st;
  h5fz_gpu_get_stats(&st);
  if (encode("cpu", &ref, &rn) || n != rn || memcmp(out, ref, n)) return 1;
  if (st.chunks_encoded == 0) return getenv("H5FZ_GPU_MEMORY_LIMIT") ? 20 : 77;
  return 10 + st.last_jit_source;
}

static int run_children(int k, int *codes)
{
  pid_t pids[16];
  for (int i = 0; i < k; i++) {
    fflush(stdout);
    pids[i] = fork();
    if (pids[i] == 0) _exit(child());
  }
  for (int i = 0; i < k; i++) {
    int st = 0;
    waitpid(pids[i], &st, 0);
    codes[i] = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
  }
  return codes[0];
}

static int one(void)
{
  int c;
  run_children(1, &c);
  return c;
}

/* The cache entries (*.bin) and leftovers (anything else) in cache/jit. */
static void scan_cache(int *entries, int *others, char *first, size_t len)
{
  char dir[300];
  snprintf(dir, sizeof dir, "%s/jit", cache);
  *entries = *others = 0;
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.') continue;
    const char *dot = strrchr(e->d_name, '.');
    if (dot && !strcmp(dot, ".bin")) {
      if (!(*entries)++) snprintf(first, len, "%.300s/%.250s", dir, e->d_name);
    } else {
      (*others)++;
    }
  }
  closedir(d);
}

static void clear_cache(void)
{
  char cmd[400];
  snprintf(cmd, sizeof cmd, "rm -rf '%s/jit'", cache);
  if (system(cmd)) printf("could not clear %s\n", cache);
}

int main(void)
{
  for (unsigned i = 0; i < N; i++) values[i] = (float)(sin(i * 1e-3) * 50 + (i % 977 == 0 ? NAN : 0));
  snprintf(cache, sizeof cache, "/tmp/h5fz-robust-%ld", (long)getpid());
  mkdir(cache, 0755);
  setenv("H5FZ_CACHE_DIR", cache, 1);
  set_variable("H5FZ_QUIET", "1");
  set_variable("H5FZ_JIT_EMBEDDED", "0"); /* the disk cache's own promises first */
  int entries, others;

  int c = one();
  if (c == 77) {
    printf("SKIP: no usable GPU\n");
    return 77;
  }
  CHECK(c == 10, "cold cache: child exit %d, want 10 (compiled)", c);
  scan_cache(&entries, &others, expected_path, sizeof expected_path);
  CHECK(entries == 1 && others == 0, "cold cache left %d entries, %d other files", entries, others);
  c = one();
  CHECK(c == 11, "new process: exit %d, want 11 (module from the disk cache)", c);

  /* a corrupt entry: one byte flipped in the image */
  FILE *f = fopen(expected_path, "r+b");
  CHECK(f != NULL, "open %s", expected_path);
  if (f) {
    fseek(f, 1000, SEEK_SET);
    int b = fgetc(f);
    fseek(f, 1000, SEEK_SET);
    fputc(b ^ 0x55, f);
    fclose(f);
  }
  c = one();
  CHECK(c == 10, "corrupt entry: exit %d, want 10 (recompiled, not trusted)", c);
  c = one();
  CHECK(c == 11, "after recompiling: exit %d, want 11 (disk)", c);

  /* a truncated entry */
  CHECK(truncate(expected_path, 10) == 0, "truncate");
  c = one();
  CHECK(c == 10, "truncated entry: exit %d, want 10", c);

  /* six processes on one empty cache at once */
  clear_cache();
  int codes[6];
  run_children(6, codes);
  for (int i = 0; i < 6; i++) CHECK(codes[i] == 10 || codes[i] == 11, "concurrent child %d: exit %d", i, codes[i]);
  scan_cache(&entries, &others, expected_path, sizeof expected_path);
  CHECK(entries == 1 && others == 0, "concurrent fill left %d entries, %d other files", entries, others);
  c = one();
  CHECK(c == 11, "after the concurrent fill: exit %d, want 11", c);

  /* a GPU that may not hold the chunk: the CPU executor takes it */
  set_variable("H5FZ_GPU_MEMORY_LIMIT", "4096");
  c = one();
  CHECK(c == 20, "memory limit: exit %d, want 20 (CPU fallback, same bytes)", c);
  set_variable("H5FZ_GPU_MEMORY_LIMIT", NULL);

  /* the kernels embedded at build time: a cold cache needs no compile and no disk entry */
  size_t n_embedded = 0;
  int emaj, emin;
  h5fz_embedded_modules(&n_embedded, &emaj, &emin);
  clear_cache();
  set_variable("H5FZ_JIT_EMBEDDED", "1");
  c = one();
  if (n_embedded) {
    CHECK(c == 13, "embedded kernels (%zu in this build), cold cache: exit %d, want 13 (embedded)", n_embedded, c);
    scan_cache(&entries, &others, expected_path, sizeof expected_path);
    CHECK(entries == 0 && others == 0, "an embedded module left %d cache entries, %d other files", entries, others);
  } else {
    CHECK(c == 10, "no embedded kernels in this build, cold cache: exit %d, want 10 (compiled)", c);
  }

  clear_cache();
  rmdir(cache);
  printf("%d passed, %d failed\n", failures ? 0 : 9, failures);
  return failures ? 1 : 0;
}
