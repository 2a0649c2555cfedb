/*
 * The plugin's copy of the codec reads the H5FZ_* variables once per
 * process (fusion/h5fz_settings.h): a mistyped H5FZ_DEVICE set after the
 * plugin's first call is not seen by set_local (H5Dcreate succeeds, the
 * chunks are written and read within the bound), until the program tells
 * the plugin to take the environment again through its entry point
 * h5fz_plugin_settings (filter/h5fz_plugin_settings.h): then set_local
 * refuses the value, with the reason, and after the variable is unset and
 * the plugin told again a create succeeds. The entry point refuses a
 * version it does not know and an ordinal out of range. Version 2 sets
 * the process's options: device=cpu over the environment's gpux makes
 * set_local succeed, clearing them brings the refusal back, and a message
 * with any field out of range is refused and changes nothing; a version-1
 * message (the shorter struct of older callers) is still taken.
 */
#include <dlfcn.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "filter_test_util.h"
#include "h5fz_plugin_settings.h"

#define N 4096

/* The message as version 1 had it: what an older caller hands over. */
typedef struct {
  uint32_t version, reload;
  int32_t gpu_ordinal;
} settings_msg_v1;

static float values[N];
static char last_stack[4096]; /* the error stack of the last refused H5Dcreate2 */

/* A dataset of one chunk with h5fz abs=1e-3, written and read back when
 * the create succeeds; 1 when H5Dcreate succeeded. */
static int create_write_read(hid_t f, const char *name)
{
  unsigned cd[H5FZ_CD_MAX];
  size_t n = ft_cd_from_text("abs=1e-3", cd);
  hsize_t dims[1] = {N}, chunk[1] = {N};
  hid_t space = H5Screate_simple(1, dims, NULL);
  hid_t dcpl = ft_dcpl(1, chunk, H5Z_FLAG_MANDATORY, n, cd, 0);
  hid_t d = H5Dcreate2(f, name, H5T_NATIVE_FLOAT, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  if (d < 0) ft_error_stack(last_stack, sizeof last_stack); /* before the next HDF5 call clears it */
  H5Pclose(dcpl);
  H5Sclose(space);
  if (d < 0) return 0;
  static float back[N];
  FT_CHECK(H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, values) >= 0, "%s: H5Dwrite", name);
  FT_CHECK(H5Dread(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, back) >= 0, "%s: H5Dread", name);
  int bad = 0;
  for (int i = 0; i < N; i++) bad += !(fabs((double)back[i] - (double)values[i]) <= 1e-3);
  FT_CHECK(bad == 0, "%s: %d values off by more than the bound", name, bad);
  H5Dclose(d);
  return 1;
}

int main(void)
{
  unsetenv("H5FZ_DEVICE");
  setenv("H5FZ_QUIET", "1", 1);
  if (ft_begin("filter_plugin_settings") < 0) return ft_finish();
  for (int i = 0; i < N; i++) values[i] = (float)sin(i * 0.01) * 10.0f;
  hid_t f = ft_create_file("plugin_settings");
  FT_CHECK(create_write_read(f, "first"), "the first create (H5FZ_DEVICE unset) failed");

  setenv("H5FZ_DEVICE", "gpux", 1); /* after the plugin's first call: its snapshot keeps auto */
  FT_CHECK(create_write_read(f, "after_setenv"),
           "H5FZ_DEVICE=gpux set after the plugin's first call reached set_local (read once per process)");

  FT_CHECK(ft_plugin_setenv("H5FZ_DEVICE", "gpux") == 1, "one plugin copy told");
  FT_CHECK(!create_write_read(f, "after_reload"), "after the plugin's reload, set_local took H5FZ_DEVICE=gpux");
  FT_CHECK(ft_contains(last_stack, "gpux"), "the refusal names the value: %s", last_stack);

  ft_plugin_setenv("H5FZ_DEVICE", NULL);
  FT_CHECK(create_write_read(f, "unset_again"), "H5FZ_DEVICE unset and the plugin told: the create failed");

  /* the entry point's own refusals */
  char path[1024];
  snprintf(path, sizeof path, "%s/libh5fz.so", getenv("HDF5_PLUGIN_PATH") ? getenv("HDF5_PLUGIN_PATH") : ".");
  void *h = dlopen(path, RTLD_LAZY | RTLD_NOLOAD);
  void *sym = h ? dlsym(h, H5FZ_PLUGIN_SETTINGS_SYMBOL) : NULL;
  FT_CHECK(sym != NULL, "%s: no %s in the loaded plugin", path, H5FZ_PLUGIN_SETTINGS_SYMBOL);
  if (sym) {
    h5fz_plugin_settings_fn fn;
    memcpy(&fn, &sym, sizeof fn);
    h5fz_plugin_settings_msg m = {.version = H5FZ_PLUGIN_SETTINGS_VERSION + 1, .reload = 0, .gpu_ordinal = -1};
    FT_CHECK(fn(&m) == -1, "a version the plugin does not know is refused");
    m.version = H5FZ_PLUGIN_SETTINGS_VERSION;
    m.gpu_ordinal = 1024;
    FT_CHECK(fn(&m) == -1, "ordinal 1024 is refused");
    m.gpu_ordinal = 0;
    FT_CHECK(fn(&m) == 0, "ordinal 0 is taken");
    FT_CHECK(fn(NULL) == -1, "NULL is refused");
    m.version = 0;
    FT_CHECK(fn(&m) == -1, "version 0 is refused");

    /* version 1, the shorter struct: taken (a reload). It ends where an
     * inaccessible page begins, so a plugin reading past an older caller's
     * 12 bytes crashes the test. */
    long page = sysconf(_SC_PAGESIZE);
    char *pages = mmap(NULL, 2 * (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    FT_CHECK(pages != MAP_FAILED && mprotect(pages + page, (size_t)page, PROT_NONE) == 0, "a guard page");
    if (pages == MAP_FAILED) return ft_finish();
    settings_msg_v1 *v1p = (settings_msg_v1 *)(void *)(pages + page - sizeof(settings_msg_v1));
    *v1p = (settings_msg_v1){.version = 1, .reload = 1, .gpu_ordinal = -1};
    const h5fz_plugin_settings_msg *as_v1 = (const h5fz_plugin_settings_msg *)(void *)v1p;
    FT_CHECK(fn(as_v1) == 0, "a version-1 message is taken");
    v1p->gpu_ordinal = 2000;
    FT_CHECK(fn(as_v1) == -1, "a version-1 ordinal 2000 is refused");

    /* version 2: the process's options over the environment's gpux */
    FT_CHECK(ft_plugin_setenv("H5FZ_DEVICE", "gpux") == 1, "the plugin takes gpux");
    FT_CHECK(!create_write_read(f, "v2_before"), "gpux in the plugin's snapshot: set_local refuses");
    h5fz_plugin_settings_msg set = {.version = 2, .gpu_ordinal = -1, .process = H5FZ_PLUGIN_PROCESS_SET};
    h5fz_plugin_options_init(&set.options);
    set.options.device = 1; /* cpu */
    const struct {
      const char *what;
      size_t offset;
      int32_t value;
    } bad[] = {{"device 3", offsetof(h5fz_plugin_options, device), 3},
               {"gpu_ordinal 1024", offsetof(h5fz_plugin_options, gpu_ordinal), 1024},
               {"threads 1025", offsetof(h5fz_plugin_options, threads), 1025},
               {"threads -2", offsetof(h5fz_plugin_options, threads), -2},
               {"strict 2", offsetof(h5fz_plugin_options, strict), 2},
               {"quiet 5", offsetof(h5fz_plugin_options, quiet), 5}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
      h5fz_plugin_settings_msg b = set;
      memcpy((char *)&b.options + bad[i].offset, &bad[i].value, sizeof bad[i].value);
      FT_CHECK(fn(&b) == -1, "v2 %s is refused", bad[i].what);
    }
    h5fz_plugin_settings_msg b = set;
    memset(b.options.cache_dir, 'x', sizeof b.options.cache_dir);
    FT_CHECK(fn(&b) == -1, "v2 cache_dir without its NUL is refused");
    b = set;
    b.process = 3;
    FT_CHECK(fn(&b) == -1, "v2 process=3 is refused");
    b = set;
    b.gpu_ordinal = 1024;
    FT_CHECK(fn(&b) == -1, "v2 with ordinal 1024 is refused (its options not taken)");
    FT_CHECK(!create_write_read(f, "v2_refused"), "a refused message changed the plugin's options");
    FT_CHECK(fn(&set) == 0, "v2 device=cpu is taken");
    FT_CHECK(create_write_read(f, "v2_cpu"), "process options device=cpu over gpux: set_local refused");
    v1p->gpu_ordinal = -1; /* a version-1 reload keeps the process's options */
    FT_CHECK(fn(as_v1) == 0, "a version-1 reload is taken");
    FT_CHECK(create_write_read(f, "v2_after_v1"), "a version-1 reload dropped the process's options");
    h5fz_plugin_settings_msg clear = {.version = 2, .gpu_ordinal = -1, .process = H5FZ_PLUGIN_PROCESS_CLEAR};
    FT_CHECK(fn(&clear) == 0, "v2 clear is taken");
    FT_CHECK(!create_write_read(f, "v2_cleared"), "cleared: gpux refused again");
    ft_plugin_setenv("H5FZ_DEVICE", NULL);
    munmap(pages, 2 * (size_t)page);
  }
  if (h) dlclose(h);
  H5Fclose(f);
  printf("set_local kept the plugin's snapshot after a setenv, took the variable after h5fz_plugin_settings\n");
  return ft_finish();
}
