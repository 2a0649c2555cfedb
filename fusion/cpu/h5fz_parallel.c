/*
 * h5fz_parallel.c - host threads: how many (H5FZ_THREADS or the cores),
 * and a parallel for over them for the host sides of the batch path
 * (gathering chunks, writing containers). Plain pthreads:
 * one contiguous range per thread, no pool (a batch is big enough for the
 * thread start-up not to matter).
 */
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "h5fz_internal.h"
#include "h5fz_parallel.h"

unsigned h5fz_cpu_threads(uint32_t n_subchunks)
{
  h5fz_settings s;
  h5fz_settings_read(&s, H5FZ_SETTINGS_HOST);
  long t = (long)s.host_threads;
  if (t <= 0) t = sysconf(_SC_NPROCESSORS_ONLN);
  if (t <= 0) t = 1;
  if (t > H5FZ_MAX_HOST_THREADS) t = H5FZ_MAX_HOST_THREADS;
  if ((uint32_t)t > n_subchunks) t = n_subchunks ? (long)n_subchunks : 1;
  return (unsigned)t;
}

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
  enum { MAX = H5FZ_MAX_HOST_THREADS };
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
