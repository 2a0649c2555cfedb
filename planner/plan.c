/*
 * plan.c - walk the registry's chain for a device, pick the first available
 * class, apply the roofline (or a calibration) and compute route and digest.
 */
#include <stdio.h>
#include <string.h>

#include "planner_internal.h"
#include "resolve.h"
#include "roofline.h"

void h5fz_plan_options_default(h5fz_plan_options *o)
{
  if (o == NULL) return;
  memset(o, 0, sizeof *o);
  o->cpu_GBps = 1.0;
  o->overhead_us = 30.0;
  o->hbm_efficiency = 0.80;
  o->pcie_efficiency = 0.80;
  o->assumed_ratio = 4.0;
  o->calibration_path = NULL;
}

static int options_valid(const h5fz_plan_options *o)
{
  return o->cpu_GBps > 0.0 && o->overhead_us >= 0.0 && o->hbm_efficiency > 0.0 && o->hbm_efficiency <= 1.0 &&
         o->pcie_efficiency > 0.0 && o->pcie_efficiency <= 1.0 && o->assumed_ratio >= 1.0;
}

/* Walk the chain; fill klass/target/arch/tuning/refused. */
static int choose_class(h5fz_plan *p, const h5fz_registry *reg, const uint8_t *ops, size_t n_ops)
{
  const h5fz_kernel_class *c = h5fz_registry_find(reg, reg->start);
  int steps = 0;
  for (; c != NULL && steps <= reg->n_classes; steps++) {
    char why[H5FZ_PLAN_REASON_MAX];
    int arch = 0;
    if (pl_class_available(c, &p->device, ops, n_ops, &arch, why, sizeof why) == 0) {
      pl_copy(p->klass, sizeof p->klass, c->name);
      p->target = c->target;
      p->arch = arch;
      if (c->target != H5FZ_TARGET_CPU)
        snprintf(p->arch_name, sizeof p->arch_name, "%s_%d", c->target == H5FZ_TARGET_CUBIN ? "sm" : "compute", arch);
      p->tuning = c->tuning;
      return H5FZ_OK;
    }
    if (p->n_refused < H5FZ_PLAN_MAX_CLASSES) {
      h5fz_refusal *r = &p->refused[p->n_refused++];
      pl_copy(r->klass, sizeof r->klass, c->name);
      pl_copy(r->reason, sizeof r->reason, why);
    }
    c = c->fallback[0] ? h5fz_registry_find(reg, c->fallback) : NULL;
  }
  return h5fz_fail(H5FZ_ERR_UNSUPPORTED, "no class of the chain is available (the plan's refusals say why)");
}

/* Calibration of (device, class): measured figures replace the model's. */
static int apply_calibration(h5fz_plan *p, const char *path)
{
  h5fz_calibration cal;
  char err[H5FZ_PLAN_REASON_MAX];
  pl_out o;
  int r = h5fz_calibration_lookup(path, p->device.name, p->klass, &cal, err, sizeof err);
  if (r != H5FZ_OK) {
    pl_copy(p->calibration_note, sizeof p->calibration_note, err);
    return r;
  }
  if (!cal.found) {
    snprintf(p->calibration_note, sizeof p->calibration_note,
             "no calibration for this device/class in %s; roofline used", cal.path);
    return H5FZ_OK;
  }
  p->calibrated = 1;
  if (cal.cpu_GBps > 0.0) p->options.cpu_GBps = cal.cpu_GBps;
  if (cal.overhead_us > 0.0) p->options.overhead_us = cal.overhead_us;
  if (cal.kernel_GBps > 0.0 && p->target != H5FZ_TARGET_CPU) p->roofline.predicted_kernel_GBps = cal.kernel_GBps;
  if (p->target == H5FZ_TARGET_CPU) p->roofline.predicted_kernel_GBps = p->options.cpu_GBps;
  pl_out_init(&o, p->calibration_note, sizeof p->calibration_note);
  pl_out_printf(&o, "calibrated from %s:%d", cal.path, cal.line);
  if (cal.kernel_GBps > 0.0) pl_out_printf(&o, " kernel %.1f GB/s", cal.kernel_GBps);
  if (cal.overhead_us > 0.0) pl_out_printf(&o, " overhead %.1f us", cal.overhead_us);
  if (cal.cpu_GBps > 0.0) pl_out_printf(&o, " cpu %.2f GB/s", cal.cpu_GBps);
  return H5FZ_OK;
}

int h5fz_plan_block_threads(const h5fz_plan *plan, uint32_t subchunk_bytes)
{
  long t = plan->tuning.threads_per_block, class_bytes = plan->tuning.subchunk_bytes;
  if (class_bytes > 0 && (long)subchunk_bytes > class_bytes) t = t * ((long)subchunk_bytes / class_bytes);
  return (int)(t > 1024 ? 1024 : t);
}

int h5fz_plan_make(const h5fz_device_desc *dev, const h5fz_registry *reg, const uint8_t *op_ids, size_t n_ops,
                   const h5fz_plan_options *opts, h5fz_plan *out)
{
  static const uint64_t sizes[3] = {1u << 20, 4u << 20, 16u << 20};
  char canon[1024];
  int r, i, n;
  if (out == NULL) return h5fz_fail(H5FZ_ERR_ARG, "h5fz_plan_make: NULL plan");
  memset(out, 0, sizeof *out);
  if (opts)
    out->options = *opts;
  else
    h5fz_plan_options_default(&out->options);
  out->options.calibration_path = NULL;
  if (dev == NULL || reg == NULL || (op_ids == NULL && n_ops > 0))
    return h5fz_fail(H5FZ_ERR_ARG, "h5fz_plan_make: NULL device, registry or ops");
  if (!options_valid(&out->options))
    return h5fz_fail(H5FZ_ERR_ARG, "h5fz_plan_make: options out of range (cpu_GBps > 0, overhead_us >= 0, "
                                   "efficiencies in (0, 1], assumed_ratio >= 1)");
  out->device = *dev;
  pl_copy(out->registry_source, sizeof out->registry_source, reg->source);
  out->crossover_bytes = UINT64_MAX;
  r = choose_class(out, reg, op_ids, n_ops);
  if (r != H5FZ_OK) {
    pl_copy(out->klass, sizeof out->klass, "(none)");
    out->target = H5FZ_TARGET_CPU;
    return r;
  }
  pl_roofline_fill(out);
  if (opts != NULL && opts->calibration_path != NULL) {
    r = apply_calibration(out, opts->calibration_path);
    if (r != H5FZ_OK) return r;
  } else {
    pl_copy(out->calibration_note, sizeof out->calibration_note, "not calibrated; roofline used");
  }
  for (i = 0; i < 3; i++) pl_predict(out, sizes[i], NULL, &out->roofline.predicted_e2e_GBps[i]);
  out->crossover_bytes = pl_crossover(out);
  n = h5fz_plan_canonical_text(out, canon, sizeof canon);
  out->digest = pl_fnv1a64(canon, n > 0 && (size_t)n < sizeof canon ? (size_t)n : strlen(canon));
  snprintf(out->digest_hex, sizeof out->digest_hex, "%016llx", (unsigned long long)out->digest);
  return H5FZ_OK;
}

h5fz_exec_route h5fz_plan_route_for_chunk(const h5fz_plan *plan, uint64_t chunk_bytes)
{
  if (plan == NULL || plan->target == H5FZ_TARGET_CPU) return H5FZ_EXEC_CPU;
  return chunk_bytes >= plan->crossover_bytes ? H5FZ_EXEC_GPU : H5FZ_EXEC_CPU;
}

void h5fz_plan_predict(const h5fz_plan *plan, uint64_t chunk_bytes, double *kernel_GBps, double *e2e_GBps)
{
  if (plan == NULL) {
    if (kernel_GBps) *kernel_GBps = 0.0;
    if (e2e_GBps) *e2e_GBps = 0.0;
    return;
  }
  pl_predict(plan, chunk_bytes, kernel_GBps, e2e_GBps);
}

const char *h5fz_target_name(h5fz_target t)
{
  switch (t) {
  case H5FZ_TARGET_CUBIN: return "cubin";
  case H5FZ_TARGET_PTX: return "ptx";
  case H5FZ_TARGET_CPU: return "cpu";
  }
  return "unknown";
}

const char *h5fz_route_name(h5fz_exec_route r) { return r == H5FZ_EXEC_GPU ? "gpu" : "cpu"; }
