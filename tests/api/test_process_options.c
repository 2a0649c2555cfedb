/*
 * test_process_options.c - h5fz_set_process_options (h5fz_dataset.h): the
 * options of what has no handle. The process starts with H5FZ_DEVICE=gpux
 * and H5FZ_DEVICE_STRICT=1 (CTest): a device no machine has, under
 * strictness, so every h5fz call that reads the variable fails, the
 * plugin's set_local at H5Dcreate first. Process options device=cpu,
 * quiet=1 reach the filter plugin HDF5 loads from HDF5_PLUGIN_PATH (this
 * program never registers the library mode): a dataset made with
 * h5fz_set_filter + H5Dcreate2, written with H5Dwrite and read with H5Dread
 * comes back within the bound. A dataset handle without options follows
 * them too; a handle's options win field by field; a plugin copy that lost
 * them is told again by h5fz_set_filter; NULL gives the environment back.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "filter_test_util.h"
#include "h5fz_dataset.h"
#include "h5fz_plugin_settings.h"

#define ROWS 64
#define COLS 96
#define BOUND 1e-3

static float data[ROWS * COLS], back[ROWS * COLS];
static char stack[4096]; /* the error stack of the last refused H5Dcreate2 */

/* A dataset through the plugin: a dcpl of h5fz_set_filter (or, with
 * plain, of H5Pset_filter with the same cd_values), H5Dcreate2, H5Dwrite,
 * H5Dread, every value within the bound. 1 when the create succeeded. */
static int through_filter(hid_t file, const char *name, int plain)
{
  hsize_t dims[2] = {ROWS, COLS}, chunk[2] = {16, COLS};
  hid_t dcpl;
  if (plain) {
    unsigned cd[H5FZ_CD_MAX];
    size_t n = ft_cd_from_text("abs=1e-3", cd);
    dcpl = ft_dcpl(2, chunk, H5Z_FLAG_MANDATORY, n, cd, 0);
  } else {
    dcpl = H5Pcreate(H5P_DATASET_CREATE);
    FT_CHECK(H5Pset_chunk(dcpl, 2, chunk) >= 0, "H5Pset_chunk");
    FT_CHECK(h5fz_set_filter(dcpl, "abs=1e-3") == H5FZ_OK, "h5fz_set_filter: %s", h5fz_last_error());
  }
  hid_t space = H5Screate_simple(2, dims, NULL);
  hid_t d = H5Dcreate2(file, name, H5T_NATIVE_FLOAT, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  if (d < 0) ft_error_stack(stack, sizeof stack);
  H5Pclose(dcpl);
  H5Sclose(space);
  if (d < 0) return 0;
  FT_CHECK(H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) >= 0, "%s: H5Dwrite", name);
  memset(back, 0, sizeof back);
  FT_CHECK(H5Dread(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, back) >= 0, "%s: H5Dread", name);
  int bad = 0;
  for (int i = 0; i < ROWS * COLS; i++) bad += !(fabs((double)back[i] - (double)data[i]) <= BOUND);
  FT_CHECK(bad == 0, "%s: %d values off by more than the bound", name, bad);
  H5Dclose(d);
  return 1;
}

int main(void)
{
  if (ft_begin("process_options")) return 1;
  FT_CHECK(getenv("H5FZ_DEVICE") && !strcmp(getenv("H5FZ_DEVICE"), "gpux"), "CTest sets H5FZ_DEVICE=gpux");
  for (int i = 0; i < ROWS * COLS; i++) data[i] = (float)sin(0.01 * i) * 10.0f;
  hid_t file = ft_create_file("process_options");

  /* the environment alone: the plugin's set_local refuses gpux */
  FT_CHECK(!through_filter(file, "environment", 0), "H5FZ_DEVICE=gpux (strict) did not stop the create");
  FT_CHECK(ft_contains(stack, "gpux"), "the refusal names the value: %s", ft_ours(stack));

  h5fz_options *opts = h5fz_options_create();
  FT_CHECK(opts && h5fz_options_set_device(opts, "cpu") == H5FZ_OK && h5fz_options_set_quiet(opts, 1) == H5FZ_OK,
           "options device=cpu quiet=1");
  FT_CHECK(h5fz_set_process_options(opts) == H5FZ_OK, "h5fz_set_process_options: %s", h5fz_last_error());
  h5fz_options_free(opts); /* the process keeps its own copy */
  FT_CHECK(through_filter(file, "process", 0), "process options device=cpu: the plugin's create failed: %s",
           ft_ours(stack));

  /* the dataset API: a handle without options follows them; a handle's own win field by field */
  hsize_t dims[2] = {ROWS, COLS}, chunk[2] = {16, COLS};
  hid_t d = -1;
  FT_CHECK(h5fz_dataset_create(file, "api", H5T_NATIVE_FLOAT, 2, dims, chunk, "abs=1e-3", &d) == H5FZ_OK,
           "h5fz_dataset_create under process options: %s", h5fz_last_error());
  h5fz_dataset_report rep;
  int rc = h5fz_dataset_write(d, data, H5FZ_MEM_HOST, &rep);
  FT_CHECK(rc == H5FZ_OK && !rep.on_gpu, "a handle without options: the process's cpu (rc %d: %s)", rc,
           h5fz_last_error());
  h5fz_options *mine = h5fz_options_create();
  h5fz_options_set_threads(mine, 1); /* device: the process's */
  h5fz_dataset_set_options(d, mine);
  rc = h5fz_dataset_write(d, data, H5FZ_MEM_HOST, &rep);
  FT_CHECK(rc == H5FZ_OK && !rep.on_gpu, "handle threads=1, the process's device cpu (rc %d: %s)", rc,
           h5fz_last_error());
  h5fz_options_set_device(mine, "gpu");
  h5fz_options_set_strict(mine, 1);
  h5fz_dataset_set_options(d, mine);
  rc = h5fz_dataset_write(d, data, H5FZ_MEM_HOST, &rep);
  /* no GPU: the strict GPU fails; with one it runs there; the process's cpu must not win */
  FT_CHECK(rc != H5FZ_OK || rep.on_gpu, "the handle's device=gpu lost to the process's cpu");
  h5fz_options_free(mine);
  H5Dclose(d);

  /* a plugin copy that lost them (as one loaded after the call would not
   * have them): h5fz_set_filter tells it again before the create */
  h5fz_plugin_settings_msg clear = {
      .version = H5FZ_PLUGIN_SETTINGS_VERSION, .gpu_ordinal = -1, .process = H5FZ_PLUGIN_PROCESS_CLEAR};
  h5fz_plugin_options_init(&clear.options);
  FT_CHECK(h5fz_plugin_copies_tell(&clear, NULL) == 1, "one plugin copy cleared");
  FT_CHECK(!through_filter(file, "lost", 1), "the cleared plugin still had the options");
  FT_CHECK(through_filter(file, "told_again", 0), "h5fz_set_filter did not tell the plugin again: %s", ft_ours(stack));

  /* NULL: the environment again, in the plugin too */
  FT_CHECK(h5fz_set_process_options(NULL) == H5FZ_OK, "clear: %s", h5fz_last_error());
  FT_CHECK(!through_filter(file, "cleared", 0), "after h5fz_set_process_options(NULL) gpux did not stop the create");
  H5Fclose(file);
  return ft_finish();
}
