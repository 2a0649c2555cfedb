/*
 * test_process_overrides.c - the process's overrides (fusion/h5fz_settings.h,
 * h5fz_overrides_set_process: what h5fz_set_process_options and
 * h5fz.set_process_options give the codec copies, for the calls that have
 * no handle). Field by field: the calling thread's overrides win, then the
 * process's, then the environment's snapshot; every thread sees the
 * process's (the thread's are its own); a value out of range is refused
 * and changes nothing; NULL gives the environment back. Runs on any
 * machine: the environment says a device no machine has, under
 * strictness, which fails a chunk call wherever it is read.
 */
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h5fz.h"
#include "h5fz_settings.h"

#include "core_check.h"

static float values[4096];

/* One chunk through the public codec; H5FZ_OK or its failure. */
static int encode(void) { return core_encode_f32(values, sizeof values / sizeof *values); }

static h5fz_settings read_all(void)
{
  h5fz_settings s;
  memset(&s, 0, sizeof s);
  h5fz_settings_read(&s, H5FZ_SETTINGS_HOST | H5FZ_SETTINGS_GPU | H5FZ_SETTINGS_DEVICE);
  return s;
}

static void *read_on_a_thread(void *arg)
{
  *(h5fz_settings *)arg = read_all();
  return NULL;
}

/* The cache folder the codec would use now ("" when there is none). */
static const char *cache_dir(void)
{
  static char dir[H5FZ_SETTINGS_VALUE_MAX];
  return h5fz_settings_cache_dir(dir, sizeof dir) == H5FZ_OK ? dir : "";
}

int main(void)
{
  for (int i = 0; i < 4096; i++) values[i] = (float)i * 0.25f;
  static const char *const environment[][2] = {
      {"H5FZ_DEVICE", "gpuu"},   {"H5FZ_DEVICE_STRICT", "1"},      {"H5FZ_THREADS", "5"},
      {"H5FZ_GPU_ORDINAL", "2"}, {"H5FZ_CACHE_DIR", "/env/cache"}, {"H5FZ_QUIET", "1"}};
  for (size_t i = 0; i < sizeof environment / sizeof *environment; i++) setenv(environment[i][0], environment[i][1], 1);
  h5fz_settings_reload();
  h5fz_settings s = read_all();
  CHECK(s.device == H5FZ_SETTING_DEVICE_BAD && s.device_strict && s.host_threads == 5,
        "the environment alone: device %d, strict %d, threads %u", s.device, s.device_strict, s.host_threads);
  CHECK(encode() == H5FZ_ERR_ARG, "a strict H5FZ_DEVICE=gpuu fails the chunk");

  /* the process's: device, threads, quiet and cache folder; strictness and the GPU stay the environment's */
  h5fz_overrides p;
  h5fz_overrides_init(&p);
  p.device = H5FZ_SETTING_DEVICE_CPU;
  p.host_threads = 3;
  p.quiet = 0;
  snprintf(p.cache_dir, sizeof p.cache_dir, "/process/cache");
  CHECK(h5fz_overrides_set_process(&p) == H5FZ_OK, "set the process's overrides: %s", h5fz_last_error());
  memset(&p, 0x55, sizeof p); /* the process keeps its own copy */
  s = read_all();
  CHECK(s.device == H5FZ_SETTING_DEVICE_CPU && !strcmp(s.device_text, "cpu"), "process device: %d (%s)", s.device,
        s.device_text);
  CHECK(s.host_threads == 3, "process threads: %u", s.host_threads);
  CHECK(s.device_strict && s.gpu_ordinal == 2 && s.gpu_ordinal_set,
        "the fields the process leaves: the environment's (strict %d, ordinal %d)", s.device_strict, s.gpu_ordinal);
  CHECK(!h5fz_settings_quiet(), "process quiet=0 over H5FZ_QUIET=1");
  CHECK(!strcmp(cache_dir(), "/process/cache"), "process cache folder: %s", cache_dir());
  CHECK(encode() == H5FZ_OK, "process device=cpu over a strict H5FZ_DEVICE=gpuu: %s", h5fz_last_error());

  /* every thread: the process's are not the calling thread's */
  h5fz_settings t;
  pthread_t th;
  CHECK(pthread_create(&th, NULL, read_on_a_thread, &t) == 0, "pthread_create");
  pthread_join(th, NULL);
  CHECK(t.device == H5FZ_SETTING_DEVICE_CPU && t.host_threads == 3, "another thread: device %d, threads %u", t.device,
        t.host_threads);

  /* the thread's over the process's, field by field */
  h5fz_overrides o;
  h5fz_overrides_init(&o);
  o.device = H5FZ_SETTING_DEVICE_GPU;
  o.quiet = 1;
  const h5fz_overrides *previous = h5fz_overrides_enter(&o);
  s = read_all();
  CHECK(s.device == H5FZ_SETTING_DEVICE_GPU && !strcmp(s.device_text, "gpu"), "thread device over the process's: %d",
        s.device);
  CHECK(s.host_threads == 3, "threads the thread leaves: the process's 3, not %u", s.host_threads);
  CHECK(s.device_strict, "strictness neither sets: the environment's");
  CHECK(h5fz_settings_quiet(), "thread quiet=1 over the process's 0");
  CHECK(!strcmp(cache_dir(), "/process/cache"), "cache folder the thread leaves: %s", cache_dir());
  snprintf(o.cache_dir, sizeof o.cache_dir, "/thread/cache");
  CHECK(!strcmp(cache_dir(), "/thread/cache"), "the thread's cache folder: %s", cache_dir());
  o.device = H5FZ_UNSET;
  s = read_all();
  CHECK(s.device == H5FZ_SETTING_DEVICE_CPU, "thread device unset: the process's cpu, not %d", s.device);
  h5fz_overrides_leave(previous);
  CHECK(!h5fz_settings_quiet(), "the thread's left: the process's quiet=0");

  /* refused, nothing changed */
  const struct {
    const char *what;
    size_t offset;
    int value;
  } bad[] = {{"device 3", offsetof(h5fz_overrides, device), 3},
             {"device -1", offsetof(h5fz_overrides, device), -1},
             {"strict 2", offsetof(h5fz_overrides, device_strict), 2},
             {"ordinal 1024", offsetof(h5fz_overrides, gpu_ordinal), 1024},
             {"threads 1025", offsetof(h5fz_overrides, host_threads), 1025},
             {"threads -1", offsetof(h5fz_overrides, host_threads), -1},
             {"quiet 2", offsetof(h5fz_overrides, quiet), 2}};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    h5fz_overrides_init(&o);
    o.device = H5FZ_SETTING_DEVICE_GPU; /* would show if anything were taken */
    memcpy((char *)&o + bad[i].offset, &bad[i].value, sizeof(int));
    CHECK(h5fz_overrides_set_process(&o) == H5FZ_ERR_ARG, "%s is refused", bad[i].what);
  }
  h5fz_overrides_init(&o);
  memset(o.cache_dir, 'x', sizeof o.cache_dir);
  CHECK(h5fz_overrides_set_process(&o) == H5FZ_ERR_ARG, "a cache folder without its NUL is refused");
  s = read_all();
  CHECK(s.device == H5FZ_SETTING_DEVICE_CPU && s.host_threads == 3, "after the refusals: device %d, threads %u",
        s.device, s.host_threads);

  /* NULL: the environment again */
  CHECK(h5fz_overrides_set_process(NULL) == H5FZ_OK, "clear");
  s = read_all();
  CHECK(s.device == H5FZ_SETTING_DEVICE_BAD && s.host_threads == 5, "cleared: device %d, threads %u", s.device,
        s.host_threads);
  CHECK(h5fz_settings_quiet(), "cleared: H5FZ_QUIET=1 again");
  CHECK(encode() == H5FZ_ERR_ARG, "cleared: the strict gpuu fails the chunk again");

  printf("%ld checks, %d failed\n", checks, failures);
  return failures != 0;
}
