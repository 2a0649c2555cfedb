/*
 * h5fz_gpu_exec.h - what the per-chunk GPU executor (h5fz_gpu_exec.c)
 * shares with the kernel timer (h5fz_gpu_timing.c).
 */
#ifndef H5FZ_GPU_EXEC_H
#define H5FZ_GPU_EXEC_H

#include "h5fz_gpu_context.h"

/* Grow gc's device and pinned buffers to encode one chunk of plan p (its
 * input, the packed output and what comes back, the status word and the
 * Lorenzo cost sums). Caller holds gc's lock. H5FZ_OK, or H5FZ_ERR_NOMEM /
 * H5FZ_ERR_DEVICE with the reason. */
int h5fz_gpu_grow_chunk_encode(h5fz_gpu_context *gc, const h5fz_chunk_plan *p);

#endif /* H5FZ_GPU_EXEC_H */
