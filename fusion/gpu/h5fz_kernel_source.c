/*
 * h5fz_kernel_source.c - the generated source of one planned chain (see
 * h5fz_kernel_source.h): one place decides the codegen flags, so the
 * executor and the build-time embedder cannot drift apart.
 */
#include <string.h>

#include "h5fz_codegen.h"
#include "h5fz_kernel_source.h"

/* A register cap as the blocks per SM it leaves room for (the codegen's
 * __launch_bounds__ minimum), 1..32; 1 without a cap. */
static long blocks_per_sm(long regs_per_sm, int threads, int regs)
{
  long n = regs > 0 && regs_per_sm > 0 ? regs_per_sm / ((long)threads * regs) : 0;
  return n < 1 ? 1 : n > 32 ? 32 : n;
}

int h5fz_kernel_source(const h5fz_plan *plan, const h5fz_kernel_config *cfg, char **src, size_t *smem_bytes)
{
  h5fz_spec s;
  h5fz_spec_default(&s);
  /* the bound and mode are kernel arguments, not code: one module serves all */
  s.mode = H5FZ_MODE_ABS;
  s.bound = 1.0;
  s.dtype = cfg->dtype;
  s.subchunk_bytes = cfg->subchunk_bytes;
  s.n_ops = (uint32_t)cfg->n_ops;
  memset(s.ops, 0, sizeof s.ops);
  memcpy(s.ops, cfg->ops, (size_t)cfg->n_ops);
  unsigned flags = plan->tuning.features & H5FZ_FEAT_PADDED_PLANES ? H5FZ_CODEGEN_PADDED_PLANES : 0u;
  flags |= H5FZ_CODEGEN_MIN_BLOCKS(blocks_per_sm(cfg->regs_per_sm, cfg->threads, cfg->regs));
  if (cfg->dec_threads > 0)
    flags |= H5FZ_CODEGEN_DEC_THREADS(cfg->dec_threads) |
             H5FZ_CODEGEN_DEC_MIN_BLOCKS(blocks_per_sm(cfg->regs_per_sm, cfg->dec_threads, cfg->dec_regs));
  if (plan->tuning.features & H5FZ_FEAT_WARP_FUSED)
    flags |= H5FZ_CODEGEN_WARP_FUSED | H5FZ_CODEGEN_WF_WARPS(cfg->wf_warps);
  return h5fz_codegen(&s, cfg->threads, flags, src, smem_bytes);
}

int h5fz_kernel_block_threads(const h5fz_plan *plan, const uint8_t *ops, uint32_t n_ops, uint32_t subchunk_bytes)
{
  if (h5fz_codegen_one_slot_encode(ops, n_ops) && plan->tuning.entropy_threads_per_block)
    return plan->tuning.entropy_threads_per_block;
  return h5fz_kernel_decode_threads(plan, subchunk_bytes); /* the class's geometry */
}

int h5fz_kernel_block_regs(const h5fz_plan *plan, const uint8_t *ops, uint32_t n_ops)
{
  if (h5fz_codegen_one_slot_encode(ops, n_ops) && plan->tuning.entropy_regs_per_thread)
    return plan->tuning.entropy_regs_per_thread;
  return h5fz_kernel_decode_regs(plan);
}

int h5fz_kernel_decode_threads(const h5fz_plan *plan, uint32_t subchunk_bytes)
{
  return h5fz_plan_block_threads(plan, subchunk_bytes);
}

int h5fz_kernel_decode_regs(const h5fz_plan *plan) { return plan->tuning.regs_per_thread; }

h5fz_kernel_config h5fz_kernel_config_default(const h5fz_spec *spec, const h5fz_plan *plan, const h5fz_device_desc *dev)
{
  h5fz_kernel_config kc = {spec->ops,
                           (int)spec->n_ops,
                           spec->dtype,
                           spec->subchunk_bytes,
                           h5fz_kernel_block_threads(plan, spec->ops, spec->n_ops, spec->subchunk_bytes),
                           h5fz_kernel_block_regs(plan, spec->ops, spec->n_ops),
                           h5fz_kernel_decode_threads(plan, spec->subchunk_bytes),
                           h5fz_kernel_decode_regs(plan),
                           (int)H5FZ_CODEGEN_WF_WARPS_OF(0u),
                           dev->regs_per_sm};
  return kc;
}
