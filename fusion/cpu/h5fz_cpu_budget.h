/*
 * h5fz_cpu_budget.h - how many CPUs this process may use, for sizing the
 * host thread pool (h5fz_cpu_budget.c): the affinity mask
 * (sched_getaffinity: taskset, a launcher's binding, a container's
 * cpuset), the cgroup CPU quota (v2 cpu.max, v1 cpu.cfs_quota_us /
 * cpu.cfs_period_us, along the process's cgroup and its ancestors), and
 * the node's share when an MPI launcher says how many ranks run here.
 * The online CPU count alone started 2 workers under `taskset -c 0`, and
 * every rank of an MPI job as many threads as the whole node has.
 */
#ifndef H5FZ_CPU_BUDGET_H
#define H5FZ_CPU_BUDGET_H

#include <stddef.h>

/* The most host threads h5fz runs at once (the count caps at it). */
#define H5FZ_MAX_HOST_THREADS 64

/* Where the host thread count came from (h5fz_cpu_budget_read). */
typedef struct {
  unsigned threads;            /* the count, >= 1: setting, else min(affinity, quota, online / node_ranks) */
  unsigned setting;            /* H5FZ_THREADS (0: unset, the rest decides) */
  unsigned online;             /* online CPUs (sysconf) */
  unsigned affinity;           /* CPUs in the affinity mask (0: unknown) */
  double quota;                /* cgroup CPU quota in CPUs (0: none found) */
  unsigned node_ranks;         /* ranks of the job on this node (1 outside MPI) */
  const char *node_ranks_from; /* the launcher variable that said so, or NULL */
} h5fz_cpu_budget;

/* Fill *b for this process now: H5FZ_THREADS and the launcher's rank count
 * (h5fz_settings_read), the affinity mask, the online count, and the cgroup
 * quota (read from /proc once per process and kept: it is not expected to
 * change under a running process, and reading it costs a few file opens).
 * Never fails: what cannot be read does not limit. */
void h5fz_cpu_budget_read(h5fz_cpu_budget *b);

/* Where b->threads came from, as one line into buf ("4 CPUs in the
 * affinity mask of 4 online, cgroup quota 1.5 CPUs, 2 MPI ranks on this
 * node (OMPI_COMM_WORLD_LOCAL_SIZE)", or "H5FZ_THREADS=3"); returns buf. */
const char *h5fz_cpu_budget_text(const h5fz_cpu_budget *b, char *buf, size_t len);

/* The cgroup CPU quota of the process described by cgroup_path (the
 * format of /proc/self/cgroup) under the mounts listed in mountinfo_path
 * (the format of /proc/self/mountinfo): the smallest quota / period, in
 * CPUs, of its cgroup and every ancestor up to the mount's root, in the
 * cgroup v2 hierarchy (cpu.max: "QUOTA PERIOD" or "max PERIOD") and the
 * v1 cpu controller's (cpu.cfs_quota_us, -1 for none, and
 * cpu.cfs_period_us). Returns 1 with *cpus set when a quota limits it,
 * 0 when none does or the files cannot be read. Paths are parameters so
 * that a test can point them at a made-up tree. */
int h5fz_cgroup_cpu_quota(const char *mountinfo_path, const char *cgroup_path, double *cpus);

#endif /* H5FZ_CPU_BUDGET_H */
