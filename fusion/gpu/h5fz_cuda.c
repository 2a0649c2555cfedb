/* h5fz_cuda.c - dlopen the Driver API and NVRTC once, bind their symbols. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "h5fz_cuda.h"

static h5fz_cuda_api cuda;
static h5fz_nvrtc_api nvrtc;
static const h5fz_cuda_api *cuda_ok;
static const h5fz_nvrtc_api *nvrtc_ok;
static char cuda_why[256], nvrtc_why[256];
static pthread_once_t cuda_once = PTHREAD_ONCE_INIT, nvrtc_once = PTHREAD_ONCE_INIT;

/* Bind name (or name_v2 where the ABI moved) into *slot. */
static int bind(void *lib, void **slot, const char *name, char *why, size_t len)
{
  char v2[96];
  snprintf(v2, sizeof v2, "%s_v2", name);
  *slot = dlsym(lib, v2);
  if (!*slot) *slot = dlsym(lib, name);
  if (*slot) return 1;
  snprintf(why, len, "symbol %s missing from the library", name);
  return 0;
}

/* A symbol to bind: its name and the slot of the API table it fills. */
typedef struct {
  const char *name;
  void **slot;
} symbol;
#define SYM(api, fn)                                                                                                   \
  {                                                                                                                    \
#fn, (void **)&(api).fn                                                                                            \
  }

/* Bind every symbol of syms from lib, in order; 0 at the first missing
 * one (named in why). */
static int bind_all(void *lib, const symbol *syms, size_t n, char *why, size_t len)
{
  for (size_t i = 0; i < n; i++)
    if (!bind(lib, syms[i].slot, syms[i].name, why, len)) return 0;
  return 1;
}

/* The first of names that dlopen opens, or NULL with why saying
 * "<missing>: <dlerror>". */
static void *open_first(const char *const *names, size_t n, const char *missing, char *why, size_t len)
{
  void *lib = NULL;
  for (size_t i = 0; !lib && i < n; i++) lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
  if (!lib) snprintf(why, len, "%s: %s", missing, dlerror());
  return lib;
}

static void load_cuda(void)
{
  static const char *const names[] = {"libcuda.so.1"};
  void *lib = open_first(names, 1, "libcuda.so.1 not found (no NVIDIA driver)", cuda_why, sizeof cuda_why);
  if (!lib) return;
  /* these took no _v2 in the ABI we use, the rest resolve to their _v2 */
  const symbol syms[] = {SYM(cuda, cuInit),
                         SYM(cuda, cuDeviceGetCount),
                         SYM(cuda, cuDeviceGet),
                         SYM(cuda, cuDeviceGetAttribute),
                         SYM(cuda, cuDevicePrimaryCtxRetain),
                         SYM(cuda, cuCtxSetCurrent),
                         SYM(cuda, cuModuleLoadData),
                         SYM(cuda, cuModuleGetFunction),
                         SYM(cuda, cuFuncSetAttribute),
                         SYM(cuda, cuMemAlloc),
                         SYM(cuda, cuMemFree),
                         SYM(cuda, cuMemAllocHost),
                         SYM(cuda, cuMemFreeHost),
                         SYM(cuda, cuMemcpyHtoDAsync),
                         SYM(cuda, cuMemcpyDtoHAsync),
                         SYM(cuda, cuMemsetD8Async),
                         SYM(cuda, cuStreamCreate),
                         SYM(cuda, cuStreamSynchronize),
                         SYM(cuda, cuStreamWaitEvent),
                         SYM(cuda, cuLaunchKernel),
                         SYM(cuda, cuGetErrorString),
                         SYM(cuda, cuEventCreate),
                         SYM(cuda, cuEventRecord),
                         SYM(cuda, cuEventSynchronize),
                         SYM(cuda, cuEventElapsedTime),
                         SYM(cuda, cuEventDestroy),
                         SYM(cuda, cuPointerGetAttribute),
                         SYM(cuda, cuDriverGetVersion),
                         SYM(cuda, cuDeviceGetName),
                         SYM(cuda, cuDeviceTotalMem)};
  int ok = bind_all(lib, syms, sizeof syms / sizeof *syms, cuda_why, sizeof cuda_why);
  /* cuEventElapsedTime_v2 changed meaning in CUDA 12.8; keep the original */
  void *elapsed = dlsym(lib, "cuEventElapsedTime");
  if (elapsed) *(void **)&cuda.cuEventElapsedTime = elapsed;
  if (ok) cuda_ok = &cuda;
}

static void load_nvrtc(void)
{
  static const char *const names[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so",
                                      "/usr/local/cuda/lib64/libnvrtc.so"};
  void *lib = open_first(names, sizeof names / sizeof *names, "libnvrtc not found (install the CUDA toolkit's NVRTC)",
                         nvrtc_why, sizeof nvrtc_why);
  if (!lib) return;
  const symbol syms[] = {
      SYM(nvrtc, nvrtcVersion),           SYM(nvrtc, nvrtcCreateProgram), SYM(nvrtc, nvrtcCompileProgram),
      SYM(nvrtc, nvrtcGetProgramLogSize), SYM(nvrtc, nvrtcGetProgramLog), SYM(nvrtc, nvrtcGetCUBINSize),
      SYM(nvrtc, nvrtcGetCUBIN),          SYM(nvrtc, nvrtcGetPTXSize),    SYM(nvrtc, nvrtcGetPTX),
      SYM(nvrtc, nvrtcDestroyProgram),    SYM(nvrtc, nvrtcGetErrorString)};
  int ok = bind_all(lib, syms, sizeof syms / sizeof *syms, nvrtc_why, sizeof nvrtc_why);
  /* optional: only the device description asks for them */
  *(void **)&nvrtc.nvrtcGetNumSupportedArchs = dlsym(lib, "nvrtcGetNumSupportedArchs");
  *(void **)&nvrtc.nvrtcGetSupportedArchs = dlsym(lib, "nvrtcGetSupportedArchs");
  if (ok) nvrtc_ok = &nvrtc;
}

const h5fz_cuda_api *h5fz_cuda_get(const char **why)
{
  pthread_once(&cuda_once, load_cuda);
  if (why) *why = cuda_why;
  return cuda_ok;
}

const h5fz_nvrtc_api *h5fz_nvrtc_get(const char **why)
{
  pthread_once(&nvrtc_once, load_nvrtc);
  if (why) *why = nvrtc_why;
  return nvrtc_ok;
}

const char *h5fz_cuda_error_string(CUresult rc)
{
  const char *s = NULL;
  if (cuda_ok && cuda.cuGetErrorString(rc, &s) == 0 && s) return s;
  return "unknown CUDA error";
}
