/*
 * test_set_filter.c - h5fz_set_filter (api/h5fz_dataset.h): the spec text
 * onto a dcpl gives exactly the words `h5fz cd-values` gives
 * (h5fz_spec_to_cd_values), mandatory, h5fz first; a dataset made with it
 * (in library mode, h5fz_register_filter, no plugin needed) compresses and
 * reads back within the bound, every element checked; a bad spec, a spec
 * that sets what the dataset decides, and a handle that is not a dataset
 * creation property list each fail with their status and one line that
 * says why, leaving the dcpl without the filter.
 *
 *   test_set_filter DIR     (writes DIR/set_filter.h5)
 */
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h5fz_dataset.h"

static int failures;

#define CHECK(cond, ...)                                                                                               \
  do {                                                                                                                 \
    if (!(cond)) {                                                                                                     \
      printf("FAIL: " __VA_ARGS__);                                                                                    \
      printf("\n");                                                                                                    \
      failures++;                                                                                                      \
    }                                                                                                                  \
  } while (0)

/* The words of spec_text as `h5fz cd-values` prints them, into cd; count. */
static size_t words_of(const char *spec_text, unsigned *cd)
{
  h5fz_spec spec;
  size_t n = 0;
  if (h5fz_spec_parse(spec_text, &spec) || h5fz_spec_to_cd_values(&spec, 0, cd, H5FZ_CD_MAX, &n)) return 0;
  return n;
}

/* dcpl after h5fz_set_filter(spec_text): h5fz alone in it, mandatory, with
 * the words of want_spec. */
static void check_words(const char *spec_text, const char *want_spec)
{
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  int rc = h5fz_set_filter(dcpl, spec_text);
  CHECK(rc == H5FZ_OK, "h5fz_set_filter(%s): %d %s", spec_text ? spec_text : "NULL", rc, h5fz_last_error());
  unsigned want[H5FZ_CD_MAX], got[H5FZ_CD_MAX], flags = 0, config = 0;
  size_t n_want = words_of(want_spec, want), n_got = H5FZ_CD_MAX;
  char name[32] = "";
  CHECK(H5Pget_nfilters(dcpl) == 1, "%s: %d filters", want_spec, H5Pget_nfilters(dcpl));
  H5Z_filter_t id = H5Pget_filter2(dcpl, 0, &flags, &n_got, got, sizeof name, name, &config);
  CHECK(id == H5FZ_FILTER_ID, "%s: filter id %d", want_spec, (int)id);
  CHECK(!(flags & H5Z_FLAG_OPTIONAL), "%s: the filter is optional (flags %u)", want_spec, flags);
  CHECK(n_want > 0 && n_got == n_want && !memcmp(got, want, n_want * sizeof *want),
        "%s: %zu words, want the %zu of h5fz cd-values", want_spec, n_got, n_want);
  H5Pclose(dcpl);
}

/* h5fz_set_filter(dcpl, spec_text) fails with want_rc and a message holding
 * want_text, and dcpl keeps no filter. */
static void check_refused(hid_t dcpl, const char *spec_text, int want_rc, const char *want_text)
{
  int rc;
  H5E_BEGIN_TRY { rc = h5fz_set_filter(dcpl, spec_text); }
  H5E_END_TRY;
  const char *msg = h5fz_last_error();
  CHECK(rc == want_rc, "h5fz_set_filter(%s): %d, want %d (%s)", spec_text, rc, want_rc, msg);
  CHECK(msg && strstr(msg, want_text) && !strchr(msg, '\n'), "h5fz_set_filter(%s): message '%s', want '%s'",
        spec_text, msg ? msg : "(null)", want_text);
  int n;
  H5E_BEGIN_TRY { n = H5Pget_nfilters(dcpl); }
  H5E_END_TRY;
  CHECK(n <= 0, "h5fz_set_filter(%s) refused, but the dcpl has %d filters", spec_text, n);
  printf("refused as it should: %s -> %s\n", spec_text, msg);
}

/* A 3-D field through a dcpl made by h5fz_set_filter: written, read back,
 * every element within bound, really compressed. */
static void check_dataset(const char *dir)
{
  enum { NZ = 8, NY = 64, NX = 96 };
  static float field[NZ][NY][NX], back[NZ][NY][NX];
  for (int z = 0; z < NZ; z++)
    for (int y = 0; y < NY; y++)
      for (int x = 0; x < NX; x++) field[z][y][x] = (float)(20.0 * sin(0.09 * x) * cos(0.07 * y) + 0.5 * z);
  char path[4200];
  snprintf(path, sizeof path, "%s/set_filter.h5", dir);
  hsize_t dims[3] = {NZ, NY, NX}, chunk[3] = {4, NY, NX};
  hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  hid_t space = H5Screate_simple(3, dims, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE);
  CHECK(H5Pset_chunk(dcpl, 3, chunk) >= 0, "H5Pset_chunk");
  CHECK(h5fz_set_filter(dcpl, "abs=1e-3") == H5FZ_OK, "h5fz_set_filter: %s", h5fz_last_error());
  CHECK(H5Pset_fletcher32(dcpl) >= 0, "a checksum after h5fz");
  hid_t dset = H5Dcreate2(file, "t", H5T_IEEE_F32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  CHECK(dset >= 0, "H5Dcreate2 through the h5fz_set_filter dcpl");
  CHECK(dset >= 0 && H5Dwrite(dset, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, field) >= 0, "H5Dwrite");
  hsize_t stored = dset >= 0 ? H5Dget_storage_size(dset) : 0;
  if (dset >= 0) H5Dclose(dset);
  H5Pclose(dcpl);
  H5Sclose(space);
  H5Fclose(file);
  file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  dset = H5Dopen2(file, "t", H5P_DEFAULT);
  CHECK(dset >= 0 && H5Dread(dset, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, back) >= 0, "H5Dread");
  double worst = 0;
  size_t outside = 0;
  for (int z = 0; z < NZ; z++)
    for (int y = 0; y < NY; y++)
      for (int x = 0; x < NX; x++) {
        double e = fabs((double)back[z][y][x] - (double)field[z][y][x]);
        if (!(e <= 1e-3)) outside++;
        if (e > worst) worst = e;
      }
  CHECK(outside == 0, "%zu elements outside the bound (max error %g)", outside, worst);
  double ratio = stored ? (double)sizeof field / (double)stored : 0;
  CHECK(ratio > 2, "ratio %.2f: not compressed", ratio);
  printf("dataset through h5fz_set_filter: max error %.3g, ratio %.2f\n", worst, ratio);
  if (dset >= 0) H5Dclose(dset);
  H5Fclose(file);
}

int main(int argc, char **argv)
{
  if (argc != 2) {
    fprintf(stderr, "usage: test_set_filter DIR\n");
    return 2;
  }
  if (H5open() < 0 || h5fz_register_filter() != H5FZ_OK) {
    printf("FAIL: h5fz_register_filter: %s\n", h5fz_last_error());
    return 1;
  }
  check_words("abs=1e-3", "abs=1e-3");
  check_words("rel=1e-4 lorenzo_nd zigzag bitshuffle rze", "rel=1e-4 lorenzo_nd zigzag bitshuffle rze");
  check_words("pw_rel=1e-3", "pw_rel=1e-3");
  check_words(NULL, "");
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE), fapl = H5Pcreate(H5P_FILE_ACCESS);
  check_refused(dcpl, "abs=", H5FZ_ERR_SPEC, "abs");
  check_refused(dcpl, "abs=1e-3 zigzag zigzag nosuchop", H5FZ_ERR_SPEC, "nosuchop");
  check_refused(dcpl, "abs=1e-3 dtype=f64", H5FZ_ERR_SPEC, "may not set dtype, dims or fill");
  check_refused(fapl, "abs=1e-3", H5FZ_ERR_ARG, "not a dataset creation property list");
  check_refused(H5P_DEFAULT, "abs=1e-3", H5FZ_ERR_ARG, "not a dataset creation property list");
  check_refused((hid_t)-1, "abs=1e-3", H5FZ_ERR_ARG, "not a dataset creation property list");
  H5Pclose(dcpl);
  H5Pclose(fapl);
  check_dataset(argv[1]);
  printf("%s (%d failures)\n", failures ? "FAIL" : "test_set_filter: OK", failures);
  return failures ? 1 : 0;
}
