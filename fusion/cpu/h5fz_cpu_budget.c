/*
 * h5fz_cpu_budget.c - the CPUs this process may use (h5fz_cpu_budget.h):
 * the affinity mask, the cgroup quota found through /proc/self/mountinfo
 * and /proc/self/cgroup, the node's share among MPI ranks, H5FZ_THREADS
 * over all of them.
 *
 * The share is min(affinity, quota, online / node ranks), not affinity /
 * node ranks: a launcher that binds each rank to its own cores (Slurm's
 * --cpus-per-task, Open MPI's --bind-to core) already puts the rank's
 * share in its mask, and dividing that again would leave the rank's
 * cores idle; ranks left unbound each see the whole node, and
 * online / ranks is then their share.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "h5fz.h"
#include "h5fz_cpu_budget.h"
#include "h5fz_settings.h"

#define PATH_BYTES 4096

/* The CPUs in this thread's affinity mask (sched_getaffinity), for
 * machines of up to 65536 CPUs; 0 when it cannot be read. */
static unsigned affinity_cpus(void)
{
  for (int n = 1024; n <= 65536; n *= 2) {
    cpu_set_t *set = CPU_ALLOC(n);
    size_t size = CPU_ALLOC_SIZE(n);
    if (!set) return 0;
    int rc = sched_getaffinity(0, size, set);
    unsigned count = rc == 0 ? (unsigned)CPU_COUNT_S(size, set) : 0;
    int again = rc != 0 && errno == EINVAL; /* a mask larger than n CPUs */
    CPU_FREE(set);
    if (!again) return count;
  }
  return 0;
}

/* The first line of a small file into buf; 0, or -1 when it cannot be read. */
static int read_line(const char *path, char *buf, size_t len)
{
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  int ok = fgets(buf, (int)len, f) != NULL;
  fclose(f);
  return ok ? 0 : -1;
}

/* mountinfo escapes blanks and backslashes in paths as \ooo: undo, in place. */
static void unescape_octal(char *s)
{
  char *out = s;
  for (const char *p = s; *p; p++) {
    if (p[0] == '\\' && p[1] >= '0' && p[1] <= '3' && p[2] >= '0' && p[2] <= '7' && p[3] >= '0' && p[3] <= '7') {
      *out++ = (char)((p[1] - '0') * 64 + (p[2] - '0') * 8 + (p[3] - '0'));
      p += 3;
    } else {
      *out++ = *p;
    }
  }
  *out = '\0';
}

/* 1 when the comma-separated list holds item. */
static int list_has(const char *list, const char *item)
{
  size_t n = strlen(item);
  for (const char *p = list; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
    if (!strncmp(p, item, n) && (p[n] == ',' || p[n] == '\0' || p[n] == '\n')) return 1;
  return 0;
}

/* A cgroup hierarchy: v2 (cgroup2) or v1's cpu controller. */
typedef struct {
  int v2;
  char root[PATH_BYTES];  /* the mount's root within the hierarchy */
  char mount[PATH_BYTES]; /* where it is mounted */
  char path[PATH_BYTES];  /* the process's cgroup in it (/proc/self/cgroup) */
} hierarchy;

/* The mount of the hierarchy h->v2 names, from mountinfo: 0, or -1. */
static int find_mount(const char *mountinfo_path, hierarchy *h)
{
  FILE *f = fopen(mountinfo_path, "r");
  if (!f) return -1;
  char line[3 * PATH_BYTES];
  int found = -1;
  while (found && fgets(line, sizeof line, f)) {
    /* ID PARENT MAJ:MIN ROOT MOUNT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER_OPTIONS */
    char *field[64], *save = NULL;
    int n = 0;
    for (char *tok = strtok_r(line, " \n", &save); tok && n < 64; tok = strtok_r(NULL, " \n", &save)) field[n++] = tok;
    int sep = 6;
    while (sep < n && strcmp(field[sep], "-")) sep++;
    if (sep + 1 >= n) continue;
    const char *fstype = field[sep + 1], *super = sep + 3 < n ? field[sep + 3] : "";
    int match = h->v2 ? !strcmp(fstype, "cgroup2") : !strcmp(fstype, "cgroup") && list_has(super, "cpu");
    if (!match || strlen(field[3]) >= PATH_BYTES || strlen(field[4]) >= PATH_BYTES) continue;
    strcpy(h->root, field[3]);
    strcpy(h->mount, field[4]);
    unescape_octal(h->root);
    unescape_octal(h->mount);
    found = 0;
  }
  fclose(f);
  return found;
}

/* The process's cgroup in the hierarchy h->v2 names: 0, or -1. */
static int find_cgroup(const char *cgroup_path, hierarchy *h)
{
  FILE *f = fopen(cgroup_path, "r");
  if (!f) return -1;
  char line[PATH_BYTES + 256];
  int found = -1;
  while (found && fgets(line, sizeof line, f)) {
    /* ID:CONTROLLERS:PATH; v2's line is 0::PATH */
    char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    if (!c2) continue;
    *c1 = *c2 = '\0';
    const char *controllers = c1 + 1, *path = c2 + 1;
    int match = h->v2 ? !strcmp(line, "0") && !*controllers : list_has(controllers, "cpu");
    if (!match) continue;
    snprintf(h->path, sizeof h->path, "%s", path);
    h->path[strcspn(h->path, "\n")] = '\0';
    found = 0;
  }
  fclose(f);
  return found;
}

/* The quota in CPUs that the files of one cgroup folder set (0: none). */
static double folder_quota(const char *dir, int v2)
{
  char file[2 * PATH_BYTES + 32], text[128];
  if (v2) {
    snprintf(file, sizeof file, "%s/cpu.max", dir);
    if (read_line(file, text, sizeof text)) return 0.0;
    char *end;
    double quota = strtod(text, &end), period = strtod(end, NULL);
    return end != text && quota > 0 && period > 0 ? quota / period : 0.0; /* "max PERIOD": none */
  }
  snprintf(file, sizeof file, "%s/cpu.cfs_quota_us", dir);
  if (read_line(file, text, sizeof text)) return 0.0;
  double quota = strtod(text, NULL); /* -1: none */
  snprintf(file, sizeof file, "%s/cpu.cfs_period_us", dir);
  if (quota <= 0 || read_line(file, text, sizeof text)) return 0.0;
  double period = strtod(text, NULL);
  return period > 0 ? quota / period : 0.0;
}

/* The smallest quota from the process's cgroup folder up to the mount. */
static double hierarchy_quota(const char *mountinfo_path, const char *cgroup_path, int v2)
{
  hierarchy *h = calloc(1, sizeof *h);
  double least = 0.0;
  if (!h) return 0.0;
  h->v2 = v2;
  if (!find_mount(mountinfo_path, h) && !find_cgroup(cgroup_path, h)) {
    /* the cgroup relative to the mount's root; one outside it (not seen
     * through this mount) is looked for at the mount itself */
    size_t root_len = strcmp(h->root, "/") ? strlen(h->root) : 0;
    const char *rel = "";
    if (!root_len)
      rel = h->path;
    else if (!strncmp(h->path, h->root, root_len) && (h->path[root_len] == '/' || !h->path[root_len]))
      rel = h->path + root_len;
    char dir[2 * PATH_BYTES];
    snprintf(dir, sizeof dir, "%s%s", h->mount, rel);
    size_t mount_len = strlen(h->mount);
    for (;;) {
      double q = folder_quota(dir, v2);
      if (q > 0 && (least == 0.0 || q < least)) least = q;
      char *slash = strrchr(dir, '/');
      if (strlen(dir) <= mount_len || !slash || (size_t)(slash - dir) < mount_len) break;
      *slash = '\0';
    }
  }
  free(h);
  return least;
}

int h5fz_cgroup_cpu_quota(const char *mountinfo_path, const char *cgroup_path, double *cpus)
{
  double v2 = hierarchy_quota(mountinfo_path, cgroup_path, 1);
  double v1 = hierarchy_quota(mountinfo_path, cgroup_path, 0);
  double least = v2 > 0 && (v1 <= 0 || v2 < v1) ? v2 : v1;
  if (least <= 0) return 0;
  *cpus = least;
  return 1;
}

static double process_quota;

static void read_process_quota(void)
{
  double q = 0.0;
  if (h5fz_cgroup_cpu_quota("/proc/self/mountinfo", "/proc/self/cgroup", &q)) process_quota = q;
}

void h5fz_cpu_budget_read(h5fz_cpu_budget *b)
{
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  h5fz_settings s;
  h5fz_settings_read(&s, H5FZ_SETTINGS_HOST);
  pthread_once(&once, read_process_quota);
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  memset(b, 0, sizeof *b);
  b->setting = s.host_threads;
  b->online = online > 0 ? (unsigned)online : 1u;
  b->affinity = affinity_cpus();
  b->quota = process_quota;
  b->node_ranks = s.node_ranks ? s.node_ranks : 1u;
  b->node_ranks_from = s.node_ranks_from;
  double t = (double)(b->online / b->node_ranks); /* the node's share, for unbound ranks */
  if (t < 1) t = 1;
  if (b->affinity && b->affinity < t) t = b->affinity;
  if (b->quota > 0 && ceil(b->quota) < t) t = ceil(b->quota); /* 1.5 CPUs: 2 threads */
  if (b->setting) t = b->setting;
  if (t > H5FZ_MAX_HOST_THREADS) t = H5FZ_MAX_HOST_THREADS;
  b->threads = (unsigned)t;
}

const char *h5fz_cpu_budget_text(const h5fz_cpu_budget *b, char *buf, size_t len)
{
  char quota[64] = "no cgroup CPU quota", ranks[160] = "";
  if (b->quota > 0) snprintf(quota, sizeof quota, "cgroup quota %.3g CPUs", b->quota);
  if (b->node_ranks > 1 || b->node_ranks_from)
    snprintf(ranks, sizeof ranks, ", %u MPI ranks on this node (%s)", b->node_ranks,
             b->node_ranks_from ? b->node_ranks_from : "?");
  if (b->setting)
    snprintf(buf, len, "H5FZ_THREADS=%u%s", b->setting, b->threads < b->setting ? ", at most 64" : "");
  else
    snprintf(buf, len, "%u CPU%s in the affinity mask of %u online, %s%s%s", b->affinity, b->affinity == 1 ? "" : "s",
             b->online, quota, ranks, b->threads == H5FZ_MAX_HOST_THREADS ? ", at most 64" : "");
  return buf;
}

unsigned h5fz_host_threads(char *why, size_t len)
{
  h5fz_cpu_budget b;
  h5fz_cpu_budget_read(&b);
  if (why && len) h5fz_cpu_budget_text(&b, why, len);
  return b.threads;
}
