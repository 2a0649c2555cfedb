/*
 * h5fz_gpu_array.c - the dataset API's GPU batches: many equal chunks in
 * one launch of the fused kernels (h5fz_gpu_state.h), the chunks gathered
 * from the array on the host (into pinned memory, on every core) or, for
 * device arrays, by a kernel (fusion/gpu/h5fz_gpu_batch.h), so a device
 * array is never copied to the host. The containers are written on the
 * host, on every core, byte for byte as the per-chunk path writes them.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h5fz_array_geom.h"
#include "h5fz_chunk_check.h"
#include "h5fz_chunk_plan.h"
#include "h5fz_cpu_exec.h"
#include "h5fz_gpu_array.h"
#include "h5fz_gpu_chain.h"
#include "h5fz_gpu_context.h"
#include "h5fz_gpu_launch.h"
#include "h5fz_parallel.h"
#include "h5fz_rel_bound.h"
#include "h5fz_side.h"

#define BATCH_THREADS 256u

/* The kernels' h5fz_batch_geom (fusion/gpu/h5fz_gpu_batch.h), same layout. */
typedef struct {
  unsigned long long rank, dims[8], chunk[8], grid[8], first_chunk, base_elem;
} batch_geom;

/* Device buffers and pinned memory of the batch path, beside g_gpu's. */
static struct {
  dbuf qchunk, lohi, upos, uval, region;
  void *pin_in, *pin_back, *pin_status;
  size_t pin_in_cap, pin_back_cap, pin_status_cap;
} B;

static int grow_pin(void **p, size_t *cap, size_t bytes)
{
  if (bytes <= *cap) return H5FZ_OK;
  if (*p) g_gpu.cu->cuMemFreeHost(*p);
  *p = NULL;
  *cap = 0;
  size_t want = bytes + bytes / 8 + 4096;
  CUresult r = g_gpu.cu->cuMemAllocHost(p, want);
  if (r) return h5fz_gpu_cuda_fail(r, "cuMemAllocHost (batch staging)");
  *cap = want;
  return H5FZ_OK;
}

/* Chunks per batch: H5FZ_BATCH_BYTES of chunk data (default 512 MiB), at
 * least one chunk, and few enough sub-chunks for the 32-bit tail scan. */
static uint64_t batch_chunks(uint64_t chunk_bytes, uint32_t n_sub)
{
  unsigned long long limit = (unsigned long long)h5fz_env_int("H5FZ_BATCH_BYTES", 1, 0x7fffffffffffffffLL, 1,
                                                               512ll << 20);
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
static int host_is_pinned(const void *p, size_t bytes)
{
  int type = 0;
  const uint8_t *b = p;
  if (!p || !bytes) return 0;
  if (g_gpu.cu->cuPointerGetAttribute(&type, H5FZ_CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)(uintptr_t)b) ||
      type != H5FZ_CU_MEMORYTYPE_HOST)
    return 0;
  return !g_gpu.cu->cuPointerGetAttribute(&type, H5FZ_CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                          (CUdeviceptr)(uintptr_t)(b + bytes - 1u)) &&
         type == H5FZ_CU_MEMORYTYPE_HOST;
}

/* A pinned array moves in slabs (one row of the chunk grid along the
 * slowest dim: contiguous in the array). The batches then hold whole slabs;
 * *bc becomes a multiple of the chunks per slab, or 0 when one slab is
 * larger than a batch (then the array is staged like pageable memory). */
typedef struct {
  uint64_t per_slab;   /* chunks per slab */
  uint64_t row_elems;  /* elements per index of the slowest dim */
} slab_geom;

static void slab_batches(const h5fz_array_geom *g, uint64_t *bc, slab_geom *sg)
{
  uint64_t grid0 = (g->dims[0] + g->chunk[0] - 1) / g->chunk[0];
  sg->per_slab = grid0 ? h5fz_array_chunks(g) / grid0 : 1;
  sg->row_elems = 1;
  for (uint32_t d = 1; d < g->rank; d++) sg->row_elems *= g->dims[d];
  *bc = *bc / sg->per_slab * sg->per_slab;
}

/* The array rows of the slabs holding chunks [first, first + count): the
 * element index they start at and their bytes. */
static void slab_region(const h5fz_array_geom *g, const slab_geom *sg, uint64_t first, uint64_t count, size_t esize,
                        uint64_t *elem0, size_t *bytes)
{
  uint64_t s0 = first / sg->per_slab, s1 = (first + count + sg->per_slab - 1) / sg->per_slab;
  uint64_t r0 = s0 * g->chunk[0], r1 = s1 * g->chunk[0] < g->dims[0] ? s1 * g->chunk[0] : g->dims[0];
  *elem0 = r0 * sg->row_elems;
  *bytes = (size_t)((r1 - r0) * sg->row_elems * esize);
}

static unsigned grid_for(uint64_t threads_needed)
{
  uint64_t blocks = (threads_needed + BATCH_THREADS - 1) / BATCH_THREADS;
  return (unsigned)(blocks > 65535u * 16u ? 65535u * 16u : blocks ? blocks : 1u);
}

/* Move count chunks between the device array and g_gpu.in (gather: array
 * -> chunks, padding = fill; scatter: chunks -> array). */
static int move_chunks(const chain_entry *c, int gather, const h5fz_array_geom *g, uint64_t first, uint64_t count,
                       CUdeviceptr array, uint64_t base_elem, CUdeviceptr chunks, uint64_t fill)
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
  return gather ? h5fz_gpu_launch(c->mod.gather[w], grid_for(rows * 32u), BATCH_THREADS, 0, gargs, "gather kernel")
                : h5fz_gpu_launch(c->mod.scatter[w], grid_for(rows * 32u), BATCH_THREADS, 0, sargs, "scatter kernel");
}

/* ---- encode ------------------------------------------------------------------------- */

typedef struct {
  const h5fz_spec *spec;
  const h5fz_array_geom *g;
  const uint8_t *data;     /* host array (host path) */
  uint64_t first, fill;
  size_t chunk_bytes, esize;
  uint32_t n_sub;
  uint8_t *pin_in;         /* chunk-contiguous input (host path), else NULL */
  uint64_t gather_at;      /* first chunk of the piece being gathered */
  uint64_t rows, block_rows; /* rows per chunk, per unit of host work */
  const double *eb;
  /* what came back */
  const uint32_t *entries, *ooffsets;
  const unsigned long long *offsets;
  const uint8_t *packed, *gval;
  const uint32_t *gpos;
  uint64_t n_out, count;
  void **out;
  size_t *out_bytes;
  h5fz_chunk_info *info;
} encode_job;

/* Host work over chunks is split into blocks of rows of about 256 KiB, so
 * every core has work even when a batch holds few large chunks. */
static uint64_t rows_per_block(const h5fz_array_geom *g, size_t esize)
{
  uint64_t row_bytes = g->chunk[g->rank - 1] * esize, rows = h5fz_array_chunk_rows(g);
  uint64_t r = (256u << 10) / (row_bytes ? row_bytes : 1);
  r = r ? r : 1;
  return r < rows ? r : rows;
}

static int gather_one(void *ctx, uint64_t u)
{
  encode_job *e = ctx;
  uint64_t blocks = (e->rows + e->block_rows - 1) / e->block_rows;
  uint64_t j = e->gather_at + u / blocks, r0 = u % blocks * e->block_rows;
  uint64_t r1 = r0 + e->block_rows < e->rows ? r0 + e->block_rows : e->rows;
  h5fz_array_gather_rows(e->g, e->esize, e->data, e->first + j, e->fill, e->pin_in + j * e->chunk_bytes, r0, r1);
  return H5FZ_OK;
}

/* Container of chunk j of the batch; in: its input, or NULL when it is on
 * the device only (H5FZ_NEED_RAW_INPUT then asks for it). */
static int assemble(encode_job *e, uint64_t j, const uint8_t *in)
{
  h5fz_chunk_plan p;
  h5fz_header h;
  int rc = h5fz_chunk_plan_make_eb(e->spec, e->chunk_bytes, e->eb[j], &p, &h);
  if (rc) return rc;
  uint64_t s0 = j * e->n_sub, o0 = e->ooffsets[s0];
  uint64_t o1 = j + 1 < e->count ? e->ooffsets[s0 + e->n_sub] : e->n_out;
  h.n_outliers = (uint32_t)(o1 - o0);
  h5fz_payload pl = {e->packed + e->offsets[s0], 0, e->entries + s0};
  h5fz_chunk_info_from_header(&h, &e->info[j]);
  for (uint32_t s = 0; s < e->n_sub; s++)
    if (e->entries[s0 + s] & H5FZ_SUB_RAW) e->info[j].n_raw_subchunks++;
  return h5fz_container_write(&h, &pl, e->gpos + o0, e->gval + o0 * e->esize, in, e->chunk_bytes, &e->out[j],
                              &e->out_bytes[j]);
}

static int assemble_one(void *ctx, uint64_t j)
{
  encode_job *e = ctx;
  int rc = assemble(e, j, e->pin_in ? e->pin_in + j * e->chunk_bytes : NULL);
  return rc == H5FZ_NEED_RAW_INPUT ? H5FZ_OK : rc; /* out[j] stays NULL: done below */
}

/* A chunk the chain could not shrink, from a device array: its input
 * comes back from g_gpu.in to be stored raw. */
static int store_raw_from_device(encode_job *e, uint64_t j)
{
  uint8_t *tmp = malloc(e->chunk_bytes);
  if (!tmp) return h5fz_fail(H5FZ_ERR_NOMEM, "cannot allocate a chunk");
  CUresult r = g_gpu.cu->cuMemcpyDtoHAsync(tmp, g_gpu.in.ptr + j * e->chunk_bytes, e->chunk_bytes, g_gpu.stream);
  int rc = r ? h5fz_gpu_cuda_fail(r, "copy a raw chunk from the GPU") : h5fz_gpu_sync_stream("raw chunk");
  if (!rc) rc = assemble(e, j, tmp);
  free(tmp);
  return rc;
}

static void free_outs(encode_job *e)
{
  for (uint64_t j = 0; j < e->count; j++) {
    free(e->out[j]);
    e->out[j] = NULL;
  }
}

static int encode_locked(const h5fz_spec *spec, const h5fz_array_geom *g, const void *data, int on_device,
                         h5fz_chunk_sink sink, void *ctx, h5fz_array_exec *ex, uint64_t *done, int *user_rc)
{
  int rc;
  chain_entry *c;
  size_t esize = h5fz_dtype_size(spec->dtype);
  uint64_t chunk_n = h5fz_array_chunk_elems(g), n_chunks = h5fz_array_chunks(g);
  size_t chunk_bytes = chunk_n * esize;
  h5fz_chunk_plan p0;
  h5fz_header h0;
  encode_job e = {.spec = spec, .g = g, .data = data, .chunk_bytes = chunk_bytes, .esize = esize};
  double *eb = NULL, *lohi = NULL;
  int prefetched = 0; /* the next batch's slabs are already on their way */
  TRY(h5fz_chunk_plan_make_eb(spec, chunk_bytes, spec->mode == H5FZ_MODE_REL ? 0.0 : spec->bound, &p0, &h0));
  if (p0.n_subchunks == 0) return h5fz_fail(H5FZ_ERR_ARG, "empty chunks");
  if (h5fz_plan_has_lnd(&p0)) { /* predicts across a whole chunk: one chunk per launch (h5fz_chunk_encode) */
    *user_rc = H5FZ_GPU_UNUSABLE;
    return h5fz_fail(H5FZ_ERR_UNSUPPORTED, "the GPU batches do not take lorenzo_nd chains (they run chunk by chunk)");
  }
  TRY(h5fz_gpu_get_chain(&p0, &c));
  if (ex) {
    memset(ex, 0, sizeof *ex);
    ex->on_gpu = 1;
    snprintf(ex->kernel_class, sizeof ex->kernel_class, "%s", c->plan.klass);
    ex->plan_digest = c->plan.digest;
  }
  e.n_sub = p0.n_subchunks;
  e.rows = h5fz_array_chunk_rows(g);
  e.block_rows = rows_per_block(g, esize);
  h5fz_array_fill_bits(g, spec->dtype, spec->has_fill ? spec->fill : 0.0, &e.fill);
  uint64_t bc = batch_chunks(chunk_bytes, p0.n_subchunks);
  if (bc > n_chunks) bc = n_chunks;
  slab_geom sg;
  uint64_t bc_slabs = bc, array_elems = 1;
  for (uint32_t d = 0; d < g->rank; d++) array_elems *= g->dims[d];
  slab_batches(g, &bc_slabs, &sg);
  int pinned = !on_device && bc_slabs && host_is_pinned(data, array_elems * esize);
  if (pinned) bc = bc_slabs;
  uint32_t slot = p0.subchunk_elems * p0.esize;
  uint64_t max_sub = bc * p0.n_subchunks;
  TRY(h5fz_gpu_grow_encode(&p0, bc));
  TRY(h5fz_gpu_grow(&B.qchunk, bc * 8u));
  TRY(h5fz_gpu_grow(&B.lohi, bc * 16u));
  if (pinned) {
    uint64_t e0;
    size_t region;
    slab_region(g, &sg, 0, bc, esize, &e0, &region);
    TRY(h5fz_gpu_grow(&B.region, region));
  } else if (!on_device) {
    TRY(grow_pin(&B.pin_in, &B.pin_in_cap, bc * chunk_bytes));
  }
  size_t meta = 16u + max_sub * 16u;
  TRY(grow_pin(&B.pin_back, &B.pin_back_cap, meta + bc * chunk_bytes / 4u));
  eb = malloc(bc * sizeof *eb);
  lohi = malloc(bc * 16u);
  e.out = calloc(bc, sizeof *e.out);
  e.out_bytes = calloc(bc, sizeof *e.out_bytes);
  e.info = calloc(bc, sizeof *e.info);
  if (!eb || !lohi || !e.out || !e.out_bytes || !e.info) {
    rc = h5fz_fail(H5FZ_ERR_NOMEM, "batch tables");
    goto out;
  }
  e.eb = eb;
  for (uint64_t first = 0; first < n_chunks; first += bc) {
    uint64_t count = n_chunks - first < bc ? n_chunks - first : bc;
    e.first = first;
    e.count = count;
    /* the batch's chunks, back to back in g_gpu.in */
    if (on_device) {
      TRY(move_chunks(c, 1, g, first, count, (CUdeviceptr)(uintptr_t)data, 0, g_gpu.in.ptr, e.fill));
      e.pin_in = NULL;
    } else if (pinned) { /* the slabs' rows straight from the caller's pinned array, then gathered */
      uint64_t e0;
      size_t region;
      slab_region(g, &sg, first, count, esize, &e0, &region);
      if (!prefetched)
        TRY_CU(g_gpu.cu->cuMemcpyHtoDAsync(B.region.ptr, (const uint8_t *)data + e0 * esize, region, g_gpu.stream),
               "copy slabs to the GPU");
      prefetched = 0;
      TRY(move_chunks(c, 1, g, first, count, B.region.ptr, e0, g_gpu.in.ptr, e.fill));
      e.pin_in = NULL;
    } else {
      /* in pieces, so the copy of one piece overlaps the gather of the next */
      e.pin_in = B.pin_in;
      uint64_t piece = count / 8u ? count / 8u : 1u;
      for (e.gather_at = 0; e.gather_at < count; e.gather_at += piece) {
        uint64_t k = count - e.gather_at < piece ? count - e.gather_at : piece;
        TRY(h5fz_parallel_for(k * ((e.rows + e.block_rows - 1) / e.block_rows), gather_one, &e));
        TRY_CU(g_gpu.cu->cuMemcpyHtoDAsync(g_gpu.in.ptr + e.gather_at * chunk_bytes, (uint8_t *)B.pin_in + e.gather_at * chunk_bytes,
                                           k * chunk_bytes, g_gpu.stream),
               "copy a batch to the GPU");
      }
    }
    CUdeviceptr q = 0;
    if (spec->mode == H5FZ_MODE_REL) {
      int w = spec->dtype == H5FZ_DTYPE_F64, has_fill = spec->has_fill;
      unsigned long long cn = chunk_n;
      float f32 = (float)spec->fill;
      double f64 = spec->fill;
      void *args[] = {&g_gpu.in.ptr, &cn, &has_fill, w ? (void *)&f64 : (void *)&f32, &B.lohi.ptr};
      TRY(h5fz_gpu_launch(c->mod.range[w], (unsigned)count, 256u, 0, args, "range kernel"));
      TRY_CU(g_gpu.cu->cuMemcpyDtoHAsync(lohi, B.lohi.ptr, count * 16u, g_gpu.stream), "copy ranges");
      TRY(h5fz_gpu_sync_stream("ranges"));
      for (uint64_t j = 0; j < count; j++) eb[j] = h5fz_rel_abs_bound(spec->bound, lohi[2 * j], lohi[2 * j + 1], spec->dtype);
      TRY_CU(g_gpu.cu->cuMemcpyHtoDAsync(B.qchunk.ptr, eb, count * 8u, g_gpu.stream), "copy bounds");
      TRY(h5fz_gpu_sync_stream("bounds")); /* eb is pageable host memory reused next batch */
      q = B.qchunk.ptr;
    } else {
      for (uint64_t j = 0; j < count; j++) eb[j] = h0.abs_bound;
    }
    TRY(h5fz_gpu_launch_encode(c, &p0, (uint32_t)count, q));
    uint64_t n_sub_all = count * p0.n_subchunks;
    uint8_t *back = B.pin_back;
    unsigned long long *totals = (unsigned long long *)back;
    uint32_t *entries = (uint32_t *)(back + 16);
    unsigned long long *offsets = (unsigned long long *)(back + 16 + n_sub_all * 4u);
    uint32_t *ooffsets = (uint32_t *)(back + 16 + n_sub_all * 12u);
    TRY_CU(g_gpu.cu->cuMemcpyDtoHAsync(totals, g_gpu.totals.ptr, 16u, g_gpu.stream), "copy sizes");
    TRY_CU(g_gpu.cu->cuMemcpyDtoHAsync(entries, g_gpu.entries.ptr, n_sub_all * 4u, g_gpu.stream), "copy sizes");
    TRY_CU(g_gpu.cu->cuMemcpyDtoHAsync(offsets, g_gpu.offsets.ptr, n_sub_all * 8u, g_gpu.stream), "copy offsets");
    TRY_CU(g_gpu.cu->cuMemcpyDtoHAsync(ooffsets, g_gpu.ooffsets.ptr, n_sub_all * 4u, g_gpu.stream), "copy offsets");
    TRY(h5fz_gpu_sync_stream("batch encode"));
    uint64_t payload = totals[0], n_out = totals[1];
    if (payload > n_sub_all * slot || n_out > count * chunk_n) {
      rc = h5fz_fail(H5FZ_ERR_DEVICE, "GPU batch encode returned impossible sizes");
      goto out;
    }
    size_t head = 16u + n_sub_all * 16u, need = head + payload + 8u + n_out * (4u + esize);
    if (need > B.pin_back_cap) {
      /* grow keeping the tables: they are small, copy them aside */
      size_t tbytes = head;
      uint8_t *keep = malloc(tbytes);
      if (!keep) {
        rc = h5fz_fail(H5FZ_ERR_NOMEM, "batch tables");
        goto out;
      }
      memcpy(keep, B.pin_back, tbytes);
      rc = grow_pin(&B.pin_back, &B.pin_back_cap, need);
      if (!rc) memcpy(B.pin_back, keep, tbytes);
      free(keep);
      if (rc) goto out;
      back = B.pin_back;
      totals = (unsigned long long *)back;
      entries = (uint32_t *)(back + 16);
      offsets = (unsigned long long *)(back + 16 + n_sub_all * 4u);
      ooffsets = (uint32_t *)(back + 16 + n_sub_all * 12u);
    }
    uint8_t *packed = back + head;
    uint32_t *gpos = (uint32_t *)(packed + ((payload + 7u) & ~(uint64_t)7u));
    uint8_t *gval = (uint8_t *)(gpos + n_out);
    TRY_CU(g_gpu.cu->cuMemcpyDtoHAsync(packed, g_gpu.packed.ptr, payload, g_gpu.stream), "copy payload");
    if (n_out) {
      TRY_CU(g_gpu.cu->cuMemcpyDtoHAsync(gpos, g_gpu.gpos.ptr, n_out * 4u, g_gpu.stream), "copy outliers");
      TRY_CU(g_gpu.cu->cuMemcpyDtoHAsync(gval, g_gpu.gval.ptr, n_out * esize, g_gpu.stream), "copy outliers");
    }
    TRY(h5fz_gpu_sync_stream("batch copies"));
    if (pinned && first + count < n_chunks) {
      /* the region is free again: the next batch's slabs cross PCIe while
       * this batch's containers are written on the host */
      uint64_t e0, next = first + count;
      size_t region;
      slab_region(g, &sg, next, n_chunks - next < bc ? n_chunks - next : bc, esize, &e0, &region);
      TRY_CU(g_gpu.cu->cuMemcpyHtoDAsync(B.region.ptr, (const uint8_t *)data + e0 * esize, region, g_gpu.stream),
             "copy slabs to the GPU");
      prefetched = 1;
    }
    e.entries = entries;
    e.offsets = offsets;
    e.ooffsets = ooffsets;
    e.packed = packed;
    e.gpos = gpos;
    e.gval = gval;
    e.n_out = n_out;
    TRY(h5fz_parallel_for(count, assemble_one, &e));
    for (uint64_t j = 0; j < count; j++)
      if (!e.out[j]) TRY(store_raw_from_device(&e, j));
    for (uint64_t j = 0; j < count; j++) {
      if (e.out_bytes[j] == H5FZ_HEADER_BYTES + chunk_bytes + H5FZ_CHECKSUM_BYTES) {
        e.info[j].stored_raw = 1; /* a container that large is the raw one */
        e.info[j].n_outliers = 0;
        e.info[j].n_raw_subchunks = 0;
        e.info[j].abs_bound = eb[j];
      }
      h5fz_encoded_chunk ch = {first + j, e.out[j], e.out_bytes[j], e.info[j]};
      if ((rc = sink(ctx, &ch))) {
        *user_rc = 1;
        goto out;
      }
      *done = first + j + 1;
    }
    free_outs(&e);
    g_gpu.stats.chunks_encoded += count;
  }
out:
  /* never return while a copy still reads the caller's array */
  if (prefetched) g_gpu.cu->cuStreamSynchronize(g_gpu.stream);
  if (e.out) free_outs(&e);
  free(e.out);
  free(e.out_bytes);
  free(e.info);
  free(eb);
  free(lohi);
  return rc;
}

int h5fz_gpu_array_encode(const h5fz_spec *spec, const h5fz_array_geom *g, const void *data, int on_device,
                          h5fz_chunk_sink sink, void *ctx, h5fz_array_exec *ex, uint64_t *done, int *user_rc)
{
  *done = 0;
  *user_rc = 0;
  pthread_mutex_lock(&g_gpu.lock);
  int rc = h5fz_gpu_ensure_init();
  if (rc) *user_rc = H5FZ_GPU_UNUSABLE;
  else rc = encode_locked(spec, g, data, on_device, sink, ctx, ex, done, user_rc);
  pthread_mutex_unlock(&g_gpu.lock);
  return rc;
}

/* ---- decode ------------------------------------------------------------------------- */

typedef enum { CHUNK_BATCH, CHUNK_VALUES, CHUNK_FILL } chunk_kind;

typedef struct {
  const h5fz_array_geom *g;
  h5fz_dtype dtype;
  size_t chunk_bytes, esize;
  uint64_t first, count;
  void **in;               /* containers from the source */
  size_t *in_bytes;
  /* per chunk, from parsing */
  chunk_kind *kind;
  h5fz_header *hdr;
  uint8_t **values;        /* CHUNK_VALUES: decoded on the host (malloc'd) */
  uint64_t *table_at, *payload_at, *payload_len;
  uint32_t **pos;          /* outliers (chunk-local), malloc'd */
  uint8_t **vals;
  const h5fz_chunk_plan *p0;
  int rc_chunk;
  uint8_t *host_out;       /* host path: chunk-contiguous decoded batch */
  uint64_t rows, block_rows;
  uint8_t *data;           /* host array */
  const h5fz_spec *want;   /* the dataset: chunk shape and bound each container must keep */
} decode_job;

/* Parse chunk j: batchable (same chain and geometry as the batch plan), or
 * decoded here (stored raw, another chain), or missing (fill). */
static int parse_one(void *ctx, uint64_t j)
{
  decode_job *d = ctx;
  const uint8_t *in = d->in[j];
  size_t len = d->in_bytes[j];
  uint64_t index = d->first + j;
  if (!len) {
    d->kind[j] = CHUNK_FILL;
    return H5FZ_OK;
  }
  h5fz_header h;
  int rc = h5fz_container_open(in, len, &h);
  if (!rc) rc = h5fz_header_check_spec(&h, d->want); /* another shape: wrong order; a looser bound */
  const h5fz_chunk_plan *p = d->p0;
  int same = !rc && !(h.flags & H5FZ_FLAG_STORED_RAW) && h.input_bytes == d->chunk_bytes && h.dtype == p->dtype &&
             h.subchunk_elems == p->subchunk_elems && h.n_ops == p->n_ops && !memcmp(h.ops, p->ops, p->n_ops) &&
             (h.rank >= 2 ? h.dims[h.rank - 1] : 0u) == p->row && h.mode == (uint8_t)p->quant.mode &&
             h.n_elements * d->esize == h.input_bytes;
  if (!rc && same) {
    /* the size table and side section, checked as h5fz_chunk_decode checks them */
    size_t body_len = len - H5FZ_HEADER_BYTES - H5FZ_CHECKSUM_BYTES, table = 4u * (size_t)h.n_subchunks;
    const uint8_t *body = in + H5FZ_HEADER_BYTES;
    size_t payload_end = 0;
    rc = h5fz_size_table_check(&h, body, body_len, NULL, &payload_end);
    if (!rc) {
      size_t off = payload_end - table;
      size_t used = 0;
      d->pos[j] = malloc(((size_t)h.n_outliers + 1u) * 4u);
      d->vals[j] = malloc(((size_t)h.n_outliers + 1u) * d->esize);
      if (!rc && (!d->pos[j] || !d->vals[j])) rc = h5fz_fail(H5FZ_ERR_NOMEM, "outlier lists");
      if (!rc && h.n_outliers)
        rc = h5fz_side_decode(body + table + off, body_len - table - off, h.n_outliers, (uint32_t)d->esize,
                              h.n_elements, d->pos[j], d->vals[j], &used);
      if (!rc && table + off + used != body_len)
        rc = h5fz_fail(H5FZ_ERR_CORRUPT, "chunk body has %zu bytes, its parts add up to %zu", body_len,
                       (size_t)(table + off + used));
      d->table_at[j] = H5FZ_HEADER_BYTES;
      d->payload_at[j] = H5FZ_HEADER_BYTES + table;
      d->payload_len[j] = off;
    }
    d->hdr[j] = h;
    d->kind[j] = CHUNK_BATCH;
  } else if (!rc) {
    size_t out_bytes = 0;
    void *out = NULL;
    /* the GPU is ours already; a container of another type or size is refused */
    rc = h5fz_cpu_decode_container(in, len, d->dtype, d->chunk_bytes, &out, &out_bytes);
    d->values[j] = out;
    d->kind[j] = CHUNK_VALUES;
  }
  if (rc) {
    char why[400];
    snprintf(why, sizeof why, "%s", h5fz_last_error());
    return h5fz_fail(rc, "chunk %llu: %s", (unsigned long long)index, why);
  }
  return H5FZ_OK;
}

static int scatter_one(void *ctx, uint64_t u)
{
  decode_job *d = ctx;
  uint64_t blocks = (d->rows + d->block_rows - 1) / d->block_rows;
  uint64_t j = u / blocks, r0 = u % blocks * d->block_rows;
  uint64_t r1 = r0 + d->block_rows < d->rows ? r0 + d->block_rows : d->rows;
  h5fz_array_scatter_rows(d->g, d->esize, d->host_out + j * d->chunk_bytes, d->first + j, d->data, r0, r1);
  return H5FZ_OK;
}

static void free_decode_tables(decode_job *d, uint64_t n)
{
  for (uint64_t j = 0; j < n; j++) {
    if (d->in) free(d->in[j]);
    if (d->values) free(d->values[j]);
    if (d->pos) free(d->pos[j]);
    if (d->vals) free(d->vals[j]);
    if (d->in) d->in[j] = NULL;
    if (d->values) d->values[j] = NULL;
    if (d->pos) d->pos[j] = NULL;
    if (d->vals) d->vals[j] = NULL;
  }
}

/* A batch decode's status word: 0, or 1 + the first sub-chunk (of the
 * batch's chunks, back to back) whose RZE stream was inconsistent. */
static int batch_status(int status, uint64_t first, uint32_t n_sub)
{
  if (!status) return H5FZ_OK;
  uint64_t s = (uint64_t)status - 1u;
  return h5fz_fail(H5FZ_ERR_CORRUPT, "chunk %llu: sub-chunk %llu: RZE stream is inconsistent",
                   (unsigned long long)(first + s / n_sub), (unsigned long long)(s % n_sub));
}

typedef struct {
  uint64_t first, count; /* count 0: none */
} pending_batch;

/* Wait for a pinned batch's copy back (queued, not waited for) and check
 * its status. */
static int finish_pending(pending_batch *pb, uint64_t *done, uint32_t n_sub)
{
  if (!pb->count) return H5FZ_OK;
  int rc = h5fz_gpu_sync_stream("batch decode");
  if (!rc) rc = batch_status(*(volatile int *)B.pin_status, pb->first, n_sub); /* read after the wait */
  g_gpu.stats.chunks_decoded += pb->count;
  if (!rc) *done = pb->first + pb->count;
  pb->count = 0;
  return rc;
}

static int decode_locked(const h5fz_array_geom *g, const h5fz_spec *want, double fill, h5fz_chunk_source source,
                         void *ctx, void *data, int on_device, h5fz_array_exec *ex, uint64_t *done, int *user_rc)
{
  int rc;
  h5fz_dtype dtype = want->dtype;
  pending_batch pending = {0, 0};
  uint32_t n_sub_pending = 0;
  chain_entry *c = NULL;
  size_t esize = h5fz_dtype_size(dtype);
  uint64_t chunk_n = h5fz_array_chunk_elems(g), n_chunks = h5fz_array_chunks(g);
  size_t chunk_bytes = chunk_n * esize;
  decode_job d = {.g = g, .dtype = dtype, .chunk_bytes = chunk_bytes, .esize = esize, .data = data,
                  .rows = h5fz_array_chunk_rows(g), .block_rows = rows_per_block(g, esize), .want = want};
  h5fz_chunk_plan p0;
  int have_plan = 0;
  uint64_t fill_bits;
  h5fz_array_fill_bits(g, dtype, fill, &fill_bits);
  uint64_t bc = batch_chunks(chunk_bytes, (uint32_t)((chunk_bytes + 511u) / 512u));
  if (bc > n_chunks) bc = n_chunks;
  slab_geom sg;
  uint64_t bc_slabs = bc, array_elems = 1;
  for (uint32_t dd = 0; dd < g->rank; dd++) array_elems *= g->dims[dd];
  slab_batches(g, &bc_slabs, &sg);
  int pinned = !on_device && bc_slabs && host_is_pinned(data, array_elems * esize);
  if (pinned) {
    uint64_t e0;
    size_t region;
    bc = bc_slabs;
    slab_region(g, &sg, 0, bc, esize, &e0, &region);
    if ((rc = h5fz_gpu_grow(&B.region, region))) return rc;
  }
  double *eb = malloc((bc + 1) * sizeof *eb);
  d.in = calloc(bc + 1, sizeof *d.in);
  d.in_bytes = calloc(bc + 1, sizeof *d.in_bytes);
  d.kind = calloc(bc + 1, sizeof *d.kind);
  d.hdr = calloc(bc + 1, sizeof *d.hdr);
  d.values = calloc(bc + 1, sizeof *d.values);
  d.table_at = calloc(bc + 1, 8u);
  d.payload_at = calloc(bc + 1, 8u);
  d.payload_len = calloc(bc + 1, 8u);
  d.pos = calloc(bc + 1, sizeof *d.pos);
  d.vals = calloc(bc + 1, sizeof *d.vals);
  if (!eb || !d.in || !d.in_bytes || !d.kind || !d.hdr || !d.values || !d.table_at || !d.payload_at ||
      !d.payload_len || !d.pos || !d.vals) {
    rc = h5fz_fail(H5FZ_ERR_NOMEM, "batch tables");
    goto out;
  }
  if (ex) {
    memset(ex, 0, sizeof *ex);
    ex->on_gpu = 1;
  }
  /* A page-locked array's batch is copied back while the host reads and
   * checks the next batch's chunks; it is waited for (and its status
   * checked) before the next upload reuses the staging memory. */
  TRY(grow_pin(&B.pin_status, &B.pin_status_cap, 64u));
  volatile int *status_pin = (volatile int *)B.pin_status;
  for (uint64_t first = 0; first < n_chunks; first += bc) {
    uint64_t count = n_chunks - first < bc ? n_chunks - first : bc;
    d.first = first;
    d.count = count;
    for (uint64_t j = 0; j < count; j++) {
      if ((rc = source(ctx, first + j, &d.in[j], &d.in_bytes[j]))) {
        *user_rc = 1;
        goto out;
      }
    }
    /* the batch's chain: that of its first compressed chunk */
    if (!have_plan) {
      for (uint64_t j = 0; j < count && !have_plan; j++) {
        h5fz_header h;
        if (d.in_bytes[j] && !h5fz_container_open(d.in[j], d.in_bytes[j], &h) && !(h.flags & H5FZ_FLAG_STORED_RAW) &&
            h.input_bytes == chunk_bytes && h.dtype == (uint8_t)dtype && h.n_subchunks) {
          h5fz_chunk_plan_from_header(&h, &p0);
          have_plan = 1;
        }
      }
      h5fz_clear_error();
      if (have_plan && h5fz_plan_has_lnd(&p0)) {
        *user_rc = H5FZ_GPU_UNUSABLE;
        rc = h5fz_fail(H5FZ_ERR_UNSUPPORTED, "the GPU batches do not take lorenzo_nd chains (they run chunk by chunk)");
        goto out;
      }
      if (have_plan) {
        TRY(h5fz_gpu_get_chain(&p0, &c));
        if (ex) {
          snprintf(ex->kernel_class, sizeof ex->kernel_class, "%s", c->plan.klass);
          ex->plan_digest = c->plan.digest;
        }
      }
    }
    if (!have_plan) { /* nothing compressed yet: a plan that batches nothing */
      memset(&p0, 0, sizeof p0);
      p0.dtype = H5FZ_DTYPE_UNKNOWN;
    }
    d.p0 = &p0;
    TRY(h5fz_parallel_for(count, parse_one, &d));
    if (!c) { /* no compressed chunk so far: every chunk is fill or host-decoded */
      uint8_t *tmp = malloc(chunk_bytes ? chunk_bytes : 1);
      if (!tmp) {
        rc = h5fz_fail(H5FZ_ERR_NOMEM, "chunk buffer");
        goto out;
      }
      for (uint64_t j = 0; j < count; j++) {
        const uint8_t *src = d.values[j];
        if (d.kind[j] == CHUNK_FILL) {
          for (uint64_t i = 0; i < chunk_n; i++) memcpy(tmp + i * esize, &fill_bits, esize);
          src = tmp;
        }
        if (on_device) {
          /* a device array needs the GPU even for this: no chain, so no kernels */
          free(tmp);
          rc = h5fz_fail(H5FZ_ERR_DEVICE, "no compressed chunk to plan the GPU decode from");
          goto out;
        }
        h5fz_array_scatter_chunk(g, esize, src, first + j, data);
      }
      free(tmp);
      free_decode_tables(&d, count);
      *done = first + count;
      continue;
    }
    TRY(finish_pending(&pending, done, n_sub_pending));
    /* upload: payloads back to back, their sub-chunk offsets and entries */
    uint32_t n_sub = p0.n_subchunks, slot = p0.subchunk_elems * p0.esize;
    uint64_t n_sub_all = count * n_sub, payload = 0, n_out = 0;
    for (uint64_t j = 0; j < count; j++)
      if (d.kind[j] == CHUNK_BATCH) {
        payload += d.payload_len[j];
        n_out += d.hdr[j].n_outliers;
      }
    size_t head = n_sub_all * 12u, need = head + payload + slot + 8u + n_out * (8u + esize);
    TRY(grow_pin(&B.pin_back, &B.pin_back_cap, need > count * chunk_bytes ? need : count * chunk_bytes));
    uint8_t *up = B.pin_back;
    unsigned long long *offsets = (unsigned long long *)up;
    uint32_t *entries = (uint32_t *)(up + n_sub_all * 8u);
    uint8_t *packed = up + head;
    uint64_t at = 0;
    for (uint64_t j = 0; j < count; j++) {
      if (d.kind[j] == CHUNK_BATCH) {
        const uint8_t *in = d.in[j];
        uint64_t off = 0;
        for (uint32_t s = 0; s < n_sub; s++) {
          uint32_t e = h5fz_get_u32(in + d.table_at[j] + 4u * s);
          entries[j * n_sub + s] = e;
          offsets[j * n_sub + s] = at + off;
          off += e & H5FZ_SUB_SIZE_MASK;
        }
        memcpy(packed + at, in + d.payload_at[j], d.payload_len[j]);
        at += d.payload_len[j];
        eb[j] = d.hdr[j].abs_bound;
      } else {
        /* decoded as raw garbage, then overwritten below: give the kernel
         * L readable bytes per sub-chunk (the zero pad at the end) */
        for (uint32_t s = 0; s < n_sub; s++) {
          uint64_t m = chunk_n - (uint64_t)s * p0.subchunk_elems;
          if (m > p0.subchunk_elems) m = p0.subchunk_elems;
          entries[j * n_sub + s] = (h5fz_pad64((uint32_t)m) * p0.esize) | H5FZ_SUB_RAW;
          offsets[j * n_sub + s] = payload;
        }
        eb[j] = 0.0;
      }
    }
    memset(packed + payload, 0, slot);
    unsigned long long *upos = (unsigned long long *)(packed + ((payload + slot + 7u) & ~(uint64_t)7u));
    uint8_t *uval = (uint8_t *)(upos + n_out);
    uint64_t k = 0;
    for (uint64_t j = 0; j < count; j++)
      if (d.kind[j] == CHUNK_BATCH)
        for (uint32_t i = 0; i < d.hdr[j].n_outliers; i++, k++) {
          upos[k] = j * chunk_n + d.pos[j][i];
          memcpy(uval + k * esize, d.vals[j] + (size_t)i * esize, esize);
        }
    TRY(h5fz_gpu_grow_decode(&p0, count, payload + slot));
    TRY(h5fz_gpu_grow(&B.qchunk, count * 8u));
    TRY(h5fz_gpu_grow(&B.upos, n_out * 8u + 8u));
    TRY(h5fz_gpu_grow(&B.uval, n_out * esize + 8u));
    CUstream st = g_gpu.stream;
    TRY_CU(g_gpu.cu->cuMemcpyHtoDAsync(g_gpu.offsets.ptr, offsets, n_sub_all * 8u, st), "copy to GPU");
    TRY_CU(g_gpu.cu->cuMemcpyHtoDAsync(g_gpu.entries.ptr, entries, n_sub_all * 4u, st), "copy to GPU");
    TRY_CU(g_gpu.cu->cuMemcpyHtoDAsync(g_gpu.packed.ptr, packed, payload + slot, st), "copy to GPU");
    TRY_CU(g_gpu.cu->cuMemcpyHtoDAsync(B.qchunk.ptr, eb, count * 8u, st), "copy to GPU");
    if (n_out) {
      TRY_CU(g_gpu.cu->cuMemcpyHtoDAsync(B.upos.ptr, upos, n_out * 8u, st), "copy to GPU");
      TRY_CU(g_gpu.cu->cuMemcpyHtoDAsync(B.uval.ptr, uval, n_out * esize, st), "copy to GPU");
    }
    TRY_CU(g_gpu.cu->cuMemsetD8Async(g_gpu.status.ptr, 0, 4u, st), "clear status");
    TRY(h5fz_gpu_launch_decode(c, &p0, (uint32_t)count, B.qchunk.ptr, g_gpu.in.ptr));
    int w = dtype == H5FZ_DTYPE_F64;
    if (n_out) {
      unsigned long long n_ull = n_out;
      void *args[] = {&g_gpu.in.ptr, &B.upos.ptr, &B.uval.ptr, &n_ull};
      TRY(h5fz_gpu_launch(c->mod.patch[w], grid_for(n_out), BATCH_THREADS, 0, args, "outlier patch kernel"));
    }
    for (uint64_t j = 0; j < count; j++) {
      CUdeviceptr dst = g_gpu.in.ptr + j * chunk_bytes;
      if (d.kind[j] == CHUNK_VALUES) {
        TRY_CU(g_gpu.cu->cuMemcpyHtoDAsync(dst, d.values[j], chunk_bytes, st), "copy a chunk to the GPU");
      } else if (d.kind[j] == CHUNK_FILL) {
        unsigned long long n_ull = chunk_n;
        uint32_t f32 = (uint32_t)fill_bits;
        void *args[] = {&dst, &n_ull, w ? (void *)&fill_bits : (void *)&f32};
        TRY(h5fz_gpu_launch(c->mod.fill[w], grid_for(chunk_n), BATCH_THREADS, 0, args, "fill kernel"));
      }
    }
    *status_pin = 0;
    TRY_CU(g_gpu.cu->cuMemcpyDtoHAsync((void *)status_pin, g_gpu.status.ptr, 4u, st), "copy status");
    if (on_device) {
      TRY(move_chunks(c, 0, g, first, count, (CUdeviceptr)(uintptr_t)data, 0, g_gpu.in.ptr, 0));
      TRY(h5fz_gpu_sync_stream("batch decode"));
    } else if (pinned) { /* whole slabs: the scatter fills every row of the region */
      uint64_t e0;
      size_t region;
      slab_region(g, &sg, first, count, esize, &e0, &region);
      TRY(move_chunks(c, 0, g, first, count, B.region.ptr, e0, g_gpu.in.ptr, 0));
      TRY_CU(g_gpu.cu->cuMemcpyDtoHAsync((uint8_t *)data + e0 * esize, B.region.ptr, region, st), "copy values");
      pending.first = first;
      pending.count = count;
      n_sub_pending = n_sub;
      free_decode_tables(&d, count);
      continue; /* finished by finish_pending */
    } else {
      TRY_CU(g_gpu.cu->cuMemcpyDtoHAsync(B.pin_back, g_gpu.in.ptr, count * chunk_bytes, st), "copy values");
      TRY(h5fz_gpu_sync_stream("batch decode"));
    }
    TRY(batch_status(*status_pin, first, n_sub));
    if (!on_device && !pinned) {
      d.host_out = B.pin_back;
      TRY(h5fz_parallel_for(count * ((d.rows + d.block_rows - 1) / d.block_rows), scatter_one, &d));
    }
    g_gpu.stats.chunks_decoded += count;
    free_decode_tables(&d, count);
    *done = first + count;
  }
  TRY(finish_pending(&pending, done, n_sub_pending));
out:
  if (pending.count) { /* an error after a pinned batch's copy was queued: never return with it in flight */
    g_gpu.cu->cuStreamSynchronize(g_gpu.stream);
    g_gpu.stats.chunks_decoded += pending.count;
  }
  if (d.in) free_decode_tables(&d, bc);
  free(eb);
  free(d.in);
  free(d.in_bytes);
  free(d.kind);
  free(d.hdr);
  free(d.values);
  free(d.table_at);
  free(d.payload_at);
  free(d.payload_len);
  free(d.pos);
  free(d.vals);
  return rc;
}

int h5fz_gpu_array_decode(const h5fz_array_geom *g, const h5fz_spec *want, double fill, h5fz_chunk_source source,
                          void *ctx, void *data, int on_device, h5fz_array_exec *ex, uint64_t *done, int *user_rc)
{
  *done = 0;
  *user_rc = 0;
  pthread_mutex_lock(&g_gpu.lock);
  int rc = h5fz_gpu_ensure_init();
  if (rc) *user_rc = H5FZ_GPU_UNUSABLE;
  else rc = decode_locked(g, want, fill, source, ctx, data, on_device, ex, done, user_rc);
  pthread_mutex_unlock(&g_gpu.lock);
  return rc;
}
