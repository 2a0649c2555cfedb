/*
 * h5fz_parallel.h - host threads (h5fz_parallel.c): how many, and a
 * parallel for over them.
 */
#ifndef H5FZ_PARALLEL_H
#define H5FZ_PARALLEL_H

#include <stdint.h>

#include "h5fz_cpu_budget.h" /* H5FZ_MAX_HOST_THREADS */

/* Threads the CPU executor uses for a chunk of n_subchunks: at most
 * n_subchunks of h5fz_cpu_budget_read's count (H5FZ_THREADS, else the
 * CPUs this process may use). */
unsigned h5fz_cpu_threads(uint32_t n_subchunks);

/* Run fn(ctx, i) for i in [0, n) on up to h5fz_cpu_threads(n) threads
 * (contiguous ranges per thread). Returns the first nonzero status. */
int h5fz_parallel_for(uint64_t n, int (*fn)(void *ctx, uint64_t i), void *ctx);

#endif /* H5FZ_PARALLEL_H */
