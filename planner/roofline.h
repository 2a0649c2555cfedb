/* roofline.h - throughput model of a plan (internal). */
#ifndef H5FZ_PLANNER_ROOFLINE_H
#define H5FZ_PLANNER_ROOFLINE_H

#include "h5fz_planner.h"

/* Fill p->roofline's bandwidths, blocks_per_sm and predicted_kernel_GBps
 * from p->device, p->tuning, p->target and p->options. */
void pl_roofline_fill(h5fz_plan *p);

/* Kernel and end-to-end GB/s for one chunk (see h5fz_plan_predict). */
void pl_predict(const h5fz_plan *p, uint64_t chunk_bytes, double *kernel_GBps, double *e2e_GBps);

/* Smallest chunk (bytes) for which the GPU route is faster than the CPU;
 * UINT64_MAX when it never is (or the plan is cpu). */
uint64_t pl_crossover(const h5fz_plan *p);

#endif
