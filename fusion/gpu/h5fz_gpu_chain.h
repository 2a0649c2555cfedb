/*
 * h5fz_gpu_chain.h - the chains the GPU executor has planned and compiled
 * (h5fz_gpu_chain.c), kept in each GPU context: per kernel key {ops, dtype, sub-chunk, threads,
 * registers, warp-fused warps}, the plan (planner/), the generated source
 * (codegen) and its module (JIT).
 */
#ifndef H5FZ_GPU_CHAIN_H
#define H5FZ_GPU_CHAIN_H

#include "h5fz_chunk_plan.h"
#include "h5fz_jit.h"
#include "h5fz_planner.h"

/* A chain that has been planned and compiled. */
typedef struct {
  uint8_t ops[H5FZ_MAX_OPS];
  uint32_t n_ops;
  h5fz_dtype dtype;
  uint32_t subchunk_bytes;
  int threads;  /* threads per block actually used */
  int regs;     /* register cap per thread (tuning or H5FZ_GPU_REGS) */
  int dec_threads; /* the decode kernels' threads per block (h5fz_kernel_decode_threads or H5FZ_GPU_THREADS) */
  int dec_regs;    /* their register cap */
  int wf_warps; /* warps per block of the warp-fused kernels (H5FZ_GPU_WF_WARPS) */
  int usable;   /* 0: the plan refused the GPU (why in reason) */
  char reason[256];
  h5fz_plan plan;
  h5fz_jit_module mod;
  size_t smem;        /* the decode kernel's dynamic shared memory */
  size_t smem_encode; /* the encode kernel's (one slot less for h5fz_codegen_one_slot_encode chains) */
} chain_entry;

struct h5fz_gpu_context;

/* The planned and compiled chain for p's ops, dtype and sub-chunk size
 * (and H5FZ_GPU_THREADS / _REGS / _WF_WARPS when set), planned and compiled
 * on first use; H5FZ_ERR_DEVICE with the reason when the planner refused
 * the GPU or the JIT failed (remembered: a refused chain is not retried).
 * The chain belongs to gc (its module is loaded in gc's CUDA context).
 * Call with gc locked and initialised (h5fz_gpu_enter). */
int h5fz_gpu_get_chain(struct h5fz_gpu_context *gc, const h5fz_chunk_plan *p, chain_entry **out);

/* 1 when gc has planned p's chain under the call's overrides already
 * (usable or refused), else 0. Call with gc locked. */
int h5fz_gpu_has_chain(struct h5fz_gpu_context *gc, const h5fz_chunk_plan *p);

#endif /* H5FZ_GPU_CHAIN_H */
