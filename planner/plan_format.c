/*
 * plan_format.c - a plan as text for people, as JSON, and as the canonical
 * text its digest is computed over.
 */
#include <stdio.h>
#include <string.h>

#include "planner_internal.h"

static void features_list(pl_out *o, unsigned features, const char *sep)
{
  unsigned f;
  int first = 1;
  for (f = 1; f != 0 && f <= features; f <<= 1) {
    const char *name;
    if (!(features & f) || (name = pl_feature_name(f, NULL)) == NULL) continue;
    pl_out_printf(o, "%s%s", first ? "" : sep, name);
    first = 0;
  }
  if (first) pl_out_printf(o, "none");
}

int h5fz_plan_canonical_text(const h5fz_plan *p, char *buf, size_t len)
{
  pl_out o;
  const h5fz_tuning *t;
  if (p == NULL) return h5fz_fail(H5FZ_ERR_ARG, "h5fz_plan_canonical_text: NULL plan");
  t = &p->tuning;
  pl_out_init(&o, buf, len);
  pl_out_printf(&o,
                "h5fz-plan 1\nclass=%s\ntarget=%s\narch=%s\n"
                "threads_per_block=%d\nsubchunk_bytes=%d\nloads_per_thread=%d\n"
                "load_bytes=%d\nregs_per_thread=%d\nsmem_per_block=%d\n"
                "features=",
                p->klass, h5fz_target_name(p->target), p->arch_name, t->threads_per_block, t->subchunk_bytes,
                t->loads_per_thread, t->load_bytes, t->regs_per_thread, t->smem_per_block);
  features_list(&o, t->features, ",");
  pl_out_printf(&o, "\n");
  if (t->entropy_threads_per_block || t->entropy_regs_per_thread)
    pl_out_printf(&o, "entropy_threads_per_block=%d\nentropy_regs_per_thread=%d\n", t->entropy_threads_per_block,
                  t->entropy_regs_per_thread);
  return (int)o.used;
}

/* "1.5 MiB" style size; UINT64_MAX is "never". */
static void size_str(char *buf, size_t len, uint64_t b)
{
  if (b == UINT64_MAX)
    snprintf(buf, len, "never");
  else if (b >= (1u << 20))
    snprintf(buf, len, "%.2f MiB", (double)b / 1048576.0);
  else if (b >= 1024)
    snprintf(buf, len, "%.1f KiB", (double)b / 1024.0);
  else
    snprintf(buf, len, "%llu B", (unsigned long long)b);
}

static const char *pcie_source_name(h5fz_pcie_source s)
{
  return s == H5FZ_PCIE_SYSFS ? "sysfs" : s == H5FZ_PCIE_DESCRIBED ? "described" : "assumed";
}

static void text_device(pl_out *o, const h5fz_plan *p)
{
  const h5fz_device_desc *d = &p->device;
  int i;
  if (!d->present) {
    pl_out_printf(o, "device     none: %s\n", d->absent_reason);
  } else {
    pl_out_printf(o, "device     %s (sm_%d%d, %d SMs, %.1f GB", d->name, d->cc_major, d->cc_minor, d->sm_count,
                  (double)d->total_mem_bytes / 1e9);
    if (d->driver_version)
      pl_out_printf(o, ", driver %d.%d", d->driver_version / 1000, (d->driver_version % 1000) / 10);
    pl_out_printf(o, ")\n  memory   %lld kHz x %d bit -> %.1f GB/s peak\n", (long long)d->mem_clock_khz,
                  d->mem_bus_bits, p->roofline.hbm_GBps);
    pl_out_printf(o, "  PCIe     gen %d x%d (%s) -> %.1f GB/s per direction\n", d->pcie_gen, d->pcie_width,
                  pcie_source_name(d->pcie_source), p->roofline.pcie_GBps);
  }
  pl_out_printf(o, "  source   %s\n", d->source[0] ? d->source : "-");
  if (d->nvrtc_known) {
    pl_out_printf(o, "  NVRTC    %d.%d:", d->nvrtc_major, d->nvrtc_minor);
    for (i = 0; i < d->n_nvrtc_archs; i++) pl_out_printf(o, " %d", d->nvrtc_archs[i]);
    pl_out_printf(o, "\n");
  } else {
    pl_out_printf(o, "  NVRTC    unavailable: %s\n", d->nvrtc_why);
  }
  if (d->note[0]) pl_out_printf(o, "  note     %s\n", d->note);
}

static void text_choice(pl_out *o, const h5fz_plan *p)
{
  const h5fz_tuning *t = &p->tuning;
  int i;
  pl_out_printf(o, "registry   %s\n", p->registry_source);
  if (p->target == H5FZ_TARGET_CPU)
    pl_out_printf(o, "chosen     %s (CPU executor, %d B sub-chunks)\n", p->klass, t->subchunk_bytes);
  else
    pl_out_printf(o,
                  "chosen     %s (%s %s)\n  tuning   %d threads/block, %d B "
                  "sub-chunks, %d x %d B loads/thread, %d regs/thread, %d B "
                  "smem/block, features ",
                  p->klass, h5fz_target_name(p->target), p->arch_name, t->threads_per_block, t->subchunk_bytes,
                  t->loads_per_thread, t->load_bytes, t->regs_per_thread, t->smem_per_block);
  if (p->target != H5FZ_TARGET_CPU) {
    features_list(o, t->features, ",");
    pl_out_printf(o, "\n");
    if (t->entropy_threads_per_block || t->entropy_regs_per_thread)
      pl_out_printf(o, "  entropy  %d threads/block, %d regs/thread for the one-slot encode of huff/huffctx chains "
                       "(0: the class's; their decode keeps the class's)\n",
                    t->entropy_threads_per_block, t->entropy_regs_per_thread);
    if (t->entropy_decode_parts > 1)
      pl_out_printf(o, "  entropy  up to %d threads a group in huff/huffctx decodes that leave SMs idle\n",
                    t->entropy_decode_parts);
  }
  for (i = 0; i < p->n_refused; i++)
    pl_out_printf(o, "refused    %-10s %s\n", p->refused[i].klass, p->refused[i].reason);
}

static void text_model(pl_out *o, const h5fz_plan *p, uint64_t chunk)
{
  const h5fz_roofline *r = &p->roofline;
  const h5fz_plan_options *op = &p->options;
  char cross[32];
  if (p->target != H5FZ_TARGET_CPU) {
    pl_out_printf(o,
                  "roofline   kernel %.1f GB/s (HBM %.1f x %.2f, ratio %.1f "
                  "assumed), %d blocks/SM\n  e2e      1 MiB %.2f GB/s, 4 MiB "
                  "%.2f GB/s, 16 MiB %.2f GB/s (PCIe x %.2f, overhead %.1f "
                  "us)\n",
                  r->predicted_kernel_GBps, r->hbm_GBps, op->hbm_efficiency, op->assumed_ratio, r->blocks_per_sm,
                  r->predicted_e2e_GBps[0], r->predicted_e2e_GBps[1], r->predicted_e2e_GBps[2], op->pcie_efficiency,
                  op->overhead_us);
  }
  size_str(cross, sizeof cross, p->crossover_bytes);
  if (p->crossover_bytes == UINT64_MAX)
    pl_out_printf(o, "route      every chunk -> cpu (CPU %.2f GB/s)\n", op->cpu_GBps);
  else
    pl_out_printf(o,
                  "route      chunks >= %llu B (%s) -> gpu, smaller -> cpu "
                  "(CPU %.2f GB/s)\n",
                  (unsigned long long)p->crossover_bytes, cross, op->cpu_GBps);
  pl_out_printf(o, "  model    %s\n", p->calibration_note);
  if (chunk > 0) {
    double k, e;
    h5fz_plan_predict(p, chunk, &k, &e);
    pl_out_printf(o, "chunk      %llu B -> %s, kernel %.2f GB/s, e2e %.2f GB/s\n", (unsigned long long)chunk,
                  h5fz_route_name(h5fz_plan_route_for_chunk(p, chunk)), k, e);
  }
  pl_out_printf(o, "digest     %s\n", p->digest_hex);
}

int h5fz_plan_format_text(const h5fz_plan *p, uint64_t chunk_bytes, char *buf, size_t buf_len)
{
  pl_out o;
  if (p == NULL) return h5fz_fail(H5FZ_ERR_ARG, "h5fz_plan_format_text: NULL plan");
  pl_out_init(&o, buf, buf_len);
  text_device(&o, p);
  text_choice(&o, p);
  text_model(&o, p, chunk_bytes);
  return (int)o.used;
}

/* ---- JSON --------------------------------------------------------------- */

static void json_kv_str(pl_out *o, const char *k, const char *v, int comma)
{
  pl_out_printf(o, "\"%s\": ", k);
  pl_out_json_string(o, v);
  if (comma) pl_out_printf(o, ", ");
}

static void json_device(pl_out *o, const h5fz_plan *p)
{
  const h5fz_device_desc *d = &p->device;
  int i;
  pl_out_printf(o, "\"device\": {\"present\": %s, ", d->present ? "true" : "false");
  json_kv_str(o, "name", d->name, 1);
  json_kv_str(o, "source", d->source, 1);
  if (!d->present) json_kv_str(o, "absent_reason", d->absent_reason, 1);
  pl_out_printf(o,
                "\"compute_capability\": \"%d.%d\", \"sm_count\": %d, "
                "\"memory_clock_khz\": %lld, \"memory_bus_bits\": %d, "
                "\"l2_bytes\": %lld, \"total_memory_bytes\": %lld, "
                "\"smem_per_block_optin\": %d, \"pcie_gen\": %d, "
                "\"pcie_width\": %d, \"pcie_source\": \"%s\", "
                "\"driver_version\": %d, ",
                d->cc_major, d->cc_minor, d->sm_count, (long long)d->mem_clock_khz, d->mem_bus_bits,
                (long long)d->l2_bytes, (long long)d->total_mem_bytes, d->smem_per_block_optin, d->pcie_gen,
                d->pcie_width, pcie_source_name(d->pcie_source), d->driver_version);
  if (d->nvrtc_known) {
    pl_out_printf(o, "\"nvrtc\": {\"version\": \"%d.%d\", \"archs\": [", d->nvrtc_major, d->nvrtc_minor);
    for (i = 0; i < d->n_nvrtc_archs; i++) pl_out_printf(o, "%s%d", i ? ", " : "", d->nvrtc_archs[i]);
    pl_out_printf(o, "]}, ");
  } else {
    pl_out_printf(o, "\"nvrtc\": null, ");
    json_kv_str(o, "nvrtc_why", d->nvrtc_why, 1);
  }
  json_kv_str(o, "note", d->note, 0);
  pl_out_printf(o, "}, ");
}

static void json_choice(pl_out *o, const h5fz_plan *p)
{
  const h5fz_tuning *t = &p->tuning;
  int i;
  json_kv_str(o, "registry", p->registry_source, 1);
  json_kv_str(o, "class", p->klass, 1);
  json_kv_str(o, "target", h5fz_target_name(p->target), 1);
  json_kv_str(o, "arch", p->arch_name, 1);
  pl_out_printf(o,
                "\"tuning\": {\"threads_per_block\": %d, \"subchunk_bytes\": "
                "%d, \"loads_per_thread\": %d, \"load_bytes\": %d, "
                "\"regs_per_thread\": %d, \"smem_per_block\": %d, "
                "\"entropy_threads_per_block\": %d, \"entropy_regs_per_thread\": %d, "
                "\"entropy_decode_parts\": %d, \"features\": \"",
                t->threads_per_block, t->subchunk_bytes, t->loads_per_thread, t->load_bytes, t->regs_per_thread,
                t->smem_per_block, t->entropy_threads_per_block, t->entropy_regs_per_thread, t->entropy_decode_parts);
  features_list(o, t->features, ",");
  pl_out_printf(o, "\"}, \"refused\": [");
  for (i = 0; i < p->n_refused; i++) {
    pl_out_printf(o, "%s{", i ? ", " : "");
    json_kv_str(o, "class", p->refused[i].klass, 1);
    json_kv_str(o, "reason", p->refused[i].reason, 0);
    pl_out_printf(o, "}");
  }
  pl_out_printf(o, "], ");
}

static void json_model(pl_out *o, const h5fz_plan *p, uint64_t chunk)
{
  const h5fz_roofline *r = &p->roofline;
  const h5fz_plan_options *op = &p->options;
  pl_out_printf(o,
                "\"roofline\": {\"hbm_GBps\": %.3f, \"pcie_GBps\": %.3f, "
                "\"predicted_kernel_GBps\": %.3f, \"predicted_e2e_GBps\": "
                "{\"1MiB\": %.3f, \"4MiB\": %.3f, \"16MiB\": %.3f}, "
                "\"blocks_per_sm\": %d}, ",
                r->hbm_GBps, r->pcie_GBps, r->predicted_kernel_GBps, r->predicted_e2e_GBps[0], r->predicted_e2e_GBps[1],
                r->predicted_e2e_GBps[2], r->blocks_per_sm);
  pl_out_printf(o,
                "\"model\": {\"cpu_GBps\": %.3f, \"overhead_us\": %.3f, "
                "\"hbm_efficiency\": %.3f, \"pcie_efficiency\": %.3f, "
                "\"assumed_ratio\": %.3f, \"calibrated\": %s, ",
                op->cpu_GBps, op->overhead_us, op->hbm_efficiency, op->pcie_efficiency, op->assumed_ratio,
                p->calibrated ? "true" : "false");
  json_kv_str(o, "note", p->calibration_note, 0);
  pl_out_printf(o, "}, \"route\": {\"crossover_bytes\": ");
  if (p->crossover_bytes == UINT64_MAX)
    pl_out_printf(o, "null");
  else
    pl_out_printf(o, "%llu", (unsigned long long)p->crossover_bytes);
  if (chunk > 0) {
    double k, e;
    h5fz_plan_predict(p, chunk, &k, &e);
    pl_out_printf(o,
                  ", \"chunk_bytes\": %llu, \"chunk_route\": \"%s\", "
                  "\"chunk_kernel_GBps\": %.3f, \"chunk_e2e_GBps\": %.3f",
                  (unsigned long long)chunk, h5fz_route_name(h5fz_plan_route_for_chunk(p, chunk)), k, e);
  }
  pl_out_printf(o, "}, ");
  json_kv_str(o, "digest", p->digest_hex, 0);
}

int h5fz_plan_format_json(const h5fz_plan *p, uint64_t chunk_bytes, char *buf, size_t buf_len)
{
  pl_out o;
  if (p == NULL) return h5fz_fail(H5FZ_ERR_ARG, "h5fz_plan_format_json: NULL plan");
  pl_out_init(&o, buf, buf_len);
  pl_out_printf(&o, "{");
  json_device(&o, p);
  json_choice(&o, p);
  json_model(&o, p, chunk_bytes);
  pl_out_printf(&o, "}\n");
  return (int)o.used;
}
