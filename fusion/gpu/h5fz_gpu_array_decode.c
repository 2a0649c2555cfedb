/*
 * h5fz_gpu_array_decode.c - the GPU batches' decode: the chunks of a batch
 * that share its chain in one launch of the fused decode, the others
 * decoded on the host or filled, then scattered into the array (by a
 * kernel for device and page-locked arrays).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h5fz_array_geom.h"
#include "h5fz_chunk_check.h"
#include "h5fz_chunk_plan.h"
#include "h5fz_cpu_exec.h"
#include "h5fz_gpu_array_decode.h"
#include "h5fz_gpu_batch_util.h"
#include "h5fz_gpu_context.h"
#include "h5fz_gpu_launch.h"
#include "h5fz_modes.h"
#include "h5fz_parallel.h"
#include "h5fz_rel_bound.h"
#include "h5fz_side.h"

typedef enum { CHUNK_BATCH, CHUNK_VALUES, CHUNK_FILL } chunk_kind;

typedef struct {
  h5fz_gpu_context *gc;
  const h5fz_array_geom *g;
  h5fz_dtype dtype;
  size_t chunk_bytes, esize;
  uint64_t first, count;
  void **in; /* containers from the source */
  size_t *in_bytes;
  /* per chunk, from parsing */
  chunk_kind *kind;
  h5fz_header *hdr;
  uint8_t **values; /* CHUNK_VALUES: decoded on the host (malloc'd) */
  uint64_t *table_at, *payload_at, *payload_len;
  uint32_t **pos; /* outliers (chunk-local), malloc'd */
  uint8_t **vals;
  const h5fz_chunk_plan *p0;
  int rc_chunk;
  uint8_t *host_out; /* host path: chunk-contiguous decoded batch */
  uint64_t rows, block_rows;
  uint8_t *data;         /* host array */
  const h5fz_spec *want; /* the dataset: chunk shape and bound each container must keep */
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
             (h.rank >= 2 ? h.dims[h.rank - 1] : 0u) == p->row && h5fz_mode_lookup(h.mode)->qmode == p->quant.mode &&
             h.n_elements * d->esize == h.input_bytes;
  if (same && h5fz_plan_has_lnd(p)) { /* lorenzo_nd: the batch's geometry; the predictor may differ by chunk */
    h5fz_lnd_geom gh = h5fz_lnd_geom_make(h.rank, h.dims, h.n_elements, h.predictor);
    same = gh.x == p->lnd.x && gh.y == p->lnd.y && h.predictor >= 1u && h.predictor <= 3u;
  }
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
static int finish_pending(h5fz_gpu_context *gc, pending_batch *pb, uint64_t *done, uint32_t n_sub)
{
  if (!pb->count) return H5FZ_OK;
  int rc = h5fz_gpu_sync_stream(gc, "batch decode");
  if (!rc) rc = batch_status(*(volatile int *)gc->batch.pin_status, pb->first, n_sub); /* read after the wait */
  gc->stats.chunks_decoded += pb->count;
  if (!rc) *done = pb->first + pb->count;
  pb->count = 0;
  return rc;
}

/* One array's decode on the GPU: what the batches share. */
typedef struct {
  decode_job d;          /* the batch in hand */
  int on_device, pinned; /* device memory; page-locked host memory moved in slabs */
  pending_batch pending; /* a pinned batch whose copy back is queued */
  uint32_t n_sub_pending;
  chain_entry *c; /* NULL until a compressed chunk gave the chain */
  h5fz_chunk_plan p0;
  int have_plan;
  uint64_t fill_bits, chunk_n, n_chunks, bc;
  h5fz_slab_geom sg;
  double *eb;     /* per chunk of the batch: its bound */
  uint32_t *pred; /* lorenzo_nd: per chunk of the batch, its predictor */
} decode_run;

/* The batch size, the page-locked region and the batch tables. */
static int decode_prepare(decode_run *r, double fill, h5fz_array_exec *ex)
{
  h5fz_gpu_context *gc = r->d.gc;
  int rc = H5FZ_OK;
  decode_job *d = &r->d;
  const h5fz_array_geom *g = d->g;
  size_t esize = d->esize, chunk_bytes = d->chunk_bytes;
  h5fz_array_fill_bits(g, d->dtype, fill, &r->fill_bits);
  uint64_t bc = h5fz_batch_chunk_count(gc, chunk_bytes, (uint32_t)((chunk_bytes + 511u) / 512u));
  if (bc > r->n_chunks) bc = r->n_chunks;
  uint64_t bc_slabs = bc, array_elems = 1;
  for (uint32_t dd = 0; dd < g->rank; dd++) array_elems *= g->dims[dd];
  h5fz_batch_slabs(g, &bc_slabs, &r->sg);
  r->pinned = !r->on_device && bc_slabs && h5fz_batch_host_is_pinned(gc, d->data, array_elems * esize);
  if (r->pinned) {
    uint64_t e0;
    size_t region;
    bc = bc_slabs;
    h5fz_batch_slab_region(g, &r->sg, 0, bc, esize, &e0, &region);
    r->bc = bc;
    if ((rc = h5fz_gpu_grow(gc, &gc->batch.region, region))) return rc;
  }
  r->bc = bc;
  r->eb = malloc((bc + 1) * sizeof *r->eb);
  r->pred = malloc((bc + 1) * sizeof *r->pred);
  d->in = calloc(bc + 1, sizeof *d->in);
  d->in_bytes = calloc(bc + 1, sizeof *d->in_bytes);
  d->kind = calloc(bc + 1, sizeof *d->kind);
  d->hdr = calloc(bc + 1, sizeof *d->hdr);
  d->values = calloc(bc + 1, sizeof *d->values);
  d->table_at = calloc(bc + 1, 8u);
  d->payload_at = calloc(bc + 1, 8u);
  d->payload_len = calloc(bc + 1, 8u);
  d->pos = calloc(bc + 1, sizeof *d->pos);
  d->vals = calloc(bc + 1, sizeof *d->vals);
  if (!r->eb || !r->pred || !d->in || !d->in_bytes || !d->kind || !d->hdr || !d->values || !d->table_at ||
      !d->payload_at || !d->payload_len || !d->pos || !d->vals)
    return h5fz_fail(H5FZ_ERR_NOMEM, "batch tables");
  if (ex) {
    memset(ex, 0, sizeof *ex);
    ex->on_gpu = 1;
  }
  /* A page-locked array's batch is copied back while the host reads and
   * checks the next batch's chunks; it is waited for (and its status
   * checked) before the next upload reuses the staging memory. */
  return h5fz_batch_grow_pin(gc, &gc->batch.pin_status, &gc->batch.pin_status_cap, 64u);
}

/* The batch's containers from the source, the chain from the first
 * compressed one (once), and every container parsed (on every core). */
static int decode_read_batch(decode_run *r, uint64_t first, uint64_t count, h5fz_chunk_source source, void *ctx,
                             h5fz_array_exec *ex, int *user_rc)
{
  h5fz_gpu_context *gc = r->d.gc;
  int rc = H5FZ_OK;
  decode_job *d = &r->d;
  for (uint64_t j = 0; j < count; j++) {
    if ((rc = source(ctx, first + j, &d->in[j], &d->in_bytes[j]))) {
      *user_rc = 1;
      goto out;
    }
  }
  /* the batch's chain: that of its first compressed chunk */
  if (!r->have_plan) {
    for (uint64_t j = 0; j < count && !r->have_plan; j++) {
      h5fz_header h;
      if (d->in_bytes[j] && !h5fz_container_open(d->in[j], d->in_bytes[j], &h) && !(h.flags & H5FZ_FLAG_STORED_RAW) &&
          h.input_bytes == d->chunk_bytes && h.dtype == (uint8_t)d->dtype && h.n_subchunks) {
        h5fz_chunk_plan_from_header(&h, &r->p0);
        r->have_plan = 1;
      }
    }
    h5fz_clear_error();
    if (r->have_plan) {
      TRY(h5fz_gpu_get_chain(gc, &r->p0, &r->c));
      if (ex) {
        snprintf(ex->kernel_class, sizeof ex->kernel_class, "%s", r->c->plan.klass);
        ex->plan_digest = r->c->plan.digest;
      }
    }
  }
  if (!r->have_plan) { /* nothing compressed yet: a plan that batches nothing */
    memset(&r->p0, 0, sizeof r->p0);
    r->p0.dtype = H5FZ_DTYPE_UNKNOWN;
  }
  d->p0 = &r->p0;
  TRY(h5fz_parallel_for(count, parse_one, d));
out:
  return rc;
}

/* No compressed chunk so far: every chunk of the batch is fill or decoded
 * on the host, and goes straight into a host array. */
static int decode_without_chain(decode_run *r, uint64_t first, uint64_t count)
{
  decode_job *d = &r->d;
  size_t esize = d->esize;
  uint8_t *tmp = malloc(d->chunk_bytes ? d->chunk_bytes : 1);
  if (!tmp) return h5fz_fail(H5FZ_ERR_NOMEM, "chunk buffer");
  for (uint64_t j = 0; j < count; j++) {
    const uint8_t *src = d->values[j];
    if (d->kind[j] == CHUNK_FILL) {
      for (uint64_t i = 0; i < r->chunk_n; i++) memcpy(tmp + i * esize, &r->fill_bits, esize);
      src = tmp;
    }
    if (r->on_device) {
      /* a device array needs the GPU even for this: no chain, so no kernels */
      free(tmp);
      return h5fz_fail(H5FZ_ERR_DEVICE, "no compressed chunk to plan the GPU decode from");
    }
    h5fz_array_scatter_chunk(d->g, esize, src, first + j, d->data);
  }
  free(tmp);
  free_decode_tables(d, count);
  return H5FZ_OK;
}

/* The batch's payloads back to back in gc->batch.pin_back with their
 * sub-chunks' offsets and entries, and its outliers, then copied to the GPU
 * (chunks decoded on the host or missing get readable raw garbage, put
 * right in decode_place). */
static int decode_upload(decode_run *r, uint64_t count, uint64_t *n_out_total)
{
  h5fz_gpu_context *gc = r->d.gc;
  int rc;
  decode_job *d = &r->d;
  size_t esize = d->esize, chunk_bytes = d->chunk_bytes;
  uint32_t n_sub = r->p0.n_subchunks, slot = r->p0.subchunk_elems * r->p0.esize;
  uint64_t n_sub_all = count * n_sub, payload = 0, n_out = 0;
  for (uint64_t j = 0; j < count; j++)
    if (d->kind[j] == CHUNK_BATCH) {
      payload += d->payload_len[j];
      n_out += d->hdr[j].n_outliers;
    }
  size_t head = n_sub_all * 12u, need = head + payload + slot + 8u + n_out * (8u + esize);
  TRY(h5fz_batch_grow_pin(gc, &gc->batch.pin_back, &gc->batch.pin_back_cap,
                          need > count * chunk_bytes ? need : count * chunk_bytes));
  uint8_t *up = gc->batch.pin_back;
  unsigned long long *offsets = (unsigned long long *)up;
  uint32_t *entries = (uint32_t *)(up + n_sub_all * 8u);
  uint8_t *packed = up + head;
  uint64_t at = 0;
  for (uint64_t j = 0; j < count; j++) {
    if (d->kind[j] == CHUNK_BATCH) {
      const uint8_t *in = d->in[j];
      uint64_t off = 0;
      for (uint32_t s = 0; s < n_sub; s++) {
        uint32_t e = h5fz_get_u32(in + d->table_at[j] + 4u * s);
        entries[j * n_sub + s] = e;
        offsets[j * n_sub + s] = at + off;
        off += e & H5FZ_SUB_SIZE_MASK;
      }
      memcpy(packed + at, in + d->payload_at[j], d->payload_len[j]);
      at += d->payload_len[j];
      r->eb[j] = d->hdr[j].abs_bound;
      r->pred[j] = d->hdr[j].predictor;
    } else {
      r->pred[j] = r->p0.lnd.dim; /* any: the garbage is overwritten */
      /* decoded as raw garbage, then overwritten below: give the kernel
       * L readable bytes per sub-chunk (the zero pad at the end) */
      for (uint32_t s = 0; s < n_sub; s++) {
        uint64_t m = r->chunk_n - (uint64_t)s * r->p0.subchunk_elems;
        if (m > r->p0.subchunk_elems) m = r->p0.subchunk_elems;
        entries[j * n_sub + s] = (h5fz_pad64((uint32_t)m) * r->p0.esize) | H5FZ_SUB_RAW;
        offsets[j * n_sub + s] = payload;
      }
      r->eb[j] = 0.0;
    }
  }
  memset(packed + payload, 0, slot);
  unsigned long long *upos = (unsigned long long *)(packed + ((payload + slot + 7u) & ~(uint64_t)7u));
  uint8_t *uval = (uint8_t *)(upos + n_out);
  uint64_t k = 0;
  for (uint64_t j = 0; j < count; j++)
    if (d->kind[j] == CHUNK_BATCH)
      for (uint32_t i = 0; i < d->hdr[j].n_outliers; i++, k++) {
        upos[k] = j * r->chunk_n + d->pos[j][i];
        memcpy(uval + k * esize, d->vals[j] + (size_t)i * esize, esize);
      }
  TRY(h5fz_gpu_grow_decode(gc, &r->p0, count, payload + slot));
  TRY(h5fz_gpu_grow(gc, &gc->batch.qchunk, count * 8u));
  if (h5fz_plan_has_lnd(&r->p0)) TRY(h5fz_gpu_grow(gc, &gc->lnd, h5fz_gpu_lnd_bytes(&r->p0, (uint32_t)count)));
  TRY(h5fz_gpu_grow(gc, &gc->batch.upos, n_out * 8u + 8u));
  TRY(h5fz_gpu_grow(gc, &gc->batch.uval, n_out * esize + 8u));
  CUstream st = gc->stream;
  TRY_CU(gc->cu->cuMemcpyHtoDAsync(gc->offsets.ptr, offsets, n_sub_all * 8u, st), "copy to GPU");
  TRY_CU(gc->cu->cuMemcpyHtoDAsync(gc->entries.ptr, entries, n_sub_all * 4u, st), "copy to GPU");
  TRY_CU(gc->cu->cuMemcpyHtoDAsync(gc->packed.ptr, packed, payload + slot, st), "copy to GPU");
  TRY_CU(gc->cu->cuMemcpyHtoDAsync(gc->batch.qchunk.ptr, r->eb, count * 8u, st), "copy to GPU");
  if (n_out) {
    TRY_CU(gc->cu->cuMemcpyHtoDAsync(gc->batch.upos.ptr, upos, n_out * 8u, st), "copy to GPU");
    TRY_CU(gc->cu->cuMemcpyHtoDAsync(gc->batch.uval.ptr, uval, n_out * esize, st), "copy to GPU");
  }
  *n_out_total = n_out;
out:
  return rc;
}

/* The fused decode of the batch, its outliers patched, the chunks decoded
 * on the host or missing put in place, and the values to the array: a
 * device array by the scatter kernel, a page-locked one in slabs (left
 * pending: finish_pending completes it), else through gc->batch.pin_back. */
static int decode_place(decode_run *r, uint64_t first, uint64_t count, uint64_t n_out, uint64_t *done)
{
  h5fz_gpu_context *gc = r->d.gc;
  int rc;
  decode_job *d = &r->d;
  size_t esize = d->esize, chunk_bytes = d->chunk_bytes;
  uint32_t n_sub = r->p0.n_subchunks;
  CUstream st = gc->stream;
  volatile int *status_pin = (volatile int *)gc->batch.pin_status;
  TRY_CU(gc->cu->cuMemsetD8Async(gc->status.ptr, 0, 4u, st), "clear status");
  TRY(h5fz_gpu_launch_decode(gc, r->c, &r->p0, (uint32_t)count, gc->batch.qchunk.ptr, gc->in.ptr,
                             h5fz_plan_has_lnd(&r->p0) ? r->pred : NULL));
  int w = d->dtype == H5FZ_DTYPE_F64;
  if (n_out) {
    unsigned long long n_ull = n_out;
    void *args[] = {&gc->in.ptr, &gc->batch.upos.ptr, &gc->batch.uval.ptr, &n_ull};
    TRY(h5fz_gpu_launch(gc, r->c->mod.patch[w], h5fz_batch_grid_for(n_out), BATCH_THREADS, 0, args,
                        "outlier patch kernel"));
  }
  for (uint64_t j = 0; j < count; j++) {
    CUdeviceptr dst = gc->in.ptr + j * chunk_bytes;
    if (d->kind[j] == CHUNK_VALUES) {
      TRY_CU(gc->cu->cuMemcpyHtoDAsync(dst, d->values[j], chunk_bytes, st), "copy a chunk to the GPU");
    } else if (d->kind[j] == CHUNK_FILL) {
      unsigned long long n_ull = r->chunk_n;
      uint32_t f32 = (uint32_t)r->fill_bits;
      void *args[] = {&dst, &n_ull, w ? (void *)&r->fill_bits : (void *)&f32};
      TRY(h5fz_gpu_launch(gc, r->c->mod.fill[w], h5fz_batch_grid_for(r->chunk_n), BATCH_THREADS, 0, args,
                          "fill kernel"));
    }
  }
  *status_pin = 0;
  TRY_CU(gc->cu->cuMemcpyDtoHAsync((void *)status_pin, gc->status.ptr, 4u, st), "copy status");
  if (r->on_device) {
    TRY(h5fz_batch_move_chunks(gc, r->c, 0, d->g, first, count, (CUdeviceptr)(uintptr_t)d->data, 0, gc->in.ptr, 0));
    TRY(h5fz_gpu_sync_stream(gc, "batch decode"));
  } else if (r->pinned) { /* whole slabs: the scatter fills every row of the region */
    uint64_t e0;
    size_t region;
    h5fz_batch_slab_region(d->g, &r->sg, first, count, esize, &e0, &region);
    TRY(h5fz_batch_move_chunks(gc, r->c, 0, d->g, first, count, gc->batch.region.ptr, e0, gc->in.ptr, 0));
    TRY_CU(gc->cu->cuMemcpyDtoHAsync((uint8_t *)d->data + e0 * esize, gc->batch.region.ptr, region, st), "copy values");
    r->pending.first = first;
    r->pending.count = count;
    r->n_sub_pending = n_sub;
    free_decode_tables(d, count);
    return H5FZ_OK; /* finished by finish_pending */
  } else {
    TRY_CU(gc->cu->cuMemcpyDtoHAsync(gc->batch.pin_back, gc->in.ptr, count * chunk_bytes, st), "copy values");
    TRY(h5fz_gpu_sync_stream(gc, "batch decode"));
  }
  TRY(batch_status(*status_pin, first, n_sub));
  if (!r->on_device && !r->pinned) {
    d->host_out = gc->batch.pin_back;
    TRY(h5fz_parallel_for(count * ((d->rows + d->block_rows - 1) / d->block_rows), scatter_one, d));
  }
  gc->stats.chunks_decoded += count;
  free_decode_tables(d, count);
  *done = first + count;
out:
  return rc;
}

static int decode_locked(h5fz_gpu_context *gc, const h5fz_array_geom *g, const h5fz_spec *want, double fill,
                         h5fz_chunk_source source, void *ctx, void *data, int on_device, h5fz_array_exec *ex,
                         uint64_t *done, int *user_rc)
{
  int rc;
  h5fz_dtype dtype = want->dtype;
  size_t esize = h5fz_dtype_size(dtype);
  decode_run r = {.on_device = on_device, .pending = {0, 0}};
  r.chunk_n = h5fz_array_chunk_elems(g);
  r.n_chunks = h5fz_array_chunks(g);
  r.d = (decode_job){.gc = gc,
                     .g = g,
                     .dtype = dtype,
                     .chunk_bytes = r.chunk_n * esize,
                     .esize = esize,
                     .data = data,
                     .rows = h5fz_array_chunk_rows(g),
                     .block_rows = h5fz_batch_rows_per_block(g, esize),
                     .want = want};
  TRY(decode_prepare(&r, fill, ex));
  for (uint64_t first = 0; first < r.n_chunks; first += r.bc) {
    uint64_t count = r.n_chunks - first < r.bc ? r.n_chunks - first : r.bc, n_out = 0;
    r.d.first = first;
    r.d.count = count;
    TRY(decode_read_batch(&r, first, count, source, ctx, ex, user_rc));
    if (!r.c) { /* no compressed chunk so far: every chunk is fill or host-decoded */
      TRY(decode_without_chain(&r, first, count));
      *done = first + count;
      continue;
    }
    TRY(finish_pending(gc, &r.pending, done, r.n_sub_pending));
    TRY(decode_upload(&r, count, &n_out));
    TRY(decode_place(&r, first, count, n_out, done));
  }
  TRY(finish_pending(gc, &r.pending, done, r.n_sub_pending));
out:
  if (r.pending.count) { /* an error after a pinned batch's copy was queued: never return with it in flight */
    gc->cu->cuStreamSynchronize(gc->stream);
    gc->stats.chunks_decoded += r.pending.count;
  }
  decode_job *d = &r.d;
  if (d->in) free_decode_tables(d, r.bc);
  free(r.eb);
  free(r.pred);
  free(d->in);
  free(d->in_bytes);
  free(d->kind);
  free(d->hdr);
  free(d->values);
  free(d->table_at);
  free(d->payload_at);
  free(d->payload_len);
  free(d->pos);
  free(d->vals);
  return rc;
}

int h5fz_gpu_array_decode(const h5fz_array_geom *g, const h5fz_spec *want, double fill, h5fz_chunk_source source,
                          void *ctx, void *data, int on_device, h5fz_array_exec *ex, uint64_t *done, int *user_rc)
{
  *done = 0;
  *user_rc = 0;
  h5fz_gpu_context *gc;
  int rc = h5fz_gpu_enter(&gc);
  if (rc)
    *user_rc = H5FZ_GPU_UNUSABLE;
  else
    rc = decode_locked(gc, g, want, fill, source, ctx, data, on_device, ex, done, user_rc);
  h5fz_gpu_leave(gc);
  return rc;
}
