/*
 * test_settings_once.c - h5fz reads its H5FZ_* variables once per process
 * (fusion/h5fz_settings.h): every group, device, GPU and JIT included, comes
 * from a snapshot of the environment at the first read. A process that
 * changes a variable after its first chunk call keeps the first value
 * until it calls h5fz_settings_reload; an options value (h5fz_overrides,
 * what a dataset handle's and h5fz.Options hand down) still wins over the
 * snapshot; h5fz_settings_set_gpu_ordinal changes the process's GPU in it
 * (h5fz_mpi_select_gpu) and leaves the rest as it was; a thread started
 * later sees the same snapshot. Runs on any machine: H5FZ_DEVICE=cpu,
 * then a device name no machine has under strictness, which fails a
 * chunk call whenever it is read.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h5fz.h"
#include "h5fz_planner.h"
#include "h5fz_settings.h"

#include "core_check.h"

static float values[4096];

/* One chunk through the public codec; H5FZ_OK or its failure. */
static int encode(void) { return core_encode_f32(values, sizeof values / sizeof *values); }

static void *read_gpu_group(void *arg)
{
  h5fz_settings *s = arg;
  h5fz_settings_read(s, H5FZ_SETTINGS_GPU | H5FZ_SETTINGS_DEVICE | H5FZ_SETTINGS_JIT);
  return NULL;
}

int main(void)
{
  for (int i = 0; i < 4096; i++) values[i] = (float)i * 0.25f;
  /* the process's environment at its first read */
  setenv("H5FZ_DEVICE", "cpu", 1);
  unsetenv("H5FZ_DEVICE_STRICT");
  unsetenv("H5FZ_GPU_ORDINAL");
  setenv("H5FZ_GPU_THREADS", "256", 1);
  unsetenv("H5FZ_JIT_EMBEDDED");
  setenv("H5FZ_QUIET", "1", 1); /* the bad values below say nothing */
  h5fz_settings_reload();       /* nothing read yet; makes the start explicit */
  CHECK(encode() == H5FZ_OK, "first chunk under H5FZ_DEVICE=cpu: %s", h5fz_last_error());

  /* changed after the first call: not seen */
  setenv("H5FZ_DEVICE", "gpuu", 1);
  setenv("H5FZ_DEVICE_STRICT", "1", 1);
  setenv("H5FZ_GPU_ORDINAL", "3", 1);
  setenv("H5FZ_GPU_THREADS", "512", 1);
  setenv("H5FZ_JIT_EMBEDDED", "0", 1);
  h5fz_settings s;
  memset(&s, 0, sizeof s);
  h5fz_settings_read(&s, H5FZ_SETTINGS_GPU | H5FZ_SETTINGS_DEVICE | H5FZ_SETTINGS_JIT);
  CHECK(s.device == H5FZ_SETTING_DEVICE_CPU && !strcmp(s.device_text, "cpu"),
        "H5FZ_DEVICE set after the first call was read: device %d (%s)", s.device, s.device_text);
  CHECK(!s.device_strict, "H5FZ_DEVICE_STRICT set after the first call was read");
  CHECK(s.gpu_ordinal == 0 && !s.gpu_ordinal_set, "H5FZ_GPU_ORDINAL set after the first call was read: %d (set %d)",
        s.gpu_ordinal, s.gpu_ordinal_set);
  CHECK(s.gpu_threads == 256, "H5FZ_GPU_THREADS: %d, want the first 256", s.gpu_threads);
  CHECK(s.jit_embedded == 1, "H5FZ_JIT_EMBEDDED set after the first call was read");
  CHECK(encode() == H5FZ_OK, "a chunk after setenv(H5FZ_DEVICE=gpuu, strict) still runs on the CPU: %s",
        h5fz_last_error());

  /* a thread started now reads the same snapshot */
  h5fz_settings t;
  memset(&t, 0, sizeof t);
  pthread_t th;
  CHECK(pthread_create(&th, NULL, read_gpu_group, &t) == 0, "pthread_create");
  pthread_join(th, NULL);
  CHECK(t.device == H5FZ_SETTING_DEVICE_CPU && t.gpu_threads == 256 && !t.device_strict,
        "another thread read other settings: device %d, GPU threads %d, strict %d", t.device, t.gpu_threads,
        t.device_strict);

  /* the process's GPU, set in the snapshot: the rest stays the first read's */
  CHECK(h5fz_settings_set_gpu_ordinal(7) == H5FZ_OK, "set_gpu_ordinal 7");
  CHECK(h5fz_settings_set_gpu_ordinal(1024) == H5FZ_ERR_ARG, "set_gpu_ordinal 1024 is refused");
  CHECK(h5fz_settings_set_gpu_ordinal(-1) == H5FZ_ERR_ARG, "set_gpu_ordinal -1 is refused");
  h5fz_settings_read(&s, H5FZ_SETTINGS_GPU | H5FZ_SETTINGS_DEVICE);
  CHECK(s.gpu_ordinal == 7 && s.gpu_ordinal_set, "after set_gpu_ordinal(7): %d (set %d)", s.gpu_ordinal,
        s.gpu_ordinal_set);
  CHECK(s.gpu_threads == 256 && s.device == H5FZ_SETTING_DEVICE_CPU,
        "set_gpu_ordinal changed the rest: GPU threads %d, device %d", s.gpu_threads, s.device);

  /* reload: the environment now */
  h5fz_settings_reload();
  h5fz_settings_read(&s, H5FZ_SETTINGS_GPU | H5FZ_SETTINGS_DEVICE | H5FZ_SETTINGS_JIT);
  CHECK(s.device == H5FZ_SETTING_DEVICE_BAD && !strcmp(s.device_text, "gpuu") && s.device_strict,
        "after the reload: device %d (%s), strict %d", s.device, s.device_text, s.device_strict);
  CHECK(s.gpu_ordinal == 3 && s.gpu_ordinal_set, "after the reload: GPU ordinal %d", s.gpu_ordinal);
  CHECK(s.gpu_threads == 512 && s.jit_embedded == 0, "after the reload: GPU threads %d, JIT embedded %d", s.gpu_threads,
        s.jit_embedded);
  int rc = encode();
  CHECK(rc == H5FZ_ERR_ARG && strstr(h5fz_last_error(), "gpuu"),
        "after the reload a strict H5FZ_DEVICE=gpuu fails the chunk: rc %d (%s)", rc, h5fz_last_error());

  /* options over the snapshot: device and ordinal from them, the variable unread */
  h5fz_overrides o;
  h5fz_overrides_init(&o);
  o.device = H5FZ_SETTING_DEVICE_CPU;
  o.gpu_ordinal = 5;
  const h5fz_overrides *previous = h5fz_overrides_enter(&o);
  h5fz_settings_read(&s, H5FZ_SETTINGS_GPU | H5FZ_SETTINGS_DEVICE);
  CHECK(s.device == H5FZ_SETTING_DEVICE_CPU && s.gpu_ordinal == 5, "the options' device %d and ordinal %d", s.device,
        s.gpu_ordinal);
  CHECK(s.device_strict && s.gpu_threads == 512, "the fields the options leave: the snapshot's");
  rc = encode();
  CHECK(rc == H5FZ_OK, "options device=cpu over a strict H5FZ_DEVICE=gpuu: %s", h5fz_last_error());
  h5fz_overrides_leave(previous);
  CHECK(encode() == H5FZ_ERR_ARG, "the options left: the snapshot's gpuu again");

  unsetenv("H5FZ_DEVICE");
  unsetenv("H5FZ_DEVICE_STRICT");
  unsetenv("H5FZ_GPU_ORDINAL");
  unsetenv("H5FZ_GPU_THREADS");
  unsetenv("H5FZ_JIT_EMBEDDED");
  h5fz_settings_reload();
  h5fz_settings_read(&s, H5FZ_SETTINGS_DEVICE);
  CHECK(s.device == H5FZ_SETTING_DEVICE_AUTO && !s.device_strict, "all unset and reloaded: auto, not strict");

  /* the variables handed on to the planner (below fusion/) and the CLI: the same snapshot */
  char buf[1100], dir[1100];
  setenv("H5FZ_REGISTRY", "/x/registry.txt", 1);
  setenv("H5FZ_CACHE_DIR", "/x/cache", 1);
  setenv("H5FZ_CHUNK_WALK", "grid", 1);
  h5fz_settings_reload();
  CHECK(h5fz_settings_value("H5FZ_REGISTRY", buf, sizeof buf) && !strcmp(buf, "/x/registry.txt"), "H5FZ_REGISTRY");
  CHECK(h5fz_settings_cache_dir(dir, sizeof dir) == H5FZ_OK && !strcmp(dir, "/x/cache"), "cache folder %s", dir);
  setenv("H5FZ_REGISTRY", "/y/registry.txt", 1);
  setenv("H5FZ_CACHE_DIR", "/y/cache", 1);
  unsetenv("H5FZ_CHUNK_WALK");
  CHECK(h5fz_settings_value("H5FZ_REGISTRY", buf, sizeof buf) && !strcmp(buf, "/x/registry.txt"),
        "H5FZ_REGISTRY changed after its first read was seen: %s", buf);
  CHECK(h5fz_settings_cache_dir(dir, sizeof dir) == H5FZ_OK && !strcmp(dir, "/x/cache"),
        "H5FZ_CACHE_DIR changed after its first read was seen: %s", dir);
  CHECK(h5fz_settings_value("H5FZ_CHUNK_WALK", buf, sizeof buf) && !strcmp(buf, "grid"), "H5FZ_CHUNK_WALK");
  h5fz_registry reg;
  CHECK(h5fz_registry_load_default(h5fz_settings_value("H5FZ_REGISTRY", buf, sizeof buf), &reg, NULL, 0) == H5FZ_ERR_IO,
        "the registry H5FZ_REGISTRY names (missing) is the one loaded");
  unsetenv("H5FZ_REGISTRY");
  unsetenv("H5FZ_CACHE_DIR");
  h5fz_settings_reload();
  CHECK(!h5fz_settings_value("H5FZ_REGISTRY", buf, sizeof buf) &&
            !h5fz_settings_value("H5FZ_CHUNK_WALK", buf, sizeof buf),
        "unset and reloaded");
  CHECK(h5fz_registry_load_default(h5fz_settings_value("H5FZ_REGISTRY", buf, sizeof buf), &reg, NULL, 0) == H5FZ_OK &&
            !strcmp(reg.source, "embedded"),
        "no H5FZ_REGISTRY: the embedded registry");
  /* long values: a path of 1100 bytes whole, never cut to fit a buffer, and one past any path ignored */
  static char longv[5000], got[H5FZ_SETTINGS_VALUE_MAX];
  memset(longv, 'a', 1100);
  longv[0] = '/';
  longv[1100] = '\0';
  setenv("H5FZ_REGISTRY", longv, 1);
  h5fz_settings_reload();
  CHECK(h5fz_settings_value("H5FZ_REGISTRY", got, sizeof got) && strlen(got) == 1100, "a 1100-byte path whole");
  CHECK(!h5fz_settings_value("H5FZ_REGISTRY", buf, 512), "a value longer than the caller's buffer is refused, not cut");
  memset(longv, 'a', 4999);
  longv[4999] = '\0';
  setenv("H5FZ_REGISTRY", longv, 1);
  h5fz_settings_reload();
  CHECK(!h5fz_settings_value("H5FZ_REGISTRY", got, sizeof got), "a value past any path is ignored");
  unsetenv("H5FZ_REGISTRY");
  h5fz_settings_reload();
  printf("%ld checks, %d failed\n", checks, failures);
  return failures ? 1 : 0;
}
