/*
 * can_apply refuses types h5fz must not compress: with a mandatory filter
 * H5Dcreate fails with our reason on the error stack; with an optional one
 * the dataset is created and written unfiltered (and exactly). Also: a
 * float dataset's filter is made mandatory by set_local, and a filter
 * placed before h5fz is refused.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "filter_test_util.h"

#define N 1000
#define CHUNK 256

/* A 4-byte float that is not IEEE binary32 (another exponent bias). */
static hid_t make_odd_float(void)
{
  hid_t t = H5Tcopy(H5T_IEEE_F32LE);
  H5Tset_ebias(t, 100);
  return t;
}

/* Mandatory filter on a refused type: creation fails naming the type. */
static void refused_mandatory(hid_t f, const char *name, hid_t type, const char *expect)
{
  hsize_t dims[1] = {N}, chunk[1] = {CHUNK};
  hid_t space = H5Screate_simple(1, dims, NULL);
  hid_t dcpl = ft_dcpl(1, chunk, H5Z_FLAG_MANDATORY, 0, NULL, 0);
  hid_t d = H5Dcreate2(f, name, type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  char stack[4096];
  ft_error_stack(stack, sizeof stack);
  FT_CHECK(d < 0, "%s: H5Dcreate2 with a mandatory h5fz filter succeeded", name);
  FT_CHECK(ft_contains(stack, "h5fz:"), "%s: error stack lacks our message: %s", name, stack);
  FT_CHECK(ft_contains(stack, expect), "%s: error stack lacks \"%s\": %s", name, expect, stack);
  printf("%s refused: %s\n", name, ft_ours(stack));
  if (d >= 0) H5Dclose(d);
  H5Pclose(dcpl);
  H5Sclose(space);
}

/* Optional filter on an integer type: written unfiltered, read back exactly,
 * no dataset part stored in its cd_values. */
static void int_optional(hid_t f)
{
  hsize_t dims[1] = {N}, chunk[1] = {CHUNK};
  unsigned cd[H5FZ_CD_MAX];
  size_t ncd = ft_cd_from_text("abs=1e-3", cd);
  hid_t space = H5Screate_simple(1, dims, NULL);
  hid_t dcpl = ft_dcpl(1, chunk, H5Z_FLAG_OPTIONAL, ncd, cd, 0);
  hid_t d = H5Dcreate2(f, "int_optional", H5T_STD_I32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  char stack[4096];
  ft_error_stack(stack, sizeof stack);
  FT_CHECK(d >= 0, "int_optional: H5Dcreate2 failed: %s", stack);
  if (d < 0) return;
  int32_t *w = malloc(N * sizeof *w), *r = malloc(N * sizeof *r);
  for (int i = 0; i < N; i++) w[i] = i * 7919 - 123456;
  herr_t wr = H5Dwrite(d, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, w);
  FT_CHECK(wr >= 0, "int_optional: H5Dwrite failed");
  FT_CHECK(H5Dflush(d) >= 0, "int_optional: H5Dflush failed");
  herr_t rd = H5Dread(d, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, r);
  FT_CHECK(rd >= 0, "int_optional: H5Dread failed");
  int diff = 0;
  for (int i = 0; i < N; i++) diff += w[i] != r[i];
  FT_CHECK(diff == 0, "int_optional: %d integers changed", diff);
  hsize_t off[1] = {0};
  uint32_t mask = 0;
  int32_t raw[CHUNK];
  FT_CHECK(H5Dread_chunk(d, H5P_DEFAULT, off, &mask, raw) >= 0, "int_optional: read_chunk");
  FT_CHECK(mask & 1u, "int_optional: chunk filter mask 0x%x, expected h5fz skipped", mask);
  unsigned flags = 0, got[64];
  long n = ft_dataset_cd(d, got, 64, &flags);
  FT_CHECK(n == (long)ncd, "int_optional: %ld cd_values stored, expected the %zu user words", n, ncd);
  FT_CHECK(flags & H5Z_FLAG_OPTIONAL, "int_optional: filter flags 0x%x lost optional", flags);
  printf("int_optional: written unfiltered (mask 0x%x), %ld cd_values\n", mask, n);
  free(w);
  free(r);
  H5Dclose(d);
  H5Pclose(dcpl);
  H5Sclose(space);
}

/* h5py adds filters as optional; set_local makes ours mandatory on floats. */
static void float_forced_mandatory(hid_t f)
{
  hsize_t dims[1] = {N}, chunk[1] = {CHUNK};
  hid_t space = H5Screate_simple(1, dims, NULL);
  hid_t dcpl = ft_dcpl(1, chunk, H5Z_FLAG_OPTIONAL, 0, NULL, 0);
  hid_t d = H5Dcreate2(f, "float_optional", H5T_IEEE_F32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  FT_CHECK(d >= 0, "float_optional: H5Dcreate2 failed");
  if (d >= 0) {
    unsigned flags = 0, got[64];
    long n = ft_dataset_cd(d, got, 64, &flags);
    FT_CHECK(n > 0, "float_optional: no cd_values");
    FT_CHECK((flags & H5Z_FLAG_OPTIONAL) == 0, "float_optional: flags 0x%x still optional", flags);
    H5Dclose(d);
  }
  H5Pclose(dcpl);
  H5Sclose(space);
}

/* A filter before h5fz cannot survive a lossy round trip: refused. */
static void filter_before(hid_t f, const char *name, int which)
{
  hsize_t dims[1] = {N}, chunk[1] = {CHUNK};
  hid_t space = H5Screate_simple(1, dims, NULL);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(dcpl, 1, chunk);
  if (which == 0)
    H5Pset_fletcher32(dcpl);
  else
    H5Pset_shuffle(dcpl);
  H5Pset_filter(dcpl, H5FZ_FILTER_ID, H5Z_FLAG_OPTIONAL, 0, NULL);
  hid_t d = H5Dcreate2(f, name, H5T_IEEE_F64LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  char stack[4096];
  ft_error_stack(stack, sizeof stack);
  FT_CHECK(d < 0, "%s: H5Dcreate2 with a filter before h5fz succeeded", name);
  FT_CHECK(ft_contains(stack, "comes before h5fz"), "%s: message: %s", name, stack);
  printf("%s refused: %s\n", name, ft_ours(stack));
  if (d >= 0) H5Dclose(d);
  H5Pclose(dcpl);
  H5Sclose(space);
}

/* h5fz twice in one pipeline (H5Pset_filter called twice): refused at
 * H5Dcreate. It was accepted, and every chunk of the second entry, whose
 * cd_values set_local never completed, failed in the chunk-cache flush at
 * close: the data was lost. A filter after h5fz stays allowed. */
static void h5fz_twice(hid_t f)
{
  hsize_t dims[1] = {N}, chunk[1] = {CHUNK};
  hid_t space = H5Screate_simple(1, dims, NULL);
  for (int after = 0; after < 2; after++) {
    const char *name = after ? "h5fz_then_fletcher32" : "h5fz_twice";
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 1, chunk);
    H5Pset_filter(dcpl, H5FZ_FILTER_ID, H5Z_FLAG_MANDATORY, 0, NULL);
    if (after)
      H5Pset_fletcher32(dcpl);
    else
      H5Pset_filter(dcpl, H5FZ_FILTER_ID, H5Z_FLAG_MANDATORY, 0, NULL);
    hid_t d = H5Dcreate2(f, name, H5T_IEEE_F64LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    char stack[4096];
    ft_error_stack(stack, sizeof stack);
    if (after) {
      FT_CHECK(d >= 0, "%s: H5Dcreate2 refused a filter after h5fz: %s", name, stack);
    } else {
      FT_CHECK(d < 0, "%s: H5Dcreate2 with h5fz twice succeeded", name);
      FT_CHECK(ft_contains(stack, "holds h5fz twice"), "%s: message: %s", name, stack);
      printf("%s refused: %s\n", name, ft_ours(stack));
    }
    if (d >= 0) H5Dclose(d);
    H5Pclose(dcpl);
  }
  H5Sclose(space);
}

int main(void)
{
  if (ft_begin("filter_refuse_type") < 0) return ft_finish();
  hid_t f = ft_create_file("refuse_type");
  refused_mandatory(f, "int32", H5T_STD_I32LE, "(integer); h5fz is a lossy float compressor");
  refused_mandatory(f, "uint8", H5T_STD_U8LE, "integer");
  hid_t str = H5Tcopy(H5T_C_S1);
  H5Tset_size(str, 8);
  refused_mandatory(f, "string", str, "string");
  H5Tclose(str);
  hid_t odd = make_odd_float();
  refused_mandatory(f, "f32_odd_bias", odd, "non-IEEE layout");
  H5Tclose(odd);
  filter_before(f, "fletcher32_before", 0);
  filter_before(f, "shuffle_before", 1);
  h5fz_twice(f);
  int_optional(f);
  float_forced_mandatory(f);
  H5Fclose(f);
  return ft_finish();
}
