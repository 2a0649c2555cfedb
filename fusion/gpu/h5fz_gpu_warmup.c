/*
 * h5fz_gpu_warmup.c - the GPU context's warm-up thread (see the header).
 *
 * The thread holds the context's lock while it initialises it, so a call
 * that must use the GPU simply waits on that lock; the context's `warming`
 * flag (set before the thread starts, cleared before the lock is released)
 * lets a call that may use the CPU see, without waiting, that the GPU is
 * not ready yet.
 *
 * Exit: the thread is started by h5fz_gpu_exit.c, whose exit handlers
 * wait for it before the plugin's code and the CUDA driver go away; once
 * exit has begun, the warm-up begins no further step.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "h5fz_gpu_chain.h"
#include "h5fz_gpu_context.h"
#include "h5fz_gpu_exit.h"
#include "h5fz_gpu_warmup.h"

typedef struct {
  h5fz_gpu_context *gc;
  int have_plan;
  h5fz_chunk_plan p;
} warm_job;

static void *warm(void *arg)
{
  warm_job *j = arg;
  h5fz_gpu_context *gc = j->gc;
  pthread_mutex_lock(&gc->lock);
  h5fz_settings_read(&gc->settings, H5FZ_SETTINGS_GPU);
  int delay = gc->settings.warmup_delay_ms; /* tests: a context creation this slow */
  struct timespec ts = {delay / 1000, (long)(delay % 1000) * 1000000L};
  if (delay) nanosleep(&ts, NULL);
  chain_entry *c;
  /* a failure stays in the context (init) or the chain table (a refused
   * chain): the chunks meet it as they would without a warm-up */
  if (!h5fz_gpu_exiting() && h5fz_gpu_ensure_init(gc) == H5FZ_OK && j->have_plan && !h5fz_gpu_exiting())
    h5fz_gpu_get_chain(gc, &j->p, &c);
  h5fz_clear_error();
  atomic_store(&gc->warming, 0);
  pthread_mutex_unlock(&gc->lock);
  free(j);
  return NULL;
}

/* 1 when gc needs no warm-up for p: initialised and, with a plan, its
 * chain planned (usable or refused). Busy (locked): 0, the caller then
 * tries to start one and finds the warming flag or waits its turn. */
static int ready(h5fz_gpu_context *gc, const h5fz_chunk_plan *p)
{
  if (pthread_mutex_trylock(&gc->lock)) return 0;
  h5fz_settings_read(&gc->settings, H5FZ_SETTINGS_GPU);
  int done = gc->init_done && (!gc->usable || !p || h5fz_gpu_has_chain(gc, p));
  pthread_mutex_unlock(&gc->lock);
  return done;
}

void h5fz_gpu_warm_up(const h5fz_chunk_plan *p)
{
  h5fz_settings s;
  h5fz_settings_read(&s, H5FZ_SETTINGS_GPU);
  h5fz_gpu_context *gc = h5fz_gpu_context_of(s.gpu_ordinal);
  if (!gc || ready(gc, p)) {
    h5fz_clear_error();
    return;
  }
  int idle = 0;
  if (!atomic_compare_exchange_strong(&gc->warming, &idle, 1)) return; /* one warm-up per context at a time */
  warm_job *j = calloc(1, sizeof *j);
  if (j) {
    j->gc = gc;
    j->have_plan = p != NULL;
    if (p) j->p = *p;
  }
  if (!j || !h5fz_gpu_exit_start_thread(warm, j)) {
    free(j);
    atomic_store(&gc->warming, 0);
  }
}

int h5fz_gpu_warming(void)
{
  h5fz_settings s;
  h5fz_settings_read(&s, H5FZ_SETTINGS_GPU);
  h5fz_gpu_context *gc = h5fz_gpu_context_of(s.gpu_ordinal);
  return gc && atomic_load(&gc->warming);
}
