/*
 * h5fz_batch.h - whole arrays through the chunk codec in batches: many
 * chunks per GPU launch, from host or device memory. What the dataset API
 * (api/h5fz_dataset.h) builds on; it knows nothing of HDF5.
 *
 * An array of rank dims (row-major, slowest first) is cut into chunks of
 * chunk[] dims, numbered row-major over the chunk grid. Edge chunks are
 * padded with the fill value, as HDF5 pads them before the filter sees
 * them, so each chunk container is byte for byte what h5fz_chunk_encode
 * makes of the same padded chunk.
 */
#ifndef H5FZ_BATCH_H
#define H5FZ_BATCH_H

#include "h5fz.h"

#ifdef __cplusplus
extern "C" {
#endif

#define H5FZ_ARRAY_MAX_RANK 8

typedef struct {
  uint32_t rank;                       /* 1..H5FZ_ARRAY_MAX_RANK */
  uint64_t dims[H5FZ_ARRAY_MAX_RANK];  /* array extent, elements */
  uint64_t chunk[H5FZ_ARRAY_MAX_RANK]; /* chunk dims, elements, each >= 1 */
  int exact_fill;                      /* 1: fill_bits (not the spec's or the decode
                                         call's double) pads edge chunks and fills
                                         missing ones: HDF5 pads with the exact
                                         bits (a signalling NaN stays one), and
                                         with 0 when the fill time is NEVER */
  uint64_t fill_bits;                  /* the value's bits (low 4 bytes for float32) */
} h5fz_array_geom;

/* The chunk shape the containers of g's chunks record (g's chunk dims
 * folded by h5fz_chunk_dims_fold) into dims; returns its rank, 0 when g's
 * chunk dims cannot be folded. */
uint32_t h5fz_array_chunk_shape(const h5fz_array_geom *g, uint32_t dims[H5FZ_MAX_RANK]);

/* Chunks in the grid of g (0 when g is invalid). */
uint64_t h5fz_array_chunks(const h5fz_array_geom *g);

/* The first element of chunk `index` (row-major over the chunk grid):
 * origin[0..rank), in elements. */
void h5fz_array_chunk_origin(const h5fz_array_geom *g, uint64_t index, uint64_t *origin);

/* One encoded chunk as a sink receives it; container and info are valid
 * during the call only. */
typedef struct {
  uint64_t index;        /* row-major over the chunk grid */
  const void *container; /* the chunk container (docs/format.md) */
  size_t bytes;
  h5fz_chunk_info info; /* its header, as h5fz_chunk_inspect gives it */
} h5fz_encoded_chunk;

/* Called once per chunk in increasing index order on the calling thread.
 * Return 0 to go on; anything else stops the encode, which returns it. */
typedef int (*h5fz_chunk_sink)(void *ctx, const h5fz_encoded_chunk *chunk);

/* Called once per chunk in increasing index order on the calling thread:
 * set *container to a malloc'd chunk container (the decoder frees it) and
 * *bytes to its size, or *bytes = 0 (and *container = NULL) for a chunk
 * that was never written (it reads as the fill value). Nonzero stops. */
typedef int (*h5fz_chunk_source)(void *ctx, uint64_t index, void **container, size_t *bytes);

/* Which executor ran. */
typedef struct {
  int on_gpu;
  char kernel_class[64]; /* "cpu" on the CPU */
  uint64_t plan_digest;  /* 0 on the CPU */
} h5fz_array_exec;

/* Encode the array data (rank/dims of g, row-major, spec->dtype values) in
 * host memory (on_device = 0) or CUDA device memory of the primary context
 * (on_device = 1), chunk by chunk, and hand each container to sink.
 * spec: as the filter has it after set_local (dtype known; its chunk dims,
 * when set, must hold prod(g->chunk) elements); the fill value padding edge
 * chunks is spec->fill when spec->has_fill, else 0. On the GPU all chunks
 * of a batch (up to H5FZ_BATCH_BYTES of chunk data, default 512 MiB) go in
 * one launch; with H5FZ_DEVICE=cpu, or no usable GPU, host data runs the
 * CPU executor (device data then fails with H5FZ_ERR_DEVICE); a GPU error
 * on host data falls back to the CPU for the chunks not yet handed over.
 * ex (may be NULL) receives the executor. Returns H5FZ_OK, H5FZ_ERR_ARG,
 * H5FZ_ERR_SPEC, H5FZ_ERR_NOMEM, H5FZ_ERR_DEVICE, or the sink's status. */
int h5fz_array_encode(const h5fz_spec *spec, const h5fz_array_geom *g, const void *data, int on_device,
                      h5fz_chunk_sink sink, void *ctx, h5fz_array_exec *ex);

/* Decode every chunk that source gives into data (the whole array, dtype
 * values, host or device memory as above); chunks never written read as
 * fill. dataset: the dataset's spec (mode and bound); every container must
 * be a chunk of g (type, size, recorded shape) that keeps its bound
 * (h5fz_chunk_info_check_spec), else H5FZ_ERR_CORRUPT naming the chunk.
 * On the GPU a batch of chunks is decoded in one launch; chunks of
 * another chain than the batch's first are decoded one by one.
 * Returns H5FZ_OK, the statuses of h5fz_chunk_decode (the message names
 * the chunk), H5FZ_ERR_ARG, H5FZ_ERR_NOMEM, H5FZ_ERR_DEVICE, or the
 * source's status. */
int h5fz_array_decode(const h5fz_array_geom *g, h5fz_dtype dtype, const h5fz_spec *dataset, double fill,
                      h5fz_chunk_source source, void *ctx, void *data, int on_device, h5fz_array_exec *ex);

/* Set the byte order a valid container records (flag bit 1 and the version
 * byte, 2 for big-endian, 1 for little-endian) and its checksum again, in
 * place; the body (little-endian values) is unchanged. For writers that
 * code values in native order for a dataset of the other byte order (the
 * dataset API). Returns H5FZ_OK or the status of h5fz_container_open
 * (fusion/format/h5fz_container.c). */
int h5fz_container_set_byte_order(uint8_t *buf, size_t len, int big_endian);

#ifdef __cplusplus
}
#endif
#endif /* H5FZ_BATCH_H */
