/*
 * bench_ranks.h - what the two many-process benchmarks share (bench_mpi.c:
 * N MPI ranks into one file; bench_node.c: N processes, a file each): the
 * real field tiled into each rank's part, the four write/read paths and
 * their buffers, the checks of what came back, and the JSON row of a path.
 * Each program keeps what differs: how ranks meet (MPI or a shared
 * barrier), the file layout and the totals over ranks.
 */
#ifndef H5FZ_BENCH_RANKS_H
#define H5FZ_BENCH_RANKS_H

#include <stddef.h>
#include <stdint.h>

#include <hdf5.h>

#include "h5fz_cuda.h"
#include "h5fz_dataset.h"

/* The field: um_sea_ice northward velocity, float32, FIELD_T x NY x NX. */
#define BENCH_NY 215
#define BENCH_NX 360
#define BENCH_FIELD_T 120

/* The options both benchmarks take (their usage lines list them). */
typedef struct {
  const char *data;  /* --data DIR (default $H5FZ_DATA_DIR): the field's folder */
  const char *paths; /* --paths LIST: of filter,api_host,api_pinned,api_device (default all) */
  const char *label; /* --label TEXT, copied into the JSON */
  const char *dir;   /* --dir D: where the files go (default /dev/shm) */
  double gib;        /* --gib-per-rank G (default 1) */
  int planes;        /* --chunk-planes P: planes per chunk (default 16) */
  int reps;          /* --reps R: measured runs after the warm-up (default 2) */
} bench_options;

/* The defaults above. */
void bench_options_default(bench_options *o);

/* When argv[*i] is one of the options above and has its value, take it
 * (advancing *i past the value) and return 1; else 0 (the caller's own
 * option, or a usage error). */
int bench_option(bench_options *o, int argc, char **argv, int *i);

/* 1 when data is known, gib > 0, planes >= 1 and reps >= 1. */
int bench_options_valid(const bench_options *o);

/* Planes of one rank's part: gib GiB of NY x NX float32 planes, rounded
 * up to whole chunks of o->planes. */
uint64_t bench_planes_per_rank(const bench_options *o);

/* The paths a benchmark measures, in the order it reports them. */
typedef enum { BENCH_FILTER, BENCH_HOST, BENCH_PINNED, BENCH_DEVICE, BENCH_N_PATHS } bench_path;

/* "filter", "api_host", "api_pinned", "api_device" (the JSON's and --paths' names). */
extern const char *const bench_path_names[BENCH_N_PATHS];

/* CLOCK_MONOTONIC in seconds: one clock for every process of the machine. */
double bench_now_s(void);

/* Read the field from dir (um_sea_ice_northward_velocity_float32_120x215x360.f32)
 * into a malloc'd array (the caller frees) and its finite range (max - min)
 * into *range. NULL when the file cannot be read or memory is short. */
float *bench_load_field(const char *dir, double *range);

/* Planes [z0, z0 + nz) of the field repeated along time into host
 * (nz x NY x NX floats): plane z is field plane z % FIELD_T. */
void bench_tile_field(const float *field, float *host, uint64_t z0, uint64_t nz);

/* One rank's buffers: its part on the host (host, filled by the caller), the
 * read-back (back), and where a GPU is, page-locked copies and device copies. */
typedef struct {
  size_t elems; /* floats of the rank's part */
  float *host, *back, *pinned, *pinned_back;
  CUdeviceptr dev, dev_back;
} bench_buffers;

/* Allocate host and back (elems floats each). 0, or -1 when memory is short. */
int bench_host_buffers(bench_buffers *b, size_t elems);

/* With cu (may be NULL) and GPU `ordinal` (-1: none): retain its primary
 * context, allocate dev, dev_back, pinned, pinned_back, and copy host into
 * dev and pinned. 1 when all of it worked (the pinned and device paths can
 * run), else 0. */
int bench_gpu_buffers(const h5fz_cuda_api *cu, int ordinal, bench_buffers *b);

/* What path p writes from, reads into, and the h5fz_mem that says where. */
const void *bench_source(const bench_buffers *b, bench_path p);
void *bench_destination(const bench_buffers *b, bench_path p);
h5fz_mem bench_mem(bench_path p);

/* Every element path p read back against host: the largest |error| into
 * *max_err, the elements beyond bound (NaN counts) into *bad. The device
 * path's read-back is copied to back first. 0, or -1 when that copy fails. */
int bench_check_back(const h5fz_cuda_api *cu, const bench_buffers *b, bench_path p, double bound, double *max_err,
                     long *bad);

/* 1 when the chunks starting at planes z_lo, z_lo + chunk0, ... below z_hi
 * of datasets a and b (chunked along dim 0 only) are stored byte for byte
 * the same, through the filter (mask 0), else 0 (also when a or b is
 * invalid). */
int bench_same_chunks(hid_t a, hid_t b, uint64_t z_lo, uint64_t z_hi, uint64_t chunk0);

/* Dataset "x" of file path opened with fapl: raw_bytes over its storage size. */
double bench_stored_ratio(const char *path, hid_t fapl, uint64_t raw_bytes);

/* One result row of the JSON "results" list on stdout ("," before it unless
 * first): seconds and GB/s (total_bytes / seconds) of the best write and
 * read, ratio, error against bound, bound_ok, chunks_identical_to_filter
 * (1 true, 0 false, -1 null: not compared) and api_ranks_on_gpu (-1 for the
 * filter path). */
void bench_print_row(int first, bench_path p, double write_s, double read_s, double total_bytes, double ratio,
                     double max_err, double bound, int ok, int identical, int gpu_ranks);

#endif /* H5FZ_BENCH_RANKS_H */
