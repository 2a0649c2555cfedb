/*
 * set_local recognises the dataset part it stored itself: a DCPL taken
 * from an existing dataset (which carries that part) and re-chunked must
 * give a dataset whose cd_values hold exactly one dataset part, with the
 * new chunk dims, after the unchanged user part. Also checks rank folding,
 * and that a chunk over the format's byte limit fails H5Dcreate.
 */
#include <stdio.h>
#include <string.h>

#include "filter_test_util.h"

#define CD_CAP 64

static size_t count_markers(const unsigned *cd, size_t n)
{
  size_t k = 0;
  for (size_t i = 0; i < n; i++) k += cd[i] == H5FZ_CD_LOCAL_MARKER;
  return k;
}

/* Check a dataset's cd_values: user part equal to user[0..n_user), one
 * dataset part with dtype and dims[0..rank). */
static void check_dataset(hid_t d, const char *what, const unsigned *user, size_t n_user, h5fz_dtype dtype,
                          uint32_t rank, const uint32_t *dims)
{
  unsigned cd[CD_CAP];
  long n = ft_dataset_cd(d, cd, CD_CAP, NULL);
  FT_CHECK(n > 0 && n <= CD_CAP, "%s: %ld cd_values", what, n);
  if (n <= 0 || n > CD_CAP) return;
  FT_CHECK(count_markers(cd, (size_t)n) == 1, "%s: %zu dataset parts in %ld words", what, count_markers(cd, (size_t)n),
           n);
  h5fz_spec spec;
  size_t uw = 0;
  int st = h5fz_spec_from_cd_values(cd, (size_t)n, &spec, &uw);
  FT_CHECK(st == H5FZ_OK, "%s: stored cd_values do not parse: %s", what, h5fz_last_error());
  if (st != H5FZ_OK) return;
  FT_CHECK(uw == n_user && memcmp(cd, user, n_user * sizeof *cd) == 0,
           "%s: user part changed (%zu words, expected %zu)", what, uw, n_user);
  FT_CHECK(spec.dtype == dtype, "%s: dtype %d, expected %d", what, (int)spec.dtype, (int)dtype);
  FT_CHECK(spec.rank == rank, "%s: rank %u, expected %u", what, spec.rank, rank);
  for (uint32_t i = 0; i < rank && i < spec.rank; i++)
    FT_CHECK(spec.dims[i] == dims[i], "%s: dim %u is %u, expected %u", what, i, spec.dims[i], dims[i]);
  printf("%s: %ld words, user %zu, dims", what, n, uw);
  for (uint32_t i = 0; i < spec.rank; i++) printf(" %u", spec.dims[i]);
  printf("\n");
}

int main(void)
{
  if (ft_begin("filter_set_local") < 0) return ft_finish();
  hid_t f = ft_create_file("set_local");
  unsigned user[H5FZ_CD_MAX];
  size_t n_user = ft_cd_from_text("abs=1e-3 delta zigzag bitshuffle rze", user);

  hsize_t dims[2] = {100, 100}, chunk1[2] = {10, 20}, chunk2[2] = {25, 50};
  hid_t space = H5Screate_simple(2, dims, NULL);
  hid_t dcpl = ft_dcpl(2, chunk1, H5Z_FLAG_MANDATORY, n_user, user, 0);
  hid_t d1 = H5Dcreate2(f, "first", H5T_IEEE_F32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  FT_CHECK(d1 >= 0, "create first failed");
  const uint32_t want1[2] = {10, 20}, want2[2] = {25, 50};
  check_dataset(d1, "first", user, n_user, H5FZ_DTYPE_F32, 2, want1);

  /* Reuse the first dataset's DCPL, which already has a dataset part. */
  hid_t dcpl2 = H5Dget_create_plist(d1);
  FT_CHECK(H5Pset_chunk(dcpl2, 2, chunk2) >= 0, "H5Pset_chunk on reused DCPL failed");
  hid_t d2 = H5Dcreate2(f, "second", H5T_IEEE_F64LE, space, H5P_DEFAULT, dcpl2, H5P_DEFAULT);
  FT_CHECK(d2 >= 0, "create second failed");
  check_dataset(d2, "second (reused DCPL, new dims, f64)", user, n_user, H5FZ_DTYPE_F64, 2, want2);

  /* And once more from the second: still exactly one dataset part. */
  hid_t dcpl3 = H5Dget_create_plist(d2);
  hid_t d3 = H5Dcreate2(f, "third", H5T_IEEE_F64LE, space, H5P_DEFAULT, dcpl3, H5P_DEFAULT);
  check_dataset(d3, "third (reused twice)", user, n_user, H5FZ_DTYPE_F64, 2, want2);

  /* Rank 6 folds into H5FZ_MAX_RANK dims, the slowest ones multiplied. */
  hsize_t dims6[6] = {4, 3, 2, 5, 6, 7}, chunk6[6] = {2, 3, 2, 5, 3, 7};
  hid_t space6 = H5Screate_simple(6, dims6, NULL);
  hid_t dcpl6 = ft_dcpl(6, chunk6, H5Z_FLAG_MANDATORY, n_user, user, 0);
  hid_t d6 = H5Dcreate2(f, "rank6", H5T_IEEE_F32LE, space6, H5P_DEFAULT, dcpl6, H5P_DEFAULT);
  FT_CHECK(d6 >= 0, "create rank6 failed");
  const uint32_t want6[H5FZ_MAX_RANK] = {2 * 3 * 2, 5, 3, 7};
  check_dataset(d6, "rank6 folded", user, n_user, H5FZ_DTYPE_F32, H5FZ_MAX_RANK, want6);

  /* A chunk over the format's limit fails H5Dcreate, not the first write;
   * one at the limit is accepted (nothing is allocated before a write). */
  const hsize_t at_limit = H5FZ_MAX_CHUNK_BYTES / 4u, big_dims[1] = {2 * at_limit};
  const hsize_t sizes[2] = {at_limit + 1u, at_limit};
  hid_t big_space = H5Screate_simple(1, big_dims, NULL);
  for (int k = 0; k < 2; k++) {
    hid_t big_dcpl = ft_dcpl(1, &sizes[k], H5Z_FLAG_MANDATORY, n_user, user, 0);
    hid_t big =
        H5Dcreate2(f, k ? "at_limit" : "over_limit", H5T_IEEE_F32LE, big_space, H5P_DEFAULT, big_dcpl, H5P_DEFAULT);
    char stack[4096];
    ft_error_stack(stack, sizeof stack);
    if (k == 0) {
      FT_CHECK(big < 0 && ft_contains(stack, "the limit of the h5fz format"),
               "a chunk of %llu float32 values: H5Dcreate2 %s: %s", (unsigned long long)sizes[k],
               big < 0 ? "failed without the reason" : "succeeded", stack);
      printf("chunk over the limit -> %s\n", ft_ours(stack));
    } else {
      FT_CHECK(big >= 0, "a chunk of %llu float32 values (at the limit) refused: %s", (unsigned long long)sizes[k],
               stack);
    }
    if (big >= 0) H5Dclose(big);
    H5Pclose(big_dcpl);
  }
  H5Sclose(big_space);

  H5Dclose(d6);
  H5Pclose(dcpl6);
  H5Sclose(space6);
  H5Dclose(d3);
  H5Pclose(dcpl3);
  H5Dclose(d2);
  H5Pclose(dcpl2);
  H5Dclose(d1);
  H5Pclose(dcpl);
  H5Sclose(space);
  H5Fclose(f);
  return ft_finish();
}
