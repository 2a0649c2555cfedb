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

#define BIND(lib, api, fn, why) bind(lib, (void **)&(api).fn, #fn, why, sizeof why)

static void load_cuda(void)
{
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    snprintf(cuda_why, sizeof cuda_why, "libcuda.so.1 not found (no NVIDIA driver): %s", dlerror());
    return;
  }
  /* these took no _v2 in the ABI we use, the rest resolve to their _v2 */
  int ok = BIND(lib, cuda, cuInit, cuda_why) && BIND(lib, cuda, cuDeviceGetCount, cuda_why) &&
           BIND(lib, cuda, cuDeviceGet, cuda_why) && BIND(lib, cuda, cuDeviceGetAttribute, cuda_why) &&
           BIND(lib, cuda, cuDevicePrimaryCtxRetain, cuda_why) && BIND(lib, cuda, cuCtxSetCurrent, cuda_why) &&
           BIND(lib, cuda, cuModuleLoadData, cuda_why) && BIND(lib, cuda, cuModuleGetFunction, cuda_why) &&
           BIND(lib, cuda, cuFuncSetAttribute, cuda_why) && BIND(lib, cuda, cuMemAlloc, cuda_why) &&
           BIND(lib, cuda, cuMemFree, cuda_why) && BIND(lib, cuda, cuMemAllocHost, cuda_why) &&
           BIND(lib, cuda, cuMemFreeHost, cuda_why) && BIND(lib, cuda, cuMemcpyHtoDAsync, cuda_why) &&
           BIND(lib, cuda, cuMemcpyDtoHAsync, cuda_why) && BIND(lib, cuda, cuMemsetD8Async, cuda_why) &&
           BIND(lib, cuda, cuStreamCreate, cuda_why) && BIND(lib, cuda, cuStreamSynchronize, cuda_why) &&
           BIND(lib, cuda, cuStreamWaitEvent, cuda_why) && BIND(lib, cuda, cuLaunchKernel, cuda_why) &&
           BIND(lib, cuda, cuGetErrorString, cuda_why) && BIND(lib, cuda, cuEventCreate, cuda_why) &&
           BIND(lib, cuda, cuEventRecord, cuda_why) && BIND(lib, cuda, cuEventSynchronize, cuda_why) &&
           BIND(lib, cuda, cuEventElapsedTime, cuda_why) && BIND(lib, cuda, cuEventDestroy, cuda_why) &&
           BIND(lib, cuda, cuPointerGetAttribute, cuda_why) && BIND(lib, cuda, cuDriverGetVersion, cuda_why) &&
           BIND(lib, cuda, cuDeviceGetName, cuda_why) && BIND(lib, cuda, cuDeviceTotalMem, cuda_why);
  /* cuEventElapsedTime_v2 changed meaning in CUDA 12.8; keep the original */
  void *elapsed = dlsym(lib, "cuEventElapsedTime");
  if (elapsed) *(void **)&cuda.cuEventElapsedTime = elapsed;
  if (ok) cuda_ok = &cuda;
}

static void load_nvrtc(void)
{
  static const char *names[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so", "/usr/local/cuda/lib64/libnvrtc.so"};
  void *lib = NULL;
  for (size_t i = 0; !lib && i < sizeof names / sizeof *names; i++) lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    snprintf(nvrtc_why, sizeof nvrtc_why, "libnvrtc not found (install the CUDA toolkit's NVRTC): %s", dlerror());
    return;
  }
  int ok = BIND(lib, nvrtc, nvrtcVersion, nvrtc_why) && BIND(lib, nvrtc, nvrtcCreateProgram, nvrtc_why) &&
           BIND(lib, nvrtc, nvrtcCompileProgram, nvrtc_why) && BIND(lib, nvrtc, nvrtcGetProgramLogSize, nvrtc_why) &&
           BIND(lib, nvrtc, nvrtcGetProgramLog, nvrtc_why) && BIND(lib, nvrtc, nvrtcGetCUBINSize, nvrtc_why) &&
           BIND(lib, nvrtc, nvrtcGetCUBIN, nvrtc_why) && BIND(lib, nvrtc, nvrtcGetPTXSize, nvrtc_why) &&
           BIND(lib, nvrtc, nvrtcGetPTX, nvrtc_why) && BIND(lib, nvrtc, nvrtcDestroyProgram, nvrtc_why) &&
           BIND(lib, nvrtc, nvrtcGetErrorString, nvrtc_why);
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
