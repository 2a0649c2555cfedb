/*
 * h5fz_gpu_exec.c - the GPU executor, one chunk at a time (h5fz_gpu.h):
 * the chain (h5fz_gpu_chain.c), pinned staging (h5fz_gpu_stage.c), the
 * fused encode and its tail (h5fz_gpu_launch.c), and the container written
 * on the host around the packed bytes, byte-identical to the CPU
 * executor's (the benchmarks' kernel timer: h5fz_gpu_timing.c). Chunk calls are
 * serialised on the context's lock (h5fz_gpu_context.c).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "h5fz_container.h"
#include "h5fz_gpu.h"
#include "h5fz_gpu_context.h"
#include "h5fz_gpu_exec.h"
#include "h5fz_gpu_launch.h"
#include "h5fz_gpu_stage.h"

static double now_ms(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

/* A chunk call's time after its chain was ready (t0), for the benchmarks'
 * cold-start phases: the first one is the first launch's. */
static void note_exec(h5fz_gpu_context *gc, double t0)
{
  gc->stats.last_exec_ms = now_ms() - t0;
  if (!gc->stats.chunks_seen++) gc->stats.first_exec_ms = gc->stats.last_exec_ms;
}

int h5fz_gpu_grow_chunk_encode(h5fz_gpu_context *gc, const h5fz_chunk_plan *p)
{
  int rc;
  uint32_t n_sub = p->n_subchunks, slot = p->subchunk_elems * p->esize;
  size_t data_bytes = (size_t)p->n_elements * p->esize, n = (size_t)p->n_elements;
  TRY(h5fz_gpu_grow_encode(gc, p, 1));
  /* the pinned buffer stages the input, then holds what comes back */
  size_t back = 16u + (size_t)n_sub * 4u + (size_t)n_sub * slot + n * (4u + p->esize);
  TRY(h5fz_gpu_grow_pinned(gc, data_bytes > back ? data_bytes : back));
  TRY(h5fz_gpu_grow(gc, &gc->status, 4u));
  /* the cost sums, and 2 words per sub-chunk for a decode after it (h5fz_gpu_time_kernels) */
  TRY(h5fz_gpu_grow(gc, &gc->lnd, h5fz_gpu_lnd_bytes(p, 1)));
out:
  return rc;
}

static int encode_locked(h5fz_gpu_context *gc, const h5fz_chunk_plan *p, h5fz_header *h, const uint8_t *in,
                         size_t in_bytes, void **out_buf, size_t *out_bytes)
{
  int rc;
  chain_entry *c;
  TRY(h5fz_gpu_get_chain(gc, p, &c));
  double t0 = now_ms();
  TRY(h5fz_gpu_grow_chunk_encode(gc, p));
  uint32_t n_sub = p->n_subchunks, slot = p->subchunk_elems * p->esize;
  size_t data_bytes = (size_t)p->n_elements * p->esize, n = (size_t)p->n_elements;
  TRY(h5fz_gpu_stage_to_device(gc, gc->in.ptr, in, data_bytes));

  TRY(h5fz_gpu_launch_encode(gc, c, p, 1, 0));

  uint8_t *host = gc->pinned;
  unsigned long long *totals = (unsigned long long *)host;
  uint32_t *entries = (uint32_t *)(host + 16);
  uint8_t *payload = host + 16 + (size_t)n_sub * 4u;
  TRY_CU(gc->cu->cuMemcpyDtoHAsync(totals, gc->totals.ptr, 16u, gc->stream), "copy sizes from GPU");
  TRY_CU(gc->cu->cuMemcpyDtoHAsync(entries, gc->entries.ptr, (size_t)n_sub * 4u, gc->stream), "copy sizes from GPU");
  uint64_t costs[H5FZ_LND_NCOST * H5FZ_LND_COST_PARTS] = {0};
  if (h5fz_plan_has_lnd(p) && h5fz_lnd_has_choice(p->lnd))
    TRY_CU(gc->cu->cuMemcpyDtoHAsync(costs, gc->lnd.ptr, sizeof costs, gc->stream), "copy costs from GPU");
  TRY(h5fz_gpu_sync_stream(gc, "encode"));
  /* the predictor each block of the encode chose from the same sums */
  if (h5fz_plan_has_lnd(p)) h->predictor = (uint8_t)h5fz_lnd_choose(costs, H5FZ_LND_COST_PARTS, p->lnd);
  size_t payload_bytes = totals[0], n_out = totals[1];
  if (payload_bytes > (size_t)n_sub * slot || n_out > n) {
    rc = h5fz_fail(H5FZ_ERR_DEVICE, "GPU encode returned impossible sizes");
    goto out;
  }
  uint32_t *pos = (uint32_t *)(payload + payload_bytes + (4u - payload_bytes % 4u) % 4u);
  uint8_t *vals = (uint8_t *)(pos + n_out);
  TRY_CU(gc->cu->cuMemcpyDtoHAsync(payload, gc->packed.ptr, payload_bytes, gc->stream), "copy payload from GPU");
  if (n_out) {
    TRY_CU(gc->cu->cuMemcpyDtoHAsync(pos, gc->gpos.ptr, n_out * 4u, gc->stream), "copy outliers from GPU");
    TRY_CU(gc->cu->cuMemcpyDtoHAsync(vals, gc->gval.ptr, n_out * p->esize, gc->stream), "copy outliers from GPU");
  }
  TRY(h5fz_gpu_sync_stream(gc, "encode copies"));
  h->n_outliers = (uint32_t)n_out;
  h5fz_payload pl = {payload, 0, entries};
  rc = h5fz_container_write(h, &pl, pos, vals, in, in_bytes, out_buf, out_bytes);
  gc->stats.chunks_encoded++;
  note_exec(gc, t0);
out:
  return rc;
}

static int decode_locked(h5fz_gpu_context *gc, const h5fz_chunk_plan *p, const uint32_t *entries,
                         const uint8_t *payload, size_t payload_bytes, const uint64_t *offsets, uint8_t *values)
{
  int rc;
  chain_entry *c;
  TRY(h5fz_gpu_get_chain(gc, p, &c));
  double t0 = now_ms();
  uint32_t n_sub = p->n_subchunks;
  size_t data_bytes = (size_t)p->n_elements * p->esize;
  size_t up = payload_bytes + (size_t)n_sub * 12u + 16u;
  TRY(h5fz_gpu_grow_decode(gc, p, 1, payload_bytes + 1u));
  TRY(h5fz_gpu_grow(gc, &gc->lnd, h5fz_gpu_lnd_bytes(p, 1)));
  TRY(h5fz_gpu_grow_pinned(gc, up > data_bytes ? up : data_bytes));
  uint8_t *host = gc->pinned;
  memcpy(host, offsets, (size_t)n_sub * 8u);
  memcpy(host + (size_t)n_sub * 8u, entries, (size_t)n_sub * 4u);
  memcpy(host + (size_t)n_sub * 12u, payload, payload_bytes);
  TRY_CU(gc->cu->cuMemcpyHtoDAsync(gc->offsets.ptr, host, (size_t)n_sub * 8u, gc->stream), "copy to GPU");
  TRY_CU(gc->cu->cuMemcpyHtoDAsync(gc->entries.ptr, host + (size_t)n_sub * 8u, (size_t)n_sub * 4u, gc->stream),
         "copy to GPU");
  TRY_CU(gc->cu->cuMemcpyHtoDAsync(gc->packed.ptr, host + (size_t)n_sub * 12u, payload_bytes, gc->stream),
         "copy to GPU");
  TRY_CU(gc->cu->cuMemsetD8Async(gc->status.ptr, 0, 4u, gc->stream), "clear status");
  TRY(h5fz_gpu_launch_decode(gc, c, p, 1, 0, gc->in.ptr, NULL));
  int status = 0;
  TRY_CU(gc->cu->cuMemcpyDtoHAsync(&status, gc->status.ptr, 4u, gc->stream), "copy status from GPU");
  TRY(h5fz_gpu_stage_from_device(gc, values, gc->in.ptr, data_bytes));
  TRY(h5fz_gpu_sync_stream(gc, "decode"));
  if (status) {
    rc = h5fz_fail(H5FZ_ERR_CORRUPT, "sub-chunk %d: RZE stream is inconsistent", status - 1);
    goto out;
  }
  gc->stats.chunks_decoded++;
  note_exec(gc, t0);
out:
  return rc;
}

int h5fz_gpu_encode_chunk(const h5fz_chunk_plan *p, h5fz_header *h, const uint8_t *in, size_t in_bytes, void **out,
                          size_t *out_bytes)
{
  h5fz_gpu_context *gc;
  int rc = h5fz_gpu_enter(&gc);
  if (!rc) rc = encode_locked(gc, p, h, in, in_bytes, out, out_bytes);
  h5fz_gpu_leave(gc);
  return rc;
}

int h5fz_gpu_decode_chunk(const h5fz_chunk_plan *p, const uint32_t *entries, const uint8_t *payload,
                          size_t payload_bytes, const uint64_t *offsets, uint8_t *values)
{
  h5fz_gpu_context *gc;
  int rc = h5fz_gpu_enter(&gc);
  if (!rc) rc = decode_locked(gc, p, entries, payload, payload_bytes, offsets, values);
  h5fz_gpu_leave(gc);
  return rc;
}

void h5fz_gpu_get_stats(h5fz_gpu_stats *stats)
{
  /* the counters of the context this process's calls use now (the settings' ordinal) */
  h5fz_settings s;
  h5fz_settings_read(&s, H5FZ_SETTINGS_GPU);
  h5fz_gpu_context *gc = h5fz_gpu_context_of(s.gpu_ordinal);
  memset(stats, 0, sizeof *stats);
  if (!gc) return;
  pthread_mutex_lock(&gc->lock);
  *stats = gc->stats;
  pthread_mutex_unlock(&gc->lock);
}
