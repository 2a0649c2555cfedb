/*
 * h5fz_dataset.h - the dataset-level API: write or read a whole float32 /
 * float64 array, in host or GPU memory, to or from a chunked HDF5 dataset
 * whose pipeline is the h5fz filter, compressing (or decoding) many chunks
 * per GPU launch.
 *
 * The chunks it stores are byte for byte the chunks the filter would store
 * for the same data (plain H5Dwrite through the plugin), written with
 * H5Dwrite_chunk, so every reader with the plugin (h5py, h5dump, h5repack,
 * a machine without a GPU) reads the dataset transparently, and the read
 * call reads datasets written either way. Without a usable GPU both calls
 * run the CPU executor (same bytes).
 *
 * Link with h5fz_dataset and libhdf5 (>= 1.10.3). All functions return an
 * h5fz_status (0 = H5FZ_OK, negative = error; h5fz_last_error() gives the
 * reason). A failed HDF5 call gives H5FZ_ERR_HDF5, with HDF5's own error
 * stack left for H5Eprint2. No function aborts or prints.
 */
#ifndef H5FZ_DATASET_H
#define H5FZ_DATASET_H

#include <hdf5.h>
#include <stdint.h>

#include "h5fz.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Where the caller's array lives. */
typedef enum {
  H5FZ_MEM_HOST = 0,  /* ordinary (pageable or pinned) host memory */
  H5FZ_MEM_DEVICE = 1 /* CUDA device memory of the current device's primary
                         context (what cudaMalloc returns): the array is
                         never copied to the host */
} h5fz_mem;

/* What a write or read did. Times are wall-clock seconds of the call. */
typedef struct {
  uint64_t n_chunks;     /* chunks written / read */
  uint64_t input_bytes;  /* bytes of the array (not counting edge-chunk padding) */
  uint64_t chunk_bytes;  /* bytes of all chunks, padding included */
  uint64_t stored_bytes; /* bytes of the stored chunk containers */
  uint64_t n_outliers;   /* values stored exactly (all chunks) */
  uint64_t n_raw_chunks; /* chunks stored verbatim (incompressible) */
  int on_gpu;            /* 1: the GPU executor ran; 0: the CPU executor */
  char kernel_class[64]; /* planner's class ("hopper"), "cpu" on the CPU */
  char plan_digest[20];  /* planner digest as 16 hex digits, "cpu" on the CPU */
  double seconds;
  double hdf5_seconds; /* of seconds, the time in HDF5's chunk writes or reads and the
                          attribute tables: the rest is the compression and its copies
                          (h5fz_dataset_write/_read; the collective part calls leave it 0:
                          H5FZ_MPI_PROFILE prints their phases) */
} h5fz_dataset_report;

/* Make the h5fz filter known to this process's libhdf5, loading the plugin
 * from HDF5_PLUGIN_PATH (or HDF5's default plugin folder) if it is not
 * loaded yet. HDF5 loads a plugin when it first filters a chunk, but checks
 * a mandatory filter before that in H5Dset_extent and in H5Dwrite of new
 * chunks, and fails there with "required filter 32770 is not registered":
 * a program that reopens an h5fz dataset to extend it or write new chunks
 * before reading any needs this call (or H5Zfilter_avail with the filter
 * id: 32770 unless h5fz was built with another H5FZ_FILTER_ID; CMake's
 * h5fz_FILTER_ID, pkg-config's filter_id) once. h5fz_dataset_create, h5fz_dataset_write and h5fz_dataset_read make
 * it themselves. Returns H5FZ_OK, or H5FZ_ERR_HDF5 when the plugin cannot be
 * loaded (the message names HDF5_PLUGIN_PATH). docs/filter.md, "Appending". */
int h5fz_dataset_register_filter(void);

/* The library mode of the filter: register the h5fz filter class linked
 * into this library (the plugin's own code) with the libhdf5 the program
 * links, by H5Zregister. After it, this process writes, reads, extends
 * and appends to h5fz datasets (H5Dcreate, H5Dwrite, H5Dread,
 * H5Dset_extent, and the functions below) with no plugin and no
 * HDF5_PLUGIN_PATH; other processes reading the file (h5dump, h5py) still
 * need the plugin. Call it once, after H5open or any HDF5 call, before the
 * first dataset; calling it again is harmless, and it takes the place of a
 * plugin HDF5 loaded before (the same code and bytes). For a program that
 * links HDF5 itself (the plugin binds to whichever libhdf5 loads it); the
 * collective MPI write's prepared-container way needs the plugin
 * (docs/mpi.md) and takes the direct way without it.
 * Returns H5FZ_OK, or H5FZ_ERR_HDF5 when HDF5 refuses the class.
 * docs/dataset_api.md, "Library mode". */
int h5fz_register_filter(void);

/* Put the h5fz filter with the spec spec_text ("abs=1e-3", "rel=1e-4
 * lorenzo_nd zigzag bitshuffle rze", docs/spec.md; NULL = the defaults) on
 * the dataset creation property list dcpl, mandatory: what H5Pset_filter
 * with `h5fz cd-values`' words does, without the words. The dataset's
 * type, chunk dims and fill value are added when the dataset is created
 * (the filter's set_local), so dcpl also needs H5Pset_chunk, and the
 * filter must be available at H5Dcreate (h5fz_register_filter, or the
 * plugin on HDF5_PLUGIN_PATH). h5fz must be the first filter: add others
 * (e.g. H5Pset_fletcher32) after this call.
 * Returns H5FZ_OK; H5FZ_ERR_SPEC for a spec the parser refuses or one
 * that sets dtype, dims or fill; H5FZ_ERR_ARG when dcpl is not a dataset
 * creation property list; H5FZ_ERR_HDF5 when H5Pset_filter fails.
 * h5fz_last_error() says why in one line. */
int h5fz_set_filter(hid_t dcpl, const char *spec_text);

/* Create a chunked dataset for the h5fz filter: rank dims (elements,
 * slowest first), chunk dims, element type H5T_NATIVE_FLOAT or
 * H5T_NATIVE_DOUBLE, and a spec in text form ("abs=1e-3", "rel=1e-4 delta
 * zigzag bitshuffle rze", docs/spec.md; NULL = the defaults). Attributes
 * use dense storage, so the outlier attributes can be large. The dataset's
 * fill value is 0 and written at allocation (HDF5's default), so edge
 * chunks are padded with 0 by both the filter and this API.
 * On success *dset is an open dataset the caller closes (H5Dclose).
 * Returns H5FZ_OK, H5FZ_ERR_ARG, H5FZ_ERR_SPEC, H5FZ_ERR_HDF5. */
int h5fz_dataset_create(hid_t loc, const char *name, hid_t mem_type, int rank, const hsize_t *dims,
                        const hsize_t *chunk_dims, const char *spec_text, hid_t *dset);

/* Write the whole dataset from data: the full extent, row-major, element
 * type of the dataset (native float32 or float64, also for a big-endian
 * dataset: its chunks are then the filter's big-endian ones), at `where`. The dataset
 * must be chunked with h5fz as its only filter (e.g. made by
 * h5fz_dataset_create, or by H5Pset_filter with the h5fz cd_values); its
 * stored cd_values (after set_local) give the spec, as the filter uses them.
 * Chunks are compressed in batches (one launch for all chunks of a slab of
 * the chunk grid) and written with H5Dwrite_chunk; then the attributes of
 * docs/dataset_api.md are written (spec, bound, mode, kernel class, plan
 * digest, ratio, per-chunk outlier counts, and the outlier positions and
 * values up to H5FZ_ATTR_MAX_OUTLIERS). report may be NULL.
 * Returns H5FZ_OK, H5FZ_ERR_ARG (not chunked, not h5fz, another filter,
 * not float), H5FZ_ERR_SPEC, H5FZ_ERR_NOMEM, H5FZ_ERR_HDF5, H5FZ_ERR_DEVICE
 * (a device pointer and no usable GPU, or a CUDA error on it). A GPU error
 * on host data falls back to the CPU executor. */
int h5fz_dataset_write(hid_t dset, const void *data, h5fz_mem where, h5fz_dataset_report *report);

/* Read the whole dataset into data (full extent, row-major, the dataset's
 * float type in native byte order, whatever the dataset's) at `where`, decoding the chunks in batches on the GPU
 * (CPU executor without one). Chunks never written read as the fill value.
 * Works on any dataset whose only filter is h5fz, written through the
 * filter or this API; chunks stored without the filter (filter mask set)
 * are refused (H5FZ_ERR_UNSUPPORTED).
 * Returns H5FZ_OK or the codes of h5fz_chunk_decode (a corrupt chunk:
 * H5FZ_ERR_CORRUPT / _CHECKSUM / _TRUNCATED, naming the chunk), H5FZ_ERR_ARG,
 * H5FZ_ERR_HDF5, H5FZ_ERR_DEVICE (device pointer without a usable GPU). */
int h5fz_dataset_read(hid_t dset, void *data, h5fz_mem where, h5fz_dataset_report *report);

/* ---- options: configuration as a value --------------------------------------------
 * What the H5FZ_* environment variables say for the whole process, said
 * for one dataset handle: the device, the GPU, the host threads, whether
 * a device problem fails the call, whether warnings are silent, and the
 * JIT cache folder. A field not set keeps the process's options' value,
 * else the environment's (read once per process, at the first h5fz call);
 * a field set replaces it, its variable unread,
 * for h5fz_dataset_write and h5fz_dataset_read (and the collective
 * h5fz_dataset_write_part / _read_part) on the handle the options are
 * attached to (h5fz_dataset_set_options). What has no handle (the HDF5
 * filter: H5Dwrite and H5Dread through the plugin or the library mode,
 * h5fz_set_filter's datasets, set_local at H5Dcreate) follows the options
 * of the process instead (h5fz_set_process_options), else the
 * environment. Field by field: a handle's options, then the process's,
 * then the environment. docs/dataset_api.md, "Options". */
typedef struct h5fz_options h5fz_options;

/* A new options value with nothing set (every field: the environment's);
 * the caller frees it with h5fz_options_free. NULL when out of memory. */
h5fz_options *h5fz_options_create(void);

/* Free options (NULL: nothing). Handles they were attached to, and the
 * process (h5fz_set_process_options), keep their own copy. */
void h5fz_options_free(h5fz_options *opts);

/* The executor: "auto" (the GPU when usable, else the CPU), "cpu" or
 * "gpu" (any case); NULL unsets it (H5FZ_DEVICE). H5FZ_ERR_ARG for another
 * text or NULL opts. */
int h5fz_options_set_device(h5fz_options *opts, const char *device);

/* The GPU (CUDA device ordinal 0..1023) the calls use; -1 unsets it
 * (H5FZ_GPU_ORDINAL). H5FZ_ERR_ARG out of range. */
int h5fz_options_set_gpu_ordinal(h5fz_options *opts, int ordinal);

/* Host threads of the CPU executor and the GPU paths' host side: 1..1024,
 * 0 for one a core; -1 unsets it (H5FZ_THREADS). H5FZ_ERR_ARG out of range. */
int h5fz_options_set_threads(h5fz_options *opts, int threads);

/* 1: a GPU asked for and not usable, or a GPU failure, fails the call
 * (H5FZ_ERR_DEVICE) instead of falling back to the CPU executor; 0: it
 * falls back; -1 unsets it (H5FZ_DEVICE_STRICT). H5FZ_ERR_ARG otherwise. */
int h5fz_options_set_strict(h5fz_options *opts, int strict);

/* 1: h5fz's warnings on stderr (a fallback to the CPU) stay silent; 0:
 * they are said; -1 unsets it (H5FZ_QUIET). H5FZ_ERR_ARG otherwise. */
int h5fz_options_set_quiet(h5fz_options *opts, int quiet);

/* The folder of the JIT and calibration caches (created when needed); NULL
 * or "" unsets it (H5FZ_CACHE_DIR). H5FZ_ERR_ARG for a path of 1024 bytes
 * or more. */
int h5fz_options_set_cache_dir(h5fz_options *opts, const char *dir);

/* Attach a copy of opts to the open dataset handle dset: h5fz_dataset_write
 * and h5fz_dataset_read on it then use them. NULL opts detaches. The copy
 * lives until it is replaced or detached; a handle HDF5 gives out again
 * for another dataset after H5Dclose does not inherit it (the dataset is
 * compared). H5FZ_ERR_ARG (not a dataset), H5FZ_ERR_NOMEM. */
int h5fz_dataset_set_options(hid_t dset, const h5fz_options *opts);

/* Make a copy of opts the options of every h5fz call of this process that
 * has no handle options: the filter (H5Dwrite / H5Dread through the plugin,
 * or through the library mode of h5fz_register_filter; h5fz_set_filter's
 * and any other h5fz dataset's), set_local at H5Dcreate, the collective
 * MPI API, and dataset handles without options; a handle's own options
 * (h5fz_dataset_set_options) win field by field, and a field neither sets
 * is the environment's. NULL goes back to the environment. The options
 * live in the process (never in the file): this library's copy of the
 * codec takes them, and so does every copy of the filter plugin loaded in
 * the process, after this call has made libhdf5 load its plugin from
 * HDF5_PLUGIN_PATH (HDF5 loads it lazily, at the filter's first use).
 * A plugin copy loaded after this call (by a second libhdf5, or a
 * HDF5_PLUGIN_PATH that had none) is told again by h5fz_set_filter and
 * h5fz_dataset_create (before the dataset is made); another way of making
 * a dataset gets them with a new call of this function. Safe while other
 * threads run h5fz calls (a call in flight keeps what it read); opts may
 * be freed after. Returns H5FZ_OK; H5FZ_ERR_UNSUPPORTED when a loaded
 * plugin copy refused them (an h5fz plugin older than this library: it
 * keeps the environment's settings, while this library's copy and every
 * copy that took them have the options; the message says how many). */
int h5fz_set_process_options(const h5fz_options *opts);

/* Outlier lists longer than this are not copied into attributes (the
 * chunks always hold them); h5fz_outliers_omitted then says how many. */
#define H5FZ_ATTR_MAX_OUTLIERS (1u << 20)

#ifdef __cplusplus
}
#endif
#endif /* H5FZ_DATASET_H */
