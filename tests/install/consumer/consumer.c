/*
 * consumer.c - a program outside the h5fz tree, built against an installed
 * h5fz (by tests/install/run_install_test.sh: once through
 * find_package(h5fz), once through pkg-config). It writes a float32 field
 * with the dataset API and a float64 one through H5Pset_filter, reads both
 * back with H5Dread through the installed plugin (HDF5_PLUGIN_PATH) and
 * checks every element against the bound; and it asks the plugin file for
 * its version (h5fz_plugin_version), which must be the library's.
 *
 * usage: consumer OUT.h5 EXPECTED_VERSION
 * Built with -DH5FZ_FILTER_ID_INSTALLED=<id>, the id the package files
 * give (h5fz_FILTER_ID, pkg-config --variable=filter_id h5fz).
 * Exit 0 when every check passes, 1 otherwise (the reason on stderr).
 */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hdf5.h>

#include "h5fz.h"
#include "h5fz_dataset.h"

#define NZ 24
#define NY 40
#define NX 56
#define BOUND 1e-3

static int fail(const char *what)
{
  fprintf(stderr, "consumer: FAIL: %s\n", what);
  return 1;
}

/* A smooth field with some structure, so the codec has real work. */
static double field(int z, int y, int x)
{
  return 280.0 + 5.0 * sin(0.2 * x) * cos(0.15 * y) + 0.3 * z + 0.01 * ((x * 7 + y * 13 + z) % 17);
}

/* The plugin in $HDF5_PLUGIN_PATH must say the version the library says. */
static int check_plugin_version(const char *expected)
{
  const char *dir = getenv("HDF5_PLUGIN_PATH");
  char path[4096];
  void *lib;
  const char *(*version)(void);
  if (!dir) return fail("HDF5_PLUGIN_PATH is not set");
  snprintf(path, sizeof path, "%s/libh5fz.so", dir);
  lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) return fail(dlerror());
  *(void **)&version = dlsym(lib, "h5fz_plugin_version");
  if (!version) return fail("the plugin does not export h5fz_plugin_version");
  if (strcmp(version(), expected) || strcmp(h5fz_version(), expected)) {
    fprintf(stderr, "consumer: plugin %s, library %s, expected %s\n", version(), h5fz_version(), expected);
    return 1;
  }
  printf("consumer: plugin and library version %s\n", expected);
  dlclose(lib);
  return 0;
}

/* The float64 dataset through the filter: cd_values from the public spec
 * API, as `h5fz cd-values` prints them. */
static int write_through_filter(hid_t file, const double *a, const hsize_t *dims)
{
  h5fz_spec spec;
  unsigned cd[H5FZ_CD_USER_MAX];
  size_t n = 0;
  hsize_t chunk[3] = {8, NY, NX};
  hid_t space, dcpl, dset;
  int bad;
  if (h5fz_spec_parse("abs=1e-3", &spec) != H5FZ_OK ||
      h5fz_spec_to_cd_values(&spec, 0, cd, H5FZ_CD_USER_MAX, &n) != H5FZ_OK)
    return fail(h5fz_last_error());
  space = H5Screate_simple(3, dims, NULL);
  dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(dcpl, 3, chunk);
  H5Pset_filter(dcpl, H5FZ_FILTER_ID_INSTALLED, H5Z_FLAG_MANDATORY, n, cd);
  dset = H5Dcreate2(file, "filter_f64", H5T_IEEE_F64LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  bad = dset < 0 || H5Dwrite(dset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, a) < 0;
  if (dset >= 0) H5Dclose(dset);
  H5Pclose(dcpl);
  H5Sclose(space);
  return bad ? fail("H5Dcreate/H5Dwrite through the installed plugin") : 0;
}

/* Reads name back with H5Dread (the plugin decodes) and checks every
 * element; also that the stored bytes are fewer than the raw bytes. */
static int check_dataset(hid_t file, const char *name, const double *a, size_t n, size_t elem)
{
  hid_t dset = H5Dopen2(file, name, H5P_DEFAULT);
  double *b = malloc(n * sizeof *b), worst = 0.0;
  hsize_t stored;
  int bad = 0;
  if (dset < 0 || !b) return fail("open");
  if (H5Dread(dset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, b) < 0)
    return fail("H5Dread through the installed plugin");
  for (size_t i = 0; i < n; i++) {
    double e = fabs(a[i] - b[i]);
    if (!(e <= BOUND)) bad = 1; /* NaN-proof */
    if (e > worst) worst = e;
  }
  stored = H5Dget_storage_size(dset);
  printf("consumer: %s max_err %.3g (bound %g) ratio %.2f\n", name, worst, BOUND,
         (double)(n * elem) / (double)(stored ? stored : 1));
  H5Dclose(dset);
  free(b);
  if (bad) return fail("an element is outside the bound");
  if (stored == 0 || stored >= n * elem) return fail("the dataset was not compressed");
  return 0;
}

int main(int argc, char **argv)
{
  hsize_t dims[3] = {NZ, NY, NX}, chunk[3] = {8, NY, NX};
  size_t n = (size_t)NZ * NY * NX;
  float *f = malloc(n * sizeof *f);
  double *a = malloc(n * sizeof *a);
  hid_t file, dset;
  h5fz_dataset_report report;
  int bad = 0;
  if (argc != 3) {
    fprintf(stderr, "usage: consumer OUT.h5 EXPECTED_VERSION\n");
    return 2;
  }
  if (!f || !a) return fail("out of memory");
  if (check_plugin_version(argv[2])) return 1;
  for (int z = 0; z < NZ; z++)
    for (int y = 0; y < NY; y++)
      for (int x = 0; x < NX; x++) {
        size_t i = ((size_t)z * NY + y) * NX + x;
        f[i] = (float)field(z, y, x);
        a[i] = field(z, y, x);
      }
  file = H5Fcreate(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (file < 0) return fail("H5Fcreate");
  if (h5fz_dataset_create(file, "api_f32", H5T_NATIVE_FLOAT, 3, dims, chunk, "abs=1e-3", &dset) != H5FZ_OK)
    return fail(h5fz_last_error());
  if (h5fz_dataset_write(dset, f, H5FZ_MEM_HOST, &report) != H5FZ_OK) return fail(h5fz_last_error());
  printf("consumer: api_f32 written by the %s executor (kernel class %s)\n", report.on_gpu ? "GPU" : "CPU",
         report.kernel_class);
  H5Dclose(dset);
  if (write_through_filter(file, a, dims)) return 1;
  H5Fclose(file);

  file = H5Fopen(argv[1], H5F_ACC_RDONLY, H5P_DEFAULT);
  for (size_t i = 0; i < n; i++) a[i] = (double)f[i]; /* api_f32 holds the float32 values */
  bad |= check_dataset(file, "api_f32", a, n, sizeof(float));
  for (int z = 0; z < NZ; z++)
    for (int y = 0; y < NY; y++)
      for (int x = 0; x < NX; x++) a[((size_t)z * NY + y) * NX + x] = field(z, y, x);
  bad |= check_dataset(file, "filter_f64", a, n, sizeof(double));
  H5Fclose(file);
  free(f);
  free(a);
  if (!bad) printf("consumer: OK\n");
  return bad;
}
