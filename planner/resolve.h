/* resolve.h - availability of a kernel class on a device (internal). */
#ifndef H5FZ_PLANNER_RESOLVE_H
#define H5FZ_PLANNER_RESOLVE_H

#include "h5fz_planner.h"

/* 0 when class c can run the spec's ops[0..n_ops-1] on device d; *arch gets
 * the arch to build for (cubin: the device's; ptx: the virtual arch; cpu: 0).
 * Otherwise -1 with the reason in why. */
int pl_class_available(const h5fz_kernel_class *c, const h5fz_device_desc *d, const uint8_t *ops, size_t n_ops,
                       int *arch, char *why, size_t len);

#endif
