/*
 * roofline.c - predicted throughput of a plan and the chunk size above which
 * the GPU beats the CPU executor. Formulas: docs/planner.md, "Roofline".
 */
#include <math.h>
#include <string.h>

#include "planner_internal.h"
#include "roofline.h"

/* Resident blocks per SM of the tuning: limited by threads, shared memory
 * (plus the 1 KiB the runtime reserves per block on sm_80+) and registers. */
static int blocks_per_sm(const h5fz_tuning *t, const h5fz_device_desc *d)
{
  int by_threads, by_smem, by_regs, b;
  if (t->threads_per_block <= 0) return 0;
  by_threads = d->max_threads_per_sm / t->threads_per_block;
  by_smem = d->smem_per_sm / (t->smem_per_block + 1024);
  by_regs = d->regs_per_sm / (t->threads_per_block * t->regs_per_thread);
  b = by_threads < by_smem ? by_threads : by_smem;
  b = b < by_regs ? b : by_regs;
  return b < 1 ? 1 : b;
}

void pl_roofline_fill(h5fz_plan *p)
{
  const h5fz_device_desc *d = &p->device;
  const h5fz_plan_options *o = &p->options;
  h5fz_roofline *r = &p->roofline;
  memset(r, 0, sizeof *r);
  r->hbm_GBps = h5fz_device_hbm_GBps(d);
  r->pcie_GBps = h5fz_device_pcie_GBps(d);
  if (p->target == H5FZ_TARGET_CPU) {
    r->predicted_kernel_GBps = o->cpu_GBps;
  } else {
    r->blocks_per_sm = blocks_per_sm(&p->tuning, d);
    /* the kernel reads the chunk once and writes 1/ratio of it */
    r->predicted_kernel_GBps = r->hbm_GBps * o->hbm_efficiency / (1.0 + 1.0 / o->assumed_ratio);
  }
}

/* Fraction of the device a chunk keeps busy: one block per sub-chunk,
 * sm_count * blocks_per_sm blocks resident at once. */
static double fill(const h5fz_plan *p, double chunk)
{
  double blocks = ceil(chunk / (double)p->tuning.subchunk_bytes);
  double resident = (double)p->device.sm_count * p->roofline.blocks_per_sm;
  double f = resident > 0.0 ? blocks / resident : 1.0;
  return f < 1.0 ? f : 1.0;
}

/* Seconds the GPU route needs for one chunk of `chunk` bytes. */
static double gpu_seconds(const h5fz_plan *p, double chunk, double *kernel_s)
{
  const h5fz_plan_options *o = &p->options;
  double pcie = p->roofline.pcie_GBps * o->pcie_efficiency * 1e9;
  double k = chunk / (p->roofline.predicted_kernel_GBps * 1e9 * fill(p, chunk));
  if (kernel_s) *kernel_s = k;
  return o->overhead_us * 1e-6 + chunk / pcie + k + chunk / o->assumed_ratio / pcie;
}

static double cpu_seconds(const h5fz_plan *p, double chunk) { return chunk / (p->options.cpu_GBps * 1e9); }

void pl_predict(const h5fz_plan *p, uint64_t chunk_bytes, double *kernel_GBps, double *e2e_GBps)
{
  double c = (double)chunk_bytes, k = 0.0, t;
  if (p->target == H5FZ_TARGET_CPU || chunk_bytes == 0) {
    if (kernel_GBps) *kernel_GBps = p->options.cpu_GBps;
    if (e2e_GBps) *e2e_GBps = p->options.cpu_GBps;
    return;
  }
  t = gpu_seconds(p, c, &k);
  if (kernel_GBps) *kernel_GBps = c / k / 1e9;
  if (e2e_GBps) *e2e_GBps = c / t / 1e9;
}

uint64_t pl_crossover(const h5fz_plan *p)
{
  const double top = 1099511627776.0; /* 1 TiB: beyond any chunk */
  double lo = 1.0, hi = top;
  int i;
  if (p->target == H5FZ_TARGET_CPU) return UINT64_MAX;
  if (gpu_seconds(p, hi, NULL) >= cpu_seconds(p, hi)) return UINT64_MAX;
  if (gpu_seconds(p, lo, NULL) < cpu_seconds(p, lo)) return 1;
  /* invariant: the CPU wins at lo, the GPU at hi */
  for (i = 0; i < 200 && hi - lo > 1.0; i++) {
    double mid = floor((lo + hi) / 2.0);
    if (gpu_seconds(p, mid, NULL) < cpu_seconds(p, mid))
      hi = mid;
    else
      lo = mid;
  }
  return (uint64_t)hi;
}
