/*
 * h5fz_gpu_exit.h - the background threads of the GPU executor (the
 * warm-ups, h5fz_gpu_warmup.h) and the process's exit: the threads are
 * started here, and exit handlers wait for them before the code they run
 * and the CUDA driver they call go away (h5fz_gpu_exit.c says why in that
 * order).
 */
#ifndef H5FZ_GPU_EXIT_H
#define H5FZ_GPU_EXIT_H

/* Start fn(arg) on a new thread that the process's exit waits for (at
 * most 16 such threads a process). The first call pins the object that
 * holds this code (never unloaded, so a thread never runs unmapped code)
 * and registers the first exit handler. Returns 1 when the thread runs, 0
 * when none could be made (arg is then the caller's). */
int h5fz_gpu_exit_start_thread(void *(*fn)(void *), void *arg);

/* 1 once the process's exit has begun (an exit handler ran): a background
 * thread begins no further step. */
int h5fz_gpu_exiting(void);

/* Called by the GPU context's initialisation right after each step at
 * which the CUDA driver or NVRTC may register exit handlers of their own
 * (loading libcuda, cuInit, loading NVRTC): one more handler that waits
 * for the threads, so that it runs before theirs (exit handlers run last
 * registered first). Harmless where no thread ever runs. */
void h5fz_gpu_exit_after_driver_step(void);

#endif /* H5FZ_GPU_EXIT_H */
