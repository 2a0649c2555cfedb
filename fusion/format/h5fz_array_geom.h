/*
 * h5fz_array_geom.h - the chunk grid of an array (h5fz_array_geom.c),
 * beside the public part of it in h5fz_batch.h: what the array path
 * (h5fz_array.c) and the GPU batches (h5fz_gpu_array.c) share.
 */
#ifndef H5FZ_ARRAY_GEOM_H
#define H5FZ_ARRAY_GEOM_H

#include "h5fz_batch.h"
#include "h5fz_error.h"

/* Values in one chunk (the product of g->chunk). */
uint64_t h5fz_array_chunk_elems(const h5fz_array_geom *g);

/* H5FZ_OK when g is a valid geometry for dtype values (rank, chunk dims,
 * chunk size within format v1), else H5FZ_ERR_ARG with the reason. */
int h5fz_array_check(const h5fz_array_geom *g, h5fz_dtype dtype);

/* The padding / missing-chunk value as dtype bits in the low bytes of
 * *bits: g->fill_bits when g->exact_fill, else fill converted to dtype. */
void h5fz_array_fill_bits(const h5fz_array_geom *g, h5fz_dtype dtype, double fill, uint64_t *bits);

/* Copy chunk `index` of the host array data into out (chunk-contiguous,
 * row-major in the chunk, prod(chunk) values of esize bytes), the part
 * outside the array set to fill_bits. */
void h5fz_array_gather_chunk(const h5fz_array_geom *g, size_t esize, const void *data, uint64_t index,
                             uint64_t fill_bits, void *out);

/* The inverse: the part of chunk `index` inside the array, from chunk to
 * the host array data. */
void h5fz_array_scatter_chunk(const h5fz_array_geom *g, size_t esize, const void *chunk, uint64_t index, void *data);

/* Rows (along the last dim) in one chunk. */
uint64_t h5fz_array_chunk_rows(const h5fz_array_geom *g);

/* The same for rows [row_lo, row_hi) of the chunk only (out and chunk
 * point at the chunk's start), so one chunk can be split over threads. */
void h5fz_array_gather_rows(const h5fz_array_geom *g, size_t esize, const void *data, uint64_t index,
                            uint64_t fill_bits, void *out, uint64_t row_lo, uint64_t row_hi);
void h5fz_array_scatter_rows(const h5fz_array_geom *g, size_t esize, const void *chunk, uint64_t index, void *data,
                             uint64_t row_lo, uint64_t row_hi);

#endif /* H5FZ_ARRAY_GEOM_H */
