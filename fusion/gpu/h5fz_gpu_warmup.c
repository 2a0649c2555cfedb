/*
 * h5fz_gpu_warmup.c - the GPU context's warm-up thread (see the header).
 *
 * The thread holds the context's lock while it initialises it, so a call
 * that must use the GPU simply waits on that lock; the context's `warming`
 * flag (set before the thread starts, cleared before the lock is released)
 * lets a call that may use the CPU see, without waiting, that the GPU is
 * not ready yet.
 *
 * Exit: HDF5 loads the plugin with dlopen and may unload it at H5close,
 * which runs from an exit handler; a thread still inside the plugin's code
 * would then crash. So the first warm-up pins the object that holds this
 * code (RTLD_NODELETE: never unloaded) and registers an exit handler that
 * waits for the threads still running. Not at plugin load: HDF5 dlopens
 * every plugin in HDF5_PLUGIN_PATH when it looks for any unknown filter,
 * and a process that never uses h5fz must not pay for a CUDA context.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "h5fz_gpu_chain.h"
#include "h5fz_gpu_context.h"
#include "h5fz_gpu_warmup.h"

#define MAX_WARMUPS 16 /* threads one process starts (one per new chain or context) */

static pthread_mutex_t threads_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_t threads[MAX_WARMUPS];
static int n_threads, exit_handler_set;

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
  if (h5fz_gpu_ensure_init(gc) == H5FZ_OK && j->have_plan) h5fz_gpu_get_chain(gc, &j->p, &c);
  h5fz_clear_error();
  atomic_store(&gc->warming, 0);
  pthread_mutex_unlock(&gc->lock);
  free(j);
  return NULL;
}

/* At exit: wait for the warm-ups still running (their code and the CUDA
 * driver must outlive them), but not for ever: the CUDA driver registers
 * its own exit handler at cuInit, after this one, so it runs first, and a
 * warm-up still inside the driver then never returns (seen on the H200:
 * api.set_filter, a library-mode program that exits right after a small
 * write, hung at exit with both threads in futex waits). After the
 * deadline the process exits with the thread in it, as it would without
 * this handler. */
#define JOIN_DEADLINE_S 5
static void join_warmups(void)
{
  pthread_mutex_lock(&threads_lock);
  int n = n_threads;
  n_threads = 0;
  pthread_mutex_unlock(&threads_lock);
  struct timespec deadline;
  clock_gettime(CLOCK_REALTIME, &deadline);
  deadline.tv_sec += JOIN_DEADLINE_S;
  for (int i = 0; i < n; i++) pthread_timedjoin_np(threads[i], NULL, &deadline);
}

/* In the child of a fork: the warm-up threads stayed in the parent, so
 * there is nothing to wait for at the child's exit. */
static void forget_threads(void)
{
  n_threads = 0;
  pthread_mutex_init(&threads_lock, NULL);
}

/* Keep the object holding this code loaded for the process (a no-op in a
 * program linked with the library). */
static void pin_self(void)
{
  Dl_info info;
  if (dladdr((void *)&h5fz_gpu_warm_up, &info) && info.dli_fname)
    dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE); /* the handle is kept by the loader */
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
  int started = 0;
  pthread_mutex_lock(&threads_lock);
  if (j && n_threads < MAX_WARMUPS) {
    if (!exit_handler_set) {
      pin_self();
      exit_handler_set = atexit(join_warmups) == 0 && pthread_atfork(NULL, NULL, forget_threads) == 0;
    }
    j->gc = gc;
    j->have_plan = p != NULL;
    if (p) j->p = *p;
    started = exit_handler_set && pthread_create(&threads[n_threads], NULL, warm, j) == 0;
    if (started) n_threads++;
  }
  pthread_mutex_unlock(&threads_lock);
  if (!started) {
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
