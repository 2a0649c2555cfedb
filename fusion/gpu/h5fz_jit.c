/*
 * h5fz_jit.c - NVRTC compile and the two-level module cache.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "h5fz_codegen.h"
#include "h5fz_container.h"
#include "h5fz_internal.h"
#include "h5fz_jit.h"
#include "h5fz_jit_cache.h"
#include "h5fz_jit_digest.h"
#include "h5fz_jit_embedded.h"
#include "h5fz_planner.h"

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
  const char *opts[H5FZ_JIT_N_FIXED + 1];
  for (size_t i = 0; i < H5FZ_JIT_N_FIXED; i++) opts[i] = h5fz_jit_fixed_options[i];
  opts[H5FZ_JIT_N_FIXED] = arch_opt;
  r = nv->nvrtcCompileProgram(prog, (int)(H5FZ_JIT_N_FIXED + 1), opts);
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
    if (log)
      *log = l;
    else
      free(l);
  } else {
    size_t n = 0;
    r = cubin ? nv->nvrtcGetCUBINSize(prog, &n) : nv->nvrtcGetPTXSize(prog, &n);
    char *img = r ? NULL : malloc(n + 1);
    if (!img)
      rc = h5fz_fail(H5FZ_ERR_NOMEM, "cannot hold the %zu-byte compiled module", n);
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

/* ---- memory cache ------------------------------------------------------------------ */
#define MEM_SLOTS 64

static struct {
  CUcontext ctx; /* a module is loaded in one CUDA context */
  unsigned char digest[H5FZ_SHA256_BYTES];
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
  static const char *const lnd_names[7] = {H5FZ_KERNEL_LND_COST,  H5FZ_KERNEL_LND_CARRY, H5FZ_KERNEL_LND_XFIX,
                                           H5FZ_KERNEL_LND_ASUM,  H5FZ_KERNEL_LND_ASCAN, H5FZ_KERNEL_LNI_PASS,
                                           H5FZ_KERNEL_LNI_DEQUANT};
  CUfunction *lnd_fns[7] = {&out->lnd_cost, &out->lnd_carry, &out->lnd_xfix,   &out->lnd_asum,
                            &out->lnd_ascan, &out->lni_pass, &out->lni_dequant};
  for (int i = 0; i < 7; i++)
    if (cu->cuModuleGetFunction(lnd_fns[i], out->module, lnd_names[i])) *lnd_fns[i] = NULL;
  if (cu->cuModuleGetFunction(&out->huff_groups, out->module, H5FZ_KERNEL_HUFF_GROUPS)) out->huff_groups = NULL;
  /* the default chain's warp-fused pair, else the fast chain's, else none */
  if ((cu->cuModuleGetFunction(&out->encode_wf, out->module, H5FZ_KERNEL_ENCODE_WF) ||
       cu->cuModuleGetFunction(&out->decode_wf, out->module, H5FZ_KERNEL_DECODE_WF)) &&
      (cu->cuModuleGetFunction(&out->encode_wf, out->module, H5FZ_KERNEL_ENCODE_WFP) ||
       cu->cuModuleGetFunction(&out->decode_wf, out->module, H5FZ_KERNEL_DECODE_WFP)))
    out->encode_wf = out->decode_wf = NULL;
  return H5FZ_OK;
}

int h5fz_jit_get(const char *src, const char *arch_name, uint64_t digest, CUcontext ctx, h5fz_jit_module *out,
                 h5fz_jit_source *from, double *millis)
{
  double t0 = now_ms();
  unsigned char key[H5FZ_SHA256_BYTES];
  char path[700];
  h5fz_jit_digest(src, arch_name, digest, key);
  pthread_mutex_lock(&mem_lock);
  for (int i = 0; i < mem_used; i++)
    if (mem_cache[i].ctx == ctx && !memcmp(mem_cache[i].digest, key, sizeof key)) {
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
  int have_path = h5fz_jit_cache_path(key, path, sizeof path) == 0;
  if (rc && have_path) img = h5fz_jit_cache_load(path, key, &n);
  if (img) {
    rc = load_module(img, out);
    if (from) *from = H5FZ_JIT_DISK;
    free(img);
  }
  if (rc) { /* no entry, or one the driver refused: compile afresh */
    rc = h5fz_jit_compile(src, arch_name, &img, &n, NULL);
    if (!rc) {
      rc = load_module(img, out);
      if (!rc && have_path) h5fz_jit_cache_store(path, key, img, n);
      free(img);
    }
    if (from) *from = H5FZ_JIT_COMPILED;
  }
  if (!rc && mem_used < MEM_SLOTS) {
    mem_cache[mem_used].ctx = ctx;
    memcpy(mem_cache[mem_used].digest, key, sizeof key);
    mem_cache[mem_used].mod = *out;
    mem_used++;
  }
  pthread_mutex_unlock(&mem_lock);
  if (millis) *millis = now_ms() - t0;
  return rc;
}
