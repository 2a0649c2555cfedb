/*
 * h5fz_gpu_stage.h - copies between the caller's host memory and the GPU
 * through the context's pinned buffer, on every core (h5fz_gpu_stage.c).
 */
#ifndef H5FZ_GPU_STAGE_H
#define H5FZ_GPU_STAGE_H

#include <stddef.h>
#include <stdint.h>

#include "h5fz_cuda.h"

/* bytes of src to device memory dev through g_gpu.pinned (>= bytes); the
 * DMAs are queued on g_gpu.stream when this returns. H5FZ_ERR_DEVICE on a
 * CUDA failure. */
int h5fz_gpu_stage_to_device(CUdeviceptr dev, const uint8_t *src, size_t bytes);

/* bytes of device memory dev (once g_gpu.stream's work before this call is
 * done) to dst through g_gpu.pinned (>= bytes); returns when dst holds
 * them. H5FZ_ERR_DEVICE on a CUDA failure. */
int h5fz_gpu_stage_from_device(uint8_t *dst, CUdeviceptr dev, size_t bytes);

#endif /* H5FZ_GPU_STAGE_H */
