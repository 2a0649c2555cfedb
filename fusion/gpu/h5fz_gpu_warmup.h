/*
 * h5fz_gpu_warmup.h - the GPU context made ready on a background thread
 * (h5fz_gpu_warmup.c), so that a process's first chunks do not wait for
 * CUDA context creation (cuInit and the primary context: about 0.25 s on an
 * H200) nor for the chain's module. The codec starts it when a dataset is
 * created with the filter (set_local) and at the first decode; while it
 * runs, a chunk under H5FZ_DEVICE=auto goes to the CPU executor, which
 * writes the same bytes, and a call that needs the GPU waits for it.
 */
#ifndef H5FZ_GPU_WARMUP_H
#define H5FZ_GPU_WARMUP_H

#include "h5fz_chunk_plan.h"

/* Start, on a background thread, the initialisation of the GPU context of
 * the settings' ordinal (H5FZ_GPU_ORDINAL) and, when p is not NULL, the
 * planning and loading of p's chain in it (embedded module, disk cache or
 * NVRTC). Returns at once. Does nothing when that work is done already, a
 * warm-up of that context is running, or no thread can be made (the first
 * chunk then does the work itself, as without a warm-up). A failure (no
 * driver, no GPU) is remembered by the context as if a chunk had met it.
 * The process may exit at any time: exit handlers wait for the threads
 * still running (h5fz_gpu_exit.h). */
void h5fz_gpu_warm_up(const h5fz_chunk_plan *p);

/* 1 while a warm-up of the settings' ordinal's context is running, else 0.
 * Takes no lock: a chunk under H5FZ_DEVICE=auto asks it to go to the CPU
 * instead of waiting. */
int h5fz_gpu_warming(void);


#endif /* H5FZ_GPU_WARMUP_H */
