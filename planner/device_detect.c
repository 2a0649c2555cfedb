/*
 * device_detect.c - describe the real device through the CUDA Driver API and
 * the host's NVRTC, both opened at run time with dlopen (never linked).
 *
 * The few Driver API and NVRTC types and enum values used are declared here,
 * with the values of cuda.h / nvrtc.h (CUDA 11-13), so the planner builds on
 * machines without CUDA headers.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner_internal.h"

typedef int pl_CUresult;  /* CUresult: 0 = CUDA_SUCCESS */
typedef int pl_CUdevice;  /* CUdevice */
typedef int pl_nvrtcResult; /* nvrtcResult: 0 = NVRTC_SUCCESS */

/* CUdevice_attribute values (cuda.h) */
enum {
  PL_ATTR_MAX_THREADS_PER_BLOCK = 1,
  PL_ATTR_MAX_SHARED_MEMORY_PER_BLOCK = 8,
  PL_ATTR_MAX_REGISTERS_PER_BLOCK = 12,
  PL_ATTR_MULTIPROCESSOR_COUNT = 16,
  PL_ATTR_PCI_BUS_ID = 33,
  PL_ATTR_PCI_DEVICE_ID = 34,
  PL_ATTR_MEMORY_CLOCK_RATE = 36,      /* kHz */
  PL_ATTR_GLOBAL_MEMORY_BUS_WIDTH = 37, /* bits */
  PL_ATTR_L2_CACHE_SIZE = 38,
  PL_ATTR_MAX_THREADS_PER_MULTIPROCESSOR = 39,
  PL_ATTR_PCI_DOMAIN_ID = 50,
  PL_ATTR_COMPUTE_CAPABILITY_MAJOR = 75,
  PL_ATTR_COMPUTE_CAPABILITY_MINOR = 76,
  PL_ATTR_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR = 81,
  PL_ATTR_MAX_REGISTERS_PER_MULTIPROCESSOR = 82,
  PL_ATTR_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97
};

typedef struct {
  void *lib;
  pl_CUresult (*cuInit)(unsigned);
  pl_CUresult (*cuDriverGetVersion)(int *);
  pl_CUresult (*cuDeviceGetCount)(int *);
  pl_CUresult (*cuDeviceGet)(pl_CUdevice *, int);
  pl_CUresult (*cuDeviceGetName)(char *, int, pl_CUdevice);
  pl_CUresult (*cuDeviceGetAttribute)(int *, int, pl_CUdevice);
  pl_CUresult (*cuDeviceTotalMem)(size_t *, pl_CUdevice);
  pl_CUresult (*cuGetErrorString)(pl_CUresult, const char **);
} pl_cuda;

/* dlsym into a function pointer without a pedantic object->function cast */
#define PL_SYM(lib, dst, name) \
  (*(void **)(&(dst)) = dlsym((lib), (name)), (dst) != NULL)

static int cuda_open(pl_cuda *cu, char *why, size_t why_len) {
  memset(cu, 0, sizeof *cu);
  cu->lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (cu->lib == NULL) {
    pl_msg(why, why_len, "libcuda.so.1 not found: no NVIDIA driver");
    return H5FZ_PLAN_ERR_NODEVICE;
  }
  if (!PL_SYM(cu->lib, cu->cuInit, "cuInit") ||
      !PL_SYM(cu->lib, cu->cuDriverGetVersion, "cuDriverGetVersion") ||
      !PL_SYM(cu->lib, cu->cuDeviceGetCount, "cuDeviceGetCount") ||
      !PL_SYM(cu->lib, cu->cuDeviceGet, "cuDeviceGet") ||
      !PL_SYM(cu->lib, cu->cuDeviceGetName, "cuDeviceGetName") ||
      !PL_SYM(cu->lib, cu->cuDeviceGetAttribute, "cuDeviceGetAttribute") ||
      !PL_SYM(cu->lib, cu->cuDeviceTotalMem, "cuDeviceTotalMem_v2")) {
    pl_msg(why, why_len, "libcuda.so.1 lacks a Driver API symbol: %s",
           dlerror());
    dlclose(cu->lib);
    cu->lib = NULL;
    return H5FZ_PLAN_ERR_NODEVICE;
  }
  (void)PL_SYM(cu->lib, cu->cuGetErrorString, "cuGetErrorString");
  return H5FZ_PLAN_OK;
}

static const char *cu_err(const pl_cuda *cu, pl_CUresult r) {
  const char *s = NULL;
  if (cu->cuGetErrorString == NULL || cu->cuGetErrorString(r, &s) != 0 ||
      s == NULL)
    return "unknown error";
  return s;
}

/* PCIe link of the device from sysfs (Linux): max_link_speed "16.0 GT/s
 * PCIe" and current_link_width. The current speed is not used: GPUs lower it
 * when idle. Returns 0 and fills gen/width, or -1. */
static int pcie_from_sysfs(int domain, int bus, int dev, int *gen,
                           int *width) {
  static const double gts[7] = {0, 2.5, 5.0, 8.0, 16.0, 32.0, 64.0};
  char path[128], line[64];
  FILE *f;
  double speed = 0.0;
  int w = 0, g;
  snprintf(path, sizeof path,
           "/sys/bus/pci/devices/%04x:%02x:%02x.0/max_link_speed", domain, bus,
           dev);
  f = fopen(path, "r");
  if (f == NULL) return -1;
  if (fgets(line, sizeof line, f) == NULL || sscanf(line, "%lf", &speed) != 1)
    speed = 0.0;
  fclose(f);
  snprintf(path, sizeof path,
           "/sys/bus/pci/devices/%04x:%02x:%02x.0/current_link_width", domain,
           bus, dev);
  f = fopen(path, "r");
  if (f == NULL) return -1;
  if (fgets(line, sizeof line, f) == NULL || sscanf(line, "%d", &w) != 1) w = 0;
  fclose(f);
  for (g = 6; g >= 1; g--)
    if (speed >= gts[g] - 0.01) break;
  if (g < 1 || w <= 0) return -1;
  *gen = g;
  *width = w;
  return 0;
}

static int attr(const pl_cuda *cu, pl_CUdevice d, int which) {
  int v = 0;
  if (cu->cuDeviceGetAttribute(&v, which, d) != 0) return 0;
  return v;
}

static void read_attributes(const pl_cuda *cu, pl_CUdevice d,
                            h5fz_device_desc *out) {
  size_t mem = 0;
  int domain, bus, slot;
  out->cc_major = attr(cu, d, PL_ATTR_COMPUTE_CAPABILITY_MAJOR);
  out->cc_minor = attr(cu, d, PL_ATTR_COMPUTE_CAPABILITY_MINOR);
  out->sm_count = attr(cu, d, PL_ATTR_MULTIPROCESSOR_COUNT);
  out->max_threads_per_block = attr(cu, d, PL_ATTR_MAX_THREADS_PER_BLOCK);
  out->max_threads_per_sm = attr(cu, d, PL_ATTR_MAX_THREADS_PER_MULTIPROCESSOR);
  out->smem_per_block = attr(cu, d, PL_ATTR_MAX_SHARED_MEMORY_PER_BLOCK);
  out->smem_per_block_optin =
      attr(cu, d, PL_ATTR_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  if (out->smem_per_block_optin == 0)
    out->smem_per_block_optin = out->smem_per_block;
  out->smem_per_sm = attr(cu, d, PL_ATTR_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
  out->regs_per_block = attr(cu, d, PL_ATTR_MAX_REGISTERS_PER_BLOCK);
  out->regs_per_sm = attr(cu, d, PL_ATTR_MAX_REGISTERS_PER_MULTIPROCESSOR);
  out->mem_clock_khz = attr(cu, d, PL_ATTR_MEMORY_CLOCK_RATE);
  out->mem_bus_bits = attr(cu, d, PL_ATTR_GLOBAL_MEMORY_BUS_WIDTH);
  out->l2_bytes = attr(cu, d, PL_ATTR_L2_CACHE_SIZE);
  if (cu->cuDeviceTotalMem(&mem, d) == 0) out->total_mem_bytes = (int64_t)mem;
  domain = attr(cu, d, PL_ATTR_PCI_DOMAIN_ID);
  bus = attr(cu, d, PL_ATTR_PCI_BUS_ID);
  slot = attr(cu, d, PL_ATTR_PCI_DEVICE_ID);
  if (pcie_from_sysfs(domain, bus, slot, &out->pcie_gen, &out->pcie_width) ==
      0) {
    out->pcie_source = H5FZ_PCIE_SYSFS;
  } else {
    out->pcie_gen = 4;
    out->pcie_width = 16;
    out->pcie_source = H5FZ_PCIE_ASSUMED;
    pl_copy(out->note, sizeof out->note,
            "PCIe link unknown (the driver does not report it and sysfs "
            "could not be read): gen 4 x16 assumed");
  }
}

static int detect_gpu(int ordinal, h5fz_device_desc *out, char *why,
                      size_t why_len) {
  pl_cuda cu;
  pl_CUdevice d;
  pl_CUresult r;
  int count = 0, rc = cuda_open(&cu, why, why_len);
  if (rc != H5FZ_PLAN_OK) return rc;
  rc = H5FZ_PLAN_ERR_NODEVICE;
  if ((r = cu.cuInit(0)) != 0) {
    pl_msg(why, why_len, "cuInit failed: %s (error %d)", cu_err(&cu, r), r);
  } else if ((r = cu.cuDeviceGetCount(&count)) != 0 || count == 0) {
    pl_msg(why, why_len, "the driver reports no CUDA device");
  } else if (ordinal < 0 || ordinal >= count) {
    pl_msg(why, why_len, "no GPU number %d (the driver reports %d)", ordinal,
           count);
  } else if ((r = cu.cuDeviceGet(&d, ordinal)) != 0) {
    pl_msg(why, why_len, "cuDeviceGet(%d) failed: %s", ordinal, cu_err(&cu, r));
  } else {
    out->present = 1;
    if (cu.cuDeviceGetName(out->name, (int)sizeof out->name, d) != 0)
      pl_copy(out->name, sizeof out->name, "unnamed GPU");
    if (cu.cuDriverGetVersion(&out->driver_version) != 0)
      out->driver_version = 0;
    read_attributes(&cu, d, out);
    pl_copy(out->source, sizeof out->source, "driver");
    rc = H5FZ_PLAN_OK;
  }
  /* libcuda stays loaded: unloading a driver library is not supported */
  return rc;
}

int h5fz_device_detect(int ordinal, h5fz_device_desc *out, char *why,
                       size_t why_len) {
  char reason[H5FZ_PLAN_REASON_MAX];
  int rc;
  if (out == NULL) {
    pl_msg(why, why_len, "NULL argument");
    return H5FZ_PLAN_ERR_ARG;
  }
  memset(out, 0, sizeof *out);
  reason[0] = '\0';
  rc = detect_gpu(ordinal, out, reason, sizeof reason);
  if (rc != H5FZ_PLAN_OK) {
    h5fz_device_none(out, reason);
    pl_copy(out->source, sizeof out->source, "driver");
    pl_msg(why, why_len, "%s", reason);
  } else if (why != NULL && why_len > 0) {
    why[0] = '\0';
  }
  (void)h5fz_nvrtc_query(out, NULL, 0);
  return rc;
}

/* ---- NVRTC ------------------------------------------------------------- */

static void *nvrtc_open(void) {
  static const char *names[] = {"libnvrtc.so.13", "libnvrtc.so",
                                "/usr/local/cuda/lib64/libnvrtc.so"};
  size_t i;
  for (i = 0; i < sizeof names / sizeof names[0]; i++) {
    void *h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (h != NULL) return h;
  }
  return NULL;
}

static int nvrtc_fail(h5fz_device_desc *dev, char *why, size_t why_len,
                      const char *reason) {
  dev->nvrtc_known = 0;
  dev->n_nvrtc_archs = 0;
  pl_copy(dev->nvrtc_why, sizeof dev->nvrtc_why, reason);
  pl_msg(why, why_len, "%s", reason);
  return H5FZ_PLAN_ERR_NODEVICE;
}

int h5fz_nvrtc_query(h5fz_device_desc *dev, char *why, size_t why_len) {
  pl_nvrtcResult (*version)(int *, int *);
  pl_nvrtcResult (*num_archs)(int *);
  pl_nvrtcResult (*get_archs)(int *);
  int n = 0, *archs, i;
  void *lib;
  if (dev == NULL) return H5FZ_PLAN_ERR_ARG;
  lib = nvrtc_open();
  if (lib == NULL)
    return nvrtc_fail(dev, why, why_len,
                      "libnvrtc not found (tried libnvrtc.so.13, libnvrtc.so, "
                      "/usr/local/cuda/lib64/libnvrtc.so)");
  if (!PL_SYM(lib, version, "nvrtcVersion") ||
      !PL_SYM(lib, num_archs, "nvrtcGetNumSupportedArchs") ||
      !PL_SYM(lib, get_archs, "nvrtcGetSupportedArchs"))
    return nvrtc_fail(dev, why, why_len,
                      "libnvrtc lacks nvrtcGetSupportedArchs (NVRTC < 11.2)");
  if (version(&dev->nvrtc_major, &dev->nvrtc_minor) != 0 ||
      num_archs(&n) != 0 || n <= 0 || n > 1024)
    return nvrtc_fail(dev, why, why_len, "NVRTC version/arch query failed");
  archs = malloc((size_t)n * sizeof *archs);
  if (archs == NULL) return nvrtc_fail(dev, why, why_len, "out of memory");
  if (get_archs(archs) != 0) {
    free(archs);
    return nvrtc_fail(dev, why, why_len, "nvrtcGetSupportedArchs failed");
  }
  /* keep the newest archs if NVRTC ever lists more than we hold */
  i = n > H5FZ_PLAN_MAX_ARCHS ? n - H5FZ_PLAN_MAX_ARCHS : 0;
  dev->n_nvrtc_archs = 0;
  for (; i < n; i++) dev->nvrtc_archs[dev->n_nvrtc_archs++] = archs[i];
  free(archs);
  dev->nvrtc_known = 1;
  dev->nvrtc_why[0] = '\0';
  if (why != NULL && why_len > 0) why[0] = '\0';
  /* NVRTC stays loaded for the process, as the JIT will use it */
  return H5FZ_PLAN_OK;
}
