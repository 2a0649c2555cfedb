/*
 * append_step.c - one step of a simulation that appends to an h5fz dataset,
 * run as its own process, so that each step starts with a libhdf5 that has
 * not loaded the plugin yet (the case of docs/filter.md, "Appending in a new
 * process"). tests/python/test_append_new_process.py runs the steps in
 * sequence and checks the file.
 *
 *   append_step create FILE [lib]    two datasets through H5Pset_filter (abs=1e-3,
 *                                    fill time "at allocation", as h5py sets it):
 *                                    /x 4x64 of 64 max rows unlimited, /full 8x64
 *                                    with only its first chunk written
 *   append_step extend FILE [reg]    /x: H5Dset_extent to 2 more rows, write them
 *   append_step newchunks FILE [reg] /full: write rows 4..7 (chunks never written)
 *   append_step shrink FILE [reg]    /x: shrink to 2 rows, regrow to 6, write rows 2..5
 *   append_step swmr FILE [reg]      /x: reopened as a SWMR writer, 2 more rows, flush
 *   append_step check FILE [newchunks-done]
 *                                    every value of both datasets within the bound
 *                                    of value(row, col) (0 where /full was never
 *                                    written), every stored chunk filtered
 *
 * `reg` calls h5fz_dataset_register_filter() first (the one call a C program
 * needs before H5Dset_extent or a write of new chunks: HDF5 does not load a
 * plugin there). `lib` (any step) calls h5fz_register_filter() instead, the
 * library mode, which needs no plugin at all, and create then asks for the
 * filter with h5fz_set_filter(dcpl, "abs=1e-3") instead of cd_values.
 * Exit 0 on success, 1 with a message on stderr otherwise.
 */
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h5fz_dataset.h"

#define COLS 64
#define BOUND 1e-3

/* The value every step writes at (row, col): a smooth field plus a ripple,
 * so the chunks really compress and a misplaced row shows. */
static float value(hsize_t row, hsize_t col)
{
  return (float)(10.0 * sin(0.05 * (double)(row * COLS + col)) + 0.01 * (double)row);
}

static int fail(const char *what)
{
  fprintf(stderr, "append_step: %s\n", what);
  H5Eprint2(H5E_DEFAULT, stderr);
  return 1;
}

static int write_rows(hid_t dset, hsize_t first, hsize_t n)
{
  float *buf = malloc(n * COLS * sizeof *buf);
  if (!buf) return fail("out of memory");
  for (hsize_t r = 0; r < n; r++)
    for (hsize_t c = 0; c < COLS; c++) buf[r * COLS + c] = value(first + r, c);
  hsize_t start[2] = {first, 0}, count[2] = {n, COLS};
  hid_t file_space = H5Dget_space(dset), mem_space = H5Screate_simple(2, count, NULL);
  int rc = file_space < 0 || mem_space < 0 ||
           H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start, NULL, count, NULL) < 0 ||
           H5Dwrite(dset, H5T_NATIVE_FLOAT, mem_space, file_space, H5P_DEFAULT, buf) < 0;
  if (mem_space >= 0) H5Sclose(mem_space);
  if (file_space >= 0) H5Sclose(file_space);
  free(buf);
  return rc ? fail("H5Dwrite failed") : 0;
}

static int set_rows(hid_t dset, hsize_t rows)
{
  hsize_t dims[2] = {rows, COLS};
  return H5Dset_extent(dset, dims) < 0 ? fail("H5Dset_extent failed") : 0;
}

/* The filter with abs=1e-3 on dcpl: by the spec text (h5fz_set_filter), or
 * by the cd_values words as a program without the helper types them. */
static int set_filter(hid_t dcpl, int by_text)
{
  if (by_text) {
    if (h5fz_set_filter(dcpl, "abs=1e-3") == H5FZ_OK) return 0;
    fprintf(stderr, "append_step: %s\n", h5fz_last_error());
    return -1;
  }
  h5fz_spec spec;
  unsigned cd[H5FZ_CD_MAX];
  size_t n_cd = 0;
  if (h5fz_spec_parse("abs=1e-3", &spec) || h5fz_spec_to_cd_values(&spec, 0, cd, H5FZ_CD_MAX, &n_cd)) return -1;
  return H5Pset_filter(dcpl, H5FZ_FILTER_ID, H5Z_FLAG_MANDATORY, n_cd, cd) < 0 ? -1 : 0;
}

static hid_t make_dataset(hid_t file, const char *name, hsize_t rows, hsize_t max_rows, int by_text)
{
  hsize_t dims[2] = {rows, COLS}, max[2] = {max_rows, COLS}, chunk[2] = {2, COLS};
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE), space = H5Screate_simple(2, dims, max), dset = -1;
  if (dcpl >= 0 && space >= 0 && H5Pset_chunk(dcpl, 2, chunk) >= 0 &&
      H5Pset_fill_time(dcpl, H5D_FILL_TIME_ALLOC) >= 0 && set_filter(dcpl, by_text) == 0)
    dset = H5Dcreate2(file, name, H5T_NATIVE_FLOAT, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  if (dcpl >= 0) H5Pclose(dcpl);
  if (space >= 0) H5Sclose(space);
  return dset;
}

static int create(const char *path, int by_text)
{
  /* the latest format, so that the swmr step can reopen the file as a SWMR writer */
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST);
  hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  H5Pclose(fapl);
  if (file < 0) return fail("H5Fcreate failed");
  hid_t x = make_dataset(file, "x", 4, H5S_UNLIMITED, by_text), full = make_dataset(file, "full", 8, 8, by_text);
  int rc = x < 0 || full < 0 ? fail("H5Dcreate2 failed") : write_rows(x, 0, 4) || write_rows(full, 0, 2);
  if (x >= 0) H5Dclose(x);
  if (full >= 0) H5Dclose(full);
  return H5Fclose(file) < 0 ? fail("H5Fclose failed") : rc;
}

static int rows_of(hid_t dset, hsize_t *rows)
{
  hsize_t dims[2];
  hid_t space = H5Dget_space(dset);
  int ok = space >= 0 && H5Sget_simple_extent_dims(space, dims, NULL) == 2;
  if (space >= 0) H5Sclose(space);
  *rows = dims[0];
  return ok ? 0 : fail("cannot read the dataset's extent");
}

/* What a row of /full holds: rows 2..3 are never written (the fill value,
 * 0), rows 4..7 only after the newchunks step. */
static int full_row_written(hsize_t row, int newchunks_done) { return row < 2 || (row >= 4 && newchunks_done); }

/* Every value of dset within BOUND of value() (of 0 in rows of /full not
 * written yet), every stored chunk filtered. */
static int check_dataset(hid_t dset, const char *name, int is_full, int newchunks_done)
{
  hsize_t rows = 0;
  if (rows_of(dset, &rows)) return 1;
  float *buf = malloc((rows ? rows : 1) * COLS * sizeof *buf);
  if (!buf) return fail("out of memory");
  int rc = H5Dread(dset, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0 ? fail("H5Dread failed") : 0;
  for (hsize_t i = 0; i < rows * COLS && !rc; i++) {
    hsize_t row = i / COLS;
    double want = !is_full || full_row_written(row, newchunks_done) ? (double)value(row, i % COLS) : 0.0;
    if (!(fabs((double)buf[i] - want) <= BOUND)) {
      fprintf(stderr, "append_step: %s[%llu][%llu] = %.9g, want %.9g within %g\n", name, (unsigned long long)row,
              (unsigned long long)(i % COLS), buf[i], want, BOUND);
      rc = 1;
    }
  }
  free(buf);
  hsize_t n_chunks = 0;
  hid_t space = H5Dget_space(dset);
  if (!rc && H5Dget_num_chunks(dset, space, &n_chunks) < 0) rc = fail("H5Dget_num_chunks failed");
  for (hsize_t k = 0; k < n_chunks && !rc; k++) {
    hsize_t off[2];
    unsigned mask = 0;
    haddr_t addr;
    hsize_t size;
    if (H5Dget_chunk_info(dset, space, k, off, &mask, &addr, &size) < 0)
      rc = fail("H5Dget_chunk_info failed");
    else if (mask) {
      fprintf(stderr, "append_step: %s chunk at row %llu was stored without the filter (mask %u)\n", name,
              (unsigned long long)off[0], mask);
      rc = 1;
    }
  }
  if (space >= 0) H5Sclose(space);
  if (!rc)
    printf("%s: %llu rows, %llu chunks, all filtered and within %g\n", name, (unsigned long long)rows,
           (unsigned long long)n_chunks, BOUND);
  return rc;
}

int main(int argc, char **argv)
{
  if (argc < 3) {
    fprintf(stderr,
            "usage: append_step create FILE [lib] | extend|newchunks|shrink|swmr FILE [reg|lib] | check FILE "
            "[newchunks-done|lib]\n");
    return 2;
  }
  const char *mode = argv[1], *path = argv[2];
  int reg = argc > 3 && !strcmp(argv[3], "reg"), lib = argc > 3 && !strcmp(argv[argc - 1], "lib");
  if (lib && h5fz_register_filter() != H5FZ_OK) {
    fprintf(stderr, "append_step: %s\n", h5fz_last_error());
    return 1;
  }
  /* the dataset API links the codec; a program that only uses H5Pset_filter
   * needs nothing of h5fz but the plugin, and H5Zfilter_avail would do */
  if (!strcmp(mode, "create")) return create(path, lib);
  if (reg && h5fz_dataset_register_filter() != H5FZ_OK) {
    fprintf(stderr, "append_step: %s\n", h5fz_last_error());
    return 1;
  }
  unsigned flags = !strcmp(mode, "check") ? H5F_ACC_RDONLY : H5F_ACC_RDWR;
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST);
  if (!strcmp(mode, "swmr")) flags |= H5F_ACC_SWMR_WRITE;
  hid_t file = H5Fopen(path, flags, fapl);
  H5Pclose(fapl);
  if (file < 0) return fail("H5Fopen failed");
  hid_t x = H5Dopen2(file, "x", H5P_DEFAULT), full = H5Dopen2(file, "full", H5P_DEFAULT);
  hsize_t rows = 0;
  int rc = x < 0 || full < 0 ? fail("H5Dopen2 failed") : rows_of(x, &rows);
  if (rc) {
  } else if (!strcmp(mode, "extend") || !strcmp(mode, "swmr")) {
    rc = set_rows(x, rows + 2) || write_rows(x, rows, 2);
    if (!rc && !strcmp(mode, "swmr") && H5Dflush(x) < 0) rc = fail("H5Dflush failed");
  } else if (!strcmp(mode, "newchunks")) {
    rc = write_rows(full, 4, 4);
  } else if (!strcmp(mode, "shrink")) {
    rc = set_rows(x, 2) || set_rows(x, 6) || write_rows(x, 2, 4);
  } else if (!strcmp(mode, "check")) {
    int newchunks_done = argc > 3 && !strcmp(argv[3], "newchunks-done");
    rc = check_dataset(x, "x", 0, 0) || check_dataset(full, "full", 1, newchunks_done);
  } else {
    fprintf(stderr, "append_step: unknown step %s\n", mode);
    rc = 2;
  }
  if (x >= 0 && H5Dclose(x) < 0 && !rc) rc = fail("H5Dclose failed");
  if (full >= 0 && H5Dclose(full) < 0 && !rc) rc = fail("H5Dclose failed");
  if (H5Fclose(file) < 0 && !rc) rc = fail("H5Fclose failed");
  return rc;
}
