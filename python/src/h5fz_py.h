/*
 * h5fz_py.h - the small C library under the Python package (python/h5fz),
 * loaded with ctypes: the spec parser, whole arrays through the batched
 * codec (fusion/h5fz_batch.h), single chunks as the filter codes them (for
 * the numcodecs and Zarr codecs) and what the executor would be. It links the
 * static codec h5fz_core and NOT libhdf5: Python does the HDF5 side with
 * the h5py it imported (write_direct_chunk / read_direct_chunk), so no
 * second libhdf5 enters a process whose h5py wheel brings its own.
 *
 * Conventions: every function returning int gives an h5fz_status (0 = OK,
 * negative = error, fusion/h5fz.h) with the reason in h5fzpy_last_error().
 * Nothing prints, nothing aborts. Arrays are row-major, slowest dim first;
 * dims in elements. No function keeps a pointer it was given.
 */
#ifndef H5FZ_PY_H
#define H5FZ_PY_H

#include <stddef.h>
#include <stdint.h>

#define H5FZPY_EXPORT __attribute__((visibility("default")))

/* Library version (CMake's PROJECT_VERSION), e.g. "0.2.0". Static. */
H5FZPY_EXPORT const char *h5fzpy_version(void);

/* The HDF5 filter id the library was built with (H5FZ_FILTER_ID). */
H5FZPY_EXPORT int h5fzpy_filter_id(void);

/* Reason of the last failure on this thread (thread-local, valid until the
 * next call on this thread); empty when none. */
H5FZPY_EXPORT const char *h5fzpy_last_error(void);

/* Parse spec text as `h5fz cd-values` does (blank or NULL text: the
 * defaults that UD=<id>,0,0 means), validate it, and write its user
 * cd_values into cd[0..cap) (*n_cd: the count, at most 20) and its
 * canonical text into canon (canon_cap bytes, NUL-terminated; may be NULL).
 * *has_fill (may be NULL) is set to 1 when the text named a fill=, which
 * cd_values do not carry. H5FZ_ERR_SPEC with the parser's message,
 * H5FZ_ERR_ARG for NULL or short buffers. */
H5FZPY_EXPORT int h5fzpy_spec_cd_values(const char *text, unsigned *cd, size_t cap, size_t *n_cd, char *canon,
                                        size_t canon_cap, int *has_fill);

/* The warning h5fz_spec_caution gives for spec text (a REL bound above 1)
 * into buf (cap bytes, NUL-terminated; "" when there is none): 1 when
 * there is one, 0 otherwise (also when the text does not parse: that is
 * h5fzpy_spec_cd_values's error to report). */
H5FZPY_EXPORT int h5fzpy_spec_caution(const char *text, char *buf, size_t cap);

/* Entry i (0-based) of the mode table (h5fz_mode_at): *name its name
 * ("pw_rel", static), *takes_bound 1 when it takes a bound. H5FZ_OK, or
 * H5FZ_ERR_ARG past the end (callers loop until it fails) or for NULL. The
 * Python package's mode keywords come from here, not a list of its own. */
H5FZPY_EXPORT int h5fzpy_mode_at(size_t i, const char **name, int *takes_bound);

/* The canonical text of the spec that cd_values (n_cd words, e.g. a
 * dataset's, as set_local stored them) mean, into canon; *dtype (may be
 * NULL) receives its dataset part's element type (1 float32, 2 float64, 0
 * none: set_local did not run). H5FZ_ERR_SPEC / H5FZ_ERR_ARG. */
H5FZPY_EXPORT int h5fzpy_describe_cd_values(const unsigned *cd, size_t n_cd, char *canon, size_t canon_cap, int *dtype);

/* The user part of a spec (what h5fz.Filter takes as keywords), from
 * cd_values as a dataset stores them or as h5fz.Filter made them. */
typedef struct {
  int mode;                /* h5fz_mode: 0 abs, 1 rel, 2 pw_rel, 3 lossless */
  double bound;            /* 0 for lossless */
  uint32_t subchunk_bytes; /* bytes of input per sub-chunk */
  char chain[256];         /* the ops after the quantizer, blank-separated ("delta zigzag bitshuffle rze") */
  char spec[512];          /* canonical text of the user part (no dtype=, dims=, fill=, order=) */
} h5fzpy_spec_view;

/* Decode cd_values (n_cd words, user part and maybe set_local's dataset
 * part; missing trailing user words take their defaults), validate them,
 * and fill *view with the user part. H5FZ_ERR_SPEC with the decoder's or
 * validator's message (not h5fz's words, a bad chain), H5FZ_ERR_ARG. */
H5FZPY_EXPORT int h5fzpy_spec_view_of_cd_values(const unsigned *cd, size_t n_cd, h5fzpy_spec_view *view);

/* An array and its chunk grid, as the dataset holds it. */
typedef struct {
  uint32_t rank;      /* 1..8 */
  uint64_t dims[8];   /* array extent */
  uint64_t chunk[8];  /* chunk dims, each >= 1 */
  int exact_fill;     /* 1: fill_bits pads edge chunks and fills missing ones */
  uint64_t fill_bits; /* the fill value's bits (low 4 bytes for float32) */
  double fill;        /* the fill value as a double (decode of missing chunks without exact_fill) */
} h5fzpy_geom;

/* One chunk container as the sink gets it (valid during the call only). */
typedef struct {
  uint64_t index; /* row-major over the chunk grid of the geom */
  const void *container;
  size_t bytes;
  double abs_bound; /* the absolute bound applied */
  uint32_t n_outliers;
  int stored_raw;
} h5fzpy_chunk;

/* Receives each chunk in increasing index order on the calling thread;
 * nonzero stops the encode, which then returns that value. */
typedef int (*h5fzpy_sink)(void *ctx, const h5fzpy_chunk *chunk);

/* Gives the container of chunk index (pointer and size, owned by the
 * caller and valid until the next call), or *bytes = 0 for a chunk never
 * written (read as fill). Nonzero stops the decode. */
typedef int (*h5fzpy_source)(void *ctx, uint64_t index, const void **container, size_t *bytes);

/* Which executor ran a call. */
typedef struct {
  int on_gpu;
  char kernel_class[64]; /* "cpu" on the CPU */
  uint64_t plan_digest;  /* 0 on the CPU */
} h5fzpy_exec;

/* Encode data (g's dims, row-major, of the element type of cd's dataset
 * part; host memory, or CUDA device memory of the primary context with
 * on_device = 1) into the chunk containers the filter would store for a
 * dataset whose pipeline holds cd (n_cd words, after set_local), and hand
 * them to sink. The GPU takes many chunks per launch; without a usable GPU
 * host data runs the CPU executor (device data then fails with
 * H5FZ_ERR_DEVICE). ex may be NULL. Returns H5FZ_OK, H5FZ_ERR_ARG,
 * H5FZ_ERR_SPEC (cd lacks set_local's words, or g's chunk is not cd's),
 * H5FZ_ERR_NOMEM, H5FZ_ERR_DEVICE, or the sink's value. */
H5FZPY_EXPORT int h5fzpy_encode(const unsigned *cd, size_t n_cd, const h5fzpy_geom *g, const void *data, int on_device,
                                h5fzpy_sink sink, void *ctx, h5fzpy_exec *ex);

/* Decode the chunks that source gives into data (the whole array of g, host
 * or device memory as above); every container is checked against cd's
 * dataset (type, size, shape, bound). Returns H5FZ_OK, the codec's decode
 * statuses (the message names the chunk), H5FZ_ERR_ARG, H5FZ_ERR_SPEC,
 * H5FZ_ERR_NOMEM, H5FZ_ERR_DEVICE, or the source's value. */
H5FZPY_EXPORT int h5fzpy_decode(const unsigned *cd, size_t n_cd, const h5fzpy_geom *g, h5fzpy_source source, void *ctx,
                                void *data, int on_device, h5fzpy_exec *ex);

/* ---- One chunk at a time (the numcodecs and Zarr codecs) -----------------
 * The same bytes as the HDF5 filter for the same chunk: these take the
 * filter's own steps (h5fz_py_chunk.c), on the GPU when there is one and
 * H5FZ_DEVICE allows it, on the CPU otherwise. */

/* Encode one chunk (in: in_bytes bytes, row-major, of dtype: 1 float32, 2
 * float64; big_endian: the values are big-endian) of chunk shape
 * dims[0..rank) (elements, slowest first; folded to 4 dims as set_local
 * folds them) into the container the filter stores for a dataset whose
 * user cd_values are cd (n_cd words; a dataset part in them is replaced)
 * and whose fill value is fill (has_fill 0: none; a rel= spec then fails:
 * its range leaves the fill value out). in_bytes must be the chunk's whole
 * size. *out (malloc'd, free with h5fzpy_free) receives *out_bytes bytes.
 * Returns H5FZ_OK, H5FZ_ERR_ARG (type, size, dims, chunk above the format's
 * limit), H5FZ_ERR_SPEC, H5FZ_ERR_NOMEM. */
H5FZPY_EXPORT int h5fzpy_chunk_encode(const unsigned *cd, size_t n_cd, int dtype, int big_endian, uint32_t rank,
                                      const uint64_t *dims, int has_fill, double fill, const void *in, size_t in_bytes,
                                      void **out, size_t *out_bytes);

/* Decode one container (a codec's or an HDF5 chunk's: in, in_bytes) into
 * *out (malloc'd, free with h5fzpy_free; *out_bytes bytes, in the byte
 * order it was coded from); *dtype and *big_endian (each may be NULL)
 * receive its element type (1 float32, 2 float64) and that order. The container is checked as the filter checks a
 * chunk of its dataset (checksum, sizes, its recorded type and shape) and
 * must keep the bound of the user cd_values cd: a looser one is refused
 * (H5FZ_ERR_CORRUPT). Returns H5FZ_OK or the codec's decode statuses. */
H5FZPY_EXPORT int h5fzpy_chunk_decode(const unsigned *cd, size_t n_cd, const void *in, size_t in_bytes, void **out,
                                      size_t *out_bytes, int *dtype, int *big_endian);

/* free() for what h5fzpy_chunk_encode / h5fzpy_chunk_decode returned (the
 * library's allocator, which need not be the caller's). NULL is fine. */
H5FZPY_EXPORT void h5fzpy_free(void *p);

#endif /* H5FZ_PY_H */
