/*
 * h5fz_workers.h - the lifecycle both host thread pools share
 * (h5fz_parallel.c's ranges, h5fz_claim.c's claimed items): the call lock
 * one parallel call holds, the lock and conditions its workers wait on,
 * the started threads, and what happens at fork() and at unload
 * (h5fz_workers.c). What a worker does stays each pool's own.
 */
#ifndef H5FZ_WORKERS_H
#define H5FZ_WORKERS_H

#include <pthread.h>

#include "h5fz_cpu_budget.h" /* H5FZ_MAX_HOST_THREADS */

typedef struct {
  pthread_mutex_t call;      /* held by the one call that uses the pool */
  pthread_mutex_t lock;      /* the pool's fields, its workers' waits */
  pthread_cond_t work, done; /* a new generation; the call's work done */
  pthread_t threads[H5FZ_MAX_HOST_THREADS];
  unsigned n_workers; /* threads started (where they sit in threads[] is the pool's) */
  int quit;           /* set at unload: the workers return */
} h5fz_workers;

/* The initializer of an h5fz_workers with static storage. */
#define H5FZ_WORKERS_INIT                                                                                              \
  {                                                                                                                    \
    .call = PTHREAD_MUTEX_INITIALIZER, .lock = PTHREAD_MUTEX_INITIALIZER, .work = PTHREAD_COND_INITIALIZER,            \
    .done = PTHREAD_COND_INITIALIZER                                                                                   \
  }

/* In a child of fork(), which has none of the parent's threads: the locks
 * and conditions made anew, no workers, not quitting. */
void h5fz_workers_after_fork(h5fz_workers *w);

/* When the library is unloaded or the process exits: unless a call holds
 * the pool (its workers are kept), tell the idle workers to return and
 * join threads[first .. first + n_workers), so none is left waiting in
 * code that is no longer mapped. */
void h5fz_workers_stop(h5fz_workers *w, unsigned first);

#endif /* H5FZ_WORKERS_H */
