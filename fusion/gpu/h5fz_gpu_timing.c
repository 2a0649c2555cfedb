/*
 * h5fz_gpu_timing.c - the benchmarks' kernel timer (h5fz_gpu.h,
 * h5fz_gpu_time_kernels): one chunk's fused encode and decode launched
 * reps times each on the GPU executor's context, timed with CUDA events,
 * the median of each kept; the decode must read back every sub-chunk of
 * its own encode.
 */
#include <stdlib.h>

#include "h5fz_gpu.h"
#include "h5fz_gpu_context.h"
#include "h5fz_gpu_exec.h"
#include "h5fz_gpu_launch.h"
#include "h5fz_gpu_stage.h"

static int compare_doubles(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static int time_locked(h5fz_gpu_context *gc, const h5fz_chunk_plan *p, const uint8_t *in, int reps, double *enc_ms,
                       double *dec_ms, size_t *payload_bytes)
{
  int rc;
  chain_entry *c;
  dbuf *out = &gc->slots; /* decode target: the slots are free once packed */
  double *te = calloc((size_t)reps, sizeof *te), *td = calloc((size_t)reps, sizeof *td);
  CUevent e0 = NULL, e1 = NULL;
  if (!te || !td) {
    rc = h5fz_fail(H5FZ_ERR_NOMEM, "timing buffers");
    goto out;
  }
  TRY(h5fz_gpu_get_chain(gc, p, &c));
  TRY(h5fz_gpu_grow_chunk_encode(gc, p));
  size_t data_bytes = (size_t)p->n_elements * p->esize;
  TRY_CU(gc->cu->cuMemcpyHtoDAsync(gc->in.ptr, in, data_bytes, gc->stream), "copy to GPU");
  TRY_CU(gc->cu->cuEventCreate(&e0, 0), "cuEventCreate");
  TRY_CU(gc->cu->cuEventCreate(&e1, 0), "cuEventCreate");
  for (int r = -1; r < reps; r++) { /* r = -1 warms up */
    TRY_CU(gc->cu->cuEventRecord(e0, gc->stream), "cuEventRecord");
    TRY(h5fz_gpu_launch_encode(gc, c, p, 1, 0));
    TRY_CU(gc->cu->cuEventRecord(e1, gc->stream), "cuEventRecord");
    TRY_CU(gc->cu->cuEventSynchronize(e1), "cuEventSynchronize");
    float ms = 0;
    TRY_CU(gc->cu->cuEventElapsedTime(&ms, e0, e1), "cuEventElapsedTime");
    if (r >= 0) te[r] = ms;
  }
  unsigned long long totals[2];
  uint64_t costs[H5FZ_LND_NCOST * H5FZ_LND_COST_PARTS] = {0};
  TRY_CU(gc->cu->cuMemcpyDtoHAsync(totals, gc->totals.ptr, 16u, gc->stream), "copy totals");
  if (h5fz_plan_has_lnd(p) && h5fz_lnd_has_choice(p->lnd))
    TRY_CU(gc->cu->cuMemcpyDtoHAsync(costs, gc->lnd.ptr, sizeof costs, gc->stream), "copy costs from GPU");
  TRY(h5fz_gpu_sync_stream(gc, "timing"));
  *payload_bytes = totals[0];
  /* the decode runs with the predictor the encode chose (the header's), not the highest allowed */
  h5fz_chunk_plan pd = *p;
  if (h5fz_plan_has_lnd(p)) pd.lnd.dim = h5fz_lnd_choose(costs, H5FZ_LND_COST_PARTS, p->lnd);
  TRY(h5fz_gpu_grow(gc, out, data_bytes));
  TRY(h5fz_gpu_grow(gc, &gc->status, 4u));
  TRY_CU(gc->cu->cuMemsetD8Async(gc->status.ptr, 0, 4, gc->stream), "clear decode status");
  for (int r = -1; r < reps; r++) {
    TRY_CU(gc->cu->cuEventRecord(e0, gc->stream), "cuEventRecord");
    TRY(h5fz_gpu_launch_decode(gc, c, &pd, 1, 0, out->ptr, NULL));
    TRY_CU(gc->cu->cuEventRecord(e1, gc->stream), "cuEventRecord");
    TRY_CU(gc->cu->cuEventSynchronize(e1), "cuEventSynchronize");
    float ms = 0;
    TRY_CU(gc->cu->cuEventElapsedTime(&ms, e0, e1), "cuEventElapsedTime");
    if (r >= 0) td[r] = ms;
  }
  int status = 0; /* a timed decode must also have read every sub-chunk */
  TRY_CU(gc->cu->cuMemcpyDtoHAsync(&status, gc->status.ptr, 4u, gc->stream), "copy decode status");
  TRY(h5fz_gpu_sync_stream(gc, "timing"));
  if (status) {
    rc = h5fz_fail(H5FZ_ERR_CORRUPT, "timed decode: the kernel refused sub-chunk %d of its own encode", status - 1);
    goto out;
  }
  qsort(te, (size_t)reps, sizeof *te, compare_doubles);
  qsort(td, (size_t)reps, sizeof *td, compare_doubles);
  *enc_ms = te[reps / 2];
  *dec_ms = td[reps / 2];
out:
  if (e0) gc->cu->cuEventDestroy(e0);
  if (e1) gc->cu->cuEventDestroy(e1);
  free(te);
  free(td);
  return rc;
}

int h5fz_gpu_time_kernels(const h5fz_chunk_plan *p, const uint8_t *in, int reps, double *enc_ms, double *dec_ms,
                          size_t *payload_bytes)
{
  if (reps < 1) return h5fz_fail(H5FZ_ERR_ARG, "reps must be >= 1");
  h5fz_gpu_context *gc;
  int rc = h5fz_gpu_enter(&gc);
  if (!rc) rc = time_locked(gc, p, in, reps, enc_ms, dec_ms, payload_bytes);
  h5fz_gpu_leave(gc);
  return rc;
}
