/*
 * h5fz_settings.c - the environment variables of h5fz (H5FZ_THREADS,
 * H5FZ_GPU_THREADS, H5FZ_GPU_REGS, H5FZ_GPU_ORDINAL, H5FZ_GPU_MEMORY_LIMIT,
 * H5FZ_BATCH_BYTES, H5FZ_GPU_WARP_FUSED, H5FZ_GPU_WF_WARPS, H5FZ_WARMUP_DELAY_MS, H5FZ_DEVICE,
 * H5FZ_DEVICE_STRICT, H5FZ_JIT_EMBEDDED, H5FZ_QUIET, H5FZ_MPI_PROFILE,
 * H5FZ_MPI_WRITE, H5FZ_MPI_PIECE_BYTES), and the MPI launchers' count of
 * ranks on this node, read in one place into h5fz_settings, once per
 * process (a snapshot at the first read; h5fz_settings_reload takes it
 * again). The integer ones one way: a value that is not a
 * whole number in range is ignored with one warning per variable on stderr
 * (H5FZ_QUIET=1 silences it), never silently and never as a failed read or
 * write, since these only tune speed or memory. H5FZ_DEVICE is kept as
 * given when it names no device: the codec refuses it where refusing is
 * safe (h5fz_device_choice.h).
 */
#include <errno.h>
#include <stdint.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "h5fz_fail.h"
#include "h5fz_planner.h"
#include "h5fz_settings.h"

static pthread_mutex_t warned_lock = PTHREAD_MUTEX_INITIALIZER;
static const char *warned[16];

/* The overrides in force on this thread (h5fz_overrides_enter), or NULL. */
static _Thread_local const h5fz_overrides *in_force;

/* The process's overrides (h5fz_overrides_set_process), under snapshot.lock
 * (below: a process-wide setting like the snapshot, and covered by its fork
 * handlers); process_set is also read without the lock, so that a process
 * that never sets them pays no lock per read. */
static h5fz_overrides process_overrides;
static int process_set;

void h5fz_overrides_init(h5fz_overrides *o)
{
  memset(o, 0, sizeof *o);
  o->device = o->device_strict = o->gpu_ordinal = o->host_threads = o->quiet = H5FZ_UNSET;
}

const h5fz_overrides *h5fz_overrides_enter(const h5fz_overrides *o)
{
  const h5fz_overrides *previous = in_force;
  in_force = o;
  return previous;
}

void h5fz_overrides_leave(const h5fz_overrides *previous) { in_force = previous; }

/* The variables read once per process: a snapshot taken at the first read
 * of any of them, so that a program's later setenv (or a thread calling it
 * while a call reads) does not change a process's configuration mid-run,
 * and a call does not pay a getenv per variable; what a handle wants
 * differently it says through its overrides. All of h5fz's own variables
 * are here (host, GPU, device, JIT and MPI groups): one snapshot, so the
 * groups a process sees always come from one moment of its environment.
 * A test or tool that switches one between calls (bench/bench_gpu.c)
 * calls h5fz_settings_reload after its setenv. Only a name outside this
 * list (h5fz_env_int of a test's own variable) is read per call. */
static const char *const once_names[] = {
    /* host */
    "H5FZ_THREADS", "OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "SLURM_STEP_TASKS_PER_NODE",
    /* GPU */
    "H5FZ_GPU_ORDINAL", "H5FZ_GPU_MEMORY_LIMIT", "H5FZ_GPU_THREADS", "H5FZ_GPU_REGS", "H5FZ_GPU_WF_WARPS",
    "H5FZ_GPU_WARP_FUSED", "H5FZ_BATCH_BYTES", "H5FZ_WARMUP_DELAY_MS",
    /* device */
    "H5FZ_DEVICE", "H5FZ_DEVICE_STRICT",
    /* JIT */
    "H5FZ_JIT_EMBEDDED",
    /* quiet, MPI */
    "H5FZ_QUIET", "H5FZ_MPI_PROFILE", "H5FZ_MPI_WRITE", "H5FZ_MPI_PIECE_BYTES",
    /* the planner's files (handed to it: it sits below fusion/), the CLI's chunk walk */
    "H5FZ_REGISTRY", "H5FZ_CACHE_DIR", "H5FZ_CHUNK_WALK"};
#define N_ONCE (sizeof once_names / sizeof *once_names)
#define ONCE_VALUE_MAX H5FZ_SETTINGS_VALUE_MAX /* a longer value is ignored with a warning, never cut */
static struct {
  pthread_mutex_t lock;
  int taken;
  int set[N_ONCE], too_long[N_ONCE];
  char value[N_ONCE][ONCE_VALUE_MAX];
} snapshot = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* The index of name in once_names, or N_ONCE: a variable read per call. */
static size_t once_index(const char *name)
{
  size_t i = 0;
  while (i < N_ONCE && strcmp(once_names[i], name)) i++;
  return i;
}

/* fork() while another thread holds snapshot.lock (the GPU warm-up
 * thread reads the GPU group as it starts) would leave the child's copy
 * locked for ever: the fork waits for the lock, and both sides release it. */
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
static void snapshot_lock(void) { pthread_mutex_lock(&snapshot.lock); }
static void snapshot_unlock(void) { pthread_mutex_unlock(&snapshot.lock); }
static void set_atfork(void) { (void)pthread_atfork(snapshot_lock, snapshot_unlock, snapshot_unlock); }

/* Lock the snapshot (the fork handlers set first). */
static void lock_snapshot(void)
{
  pthread_once(&atfork_once, set_atfork);
  pthread_mutex_lock(&snapshot.lock);
}

/* Take the snapshot if this is the first read since the start or the last
 * h5fz_settings_reload; snapshot.lock held. */
static void take_snapshot_locked(void)
{
  if (snapshot.taken) return;
  for (size_t k = 0; k < N_ONCE; k++) {
    const char *v = getenv(once_names[k]);
    /* a value longer than any path (PATH_MAX) is ignored, said once below, rather than cut into another one */
    snapshot.too_long[k] = v != NULL && strlen(v) >= ONCE_VALUE_MAX;
    snapshot.set[k] = v != NULL && !snapshot.too_long[k];
    snprintf(snapshot.value[k], ONCE_VALUE_MAX, "%s", snapshot.set[k] ? v : "");
  }
  snapshot.taken = 1;
}

/* A field of an overrides value: unset, or in its range. */
static int in_range(int v, int lo, int hi) { return v == H5FZ_UNSET || (v >= lo && v <= hi); }

int h5fz_overrides_set_process(const h5fz_overrides *o)
{
  if (o &&
      !(in_range(o->device, H5FZ_SETTING_DEVICE_AUTO, H5FZ_SETTING_DEVICE_GPU) && in_range(o->device_strict, 0, 1) &&
        in_range(o->gpu_ordinal, 0, H5FZ_GPU_ORDINAL_MAX) && in_range(o->host_threads, 0, H5FZ_HOST_THREADS_MAX) && in_range(o->quiet, 0, 1) &&
        memchr(o->cache_dir, '\0', sizeof o->cache_dir)))
    return h5fz_fail(H5FZ_ERR_ARG, "h5fz_overrides_set_process: a field is out of its range");
  lock_snapshot();
  if (o) process_overrides = *o;
  __atomic_store_n(&process_set, o != NULL, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&snapshot.lock);
  return H5FZ_OK;
}

/* The overrides a read goes by: each field the calling thread's (an
 * options value of the call) when they set it, else the process's; m
 * holds the merge when both exist. NULL: neither, the environment alone.
 * Copied once per read, so a read sees one consistent set even while
 * another thread sets the process's. */
static const h5fz_overrides *in_effect(h5fz_overrides *m)
{
  const h5fz_overrides *t = in_force;
  if (!__atomic_load_n(&process_set, __ATOMIC_ACQUIRE)) return t;
  lock_snapshot();
  int set = process_set;
  if (set) *m = process_overrides;
  pthread_mutex_unlock(&snapshot.lock);
  if (!set) return t;
  if (t) {
    if (t->device != H5FZ_UNSET) m->device = t->device;
    if (t->device_strict != H5FZ_UNSET) m->device_strict = t->device_strict;
    if (t->gpu_ordinal != H5FZ_UNSET) m->gpu_ordinal = t->gpu_ordinal;
    if (t->host_threads != H5FZ_UNSET) m->host_threads = t->host_threads;
    if (t->quiet != H5FZ_UNSET) m->quiet = t->quiet;
    if (t->cache_dir[0]) memcpy(m->cache_dir, t->cache_dir, sizeof m->cache_dir);
  }
  return m;
}

/* The field of overrides ov (in_effect's), or H5FZ_UNSET. */
#define OVERRIDE(ov, field) ((ov) ? (ov)->field : H5FZ_UNSET)

void h5fz_settings_setenv(const char *name, const char *value)
{
  if (value)
    setenv(name, value, 1);
  else
    unsetenv(name);
  h5fz_settings_reload();
}

void h5fz_settings_reload(void)
{
  lock_snapshot();
  snapshot.taken = 0; /* the next read takes it again */
  pthread_mutex_unlock(&snapshot.lock);
}

/* The value of variable name copied into buf (len bytes), or NULL when it
 * is unset: from the snapshot for a variable read once per process, else
 * from the environment now. */
static const char *env_get(const char *name, char *buf, size_t len)
{
  size_t i = once_index(name);
  if (i < N_ONCE) {
    lock_snapshot();
    take_snapshot_locked();
    const char *r = snapshot.set[i] ? buf : NULL;
    if (r) snprintf(buf, len, "%s", snapshot.value[i]);
    int too_long = snapshot.too_long[i];
    snapshot.too_long[i] = 0; /* said once */
    pthread_mutex_unlock(&snapshot.lock);
    if (too_long) fprintf(stderr, "h5fz: %s is longer than %d bytes: ignored\n", name, ONCE_VALUE_MAX - 1);
    return r;
  }
  const char *v = getenv(name);
  if (!v) return NULL;
  snprintf(buf, len, "%s", v);
  return buf;
}

int h5fz_settings_set_gpu_ordinal(int ordinal)
{
  if (ordinal < 0 || ordinal > H5FZ_GPU_ORDINAL_MAX)
    return h5fz_fail(H5FZ_ERR_ARG, "h5fz_settings_set_gpu_ordinal: %d is not in 0..%d", ordinal, H5FZ_GPU_ORDINAL_MAX);
  size_t i = once_index("H5FZ_GPU_ORDINAL");
  lock_snapshot();
  /* the rest of the snapshot still comes from the environment, at this moment */
  take_snapshot_locked();
  snapshot.set[i] = 1;
  snprintf(snapshot.value[i], ONCE_VALUE_MAX, "%d", ordinal);
  pthread_mutex_unlock(&snapshot.lock);
  return H5FZ_OK;
}

int h5fz_settings_quiet(void)
{
  h5fz_overrides m;
  const h5fz_overrides *ov = in_effect(&m);
  if (OVERRIDE(ov, quiet) != H5FZ_UNSET) return OVERRIDE(ov, quiet) != 0;
  char buf[ONCE_VALUE_MAX];
  const char *quiet = env_get("H5FZ_QUIET", buf, sizeof buf);
  return quiet && *quiet && *quiet != '0';
}

const char *h5fz_settings_value(const char *name, char *buf, size_t len)
{
  char whole[ONCE_VALUE_MAX];
  if (!buf || !len || !env_get(name, whole, sizeof whole)) return NULL;
  if (strlen(whole) >= len) { /* never a cut value (another path): the caller's buffer is short */
    fprintf(stderr, "h5fz: %s does not fit %zu bytes: ignored\n", name, len);
    return NULL;
  }
  memcpy(buf, whole, strlen(whole) + 1);
  return buf;
}

int h5fz_settings_cache_dir(char *out, size_t out_len)
{
  char dir[ONCE_VALUE_MAX];
  h5fz_overrides m;
  const h5fz_overrides *ov = in_effect(&m);
  if (!ov || !ov->cache_dir[0]) return h5fz_planner_cache_dir(env_get("H5FZ_CACHE_DIR", dir, sizeof dir), out, out_len);
  if (!out || !out_len) return h5fz_fail(H5FZ_ERR_ARG, "h5fz_settings_cache_dir: NULL or empty buffer");
  int n = snprintf(out, out_len, "%s", ov->cache_dir);
  return n > 0 && (size_t)n < out_len
             ? H5FZ_OK
             : h5fz_fail(H5FZ_ERR_ARG, "the cache folder's path does not fit %zu bytes", out_len);
}

static void warn_once(const char *name, const char *value, const char *want)
{
  if (h5fz_settings_quiet()) return;
  int first = 1;
  pthread_mutex_lock(&warned_lock);
  size_t i = 0;
  for (; i < sizeof warned / sizeof *warned && warned[i]; i++)
    if (!strcmp(warned[i], name)) first = 0;
  if (first && i < sizeof warned / sizeof *warned) warned[i] = name;
  pthread_mutex_unlock(&warned_lock);
  if (first) fprintf(stderr, "h5fz: ignoring %s=%s (want %s); using the default\n", name, value, want);
}

long long h5fz_env_int(const char *name, long long lo, long long hi, long long multiple_of, long long dflt)
{
  char buf[ONCE_VALUE_MAX];
  const char *v = env_get(name, buf, sizeof buf);
  if (!v || !*v) return dflt;
  char *end = NULL;
  errno = 0;
  long long x = strtoll(v, &end, 10);
  if (errno || end == v || *end || x < lo || x > hi || (multiple_of > 1 && x % multiple_of)) {
    char want[128];
    if (multiple_of > 1)
      snprintf(want, sizeof want, "a multiple of %lld in %lld..%lld", multiple_of, lo, hi);
    else
      snprintf(want, sizeof want, "a whole number in %lld..%lld", lo, hi);
    warn_once(name, v, want);
    return dflt;
  }
  return x;
}

long long h5fz_env_pow2(const char *name, long long lo, long long hi, long long dflt)
{
  long long x = h5fz_env_int(name, lo, hi, 1, 0);
  if (!x) return dflt; /* unset, or out of range (warned) */
  if (x & (x - 1)) {
    char want[128];
    snprintf(want, sizeof want, "a power of two in %lld..%lld", lo, hi);
    char buf[ONCE_VALUE_MAX];
    warn_once(name, env_get(name, buf, sizeof buf), want);
    return dflt;
  }
  return x;
}

/* The fields the overrides ov set, over what the environment gave. */
static void apply_overrides(h5fz_settings *s, unsigned groups, const h5fz_overrides *ov)
{
  if ((groups & H5FZ_SETTINGS_HOST) && OVERRIDE(ov, host_threads) != H5FZ_UNSET)
    s->host_threads = (unsigned)OVERRIDE(ov, host_threads);
  if ((groups & H5FZ_SETTINGS_GPU) && OVERRIDE(ov, gpu_ordinal) != H5FZ_UNSET) {
    s->gpu_ordinal = OVERRIDE(ov, gpu_ordinal);
    s->gpu_ordinal_set = 1;
  }
  if ((groups & H5FZ_SETTINGS_DEVICE) && OVERRIDE(ov, device) != H5FZ_UNSET) {
    s->device = OVERRIDE(ov, device);
    snprintf(s->device_text, sizeof s->device_text, "%s",
             s->device == H5FZ_SETTING_DEVICE_CPU   ? "cpu"
             : s->device == H5FZ_SETTING_DEVICE_GPU ? "gpu"
                                                    : "auto");
  }
  if ((groups & H5FZ_SETTINGS_DEVICE) && OVERRIDE(ov, device_strict) != H5FZ_UNSET)
    s->device_strict = OVERRIDE(ov, device_strict) != 0;
}

/* A launcher's task count: "4", or Slurm's per-node list "2(x3),1" (its
 * largest count, so that no node's ranks oversubscribe); 0 when the text
 * is none of these. Not ours to warn about: a bad one is ignored. */
static unsigned launcher_count(const char *v)
{
  unsigned long most = 0;
  while (v && *v) {
    char *end;
    if (*v < '0' || *v > '9') return 0;
    unsigned long n = strtoul(v, &end, 10);
    if (*end == '(') { /* "(xM)": M nodes with n each */
      if (end[1] != 'x' || end[2] < '0' || end[2] > '9') return 0;
      strtoul(end + 2, &end, 10);
      if (*end++ != ')') return 0;
    }
    if (*end && *end != ',') return 0;
    if (n > most) most = n;
    v = *end ? end + 1 : end;
  }
  return most >= 1 && most <= 1u << 20 ? (unsigned)most : 0;
}

/* The first launcher variable that gives this node's rank count. */
static void read_node_ranks(h5fz_settings *s)
{
  static const char *const names[] = {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "SLURM_STEP_TASKS_PER_NODE"};
  s->node_ranks = 0;
  s->node_ranks_from = NULL;
  for (size_t i = 0; i < sizeof names / sizeof *names && !s->node_ranks; i++) {
    char buf[ONCE_VALUE_MAX];
    if ((s->node_ranks = launcher_count(env_get(names[i], buf, sizeof buf))) != 0) s->node_ranks_from = names[i];
  }
}

void h5fz_settings_read(h5fz_settings *s, unsigned groups)
{
  h5fz_overrides m;
  const h5fz_overrides *ov = in_effect(&m);
  /* a variable the overrides replace is not read: a bad value there is not the call's to warn about */
  if ((groups & H5FZ_SETTINGS_HOST) && OVERRIDE(ov, host_threads) == H5FZ_UNSET)
    s->host_threads = (unsigned)h5fz_env_int("H5FZ_THREADS", 1, H5FZ_HOST_THREADS_MAX, 1, 0);
  if (groups & H5FZ_SETTINGS_HOST) read_node_ranks(s);
  if (groups & H5FZ_SETTINGS_GPU) {
    if (OVERRIDE(ov, gpu_ordinal) == H5FZ_UNSET) s->gpu_ordinal = (int)h5fz_env_int("H5FZ_GPU_ORDINAL", 0, H5FZ_GPU_ORDINAL_MAX, 1, 0);
    long long limit = h5fz_env_int("H5FZ_GPU_MEMORY_LIMIT", 1, 0x7fffffffffffffffLL, 1, 0);
    s->gpu_memory_limit = limit ? (size_t)limit : SIZE_MAX;
    s->gpu_threads = (int)h5fz_env_int("H5FZ_GPU_THREADS", 64, 1024, 32, 0);
    s->gpu_regs = (int)h5fz_env_int("H5FZ_GPU_REGS", 16, 255, 1, 0);
    s->gpu_wf_warps = (int)h5fz_env_pow2("H5FZ_GPU_WF_WARPS", 1, 8, 0);
    s->gpu_warp_fused = (int)h5fz_env_int("H5FZ_GPU_WARP_FUSED", 0, 1, 1, 1);
    s->batch_bytes = (unsigned long long)h5fz_env_int("H5FZ_BATCH_BYTES", 1, 0x7fffffffffffffffLL, 1, 512ll << 20);
    s->warmup_delay_ms = (int)h5fz_env_int("H5FZ_WARMUP_DELAY_MS", 0, 10000, 1, 0);
    char ordinal_buf[ONCE_VALUE_MAX];
    const char *ordinal = env_get("H5FZ_GPU_ORDINAL", ordinal_buf, sizeof ordinal_buf);
    s->gpu_ordinal_set = ordinal && *ordinal;
  }
  if ((groups & H5FZ_SETTINGS_DEVICE) && OVERRIDE(ov, device) == H5FZ_UNSET) {
    char device_buf[ONCE_VALUE_MAX];
    const char *v = env_get("H5FZ_DEVICE", device_buf, sizeof device_buf);
    snprintf(s->device_text, sizeof s->device_text, "%s", v ? v : "");
    /* any case: GPU and Cpu are what people type too */
    if (!v || !*v || !strcasecmp(v, "auto"))
      s->device = H5FZ_SETTING_DEVICE_AUTO;
    else if (!strcasecmp(v, "cpu"))
      s->device = H5FZ_SETTING_DEVICE_CPU;
    else if (!strcasecmp(v, "gpu"))
      s->device = H5FZ_SETTING_DEVICE_GPU;
    else
      s->device = H5FZ_SETTING_DEVICE_BAD;
  }
  if (groups & H5FZ_SETTINGS_DEVICE) {
    char strict_buf[ONCE_VALUE_MAX];
    const char *strict = env_get("H5FZ_DEVICE_STRICT", strict_buf, sizeof strict_buf);
    s->device_strict = strict && *strict && strcmp(strict, "0") != 0;
  }
  if (groups & H5FZ_SETTINGS_MPI) {
    char profile_buf[ONCE_VALUE_MAX], write_buf[ONCE_VALUE_MAX];
    const char *profile = env_get("H5FZ_MPI_PROFILE", profile_buf, sizeof profile_buf);
    s->mpi_profile = profile && *profile && strcmp(profile, "0") != 0;
    const char *write = env_get("H5FZ_MPI_WRITE", write_buf, sizeof write_buf);
    s->mpi_write = H5FZ_SETTING_MPI_WRITE_AUTO;
    if (write && !strcasecmp(write, "direct"))
      s->mpi_write = H5FZ_SETTING_MPI_WRITE_DIRECT;
    else if (write && !strcasecmp(write, "filtered"))
      s->mpi_write = H5FZ_SETTING_MPI_WRITE_FILTERED;
    else if (write && *write && strcasecmp(write, "auto"))
      warn_once("H5FZ_MPI_WRITE", write, "auto, filtered or direct");
    s->mpi_piece_bytes =
        (unsigned long long)h5fz_env_int("H5FZ_MPI_PIECE_BYTES", 0, 0x7fffffffffffffffLL, 1, 512ll << 20);
  }
  if (groups & H5FZ_SETTINGS_JIT) s->jit_embedded = (int)h5fz_env_int("H5FZ_JIT_EMBEDDED", 0, 1, 1, 1);
  apply_overrides(s, groups, ov);
}
