/*
 * mpi_test_util.h - shared helpers of the MPI tests (tests/mpi): the real
 * field, slab decompositions, the bound check on every element, a serial
 * reference write and the chunk-by-chunk comparison with it, and the
 * manifest the serial readers (check_serial.py) work through.
 */
#ifndef H5FZ_MPI_TEST_UTIL_H
#define H5FZ_MPI_TEST_UTIL_H

#include <hdf5.h>
#include <mpi.h>
#include <stddef.h>

extern int mt_rank, mt_size, mt_failures;

/* Record a failed check (rank, file:line, printf message) unless cond. */
#define MT_CHECK(cond, ...)                                                                                            \
  do {                                                                                                                 \
    if (!(cond)) mt_fail(__FILE__, __LINE__, __VA_ARGS__);                                                             \
  } while (0)
void mt_fail(const char *file, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* MPI_Init, rank and size, HDF5's automatic error printing off. */
void mt_begin(int *argc, char ***argv);
/* Sum the failures over the ranks, print the verdict on rank 0, finalize;
 * returns the exit status (0: every check on every rank held). */
int mt_finish(const char *name);

/* The embedded real field (tests/data, 50x100x100 float32) as float32 and
 * float64 copies (malloc'd). Exits on a missing file. */
void mt_field(float **f32, double **f64, size_t *n);

/* Rows [*lo, *lo + *cnt) of `rows` for rank r of n: an even split along the
 * slowest dim, not aligned to chunks. */
void mt_slab(int r, int n, hsize_t rows, hsize_t *lo, hsize_t *cnt);
/* The same, split on chunk boundaries (whole chunks of `chunk` rows each). */
void mt_chunk_slab(int r, int n, hsize_t rows, hsize_t chunk, hsize_t *lo, hsize_t *cnt);

/* File access with the MPI-IO driver on MPI_COMM_WORLD; with
 * H5FZ_TEST_COLL_METADATA set, collective metadata reads and writes too. */
hid_t mt_fapl_mpio(void);
/* A collective transfer property list. */
hid_t mt_dxpl_collective(void);

/* A DCPL: chunk dims and the h5fz filter for the text spec. */
hid_t mt_dcpl(int rank, const hsize_t *chunk, const char *spec);

typedef enum { MT_ABS, MT_REL, MT_PW_REL } mt_mode;

/* Check every element of the box start/count of the dataset (dims,
 * chunk, rank) read back into back (row-major in the box) against orig (the
 * whole array, row-major): within bound (MT_REL: bound x the range of the
 * element's chunk; MT_PW_REL: bound x |value|). f64 selects the element
 * type. Returns the number of elements out of bound (each failure reported
 * once, for the first element). */
size_t mt_check_box(const void *orig, const void *back, int f64, int rank, const hsize_t *dims, const hsize_t *chunk,
                    const hsize_t *start, const hsize_t *count, mt_mode mode, double bound, const char *what);

/* Rank 0 only: write data (the whole array) into a new serial file path
 * (default driver) as dataset name, through H5Dwrite and the filter, and a
 * plain copy as /ref/name into ref_path (kept for the serial readers). */
void mt_serial_reference(const char *path, const char *ref_path, const char *name, int f64, int rank,
                         const hsize_t *dims, const hsize_t *chunk, const char *spec, const void *data);

/* Rank 0 only: every chunk of dataset name in file a and in file b has the
 * same stored bytes (both opened serially; call after closing the parallel
 * file). Returns the number of differing or missing chunks. */
size_t mt_compare_chunks(const char *a, const char *b, const char *name, const char *what);

/* Rank 0 only: append "file dataset mode bound ref" to the manifest the
 * serial readers check (check_serial.py). */
void mt_manifest(const char *manifest, const char *file, const char *name, mt_mode mode, double bound,
                 const char *ref_path);

#endif /* H5FZ_MPI_TEST_UTIL_H */
