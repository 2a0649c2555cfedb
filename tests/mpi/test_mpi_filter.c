/*
 * test_mpi_filter.c - the h5fz filter under parallel HDF5: N ranks write
 * one dataset per case with a collective H5Dwrite, each its hyperslab, and
 * read it back collectively with another decomposition.
 *
 *   mpirun -n N test_mpi_filter     (in an empty folder; HDF5_PLUGIN_PATH set)
 *
 * Cases: slabs on the chunk grid; slabs not on it (chunks assembled from
 * two ranks, edge chunks in every dim, REL); the last rank selecting
 * nothing; float64 with PW_REL. Every element read back is checked against
 * the bound, every stored chunk is compared with a serial write of the same
 * array (rank 0, mpi_filter_serial.h5), and an independent transfer must
 * fail cleanly on every rank. The file mpi_filter.h5, the serial write and
 * the plain copies (ref.h5) stay for the serial readers (check_serial.py,
 * through manifest.txt).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_test_util.h"

typedef enum { ON_GRID, OFF_GRID, LAST_EMPTY } decomposition;

typedef struct {
  const char *name;
  const char *spec;
  mt_mode mode;
  double bound;
  int f64;
  hsize_t chunk[3];
  decomposition split;
} filter_case;

static const filter_case cases[] = {
    {"abs_on_grid", "abs=1e-3", MT_ABS, 1e-3, 0, {10, 50, 100}, ON_GRID},
    {"rel_off_grid_edges", "rel=1e-3", MT_REL, 1e-3, 0, {8, 40, 64}, OFF_GRID},
    {"abs_last_rank_empty", "abs=1e-4", MT_ABS, 1e-4, 0, {7, 100, 100}, LAST_EMPTY},
    {"pw_rel_f64_off_grid", "pw_rel=1e-3", MT_PW_REL, 1e-3, 1, {6, 32, 100}, OFF_GRID},
};
#define N_CASES (sizeof cases / sizeof cases[0])

static const hsize_t dims[3] = {50, 100, 100};

/* This rank's rows when writing (reading = 0) or reading (1, another
 * decomposition: the ranks in reverse order, always off the grid). */
static void rows_of(const filter_case *c, int reading, hsize_t *lo, hsize_t *cnt)
{
  if (reading) {
    mt_slab(mt_size - 1 - mt_rank, mt_size, dims[0], lo, cnt);
  } else if (c->split == ON_GRID) {
    mt_chunk_slab(mt_rank, mt_size, dims[0], c->chunk[0], lo, cnt);
  } else if (c->split == OFF_GRID || mt_size == 1) {
    mt_slab(mt_rank, mt_size, dims[0], lo, cnt);
  } else if (mt_rank == mt_size - 1) {
    *lo = 0;
    *cnt = 0;
  } else {
    mt_slab(mt_rank, mt_size - 1, dims[0], lo, cnt);
  }
}

/* The file and memory dataspaces of rows [lo, lo+cnt) (nothing when cnt is 0). */
static void slab_spaces(hid_t dset, hsize_t lo, hsize_t cnt, hid_t *file_space, hid_t *mem_space)
{
  hsize_t start[3] = {lo, 0, 0}, count[3] = {cnt, dims[1], dims[2]};
  *file_space = H5Dget_space(dset);
  *mem_space = H5Screate_simple(3, count, NULL);
  if (cnt) {
    H5Sselect_hyperslab(*file_space, H5S_SELECT_SET, start, NULL, count, NULL);
  } else {
    H5Sselect_none(*file_space);
    H5Sselect_none(*mem_space);
  }
}

/* The innermost entry of the error stack (walked from the API call down). */
static herr_t innermost_desc(unsigned n, const H5E_error2_t *e, void *out)
{
  (void)n;
  snprintf(out, 256, "%s", e->desc ? e->desc : "");
  return 0;
}

/* HDF5 refuses an independent write with a filter: every rank fails, none hangs. */
static void check_independent_refused(hid_t dset, const void *data, int f64)
{
  hsize_t lo, cnt;
  mt_slab(mt_rank, mt_size, dims[0], &lo, &cnt);
  hid_t fs, ms;
  slab_spaces(dset, lo, cnt, &fs, &ms);
  herr_t st = H5Dwrite(dset, f64 ? H5T_NATIVE_DOUBLE : H5T_NATIVE_FLOAT, ms, fs, H5P_DEFAULT,
                       (const char *)data + lo * dims[1] * dims[2] * (f64 ? 8 : 4));
  char why[256] = "";
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, innermost_desc, why);
  MT_CHECK(st < 0, "an independent H5Dwrite through the filter was accepted");
  MT_CHECK(strstr(why, "independent") != NULL, "the refusal does not say why: '%s'", why);
  if (mt_rank == 0) printf("  independent transfer refused: %s\n", why);
  H5Sclose(fs);
  H5Sclose(ms);
}

int main(int argc, char **argv)
{
  mt_begin(&argc, &argv);
  float *f32;
  double *f64;
  size_t n;
  mt_field(&f32, &f64, &n);
  if (mt_rank == 0) remove("manifest.txt"), remove("ref.h5"), remove("mpi_filter_serial.h5");

  /* write: one dataset per case, collectively */
  hid_t fapl = mt_fapl_mpio(), dxpl = mt_dxpl_collective();
  hid_t file = H5Fcreate("mpi_filter.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  MT_CHECK(file >= 0, "H5Fcreate with the MPI-IO driver");
  for (size_t i = 0; i < N_CASES; i++) {
    const filter_case *c = &cases[i];
    const void *data = c->f64 ? (const void *)f64 : (const void *)f32;
    hid_t type = c->f64 ? H5T_NATIVE_DOUBLE : H5T_NATIVE_FLOAT, space = H5Screate_simple(3, dims, NULL);
    hid_t dcpl = mt_dcpl(3, c->chunk, c->spec);
    hid_t d = H5Dcreate2(file, c->name, type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    MT_CHECK(d >= 0, "%s: collective H5Dcreate2", c->name);
    if (i == 0) check_independent_refused(d, data, c->f64);
    hsize_t lo, cnt;
    rows_of(c, 0, &lo, &cnt);
    hid_t fs, ms;
    slab_spaces(d, lo, cnt, &fs, &ms);
    herr_t st = H5Dwrite(d, type, ms, fs, dxpl, (const char *)data + lo * dims[1] * dims[2] * (c->f64 ? 8 : 4));
    MT_CHECK(st >= 0, "%s: collective H5Dwrite of rows %llu+%llu", c->name, (unsigned long long)lo,
             (unsigned long long)cnt);
    H5Sclose(fs);
    H5Sclose(ms);
    H5Dclose(d);
    H5Pclose(dcpl);
    H5Sclose(space);
  }
  MT_CHECK(H5Fclose(file) >= 0, "H5Fclose");

  /* the same arrays written serially by rank 0: the chunks must be the same */
  for (size_t i = 0; i < N_CASES; i++) {
    const filter_case *c = &cases[i];
    mt_serial_reference("mpi_filter_serial.h5", "ref.h5", c->name, c->f64, 3, dims, c->chunk, c->spec,
                        c->f64 ? (const void *)f64 : (const void *)f32);
    mt_compare_chunks("mpi_filter.h5", "mpi_filter_serial.h5", c->name, c->name);
    mt_manifest("manifest.txt", "mpi_filter.h5", c->name, c->mode, c->bound, "ref.h5");
  }
  MPI_Barrier(MPI_COMM_WORLD);

  /* read back collectively, in another decomposition, every element checked */
  file = H5Fopen("mpi_filter.h5", H5F_ACC_RDONLY, fapl);
  MT_CHECK(file >= 0, "H5Fopen with the MPI-IO driver");
  for (size_t i = 0; i < N_CASES; i++) {
    const filter_case *c = &cases[i];
    const void *data = c->f64 ? (const void *)f64 : (const void *)f32;
    hid_t type = c->f64 ? H5T_NATIVE_DOUBLE : H5T_NATIVE_FLOAT, d = H5Dopen2(file, c->name, H5P_DEFAULT);
    hsize_t lo, cnt;
    rows_of(c, 1, &lo, &cnt);
    hid_t fs, ms;
    slab_spaces(d, lo, cnt, &fs, &ms);
    void *back = malloc((cnt ? cnt : 1) * dims[1] * dims[2] * 8);
    MT_CHECK(H5Dread(d, type, ms, fs, dxpl, back) >= 0, "%s: collective H5Dread", c->name);
    hsize_t start[3] = {lo, 0, 0}, count[3] = {cnt, dims[1], dims[2]};
    size_t bad = mt_check_box(data, back, c->f64, 3, dims, c->chunk, start, count, c->mode, c->bound, c->name);
    size_t all_bad = 0;
    MPI_Allreduce(&bad, &all_bad, 1, MPI_UNSIGNED_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (mt_rank == 0 && !all_bad) printf("  %s: every element read back within the bound (%s)\n", c->name, c->spec);
    free(back);
    H5Sclose(fs);
    H5Sclose(ms);
    H5Dclose(d);
  }
  H5Fclose(file);
  H5Pclose(fapl);
  H5Pclose(dxpl);
  free(f32);
  free(f64);
  return mt_finish("test_mpi_filter");
}
