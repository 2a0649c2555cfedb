/*
 * h5fz_gpu_array.h - the GPU batches of the array path (h5fz_gpu_array.c):
 * many equal chunks per launch, for h5fz_array.c, which chooses the device
 * and falls back to the CPU.
 */
#ifndef H5FZ_GPU_ARRAY_H
#define H5FZ_GPU_ARRAY_H

#include "h5fz_batch.h"

/* GPU batches (h5fz_gpu_array.c). *done receives the chunks handed to the
 * sink (encode) or written to data (decode) before a failure, so the CPU
 * path can take over from there; *user_rc is 1 when the sink or source
 * stopped it (its status is returned), H5FZ_GPU_UNUSABLE when there is no
 * usable GPU at all (no driver, no device). */
#define H5FZ_GPU_UNUSABLE 2
int h5fz_gpu_array_encode(const h5fz_spec *spec, const h5fz_array_geom *g, const void *data, int on_device,
                          h5fz_chunk_sink sink, void *ctx, h5fz_array_exec *ex, uint64_t *done, int *user_rc);
int h5fz_gpu_array_decode(const h5fz_array_geom *g, const h5fz_spec *want, double fill, h5fz_chunk_source source,
                          void *ctx, void *data, int on_device, h5fz_array_exec *ex, uint64_t *done, int *user_rc);

#endif /* H5FZ_GPU_ARRAY_H */
