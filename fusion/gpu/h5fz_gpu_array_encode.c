/*
 * h5fz_gpu_array_encode.c - the GPU batches' encode: many equal chunks in
 * one launch of the fused kernels, gathered from the array on the host
 * (into pinned memory, on every core) or, for device and page-locked
 * arrays, by a kernel (h5fz_gpu_batch.h), so a device array is never
 * copied to the host; the containers are written on the host, on every
 * core, byte for byte as the per-chunk path writes them.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h5fz_array_geom.h"
#include "h5fz_chunk_check.h"
#include "h5fz_chunk_plan.h"
#include "h5fz_cpu_exec.h"
#include "h5fz_gpu_array_encode.h"
#include "h5fz_gpu_batch_util.h"
#include "h5fz_gpu_context.h"
#include "h5fz_gpu_launch.h"
#include "h5fz_modes.h"
#include "h5fz_parallel.h"
#include "h5fz_rel_bound.h"
#include "h5fz_side.h"

typedef struct {
  h5fz_gpu_context *gc;
  const h5fz_spec *spec;
  const h5fz_array_geom *g;
  const uint8_t *data; /* host array (host path) */
  uint64_t first, fill;
  size_t chunk_bytes, esize;
  uint32_t n_sub;
  uint8_t *pin_in;           /* chunk-contiguous input (host path), else NULL */
  uint64_t gather_at;        /* first chunk of the piece being gathered */
  uint64_t rows, block_rows; /* rows per chunk, per unit of host work */
  const double *eb;
  /* what came back */
  const uint32_t *entries, *ooffsets;
  const unsigned long long *offsets;
  const uint8_t *packed, *gval;
  const uint32_t *gpos;
  uint64_t n_out, count;
  const uint64_t *lnd_costs; /* lorenzo_nd: the cost sums, 3 H5FZ_LND_COST_PARTS a chunk, else NULL */
  void **out;
  size_t *out_bytes;
  h5fz_chunk_info *info;
} encode_job;

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
  if (e->lnd_costs) /* the predictor the chunk's encode chose, as every block of it did */
    h.predictor = (uint8_t)h5fz_lnd_choose(e->lnd_costs + H5FZ_LND_NCOST * H5FZ_LND_COST_PARTS * j, H5FZ_LND_COST_PARTS, p.lnd);
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
 * comes back from gc->in to be stored raw. */
static int store_raw_from_device(encode_job *e, uint64_t j)
{
  h5fz_gpu_context *gc = e->gc;
  uint8_t *tmp = malloc(e->chunk_bytes);
  if (!tmp) return h5fz_fail(H5FZ_ERR_NOMEM, "cannot allocate a chunk");
  CUresult r = gc->cu->cuMemcpyDtoHAsync(tmp, gc->in.ptr + j * e->chunk_bytes, e->chunk_bytes, gc->stream);
  int rc = r ? h5fz_gpu_cuda_fail(r, "copy a raw chunk from the GPU") : h5fz_gpu_sync_stream(gc, "raw chunk");
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

/* One array's encode on the GPU: what the batches share. */
typedef struct {
  encode_job e;          /* the host work of the batch in hand */
  const void *data;      /* the caller's array */
  int on_device, pinned; /* device memory; page-locked host memory moved in slabs */
  int prefetched;        /* the next batch's slabs are already on their way */
  chain_entry *c;
  h5fz_chunk_plan p0; /* one chunk's plan (REL: bound 0, set per chunk) */
  h5fz_header h0;
  uint64_t chunk_n, n_chunks, bc; /* values per chunk, chunks, chunks per batch */
  h5fz_slab_geom sg;
  double *eb, *lohi; /* per chunk of the batch: bound, value range */
  uint64_t *costs;   /* lorenzo_nd: per chunk of the batch, the cost sums */
} encode_run;

/* The chain, the batch size and every buffer, before the first batch. */
static int encode_prepare(encode_run *r, h5fz_array_exec *ex)
{
  h5fz_gpu_context *gc = r->e.gc;
  int rc;
  encode_job *e = &r->e;
  const h5fz_spec *spec = e->spec;
  const h5fz_array_geom *g = e->g;
  size_t esize = e->esize, chunk_bytes = e->chunk_bytes;
  TRY(h5fz_chunk_plan_make_eb(spec, chunk_bytes, h5fz_mode_from_chunk_range((unsigned)spec->mode) ? 0.0 : spec->bound,
                              &r->p0, &r->h0));
  if (r->p0.n_subchunks == 0) return h5fz_fail(H5FZ_ERR_ARG, "empty chunks");
  TRY(h5fz_gpu_get_chain(gc, &r->p0, &r->c));
  if (ex) {
    memset(ex, 0, sizeof *ex);
    ex->on_gpu = 1;
    snprintf(ex->kernel_class, sizeof ex->kernel_class, "%s", r->c->plan.klass);
    ex->plan_digest = r->c->plan.digest;
  }
  e->n_sub = r->p0.n_subchunks;
  e->rows = h5fz_array_chunk_rows(g);
  e->block_rows = h5fz_batch_rows_per_block(g, esize);
  h5fz_array_fill_bits(g, spec->dtype, spec->has_fill ? spec->fill : 0.0, &e->fill);
  uint64_t bc = h5fz_batch_chunk_count(gc, chunk_bytes, r->p0.n_subchunks);
  if (bc > r->n_chunks) bc = r->n_chunks;
  uint64_t bc_slabs = bc, array_elems = 1;
  for (uint32_t d = 0; d < g->rank; d++) array_elems *= g->dims[d];
  h5fz_batch_slabs(g, &bc_slabs, &r->sg);
  r->pinned = !r->on_device && bc_slabs && h5fz_batch_host_is_pinned(gc, r->data, array_elems * esize);
  if (r->pinned) bc = bc_slabs;
  r->bc = bc;
  uint64_t max_sub = bc * r->p0.n_subchunks;
  TRY(h5fz_gpu_grow_encode(gc, &r->p0, bc));
  TRY(h5fz_gpu_grow(gc, &gc->batch.qchunk, bc * 8u));
  TRY(h5fz_gpu_grow(gc, &gc->batch.lohi, bc * 16u));
  if (h5fz_plan_has_lnd(&r->p0)) { /* lorenzo_nd: each chunk's cost sums, then its predictor in its header */
    TRY(h5fz_gpu_grow(gc, &gc->lnd, h5fz_gpu_lnd_bytes(&r->p0, (uint32_t)bc)));
    r->costs = malloc(bc * H5FZ_LND_NCOST * H5FZ_LND_COST_PARTS * sizeof *r->costs);
    if (!r->costs) return h5fz_fail(H5FZ_ERR_NOMEM, "batch tables");
  }
  if (r->pinned) {
    uint64_t e0;
    size_t region;
    h5fz_batch_slab_region(g, &r->sg, 0, bc, esize, &e0, &region);
    TRY(h5fz_gpu_grow(gc, &gc->batch.region, region));
  } else if (!r->on_device) {
    TRY(h5fz_batch_grow_pin(gc, &gc->batch.pin_in, &gc->batch.pin_in_cap, bc * chunk_bytes));
  }
  size_t meta = 16u + max_sub * 16u;
  TRY(h5fz_batch_grow_pin(gc, &gc->batch.pin_back, &gc->batch.pin_back_cap, meta + bc * chunk_bytes / 4u));
  r->eb = malloc(bc * sizeof *r->eb);
  r->lohi = malloc(bc * 16u);
  e->out = calloc(bc, sizeof *e->out);
  e->out_bytes = calloc(bc, sizeof *e->out_bytes);
  e->info = calloc(bc, sizeof *e->info);
  if (!r->eb || !r->lohi || !e->out || !e->out_bytes || !e->info) {
    rc = h5fz_fail(H5FZ_ERR_NOMEM, "batch tables");
    goto out;
  }
  e->eb = r->eb;
out:
  return rc;
}

/* The batch's chunks [first, first + count), back to back in gc->in. */
static int encode_stage_in(encode_run *r, uint64_t first, uint64_t count)
{
  h5fz_gpu_context *gc = r->e.gc;
  int rc = H5FZ_OK;
  encode_job *e = &r->e;
  const h5fz_array_geom *g = e->g;
  size_t esize = e->esize, chunk_bytes = e->chunk_bytes;
  if (r->on_device) {
    TRY(h5fz_batch_move_chunks(gc, r->c, 1, g, first, count, (CUdeviceptr)(uintptr_t)r->data, 0, gc->in.ptr, e->fill));
    e->pin_in = NULL;
  } else if (r->pinned) { /* the slabs' rows straight from the caller's pinned array, then gathered */
    uint64_t e0;
    size_t region;
    h5fz_batch_slab_region(g, &r->sg, first, count, esize, &e0, &region);
    if (!r->prefetched)
      TRY_CU(gc->cu->cuMemcpyHtoDAsync(gc->batch.region.ptr, (const uint8_t *)r->data + e0 * esize, region, gc->stream),
             "copy slabs to the GPU");
    r->prefetched = 0;
    TRY(h5fz_batch_move_chunks(gc, r->c, 1, g, first, count, gc->batch.region.ptr, e0, gc->in.ptr, e->fill));
    e->pin_in = NULL;
  } else {
    /* in pieces, so the copy of one piece overlaps the gather of the next */
    e->pin_in = gc->batch.pin_in;
    uint64_t piece = count / 8u ? count / 8u : 1u;
    for (e->gather_at = 0; e->gather_at < count; e->gather_at += piece) {
      uint64_t k = count - e->gather_at < piece ? count - e->gather_at : piece;
      TRY(h5fz_parallel_for(k * ((e->rows + e->block_rows - 1) / e->block_rows), gather_one, e));
      TRY_CU(gc->cu->cuMemcpyHtoDAsync(gc->in.ptr + e->gather_at * chunk_bytes,
                                       (uint8_t *)gc->batch.pin_in + e->gather_at * chunk_bytes, k * chunk_bytes,
                                       gc->stream),
             "copy a batch to the GPU");
    }
  }
out:
  return rc;
}

/* The batch's absolute bounds into r->eb (REL: from each chunk's range,
 * taken on the GPU) and *q, the device array of them (0: the plan's). */
static int encode_bounds(encode_run *r, uint64_t count, CUdeviceptr *q)
{
  h5fz_gpu_context *gc = r->e.gc;
  int rc = H5FZ_OK;
  const h5fz_spec *spec = r->e.spec;
  *q = 0;
  if (h5fz_mode_from_chunk_range((unsigned)spec->mode)) {
    int w = spec->dtype == H5FZ_DTYPE_F64, has_fill = spec->has_fill;
    unsigned long long cn = r->chunk_n;
    float f32 = (float)spec->fill;
    double f64 = spec->fill;
    void *args[] = {&gc->in.ptr, &cn, &has_fill, w ? (void *)&f64 : (void *)&f32, &gc->batch.lohi.ptr};
    TRY(h5fz_gpu_launch(gc, r->c->mod.range[w], (unsigned)count, 256u, 0, args, "range kernel"));
    TRY_CU(gc->cu->cuMemcpyDtoHAsync(r->lohi, gc->batch.lohi.ptr, count * 16u, gc->stream), "copy ranges");
    TRY(h5fz_gpu_sync_stream(gc, "ranges"));
    for (uint64_t j = 0; j < count; j++)
      r->eb[j] = h5fz_rel_abs_bound(spec->bound, r->lohi[2 * j], r->lohi[2 * j + 1], spec->dtype);
    TRY_CU(gc->cu->cuMemcpyHtoDAsync(gc->batch.qchunk.ptr, r->eb, count * 8u, gc->stream), "copy bounds");
    TRY(h5fz_gpu_sync_stream(gc, "bounds")); /* eb is pageable host memory reused next batch */
    *q = gc->batch.qchunk.ptr;
  } else {
    for (uint64_t j = 0; j < count; j++) r->eb[j] = r->h0.abs_bound;
  }
out:
  return rc;
}

/* Where the tables come back in gc->batch.pin_back for n_sub_all sub-chunks. */
static void back_tables(uint64_t n_sub_all, encode_job *e, unsigned long long **totals)
{
  h5fz_gpu_context *gc = e->gc;
  uint8_t *back = gc->batch.pin_back;
  *totals = (unsigned long long *)back;
  e->entries = (uint32_t *)(back + 16);
  e->offsets = (unsigned long long *)(back + 16 + n_sub_all * 4u);
  e->ooffsets = (uint32_t *)(back + 16 + n_sub_all * 12u);
}

/* The fused encode of the batch, and what it made back on the host: sizes,
 * offsets, payload, outliers (into r->e); then the next batch's slabs start
 * to cross while the host writes this batch's containers. */
static int encode_run_batch(encode_run *r, uint64_t first, uint64_t count, CUdeviceptr q)
{
  h5fz_gpu_context *gc = r->e.gc;
  int rc;
  encode_job *e = &r->e;
  size_t esize = e->esize;
  uint32_t slot = r->p0.subchunk_elems * r->p0.esize;
  TRY(h5fz_gpu_launch_encode(gc, r->c, &r->p0, (uint32_t)count, q));
  uint64_t n_sub_all = count * r->p0.n_subchunks;
  unsigned long long *totals;
  back_tables(n_sub_all, e, &totals);
  TRY_CU(gc->cu->cuMemcpyDtoHAsync(totals, gc->totals.ptr, 16u, gc->stream), "copy sizes");
  TRY_CU(gc->cu->cuMemcpyDtoHAsync((void *)e->entries, gc->entries.ptr, n_sub_all * 4u, gc->stream), "copy sizes");
  TRY_CU(gc->cu->cuMemcpyDtoHAsync((void *)e->offsets, gc->offsets.ptr, n_sub_all * 8u, gc->stream), "copy offsets");
  TRY_CU(gc->cu->cuMemcpyDtoHAsync((void *)e->ooffsets, gc->ooffsets.ptr, n_sub_all * 4u, gc->stream), "copy offsets");
  if (r->costs && h5fz_lnd_has_choice(r->p0.lnd)) /* (without a choice no cost pass ran) */
    TRY_CU(gc->cu->cuMemcpyDtoHAsync(r->costs, gc->lnd.ptr, count * H5FZ_LND_NCOST * H5FZ_LND_COST_PARTS * sizeof *r->costs,
                                     gc->stream),
           "copy costs");
  e->lnd_costs = r->costs;
  TRY(h5fz_gpu_sync_stream(gc, "batch encode"));
  uint64_t payload = totals[0], n_out = totals[1];
  if (payload > n_sub_all * slot || n_out > count * r->chunk_n) {
    rc = h5fz_fail(H5FZ_ERR_DEVICE, "GPU batch encode returned impossible sizes");
    goto out;
  }
  size_t head = 16u + n_sub_all * 16u, need = head + payload + 8u + n_out * (4u + esize);
  if (need > gc->batch.pin_back_cap) {
    /* grow keeping the tables: they are small, copy them aside */
    size_t tbytes = head;
    uint8_t *keep = malloc(tbytes);
    if (!keep) {
      rc = h5fz_fail(H5FZ_ERR_NOMEM, "batch tables");
      goto out;
    }
    memcpy(keep, gc->batch.pin_back, tbytes);
    rc = h5fz_batch_grow_pin(gc, &gc->batch.pin_back, &gc->batch.pin_back_cap, need);
    if (!rc) memcpy(gc->batch.pin_back, keep, tbytes);
    free(keep);
    if (rc) goto out;
    back_tables(n_sub_all, e, &totals);
  }
  uint8_t *packed = (uint8_t *)gc->batch.pin_back + head;
  uint32_t *gpos = (uint32_t *)(packed + ((payload + 7u) & ~(uint64_t)7u));
  uint8_t *gval = (uint8_t *)(gpos + n_out);
  TRY_CU(gc->cu->cuMemcpyDtoHAsync(packed, gc->packed.ptr, payload, gc->stream), "copy payload");
  if (n_out) {
    TRY_CU(gc->cu->cuMemcpyDtoHAsync(gpos, gc->gpos.ptr, n_out * 4u, gc->stream), "copy outliers");
    TRY_CU(gc->cu->cuMemcpyDtoHAsync(gval, gc->gval.ptr, n_out * esize, gc->stream), "copy outliers");
  }
  TRY(h5fz_gpu_sync_stream(gc, "batch copies"));
  if (r->pinned && first + count < r->n_chunks) {
    /* the region is free again: the next batch's slabs cross PCIe while
     * this batch's containers are written on the host */
    uint64_t e0, next = first + count;
    size_t region;
    h5fz_batch_slab_region(e->g, &r->sg, next, r->n_chunks - next < r->bc ? r->n_chunks - next : r->bc, esize, &e0,
                           &region);
    TRY_CU(gc->cu->cuMemcpyHtoDAsync(gc->batch.region.ptr, (const uint8_t *)r->data + e0 * esize, region, gc->stream),
           "copy slabs to the GPU");
    r->prefetched = 1;
  }
  e->packed = packed;
  e->gpos = gpos;
  e->gval = gval;
  e->n_out = n_out;
out:
  return rc;
}

/* The batch's containers written on the host (every core) and handed to
 * the sink in index order; *done counts those handed over. */
static int encode_hand_over(encode_run *r, uint64_t first, uint64_t count, h5fz_chunk_sink sink, void *ctx,
                            uint64_t *done, int *user_rc)
{
  h5fz_gpu_context *gc = r->e.gc;
  int rc;
  encode_job *e = &r->e;
  TRY(h5fz_parallel_for(count, assemble_one, e));
  for (uint64_t j = 0; j < count; j++)
    if (!e->out[j]) TRY(store_raw_from_device(e, j));
  for (uint64_t j = 0; j < count; j++) {
    if (e->out_bytes[j] == H5FZ_HEADER_BYTES + e->chunk_bytes + H5FZ_CHECKSUM_BYTES) {
      e->info[j].stored_raw = 1; /* a container that large is the raw one */
      e->info[j].n_outliers = 0;
      e->info[j].n_raw_subchunks = 0;
      e->info[j].abs_bound = r->eb[j];
    }
    h5fz_encoded_chunk ch = {first + j, e->out[j], e->out_bytes[j], e->info[j]};
    if ((rc = sink(ctx, &ch))) {
      *user_rc = 1;
      goto out;
    }
    *done = first + j + 1;
  }
  free_outs(e);
  gc->stats.chunks_encoded += count;
out:
  return rc;
}

static int encode_locked(h5fz_gpu_context *gc, const h5fz_spec *spec, const h5fz_array_geom *g, const void *data,
                         int on_device, h5fz_chunk_sink sink, void *ctx, h5fz_array_exec *ex, uint64_t *done,
                         int *user_rc)
{
  int rc;
  size_t esize = h5fz_dtype_size(spec->dtype);
  encode_run r = {.data = data, .on_device = on_device};
  r.chunk_n = h5fz_array_chunk_elems(g);
  r.n_chunks = h5fz_array_chunks(g);
  r.e = (encode_job){.gc = gc, .spec = spec, .g = g, .data = data, .chunk_bytes = r.chunk_n * esize, .esize = esize};
  TRY(encode_prepare(&r, ex));
  for (uint64_t first = 0; first < r.n_chunks; first += r.bc) {
    uint64_t count = r.n_chunks - first < r.bc ? r.n_chunks - first : r.bc;
    r.e.first = first;
    r.e.count = count;
    CUdeviceptr q;
    TRY(encode_stage_in(&r, first, count));
    TRY(encode_bounds(&r, count, &q));
    TRY(encode_run_batch(&r, first, count, q));
    TRY(encode_hand_over(&r, first, count, sink, ctx, done, user_rc));
  }
out:
  /* never return while a copy still reads the caller's array */
  if (r.prefetched) gc->cu->cuStreamSynchronize(gc->stream);
  if (r.e.out) free_outs(&r.e);
  free(r.e.out);
  free(r.e.out_bytes);
  free(r.e.info);
  free(r.eb);
  free(r.lohi);
  free(r.costs);
  return rc;
}

int h5fz_gpu_array_encode(const h5fz_spec *spec, const h5fz_array_geom *g, const void *data, int on_device,
                          h5fz_chunk_sink sink, void *ctx, h5fz_array_exec *ex, uint64_t *done, int *user_rc)
{
  *done = 0;
  *user_rc = 0;
  /* the range kernel leaves out one value (the fill); a REL range must
   * leave out missing= as well (h5fz_rel_range), so the CPU takes those */
  if (spec->mode == H5FZ_MODE_REL && spec->has_missing)
    return h5fz_fail(H5FZ_ERR_UNSUPPORTED,
                     "REL with missing= is encoded by the CPU executor (the GPU batch range leaves out the fill "
                     "value only)");
  h5fz_gpu_context *gc;
  int rc = h5fz_gpu_enter(&gc);
  if (rc)
    *user_rc = H5FZ_GPU_UNUSABLE;
  else
    rc = encode_locked(gc, spec, g, data, on_device, sink, ctx, ex, done, user_rc);
  h5fz_gpu_leave(gc);
  return rc;
}
