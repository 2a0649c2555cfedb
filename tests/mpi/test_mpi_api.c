/*
 * test_mpi_api.c - the collective dataset API (api/h5fz_dataset_mpi.h):
 * N ranks each write their part of a global array with
 * h5fz_dataset_write_part and read parts back with h5fz_dataset_read_part.
 *
 *   mpirun -n N test_mpi_api     (in an empty folder; HDF5_PLUGIN_PATH set)
 *
 * Per case (slabs along the slowest dim; parts along dim 1 with edge chunks
 * in every dim under REL; float64 with the last rank's part empty; and, when
 * a GPU is visible, device arrays; host arrays under a 1 MiB
 * H5FZ_GPU_MEMORY_LIMIT, where a GPU runs out and the CPU takes over;
 * parts cut into pieces of one chunk row, H5FZ_MPI_PIECE_BYTES=1, which
 * ranks store in different numbers): the stored chunks must equal a serial
 * H5Dwrite through the filter (rank 0), the attributes a serial
 * h5fz_dataset_write of the same array; every element read back (by
 * h5fz_dataset_read_part in another, off-grid decomposition, and by a
 * collective H5Dread) must be within the bound. Bad use must fail on every
 * rank with the same status and a message naming it: a part outside the
 * dataset, a type differing between ranks, parts sharing a chunk, a chunk
 * covered partly, overlapping parts, a spec differing between ranks at
 * create, a file not opened with MPI-IO.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h5fz_cuda.h"
#include "h5fz_dataset_mpi.h"
#include "h5fz_settings.h"
#include "mpi_test_util.h"

static const hsize_t dims[3] = {50, 100, 100};

typedef enum { SLABS, DIM1_PARTS, LAST_EMPTY } decomposition;

typedef struct {
  const char *name;
  const char *spec;
  mt_mode mode;
  double bound;
  int f64;
  hsize_t chunk[3];
  decomposition split;
  int device;    /* 1: the parts from GPU memory (only with a visible GPU) */
  int gpu_limit; /* 1: H5FZ_GPU_MEMORY_LIMIT of 1 MiB, a GPU that runs out: the CPU takes over */
  int rewrite;   /* 1: other values are written first, then these over them (HDF5 reads the chunks it modifies) */
  int direct;    /* 1: H5FZ_MPI_WRITE=direct (every rank H5Dwrite_chunk's every chunk) */
  /* H5FZ_MPI_PIECE_BYTES for the writes (NULL: unset, the default of
   * 512 MiB, one piece here): "1" cuts each part into pieces of one chunk
   * row, so ranks store different numbers of pieces (empty ones for the
   * rest), each encoded while the last is written; "0" one piece */
  const char *piece_bytes;
} api_case;

static const api_case cases[] = {
    {"abs_slabs", "abs=1e-3", MT_ABS, 1e-3, 0, {10, 50, 100}, SLABS, 0, 0, 0, 0, NULL},
    {"rel_dim1_edges", "rel=1e-3", MT_REL, 1e-3, 0, {8, 40, 64}, DIM1_PARTS, 0, 0, 0, 0, NULL},
    {"pw_rel_f64_last_empty", "pw_rel=1e-3", MT_PW_REL, 1e-3, 1, {7, 100, 100}, LAST_EMPTY, 0, 0, 0, 0, NULL},
    {"abs_slabs_device", "abs=1e-3", MT_ABS, 1e-3, 0, {10, 50, 100}, SLABS, 1, 0, 0, 0, NULL},
    {"abs_slabs_gpu_out_of_memory", "abs=1e-3", MT_ABS, 1e-3, 0, {10, 50, 100}, SLABS, 0, 1, 0, 0, "1"},
    {"abs_slabs_rewrite", "abs=1e-3", MT_ABS, 1e-3, 0, {10, 50, 100}, SLABS, 0, 0, 1, 0, NULL},
    {"rel_dim1_edges_direct", "rel=1e-3", MT_REL, 1e-3, 0, {8, 40, 64}, DIM1_PARTS, 0, 0, 0, 1, NULL},
    {"pw_rel_f64_direct_rewrite", "pw_rel=1e-3", MT_PW_REL, 1e-3, 1, {7, 100, 100}, LAST_EMPTY, 0, 0, 1, 1, NULL},
    {"abs_slabs_pieces", "abs=1e-3", MT_ABS, 1e-3, 0, {10, 50, 100}, SLABS, 0, 0, 0, 0, "1"},
    {"abs_slabs_one_piece", "abs=1e-3", MT_ABS, 1e-3, 0, {10, 50, 100}, SLABS, 0, 0, 0, 0, "0"},
    {"rel_dim1_edges_pieces", "rel=1e-3", MT_REL, 1e-3, 0, {8, 40, 64}, DIM1_PARTS, 0, 0, 0, 0, "1"},
    {"pw_rel_f64_last_empty_pieces_rewrite",
     "pw_rel=1e-3",
     MT_PW_REL,
     1e-3,
     1,
     {7, 100, 100},
     LAST_EMPTY,
     0,
     0,
     1,
     0,
     "1"},
    {"rel_dim1_edges_pieces_direct", "rel=1e-3", MT_REL, 1e-3, 0, {8, 40, 64}, DIM1_PARTS, 0, 0, 0, 1, "1"},
    {"abs_slabs_device_pieces", "abs=1e-3", MT_ABS, 1e-3, 0, {10, 50, 100}, SLABS, 1, 0, 0, 0, "1"},
};
#define N_CASES (sizeof cases / sizeof cases[0])

static void part_of(const api_case *c, hsize_t *start, hsize_t *count)
{
  for (int d = 0; d < 3; d++) {
    start[d] = 0;
    count[d] = dims[d];
  }
  if (c->split == SLABS) {
    mt_chunk_slab(mt_rank, mt_size, dims[0], c->chunk[0], &start[0], &count[0]);
  } else if (c->split == DIM1_PARTS) {
    mt_chunk_slab(mt_rank, mt_size, dims[1], c->chunk[1], &start[1], &count[1]);
  } else if (mt_rank == mt_size - 1 && mt_size > 1) {
    count[0] = 0;
  } else {
    mt_chunk_slab(mt_rank, mt_size > 1 ? mt_size - 1 : 1, dims[0], c->chunk[0], &start[0], &count[0]);
  }
}

/* The box start/count of the whole array src, copied out (row-major). */
static void *box_of(const void *src, size_t esize, const hsize_t *start, const hsize_t *count)
{
  size_t n = count[0] * count[1] * count[2];
  unsigned char *out = malloc(n ? n * esize : 1);
  size_t row = count[2] * esize, k = 0;
  for (hsize_t i = 0; i < count[0]; i++)
    for (hsize_t j = 0; j < count[1]; j++, k++)
      memcpy(out + k * row,
             (const unsigned char *)src + (((start[0] + i) * dims[1] + start[1] + j) * dims[2] + start[2]) * esize,
             row);
  return out;
}

/* ---- device arrays (a visible GPU only) --------------------------------------------- */

static const h5fz_cuda_api *cu;

static int gpu_ready(void)
{
  static int state = -1;
  if (state >= 0) return state;
  int ordinal = -1, n = 0;
  h5fz_mpi_select_gpu(MPI_COMM_WORLD, &ordinal);
  cu = h5fz_cuda_get(NULL);
  CUdevice dev;
  CUcontext ctx;
  state = ordinal >= 0 && cu && !cu->cuInit(0) && !cu->cuDeviceGetCount(&n) && n > 0 &&
          !cu->cuDeviceGet(&dev, ordinal) && !cu->cuDevicePrimaryCtxRetain(&ctx, dev) && !cu->cuCtxSetCurrent(ctx);
  int all = 0;
  MPI_Allreduce(&state, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  return state = all;
}

static void *to_device(const void *host, size_t bytes)
{
  CUdeviceptr p = 0;
  if (cu->cuMemAlloc(&p, bytes ? bytes : 1) || (bytes && cu->cuMemcpyHtoDAsync(p, host, bytes, NULL)) ||
      cu->cuStreamSynchronize(NULL)) {
    mt_fail(__FILE__, __LINE__, "cannot copy %zu bytes to the GPU", bytes);
    return NULL;
  }
  return (void *)(uintptr_t)p;
}

static void from_device(void *host, const void *dev, size_t bytes)
{
  if (bytes && (cu->cuMemcpyDtoHAsync(host, (CUdeviceptr)(uintptr_t)dev, bytes, NULL) || cu->cuStreamSynchronize(NULL)))
    mt_fail(__FILE__, __LINE__, "cannot copy %zu bytes from the GPU", bytes);
}

/* ---- attributes against a serial h5fz_dataset_write --------------------------------- */

static const char *const compared_attrs[] = {"h5fz_spec",
                                             "h5fz_bound",
                                             "h5fz_ratio",
                                             "h5fz_stored_bytes",
                                             "h5fz_chunk_abs_bound",
                                             "h5fz_chunk_outliers",
                                             "h5fz_outlier_positions",
                                             "h5fz_outlier_values"};

/* Rank 0: the bytes of attribute name of dset (malloc'd, *n bytes), NULL if absent. */
static void *attr_bytes(hid_t dset, const char *name, size_t *n)
{
  *n = 0;
  if (H5Aexists(dset, name) <= 0) return NULL;
  hid_t a = H5Aopen(dset, name, H5P_DEFAULT), t = H5Aget_type(a), s = H5Aget_space(a);
  hssize_t cnt = H5Sget_simple_extent_npoints(s);
  *n = (size_t)cnt * H5Tget_size(t);
  void *buf = calloc(*n + 1, 1);
  if (*n) H5Aread(a, t, buf);
  H5Sclose(s);
  H5Tclose(t);
  H5Aclose(a);
  return buf;
}

static void compare_attributes(const api_case *c, const void *data)
{
  if (mt_rank) return;
  char serial[64];
  snprintf(serial, sizeof serial, "serial_api_%s.h5", c->name);
  hid_t f = H5Fcreate(serial, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), d;
  MT_CHECK(
      !h5fz_dataset_create(f, c->name, c->f64 ? H5T_NATIVE_DOUBLE : H5T_NATIVE_FLOAT, 3, dims, c->chunk, c->spec, &d) &&
          !h5fz_dataset_write(d, data, H5FZ_MEM_HOST, NULL),
      "%s: serial h5fz_dataset_write: %s", c->name, h5fz_last_error());
  H5Dclose(d);
  H5Fclose(f);
  hid_t fa = H5Fopen("mpi_api.h5", H5F_ACC_RDONLY, H5P_DEFAULT), fb = H5Fopen(serial, H5F_ACC_RDONLY, H5P_DEFAULT);
  hid_t da = H5Dopen2(fa, c->name, H5P_DEFAULT), db = H5Dopen2(fb, c->name, H5P_DEFAULT);
  int same = 1;
  for (size_t i = 0; i < sizeof compared_attrs / sizeof compared_attrs[0]; i++) {
    size_t na, nb;
    void *a = attr_bytes(da, compared_attrs[i], &na), *b = attr_bytes(db, compared_attrs[i], &nb);
    int ok = (a != NULL) == (b != NULL) && na == nb && (!na || !memcmp(a, b, na));
    MT_CHECK(ok, "%s: attribute %s differs from a serial h5fz_dataset_write's (%zu vs %zu bytes)", c->name,
             compared_attrs[i], na, nb);
    same &= ok;
    free(a);
    free(b);
  }
  if (same) printf("  %s: attributes equal a serial h5fz_dataset_write's\n", c->name);
  H5Dclose(da);
  H5Dclose(db);
  H5Fclose(fa);
  H5Fclose(fb);
}

/* ---- bad use ------------------------------------------------------------------------ */

/* rc and the message are what every rank must see. */
static void expect_refused(int rc, int want, const char *needle, const char *what)
{
  const char *msg = h5fz_last_error();
  MT_CHECK(rc == want && strstr(msg, needle), "%s: status %d (want %d), message '%s' (want '%s' in it)", what, rc, want,
           msg, needle);
  int ok = rc == want, all = 0;
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  if (mt_rank == 0 && all) printf("  refused on every rank: %s: %s\n", what, msg);
}

static void bad_use(hid_t file, const float *f32)
{
  hid_t d;
  hsize_t chunk[3] = {10, 50, 100}, start[3] = {0, 0, 0}, count[3] = {0, dims[1], dims[2]};
  int rc = h5fz_dataset_create_mpi(file, "bad", H5T_NATIVE_FLOAT, 3, dims, chunk,
                                   mt_rank == mt_size - 1 && mt_size > 1 ? "abs=1e-2" : "abs=1e-3", &d);
  if (mt_size > 1) {
    expect_refused(rc, H5FZ_ERR_ARG, "is not rank 0's", "a spec that differs between ranks at create");
    /* the last rank in a group, the others at the root, the same name (a
     * tester's hang: each rank created its own dataset) */
    hid_t g = H5Gcreate2(file, "group", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    rc = h5fz_dataset_create_mpi(mt_rank == mt_size - 1 ? g : file, "bad", H5T_NATIVE_FLOAT, 3, dims, chunk, "abs=1e-3",
                                 &d);
    expect_refused(rc, H5FZ_ERR_ARG, "another name or group", "a group that differs between ranks at create");
    H5Gclose(g);
    rc = h5fz_dataset_create_mpi(file, "bad", H5T_NATIVE_FLOAT, 3, dims, chunk, "abs=1e-3", &d);
  }
  MT_CHECK(!rc, "create: %s", h5fz_last_error());
  float *part = malloc(dims[0] * dims[1] * dims[2] * sizeof *part);
  memcpy(part, f32, dims[0] * dims[1] * dims[2] * sizeof *part);

  /* the last rank's part runs past the end */
  mt_chunk_slab(mt_rank, mt_size, dims[0], chunk[0], &start[0], &count[0]);
  if (mt_rank == mt_size - 1) count[0] += 10;
  expect_refused(h5fz_dataset_write_part(d, H5T_NATIVE_FLOAT, start, count, part, H5FZ_MEM_HOST, NULL), H5FZ_ERR_ARG,
                 "outside the dataset", "a part outside the dataset");
  mt_chunk_slab(mt_rank, mt_size, dims[0], chunk[0], &start[0], &count[0]);
  if (mt_size > 1) { /* another type on one rank */
    rc = h5fz_dataset_write_part(d, mt_rank == 1 ? H5T_NATIVE_DOUBLE : H5T_NATIVE_FLOAT, start, count, part,
                                 H5FZ_MEM_HOST, NULL);
    expect_refused(rc, H5FZ_ERR_ARG, "rank 1 passes float64", "a type that differs between ranks");
    /* slabs off the chunk grid: chunks shared by two ranks */
    mt_slab(mt_rank, mt_size, dims[0], &start[0], &count[0]);
    expect_refused(h5fz_dataset_write_part(d, H5T_NATIVE_FLOAT, start, count, part, H5FZ_MEM_HOST, NULL), H5FZ_ERR_ARG,
                   "is shared by the parts of ranks 0, 1", "slabs sharing a chunk");
    /* two ranks write the same rows */
    start[0] = 0;
    count[0] = mt_rank < 2 ? 10 : 0;
    expect_refused(h5fz_dataset_write_part(d, H5T_NATIVE_FLOAT, start, count, part, H5FZ_MEM_HOST, NULL), H5FZ_ERR_ARG,
                   "is shared by the parts of ranks 0, 1", "overlapping parts");
  }
  /* one part covering a chunk partly */
  start[0] = 0;
  count[0] = mt_rank == 0 ? 5 : 0;
  expect_refused(h5fz_dataset_write_part(d, H5T_NATIVE_FLOAT, start, count, part, H5FZ_MEM_HOST, NULL), H5FZ_ERR_ARG,
                 "covered only partly, by rank 0's part", "a chunk covered partly");
  expect_refused(h5fz_dataset_write_part(d, H5T_NATIVE_INT, start, count, part, H5FZ_MEM_HOST, NULL), H5FZ_ERR_ARG,
                 "neither float32 nor float64", "an integer memory type");
  /* after all that, the dataset takes a good write */
  mt_chunk_slab(mt_rank, mt_size, dims[0], chunk[0], &start[0], &count[0]);
  MT_CHECK(!h5fz_dataset_write_part(d, H5T_NATIVE_FLOAT, start, count, part + start[0] * dims[1] * dims[2],
                                    H5FZ_MEM_HOST, NULL),
           "a good write after the refused ones: %s", h5fz_last_error());
  if (mt_size > 1) { /* a read off the chunk grid into device memory (refused before any GPU use) */
    mt_slab(mt_rank, mt_size, dims[0], &start[0], &count[0]);
    expect_refused(h5fz_dataset_read_part(d, H5T_NATIVE_FLOAT, start, count, part, H5FZ_MEM_DEVICE, NULL),
                   H5FZ_ERR_UNSUPPORTED, "a device array needs a part on the chunk grid",
                   "a read off the chunk grid into device memory");
  }
  H5Dclose(d);
  free(part);

  /* a mistyped H5FZ_DEVICE, on every rank and then on the last one only:
   * the filter's set_local check runs on every rank before the collective
   * create (a rank whose H5Dcreate2 failed there left the others waiting
   * in it: a tester's hang), and the message names the rank and the reason */
  const char *device = getenv("H5FZ_DEVICE");
  char saved[64] = "";
  if (device) snprintf(saved, sizeof saved, "%s", device);
  for (int only_last = 0; only_last < 2; only_last++) {
    if (!only_last || mt_rank == mt_size - 1) setenv("H5FZ_DEVICE", "gpuu", 1);
    /* read once per process: the API's copy, which makes the check before
     * the collective H5Dcreate2, takes the environment again (the
     * plugin's copy is not asked: the create stops before it) */
    h5fz_settings_reload();
    H5E_BEGIN_TRY
    {
      rc = h5fz_dataset_create_mpi(file, "bad_device", H5T_NATIVE_FLOAT, 3, dims, chunk, "abs=1e-3", &d);
    }
    H5E_END_TRY;
    char needle[64];
    snprintf(needle, sizeof needle, "rank %d: H5FZ_DEVICE=\"gpuu\"", only_last ? mt_size - 1 : 0);
    expect_refused(rc, H5FZ_ERR_ARG, needle,
                   only_last ? "a mistyped H5FZ_DEVICE on the last rank only" : "a mistyped H5FZ_DEVICE");
    if (device)
      setenv("H5FZ_DEVICE", saved, 1);
    else
      unsetenv("H5FZ_DEVICE");
    h5fz_settings_reload();
  }

  /* a file each rank opened on its own (no MPI-IO) */
  char name[64];
  snprintf(name, sizeof name, "serial_rank%d.h5", mt_rank);
  hid_t f = H5Fcreate(name, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  expect_refused(h5fz_dataset_create_mpi(f, "x", H5T_NATIVE_FLOAT, 3, dims, chunk, "abs=1e-3", &d), H5FZ_ERR_ARG,
                 "not open with the MPI-IO driver", "a file without MPI-IO");
  H5Fclose(f);
  remove(name);
}

/* ---- the cases ---------------------------------------------------------------------- */

static void write_case(hid_t file, const api_case *c, const void *data)
{
  size_t esize = c->f64 ? 8 : 4;
  hid_t type = c->f64 ? H5T_NATIVE_DOUBLE : H5T_NATIVE_FLOAT, d;
  int rc = h5fz_dataset_create_mpi(file, c->name, type, 3, dims, c->chunk, c->spec, &d);
  MT_CHECK(!rc, "%s: h5fz_dataset_create_mpi: %s", c->name, h5fz_last_error());
  if (rc) return;
  hsize_t start[3], count[3];
  part_of(c, start, count);
  void *part = box_of(data, esize, start, count), *src = part;
  size_t bytes = count[0] * count[1] * count[2] * esize;
  if (c->device) src = to_device(part, bytes);
  h5fz_dataset_report rep;
  if (c->direct) setenv("H5FZ_MPI_WRITE", "direct", 1);
  if (c->piece_bytes) setenv("H5FZ_MPI_PIECE_BYTES", c->piece_bytes, 1);
  h5fz_settings_reload(); /* the MPI group is read once per process */
  if (c->rewrite) { /* other values first: the second write replaces every one of them */
    void *other = malloc(bytes ? bytes : 1);
    for (size_t i = 0; i < bytes / esize; i++)
      if (c->f64)
        ((double *)other)[i] = 1.0 - 0.5 * ((const double *)part)[i];
      else
        ((float *)other)[i] = 1.0f - 0.5f * ((const float *)part)[i];
    rc = h5fz_dataset_write_part(d, type, start, count, other, H5FZ_MEM_HOST, &rep);
    MT_CHECK(!rc, "%s: first h5fz_dataset_write_part: %s", c->name, h5fz_last_error());
    free(other);
  }
  if (c->gpu_limit) { /* this write's GPU allocations under it; the GPU group is read once per process too */
    setenv("H5FZ_GPU_MEMORY_LIMIT", "1048576", 1);
    h5fz_settings_reload();
  }
  rc = h5fz_dataset_write_part(d, type, start, count, src, c->device ? H5FZ_MEM_DEVICE : H5FZ_MEM_HOST, &rep);
  unsetenv("H5FZ_GPU_MEMORY_LIMIT");
  unsetenv("H5FZ_MPI_WRITE");
  unsetenv("H5FZ_MPI_PIECE_BYTES");
  h5fz_settings_reload();
  MT_CHECK(!rc, "%s: h5fz_dataset_write_part: %s", c->name, h5fz_last_error());
  if (!rc && mt_rank == 0)
    printf("  %s: rank 0 wrote %llu chunks on the %s (%s), %.3f s\n", c->name, (unsigned long long)rep.n_chunks,
           rep.on_gpu ? "GPU" : "CPU", rep.kernel_class, rep.seconds);
  if (c->device) cu->cuMemFree((CUdeviceptr)(uintptr_t)src);
  free(part);
  H5Dclose(d);
}

static void read_case(hid_t file, const api_case *c, const void *data)
{
  size_t esize = c->f64 ? 8 : 4;
  hid_t type = c->f64 ? H5T_NATIVE_DOUBLE : H5T_NATIVE_FLOAT, d = H5Dopen2(file, c->name, H5P_DEFAULT);
  /* another decomposition, off the chunk grid (host arrays; device arrays
   * read the written parts, which are on it) */
  hsize_t start[3] = {0, 0, 0}, count[3] = {dims[0], dims[1], dims[2]};
  if (c->device)
    part_of(c, start, count);
  else
    mt_slab(mt_size - 1 - mt_rank, mt_size, dims[0], &start[0], &count[0]);
  size_t bytes = count[0] * count[1] * count[2] * esize;
  void *back = malloc(bytes ? bytes : 1), *dst = back;
  if (c->device) {
    CUdeviceptr p = 0;
    MT_CHECK(!cu->cuMemAlloc(&p, bytes ? bytes : 1), "cuMemAlloc of %zu bytes", bytes);
    dst = (void *)(uintptr_t)p;
  }
  int rc = h5fz_dataset_read_part(d, type, start, count, dst, c->device ? H5FZ_MEM_DEVICE : H5FZ_MEM_HOST, NULL);
  MT_CHECK(!rc, "%s: h5fz_dataset_read_part: %s", c->name, h5fz_last_error());
  if (c->device) {
    from_device(back, dst, bytes);
    cu->cuMemFree((CUdeviceptr)(uintptr_t)dst);
  }
  size_t bad = rc ? 1 : mt_check_box(data, back, c->f64, 3, dims, c->chunk, start, count, c->mode, c->bound, c->name);
  /* and through the filter: a collective H5Dread of the same box */
  hid_t fs = H5Dget_space(d), ms = H5Screate_simple(3, count, NULL), dxpl = mt_dxpl_collective();
  if (count[0])
    H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL);
  else
    H5Sselect_none(fs), H5Sselect_none(ms);
  memset(back, 0, bytes);
  MT_CHECK(H5Dread(d, type, ms, fs, dxpl, back) >= 0, "%s: collective H5Dread", c->name);
  bad += mt_check_box(data, back, c->f64, 3, dims, c->chunk, start, count, c->mode, c->bound, c->name);
  size_t all_bad = 0;
  MPI_Allreduce(&bad, &all_bad, 1, MPI_UNSIGNED_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (mt_rank == 0 && !all_bad)
    printf("  %s: every element within the bound (%s), by h5fz_dataset_read_part and by H5Dread\n", c->name, c->spec);
  H5Pclose(dxpl);
  H5Sclose(fs);
  H5Sclose(ms);
  free(back);
  H5Dclose(d);
}

/* A dataset made by H5Dcreate2 (as a code using the filter makes it):
 * abs=1e-3, chunks of 10x50x100, element type `type`, allocation time
 * `alloc` (H5D_ALLOC_TIME_DEFAULT: HDF5's), named `name`, in a new file
 * `path` (*file, for the caller to close); and this rank's part of SLABS. */
static hid_t made_dataset(const char *path, const char *name, hid_t type, H5D_alloc_time_t alloc, hid_t *file,
                          hsize_t *start, hsize_t *count)
{
  static const hsize_t chunk[3] = {10, 50, 100};
  hid_t fapl = mt_fapl_mpio();
  *file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  hid_t dcpl = mt_dcpl(3, chunk, "abs=1e-3"), space = H5Screate_simple(3, dims, NULL);
  if (alloc != H5D_ALLOC_TIME_DEFAULT) H5Pset_alloc_time(dcpl, alloc);
  hid_t d = H5Dcreate2(*file, name, type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  MT_CHECK(d >= 0, "%s: H5Dcreate2", name);
  H5Sclose(space);
  H5Pclose(dcpl);
  H5Pclose(fapl);
  api_case c = {name, "abs=1e-3", MT_ABS, 1e-3, 0, {10, 50, 100}, SLABS, 0, 0, 0, 0, NULL};
  part_of(&c, start, count);
  return d;
}

/* This rank's part of d read back (h5fz_dataset_read_part into part) and
 * checked against f32 within abs=1e-3; `what` names it in failures. */
static void read_back_part(hid_t d, const float *f32, const hsize_t *start, const hsize_t *count, float *part,
                           const char *what)
{
  static const hsize_t chunk[3] = {10, 50, 100};
  memset(part, 0, count[0] * count[1] * count[2] * 4);
  int rc = h5fz_dataset_read_part(d, H5T_NATIVE_FLOAT, start, count, part, H5FZ_MEM_HOST, NULL);
  MT_CHECK(!rc, "%s: h5fz_dataset_read_part: %s", what, h5fz_last_error());
  size_t bad = rc ? 1 : mt_check_box(f32, part, 0, 3, dims, chunk, start, count, MT_ABS, 1e-3, what);
  MT_CHECK(!bad, "%s: %zu values off", what, bad);
}

/* A dataset made by H5Dcreate2 with a late allocation time, written twice
 * by the parts of SLABS (other values, then these) and read back while
 * still open: on HDF5 1.14 its first write allocates every chunk and
 * filters a fill chunk inside the H5Dwrite (it failed), and a filtered
 * write after that direct one left a stale chunk address in HDF5 (wrong
 * values read back); chunks equal the serial write of abs_slabs
 * (mpi_api_serial.h5), values within the bound. H5FZ_MPI_PROFILE is set on
 * rank 0 only for these writes (a tester saw that hang). */
static void late_allocation_write(const float *f32)
{
  hid_t file;
  hsize_t start[3], count[3];
  hid_t d = made_dataset("mpi_api_late.h5", "abs_slabs", H5T_NATIVE_FLOAT, H5D_ALLOC_TIME_LATE, &file, start, count);
  float *part = box_of(f32, 4, start, count);
  if (mt_rank == 0) setenv("H5FZ_MPI_PROFILE", "1", 1);
  h5fz_settings_reload(); /* the MPI group is read once per process */
  /* other values first (other chunk sizes: the second write moves chunks),
   * then these, then read back with the dataset still open: a filtered
   * write after a direct one read the last direct chunk's old bytes */
  size_t elems = count[0] * count[1] * count[2];
  float *other = malloc(elems ? elems * 4 : 4);
  for (size_t i = 0; i < elems; i++) other[i] = 1.0f - 0.5f * part[i];
  for (int k = 0; k < 2; k++) {
    int rc = h5fz_dataset_write_part(d, H5T_NATIVE_FLOAT, start, count, k ? part : other, H5FZ_MEM_HOST, NULL);
    MT_CHECK(!rc, "late allocation, write %d: h5fz_dataset_write_part: %s", k + 1, h5fz_last_error());
  }
  free(other);
  unsetenv("H5FZ_MPI_PROFILE");
  h5fz_settings_reload();
  read_back_part(d, f32, start, count, part, "late allocation");
  free(part);
  H5Dclose(d);
  H5Fclose(file);
}

/* Writes of one open dataset with an ordinary independent H5Dread of the
 * whole array after each (through HDF5's chunk cache), three times with
 * other values, on the handle of h5fz_dataset_create_mpi (no chunk cache)
 * and then on one of H5Dopen2 with the default access list, whose 1 MiB
 * cache holds the whole 120 KB array (so the API must write the direct
 * way): HDF5's collective filtered write leaves cached chunks stale (a
 * tester read the previous values back, then the next write failed and
 * damaged the file). Every value of every read within the bound. */
static void cached_reads_between_writes(void)
{
  static const hsize_t small[3] = {50, 20, 30}, chunk[3] = {7, 20, 30}, origin[3] = {0, 0, 0};
  hid_t fapl = mt_fapl_mpio(), file = H5Fcreate("mpi_api_cached.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl), d;
  int rc = h5fz_dataset_create_mpi(file, "T", H5T_NATIVE_FLOAT, 3, small, chunk, "abs=1e-3", &d);
  MT_CHECK(!rc, "cached reads: h5fz_dataset_create_mpi: %s", h5fz_last_error());
  hsize_t start[3] = {0, 0, 0}, count[3] = {0, small[1], small[2]};
  mt_chunk_slab(mt_rank, mt_size, small[0], chunk[0], &start[0], &count[0]);
  size_t n = small[0] * small[1] * small[2], plane = small[1] * small[2], bad = 0;
  float *values = malloc(n * 4), *back = malloc(n * 4);
  for (int handle = 0; handle < 2 && !rc; handle++) {
    if (handle) { /* the same dataset through a handle of its own, HDF5's default chunk cache */
      H5Dclose(d);
      d = H5Dopen2(file, "T", H5P_DEFAULT);
    }
    for (int step = 0; step < 3 && !rc; step++) {
      for (size_t i = 0; i < n; i++) values[i] = (float)(1 + step + 3 * handle) + (float)sin(0.01 * (double)i);
      rc = h5fz_dataset_write_part(d, H5T_NATIVE_FLOAT, start, count, values + start[0] * plane, H5FZ_MEM_HOST, NULL);
      MT_CHECK(!rc, "cached reads, handle %d, write %d: %s", handle, step + 1, h5fz_last_error());
      MT_CHECK(H5Dread(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, back) >= 0, "cached reads: H5Dread");
      bad += mt_check_box(values, back, 0, 3, small, chunk, origin, small, MT_ABS, 1e-3, "cached reads");
    }
  }
  MT_CHECK(!bad, "cached reads between writes: %zu values off", bad);
  if (mt_rank == 0 && !bad && !rc)
    printf("  cached reads between writes: every value of 6 reads within the bound (both handles)\n");
  free(values);
  free(back);
  H5Dclose(d);
  H5Fclose(file);
  H5Pclose(fapl);
}

/* A big-endian float32 dataset (made with H5Dcreate2, as a code writing
 * ">f4" does) in file `path`, written by the parts of SLABS, the way
 * H5FZ_MPI_WRITE says (NULL: the default), and read back within the bound. */
static void big_endian_write(const char *path, const char *how, const float *f32)
{
  hid_t file;
  hsize_t start[3], count[3];
  hid_t d = made_dataset(path, "big_endian", H5T_IEEE_F32BE, H5D_ALLOC_TIME_DEFAULT, &file, start, count);
  float *part = box_of(f32, 4, start, count);
  if (how) setenv("H5FZ_MPI_WRITE", how, 1);
  h5fz_settings_reload(); /* the MPI group is read once per process */
  int rc = h5fz_dataset_write_part(d, H5T_NATIVE_FLOAT, start, count, part, H5FZ_MEM_HOST, NULL);
  unsetenv("H5FZ_MPI_WRITE");
  h5fz_settings_reload();
  MT_CHECK(!rc, "big-endian (%s): h5fz_dataset_write_part: %s", how ? how : "default", h5fz_last_error());
  read_back_part(d, f32, start, count, part, how ? "big_endian (direct)" : "big_endian");
  free(part);
  H5Dclose(d);
  H5Fclose(file);
}

int main(int argc, char **argv)
{
  mt_begin(&argc, &argv);
  float *f32;
  double *f64;
  size_t n;
  mt_field(&f32, &f64, &n);
  int ordinal = -1;
  MT_CHECK(!h5fz_mpi_select_gpu(MPI_COMM_WORLD, &ordinal), "h5fz_mpi_select_gpu: %s", h5fz_last_error());
  if (mt_rank == 0) {
    printf("  rank 0 GPU ordinal: %d (-1: none visible, the CPU runs)\n", ordinal);
    remove("manifest.txt"), remove("ref.h5"), remove("mpi_api_serial.h5");
  }
  int with_gpu = gpu_ready();
  hid_t fapl = mt_fapl_mpio();
  hid_t file = H5Fcreate("mpi_api.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  MT_CHECK(file >= 0, "H5Fcreate with the MPI-IO driver");
  bad_use(file, f32);
  for (size_t i = 0; i < N_CASES; i++) {
    if (cases[i].device && !with_gpu) {
      if (mt_rank == 0) printf("  %s: skipped (no GPU visible on every rank)\n", cases[i].name);
      continue;
    }
    write_case(file, &cases[i], cases[i].f64 ? (const void *)f64 : (const void *)f32);
  }
  MT_CHECK(H5Fclose(file) >= 0, "H5Fclose");

  for (size_t i = 0; i < N_CASES; i++) {
    const api_case *c = &cases[i];
    if (c->device && !with_gpu) continue;
    const void *data = c->f64 ? (const void *)f64 : (const void *)f32;
    mt_serial_reference("mpi_api_serial.h5", "ref.h5", c->name, c->f64, 3, dims, c->chunk, c->spec, data);
    mt_compare_chunks("mpi_api.h5", "mpi_api_serial.h5", c->name, c->name);
    compare_attributes(c, data);
    mt_manifest("manifest.txt", "mpi_api.h5", c->name, c->mode, c->bound, "ref.h5");
  }
  MPI_Barrier(MPI_COMM_WORLD);

  late_allocation_write(f32);
  if (!mt_compare_chunks("mpi_api_late.h5", "mpi_api_serial.h5", "abs_slabs", "late allocation") && mt_rank == 0)
    printf("  late allocation: chunks byte-identical to a serial write, values within the bound\n");
  cached_reads_between_writes();
  /* a big-endian dataset: the default way and the direct way store the same bytes */
  big_endian_write("mpi_api_be.h5", NULL, f32);
  big_endian_write("mpi_api_be_direct.h5", "direct", f32);
  if (!mt_compare_chunks("mpi_api_be.h5", "mpi_api_be_direct.h5", "big_endian", "big_endian") && mt_rank == 0)
    printf("  big_endian: chunks of the filtered and the direct write byte-identical, values within the bound\n");
  MPI_Barrier(MPI_COMM_WORLD);

  file = H5Fopen("mpi_api.h5", H5F_ACC_RDONLY, fapl);
  MT_CHECK(file >= 0, "H5Fopen with the MPI-IO driver");
  for (size_t i = 0; i < N_CASES; i++) {
    if (cases[i].device && !with_gpu) continue;
    read_case(file, &cases[i], cases[i].f64 ? (const void *)f64 : (const void *)f32);
  }
  H5Fclose(file);
  H5Pclose(fapl);
  free(f32);
  free(f64);
  return mt_finish("test_mpi_api");
}
