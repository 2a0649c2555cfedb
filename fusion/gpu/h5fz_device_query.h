/*
 * h5fz_device_query.h - describe a real GPU and the host's NVRTC for the
 * planner, through the one CUDA binding of h5fz (h5fz_cuda.c): the planner
 * receives the filled h5fz_device_desc and never loads CUDA itself.
 * Return codes are h5fz_status codes (errors/h5fz_status.h); a failed
 * detection also sets the thread's message (h5fz_last_error) to the reason
 * it writes to why.
 */
#ifndef H5FZ_DEVICE_QUERY_H
#define H5FZ_DEVICE_QUERY_H

#include <stddef.h>

#include "h5fz_planner.h"

/* Detect GPU number `ordinal` (0 = first) through the Driver API
 * (libcuda.so.1, opened at run time by h5fz_cuda.c) and the host's NVRTC
 * (h5fz_nvrtc_query). On success returns H5FZ_OK and *out describes
 * the device. Without a driver or device returns H5FZ_ERR_DEVICE,
 * *out is the "none" device and why holds the reason, e.g.
 * "libcuda.so.1 not found: no NVIDIA driver". NVRTC is queried in both
 * cases (failure to find it is recorded in out->nvrtc_why, not an error).
 * The PCIe link is read from sysfs when it can be; otherwise gen 4 x16 is
 * assumed and out->note says so. H5FZ_ERR_ARG when out is NULL. why
 * may be NULL when why_len is 0. */
int h5fz_device_detect(int ordinal, h5fz_device_desc *out, char *why, size_t why_len);

/* Query the host's NVRTC (opened by h5fz_cuda.c) for its version and
 * supported architectures (nvrtcGetSupportedArchs) and store them in the
 * nvrtc_* fields of *dev (other fields untouched). Returns H5FZ_OK, or
 * H5FZ_ERR_DEVICE with dev->nvrtc_known = 0 and the reason in
 * dev->nvrtc_why and in why; H5FZ_ERR_ARG when dev is NULL. */
int h5fz_nvrtc_query(h5fz_device_desc *dev, char *why, size_t why_len);

/* GPUs the driver shows this process (CUDA_VISIBLE_DEVICES applied): what
 * h5fz_mpi_select_gpu spreads a node's ranks over. 0 without a driver or
 * device; never fails. Creates no CUDA context (cuInit only). */
int h5fz_gpu_visible_count(void);

#endif /* H5FZ_DEVICE_QUERY_H */
