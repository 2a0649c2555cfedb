/*
 * h5fz_claim.c - items claimed one at a time by the caller and a pool of
 * workers (see h5fz_claim.h).
 *
 * The count of unclaimed items and the call's generation share one atomic
 * word (generation << 32 | unclaimed), and a claim is a compare-and-swap
 * of the whole word that takes the highest unclaimed item. So a worker
 * still holding an old generation (it woke after its call returned, or
 * was preempted between its load and its swap) can never take an item of
 * a later call, and needs no other field of the job before its claim has
 * succeeded; after that the caller waits for the item, so the job's fields
 * stay as they are until the worker is done with them. The caller waits
 * only for the count of items not yet done, never for a worker to wake.
 * The pool is started on the first call that needs it, grows to the
 * largest count asked for, and stops when the library is unloaded; a call
 * that finds the pool busy (another application thread is in one), or
 * that comes from one of its workers, runs its items here, alone.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "h5fz_claim.h"
#include "h5fz_internal.h"
#include "h5fz_workers.h"

typedef struct {
  _Atomic uint64_t word; /* generation << 32 | items not yet claimed */
  _Atomic uint32_t left; /* items not yet done */
  h5fz_claim_fn fn;
  h5fz_claim_release_fn release;
  void *ctx;
  int rc;             /* the failure of the lowest failing item, under the pool's lock */
  uint32_t failed_at; /* that item */
  char err[256];
} claim_job;

static struct {
  h5fz_workers w;      /* w.threads[0 .. w.n_workers) */
  uint32_t generation; /* the last call's, published under w.lock */
  claim_job job;
} pool = {.w = H5FZ_WORKERS_INIT};

static _Thread_local int on_claim_worker;

/* Take an item of generation g: 1 with *item, or 0 when none is left. */
static int claim(uint32_t g, uint32_t *item)
{
  uint64_t cur = atomic_load_explicit(&pool.job.word, memory_order_acquire);
  for (;;) {
    if ((uint32_t)(cur >> 32) != g || (uint32_t)cur == 0) return 0;
    if (atomic_compare_exchange_weak_explicit(&pool.job.word, &cur, cur - 1u, memory_order_acq_rel,
                                              memory_order_acquire)) {
      *item = (uint32_t)cur - 1u;
      return 1;
    }
  }
}

/* Item i failed with rc: kept when it is the lowest failing item so far,
 * so the call reports what running the items in order would have. */
static void record_failure(int rc, uint32_t i)
{
  pthread_mutex_lock(&pool.w.lock);
  if (!pool.job.rc || i < pool.job.failed_at) {
    pool.job.rc = rc;
    pool.job.failed_at = i;
    strncpy(pool.job.err, h5fz_last_error(), sizeof pool.job.err - 1);
  }
  pthread_mutex_unlock(&pool.w.lock);
}

/* Run items of generation g until none is left to claim. */
static void participate(uint32_t g)
{
  void *state = NULL;
  h5fz_claim_release_fn release = NULL;
  uint32_t i;
  while (claim(g, &i)) {
    claim_job *j = &pool.job; /* its fields are this generation's until our item is done */
    release = j->release;
    int rc = j->fn(j->ctx, i, &state);
    if (rc) record_failure(rc, i);
    if (atomic_fetch_sub_explicit(&j->left, 1u, memory_order_acq_rel) == 1u) {
      pthread_mutex_lock(&pool.w.lock);
      pthread_cond_broadcast(&pool.w.done);
      pthread_mutex_unlock(&pool.w.lock);
    }
  }
  if (state) release(state);
}

static void *claim_worker(void *arg)
{
  (void)arg;
  on_claim_worker = 1;
  pthread_mutex_lock(&pool.w.lock);
  uint32_t seen = pool.generation;
  for (;;) {
    while (!pool.w.quit && pool.generation == seen) pthread_cond_wait(&pool.w.work, &pool.w.lock);
    if (pool.w.quit) break;
    seen = pool.generation;
    pthread_mutex_unlock(&pool.w.lock);
    participate(seen);
    pthread_mutex_lock(&pool.w.lock);
  }
  pthread_mutex_unlock(&pool.w.lock);
  return NULL;
}

/* A child of fork() has none of the parent's workers: start afresh. */
static void pool_after_fork_child(void) { h5fz_workers_after_fork(&pool.w); }

static void pool_register_fork(void) { pthread_atfork(NULL, NULL, pool_after_fork_child); }

/* When the library is unloaded or the process exits: stop the idle
 * workers, so none is left waiting in code that is no longer mapped. */
__attribute__((destructor)) static void pool_stop(void) { h5fz_workers_stop(&pool.w, 0); }

/* At least want workers, as many as could be started; under pool.w.call. */
static void pool_grow(unsigned want)
{
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, pool_register_fork);
  while (pool.w.n_workers < want && pool.w.n_workers < H5FZ_MAX_HOST_THREADS &&
         !pthread_create(&pool.w.threads[pool.w.n_workers], NULL, claim_worker, NULL))
    pool.w.n_workers++;
}

/* The items here, in order (no pool). */
static int run_alone(uint32_t n, h5fz_claim_fn fn, h5fz_claim_release_fn release, void *ctx)
{
  void *state = NULL;
  int first = H5FZ_OK;
  char err[256] = "";
  for (uint32_t i = 0; i < n; i++) {
    int rc = fn(ctx, i, &state);
    if (rc && !first) {
      first = rc;
      strncpy(err, h5fz_last_error(), sizeof err - 1);
    }
  }
  if (state) release(state);
  return first ? h5fz_fail(first, "%s", err) : H5FZ_OK;
}

int h5fz_claim_for(unsigned threads, uint32_t n, h5fz_claim_fn fn, h5fz_claim_release_fn release, void *ctx)
{
  if (threads <= 1 || n <= 1 || on_claim_worker || pthread_mutex_trylock(&pool.w.call))
    return run_alone(n, fn, release, ctx);
  if (!pool.w.quit) pool_grow(threads - 1u);
  if (pool.w.quit || !pool.w.n_workers) {
    pthread_mutex_unlock(&pool.w.call);
    return run_alone(n, fn, release, ctx);
  }
  claim_job *j = &pool.job;
  j->fn = fn;
  j->release = release;
  j->ctx = ctx;
  j->rc = 0;
  j->err[sizeof j->err - 1] = '\0';
  atomic_store_explicit(&j->left, n, memory_order_relaxed);
  pthread_mutex_lock(&pool.w.lock);
  uint32_t g = ++pool.generation;
  /* published with release order: a claim that sees it sees the fields */
  atomic_store_explicit(&j->word, (uint64_t)g << 32 | n, memory_order_release);
  pthread_cond_broadcast(&pool.w.work);
  pthread_mutex_unlock(&pool.w.lock);
  participate(g);
  pthread_mutex_lock(&pool.w.lock);
  while (atomic_load_explicit(&j->left, memory_order_acquire)) pthread_cond_wait(&pool.w.done, &pool.w.lock);
  int rc = j->rc;
  char err[256];
  memcpy(err, j->err, sizeof err);
  err[sizeof err - 1] = '\0';
  pthread_mutex_unlock(&pool.w.lock);
  pthread_mutex_unlock(&pool.w.call);
  return rc ? h5fz_fail(rc, "%s", err) : H5FZ_OK;
}
