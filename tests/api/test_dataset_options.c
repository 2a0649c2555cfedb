/*
 * test_dataset_options.c - configuration as a value (h5fz_dataset.h,
 * "options"): a dataset handle with device=cpu, threads=1 and quiet
 * attached uses them while the environment says H5FZ_DEVICE=gpu,
 * H5FZ_DEVICE_STRICT=1, H5FZ_THREADS=3; a handle without options in the
 * same process keeps the environment's; detaching gives it back.
 *
 * The datasets are made before the variables are set (the filter's
 * set_local at H5Dcreate has no handle and reads them). The write under
 * the environment alone must not be a CPU write: it fails (no GPU, strict)
 * or runs on the GPU.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "filter_test_util.h"
#include "h5fz_dataset.h"
#include "h5fz_options.h"
#include "h5fz_parallel.h"

#define ROWS 64
#define COLS 96
#define BOUND 1e-3

static hid_t make(hid_t file, const char *name)
{
  hsize_t dims[2] = {ROWS, COLS}, chunk[2] = {16, COLS};
  hid_t dset = -1;
  int rc = h5fz_dataset_create(file, name, H5T_NATIVE_FLOAT, 2, dims, chunk, "abs=1e-3", &dset);
  FT_CHECK(rc == H5FZ_OK, "create %s: %s", name, h5fz_last_error());
  return dset;
}

/* What the codec would use for a call on dset: host threads, quiet, device. */
static void in_force(hid_t dset, unsigned *threads, int *quiet, int *device)
{
  h5fz_overrides o;
  const h5fz_overrides *previous = h5fz_overrides_enter(h5fz_dataset_overrides(dset, &o));
  h5fz_settings s;
  h5fz_settings_read(&s, H5FZ_SETTINGS_DEVICE);
  *threads = h5fz_cpu_threads(64);
  *quiet = h5fz_settings_quiet();
  *device = s.device;
  h5fz_overrides_leave(previous);
}

int main(void)
{
  if (ft_begin("dataset_options")) return 1;
  hid_t file = ft_create_file("options");
  FT_CHECK(file >= 0, "create the file");
  hid_t a = make(file, "with_options"), b = make(file, "environment_only");
  float *data = malloc(sizeof(float) * ROWS * COLS), *back = malloc(sizeof(float) * ROWS * COLS);
  for (int i = 0; i < ROWS * COLS; i++) data[i] = (float)sin(0.01 * i) * 10.0f;

  setenv("H5FZ_DEVICE", "gpu", 1);
  setenv("H5FZ_DEVICE_STRICT", "1", 1);
  setenv("H5FZ_THREADS", "3", 1);
  unsetenv("H5FZ_QUIET");
  h5fz_settings_reload(); /* H5FZ_THREADS and H5FZ_QUIET are read once per process */

  h5fz_options *opts = h5fz_options_create();
  FT_CHECK(opts != NULL, "h5fz_options_create");
  FT_CHECK(h5fz_options_set_device(opts, "CPU") == H5FZ_OK, "set_device cpu");
  FT_CHECK(h5fz_options_set_threads(opts, 1) == H5FZ_OK, "set_threads 1");
  FT_CHECK(h5fz_options_set_quiet(opts, 1) == H5FZ_OK, "set_quiet 1");
  FT_CHECK(h5fz_options_set_device(opts, "tpu") == H5FZ_ERR_ARG, "set_device tpu is refused");
  FT_CHECK(strstr(h5fz_last_error(), "tpu") != NULL, "the refusal names the text: %s", h5fz_last_error());
  FT_CHECK(h5fz_options_set_threads(opts, 2000) == H5FZ_ERR_ARG, "2000 threads are refused");
  FT_CHECK(h5fz_options_set_gpu_ordinal(opts, 1024) == H5FZ_ERR_ARG, "ordinal 1024 is refused");
  FT_CHECK(h5fz_dataset_set_options(file, opts) == H5FZ_ERR_ARG, "a file is not a dataset handle");
  FT_CHECK(h5fz_dataset_set_options(a, opts) == H5FZ_OK, "attach: %s", h5fz_last_error());
  h5fz_options_free(opts); /* the handle keeps its copy */

  unsigned threads;
  int quiet, device;
  in_force(a, &threads, &quiet, &device);
  FT_CHECK(threads == 1, "the handle's threads: %u, want 1 (H5FZ_THREADS=3)", threads);
  FT_CHECK(quiet == 1, "the handle's quiet");
  FT_CHECK(device == H5FZ_SETTING_DEVICE_CPU, "the handle's device: %d", device);
  in_force(b, &threads, &quiet, &device);
  FT_CHECK(threads == 3, "without options, H5FZ_THREADS: %u, want 3", threads);
  FT_CHECK(quiet == 0 && device == H5FZ_SETTING_DEVICE_GPU, "without options, the environment's quiet and device");

  h5fz_dataset_report rep;
  memset(&rep, 0, sizeof rep);
  int rc = h5fz_dataset_write(a, data, H5FZ_MEM_HOST, &rep);
  FT_CHECK(rc == H5FZ_OK, "write with device=cpu while H5FZ_DEVICE=gpu strict: %s", h5fz_last_error());
  FT_CHECK(!rep.on_gpu && !strcmp(rep.kernel_class, "cpu"), "the CPU executor wrote (%s)", rep.kernel_class);
  FT_CHECK(h5fz_dataset_read(a, back, H5FZ_MEM_HOST, &rep) == H5FZ_OK, "read: %s", h5fz_last_error());
  FT_CHECK(!rep.on_gpu, "the CPU executor read");
  double worst = 0;
  for (int i = 0; i < ROWS * COLS; i++) worst = fmax(worst, fabs((double)back[i] - (double)data[i]));
  FT_CHECK(worst <= BOUND, "every element within the bound: max error %g", worst);

  memset(&rep, 0, sizeof rep);
  rc = h5fz_dataset_write(b, data, H5FZ_MEM_HOST, &rep);
  FT_CHECK(rc != H5FZ_OK || rep.on_gpu, "without options the environment's strict GPU: rc %d, on_gpu %d", rc,
           rep.on_gpu);

  FT_CHECK(h5fz_dataset_set_options(a, NULL) == H5FZ_OK, "detach");
  in_force(a, &threads, &quiet, &device);
  FT_CHECK(threads == 3 && device == H5FZ_SETTING_DEVICE_GPU, "detached: the environment's again");

  unsetenv("H5FZ_DEVICE");
  unsetenv("H5FZ_DEVICE_STRICT");
  unsetenv("H5FZ_THREADS");
  h5fz_settings_reload();
  free(data);
  free(back);
  H5Dclose(a);
  H5Dclose(b);
  H5Fclose(file);
  return ft_finish();
}
