/*
 * h5fz_gpu.h - the GPU executor as the codec sees it.
 */
#ifndef H5FZ_GPU_H
#define H5FZ_GPU_H

#include "h5fz_chunk_plan.h"

/* Counters for tests and benchmarks. last_jit_source: 0 compiled, 1 disk
 * cache, 2 memory cache, 3 embedded at build time (see h5fz_jit_source). */
typedef struct {
  unsigned long long chunks_encoded, chunks_decoded;
  /* launches of the warp-fused kernels (device_ops/op_warp_fused.h) */
  unsigned long long warp_fused_encodes, warp_fused_decodes;
  double last_jit_ms;
  int last_jit_source;
  /* the context's creation, once per process and device (ms): cuInit, the
   * primary context with its streams and events, and all of it (with the
   * device query, NVRTC query and class registry) */
  double init_cuinit_ms, init_context_ms, init_ms;
  /* the last chunk call's work after its chain was ready (ms): staging,
   * launches, copies back; the first one is the first launch's cost */
  double last_exec_ms;
  unsigned long long chunks_seen; /* per-chunk calls that reached the executor */
  double first_exec_ms;           /* last_exec_ms of the context's first chunk call */
} h5fz_gpu_stats;

/* The GPU batches' *user_rc (h5fz_gpu_array_encode.h, _decode.h) when
 * there is no usable GPU at all (no driver, no device): the array path
 * then falls back to the CPU without a word. */
#define H5FZ_GPU_UNUSABLE 2

/* 1 when chunks of chunk_bytes for this chain should run on the GPU (the
 * planner's route; forced = 1 skips the route), 0 for the CPU, or a
 * negative status with h5fz_last_error() saying why the GPU is not usable
 * (no driver, no device, the planner refused every GPU class, JIT failed). */
int h5fz_gpu_route(const h5fz_chunk_plan *p, size_t chunk_bytes, int forced);

/* Encode one chunk on the GPU; same contract as h5fz_cpu_encode_chunk and
 * the same bytes. H5FZ_ERR_DEVICE on any CUDA failure (nothing is lost:
 * the caller falls back to the CPU). */
int h5fz_gpu_encode_chunk(const h5fz_chunk_plan *p, h5fz_header *h, const uint8_t *in, size_t in_bytes, void **out,
                          size_t *out_bytes);

/* Decode all sub-chunks on the GPU into values (n_elements x esize bytes);
 * the host has checked the size table. Outliers are patched by the caller. */
int h5fz_gpu_decode_chunk(const h5fz_chunk_plan *p, const uint32_t *entries, const uint8_t *payload,
                          size_t payload_bytes, const uint64_t *offsets, uint8_t *values);

void h5fz_gpu_get_stats(h5fz_gpu_stats *stats);

/* The plan the GPU executor uses for this chain (device, class, tuning). */
int h5fz_gpu_plan_for(const h5fz_chunk_plan *p, void *plan_out /* h5fz_plan * */);

/* Benchmark hook: upload in (p's n_elements values), then time the encode
 * kernels (fused encode + tail scan + pack) and the decode kernel reps
 * times each with CUDA events, after one warm-up; medians in ms.
 * *payload_bytes receives the packed payload size (no side section). */
int h5fz_gpu_time_kernels(const h5fz_chunk_plan *p, const uint8_t *in, int reps, double *enc_ms, double *dec_ms,
                          size_t *payload_bytes);

#endif /* H5FZ_GPU_H */
