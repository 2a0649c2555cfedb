/*
 * h5fz_device_choice.h - which executor takes a chunk (h5fz_device_choice.c),
 * for the public codec (h5fz_codec.c, one chunk) and the array path
 * (h5fz_array.c, many chunks) besides the checks of h5fz.h.
 */
#ifndef H5FZ_DEVICE_CHOICE_H
#define H5FZ_DEVICE_CHOICE_H

#include <stddef.h>

#include "h5fz_chunk_plan.h"
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

/* A chunk call's choice for the chunk planned as *p (chunk_bytes of
 * values), with s's device group already read: 1 the GPU executor, 0 the
 * CPU executor (auto without a usable GPU, or a GPU asked for and not
 * usable: warned once). Negative (the reason in h5fz_last_error) only
 * under s->device_strict: a device problem never fails a chunk otherwise. */
int h5fz_choose_gpu(const h5fz_chunk_plan *p, size_t chunk_bytes, const h5fz_settings *s);

/* h5fz_spec_chunk_bytes of spec as a size: 0 when the spec has no dataset
 * part, or past what half a size_t holds. */
size_t h5fz_spec_chunk_size(const h5fz_spec *spec);

#endif /* H5FZ_DEVICE_CHOICE_H */
