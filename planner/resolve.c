/*
 * resolve.c - availability of one kernel class on one device: the arch it
 * builds for, NVRTC, the driver, resources, features and ops. Each check
 * either passes or writes the reason of the refusal.
 */
#include <stdio.h>
#include <string.h>

#include "planner_internal.h"
#include "resolve.h"

static int dev_arch(const h5fz_device_desc *d) { return d->cc_major * 10 + d->cc_minor; }

static void version_str(char *buf, size_t len, int v) { snprintf(buf, len, "%d.%d", v / 1000, (v % 1000) / 10); }

static int nvrtc_has(const h5fz_device_desc *d, int arch)
{
  int i;
  for (i = 0; i < d->n_nvrtc_archs; i++)
    if (d->nvrtc_archs[i] == arch) return 1;
  return 0;
}

/* "sm_100 or sm_120" */
static void arch_list(char *buf, size_t len, const h5fz_kernel_class *c)
{
  pl_out o;
  int i;
  pl_out_init(&o, buf, len);
  for (i = 0; i < c->n_archs; i++)
    pl_out_printf(&o, "%ssm_%d", i == 0 ? "" : (i == c->n_archs - 1 ? " or " : ", "), c->archs[i]);
}

/* Arch the class would build for on this device: its target arch. */
static int pick_arch(const h5fz_kernel_class *c, const h5fz_device_desc *d, int *arch, char *why, size_t len)
{
  int a = dev_arch(d), i;
  char list[128];
  if (c->target == H5FZ_TARGET_CUBIN) {
    for (i = 0; i < c->n_archs; i++)
      if (c->archs[i] == a) break;
    if (i == c->n_archs) {
      arch_list(list, sizeof list, c);
      pl_msg(why, len, "needs %s, device is sm_%d", list, a);
      return -1;
    }
    *arch = a;
    return 0;
  }
  if (a < c->min_arch) {
    pl_msg(why, len, "needs compute_%d or newer, device is sm_%d", c->min_arch, a);
    return -1;
  }
  *arch = a; /* refined by check_nvrtc for PTX */
  return 0;
}

static int check_nvrtc(const h5fz_kernel_class *c, const h5fz_device_desc *d, int *arch, char *why, size_t len)
{
  int i, best = 0;
  if (!d->nvrtc_known) {
    pl_msg(why, len, "NVRTC unavailable: %s", d->nvrtc_why);
    return -1;
  }
  if (c->target == H5FZ_TARGET_CUBIN) {
    if (nvrtc_has(d, *arch)) return 0;
    pl_msg(why, len, "NVRTC %d.%d cannot target sm_%d (supports sm_%d..sm_%d)", d->nvrtc_major, d->nvrtc_minor, *arch,
           d->nvrtc_archs[0], d->nvrtc_archs[d->n_nvrtc_archs - 1]);
    return -1;
  }
  for (i = 0; i < d->n_nvrtc_archs; i++)
    if (d->nvrtc_archs[i] >= c->min_arch && d->nvrtc_archs[i] <= *arch) best = d->nvrtc_archs[i];
  if (best == 0) {
    pl_msg(why, len,
           "NVRTC %d.%d has no virtual arch in compute_%d..compute_%d "
           "(its lowest is compute_%d)",
           d->nvrtc_major, d->nvrtc_minor, c->min_arch, *arch, d->nvrtc_archs[0]);
    return -1;
  }
  *arch = best;
  return 0;
}

/* The driver loads a cubin of NVRTC X.y when its major version is >= X
 * (minor version compatibility) and JIT-compiles PTX only when it is at
 * least as new as the NVRTC that wrote it. Version 0 = unknown: not refused. */
static int check_driver(const h5fz_kernel_class *c, const h5fz_device_desc *d, char *why, size_t len)
{
  int drv = d->driver_version, nv = d->nvrtc_major * 1000 + d->nvrtc_minor * 10;
  char have[16], need[16];
  if (drv == 0) return 0;
  version_str(have, sizeof have, drv);
  if (drv < c->min_driver) {
    version_str(need, sizeof need, c->min_driver);
    pl_msg(why, len, "driver %s too old: the class needs %s", have, need);
    return -1;
  }
  if (c->target == H5FZ_TARGET_PTX && drv < nv) {
    pl_msg(why, len, "driver %s cannot JIT PTX from NVRTC %d.%d (needs driver >= %d.%d)", have, d->nvrtc_major,
           d->nvrtc_minor, d->nvrtc_major, d->nvrtc_minor);
    return -1;
  }
  if (c->target == H5FZ_TARGET_CUBIN && drv / 1000 < d->nvrtc_major) {
    pl_msg(why, len, "driver %s cannot load cubins from NVRTC %d.%d", have, d->nvrtc_major, d->nvrtc_minor);
    return -1;
  }
  return 0;
}

static int check_resources(const h5fz_tuning *t, const h5fz_device_desc *d, char *why, size_t len)
{
  if (t->threads_per_block > d->max_threads_per_block) {
    pl_msg(why, len, "needs %d threads per block, device allows %d", t->threads_per_block, d->max_threads_per_block);
    return -1;
  }
  if (t->smem_per_block > d->smem_per_block_optin) {
    pl_msg(why, len, "needs %d B shared memory per block, device allows %d", t->smem_per_block,
           d->smem_per_block_optin);
    return -1;
  }
  if ((long)t->threads_per_block * t->regs_per_thread > d->regs_per_block) {
    pl_msg(why, len, "needs %ld registers per block, device has %d", (long)t->threads_per_block * t->regs_per_thread,
           d->regs_per_block);
    return -1;
  }
  return 0;
}

static int check_features(const h5fz_tuning *t, int arch, char *why, size_t len)
{
  unsigned f;
  for (f = 1; f != 0 && f <= t->features; f <<= 1) {
    int need = 0;
    const char *name;
    if (!(t->features & f)) continue;
    name = pl_feature_name(f, &need);
    if (name != NULL && arch < need) {
      pl_msg(why, len, "feature %s needs arch %d, target arch is %d", name, need, arch);
      return -1;
    }
  }
  return 0;
}

static int check_ops(const h5fz_kernel_class *c, const uint8_t *ops, size_t n_ops, char *why, size_t len)
{
  size_t i;
  int j;
  if (c->all_ops) return 0;
  for (i = 0; i < n_ops; i++) {
    for (j = 0; j < c->n_ops; j++)
      if (c->ops[j] == ops[i]) break;
    if (j == c->n_ops) {
      pl_msg(why, len, "op %u not supported by the class", (unsigned)ops[i]);
      return -1;
    }
  }
  return 0;
}

int pl_class_available(const h5fz_kernel_class *c, const h5fz_device_desc *d, const uint8_t *ops, size_t n_ops,
                       int *arch, char *why, size_t len)
{
  *arch = 0;
  if (c->target == H5FZ_TARGET_CPU) return check_ops(c, ops, n_ops, why, len);
  if (!d->present) {
    pl_msg(why, len, "no GPU: %s", d->absent_reason);
    return -1;
  }
  if (pick_arch(c, d, arch, why, len) != 0) return -1;
  if (check_nvrtc(c, d, arch, why, len) != 0) return -1;
  if (check_driver(c, d, why, len) != 0) return -1;
  if (check_resources(&c->tuning, d, why, len) != 0) return -1;
  if (check_features(&c->tuning, *arch, why, len) != 0) return -1;
  return check_ops(c, ops, n_ops, why, len);
}
