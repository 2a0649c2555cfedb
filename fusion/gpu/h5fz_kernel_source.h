/*
 * h5fz_kernel_source.h - the generated CUDA source of one planned chain,
 * exactly as the GPU executor compiles it. Shared by the executor and the
 * build-time kernel embedder (tools/h5fz_embed_kernels.c), so an embedded
 * module is compiled from the very source the executor would compile.
 */
#ifndef H5FZ_KERNEL_SOURCE_H
#define H5FZ_KERNEL_SOURCE_H

#include <stddef.h>
#include <stdint.h>

#include "h5fz_planner.h"
#include "h5fz.h"

/* What selects one compiled module besides the plan. */
typedef struct {
  const uint8_t *ops;      /* op ids of the chain, quant first */
  int n_ops;               /* entries of ops, 2..H5FZ_MAX_OPS */
  h5fz_dtype dtype;        /* H5FZ_DTYPE_F32 or H5FZ_DTYPE_F64 */
  uint32_t subchunk_bytes; /* input bytes per sub-chunk */
  int threads;             /* threads per block (the plan's unless overridden) */
  int regs;                /* register cap per thread, 0 = none */
  int dec_threads;         /* threads per block of the decode kernels (h5fz_kernel_decode_threads) */
  int dec_regs;            /* their register cap per thread, 0 = none */
  int wf_warps;            /* warps per block of the warp-fused kernels (1, 2, 4, 8) */
  long regs_per_sm;        /* the device's 32-bit registers per SM (65536 on sm_70..sm_120) */
} h5fz_kernel_config;

/* Generate the source of cfg under plan (a GPU plan from h5fz_plan_make):
 * codegen flags from the plan's features (padded planes, warp-fused) and
 * the register cap as blocks per SM. *src is malloc'd (caller frees),
 * *smem_bytes the dynamic shared memory a block needs. Returns H5FZ_OK or
 * the error of h5fz_codegen (H5FZ_ERR_SPEC, H5FZ_ERR_ARG, H5FZ_ERR_NOMEM). */
int h5fz_kernel_source(const h5fz_plan *plan, const h5fz_kernel_config *cfg, char **src, size_t *smem_bytes);

/* The kernel key of spec's chain (ops, dtype, sub-chunk bytes) under plan
 * with no H5FZ_GPU_* override: h5fz_plan_block_threads and the plan's register
 * cap, the codegen's default warp-fused warps, dev's registers per SM. What
 * the build-time embedder compiles and its test looks up; the executor
 * starts from the same values (h5fz_gpu_chain.c) and applies the
 * overrides. The config points into spec's ops (keep spec alive). */
/* The threads of a block and the register cap of the chain ops[0..n_ops)
 * with sub-chunks of subchunk_bytes under plan: the class's tuning, or its
 * entropy_* figures for a one-slot encode chain (h5fz_codegen.h). One
 * place for the executor (h5fz_gpu_chain.c) and the embedder. */
int h5fz_kernel_block_threads(const h5fz_plan *plan, const uint8_t *ops, uint32_t n_ops, uint32_t subchunk_bytes);
int h5fz_kernel_block_regs(const h5fz_plan *plan, const uint8_t *ops, uint32_t n_ops);

/* The decode kernels' threads of a block and register cap with sub-chunks
 * of subchunk_bytes under plan: always the class's tuning (the entropy_*
 * figures shape the one-slot encode only; the decode of those chains
 * holds two slots and runs best with the class's geometry). */
int h5fz_kernel_decode_threads(const h5fz_plan *plan, uint32_t subchunk_bytes);
int h5fz_kernel_decode_regs(const h5fz_plan *plan);

h5fz_kernel_config h5fz_kernel_config_default(const h5fz_spec *spec, const h5fz_plan *plan,
                                              const h5fz_device_desc *dev);

#endif /* H5FZ_KERNEL_SOURCE_H */
