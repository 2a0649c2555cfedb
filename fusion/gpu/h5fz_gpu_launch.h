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
 * over all their sub-chunks) into out, chunks back to back. lnd_pred: for
 * a lorenzo_nd chain, each chunk's predictor from its header (host array
 * of n_chunks), or NULL for p->lnd.dim. */
int h5fz_gpu_launch_decode(h5fz_gpu_context *gc, const chain_entry *c, const h5fz_chunk_plan *p, uint32_t n_chunks,
                           CUdeviceptr qchunk, CUdeviceptr out, const uint32_t *lnd_pred);
/* Bytes of gc->lnd that n_chunks chunks of plan p need for a lorenzo_nd
 * chain, encode and decode: the cost sums (3 H5FZ_LND_COST_PARTS words a
 * chunk), or 2 words of carry information a sub-chunk, a predictor word a
 * chunk and the segment sums of the y and z passes, for any predictor. */
size_t h5fz_gpu_lnd_bytes(const h5fz_chunk_plan *p, uint32_t n_chunks);

#endif /* H5FZ_GPU_LAUNCH_H */
