/*
 * h5fz_parallel.c - host threads: how many (H5FZ_THREADS, else the CPUs
 * this process may use: h5fz_cpu_budget.c),
 * and a parallel for over them for the host sides of the GPU paths
 * (staging a chunk through pinned memory, gathering chunks, writing
 * containers): one contiguous range per thread, run by a pool of workers
 * started once. Why a pool: HDF5 hands the filter one chunk at a time, and
 * creating and joining 15 threads per 14 MiB chunk cost 0.34-0.39 ms on
 * the H200 host, a third of the chunk's whole GPU encode (1.18 ms,
 * h5fz_bench_filter_parts). A call that finds the pool busy (another
 * application thread is in one) or that runs on a worker creates threads
 * for itself as before, so calls never wait for each other or deadlock.
 */
#include <pthread.h>
#include <string.h>

#include "h5fz_internal.h"
#include "h5fz_parallel.h"
#include "h5fz_workers.h"

unsigned h5fz_cpu_threads(uint32_t n_subchunks)
{
  h5fz_cpu_budget b;
  h5fz_cpu_budget_read(&b);
  unsigned t = b.threads;
  if (t > n_subchunks) t = n_subchunks ? n_subchunks : 1u;
  return t;
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

/* The pool: worker w (1 .. n_workers) runs tasks[w] of each generation
 * that has one. `call` is held by the one parallel for that uses it. */
static struct {
  h5fz_workers w; /* w.threads[1 .. w.n_workers] */
  uint64_t born[H5FZ_MAX_HOST_THREADS];
  unsigned n_tasks, pending;
  uint64_t generation;
  range_task *tasks;
} pool = {.w = H5FZ_WORKERS_INIT};

static _Thread_local int on_pool_worker;

static void *pool_worker(void *arg)
{
  unsigned w = (unsigned)(uintptr_t)arg;
  on_pool_worker = 1;
  pthread_mutex_lock(&pool.w.lock);
  /* the generation when it was created: one dispatched before it first
   * takes the lock is still its to run */
  uint64_t seen = pool.born[w];
  for (;;) {
    while (!pool.w.quit && pool.generation == seen) pthread_cond_wait(&pool.w.work, &pool.w.lock);
    if (pool.w.quit) break;
    seen = pool.generation;
    if (w >= pool.n_tasks) continue;
    range_task *t = &pool.tasks[w];
    pthread_mutex_unlock(&pool.w.lock);
    run_range(t);
    pthread_mutex_lock(&pool.w.lock);
    if (--pool.pending == 0) pthread_cond_signal(&pool.w.done);
  }
  pthread_mutex_unlock(&pool.w.lock);
  return NULL;
}

/* A child of fork() has none of the parent's workers: start afresh. */
static void pool_after_fork_child(void)
{
  h5fz_workers_after_fork(&pool.w);
  pool.n_tasks = pool.pending = 0;
}

static void pool_register_fork(void) { pthread_atfork(NULL, NULL, pool_after_fork_child); }

/* When the library is unloaded (HDF5 closes its plugins at exit) or the
 * process exits: stop the idle workers, so none is left waiting in code
 * that is no longer mapped. A call still in flight keeps its workers. */
__attribute__((destructor)) static void pool_stop(void) { h5fz_workers_stop(&pool.w, 1); }

/* Workers 1 .. want - 1 exist (as many as could be started); under pool.w.call. */
static unsigned pool_grow(unsigned want)
{
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, pool_register_fork);
  while (pool.w.n_workers + 1 < want) {
    unsigned w = pool.w.n_workers + 1;
    pthread_mutex_lock(&pool.w.lock);
    pool.born[w] = pool.generation;
    int failed = pthread_create(&pool.w.threads[w], NULL, pool_worker, (void *)(uintptr_t)w);
    if (!failed) pool.w.n_workers = w;
    pthread_mutex_unlock(&pool.w.lock);
    if (failed) break;
  }
  return pool.w.n_workers + 1;
}

/* Run tasks[1 .. nt - 1] on threads created for this call, tasks[0] here. */
static void run_on_new_threads(range_task *tasks, unsigned nt)
{
  pthread_t threads[H5FZ_MAX_HOST_THREADS];
  int started[H5FZ_MAX_HOST_THREADS] = {0};
  for (unsigned t = 1; t < nt; t++) started[t] = pthread_create(&threads[t], NULL, run_range, &tasks[t]) == 0;
  for (unsigned t = 0; t < nt; t++)
    if (!started[t]) run_range(&tasks[t]); /* thread 0's range, and any whose thread did not start */
  for (unsigned t = 1; t < nt; t++)
    if (started[t]) pthread_join(threads[t], NULL);
}

/* Run tasks[0 .. nt - 1] on the pool (under pool.w.call, workers >= nt - 1). */
static void run_on_pool(range_task *tasks, unsigned nt)
{
  pthread_mutex_lock(&pool.w.lock);
  pool.tasks = tasks;
  pool.n_tasks = nt;
  pool.pending = nt - 1;
  pool.generation++;
  pthread_cond_broadcast(&pool.w.work);
  pthread_mutex_unlock(&pool.w.lock);
  run_range(&tasks[0]);
  pthread_mutex_lock(&pool.w.lock);
  while (pool.pending) pthread_cond_wait(&pool.w.done, &pool.w.lock);
  pool.n_tasks = 0;
  pthread_mutex_unlock(&pool.w.lock);
}

int h5fz_parallel_for(uint64_t n, int (*fn)(void *ctx, uint64_t i), void *ctx)
{
  enum { MAX = H5FZ_MAX_HOST_THREADS };
  unsigned nt = h5fz_cpu_threads(n > 0xffffffffu ? 0xffffffffu : (uint32_t)n);
  if (nt > MAX) nt = MAX;
  range_task tasks[MAX];
  memset(tasks, 0, sizeof tasks);
  for (unsigned t = 0; t < nt; t++) {
    tasks[t].fn = fn;
    tasks[t].ctx = ctx;
    tasks[t].lo = n * t / nt;
    tasks[t].hi = n * (t + 1) / nt;
  }
  if (nt == 1) {
    run_range(&tasks[0]);
  } else if (!on_pool_worker && !pthread_mutex_trylock(&pool.w.call)) {
    unsigned have = pool.w.quit ? 1 : pool_grow(nt);
    if (have >= nt)
      run_on_pool(tasks, nt);
    else
      run_on_new_threads(tasks, nt);
    pthread_mutex_unlock(&pool.w.call);
  } else {
    run_on_new_threads(tasks, nt);
  }
  for (unsigned t = 0; t < nt; t++)
    if (tasks[t].rc) return h5fz_fail(tasks[t].rc, "%s", tasks[t].err);
  return H5FZ_OK;
}
