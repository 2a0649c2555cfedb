/*
 * h5fz_embed_kernels.c - build-time compiler of the embedded GPU kernels.
 *
 * For every chain of a chain list, float32 and float64, and every
 * architecture the kernel-class registry names (each cubin arch of each
 * class, and for a PTX class the lowest virtual arch this NVRTC has at or
 * above its min_arch), plan the chain for a device of that architecture
 * exactly as the executor would (h5fz_plan_make on the embedded registry),
 * generate its source (h5fz_kernel_source), compile it with NVRTC
 * (h5fz_jit_compile, the JIT's own options) and write a C file holding
 * each module zlib-compressed under its JIT cache key
 * (h5fz_jit_digest_nvrtc, SHA-256), for h5fz_embedded_find. Needs NVRTC, no GPU.
 *
 *   h5fz_embed_kernels --chains FILE --out FILE.c [--archs all|LIST] [--jobs N] [--cache DIR] [--list]
 *
 * --archs LIST (compute capabilities, "90,80") plans for devices of those
 * architectures only, as the executor plans for such a GPU: the default
 * build passes the GPUs of the build machine (fusion/gpu/embed_archs.cmake),
 * packaging passes all (the default here: every arch of the registry).
 *
 * --cache DIR keeps each compressed module as DIR/KEY.z between builds, so
 * a rebuild after a change that leaves the kernels' sources alone (most
 * host code) compiles nothing; an entry that does not inflate to its size
 * is compiled again.
 *
 * Exit status 0 on success; 1 when a compile or write fails (the build
 * then fails: a kernel that does not compile is a bug to see at once).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "h5fz_planner.h"
#include "h5fz.h"
#include "h5fz_codegen.h"
#include "h5fz_device_query.h"
#include "h5fz_cuda.h"
#include "h5fz_jit.h"
#include "h5fz_jit_digest.h"
#include "h5fz_jit_embedded.h"
#include "h5fz_kernel_source.h"

#define MAX_CHAINS 64
#define MAX_TASKS 4096

typedef struct {
  char what[256]; /* "hopper sm_90 f32 delta zigzag bitpack" */
  char arch_name[24];
  char key[2 * H5FZ_SHA256_BYTES + 1];
  char *src;
  unsigned char *z; /* compressed image */
  size_t zbytes, image_bytes;
  int failed;
} task;

static task tasks[MAX_TASKS];
static int n_tasks, next_task, n_failed, n_cached;
static const char *cache_dir;
static pthread_mutex_t task_lock = PTHREAD_MUTEX_INITIALIZER;

static void usage(FILE *f)
{
  fprintf(f, "usage: h5fz_embed_kernels --chains FILE --out FILE.c [--archs all|LIST] [--jobs N] [--list]\n"
             "Compile the GPU kernels of every chain in FILE for every architecture of the\n"
             "kernel-class registry (--archs all, the default), or for GPUs of the compute\n"
             "capabilities in LIST (\"90,80\"), with NVRTC and write them as a C table\n"
             "(zlib-compressed modules keyed like the JIT cache). --list prints the modules\n"
             "without compiling.\n");
}

/* A device of compute capability arch/10.arch%10 that refuses no class for
 * its resources (the registry's classes decide), with this host's NVRTC. */
static void fake_device(int arch, const h5fz_device_desc *nvrtc, h5fz_device_desc *d)
{
  h5fz_device_none(d, NULL);
  d->present = 1;
  snprintf(d->name, sizeof d->name, "embedded sm_%d", arch);
  d->cc_major = arch / 10;
  d->cc_minor = arch % 10;
  d->sm_count = 100;
  d->max_threads_per_block = 1024;
  d->max_threads_per_sm = 2048;
  d->smem_per_block = 48 * 1024;
  d->smem_per_block_optin = 227 * 1024;
  d->smem_per_sm = 228 * 1024;
  d->regs_per_block = 65536;
  d->regs_per_sm = 65536; /* sm_70 .. sm_120; a device with other figures gets other source: a miss */
  d->mem_clock_khz = 1000000;
  d->mem_bus_bits = 4096;
  d->l2_bytes = 1 << 24;
  d->total_mem_bytes = 1LL << 34;
  d->driver_version = 0; /* unknown: not refused; the driver decides at load time */
  d->nvrtc_known = nvrtc->nvrtc_known;
  d->nvrtc_major = nvrtc->nvrtc_major;
  d->nvrtc_minor = nvrtc->nvrtc_minor;
  d->n_nvrtc_archs = nvrtc->n_nvrtc_archs;
  memcpy(d->nvrtc_archs, nvrtc->nvrtc_archs, sizeof d->nvrtc_archs);
}

static int nvrtc_has(const h5fz_device_desc *d, int arch)
{
  for (int i = 0; i < d->n_nvrtc_archs; i++)
    if (d->nvrtc_archs[i] == arch) return 1;
  return 0;
}

static int read_chains(const char *path, char chains[][200], int *n)
{
  FILE *f = fopen(path, "r");
  if (!f) {
    fprintf(stderr, "h5fz_embed_kernels: cannot read %s\n", path);
    return -1;
  }
  char line[256];
  *n = 0;
  while (fgets(line, sizeof line, f)) {
    line[strcspn(line, "\r\n")] = '\0';
    if (!line[0] || line[0] == '#') continue;
    if (*n == MAX_CHAINS) {
      fprintf(stderr, "h5fz_embed_kernels: more than %d chains in %s\n", MAX_CHAINS, path);
      fclose(f);
      return -1;
    }
    snprintf(chains[(*n)++], 200, "%.199s", strcmp(line, "default") ? line : "");
  }
  fclose(f);
  return 0;
}

/* Adds the task of (chain, dtype) planned on dev, unless its key is there. */
static int add_task(const h5fz_device_desc *dev, const h5fz_registry *reg, const char *chain, int f64)
{
  char text[300];
  h5fz_spec s;
  snprintf(text, sizeof text, "abs=1 %.200s dtype=%s", chain, f64 ? "f64" : "f32");
  if (h5fz_spec_parse(text, &s)) {
    fprintf(stderr, "h5fz_embed_kernels: chain '%s': %s\n", chain, h5fz_last_error());
    return -1;
  }
  h5fz_plan plan;
  h5fz_plan_options opts;
  h5fz_plan_options_default(&opts);
  if (h5fz_plan_make(dev, reg, s.ops, s.n_ops, &opts, &plan) != H5FZ_OK || plan.target == H5FZ_TARGET_CPU)
    return 0; /* no GPU class for this chain on this arch: the executor would use the CPU */
  h5fz_kernel_config kc = h5fz_kernel_config_default(&s, &plan, dev);
  char *src = NULL;
  size_t smem = 0;
  if (h5fz_kernel_source(&plan, &kc, &src, &smem)) {
    fprintf(stderr, "h5fz_embed_kernels: codegen of '%s': %s\n", text, h5fz_last_error());
    return -1;
  }
  unsigned char digest[H5FZ_SHA256_BYTES];
  char key[2 * H5FZ_SHA256_BYTES + 1];
  h5fz_jit_digest_nvrtc(src, plan.arch_name, plan.digest, dev->nvrtc_major, dev->nvrtc_minor, digest);
  h5fz_embedded_key_hex(digest, key);
  for (int i = 0; i < n_tasks; i++)
    if (!strcmp(tasks[i].key, key)) {
      free(src);
      return 0;
    }
  if (n_tasks == MAX_TASKS) {
    free(src);
    fprintf(stderr, "h5fz_embed_kernels: more than %d modules\n", MAX_TASKS);
    return -1;
  }
  task *t = &tasks[n_tasks++];
  memset(t, 0, sizeof *t);
  snprintf(t->what, sizeof t->what, "%.40s %.23s %s %.150s", plan.klass, plan.arch_name, f64 ? "f64" : "f32",
           chain[0] ? chain : "(default chain)");
  snprintf(t->arch_name, sizeof t->arch_name, "%s", plan.arch_name);
  memcpy(t->key, key, sizeof t->key);
  t->src = src;
  return 0;
}

/* The cache entry of t: 8 bytes of image size (little endian), then the
 * zlib stream. 1 when t->z now holds a module that inflates to that size. */
static int cache_load(task *t)
{
  char path[4200];
  if (!cache_dir) return 0;
  snprintf(path, sizeof path, "%s/%s.z", cache_dir, t->key);
  FILE *f = fopen(path, "rb");
  if (!f) return 0;
  unsigned char head[8];
  long size = -1;
  if (fread(head, 1, 8, f) == 8 && fseek(f, 0, SEEK_END) == 0) size = ftell(f) - 8;
  uint64_t n = 0;
  for (int k = 7; k >= 0; k--) n = n << 8 | head[k];
  unsigned char *z = size > 0 && n > 0 && n < (1u << 30) ? malloc((size_t)size) : NULL;
  unsigned char *img = z ? malloc((size_t)n) : NULL;
  uLongf got = (uLongf)n;
  int ok = img && fseek(f, 8, SEEK_SET) == 0 && fread(z, 1, (size_t)size, f) == (size_t)size &&
           uncompress(img, &got, z, (uLong)size) == Z_OK && got == n;
  fclose(f);
  free(img);
  if (!ok) {
    free(z);
    return 0;
  }
  t->z = z;
  t->zbytes = (size_t)size;
  t->image_bytes = (size_t)n;
  return 1;
}

static void cache_store(const task *t)
{
  char path[4200], tmp[4300];
  if (!cache_dir) return;
  snprintf(path, sizeof path, "%s/%s.z", cache_dir, t->key);
  snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
  FILE *f = fopen(tmp, "wb");
  if (!f) return;
  unsigned char head[8];
  for (int k = 0; k < 8; k++) head[k] = (unsigned char)((uint64_t)t->image_bytes >> (8 * k));
  int ok = fwrite(head, 1, 8, f) == 8 && fwrite(t->z, 1, t->zbytes, f) == t->zbytes;
  if (fclose(f) || !ok || rename(tmp, path)) unlink(tmp);
}

static void *worker(void *arg)
{
  (void)arg;
  for (;;) {
    pthread_mutex_lock(&task_lock);
    int i = next_task < n_tasks ? next_task++ : -1;
    pthread_mutex_unlock(&task_lock);
    if (i < 0) return NULL;
    task *t = &tasks[i];
    if (cache_load(t)) {
      pthread_mutex_lock(&task_lock);
      n_cached++;
      pthread_mutex_unlock(&task_lock);
      continue;
    }
    void *img = NULL;
    size_t n = 0;
    char *log = NULL;
    if (h5fz_jit_compile(t->src, t->arch_name, &img, &n, &log)) {
      pthread_mutex_lock(&task_lock);
      fprintf(stderr, "h5fz_embed_kernels: %s: %s\n%s\n", t->what, h5fz_last_error(), log ? log : "");
      n_failed++;
      pthread_mutex_unlock(&task_lock);
      t->failed = 1;
      free(log);
      continue;
    }
    uLongf zn = compressBound((uLong)n);
    t->z = malloc(zn);
    if (!t->z || compress2(t->z, &zn, img, (uLong)n, 9) != Z_OK) {
      t->failed = 1;
      pthread_mutex_lock(&task_lock);
      fprintf(stderr, "h5fz_embed_kernels: %s: zlib failed\n", t->what);
      n_failed++;
      pthread_mutex_unlock(&task_lock);
    }
    t->zbytes = zn;
    t->image_bytes = n;
    free(img);
    if (!t->failed) cache_store(t);
  }
}

/* Bytes as a C string literal: octal escapes for all but plain printable
 * characters ('?' escaped too: trigraphs), lines of about 100 bytes. */
static void put_bytes(FILE *f, const unsigned char *p, size_t n)
{
  fputs("  \"", f);
  int col = 0;
  for (size_t i = 0; i < n; i++) {
    unsigned c = p[i];
    if (c >= 0x20 && c < 0x7f && c != '\\' && c != '"' && c != '?') {
      fputc((int)c, f);
      col++;
    } else {
      fprintf(f, "\\%03o", c);
      col += 4;
    }
    if (col >= 100 && i + 1 < n) {
      fputs("\"\n  \"", f);
      col = 0;
    }
  }
  fputs("\"", f);
}

/* 1 when files a and b hold the same bytes. */
static int same_file(const char *a, const char *b)
{
  FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
  int same = fa && fb;
  while (same) {
    int ca = fgetc(fa), cb = fgetc(fb);
    if (ca != cb) same = 0;
    if (ca == EOF) break;
  }
  if (fa) fclose(fa);
  if (fb) fclose(fb);
  return same;
}

static int write_table(const char *path, int major, int minor)
{
  char tmp[4200];
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  FILE *f = fopen(tmp, "w");
  if (!f) {
    fprintf(stderr, "h5fz_embed_kernels: cannot write %s\n", tmp);
    return -1;
  }
  fprintf(f,
          "/* Generated by h5fz_embed_kernels (fusion/h5fz_embed_kernels.c) at build time: do not edit.\n"
          " * %d GPU modules compiled by NVRTC %d.%d, zlib-compressed, keyed like the JIT cache. */\n"
          "#include \"h5fz_jit_embedded.h\"\n\n",
          n_tasks, major, minor);
  for (int i = 0; i < n_tasks; i++) {
    fprintf(f, "/* %s */\nstatic const unsigned char z%d[] =\n", tasks[i].what, i);
    put_bytes(f, tasks[i].z, tasks[i].zbytes);
    fputs(";\n", f);
  }
  fprintf(f, "\nstatic const h5fz_embedded_module table[%d] = {\n", n_tasks > 0 ? n_tasks : 1);
  for (int i = 0; i < n_tasks; i++)
    fprintf(f, "  {\"%s\", \"%s\", \"%s\", z%d, %zu, %zu},\n", tasks[i].key, tasks[i].arch_name, tasks[i].what, i,
            tasks[i].zbytes, tasks[i].image_bytes);
  if (!n_tasks) fputs("  {0},\n", f);
  fprintf(f,
          "};\n\nconst h5fz_embedded_module *h5fz_embedded_modules(size_t *count, int *nvrtc_major, int *nvrtc_minor)\n"
          "{\n  *count = %d;\n  *nvrtc_major = %d;\n  *nvrtc_minor = %d;\n  return table;\n}\n",
          n_tasks, major, minor);
  if (fclose(f) == 0 && same_file(tmp, path)) { /* unchanged: keep the old one, its object need not be rebuilt */
    unlink(tmp);
    return 0;
  }
  if (rename(tmp, path)) {
    fprintf(stderr, "h5fz_embed_kernels: cannot write %s\n", path);
    unlink(tmp);
    return -1;
  }
  return 0;
}

/* The architectures to embed for (at most 64): every cubin arch of the
 * registry's classes this NVRTC can target (the others said on stderr),
 * and for a PTX class the lowest virtual arch it has from the class's
 * minimum. Returns their count. */
static int registry_archs(const h5fz_registry *reg, const h5fz_device_desc *host, int archs[64])
{
  int n_archs = 0;
  for (int c = 0; c < reg->n_classes; c++) {
    const h5fz_kernel_class *k = &reg->classes[c];
    if (k->target == H5FZ_TARGET_CUBIN)
      for (int a = 0; a < k->n_archs && n_archs < 64; a++) {
        if (nvrtc_has(host, k->archs[a]))
          archs[n_archs++] = k->archs[a];
        else
          fprintf(stderr, "h5fz_embed_kernels: NVRTC %d.%d cannot target sm_%d (class %s): not embedded\n",
                  host->nvrtc_major, host->nvrtc_minor, k->archs[a], k->name);
      }
    if (k->target == H5FZ_TARGET_PTX && n_archs < 64) {
      int a = k->min_arch;
      while (a < 200 && !nvrtc_has(host, a)) a++;
      if (a < 200) archs[n_archs++] = a;
    }
  }
  return n_archs;
}

/* The architectures of --archs LIST ("90,80": compute capability times
 * ten, 30..199, at most 64). Returns their count, or -1 with the reason on
 * stderr. */
static int listed_archs(const char *list, int archs[64])
{
  int n = 0;
  const char *p = list;
  while (*p) {
    char *end;
    long a = strtol(p, &end, 10);
    if (end == p || a < 30 || a > 199 || (*end && *end != ',') || n == 64) {
      fprintf(stderr, "h5fz_embed_kernels: --archs '%s': want 'all' or compute capabilities such as 90,80\n", list);
      return -1;
    }
    archs[n++] = (int)a;
    p = *end ? end + 1 : end;
  }
  if (!n) fprintf(stderr, "h5fz_embed_kernels: --archs is empty: want 'all' or compute capabilities such as 90,80\n");
  return n ? n : -1;
}

int main(int argc, char **argv)
{
  const char *chains_path = NULL, *out = NULL, *archs_arg = "all";
  int jobs = 0, list = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--chains") && i + 1 < argc)
      chains_path = argv[++i];
    else if (!strcmp(argv[i], "--out") && i + 1 < argc)
      out = argv[++i];
    else if (!strcmp(argv[i], "--archs") && i + 1 < argc)
      archs_arg = argv[++i];
    else if (!strcmp(argv[i], "--jobs") && i + 1 < argc)
      jobs = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--cache") && i + 1 < argc)
      cache_dir = argv[++i];
    else if (!strcmp(argv[i], "--list"))
      list = 1;
    else {
      usage(strcmp(argv[i], "--help") ? stderr : stdout);
      return strcmp(argv[i], "--help") ? 2 : 0;
    }
  }
  if (!chains_path || (!out && !list)) {
    usage(stderr);
    return 2;
  }
  static char chains[MAX_CHAINS][200];
  int n_chains = 0;
  if (read_chains(chains_path, chains, &n_chains)) return 1;
  const char *why;
  if (!h5fz_nvrtc_get(&why)) {
    fprintf(stderr, "h5fz_embed_kernels: %s (configure with -DH5FZ_EMBED_KERNELS=OFF to build without)\n", why);
    return 1;
  }
  h5fz_device_desc host;
  char err[256];
  h5fz_device_none(&host, "build host");
  if (h5fz_nvrtc_query(&host, err, sizeof err) || !host.nvrtc_known) {
    fprintf(stderr, "h5fz_embed_kernels: NVRTC query failed: %s\n", err);
    return 1;
  }
  /* the embedded registry, whatever H5FZ_REGISTRY says in the build's environment */
  h5fz_registry reg;
  if (h5fz_registry_parse(h5fz_registry_default_text(), "embedded", &reg, err, sizeof err)) {
    fprintf(stderr, "h5fz_embed_kernels: registry: %s\n", err);
    return 1;
  }
  int archs[64], n_archs = strcmp(archs_arg, "all") ? listed_archs(archs_arg, archs) : registry_archs(&reg, &host, archs);
  if (n_archs < 0) return 2;
  for (int a = 0; a < n_archs; a++) {
    h5fz_device_desc dev;
    fake_device(archs[a], &host, &dev);
    for (int c = 0; c < n_chains; c++)
      for (int f64 = 0; f64 < 2; f64++)
        if (add_task(&dev, &reg, chains[c], f64)) return 1;
  }
  if (list) {
    for (int i = 0; i < n_tasks; i++) printf("%s %s\n", tasks[i].key, tasks[i].what);
    return 0;
  }
  if (cache_dir) mkdir(cache_dir, 0755);
  if (jobs <= 0) jobs = (int)sysconf(_SC_NPROCESSORS_ONLN);
  if (jobs < 1) jobs = 1;
  if (jobs > 64) jobs = 64;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  pthread_t th[64];
  int started = 0;
  for (int j = 0; j < jobs; j++)
    if (pthread_create(&th[j], NULL, worker, NULL) == 0) started++;
  if (!started) worker(NULL);
  for (int j = 0; j < started; j++) pthread_join(th[j], NULL);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  if (n_failed) {
    fprintf(stderr, "h5fz_embed_kernels: %d of %d modules failed to compile\n", n_failed, n_tasks);
    return 1;
  }
  size_t raw = 0, packed = 0;
  for (int i = 0; i < n_tasks; i++) raw += tasks[i].image_bytes, packed += tasks[i].zbytes;
  if (write_table(out, host.nvrtc_major, host.nvrtc_minor)) return 1;
  printf("h5fz_embed_kernels: %d modules (%d chains x 2 types x %d archs, duplicates merged; %d from the "
         "build cache), %.1f MB, %.1f MB compressed, %.0f s on %d threads, NVRTC %d.%d\n",
         n_tasks, n_chains, n_archs, n_cached, raw / 1e6, packed / 1e6,
         (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9, started ? started : 1, host.nvrtc_major,
         host.nvrtc_minor);
  for (int i = 0; i < n_tasks; i++) {
    free(tasks[i].src);
    free(tasks[i].z);
  }
  return 0;
}
