/*
 * h5fz_claim.h - a parallel for whose items are claimed one at a time
 * (h5fz_claim.c), for the CPU executor's sub-chunks.
 *
 * Why not contiguous ranges, one per thread (h5fz_parallel_for): the call
 * then waits for every thread to run its range, and a thread the
 * scheduler has not yet run (a busy machine, other processes on the
 * cores) holds up the whole chunk; with 4 MiB chunks that wait came every
 * 2 ms, and on the shared 2-core machine two threads decoded slower than
 * one (docs/performance.md, issue 28). Here the caller and the pool's
 * workers take items from one shared count; a worker that wakes late
 * finds them taken, and the call returns once every claimed item is done.
 */
#ifndef H5FZ_CLAIM_H
#define H5FZ_CLAIM_H

#include <stdint.h>

/* One item: i in [0, n); *state is the participant's own (NULL at its
 * first item of a call; the function may allocate it). Returns 0 or a
 * status (h5fz_fail's, whose message is kept). */
typedef int (*h5fz_claim_fn)(void *ctx, uint32_t i, void **state);
/* Frees a participant's *state after its last item of a call (never with
 * NULL); may run after h5fz_claim_for has returned, so it must not use
 * the call's ctx. */
typedef void (*h5fz_claim_release_fn)(void *state);

/* Run fn(ctx, i, &state) once for every i in [0, n), in no set order, on
 * this thread and up to threads - 1 pool workers (threads >= 1; one
 * thread, or a call made while another call holds the pool, or from a
 * worker: here alone, in order). Every item runs even when one fails.
 * Returns H5FZ_OK or the status of the lowest failing item (its message in
 * h5fz_last_error()), as running them in order would. */
int h5fz_claim_for(unsigned threads, uint32_t n, h5fz_claim_fn fn, h5fz_claim_release_fn release, void *ctx);

#endif /* H5FZ_CLAIM_H */
