/*
 * h5fz_settings.h - the H5FZ_* environment variables of fusion/, api/,
 * filter/ and python/'s C library, read in one place (h5fz_settings.c)
 * into one struct, once per process: every variable of every group (host:
 * H5FZ_THREADS and the launchers' rank counts; GPU: H5FZ_GPU_*,
 * H5FZ_BATCH_BYTES, H5FZ_WARMUP_DELAY_MS; device: H5FZ_DEVICE,
 * H5FZ_DEVICE_STRICT; JIT: H5FZ_JIT_EMBEDDED; H5FZ_QUIET; MPI:
 * H5FZ_MPI_*) comes from one snapshot of the environment taken at the
 * first read of any of them, so a process that changes a variable later
 * (setenv) keeps the first value: the environment gives a process its
 * defaults, and a handle that wants other ones says so through its options
 * (below). h5fz_settings_reload takes the snapshot again at the next read,
 * for tests and benchmarks that switch a variable between calls in one
 * process (bench/bench_gpu.c); h5fz_settings_set_gpu_ordinal changes the
 * process's GPU in it (h5fz_mpi_select_gpu). Each copy of the codec in a
 * process (the filter plugin, which libhdf5 loads with its own copy; the
 * dataset API's; the Python package's) has its own snapshot. The groups
 * are still handed out where they apply (the GPU group when the GPU
 * executor takes a call: h5fz_gpu_enter; the device group once per chunk
 * or array call: h5fz_codec.c, h5fz_array.c; H5FZ_JIT_EMBEDDED when the JIT
 * looks for a module). A value that is not a whole number in range is
 * ignored with one warning per variable (H5FZ_QUIET=1 silences it) only
 * where the variable matters. The planner's own files (H5FZ_REGISTRY,
 * H5FZ_CACHE_DIR) sit below fusion/ and read their variables themselves,
 * per call.
 *
 * Configuration as a value (docs/design.md, "Configuration"): a caller
 * with a handle (the dataset API, the Python package) hands down an
 * h5fz_overrides for the duration of its call (h5fz_overrides_enter /
 * _leave, on the calling thread); while it is in force, every field it
 * sets (device, strictness, GPU ordinal, host threads, quiet, cache
 * folder) is taken from it and its variable is not read: the environment
 * gives the defaults only. What has no handle (the filter: HDF5 hands it
 * cd_values only) follows the process's overrides
 * (h5fz_overrides_set_process: h5fz_set_process_options,
 * h5fz.set_process_options, and a plugin copy told through
 * h5fz_plugin_settings). Field by field, the calling thread's overrides
 * win, then the process's, then the environment's snapshot.
 */
#ifndef H5FZ_SETTINGS_H
#define H5FZ_SETTINGS_H

#include <stddef.h>

/* What tunes the executors (0: the default, from the plan or the machine). */
typedef struct {
  /* host group */
  unsigned host_threads; /* H5FZ_THREADS, 1..1024; 0: the CPUs this process may use (h5fz_cpu_budget.h) */
  /* The ranks of an MPI job on this node, as its launcher says (0: not
   * under one): OMPI_COMM_WORLD_LOCAL_SIZE (Open MPI), MPI_LOCALNRANKS
   * (MPICH's and Intel MPI's Hydra), SLURM_STEP_TASKS_PER_NODE (srun; a
   * list such as "2(x3),1": its largest count), the first one set that
   * reads as a count, without linking MPI. Not SLURM_NTASKS_PER_NODE: a
   * batch script's own programs, which are no rank, have it too. */
  unsigned node_ranks;
  const char *node_ranks_from; /* the variable's name, or NULL */
  /* GPU group */
  int gpu_ordinal;                /* H5FZ_GPU_ORDINAL, 0..1023: the GPU context the call uses */
  size_t gpu_memory_limit;        /* H5FZ_GPU_MEMORY_LIMIT bytes; SIZE_MAX: unlimited */
  int gpu_threads;                /* H5FZ_GPU_THREADS, a multiple of 32 in 64..1024; 0: the plan's */
  int gpu_regs;                   /* H5FZ_GPU_REGS, 16..255; 0: the plan's */
  int gpu_wf_warps;               /* H5FZ_GPU_WF_WARPS, 1, 2, 4 or 8; 0: codegen's */
  int gpu_warp_fused;             /* H5FZ_GPU_WARP_FUSED: 0 keeps the warp-fused kernels out; default 1 */
  unsigned long long batch_bytes; /* H5FZ_BATCH_BYTES of chunk data per batch; default 512 MiB */
  /* H5FZ_WARMUP_DELAY_MS, 0..10000, for tests: the warm-up thread holds
   * the context that long first (a slow context creation where there is
   * no GPU) */
  int warmup_delay_ms;
  int gpu_ordinal_set; /* H5FZ_GPU_ORDINAL is set (not empty): the user chose the GPU */
  /* device group */
  int device;           /* H5FZ_DEVICE: H5FZ_SETTING_DEVICE_* (unset or empty: auto; any case) */
  char device_text[64]; /* H5FZ_DEVICE as given (cut at 63 bytes), for the message of a bad one */
  int device_strict;    /* H5FZ_DEVICE_STRICT set, not empty and not "0" */
  /* JIT group */
  int jit_embedded; /* H5FZ_JIT_EMBEDDED: 0 keeps the build-time kernels out; default 1 */
  /* MPI group (api/h5fz_dataset_mpi.c) */
  int mpi_profile; /* H5FZ_MPI_PROFILE set, not empty and not "0": rank 0 prints each phase's seconds */
  /* H5FZ_MPI_WRITE: how the collective API stores its chunks:
   * H5FZ_SETTING_MPI_WRITE_AUTO (unset, empty or "auto": through HDF5's
   * collective filtered write when the loaded plugin takes prepared
   * containers, else direct; one rank: direct), _FILTERED ("filtered":
   * that write with one rank too, where the plugin takes them) or _DIRECT
   * ("direct": every rank H5Dwrite_chunk's every chunk; for comparing) */
  int mpi_write;
  /* H5FZ_MPI_PIECE_BYTES (default 512 MiB): the collective API cuts a
   * rank's part along its slowest axis into pieces of at most this many
   * bytes of values (whole chunk rows, at least one) and encodes the next
   * piece while HDF5 writes the last; 0 keeps the part whole (encode all,
   * then write) */
  unsigned long long mpi_piece_bytes;
} h5fz_settings;

/* h5fz_settings.device */
#define H5FZ_SETTING_DEVICE_AUTO 0
#define H5FZ_SETTING_DEVICE_CPU 1
#define H5FZ_SETTING_DEVICE_GPU 2
#define H5FZ_SETTING_DEVICE_BAD (-1) /* none of auto, cpu, gpu (device_text says what) */

/* h5fz_settings.mpi_write */
#define H5FZ_SETTING_MPI_WRITE_AUTO 0
#define H5FZ_SETTING_MPI_WRITE_DIRECT 1
#define H5FZ_SETTING_MPI_WRITE_FILTERED 2

#define H5FZ_SETTINGS_HOST 1u
#define H5FZ_SETTINGS_GPU 2u
#define H5FZ_SETTINGS_DEVICE 4u
#define H5FZ_SETTINGS_JIT 8u
#define H5FZ_SETTINGS_MPI 16u

/* Read the groups in `groups` (H5FZ_SETTINGS_*) into *s, from the
 * process's snapshot of the environment (taken now if this is the first
 * read); the other fields are left as they are. A field the calling
 * thread's overrides set (h5fz_overrides_enter) comes from them, else one
 * the process's overrides set (h5fz_overrides_set_process) from those, its
 * variable unread. Never fails
 * (a bad value: the default, warned). */
void h5fz_settings_read(h5fz_settings *s, unsigned groups);

/* Take the snapshot of the environment's H5FZ_* variables again at their
 * next read: for a test or benchmark that changes one of them (setenv)
 * between calls in one process. Call it with no h5fz call in flight that
 * reads them; a program with a handle sets its options instead. It reaches
 * this copy of the codec only: the filter plugin's copy keeps its own
 * snapshot (set the variables before the plugin's first call). */
void h5fz_settings_reload(void);

/* setenv(name, value) (value NULL: unsetenv), then h5fz_settings_reload:
 * for tests and benchmarks that switch a variable between calls of one
 * process. Reaches this copy of the codec only (a plugin's copy is told
 * through h5fz_plugin_settings). */
void h5fz_settings_setenv(const char *name, const char *value);

/* Make ordinal (0..1023) this process's GPU, as if H5FZ_GPU_ORDINAL had
 * said it when the snapshot was taken (the other variables keep the
 * snapshot's values; one not taken yet is taken now). For
 * h5fz_mpi_select_gpu, which chooses a rank's GPU after the process may
 * have read its settings, and for the plugin's entry point that hands its
 * copy the same choice (filter/h5fz_plugin_gpu.h). An options value's
 * ordinal still wins for its calls; h5fz_settings_reload goes back to the
 * environment. H5FZ_OK, or H5FZ_ERR_ARG out of range. */
int h5fz_settings_set_gpu_ordinal(int ordinal);

/* 1 when h5fz's warnings on stderr stay silent: the calling thread's
 * overrides say quiet, or (where they do not say) the process's do, or
 * (where neither says) H5FZ_QUIET is set (not empty, not starting with
 * '0'). */
int h5fz_settings_quiet(void);

/* The folder of the JIT and calibration caches into out (out_len bytes):
 * the calling thread's overrides' cache_dir when set, else the process's
 * overrides' when set, else the planner's
 * (H5FZ_CACHE_DIR, $XDG_CACHE_HOME/h5fz, ~/.cache/h5fz). H5FZ_OK, or
 * H5FZ_ERR_ARG when there is none or it does not fit. */
int h5fz_settings_cache_dir(char *out, size_t out_len);

/* The value of h5fz's variable name (one of those read once per process)
 * copied into buf (len bytes), or NULL when it is unset: for the layers
 * that read a variable of their own (the CLI's H5FZ_CHUNK_WALK) or hand
 * one to the planner, which sits below fusion/ (H5FZ_REGISTRY for
 * h5fz_registry_load_default), so that no getenv of an H5FZ_ variable is
 * left outside fusion/h5fz_settings.c. */
const char *h5fz_settings_value(const char *name, char *buf, size_t len);

/* The longest value (with its NUL) of an h5fz variable: a path's
 * (PATH_MAX); a longer one is ignored with a warning, and a value that does
 * not fit a caller's len is refused the same way, never cut. Callers of
 * h5fz_settings_value for a path give a buffer of this size. */
#define H5FZ_SETTINGS_VALUE_MAX 4096

/* What a caller with a handle hands down in place of the environment.
 * A field left H5FZ_UNSET (or cache_dir "") keeps the environment's. */
#define H5FZ_UNSET (-2147483647 - 1)
#define H5FZ_CACHE_DIR_MAX 1024
/* The ranges every side that takes these settings checks (the variables,
 * the options' setters, the plugin's message, the process's overrides). */
#define H5FZ_GPU_ORDINAL_MAX 1023  /* ordinals 0..1023 */
#define H5FZ_HOST_THREADS_MAX 1024 /* 1..1024 host threads (0: one a core) */
typedef struct {
  int device;                         /* H5FZ_SETTING_DEVICE_AUTO, _CPU or _GPU */
  int device_strict;                  /* 0 or 1: a device problem fails the call (H5FZ_DEVICE_STRICT) */
  int gpu_ordinal;                    /* 0..1023: the GPU the calls use (H5FZ_GPU_ORDINAL) */
  int host_threads;                   /* 0 (the cores) or 1..1024 (H5FZ_THREADS) */
  int quiet;                          /* 0 or 1: h5fz's warnings stay silent (H5FZ_QUIET) */
  char cache_dir[H5FZ_CACHE_DIR_MAX]; /* the JIT cache folder (H5FZ_CACHE_DIR) */
} h5fz_overrides;

/* Every field unset: the environment's defaults. */
void h5fz_overrides_init(h5fz_overrides *o);

/* Put o in force on the calling thread until h5fz_overrides_leave (o must
 * outlive that; NULL: none, the environment alone); returns the overrides
 * in force before, for h5fz_overrides_leave to restore, so scopes nest.
 * Threads the call starts read what the call handed them (the host thread
 * count is read before the workers start; the GPU warm-up thread uses
 * the process's snapshot). */
const h5fz_overrides *h5fz_overrides_enter(const h5fz_overrides *o);

/* End the scope h5fz_overrides_enter began: previous back in force. */
void h5fz_overrides_leave(const h5fz_overrides *previous);

/* Make a copy of *o this copy of the codec's process overrides (NULL:
 * none, the environment again): every read of every thread from now on
 * takes each field they set, unless the calling thread's overrides
 * (h5fz_overrides_enter) set that field too; the environment gives the
 * fields neither sets. For what has no handle to hand its options down
 * (the filter, set_local, a dataset handle without options). Safe against
 * reads on other threads (a read copies the merged overrides once);
 * threads of a call already running keep what the call read. H5FZ_OK, or
 * H5FZ_ERR_ARG (nothing changed) for a field out of the range the
 * h5fz_overrides comments give or a cache_dir without its NUL. */
int h5fz_overrides_set_process(const h5fz_overrides *o);

/* The integer environment variable name: its value when it is a whole
 * number in [lo, hi] (and a multiple of multiple_of when that is > 1), dflt
 * when it is unset or empty; any other value is ignored (dflt) with one
 * warning per variable on stderr unless H5FZ_QUIET is set. */
long long h5fz_env_int(const char *name, long long lo, long long hi, long long multiple_of, long long dflt);

/* The same for a power of two in [lo, hi] (lo >= 1): any other value is
 * ignored with the warning. */
long long h5fz_env_pow2(const char *name, long long lo, long long hi, long long dflt);

#endif /* H5FZ_SETTINGS_H */
