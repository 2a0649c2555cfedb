/*
 * h5fz_gpu_stage.h - copies between the caller's host memory and the GPU
 * through the context's pinned buffer, on every core (h5fz_gpu_stage.c).
 */
#ifndef H5FZ_GPU_STAGE_H
#define H5FZ_GPU_STAGE_H

#include <stddef.h>
#include <stdint.h>

#include "h5fz_gpu_context.h"

/* bytes of src to gc's device memory dev through gc->pinned (>= bytes);
 * the DMAs are queued on gc->stream when this returns. H5FZ_ERR_DEVICE on a
 * CUDA failure. */
int h5fz_gpu_stage_to_device(h5fz_gpu_context *gc, CUdeviceptr dev, const uint8_t *src, size_t bytes);

/* bytes of gc's device memory dev (once gc->stream's work before this
 * call is done) to dst through gc->pinned (>= bytes); returns when dst holds
 * them. H5FZ_ERR_DEVICE on a CUDA failure. */
int h5fz_gpu_stage_from_device(h5fz_gpu_context *gc, uint8_t *dst, CUdeviceptr dev, size_t bytes);

#endif /* H5FZ_GPU_STAGE_H */
