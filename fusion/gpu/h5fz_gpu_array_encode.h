/*
 * h5fz_gpu_array_encode.h - the GPU batches' encode (h5fz_gpu_array_encode.c), for
 * h5fz_array.c, which chooses the device and falls back to the CPU.
 */
#ifndef H5FZ_GPU_ARRAY_ENCODE_H
#define H5FZ_GPU_ARRAY_ENCODE_H

#include "h5fz_batch.h"
#include "h5fz_gpu.h"

/* h5fz_array_encode on the GPU (h5fz_batch.h): all chunks of a batch
 * (H5FZ_BATCH_BYTES of chunk data) in one launch; H5FZ_ERR_UNSUPPORTED for
 * a lorenzo_nd chain (the per-chunk path takes it).
 * *done receives the chunks handed to the
 * sink (encode) or written to data (decode) before a failure, so the CPU
 * path can take over from there; *user_rc is 1 when the sink or source
 * stopped it (its status is returned), H5FZ_GPU_UNUSABLE (h5fz_gpu.h) when
 * there is no usable GPU at all (no driver, no device). Takes the lock of the GPU context of the settings'
 * ordinal (h5fz_gpu_enter). */
int h5fz_gpu_array_encode(const h5fz_spec *spec, const h5fz_array_geom *g, const void *data, int on_device,
                          h5fz_chunk_sink sink, void *ctx, h5fz_array_exec *ex, uint64_t *done, int *user_rc);

#endif /* H5FZ_GPU_ARRAY_ENCODE_H */
