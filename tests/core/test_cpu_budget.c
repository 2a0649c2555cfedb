/*
 * test_cpu_budget.c - the host thread count (fusion/cpu/h5fz_cpu_budget.c).
 *
 * test_cpu_budget               the cgroup quota parser over made-up
 *                               /proc/self/mountinfo, /proc/self/cgroup and
 *                               cgroup trees in a temporary folder (v2
 *                               nested and "max", v1 with a container's
 *                               mount root, -1, an escaped mount point,
 *                               missing files); the MPI launchers' rank
 *                               counts; H5FZ_THREADS over everything
 * taskset -c 0 test_cpu_budget --one-cpu
 *                               under an affinity mask of one CPU: one
 *                               thread, and a parallel for runs on one
 *                               thread (the online count started 2)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "h5fz.h"
#include "h5fz_cpu_budget.h"
#include "h5fz_parallel.h"
#include "h5fz_settings.h"

#include "core_check.h"

static char root[256];

static void put(const char *rel, const char *text)
{
  char path[512];
  snprintf(path, sizeof path, "%s/%s", root, rel);
  /* the folders on the way */
  for (char *slash = strchr(path + strlen(root) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
    *slash = '\0';
    mkdir(path, 0755);
    *slash = '/';
  }
  FILE *f = fopen(path, "w");
  if (!f) {
    perror(path);
    exit(1);
  }
  fputs(text, f);
  fclose(f);
}

/* The quota of a made-up process: mountinfo and cgroup texts (%s: root). */
static double quota_of(const char *mountinfo_fmt, const char *cgroup)
{
  char text[2048], mi[512], cg[512];
  snprintf(text, sizeof text, mountinfo_fmt, root, root);
  put("proc/mountinfo", text);
  put("proc/cgroup", cgroup);
  snprintf(mi, sizeof mi, "%s/proc/mountinfo", root);
  snprintf(cg, sizeof cg, "%s/proc/cgroup", root);
  double cpus = -1.0;
  return h5fz_cgroup_cpu_quota(mi, cg, &cpus) ? cpus : 0.0;
}

static void check_cgroup_parser(void)
{
  /* v2: the process's cgroup allows 3 CPUs, its parent 1.5, the
   * grandparent none: the smallest along the way */
  put("v2/job/step/cpu.max", "300000 100000\n");
  put("v2/job/cpu.max", "150000 100000\n");
  put("v2/cpu.stat", "usage_usec 0\n"); /* the root has no cpu.max */
  const char *v2_mounts = "22 1 0:21 / /proc rw - proc proc rw\n"
                          "30 23 0:26 / %s/v2 rw,nosuid shared:4 - cgroup2 cgroup2 rw,nsdelegate\n";
  double q = quota_of(v2_mounts, "0::/job/step\n");
  CHECK(q == 1.5, "v2 nested: %g CPUs, want 1.5", q);
  put("v2/job/cpu.max", "max 100000\n");
  q = quota_of(v2_mounts, "0::/job/step\n");
  CHECK(q == 3.0, "v2 parent unlimited: %g CPUs, want 3", q);
  put("v2/job/step/cpu.max", "max 100000\n");
  q = quota_of(v2_mounts, "0::/job/step\n");
  CHECK(q == 0.0, "v2 all max: %g, want no quota", q);
  q = quota_of(v2_mounts, "0::/elsewhere\n");
  CHECK(q == 0.0, "v2 cgroup without files: %g, want no quota", q);

  /* v1 as a container without a cgroup namespace sees it: the mount's root
   * is the container's cgroup, the process's path the same */
  put("v1/cpu.cfs_quota_us", "250000\n");
  put("v1/cpu.cfs_period_us", "100000\n");
  const char *v1_mounts = "31 23 0:28 / /sys/fs/cgroup rw - tmpfs tmpfs rw\n"
                          "32 31 0:29 /docker/abc %s/v1 rw,relatime - cgroup cgroup rw,cpu,cpuacct\n"
                          "33 31 0:30 / %s/memory rw - cgroup cgroup rw,memory\n";
  q = quota_of(v1_mounts, "5:memory:/docker/abc\n4:cpu,cpuacct:/docker/abc\n0::/\n");
  CHECK(q == 2.5, "v1 container: %g CPUs, want 2.5", q);
  put("v1/cpu.cfs_quota_us", "-1\n");
  q = quota_of(v1_mounts, "4:cpu,cpuacct:/docker/abc\n");
  CHECK(q == 0.0, "v1 quota -1: %g, want no quota", q);

  /* a mount point with a blank (mountinfo writes it \040), v1 under it */
  put("with blank/sub/cpu.cfs_quota_us", "50000\n");
  put("with blank/sub/cpu.cfs_period_us", "100000\n");
  char escaped[2048];
  snprintf(escaped, sizeof escaped, "40 31 0:40 / %s/with\\040blank rw - cgroup cgroup rw,cpu\n", root);
  put("proc/mountinfo", escaped);
  put("proc/cgroup", "3:cpu:/sub\n");
  char mi[512], cg[512];
  snprintf(mi, sizeof mi, "%s/proc/mountinfo", root);
  snprintf(cg, sizeof cg, "%s/proc/cgroup", root);
  double cpus = 0.0;
  CHECK(h5fz_cgroup_cpu_quota(mi, cg, &cpus) == 1 && cpus == 0.5, "escaped mount point: %g CPUs, want 0.5", cpus);

  /* no such files: no quota, no failure */
  CHECK(h5fz_cgroup_cpu_quota("/nonexistent/mountinfo", "/nonexistent/cgroup", &cpus) == 0, "missing files");
}

static unsigned threads_with(const char *name, const char *value)
{
  if (value)
    setenv(name, value, 1);
  else
    unsetenv(name);
  h5fz_settings_reload(); /* the host group is read once per process */
  return h5fz_host_threads(NULL, 0);
}

static void check_launchers(void)
{
  static const char *const launchers[] = {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "SLURM_STEP_TASKS_PER_NODE"};
  unsetenv("H5FZ_THREADS");
  for (size_t i = 0; i < 3; i++) unsetenv(launchers[i]);
  h5fz_settings_reload();
  char why[300];
  unsigned alone = h5fz_host_threads(why, sizeof why);
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  printf("alone: %s\n", why);
  CHECK(alone >= 1 && alone <= H5FZ_MAX_HOST_THREADS && (long)alone <= online, "alone: %u threads, %ld online", alone,
        online);
  /* as many ranks on the node as it has CPUs: one thread each */
  char n[32];
  snprintf(n, sizeof n, "%ld", online);
  for (size_t i = 0; i < 3; i++) {
    unsigned t = threads_with(launchers[i], n);
    h5fz_host_threads(why, sizeof why);
    CHECK(t == 1 && strstr(why, launchers[i]), "%s=%s: %u threads (%s), want 1", launchers[i], n, t, why);
    unsetenv(launchers[i]);
  }
  /* Slurm's list: its largest count */
  snprintf(n, sizeof n, "1(x3),%ld", online);
  CHECK(threads_with("SLURM_STEP_TASKS_PER_NODE", n) == 1, "SLURM_STEP_TASKS_PER_NODE=%s", n);
  /* what is not a count is no launcher's word */
  CHECK(threads_with("SLURM_STEP_TASKS_PER_NODE", "2(x") == alone, "a malformed list counts");
  CHECK(threads_with("SLURM_STEP_TASKS_PER_NODE", "0") == alone, "0 ranks counts");
  unsetenv("SLURM_STEP_TASKS_PER_NODE");
  /* one rank: the whole budget */
  CHECK(threads_with("OMPI_COMM_WORLD_LOCAL_SIZE", "1") == alone, "one rank on the node");
  /* H5FZ_THREADS over everything, capped at 64 */
  snprintf(n, sizeof n, "%ld", online);
  setenv("MPI_LOCALNRANKS", n, 1);
  CHECK(threads_with("H5FZ_THREADS", "3") == 3, "H5FZ_THREADS=3 under MPI");
  CHECK(threads_with("H5FZ_THREADS", "1000") == H5FZ_MAX_HOST_THREADS, "H5FZ_THREADS=1000");
  unsetenv("H5FZ_THREADS");
  unsetenv("MPI_LOCALNRANKS");
  unsetenv("OMPI_COMM_WORLD_LOCAL_SIZE");
}

/* The distinct threads that ran the tasks of one parallel for. */
static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_t seen[H5FZ_MAX_HOST_THREADS + 1];
static unsigned n_seen;

static int note_thread(void *ctx, uint64_t i)
{
  (void)ctx;
  (void)i;
  usleep(200); /* long enough that every worker gets a range */
  pthread_mutex_lock(&seen_lock);
  unsigned k = 0;
  while (k < n_seen && !pthread_equal(seen[k], pthread_self())) k++;
  if (k == n_seen && n_seen <= H5FZ_MAX_HOST_THREADS) seen[n_seen++] = pthread_self();
  pthread_mutex_unlock(&seen_lock);
  return H5FZ_OK;
}

static int check_one_cpu(void)
{
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
    printf("skipped: one online CPU, a one-CPU mask limits nothing here\n");
    return 77;
  }
  unsetenv("H5FZ_THREADS");
  h5fz_settings_reload();
  char why[300];
  unsigned t = h5fz_host_threads(why, sizeof why);
  printf("under the mask: %s\n", why);
  CHECK(t == 1, "one CPU in the mask: %u threads, want 1", t);
  CHECK(h5fz_cpu_threads(1000) == 1, "h5fz_cpu_threads(1000) = %u, want 1", h5fz_cpu_threads(1000));
  CHECK(h5fz_parallel_for(256, note_thread, NULL) == H5FZ_OK, "parallel for");
  CHECK(n_seen == 1, "the parallel for ran on %u threads, want 1", n_seen);
  /* H5FZ_THREADS still overrides the mask */
  CHECK(threads_with("H5FZ_THREADS", "2") == 2, "H5FZ_THREADS=2 under a one-CPU mask");
  unsetenv("H5FZ_THREADS");
  return 0;
}

int main(int argc, char **argv)
{
  if (argc > 1 && !strcmp(argv[1], "--one-cpu")) {
    int rc = check_one_cpu();
    if (rc) return rc;
  } else {
    snprintf(root, sizeof root, "%s/h5fz_cpu_budget_XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(root)) {
      perror("mkdtemp");
      return 1;
    }
    check_cgroup_parser();
    check_launchers();
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", root);
  }
  printf("%ld checks, %d failures\n", checks, failures);
  return failures ? 1 : 0;
}
