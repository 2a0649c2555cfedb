/*
 * write_gpu_h5.c - a real field through HDF5 and the h5fz plugin on the GPU:
 * writes FIELD (raw float32, shape DxRxC) as a chunked dataset with h5fz
 * (H5FZ_DEVICE=gpu, so the write fails rather than silently using the CPU),
 * reads it back and checks the bound on every element. The file it leaves
 * is shipped as tests/golden/gpu_written_v1.h5 and read on CI without a GPU.
 *   write_gpu_h5 FIELD.f32 D R C OUT.h5 [REL]
 * Exit 77 when no GPU is usable (CTest skip).
 */
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_test_util.h"
#include "h5fz.h"

int main(int argc, char **argv)
{
  if (argc < 6) {
    fprintf(stderr, "usage: write_gpu_h5 FIELD.f32 D R C OUT.h5 [REL]\n");
    return 2;
  }
  if (!gpu_test_have_gpu()) return CTEST_SKIP;
  hsize_t dims[3] = {strtoull(argv[2], NULL, 10), strtoull(argv[3], NULL, 10), strtoull(argv[4], NULL, 10)};
  size_t n = dims[0] * dims[1] * dims[2];
  float *v = malloc(n * 4), *back = malloc(n * 4);
  FILE *f = fopen(argv[1], "rb");
  if (!f || !v || !back || fread(v, 4, n, f) != n) {
    fprintf(stderr, "cannot read %zu float32 values from %s\n", n, argv[1]);
    return 2;
  }
  fclose(f);
  double lo = INFINITY, hi = -INFINITY;
  for (size_t i = 0; i < n; i++)
    if (isfinite(v[i])) {
      if (v[i] < lo) lo = v[i];
      if (v[i] > hi) hi = v[i];
    }
  double rel = argc > 6 ? atof(argv[6]) : 1e-4, eb = rel * (hi - lo);
  char text[128];
  snprintf(text, sizeof text, "abs=%.17g", eb);
  h5fz_spec s;
  unsigned cd[H5FZ_CD_MAX];
  size_t ncd;
  if (h5fz_spec_parse(text, &s) || h5fz_spec_to_cd_values(&s, 0, cd, H5FZ_CD_MAX, &ncd)) {
    fprintf(stderr, "spec: %s\n", h5fz_last_error());
    return 2;
  }
  hsize_t chunk[3] = {dims[0] > 10 ? 10 : dims[0], dims[1], dims[2]};
  hid_t file = H5Fcreate(argv[5], H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  hid_t space = H5Screate_simple(3, dims, NULL);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(dcpl, 3, chunk);
  H5Pset_filter(dcpl, H5FZ_FILTER_ID, H5Z_FLAG_MANDATORY, ncd, cd);
  hid_t ds = H5Dcreate2(file, "/field", H5T_IEEE_F32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  herr_t w = ds < 0 ? -1 : H5Dwrite(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v);
  hid_t aspace = H5Screate(H5S_SCALAR);
  hid_t attr = H5Acreate2(ds, "abs_bound", H5T_IEEE_F64LE, aspace, H5P_DEFAULT, H5P_DEFAULT);
  H5Awrite(attr, H5T_NATIVE_DOUBLE, &eb);
  H5Aclose(attr);
  H5Sclose(aspace);
  hsize_t stored = H5Dget_storage_size(ds);
  H5Dclose(ds);
  H5Pclose(dcpl);
  H5Sclose(space);
  H5Fclose(file);
  if (w < 0) {
    fprintf(stderr, "FAIL: H5Dwrite through h5fz on the GPU failed\n");
    return 1;
  }
  file = H5Fopen(argv[5], H5F_ACC_RDONLY, H5P_DEFAULT);
  ds = H5Dopen2(file, "/field", H5P_DEFAULT);
  herr_t r = H5Dread(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, back);
  H5Dclose(ds);
  H5Fclose(file);
  size_t bad = 0;
  double max_err = 0;
  for (size_t i = 0; r >= 0 && i < n; i++) {
    double e = fabs((double)v[i] - (double)back[i]);
    if (e > max_err) max_err = e;
    bad += !(e <= eb);
  }
  printf("%s: %zu values, bound %.6g, max error %.6g, ratio %.2f, %zu out of bound\n", argv[5], n, eb, max_err,
         (double)(n * 4) / (double)stored, bad);
  free(v);
  free(back);
  return r < 0 || bad ? 1 : 0;
}
