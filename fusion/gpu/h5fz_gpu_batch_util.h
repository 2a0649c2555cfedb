/*
 * h5fz_gpu_batch_util.h - what the GPU batches' encode and decode share
 * (h5fz_gpu_batch_util.c): their staging buffers beside the context's,
 * how many chunks a launch takes, page-locked arrays moved in slabs, and
 * the gather/scatter kernels between an array on the device and the
 * batch's chunks.
 */
#ifndef H5FZ_GPU_BATCH_UTIL_H
#define H5FZ_GPU_BATCH_UTIL_H

#include "h5fz_array_geom.h"
#include "h5fz_gpu_chain.h"
#include "h5fz_gpu_context.h"

#define BATCH_THREADS 256u

/* A pinned array moves in slabs (one row of the chunk grid along the
 * slowest dim: contiguous in the array). The batches then hold whole slabs;
 * *bc becomes a multiple of the chunks per slab, or 0 when one slab is
 * larger than a batch (then the array is staged like pageable memory). */
typedef struct {
  uint64_t per_slab;  /* chunks per slab */
  uint64_t row_elems; /* elements per index of the slowest dim */
} h5fz_slab_geom;

/* Grow one of gc's pinned batch buffers (*p, *cap) to at least bytes. */
int h5fz_batch_grow_pin(h5fz_gpu_context *gc, void **p, size_t *cap, size_t bytes);

/* Chunks per batch: H5FZ_BATCH_BYTES of chunk data (default 512 MiB), at
 * least one chunk, and few enough sub-chunks for the 32-bit tail scan. */
uint64_t h5fz_batch_chunk_count(const h5fz_gpu_context *gc, uint64_t chunk_bytes, uint32_t n_sub);

/* Page-locked host memory (cuMemAllocHost, cudaMallocHost, registered):
 * the copy engines read and write it in place, so an array there needs no
 * staging copy, only its rows moved as they are and a gather kernel. */
int h5fz_batch_host_is_pinned(const h5fz_gpu_context *gc, const void *p, size_t bytes);

void h5fz_batch_slabs(const h5fz_array_geom *g, uint64_t *bc, h5fz_slab_geom *sg);

/* The array rows of the slabs holding chunks [first, first + count): the
 * element index they start at and their bytes. */
void h5fz_batch_slab_region(const h5fz_array_geom *g, const h5fz_slab_geom *sg, uint64_t first, uint64_t count,
                            size_t esize, uint64_t *elem0, size_t *bytes);

unsigned h5fz_batch_grid_for(uint64_t threads_needed);

/* Move count chunks between the device array and chunks (gc->in) (gather: array
 * -> chunks, padding = fill; scatter: chunks -> array). */
int h5fz_batch_move_chunks(h5fz_gpu_context *gc, const chain_entry *c, int gather, const h5fz_array_geom *g,
                           uint64_t first, uint64_t count, CUdeviceptr array, uint64_t base_elem, CUdeviceptr chunks,
                           uint64_t fill);

/* Host work over chunks is split into blocks of rows of about 256 KiB, so
 * every core has work even when a batch holds few large chunks. */
uint64_t h5fz_batch_rows_per_block(const h5fz_array_geom *g, size_t esize);

#endif /* H5FZ_GPU_BATCH_UTIL_H */
