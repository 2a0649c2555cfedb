/*
 * h5fz_codec.h - what h5fz_codec.c gives the rest of fusion/ besides the
 * public codec of h5fz.h: the device choice the array path shares.
 */
#ifndef H5FZ_CODEC_H
#define H5FZ_CODEC_H

#include "h5fz.h"
#include "h5fz_settings.h"

/* H5FZ_DEVICE=auto|gpu|cpu (unset or empty: auto, any case); H5FZ_ERR_ARG
 * with the reason otherwise. For the places where a refusal is safe
 * (set_local at H5Dcreate, the CLI). */
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

#endif /* H5FZ_CODEC_H */
