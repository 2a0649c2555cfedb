/*
 * h5fz_gpu_batch_util.c - the GPU batches' shared steps (see the header).
 */
#include <string.h>

#include "h5fz_gpu_batch_util.h"
#include "h5fz_gpu_launch.h"

/* The kernels' h5fz_batch_geom (fusion/gpu/h5fz_gpu_batch.h), same layout. */
typedef struct {
  unsigned long long rank, dims[8], chunk[8], grid[8], first_chunk, base_elem;
} batch_geom;

int h5fz_batch_grow_pin(h5fz_gpu_context *gc, void **p, size_t *cap, size_t bytes)
{
  if (bytes <= *cap) return H5FZ_OK;
  if (*p) gc->cu->cuMemFreeHost(*p);
  *p = NULL;
  *cap = 0;
  size_t want = bytes + bytes / 8 + 4096;
  CUresult r = gc->cu->cuMemAllocHost(p, want);
  if (r) return h5fz_gpu_cuda_fail(r, "cuMemAllocHost (batch staging)");
  *cap = want;
  return H5FZ_OK;
}

/* Chunks per batch: H5FZ_BATCH_BYTES of chunk data (default 512 MiB), at
 * least one chunk, and few enough sub-chunks for the 32-bit tail scan. */
uint64_t h5fz_batch_chunk_count(const h5fz_gpu_context *gc, uint64_t chunk_bytes, uint32_t n_sub)
{
  unsigned long long limit = gc->settings.batch_bytes;
  uint64_t n = limit / (chunk_bytes ? chunk_bytes : 1);
  uint64_t max_by_grid = 0x7fffffffu / (n_sub ? n_sub : 1);
  if (n > max_by_grid) n = max_by_grid;
  return n ? n : 1;
}

static void to_batch_geom(const h5fz_array_geom *g, uint64_t first, batch_geom *bg)
{
  memset(bg, 0, sizeof *bg);
  bg->rank = g->rank;
  for (uint32_t d = 0; d < g->rank; d++) {
    bg->dims[d] = g->dims[d];
    bg->chunk[d] = g->chunk[d];
    bg->grid[d] = (g->dims[d] + g->chunk[d] - 1) / g->chunk[d];
  }
  bg->first_chunk = first;
}

/* Page-locked host memory (cuMemAllocHost, cudaMallocHost, registered):
 * the copy engines read and write it in place, so an array there needs no
 * staging copy, only its rows moved as they are and a gather kernel. */
int h5fz_batch_host_is_pinned(const h5fz_gpu_context *gc, const void *p, size_t bytes)
{
  int type = 0;
  const uint8_t *b = p;
  if (!p || !bytes) return 0;
  if (gc->cu->cuPointerGetAttribute(&type, H5FZ_CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)(uintptr_t)b) ||
      type != H5FZ_CU_MEMORYTYPE_HOST)
    return 0;
  return !gc->cu->cuPointerGetAttribute(&type, H5FZ_CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                        (CUdeviceptr)(uintptr_t)(b + bytes - 1u)) &&
         type == H5FZ_CU_MEMORYTYPE_HOST;
}

void h5fz_batch_slabs(const h5fz_array_geom *g, uint64_t *bc, h5fz_slab_geom *sg)
{
  uint64_t grid0 = (g->dims[0] + g->chunk[0] - 1) / g->chunk[0];
  sg->per_slab = grid0 ? h5fz_array_chunks(g) / grid0 : 1;
  sg->row_elems = 1;
  for (uint32_t d = 1; d < g->rank; d++) sg->row_elems *= g->dims[d];
  *bc = *bc / sg->per_slab * sg->per_slab;
}

/* The array rows of the slabs holding chunks [first, first + count): the
 * element index they start at and their bytes. */
void h5fz_batch_slab_region(const h5fz_array_geom *g, const h5fz_slab_geom *sg, uint64_t first, uint64_t count,
                            size_t esize, uint64_t *elem0, size_t *bytes)
{
  uint64_t s0 = first / sg->per_slab, s1 = (first + count + sg->per_slab - 1) / sg->per_slab;
  uint64_t r0 = s0 * g->chunk[0], r1 = s1 * g->chunk[0] < g->dims[0] ? s1 * g->chunk[0] : g->dims[0];
  *elem0 = r0 * sg->row_elems;
  *bytes = (size_t)((r1 - r0) * sg->row_elems * esize);
}

unsigned h5fz_batch_grid_for(uint64_t threads_needed)
{
  uint64_t blocks = (threads_needed + BATCH_THREADS - 1) / BATCH_THREADS;
  return (unsigned)(blocks > 65535u * 16u ? 65535u * 16u : blocks ? blocks : 1u);
}

/* Move count chunks between the device array and gc->in (gather: array
 * -> chunks, padding = fill; scatter: chunks -> array). */
int h5fz_batch_move_chunks(h5fz_gpu_context *gc, const chain_entry *c, int gather, const h5fz_array_geom *g,
                           uint64_t first, uint64_t count, CUdeviceptr array, uint64_t base_elem, CUdeviceptr chunks,
                           uint64_t fill)
{
  batch_geom bg;
  to_batch_geom(g, first, &bg);
  bg.base_elem = base_elem;
  int w = c->dtype == H5FZ_DTYPE_F64;
  unsigned long long rows = count * (h5fz_array_chunk_elems(g) / g->chunk[g->rank - 1]);
  uint32_t fill32 = (uint32_t)fill;
  void *fillp = w ? (void *)&fill : (void *)&fill32;
  void *gargs[] = {&array, &chunks, &bg, &rows, fillp};
  void *sargs[] = {&chunks, &array, &bg, &rows};
  return gather ? h5fz_gpu_launch(gc, c->mod.gather[w], h5fz_batch_grid_for(rows * 32u), BATCH_THREADS, 0, gargs,
                                  "gather kernel")
                : h5fz_gpu_launch(gc, c->mod.scatter[w], h5fz_batch_grid_for(rows * 32u), BATCH_THREADS, 0, sargs,
                                  "scatter kernel");
}

/* Host work over chunks is split into blocks of rows of about 256 KiB, so
 * every core has work even when a batch holds few large chunks. */
uint64_t h5fz_batch_rows_per_block(const h5fz_array_geom *g, size_t esize)
{
  uint64_t row_bytes = g->chunk[g->rank - 1] * esize, rows = h5fz_array_chunk_rows(g);
  uint64_t r = (256u << 10) / (row_bytes ? row_bytes : 1);
  r = r ? r : 1;
  return r < rows ? r : rows;
}
