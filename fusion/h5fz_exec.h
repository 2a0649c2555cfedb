/*
 * h5fz_exec.h - what the executors share: making a chunk plan from a spec,
 * writing the container around an executor's payload, and the executors.
 */
#ifndef H5FZ_EXEC_H
#define H5FZ_EXEC_H

#include "h5fz_batch.h"
#include "h5fz_chain.h"

/* An executor's encoded sub-chunks: sub-chunk s's bytes start at
 * base + s * stride (stride 0: packed back to back), sizes in entries[]. */
typedef struct {
  const uint8_t *base;
  size_t stride;
  const uint32_t *entries;
} h5fz_payload;

/* Resolve spec + chunk into a plan and the matching header: element count,
 * sub-chunk geometry, the absolute bound (for REL: h5fz_rel_abs_bound of
 * the chunk's finite non-fill values). Returns H5FZ_OK, H5FZ_ERR_SPEC, H5FZ_ERR_ARG. */
int h5fz_chunk_plan_make(const h5fz_spec *spec, const void *in, size_t in_bytes,
                         h5fz_chunk_plan *p, h5fz_header *h);

/* The bits of the value that h5fz's encoder makes escape, so that it comes
 * back exactly (h5fz_quant_params.fill_bits): the spec's fill value in its
 * dtype (float32: low 32 bits) unless it is +0.0 (which bin 0 keeps
 * exactly); otherwise -0.0's bits, which escape in any case (LOSSLESS
 * keeps every value and ignores it). An encoder rule only: the chunk
 * format does not change. */
uint64_t h5fz_fill_bits(const h5fz_spec *spec);

/* The same with the absolute bound given (the batch path computes REL
 * ranges on the GPU). */
int h5fz_chunk_plan_make_eb(const h5fz_spec *spec, size_t in_bytes, double eb, h5fz_chunk_plan *p,
                            h5fz_header *h);

/* REL: the absolute bound of a chunk of dtype values whose finite non-fill
 * values span [lo, hi] (lo > hi: none): h5fz_rel_grid_floor of
 * bound / (1 + 2 bound) x (hi - lo) - m, m a unit in the last place of
 * dtype at the largest magnitude a decoded value can reach plus 2^-40 of
 * it, so the bins of successive encodes of a chunk nest, and neither a
 * decoded chunk's wider range nor the rounding of decoded values can take
 * a value past bound x the range (h5fz_codec.c says why); 0 when there is
 * none or the range is 0 or not finite. */
double h5fz_rel_abs_bound(double bound, double lo, double hi, h5fz_dtype dtype);

/* The largest normal power of 3 at most t (3^-644 .. 3^646), computed the
 * same way on every machine; 0 when there is none or t is not finite. */
double h5fz_pow3_floor(double t);

/* REL's grid: the largest C x 3^k at most t, C = 1/sqrt(2) in binary64
 * (h5fz_codec.c says why): p = h5fz_pow3_floor(t / C); the next power
 * h5fz_pow3_floor(3.5 p) instead when C x it <= t; the power before,
 * h5fz_pow3_floor(p / 2), when C x p > t; the result C x p; 0 below
 * DBL_MIN. */
double h5fz_rel_grid_floor(double t);

/* The h5fz_chunk_inspect summary of a header (n_raw_subchunks left 0). */
void h5fz_chunk_info_from_header(const h5fz_header *h, h5fz_chunk_info *info);

/* The plan a decoder uses, from a checked header. */
void h5fz_chunk_plan_from_header(const h5fz_header *h, h5fz_chunk_plan *p);

/* h5fz_chunk_info_check_spec on a header. */
int h5fz_header_check_spec(const h5fz_header *h, const h5fz_spec *want);


/* h5fz_container_write's answer when the container would be stored raw
 * and in is NULL: call again with the chunk's input. */
#define H5FZ_NEED_RAW_INPUT 1

/* Run fn(ctx, i) for i in [0, n) on up to h5fz_cpu_threads(n) threads
 * (contiguous ranges per thread). Returns the first nonzero status. */
int h5fz_parallel_for(uint64_t n, int (*fn)(void *ctx, uint64_t i), void *ctx);

/* Write a container (malloc'd, caller frees): header h (n_outliers set),
 * size table and payload, side section of h->n_outliers outliers
 * (pos[] global, strictly increasing; vals[] raw bits), the trailing
 * bytes of in (past the last whole element), checksum. Falls back to a
 * stored-raw container when that is not larger; in may be NULL when
 * in_bytes holds whole elements, and then that case returns
 * H5FZ_NEED_RAW_INPUT instead (call again with the input). */
int h5fz_container_write(const h5fz_header *h, const h5fz_payload *payload, const uint32_t *pos,
                         const void *vals, const uint8_t *in, size_t in_bytes, void **out,
                         size_t *out_bytes);

/* h5fz_chunk_decode_as on the CPU executor whatever H5FZ_DEVICE says (for
 * callers that hold the GPU executor's lock). */
int h5fz_chunk_decode_cpu_as(const void *in, size_t in_bytes, h5fz_dtype dtype, size_t chunk_bytes, void **out,
                             size_t *out_bytes);

/* H5FZ_DEVICE=auto|gpu|cpu (unset or empty: auto); H5FZ_ERR_ARG otherwise.
 * For the places where a refusal is safe (set_local at H5Dcreate, the CLI). */
typedef enum { H5FZ_DEVICE_AUTO, H5FZ_DEVICE_CPU, H5FZ_DEVICE_GPU } h5fz_device_mode;
int h5fz_read_device_mode(h5fz_device_mode *mode);

/* The device mode for one chunk call (encode or decode, one chunk or many):
 * as h5fz_read_device_mode, except that a value it cannot read selects the
 * CPU executor, with one warning, and H5FZ_OK; it fails only under
 * H5FZ_DEVICE_STRICT. A device problem never fails a chunk. */
int h5fz_chunk_device_mode(h5fz_device_mode *mode);

/* 1 when H5FZ_DEVICE_STRICT is set (not empty, not "0"): a chunk call fails
 * with H5FZ_ERR_DEVICE instead of falling back to the CPU executor, for
 * tests and benchmarks that must know the GPU ran. */
int h5fz_device_strict(void);

/* Threads the CPU executor uses for a chunk of n_subchunks (H5FZ_THREADS
 * overrides the processor count). */
unsigned h5fz_cpu_threads(uint32_t n_subchunks);

/* CPU executor: encode the chunk described by p/h into a container. */
int h5fz_cpu_encode_chunk(const h5fz_chunk_plan *p, h5fz_header *h, const uint8_t *in,
                          size_t in_bytes, void **out, size_t *out_bytes);

/* CPU executor: decode all sub-chunks into values (n_elements x esize bytes)
 * given the checked size table, payload base and per-sub-chunk offsets. */
int h5fz_cpu_decode_chunk(const h5fz_chunk_plan *p, const uint32_t *entries, const uint8_t *payload,
                          const uint64_t *offsets, uint8_t *values);

#endif /* H5FZ_EXEC_H */
