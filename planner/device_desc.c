/*
 * device_desc.c - device descriptions: the "none" device, description files
 * (key = value), and the bandwidths derived from a description.
 */
#include <stdlib.h>
#include <string.h>

#include "planner_internal.h"

void h5fz_device_none(h5fz_device_desc *out, const char *reason)
{
  if (out == NULL) return;
  memset(out, 0, sizeof *out);
  pl_copy(out->name, sizeof out->name, "none");
  pl_copy(out->absent_reason, sizeof out->absent_reason, reason ? reason : "no GPU");
  pl_copy(out->nvrtc_why, sizeof out->nvrtc_why, "NVRTC not queried");
}

/* Integer-valued keys of a description file and where they go. */
typedef struct {
  const char *key;
  size_t offset;
  int is64;
  long long lo, hi;
} int_key;

#define IK(k, f, lo, hi)                                                                                               \
  {                                                                                                                    \
    k, offsetof(h5fz_device_desc, f), 0, lo, hi                                                                        \
  }
#define IK64(k, f, lo, hi)                                                                                             \
  {                                                                                                                    \
    k, offsetof(h5fz_device_desc, f), 1, lo, hi                                                                        \
  }
static const int_key k_int_keys[] = {
    IK("present", present, 0, 1),
    IK("sm_count", sm_count, 1, 100000),
    IK("max_threads_per_block", max_threads_per_block, 1, 65536),
    IK("max_threads_per_sm", max_threads_per_sm, 1, 65536),
    IK("smem_per_block", smem_per_block, 0, 1 << 30),
    IK("smem_per_block_optin", smem_per_block_optin, 0, 1 << 30),
    IK("smem_per_sm", smem_per_sm, 0, 1 << 30),
    IK("regs_per_block", regs_per_block, 0, 1 << 30),
    IK("regs_per_sm", regs_per_sm, 0, 1 << 30),
    IK64("memory_clock_khz", mem_clock_khz, 1, 1000000000LL),
    IK("memory_bus_bits", mem_bus_bits, 1, 1 << 20),
    IK64("l2_bytes", l2_bytes, 0, 1LL << 40),
    IK64("total_memory_bytes", total_mem_bytes, 0, 1LL << 50),
    IK("pcie_gen", pcie_gen, 1, 6),
    IK("pcie_width", pcie_width, 1, 32),
};
#undef IK
#undef IK64

static int set_int_key(h5fz_device_desc *d, const pl_kv *kv, int *handled)
{
  size_t i;
  *handled = 0;
  for (i = 0; i < sizeof k_int_keys / sizeof k_int_keys[0]; i++) {
    const int_key *k = &k_int_keys[i];
    long long v;
    if (strcmp(kv->key, k->key) != 0) continue;
    *handled = 1;
    if (pl_parse_int(kv->value, k->lo, k->hi, &v) != 0) return -1;
    if (k->is64)
      *(int64_t *)((char *)d + k->offset) = (int64_t)v;
    else
      *(int *)((char *)d + k->offset) = (int)v;
    return 0;
  }
  return 0;
}

/* "50 52 ... 120" or "sm_75, sm_80" -> nvrtc_archs, ascending, unique. */
static int set_archs(h5fz_device_desc *d, const char *value)
{
  char tmp[1024];
  char *tok, *save = NULL;
  pl_copy(tmp, sizeof tmp, value);
  d->n_nvrtc_archs = 0;
  for (tok = strtok_r(tmp, " ,\t", &save); tok; tok = strtok_r(NULL, " ,\t", &save)) {
    int a;
    if (pl_parse_arch(tok, &a) != 0) return -1;
    if (d->n_nvrtc_archs == H5FZ_PLAN_MAX_ARCHS) return -1;
    if (d->n_nvrtc_archs > 0 && a <= d->nvrtc_archs[d->n_nvrtc_archs - 1]) return -1;
    d->nvrtc_archs[d->n_nvrtc_archs++] = a;
  }
  return d->n_nvrtc_archs > 0 ? 0 : -1;
}

static int set_other_key(h5fz_device_desc *d, const pl_kv *kv, int *have_cc, int *have_nvrtc_ver, int *have_nvrtc_archs)
{
  int a, b;
  if (strcmp(kv->key, "name") == 0) {
    if (kv->value[0] == '\0' || strlen(kv->value) >= sizeof d->name) return -1;
    pl_copy(d->name, sizeof d->name, kv->value);
  } else if (strcmp(kv->key, "compute_capability") == 0) {
    if (pl_parse_version(kv->value, &a, &b) != 0 || a < 1) return -1;
    d->cc_major = a;
    d->cc_minor = b;
    *have_cc = 1;
  } else if (strcmp(kv->key, "driver_version") == 0) {
    if (pl_parse_version(kv->value, &a, &b) != 0) return -1;
    /* "12.8" -> 12080; "12080" is taken as written */
    d->driver_version = a >= 1000 ? a : a * 1000 + b * 10;
  } else if (strcmp(kv->key, "nvrtc_version") == 0) {
    if (pl_parse_version(kv->value, &a, &b) != 0) return -1;
    d->nvrtc_major = a;
    d->nvrtc_minor = b;
    *have_nvrtc_ver = 1;
  } else if (strcmp(kv->key, "nvrtc_archs") == 0) {
    if (set_archs(d, kv->value) != 0) return -1;
    *have_nvrtc_archs = 1;
  } else if (strcmp(kv->key, "absent_reason") == 0) {
    pl_copy(d->absent_reason, sizeof d->absent_reason, kv->value);
  } else {
    return 1; /* unknown key */
  }
  return 0;
}

/* A GPU description must give what the planner's checks and roofline use. */
static const char *missing_key(const h5fz_device_desc *d, int have_cc)
{
  if (!d->present) return NULL;
  if (!have_cc) return "compute_capability";
  if (d->sm_count == 0) return "sm_count";
  if (d->mem_clock_khz == 0) return "memory_clock_khz";
  if (d->mem_bus_bits == 0) return "memory_bus_bits";
  if (d->max_threads_per_block == 0) return "max_threads_per_block";
  if (d->smem_per_block_optin == 0) return "smem_per_block_optin";
  if (d->regs_per_block == 0) return "regs_per_block";
  return NULL;
}

/* Defaults for fields a description may leave out; stated in the note. */
static void fill_defaults(h5fz_device_desc *d)
{
  if (!d->present) return;
  if (d->max_threads_per_sm == 0) d->max_threads_per_sm = 2048;
  if (d->smem_per_block == 0) d->smem_per_block = 49152;
  if (d->smem_per_sm == 0) d->smem_per_sm = d->smem_per_block_optin;
  if (d->regs_per_sm == 0) d->regs_per_sm = 65536;
  if (d->pcie_gen != 0 && d->pcie_width != 0) {
    d->pcie_source = H5FZ_PCIE_DESCRIBED;
  } else {
    d->pcie_gen = 4;
    d->pcie_width = 16;
    d->pcie_source = H5FZ_PCIE_ASSUMED;
    pl_copy(d->note, sizeof d->note, "PCIe link not described: gen 4 x16 assumed");
  }
}

int h5fz_device_parse(const char *text, const char *origin, h5fz_device_desc *out, char *err, size_t err_len)
{
  pl_lines it;
  pl_kv kv;
  int r, have_cc = 0, have_nv_ver = 0, have_nv_archs = 0, have_present = 0;
  const char *miss;
  if (text == NULL || out == NULL) {
    return pl_fail(H5FZ_ERR_ARG, err, err_len, "NULL argument");
  }
  if (origin == NULL) origin = "<text>";
  memset(out, 0, sizeof *out);
  out->present = 1;
  pl_lines_init(&it, text);
  while ((r = pl_next_line(&it, &kv)) != 0) {
    int handled, bad;
    if (r < 0 || !kv.has_eq || kv.key[0] == '\0') {
      return pl_fail(H5FZ_ERR_PARSE, err, err_len, "%s:%d: expected 'key = value'", origin, kv.line);
    }
    bad = set_int_key(out, &kv, &handled);
    if (!handled) bad = set_other_key(out, &kv, &have_cc, &have_nv_ver, &have_nv_archs);
    if (strcmp(kv.key, "present") == 0) have_present = 1;
    if (bad == 1) {
      return pl_fail(H5FZ_ERR_PARSE, err, err_len, "%s:%d: unknown key '%s'", origin, kv.line, kv.key);
    }
    if (bad != 0) {
      return pl_fail(H5FZ_ERR_PARSE, err, err_len, "%s:%d: bad value for '%s': '%s'", origin, kv.line, kv.key,
                     kv.value);
    }
  }
  if (!have_present) {
    return pl_fail(H5FZ_ERR_PARSE, err, err_len, "%s: missing key 'present' (1 = GPU, 0 = none)", origin);
  }
  if (out->name[0] == '\0') pl_copy(out->name, sizeof out->name, out->present ? "unnamed GPU" : "none");
  miss = missing_key(out, have_cc);
  if (miss != NULL) {
    return pl_fail(H5FZ_ERR_PARSE, err, err_len, "%s: missing key '%s'", origin, miss);
  }
  if (have_nv_ver != have_nv_archs) {
    return pl_fail(H5FZ_ERR_PARSE, err, err_len, "%s: nvrtc_version and nvrtc_archs go together", origin);
  }
  out->nvrtc_known = have_nv_archs;
  if (!out->nvrtc_known)
    pl_copy(out->nvrtc_why, sizeof out->nvrtc_why, "NVRTC not described (nvrtc_version/nvrtc_archs absent)");
  if (!out->present && out->absent_reason[0] == '\0')
    pl_copy(out->absent_reason, sizeof out->absent_reason, "no GPU (described as absent)");
  fill_defaults(out);
  pl_copy(out->source, sizeof out->source, origin);
  return H5FZ_OK;
}

/* h5fz_device_parse in pl_parse_fn's shape. */
static int parse_device(const char *text, const char *origin, void *out, char *err, size_t err_len)
{
  return h5fz_device_parse(text, origin, out, err, err_len);
}

int h5fz_device_load(const char *path, h5fz_device_desc *out, char *err, size_t err_len)
{
  return pl_parse_file(path, parse_device, out, err, err_len);
}

double h5fz_device_hbm_GBps(const h5fz_device_desc *dev)
{
  if (dev == NULL || !dev->present) return 0.0;
  /* double data rate: two transfers per reported clock (as CUDA's
   * bandwidthTest/deviceQuery compute it) */
  return 2.0 * (double)dev->mem_clock_khz * 1e3 * (double)dev->mem_bus_bits / 8.0 / 1e9;
}

double h5fz_device_pcie_GBps(const h5fz_device_desc *dev)
{
  /* GT/s per lane and line-code efficiency for PCIe gen 1..6 */
  static const double gts[7] = {0, 2.5, 5.0, 8.0, 16.0, 32.0, 64.0};
  static const double eff[7] = {0, 0.8, 0.8, 128.0 / 130.0, 128.0 / 130.0, 128.0 / 130.0, 242.0 / 256.0};
  int gen, width;
  if (dev == NULL || !dev->present) return 0.0;
  gen = dev->pcie_gen >= 1 && dev->pcie_gen <= 6 ? dev->pcie_gen : 4;
  width = dev->pcie_width > 0 ? dev->pcie_width : 16;
  return gts[gen] * eff[gen] * (double)width / 8.0;
}
