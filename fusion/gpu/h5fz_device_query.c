/*
 * h5fz_device_query.c - the planner's device description filled from the
 * driver and NVRTC through h5fz_cuda.c (the only place that opens them),
 * plus the PCIe link from sysfs, which the driver does not report.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h5fz_cuda.h"
#include "h5fz_device_query.h"
#include "h5fz_fail.h"

/* The CUdevice_attribute values (cuda.h, CUDA 11-13) of the PCI address,
 * which read_pcie looks up in sysfs. */
enum { ATTR_PCI_BUS_ID = 33, ATTR_PCI_DEVICE_ID = 34, ATTR_PCI_DOMAIN_ID = 50 };

/* The fields of the description the driver fills straight from an
 * attribute: one row a field, its CUdevice_attribute value (cuda.h, CUDA
 * 11-13) beside it, so a new field is one line; wide: an int64_t field (the
 * others are int). */
#define FIELD(f) offsetof(h5fz_device_desc, f), sizeof(((h5fz_device_desc *)0)->f) == 8
static const struct {
  int attr;
  size_t offset;
  int wide;
} attr_fields[] = {
    {75, FIELD(cc_major)},             /* COMPUTE_CAPABILITY_MAJOR */
    {76, FIELD(cc_minor)},             /* COMPUTE_CAPABILITY_MINOR */
    {16, FIELD(sm_count)},             /* MULTIPROCESSOR_COUNT */
    {1, FIELD(max_threads_per_block)}, /* MAX_THREADS_PER_BLOCK */
    {39, FIELD(max_threads_per_sm)},   /* MAX_THREADS_PER_MULTIPROCESSOR */
    {8, FIELD(smem_per_block)},        /* MAX_SHARED_MEMORY_PER_BLOCK */
    {97, FIELD(smem_per_block_optin)}, /* MAX_SHARED_MEMORY_PER_BLOCK_OPTIN (0: no opt-in, see below) */
    {81, FIELD(smem_per_sm)},          /* MAX_SHARED_MEMORY_PER_MULTIPROCESSOR */
    {12, FIELD(regs_per_block)},       /* MAX_REGISTERS_PER_BLOCK */
    {82, FIELD(regs_per_sm)},          /* MAX_REGISTERS_PER_MULTIPROCESSOR */
    {36, FIELD(mem_clock_khz)},        /* MEMORY_CLOCK_RATE, kHz */
    {37, FIELD(mem_bus_bits)},         /* GLOBAL_MEMORY_BUS_WIDTH, bits */
    {38, FIELD(l2_bytes)},             /* L2_CACHE_SIZE */
};
#undef FIELD

/* printf into why (when there is room for it). */
static void say(char *why, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(char *why, size_t len, const char *fmt, ...)
{
  if (!why || !len) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, len, fmt, ap);
  va_end(ap);
}

/* PCIe link of the device from sysfs (Linux): max_link_speed "16.0 GT/s
 * PCIe" and current_link_width. The current speed is not used: GPUs lower it
 * when idle. Returns 0 and fills gen/width, or -1. */
static int pcie_from_sysfs(int domain, int bus, int dev, int *gen, int *width)
{
  static const double gts[7] = {0, 2.5, 5.0, 8.0, 16.0, 32.0, 64.0};
  char path[128], line[64];
  double speed = 0.0;
  int w = 0, g;
  snprintf(path, sizeof path, "/sys/bus/pci/devices/%04x:%02x:%02x.0/max_link_speed", domain, bus, dev);
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  if (!fgets(line, sizeof line, f) || sscanf(line, "%lf", &speed) != 1) speed = 0.0;
  fclose(f);
  snprintf(path, sizeof path, "/sys/bus/pci/devices/%04x:%02x:%02x.0/current_link_width", domain, bus, dev);
  f = fopen(path, "r");
  if (!f) return -1;
  if (!fgets(line, sizeof line, f) || sscanf(line, "%d", &w) != 1) w = 0;
  fclose(f);
  for (g = 6; g >= 1; g--)
    if (speed >= gts[g] - 0.01) break;
  if (g < 1 || w <= 0) return -1;
  *gen = g;
  *width = w;
  return 0;
}

static int attr(const h5fz_cuda_api *cu, CUdevice d, int which)
{
  int v = 0;
  return cu->cuDeviceGetAttribute(&v, which, d) ? 0 : v;
}

static void read_pcie(const h5fz_cuda_api *cu, CUdevice d, h5fz_device_desc *out)
{
  int domain = attr(cu, d, ATTR_PCI_DOMAIN_ID), bus = attr(cu, d, ATTR_PCI_BUS_ID),
      slot = attr(cu, d, ATTR_PCI_DEVICE_ID);
  if (pcie_from_sysfs(domain, bus, slot, &out->pcie_gen, &out->pcie_width) == 0) {
    out->pcie_source = H5FZ_PCIE_SYSFS;
    return;
  }
  out->pcie_gen = 4;
  out->pcie_width = 16;
  out->pcie_source = H5FZ_PCIE_ASSUMED;
  snprintf(out->note, sizeof out->note, "%s",
           "PCIe link unknown (the driver does not report it and sysfs could not be read): gen 4 x16 assumed");
}

static void read_attributes(const h5fz_cuda_api *cu, CUdevice d, h5fz_device_desc *out)
{
  size_t mem = 0;
  for (size_t i = 0; i < sizeof attr_fields / sizeof attr_fields[0]; i++) {
    char *field = (char *)out + attr_fields[i].offset;
    int v = attr(cu, d, attr_fields[i].attr);
    if (attr_fields[i].wide)
      *(int64_t *)(void *)field = v;
    else
      *(int *)(void *)field = v;
  }
  if (out->smem_per_block_optin == 0) out->smem_per_block_optin = out->smem_per_block;
  if (cu->cuDeviceTotalMem(&mem, d) == 0) out->total_mem_bytes = (int64_t)mem;
  read_pcie(cu, d, out);
}

static int detect_gpu(int ordinal, h5fz_device_desc *out, char *why, size_t why_len)
{
  const char *bind_why = "";
  const h5fz_cuda_api *cu = h5fz_cuda_get(&bind_why);
  if (!cu) {
    /* the planner's words for the usual case; the binding's otherwise */
    if (!strncmp(bind_why, "libcuda.so.1 not found", 22))
      say(why, why_len, "libcuda.so.1 not found: no NVIDIA driver");
    else
      say(why, why_len, "libcuda.so.1: %s", bind_why);
    return H5FZ_ERR_DEVICE;
  }
  CUdevice d;
  CUresult r;
  int count = 0;
  if ((r = cu->cuInit(0)) != 0) {
    say(why, why_len, "cuInit failed: %s (error %d)", h5fz_cuda_error_string(r), r);
  } else if ((r = cu->cuDeviceGetCount(&count)) != 0 || count == 0) {
    say(why, why_len, "the driver reports no CUDA device");
  } else if (ordinal < 0 || ordinal >= count) {
    say(why, why_len, "no GPU number %d (the driver reports %d)", ordinal, count);
  } else if ((r = cu->cuDeviceGet(&d, ordinal)) != 0) {
    say(why, why_len, "cuDeviceGet(%d) failed: %s", ordinal, h5fz_cuda_error_string(r));
  } else {
    out->present = 1;
    if (cu->cuDeviceGetName(out->name, (int)sizeof out->name, d) != 0)
      snprintf(out->name, sizeof out->name, "unnamed GPU");
    if (cu->cuDriverGetVersion(&out->driver_version) != 0) out->driver_version = 0;
    read_attributes(cu, d, out);
    snprintf(out->source, sizeof out->source, "driver");
    return H5FZ_OK;
  }
  return H5FZ_ERR_DEVICE;
}

int h5fz_device_detect(int ordinal, h5fz_device_desc *out, char *why, size_t why_len)
{
  if (!out) {
    say(why, why_len, "NULL argument");
    return H5FZ_ERR_ARG;
  }
  char reason[H5FZ_PLAN_REASON_MAX] = "";
  memset(out, 0, sizeof *out);
  int rc = detect_gpu(ordinal, out, reason, sizeof reason);
  if (rc != H5FZ_OK) {
    h5fz_device_none(out, reason);
    snprintf(out->source, sizeof out->source, "driver");
    say(why, why_len, "%s", reason);
    h5fz_fail(rc, "%s", reason);
  } else {
    say(why, why_len, "%s", "");
  }
  (void)h5fz_nvrtc_query(out, NULL, 0);
  return rc;
}

static int nvrtc_fail(h5fz_device_desc *dev, char *why, size_t why_len, const char *reason)
{
  dev->nvrtc_known = 0;
  dev->n_nvrtc_archs = 0;
  snprintf(dev->nvrtc_why, sizeof dev->nvrtc_why, "%s", reason);
  say(why, why_len, "%s", reason);
  return H5FZ_ERR_DEVICE;
}

int h5fz_nvrtc_query(h5fz_device_desc *dev, char *why, size_t why_len)
{
  if (!dev) return H5FZ_ERR_ARG;
  const char *bind_why = "";
  const h5fz_nvrtc_api *nv = h5fz_nvrtc_get(&bind_why);
  if (!nv) return nvrtc_fail(dev, why, why_len, bind_why);
  if (!nv->nvrtcGetNumSupportedArchs || !nv->nvrtcGetSupportedArchs)
    return nvrtc_fail(dev, why, why_len, "libnvrtc lacks nvrtcGetSupportedArchs (NVRTC < 11.2)");
  int n = 0;
  if (nv->nvrtcVersion(&dev->nvrtc_major, &dev->nvrtc_minor) != 0 || nv->nvrtcGetNumSupportedArchs(&n) != 0 || n <= 0 ||
      n > 1024)
    return nvrtc_fail(dev, why, why_len, "NVRTC version/arch query failed");
  int *archs = malloc((size_t)n * sizeof *archs);
  if (!archs) return nvrtc_fail(dev, why, why_len, "out of memory");
  if (nv->nvrtcGetSupportedArchs(archs) != 0) {
    free(archs);
    return nvrtc_fail(dev, why, why_len, "nvrtcGetSupportedArchs failed");
  }
  /* keep the newest archs if NVRTC ever lists more than we hold */
  int i = n > H5FZ_PLAN_MAX_ARCHS ? n - H5FZ_PLAN_MAX_ARCHS : 0;
  dev->n_nvrtc_archs = 0;
  for (; i < n; i++) dev->nvrtc_archs[dev->n_nvrtc_archs++] = archs[i];
  free(archs);
  dev->nvrtc_known = 1;
  dev->nvrtc_why[0] = '\0';
  say(why, why_len, "%s", "");
  return H5FZ_OK;
}

int h5fz_gpu_visible_count(void)
{
  const h5fz_cuda_api *cu = h5fz_cuda_get(NULL);
  int n = 0;
  if (!cu || cu->cuInit(0) || cu->cuDeviceGetCount(&n)) return 0;
  return n;
}
