/*
 * h5fz_gpu_stage.c - staging through the GPU context's pinned buffer.
 */
#include <string.h>

#include "h5fz_gpu_context.h"
#include "h5fz_gpu_stage.h"
#include "h5fz_parallel.h"

/* Staging a chunk through the pinned buffer on every core: the chunk is cut
 * into pieces of about 1 MiB (a 16 MiB chunk gives each of 16 cores one),
 * each copied by its own thread, so the host copies run at the cores'
 * summed memory bandwidth instead of one thread's, and each piece's DMA
 * starts as soon as its copy is done (to the device) or its copy starts as
 * soon as its DMA has landed (from the device). */
typedef struct {
  h5fz_gpu_context *gc;
  const uint8_t *src; /* to the device: the caller's bytes */
  uint8_t *dst;       /* from the device: where the bytes go */
  size_t bytes;
  uint32_t pieces;
  CUdeviceptr dev;
} stage_job;

static uint32_t stage_pieces(size_t bytes)
{
  size_t n = bytes >> 20;
  if (n > H5FZ_STAGE_MAX_PIECES) n = H5FZ_STAGE_MAX_PIECES;
  return n < 2 ? 1u : (uint32_t)n;
}

/* Piece i of s: [off, off + len), cut at 4 KiB boundaries. */
static void stage_piece(const stage_job *s, uint64_t i, size_t *off, size_t *len)
{
  size_t pages = (s->bytes + 4095u) / 4096u, a = pages * i / s->pieces * 4096u, b = pages * (i + 1) / s->pieces * 4096u;
  if (b > s->bytes) b = s->bytes;
  if (a > b) a = b;
  *off = a;
  *len = b - a;
}

static int stage_in_one(void *ctx, uint64_t i)
{
  const stage_job *s = ctx;
  h5fz_gpu_context *gc = s->gc;
  size_t off, len;
  stage_piece(s, i, &off, &len);
  uint8_t *pinned = (uint8_t *)gc->pinned + off;
  memcpy(pinned, s->src + off, len);
  CUresult r = gc->cu->cuCtxSetCurrent(gc->ctx);
  if (!r) r = gc->cu->cuMemcpyHtoDAsync(s->dev + off, pinned, len, gc->stream);
  return r ? h5fz_gpu_cuda_fail(r, "copy chunk to GPU") : H5FZ_OK;
}

static int stage_out_one(void *ctx, uint64_t i)
{
  const stage_job *s = ctx;
  h5fz_gpu_context *gc = s->gc;
  size_t off, len;
  stage_piece(s, i, &off, &len);
  CUresult r = gc->cu->cuCtxSetCurrent(gc->ctx);
  if (!r) r = gc->cu->cuEventSynchronize(gc->stage_ev[i]);
  if (r) return h5fz_gpu_cuda_fail(r, "copy values from GPU");
  memcpy(s->dst + off, (uint8_t *)gc->pinned + off, len);
  return H5FZ_OK;
}

int h5fz_gpu_stage_to_device(h5fz_gpu_context *gc, CUdeviceptr dev, const uint8_t *src, size_t bytes)
{
  stage_job s = {gc, src, NULL, bytes, stage_pieces(bytes), dev};
  return h5fz_parallel_for(s.pieces, stage_in_one, &s);
}

int h5fz_gpu_stage_from_device(h5fz_gpu_context *gc, uint8_t *dst, CUdeviceptr dev, size_t bytes)
{
  int rc = H5FZ_OK;
  stage_job s = {gc, NULL, dst, bytes, stage_pieces(bytes), dev};
  while (gc->n_stage_ev < (int)s.pieces)
    TRY_CU(gc->cu->cuEventCreate(&gc->stage_ev[gc->n_stage_ev++], 2 /* CU_EVENT_DISABLE_TIMING */), "cuEventCreate");
  for (uint32_t i = 0; i < s.pieces; i++) {
    size_t off, len;
    stage_piece(&s, i, &off, &len);
    TRY_CU(gc->cu->cuMemcpyDtoHAsync((uint8_t *)gc->pinned + off, dev + off, len, gc->stream), "copy values from GPU");
    TRY_CU(gc->cu->cuEventRecord(gc->stage_ev[i], gc->stream), "cuEventRecord");
  }
  rc = h5fz_parallel_for(s.pieces, stage_out_one, &s);
out:
  return rc;
}
