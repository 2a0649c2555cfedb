/*
 * h5fz_gpu_exit.c - the background threads and the exit (see the header).
 *
 * HDF5 loads the plugin with dlopen and may unload it at H5close, which
 * runs from an exit handler; a thread still inside the plugin's code would
 * then crash. So the first thread pins the object that holds this code
 * (RTLD_NODELETE) and registers an exit handler that waits for the threads
 * still running. Not at plugin load: HDF5 dlopens every plugin in
 * HDF5_PLUGIN_PATH when it looks for any unknown filter, and a process
 * that never uses h5fz must not pay for it.
 *
 * The order of the exit handlers matters: they run last registered first,
 * and the CUDA driver registers its own, which tears the driver down, when
 * it is loaded or initialised, i.e. after that first handler. A warm-up
 * still inside the driver when the driver's handler runs crashed the
 * process at exit (glibc: "pthread_mutex_lock: assertion failed", seen on
 * the H200 in filter_plugin_settings) or hung it until the first handler's
 * deadline (api.set_filter, both threads in futex waits; 5 s exits in
 * filter_plugin_settings). So the context's initialisation registers one
 * more handler right after loading libcuda, after cuInit and after loading
 * NVRTC (h5fz_gpu_exit_after_driver_step): it runs before theirs and waits
 * for the threads (their step in progress), and once exit has begun the
 * threads begin nothing more. Not covered: a process that exits while a
 * warm-up compiles a module with NVRTC (no embedded kernel, an empty
 * cache: seconds): libraries NVRTC loads during the compile register exit
 * handlers after ours, and such an exit was seen to die by a signal on
 * the H200 (H5FZ_JIT_EMBEDDED=0, an empty H5FZ_CACHE_DIR). The kernels
 * embedded at build time (every documented chain, the build machine's
 * GPUs or H5FZ_EMBED_ARCHS) and the disk cache avoid that compile.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "h5fz_gpu_exit.h"

#define MAX_THREADS 16 /* threads one process starts (one per new chain or context) */

static pthread_mutex_t threads_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_t threads[MAX_THREADS];
static int n_threads, exit_handler_set;
static atomic_int exiting;

/* The first handler (registered before the driver's, so it runs after it):
 * a thread inside the driver then may never return, hence a short deadline
 * after which the process exits with the thread in it. */
#define FIRST_DEADLINE_S 5
/* Before the driver's teardown a thread only ends its step in progress;
 * the deadline only guards against a driver that never returns. */
#define BEFORE_DRIVER_DEADLINE_S 120

static void join_within(int seconds)
{
  atomic_store(&exiting, 1);
  pthread_mutex_lock(&threads_lock);
  int n = n_threads;
  n_threads = 0;
  pthread_mutex_unlock(&threads_lock);
  struct timespec deadline;
  clock_gettime(CLOCK_REALTIME, &deadline);
  deadline.tv_sec += seconds;
  for (int i = 0; i < n; i++) pthread_timedjoin_np(threads[i], NULL, &deadline);
}

static void join_first(void) { join_within(FIRST_DEADLINE_S); }

static void join_before_driver(void) { join_within(BEFORE_DRIVER_DEADLINE_S); }

/* In the child of a fork: the threads stayed in the parent, so there is
 * nothing to wait for at the child's exit. */
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
  if (dladdr((void *)&h5fz_gpu_exit_start_thread, &info) && info.dli_fname)
    dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE); /* the handle is kept by the loader */
}

int h5fz_gpu_exit_start_thread(void *(*fn)(void *), void *arg)
{
  int started = 0;
  pthread_mutex_lock(&threads_lock);
  if (n_threads < MAX_THREADS && !atomic_load(&exiting)) {
    if (!exit_handler_set) {
      pin_self();
      exit_handler_set = atexit(join_first) == 0 && pthread_atfork(NULL, NULL, forget_threads) == 0;
    }
    started = exit_handler_set && pthread_create(&threads[n_threads], NULL, fn, arg) == 0;
    if (started) n_threads++;
  }
  pthread_mutex_unlock(&threads_lock);
  return started;
}

int h5fz_gpu_exiting(void) { return atomic_load(&exiting); }

void h5fz_gpu_exit_after_driver_step(void) { (void)atexit(join_before_driver); }
