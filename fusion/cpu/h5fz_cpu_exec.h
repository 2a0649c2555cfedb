/*
 * h5fz_cpu_exec.h - the CPU executor (h5fz_cpu_exec.c): one chunk's
 * sub-chunks spread over host threads.
 */
#ifndef H5FZ_CPU_EXEC_H
#define H5FZ_CPU_EXEC_H

#include "h5fz_chunk_plan.h"
#include "h5fz_chunk_read.h"

/* CPU executor: encode the chunk described by p/h into a container. */
int h5fz_cpu_encode_chunk(const h5fz_chunk_plan *p, h5fz_header *h, const uint8_t *in, size_t in_bytes, void **out,
                          size_t *out_bytes);

/* CPU executor: decode all sub-chunks into values (n_elements x esize bytes)
 * given the checked size table, payload base and per-sub-chunk offsets,
 * then put the n_outliers outliers (increasing positions pos, raw bits
 * vals; none when n_outliers is 0) in place: each sub-chunk's by the
 * thread that decoded it, so that this part of a chunk runs in parallel
 * too. */
int h5fz_cpu_decode_chunk(const h5fz_chunk_plan *p, const uint32_t *entries, const uint8_t *payload,
                          const uint64_t *offsets, uint8_t *values, const uint32_t *pos, const uint8_t *vals,
                          uint32_t n_outliers);

/* The sub-chunks of an opened container (h5fz_chunk_read_begin) decoded on
 * the CPU executor, outliers in place (r->outliers_placed set): the CPU
 * part of every container decode, the codec's fallback and the batches'
 * alike. Returns H5FZ_OK (then h5fz_chunk_read_end) or a negative status,
 * r freed. */
int h5fz_cpu_decode_read(h5fz_chunk_read *r);

/* A whole container decoded on the CPU executor whatever H5FZ_DEVICE says
 * (for the GPU batches, which hold the GPU executor's lock): the checks and
 * results of h5fz_chunk_decode_as (chunk_bytes of dtype; *out malloc'd,
 * caller frees). */
int h5fz_cpu_decode_container(const void *in, size_t in_bytes, h5fz_dtype dtype, size_t chunk_bytes, void **out,
                              size_t *out_bytes);

#endif /* H5FZ_CPU_EXEC_H */
