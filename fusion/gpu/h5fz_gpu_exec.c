/*
 * h5fz_gpu_exec.c - the GPU executor, one chunk at a time (h5fz_gpu.h):
 * the chain (h5fz_gpu_chain.c), pinned staging (h5fz_gpu_stage.c), the
 * fused encode and its tail (h5fz_gpu_launch.c), and the container written
 * on the host around the packed bytes, byte-identical to the CPU
 * executor's; the kernel timing of the benchmarks. Chunk calls are
 * serialised on the context's lock (h5fz_gpu_context.c).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h5fz_container.h"
#include "h5fz_gpu.h"
#include "h5fz_gpu_context.h"
#include "h5fz_gpu_launch.h"
#include "h5fz_gpu_stage.h"

/* Device and pinned buffers for encoding a chunk of plan p. */
static int grow_encode_buffers(const h5fz_chunk_plan *p)
{
  int rc;
  uint32_t n_sub = p->n_subchunks, slot = p->subchunk_elems * p->esize;
  size_t data_bytes = (size_t)p->n_elements * p->esize, n = (size_t)p->n_elements;
  TRY(h5fz_gpu_grow_encode(p, 1));
  /* the pinned buffer stages the input, then holds what comes back */
  size_t back = 16u + (size_t)n_sub * 4u + (size_t)n_sub * slot + n * (4u + p->esize);
  TRY(h5fz_gpu_grow_pinned(data_bytes > back ? data_bytes : back));
  TRY(h5fz_gpu_grow(&g_gpu.status, 4u));
  /* the cost sums, and 2 words per sub-chunk for a decode after it (h5fz_gpu_time_kernels) */
  TRY(h5fz_gpu_grow(&g_gpu.lnd, h5fz_gpu_lnd_bytes(p, 1)));
out:
  return rc;
}

static int encode_locked(const h5fz_chunk_plan *p, h5fz_header *h, const uint8_t *in, size_t in_bytes, void **out_buf,
                         size_t *out_bytes)
{
  int rc;
  chain_entry *c;
  TRY(h5fz_gpu_get_chain(p, &c));
  TRY(grow_encode_buffers(p));
  uint32_t n_sub = p->n_subchunks, slot = p->subchunk_elems * p->esize;
  size_t data_bytes = (size_t)p->n_elements * p->esize, n = (size_t)p->n_elements;
  TRY(h5fz_gpu_stage_to_device(g_gpu.in.ptr, in, data_bytes));

  TRY(h5fz_gpu_launch_encode(c, p, 1, 0));

  uint8_t *host = g_gpu.pinned;
  unsigned long long *totals = (unsigned long long *)host;
  uint32_t *entries = (uint32_t *)(host + 16);
  uint8_t *payload = host + 16 + (size_t)n_sub * 4u;
  TRY_CU(g_gpu.cu->cuMemcpyDtoHAsync(totals, g_gpu.totals.ptr, 16u, g_gpu.stream), "copy sizes from GPU");
  TRY_CU(g_gpu.cu->cuMemcpyDtoHAsync(entries, g_gpu.entries.ptr, (size_t)n_sub * 4u, g_gpu.stream),
         "copy sizes from GPU");
  uint64_t costs[3u * H5FZ_LND_COST_PARTS];
  if (h5fz_plan_has_lnd(p))
    TRY_CU(g_gpu.cu->cuMemcpyDtoHAsync(costs, g_gpu.lnd.ptr, sizeof costs, g_gpu.stream), "copy costs from GPU");
  TRY(h5fz_gpu_sync_stream("encode"));
  /* the predictor each block of the encode chose from the same sums */
  if (h5fz_plan_has_lnd(p)) h->predictor = (uint8_t)h5fz_lnd_choose(costs, H5FZ_LND_COST_PARTS, p->lnd.dim);
  size_t payload_bytes = totals[0], n_out = totals[1];
  if (payload_bytes > (size_t)n_sub * slot || n_out > n) {
    rc = h5fz_fail(H5FZ_ERR_DEVICE, "GPU encode returned impossible sizes");
    goto out;
  }
  uint32_t *pos = (uint32_t *)(payload + payload_bytes + (4u - payload_bytes % 4u) % 4u);
  uint8_t *vals = (uint8_t *)(pos + n_out);
  TRY_CU(g_gpu.cu->cuMemcpyDtoHAsync(payload, g_gpu.packed.ptr, payload_bytes, g_gpu.stream), "copy payload from GPU");
  if (n_out) {
    TRY_CU(g_gpu.cu->cuMemcpyDtoHAsync(pos, g_gpu.gpos.ptr, n_out * 4u, g_gpu.stream), "copy outliers from GPU");
    TRY_CU(g_gpu.cu->cuMemcpyDtoHAsync(vals, g_gpu.gval.ptr, n_out * p->esize, g_gpu.stream), "copy outliers from GPU");
  }
  TRY(h5fz_gpu_sync_stream("encode copies"));
  h->n_outliers = (uint32_t)n_out;
  h5fz_payload pl = {payload, 0, entries};
  rc = h5fz_container_write(h, &pl, pos, vals, in, in_bytes, out_buf, out_bytes);
  g_gpu.stats.chunks_encoded++;
out:
  return rc;
}

static int decode_locked(const h5fz_chunk_plan *p, const uint32_t *entries, const uint8_t *payload,
                         size_t payload_bytes, const uint64_t *offsets, uint8_t *values)
{
  int rc;
  chain_entry *c;
  TRY(h5fz_gpu_get_chain(p, &c));
  uint32_t n_sub = p->n_subchunks;
  size_t data_bytes = (size_t)p->n_elements * p->esize;
  size_t up = payload_bytes + (size_t)n_sub * 12u + 16u;
  TRY(h5fz_gpu_grow_decode(p, 1, payload_bytes + 1u));
  TRY(h5fz_gpu_grow(&g_gpu.lnd, h5fz_gpu_lnd_bytes(p, 1)));
  TRY(h5fz_gpu_grow_pinned(up > data_bytes ? up : data_bytes));
  uint8_t *host = g_gpu.pinned;
  memcpy(host, offsets, (size_t)n_sub * 8u);
  memcpy(host + (size_t)n_sub * 8u, entries, (size_t)n_sub * 4u);
  memcpy(host + (size_t)n_sub * 12u, payload, payload_bytes);
  TRY_CU(g_gpu.cu->cuMemcpyHtoDAsync(g_gpu.offsets.ptr, host, (size_t)n_sub * 8u, g_gpu.stream), "copy to GPU");
  TRY_CU(g_gpu.cu->cuMemcpyHtoDAsync(g_gpu.entries.ptr, host + (size_t)n_sub * 8u, (size_t)n_sub * 4u, g_gpu.stream),
         "copy to GPU");
  TRY_CU(g_gpu.cu->cuMemcpyHtoDAsync(g_gpu.packed.ptr, host + (size_t)n_sub * 12u, payload_bytes, g_gpu.stream),
         "copy to GPU");
  TRY_CU(g_gpu.cu->cuMemsetD8Async(g_gpu.status.ptr, 0, 4u, g_gpu.stream), "clear status");
  TRY(h5fz_gpu_launch_decode(c, p, 1, 0, g_gpu.in.ptr, NULL));
  int status = 0;
  TRY_CU(g_gpu.cu->cuMemcpyDtoHAsync(&status, g_gpu.status.ptr, 4u, g_gpu.stream), "copy status from GPU");
  TRY(h5fz_gpu_stage_from_device(values, g_gpu.in.ptr, data_bytes));
  TRY(h5fz_gpu_sync_stream("decode"));
  if (status) {
    rc = h5fz_fail(H5FZ_ERR_CORRUPT, "sub-chunk %d: RZE stream is inconsistent", status - 1);
    goto out;
  }
  g_gpu.stats.chunks_decoded++;
out:
  return rc;
}

int h5fz_gpu_encode_chunk(const h5fz_chunk_plan *p, h5fz_header *h, const uint8_t *in, size_t in_bytes, void **out,
                          size_t *out_bytes)
{
  pthread_mutex_lock(&g_gpu.lock);
  int rc = h5fz_gpu_ensure_init();
  if (!rc) rc = encode_locked(p, h, in, in_bytes, out, out_bytes);
  pthread_mutex_unlock(&g_gpu.lock);
  return rc;
}

int h5fz_gpu_decode_chunk(const h5fz_chunk_plan *p, const uint32_t *entries, const uint8_t *payload,
                          size_t payload_bytes, const uint64_t *offsets, uint8_t *values)
{
  pthread_mutex_lock(&g_gpu.lock);
  int rc = h5fz_gpu_ensure_init();
  if (!rc) rc = decode_locked(p, entries, payload, payload_bytes, offsets, values);
  pthread_mutex_unlock(&g_gpu.lock);
  return rc;
}

void h5fz_gpu_get_stats(h5fz_gpu_stats *stats)
{
  pthread_mutex_lock(&g_gpu.lock);
  *stats = g_gpu.stats;
  pthread_mutex_unlock(&g_gpu.lock);
}

static int compare_doubles(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static int time_locked(const h5fz_chunk_plan *p, const uint8_t *in, int reps, double *enc_ms, double *dec_ms,
                       size_t *payload_bytes)
{
  int rc;
  chain_entry *c;
  dbuf *out = &g_gpu.slots; /* decode target: the slots are free once packed */
  double *te = calloc((size_t)reps, sizeof *te), *td = calloc((size_t)reps, sizeof *td);
  CUevent e0 = NULL, e1 = NULL;
  if (!te || !td) {
    rc = h5fz_fail(H5FZ_ERR_NOMEM, "timing buffers");
    goto out;
  }
  TRY(h5fz_gpu_get_chain(p, &c));
  TRY(grow_encode_buffers(p));
  size_t data_bytes = (size_t)p->n_elements * p->esize;
  TRY_CU(g_gpu.cu->cuMemcpyHtoDAsync(g_gpu.in.ptr, in, data_bytes, g_gpu.stream), "copy to GPU");
  TRY_CU(g_gpu.cu->cuEventCreate(&e0, 0), "cuEventCreate");
  TRY_CU(g_gpu.cu->cuEventCreate(&e1, 0), "cuEventCreate");
  for (int r = -1; r < reps; r++) { /* r = -1 warms up */
    TRY_CU(g_gpu.cu->cuEventRecord(e0, g_gpu.stream), "cuEventRecord");
    TRY(h5fz_gpu_launch_encode(c, p, 1, 0));
    TRY_CU(g_gpu.cu->cuEventRecord(e1, g_gpu.stream), "cuEventRecord");
    TRY_CU(g_gpu.cu->cuEventSynchronize(e1), "cuEventSynchronize");
    float ms = 0;
    TRY_CU(g_gpu.cu->cuEventElapsedTime(&ms, e0, e1), "cuEventElapsedTime");
    if (r >= 0) te[r] = ms;
  }
  unsigned long long totals[2];
  uint64_t costs[3u * H5FZ_LND_COST_PARTS];
  TRY_CU(g_gpu.cu->cuMemcpyDtoHAsync(totals, g_gpu.totals.ptr, 16u, g_gpu.stream), "copy totals");
  if (h5fz_plan_has_lnd(p))
    TRY_CU(g_gpu.cu->cuMemcpyDtoHAsync(costs, g_gpu.lnd.ptr, sizeof costs, g_gpu.stream), "copy costs from GPU");
  TRY(h5fz_gpu_sync_stream("timing"));
  *payload_bytes = totals[0];
  /* the decode runs with the predictor the encode chose (the header's), not the highest allowed */
  h5fz_chunk_plan pd = *p;
  if (h5fz_plan_has_lnd(p)) pd.lnd.dim = h5fz_lnd_choose(costs, H5FZ_LND_COST_PARTS, p->lnd.dim);
  TRY(h5fz_gpu_grow(out, data_bytes));
  TRY(h5fz_gpu_grow(&g_gpu.status, 4u));
  TRY_CU(g_gpu.cu->cuMemsetD8Async(g_gpu.status.ptr, 0, 4, g_gpu.stream), "clear decode status");
  for (int r = -1; r < reps; r++) {
    TRY_CU(g_gpu.cu->cuEventRecord(e0, g_gpu.stream), "cuEventRecord");
    TRY(h5fz_gpu_launch_decode(c, &pd, 1, 0, out->ptr, NULL));
    TRY_CU(g_gpu.cu->cuEventRecord(e1, g_gpu.stream), "cuEventRecord");
    TRY_CU(g_gpu.cu->cuEventSynchronize(e1), "cuEventSynchronize");
    float ms = 0;
    TRY_CU(g_gpu.cu->cuEventElapsedTime(&ms, e0, e1), "cuEventElapsedTime");
    if (r >= 0) td[r] = ms;
  }
  int status = 0; /* a timed decode must also have read every sub-chunk */
  TRY_CU(g_gpu.cu->cuMemcpyDtoHAsync(&status, g_gpu.status.ptr, 4u, g_gpu.stream), "copy decode status");
  TRY(h5fz_gpu_sync_stream("timing"));
  if (status) {
    rc = h5fz_fail(H5FZ_ERR_CORRUPT, "timed decode: the kernel refused sub-chunk %d of its own encode", status - 1);
    goto out;
  }
  qsort(te, (size_t)reps, sizeof *te, compare_doubles);
  qsort(td, (size_t)reps, sizeof *td, compare_doubles);
  *enc_ms = te[reps / 2];
  *dec_ms = td[reps / 2];
out:
  if (e0) g_gpu.cu->cuEventDestroy(e0);
  if (e1) g_gpu.cu->cuEventDestroy(e1);
  free(te);
  free(td);
  return rc;
}

int h5fz_gpu_time_kernels(const h5fz_chunk_plan *p, const uint8_t *in, int reps, double *enc_ms, double *dec_ms,
                          size_t *payload_bytes)
{
  if (reps < 1) return h5fz_fail(H5FZ_ERR_ARG, "reps must be >= 1");
  pthread_mutex_lock(&g_gpu.lock);
  int rc = h5fz_gpu_ensure_init();
  if (!rc) rc = time_locked(p, in, reps, enc_ms, dec_ms, payload_bytes);
  pthread_mutex_unlock(&g_gpu.lock);
  return rc;
}
