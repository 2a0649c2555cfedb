/*
 * core_block.h - a block of pthreads as the GPU runs an op's block, for the
 * core tests of SPMD ops (test_lnd_spmd.c, test_huff.c): run_block starts
 * nthreads threads, each with its own h5fz_blk {tid, nthreads, NULL}, that
 * meet at the barrier h5fz_blk_sync waits on and share the scan table of
 * h5fz_blk_exscan (device_ops/h5fz_dev.h).
 *
 * Define H5FZ_TEST_BLOCK_THREADS (the most threads a block has) before
 * including any device_ops header, and include this header once, in the
 * test's one source file: it defines the barrier and the scan table the
 * ops' test forms declare.
 */
#ifndef CORE_BLOCK_H
#define CORE_BLOCK_H

#ifndef H5FZ_TEST_BLOCK_THREADS
#error "define H5FZ_TEST_BLOCK_THREADS before including core_block.h and the device_ops headers"
#endif

#include <pthread.h>
#include <stdint.h>

#include "../../device_ops/h5fz_dev.h"

pthread_barrier_t h5fz_test_barrier;
uint64_t h5fz_test_scan[H5FZ_TEST_BLOCK_THREADS];

/* What each thread of a block runs, with the block's shared context. */
typedef void (*block_fn)(const h5fz_blk *blk, void *ctx);

typedef struct {
  h5fz_blk blk;
  block_fn fn;
  void *ctx;
} block_thread;

static void *block_thread_main(void *arg)
{
  block_thread *a = arg;
  a->fn(&a->blk, a->ctx);
  return NULL;
}

/* Run fn(blk, ctx) on a block of nthreads (1..H5FZ_TEST_BLOCK_THREADS)
 * threads, thread 0 the caller's; returns when every thread has. */
static void run_block(uint32_t nthreads, block_fn fn, void *ctx)
{
  pthread_t tid[H5FZ_TEST_BLOCK_THREADS];
  block_thread args[H5FZ_TEST_BLOCK_THREADS];
  pthread_barrier_init(&h5fz_test_barrier, NULL, nthreads);
  for (uint32_t t = 0; t < nthreads; t++) {
    args[t].blk.tid = t;
    args[t].blk.nthreads = nthreads;
    args[t].blk.scan_scratch = NULL;
    args[t].fn = fn;
    args[t].ctx = ctx;
  }
  for (uint32_t t = 1; t < nthreads; t++) pthread_create(&tid[t], NULL, block_thread_main, &args[t]);
  block_thread_main(&args[0]);
  for (uint32_t t = 1; t < nthreads; t++) pthread_join(tid[t], NULL);
  pthread_barrier_destroy(&h5fz_test_barrier);
}

#endif /* CORE_BLOCK_H */
