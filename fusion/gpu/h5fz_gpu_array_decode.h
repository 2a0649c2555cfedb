/*
 * h5fz_gpu_array_decode.h - the GPU batches' decode (h5fz_gpu_array_decode.c), for
 * h5fz_array.c, which chooses the device and falls back to the CPU.
 */
#ifndef H5FZ_GPU_ARRAY_DECODE_H
#define H5FZ_GPU_ARRAY_DECODE_H

#include "h5fz_batch.h"
#include "h5fz_gpu.h"

/* h5fz_array_decode on the GPU (h5fz_batch.h): the chunks of a batch
 * that share the chain of its first compressed chunk in one launch, the
 * others decoded on the host; want: each container's dataset spec (dtype
 * and chunk shape set).
 * *done receives the chunks handed to the
 * sink (encode) or written to data (decode) before a failure, so the CPU
 * path can take over from there; *user_rc is 1 when the sink or source
 * stopped it (its status is returned), H5FZ_GPU_UNUSABLE (h5fz_gpu.h) when
 * there is no usable GPU at all (no driver, no device). Takes the lock of the GPU context of the settings'
 * ordinal (h5fz_gpu_enter). */
int h5fz_gpu_array_decode(const h5fz_array_geom *g, const h5fz_spec *want, double fill, h5fz_chunk_source source,
                          void *ctx, void *data, int on_device, h5fz_array_exec *ex, uint64_t *done, int *user_rc);

#endif /* H5FZ_GPU_ARRAY_DECODE_H */
