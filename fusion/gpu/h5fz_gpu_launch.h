/*
 * h5fz_gpu_launch.h - launching a compiled chain's kernels on the GPU
 * context's stream (h5fz_gpu_launch.c): the fused encode with its tail, the
 * fused decode, and any kernel of the module.
 */
#ifndef H5FZ_GPU_LAUNCH_H
#define H5FZ_GPU_LAUNCH_H

#include "h5fz_gpu_chain.h"
#include "h5fz_gpu_context.h"

/* Kernel f on gc->stream (grid x block threads, smem bytes of dynamic
 * shared memory); H5FZ_ERR_DEVICE naming what when the launch fails. */
int h5fz_gpu_launch(h5fz_gpu_context *gc, CUfunction f, unsigned grid, unsigned block, unsigned smem, void **args,
                    const char *what);
/* Wait for gc->stream; H5FZ_ERR_DEVICE naming what on a CUDA error. */
int h5fz_gpu_sync_stream(h5fz_gpu_context *gc, const char *what);
/* The fused encode, tail scan and tail pack of n_chunks equal chunks of
 * plan p (p->n_elements values each) laid out back to back in gc->in;
 * qchunk: device array of n_chunks absolute bounds, or 0 for p's bound. */
int h5fz_gpu_launch_encode(h5fz_gpu_context *gc, const chain_entry *c, const h5fz_chunk_plan *p, uint32_t n_chunks,
                           CUdeviceptr qchunk);
/* The fused decode of n_chunks chunks from gc->packed (offsets and entries
 * over all their sub-chunks) into out, chunks back to back. */
int h5fz_gpu_launch_decode(h5fz_gpu_context *gc, const chain_entry *c, const h5fz_chunk_plan *p, uint32_t n_chunks,
                           CUdeviceptr qchunk, CUdeviceptr out);

#endif /* H5FZ_GPU_LAUNCH_H */
