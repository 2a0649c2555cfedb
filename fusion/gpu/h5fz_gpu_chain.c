/*
 * h5fz_gpu_chain.c - plan (planner/), generate (codegen) and compile (JIT)
 * a chain once per kernel key, and keep it for the process; the route a
 * chunk takes and the plan shown to users come from here.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h5fz_codegen.h"
#include "h5fz_gpu_chain.h"
#include "h5fz_gpu_context.h"
#include "h5fz_kernel_source.h"

#define MAX_CHAINS 32 /* distinct chains one context compiles */

/* A context's compiled chains (under its lock). */
struct h5fz_gpu_chain_table {
  chain_entry e[MAX_CHAINS];
  int n;
};

/* Threads per block: the plan's tuning, unless H5FZ_GPU_THREADS overrides it
 * (for tuning sweeps; a multiple of 32 in [64, 1024]). 0 = use the plan. */
static int threads_override(const h5fz_gpu_context *gc) { return gc->settings.gpu_threads; }

/* Registers per thread: the plan's tuning, unless H5FZ_GPU_REGS overrides
 * it (for tuning sweeps; 16..255). 0 = use the plan. */
static int regs_override(const h5fz_gpu_context *gc) { return gc->settings.gpu_regs; }

/* Warps per block of the warp-fused kernels, unless H5FZ_GPU_WF_WARPS
 * overrides it (for tuning sweeps: 1, 2, 4 or 8). 0 = the codegen's default. */
static int wf_warps_override(const h5fz_gpu_context *gc) { return gc->settings.gpu_wf_warps; }

/* The chain already compiled in gc for p's key under the overrides, or NULL. */
static chain_entry *find_chain(h5fz_gpu_context *gc, const h5fz_chunk_plan *p, int want_threads, int want_regs,
                               int want_wf)
{
  uint32_t sub_bytes = p->subchunk_elems * p->esize;
  for (int i = 0; gc->chains && i < gc->chains->n; i++) {
    chain_entry *c = &gc->chains->e[i];
    if (c->n_ops == p->n_ops && !memcmp(c->ops, p->ops, p->n_ops) && c->dtype == p->dtype &&
        c->subchunk_bytes == sub_bytes &&
        (!want_threads || (want_threads == c->threads && want_threads == c->dec_threads)) &&
        (!want_regs || (want_regs == c->regs && want_regs == c->dec_regs)) && (!want_wf || want_wf == c->wf_warps))
      return c;
  }
  return NULL;
}

/* The planner's plan for c's chain on this device (calibration beside the
 * JIT cache when present; a broken calibration file is ignored). */
static void plan_chain(const h5fz_gpu_context *gc, chain_entry *c)
{
  h5fz_plan_options opts;
  h5fz_plan_options_default(&opts);
  char cal[600], dir[512];
  if (h5fz_settings_cache_dir(dir, sizeof dir) == 0 &&
      snprintf(cal, sizeof cal, "%s/calibration.txt", dir) < (int)sizeof cal)
    opts.calibration_path = cal; /* measured figures beside the JIT cache, when present */
  if (h5fz_plan_make(&gc->dev, &gc->reg, c->ops, c->n_ops, &opts, &c->plan) == H5FZ_ERR_PARSE)
    h5fz_plan_make(&gc->dev, &gc->reg, c->ops, c->n_ops, NULL, &c->plan); /* ignore a broken calibration file */
}

/* The module's kernels set up for their launches (all of L1 as shared
 * memory: several blocks of sub-chunks per SM; the dynamic shared memory
 * over 48 KiB) and checked complete. */
static int set_attributes(const h5fz_gpu_context *gc, const chain_entry *c)
{
  CUresult r = 0;
  if ((r = gc->cu->cuFuncSetAttribute(c->mod.encode, H5FZ_CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 100)) ||
      (r = gc->cu->cuFuncSetAttribute(c->mod.decode, H5FZ_CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 100)))
    return h5fz_gpu_cuda_fail(r, "cuFuncSetAttribute(carveout)");
  if (c->mod.encode_wf && ((r = gc->cu->cuFuncSetAttribute(
                                c->mod.encode_wf, H5FZ_CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 100)) ||
                           (r = gc->cu->cuFuncSetAttribute(
                                c->mod.decode_wf, H5FZ_CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 100))))
    return h5fz_gpu_cuda_fail(r, "cuFuncSetAttribute(carveout, warp-fused)");
  if ((c->smem_encode > 48u * 1024u &&
       (r = gc->cu->cuFuncSetAttribute(c->mod.encode, H5FZ_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                       (int)c->smem_encode))) ||
      (c->smem > 48u * 1024u &&
       (r = gc->cu->cuFuncSetAttribute(c->mod.decode, H5FZ_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                       (int)c->smem))))
    return h5fz_gpu_cuda_fail(r, "cuFuncSetAttribute(shared memory)");
  if (c->n_ops > 2 && h5fz_op_is_lnd(c->ops[1]) &&
      !(c->mod.lnd_cost && c->mod.lnd_carry && c->mod.lnd_xfix && c->mod.lnd_asum && c->mod.lnd_ascan))
    return h5fz_fail(H5FZ_ERR_DEVICE, "the module of a lorenzo_nd chain lacks its chunk-level kernels");
  if (c->n_ops > 2 && c->ops[1] == H5FZ_OP_LORENZO_INTERP && !(c->mod.lni_pass && c->mod.lni_dequant))
    return h5fz_fail(H5FZ_ERR_DEVICE, "the module of a lorenzo_interp chain lacks its interpolation kernels");
  return H5FZ_OK;
}

/* The planned and compiled chain for (ops, dtype, sub-chunk, threads, registers, warp-fused warps). */
int h5fz_gpu_get_chain(h5fz_gpu_context *gc, const h5fz_chunk_plan *p, chain_entry **out)
{
  int want_threads = threads_override(gc), want_regs = regs_override(gc), want_wf = wf_warps_override(gc);
  chain_entry *c = find_chain(gc, p, want_threads, want_regs, want_wf);
  if (c) {
    *out = c;
    return c->usable ? H5FZ_OK : h5fz_fail(H5FZ_ERR_DEVICE, "%s", c->reason);
  }
  if (!gc->chains && !(gc->chains = calloc(1, sizeof *gc->chains)))
    return h5fz_fail(H5FZ_ERR_NOMEM, "the GPU context's chain table");
  if (gc->chains->n == MAX_CHAINS)
    return h5fz_fail(H5FZ_ERR_DEVICE, "more than %d distinct chains in one process", MAX_CHAINS);
  c = &gc->chains->e[gc->chains->n];
  memset(c, 0, sizeof *c);
  memcpy(c->ops, p->ops, p->n_ops);
  c->n_ops = p->n_ops;
  c->dtype = p->dtype;
  c->subchunk_bytes = p->subchunk_elems * p->esize;
  plan_chain(gc, c);
  c->threads = want_threads ? want_threads : h5fz_kernel_block_threads(&c->plan, c->ops, c->n_ops, c->subchunk_bytes);
  c->regs = want_regs ? want_regs : h5fz_kernel_block_regs(&c->plan, c->ops, c->n_ops);
  /* the overrides (tuning sweeps) set both sides; the plan gives each its own */
  c->dec_threads = want_threads ? want_threads : h5fz_kernel_decode_threads(&c->plan, c->subchunk_bytes);
  c->dec_regs = want_regs ? want_regs : h5fz_kernel_decode_regs(&c->plan);
  c->wf_warps = want_wf ? want_wf : (int)H5FZ_CODEGEN_WF_WARPS_OF(0u);
  gc->chains->n++;
  if (c->plan.target == H5FZ_TARGET_CPU) {
    snprintf(c->reason, sizeof c->reason, "planner chose the CPU: %s",
             c->plan.n_refused ? c->plan.refused[0].reason : "no GPU class available");
    return h5fz_fail(H5FZ_ERR_DEVICE, "%s", c->reason);
  }
  /* the kernel key: chain, type, sub-chunk, threads, registers, warp-fused
   * warps (the embedder of build-time kernels makes its source the same way) */
  h5fz_kernel_config kc = {c->ops,     (int)c->n_ops, c->dtype,       c->subchunk_bytes, c->threads,
                           c->regs,    c->dec_threads, c->dec_regs,   c->wf_warps,       gc->dev.regs_per_sm};
  char *src = NULL;
  int rc = h5fz_kernel_source(&c->plan, &kc, &src, &c->smem);
  c->smem_encode = h5fz_codegen_encode_smem(c->ops, c->n_ops, c->subchunk_bytes, c->smem);
  h5fz_jit_source from = H5FZ_JIT_COMPILED;
  double ms = 0;
  if (!rc) rc = h5fz_jit_get(src, c->plan.arch_name, c->plan.digest, gc->ctx, &c->mod, &from, &ms);
  free(src);
  if (!rc) rc = set_attributes(gc, c);
  if (rc) {
    snprintf(c->reason, sizeof c->reason, "%s", h5fz_last_error());
    return rc;
  }
  gc->stats.last_jit_ms = ms;
  gc->stats.last_jit_source = (int)from;
  c->usable = 1;
  *out = c;
  return H5FZ_OK;
}

int h5fz_gpu_has_chain(h5fz_gpu_context *gc, const h5fz_chunk_plan *p)
{
  return find_chain(gc, p, threads_override(gc), regs_override(gc), wf_warps_override(gc)) != NULL;
}

int h5fz_gpu_route(const h5fz_chunk_plan *p, size_t chunk_bytes, int forced)
{
  h5fz_gpu_context *gc;
  int rc = h5fz_gpu_enter(&gc);
  chain_entry *c = NULL;
  if (!rc) rc = h5fz_gpu_get_chain(gc, p, &c);
  int use = 0;
  if (!rc) use = forced || h5fz_plan_route_for_chunk(&c->plan, chunk_bytes) == H5FZ_EXEC_GPU;
  h5fz_gpu_leave(gc);
  return rc ? rc : use;
}

int h5fz_gpu_plan_for(const h5fz_chunk_plan *p, void *plan_out)
{
  h5fz_gpu_context *gc;
  int rc = h5fz_gpu_enter(&gc);
  chain_entry *c = NULL;
  if (!rc) rc = h5fz_gpu_get_chain(gc, p, &c);
  if (!rc) *(h5fz_plan *)plan_out = c->plan;
  h5fz_gpu_leave(gc);
  return rc;
}
