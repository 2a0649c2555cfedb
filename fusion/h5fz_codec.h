/*
 * h5fz_codec.h - what h5fz_codec.c gives the rest of fusion/ besides the
 * public codec of h5fz.h: the device choice the array path shares.
 */
#ifndef H5FZ_CODEC_H
#define H5FZ_CODEC_H

#include "h5fz.h"

/* H5FZ_DEVICE=auto|gpu|cpu (unset or empty: auto, any case); H5FZ_ERR_ARG
 * with the reason otherwise. */
typedef enum { H5FZ_DEVICE_AUTO, H5FZ_DEVICE_CPU, H5FZ_DEVICE_GPU } h5fz_device_mode;
int h5fz_read_device_mode(h5fz_device_mode *mode);

#endif /* H5FZ_CODEC_H */
