/*
 * h5fz_parallel.c - a parallel for over host threads, for the host sides of
 * the batch path (gathering chunks, writing containers). Plain pthreads:
 * one contiguous range per thread, no pool (a batch is big enough for the
 * thread start-up not to matter).
 */
#include <pthread.h>
#include <string.h>

#include "h5fz_exec.h"

typedef struct {
  int (*fn)(void *, uint64_t);
  void *ctx;
  uint64_t lo, hi;
  int rc;
  char err[256];
} range_task;

static void *run_range(void *arg)
{
  range_task *t = arg;
  for (uint64_t i = t->lo; i < t->hi && !t->rc; i++) t->rc = t->fn(t->ctx, i);
  if (t->rc) strncpy(t->err, h5fz_last_error(), sizeof t->err - 1);
  return NULL;
}

int h5fz_parallel_for(uint64_t n, int (*fn)(void *ctx, uint64_t i), void *ctx)
{
  enum { MAX = 64 };
  unsigned nt = h5fz_cpu_threads(n > 0xffffffffu ? 0xffffffffu : (uint32_t)n);
  if (nt > MAX) nt = MAX;
  range_task tasks[MAX];
  pthread_t threads[MAX];
  int started[MAX] = {0};
  memset(tasks, 0, sizeof tasks);
  for (unsigned t = 0; t < nt; t++) {
    tasks[t].fn = fn;
    tasks[t].ctx = ctx;
    tasks[t].lo = n * t / nt;
    tasks[t].hi = n * (t + 1) / nt;
    /* thread 0's range runs on the caller; a thread that cannot start too */
    if (t > 0) started[t] = pthread_create(&threads[t], NULL, run_range, &tasks[t]) == 0;
  }
  for (unsigned t = 0; t < nt; t++)
    if (!started[t]) run_range(&tasks[t]);
  for (unsigned t = 1; t < nt; t++)
    if (started[t]) pthread_join(threads[t], NULL);
  for (unsigned t = 0; t < nt; t++)
    if (tasks[t].rc) return h5fz_fail(tasks[t].rc, "%s", tasks[t].err);
  return H5FZ_OK;
}
