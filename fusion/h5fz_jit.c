/*
 * h5fz_jit.c - NVRTC compile and the two-level module cache.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "h5fz_codegen.h"
#include "h5fz_container.h"
#include "h5fz_internal.h"
#include "h5fz_jit.h"
#include "h5fz_jit_embedded.h"
#include "../planner/h5fz_planner.h"

/* Options that keep GPU arithmetic identical to the CPU's (docs/format.md). */
static const char *const fixed_options[] = {"--fmad=false", "--prec-div=true", "--prec-sqrt=true",
                                            "--ftz=false", "-default-device", "--std=c++17"};
#define N_FIXED (sizeof fixed_options / sizeof fixed_options[0])

static double now_ms(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

int h5fz_jit_compile(const char *src, const char *arch_name, void **image, size_t *size, char **log)
{
  const char *why;
  const h5fz_nvrtc_api *nv = h5fz_nvrtc_get(&why);
  if (log) *log = NULL;
  if (!nv) return h5fz_fail(H5FZ_ERR_DEVICE, "%s", why);
  size_t n_headers;
  const char *const *names, *const *texts;
  h5fz_embedded_headers(&n_headers, &names, &texts);
  nvrtcProgram prog;
  nvrtcResult r = nv->nvrtcCreateProgram(&prog, src, "h5fz_generated.cu", (int)n_headers, texts, names);
  if (r) return h5fz_fail(H5FZ_ERR_DEVICE, "nvrtcCreateProgram: %s", nv->nvrtcGetErrorString(r));
  char arch_opt[64];
  snprintf(arch_opt, sizeof arch_opt, "--gpu-architecture=%s", arch_name);
  const char *opts[N_FIXED + 1];
  for (size_t i = 0; i < N_FIXED; i++) opts[i] = fixed_options[i];
  opts[N_FIXED] = arch_opt;
  r = nv->nvrtcCompileProgram(prog, (int)(N_FIXED + 1), opts);
  int cubin = strncmp(arch_name, "sm_", 3) == 0;
  int rc = H5FZ_OK;
  if (r) {
    size_t ls = 0;
    nv->nvrtcGetProgramLogSize(prog, &ls);
    char *l = malloc(ls + 1);
    if (l) {
      nv->nvrtcGetProgramLog(prog, l);
      l[ls] = '\0';
    }
    rc = h5fz_fail(H5FZ_ERR_DEVICE, "NVRTC could not compile the generated kernel for %s: %s%s%.300s", arch_name,
                   nv->nvrtcGetErrorString(r), l ? "\n" : "", l ? l : "");
    if (log) *log = l;
    else free(l);
  } else {
    size_t n = 0;
    r = cubin ? nv->nvrtcGetCUBINSize(prog, &n) : nv->nvrtcGetPTXSize(prog, &n);
    char *img = r ? NULL : malloc(n + 1);
    if (!img) rc = h5fz_fail(H5FZ_ERR_NOMEM, "cannot hold the %zu-byte compiled module", n);
    else if ((r = cubin ? nv->nvrtcGetCUBIN(prog, img) : nv->nvrtcGetPTX(prog, img))) {
      free(img);
      rc = h5fz_fail(H5FZ_ERR_DEVICE, "NVRTC: %s", nv->nvrtcGetErrorString(r));
    } else {
      *image = img;
      *size = n;
    }
  }
  nv->nvrtcDestroyProgram(&prog);
  return rc;
}

/* ---- keys -------------------------------------------------------------------- */

static uint64_t fnv1a(uint64_t h, const void *data, size_t n)
{
  const unsigned char *p = data;
  for (size_t i = 0; i < n; i++) {
    h ^= p[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

void h5fz_jit_key(const char *src, const char *arch_name, uint64_t digest, char hex[33])
{
  int major = 0, minor = 0;
  const h5fz_nvrtc_api *nv = h5fz_nvrtc_get(NULL);
  if (nv) nv->nvrtcVersion(&major, &minor);
  h5fz_jit_key_nvrtc(src, arch_name, digest, major, minor, hex);
}

void h5fz_jit_key_nvrtc(const char *src, const char *arch_name, uint64_t digest, int major, int minor, char hex[33])
{
  /* two FNV-1a streams with different seeds make a 128-bit key */
  uint64_t h[2] = {0xcbf29ce484222325ull, 0x84222325cbf29ce4ull};
  size_t n_headers;
  const char *const *names, *const *texts;
  h5fz_embedded_headers(&n_headers, &names, &texts);
  for (int k = 0; k < 2; k++) {
    h[k] = fnv1a(h[k], src, strlen(src) + 1);
    h[k] = fnv1a(h[k], arch_name, strlen(arch_name) + 1);
    h[k] = fnv1a(h[k], &digest, sizeof digest);
    h[k] = fnv1a(h[k], &major, sizeof major);
    h[k] = fnv1a(h[k], &minor, sizeof minor);
    for (size_t i = 0; i < N_FIXED; i++) h[k] = fnv1a(h[k], fixed_options[i], strlen(fixed_options[i]) + 1);
    for (size_t i = 0; i < n_headers; i++) h[k] = fnv1a(h[k], texts[i], strlen(texts[i]));
  }
  snprintf(hex, 33, "%016llx%016llx", (unsigned long long)h[0], (unsigned long long)h[1]);
}

/* ---- disk cache ---------------------------------------------------------------- */
#define DISK_MAGIC "H5FZJIT1"
#define DISK_HEADER 48u /* magic 8, key 32, image bytes 4, crc32 4 */

static int cache_path(const char *key, char *path, size_t len)
{
  char dir[512];
  if (h5fz_planner_cache_dir(dir, sizeof dir)) return -1;
  int n = snprintf(path, len, "%s/jit/%s.bin", dir, key);
  return n > 0 && (size_t)n < len ? 0 : -1;
}

static void mkdir_parents(const char *path)
{
  char tmp[800];
  if (strlen(path) >= sizeof tmp) return;
  memcpy(tmp, path, strlen(path) + 1);
  for (char *p = tmp + 1; *p; p++)
    if (*p == '/') {
      *p = '\0';
      mkdir(tmp, 0755);
      *p = '/';
    }
}

/* The image of a valid entry, or NULL (missing, short, wrong key or crc). */
static void *disk_load(const char *path, const char *key, size_t *size)
{
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  unsigned char head[DISK_HEADER];
  void *img = NULL;
  if (fread(head, 1, DISK_HEADER, f) == DISK_HEADER && !memcmp(head, DISK_MAGIC, 8) && !memcmp(head + 8, key, 32)) {
    uint32_t n = h5fz_get_u32(head + 40), crc = h5fz_get_u32(head + 44);
    img = n ? malloc(n + 1) : NULL;
    if (img && (fread(img, 1, n, f) != n || fgetc(f) != EOF || h5fz_checksum(img, n) != crc)) {
      free(img);
      img = NULL;
    }
    *size = n;
  }
  fclose(f);
  return img;
}

/* Write atomically: a private temporary file, then rename over the entry, so
 * concurrent processes see either no entry or a whole one. */
static void disk_store(const char *path, const char *key, const void *img, size_t n)
{
  char tmp[800];
  if (snprintf(tmp, sizeof tmp, "%.700s.tmp.%ld.%lx", path, (long)getpid(), (unsigned long)pthread_self()) >=
      (int)sizeof tmp)
    return;
  mkdir_parents(path);
  int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0644);
  if (fd < 0) return;
  unsigned char head[DISK_HEADER];
  memcpy(head, DISK_MAGIC, 8);
  memcpy(head + 8, key, 32);
  h5fz_put_u32(head + 40, (uint32_t)n);
  h5fz_put_u32(head + 44, h5fz_checksum(img, n));
  int ok = write(fd, head, DISK_HEADER) == (ssize_t)DISK_HEADER && write(fd, img, n) == (ssize_t)n;
  ok = close(fd) == 0 && ok;
  if (!ok || rename(tmp, path)) unlink(tmp);
}

/* ---- memory cache ------------------------------------------------------------------ */
#define MEM_SLOTS 64

static struct {
  char key[33];
  h5fz_jit_module mod;
} mem_cache[MEM_SLOTS];
static int mem_used;
static pthread_mutex_t mem_lock = PTHREAD_MUTEX_INITIALIZER;

static int load_module(const void *img, h5fz_jit_module *out)
{
  const h5fz_cuda_api *cu = h5fz_cuda_get(NULL);
  CUresult r = cu->cuModuleLoadData(&out->module, img);
  if (r) return h5fz_fail(H5FZ_ERR_DEVICE, "cuModuleLoadData: %s", h5fz_cuda_error_string(r));
  if ((r = cu->cuModuleGetFunction(&out->encode, out->module, H5FZ_KERNEL_ENCODE)) ||
      (r = cu->cuModuleGetFunction(&out->decode, out->module, H5FZ_KERNEL_DECODE)) ||
      (r = cu->cuModuleGetFunction(&out->tail_reduce, out->module, H5FZ_KERNEL_TAIL_REDUCE)) ||
      (r = cu->cuModuleGetFunction(&out->tail_scan, out->module, H5FZ_KERNEL_TAIL_SCAN)) ||
      (r = cu->cuModuleGetFunction(&out->tail_pack, out->module, H5FZ_KERNEL_TAIL_PACK)) ||
      (r = cu->cuModuleGetFunction(&out->tail_gather, out->module, H5FZ_KERNEL_TAIL_GATHER)))
    return h5fz_fail(H5FZ_ERR_DEVICE, "cuModuleGetFunction: %s", h5fz_cuda_error_string(r));
  /* the dataset API's batch kernels (device_ops/h5fz_gpu_batch.h), both widths */
  static const char *const batch[5] = {"h5fz_gather_", "h5fz_scatter_", "h5fz_fill_", "h5fz_patch_", "h5fz_range_"};
  CUfunction *slots[5] = {out->gather, out->scatter, out->fill, out->patch, out->range};
  for (int k = 0; k < 5; k++)
    for (int w = 0; w < 2; w++) {
      char name[40];
      snprintf(name, sizeof name, "%s%s", batch[k], w ? "64" : "32");
      if ((r = cu->cuModuleGetFunction(&slots[k][w], out->module, name)))
        return h5fz_fail(H5FZ_ERR_DEVICE, "cuModuleGetFunction(%s): %s", name, h5fz_cuda_error_string(r));
    }
  /* present only in the module of a chain with lorenzo_nd */
  static const char *const lnd_names[6] = {H5FZ_KERNEL_LND_COST, H5FZ_KERNEL_LND_CARRY, H5FZ_KERNEL_LND_XFIX,
                                           H5FZ_KERNEL_LND_YSCAN, H5FZ_KERNEL_LND_ZSCAN, H5FZ_KERNEL_LND_DEQUANT};
  CUfunction *lnd_fns[6] = {&out->lnd_cost, &out->lnd_carry, &out->lnd_xfix,
                            &out->lnd_yscan, &out->lnd_zscan, &out->lnd_dequant};
  for (int i = 0; i < 6; i++)
    if (cu->cuModuleGetFunction(lnd_fns[i], out->module, lnd_names[i])) *lnd_fns[i] = NULL;
  if (cu->cuModuleGetFunction(&out->encode_wf, out->module, H5FZ_KERNEL_ENCODE_WF) ||
      cu->cuModuleGetFunction(&out->decode_wf, out->module, H5FZ_KERNEL_DECODE_WF))
    out->encode_wf = out->decode_wf = NULL;
  return H5FZ_OK;
}

int h5fz_jit_get(const char *src, const char *arch_name, uint64_t digest, h5fz_jit_module *out,
                 h5fz_jit_source *from, double *millis)
{
  double t0 = now_ms();
  char key[33], path[700];
  h5fz_jit_key(src, arch_name, digest, key);
  pthread_mutex_lock(&mem_lock);
  for (int i = 0; i < mem_used; i++)
    if (!strcmp(mem_cache[i].key, key)) {
      *out = mem_cache[i].mod;
      pthread_mutex_unlock(&mem_lock);
      if (from) *from = H5FZ_JIT_MEMORY;
      if (millis) *millis = now_ms() - t0;
      return H5FZ_OK;
    }
  int rc = H5FZ_ERR_DEVICE;
  size_t n = 0;
  /* compiled at build time for this very source (docs/gpu.md): no NVRTC, no disk */
  void *img = h5fz_embedded_find(src, arch_name, digest, &n);
  if (img) {
    rc = load_module(img, out);
    if (from) *from = H5FZ_JIT_EMBEDDED;
    free(img);
    img = NULL;
  }
  int have_path = cache_path(key, path, sizeof path) == 0;
  if (rc && have_path) img = disk_load(path, key, &n);
  if (img) {
    rc = load_module(img, out);
    if (from) *from = H5FZ_JIT_DISK;
    free(img);
  }
  if (rc) { /* no entry, or one the driver refused: compile afresh */
    rc = h5fz_jit_compile(src, arch_name, &img, &n, NULL);
    if (!rc) {
      rc = load_module(img, out);
      if (!rc && have_path) disk_store(path, key, img, n);
      free(img);
    }
    if (from) *from = H5FZ_JIT_COMPILED;
  }
  if (!rc && mem_used < MEM_SLOTS) {
    memcpy(mem_cache[mem_used].key, key, 33);
    mem_cache[mem_used].mod = *out;
    mem_used++;
  }
  pthread_mutex_unlock(&mem_lock);
  if (millis) *millis = now_ms() - t0;
  return rc;
}
