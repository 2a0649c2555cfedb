/*
 * h5fz_planner.h - the hardware planner of h5fz.
 *
 * The GPU executor asks the planner, before it generates code, which kernel
 * class to build for the device at hand (architecture, cubin or PTX, tuning)
 * and whether a chunk of a given size should go to the GPU at all.
 *
 *   device description  (detected through the Driver API, or read from a file)
 *   + registry of kernel classes (text, embedded at build time, or a file)
 *   + op ids of the spec
 *   -> h5fz_plan_make() -> plan: chosen class, refusals with reasons,
 *      roofline, route crossover, digest (goes into the JIT cache key).
 *
 * The planner knows nothing of HDF5 and generates no code. It never links
 * libcuda or libnvrtc: both are opened at run time with dlopen.
 *
 * Error handling: h5fz's one style (errors/h5fz_status.h): a function that
 * can fail returns an h5fz_status (H5FZ_OK = 0, negative = error) and
 * leaves a one-line reason for h5fz_last_error(). Where a function also
 * takes an (err, err_len) buffer, it gets a copy of that reason (NULL, 0:
 * none wanted; always NUL-terminated when len > 0); a (why, len) buffer is
 * not a failure but an answer (why a device is absent, a class refused).
 * Nothing prints, nothing aborts. All structs are plain values with fixed-size arrays: no function
 * allocates memory that the caller must free.
 *
 * Full description of the formats and formulas: docs/planner.md.
 */
#ifndef H5FZ_PLANNER_H
#define H5FZ_PLANNER_H

#include <stddef.h>
#include <stdint.h>

#include "h5fz_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- status codes: h5fz_status (errors/h5fz_status.h). The planner's
 * failures are H5FZ_ERR_ARG (NULL, bad size), H5FZ_ERR_NOMEM,
 * H5FZ_ERR_PARSE (malformed description, registry or calibration),
 * H5FZ_ERR_IO (a file cannot be opened or read), H5FZ_ERR_DEVICE (no
 * usable GPU, driver or NVRTC) and H5FZ_ERR_UNSUPPORTED (no class of the
 * chain is available). */

/* ---- limits --------------------------------------------------------------- */
#define H5FZ_PLAN_NAME_MAX 64    /* class, device and arch names, with NUL */
#define H5FZ_PLAN_REASON_MAX 192 /* one refusal reason, with NUL */
#define H5FZ_PLAN_PATH_MAX 512   /* file paths kept in structs, with NUL */
#define H5FZ_PLAN_NOTE_MAX 256   /* assumptions made, with NUL */
#define H5FZ_PLAN_MAX_ARCHS 32   /* NVRTC archs, archs of one class */
#define H5FZ_PLAN_MAX_CLASSES 16 /* classes in a registry */
#define H5FZ_PLAN_MAX_OPS 32     /* op ids listed by one class */

/* ---- device description --------------------------------------------------- */
/* Where a PCIe figure came from. */
typedef enum {
  H5FZ_PCIE_ASSUMED = 0,   /* unknown: default gen 4 x16 assumed (see note) */
  H5FZ_PCIE_DESCRIBED = 1, /* from a description file */
  H5FZ_PCIE_SYSFS = 2      /* from /sys/bus/pci/devices/<bus id>/ of the GPU */
} h5fz_pcie_source;

/* What the planner knows of one device and of the host's NVRTC.
 * All sizes in bytes, clocks in kHz, versions as the CUDA API writes them
 * (driver 12.8 -> 12080). A field that is unknown is 0. */
typedef struct {
  int present;                              /* 1: a GPU; 0: no GPU (see absent_reason) */
  char absent_reason[H5FZ_PLAN_REASON_MAX]; /* why there is no GPU */
  char name[H5FZ_PLAN_NAME_MAX];            /* "NVIDIA H200", "none" */
  char source[H5FZ_PLAN_PATH_MAX];          /* "driver" or the description file path */
  int cc_major, cc_minor;                   /* compute capability, e.g. 9, 0 */
  int sm_count;                             /* streaming multiprocessors */
  int max_threads_per_block;                /* e.g. 1024 */
  int max_threads_per_sm;                   /* resident threads per SM, e.g. 2048 */
  int smem_per_block;                       /* default shared memory per block (48 KiB) */
  int smem_per_block_optin;                 /* opt-in maximum shared memory per block */
  int smem_per_sm;                          /* shared memory per SM */
  int regs_per_block;                       /* 32-bit registers per block */
  int regs_per_sm;                          /* 32-bit registers per SM */
  int64_t mem_clock_khz;                    /* peak memory clock as the driver reports it */
  int mem_bus_bits;                         /* global memory bus width in bits */
  int64_t l2_bytes;                         /* L2 cache size */
  int64_t total_mem_bytes;                  /* device memory */
  int pcie_gen;                             /* 1..6 (0 = unknown) */
  int pcie_width;                           /* lanes, e.g. 16 (0 = unknown) */
  h5fz_pcie_source pcie_source;             /* where pcie_gen/width came from */
  int driver_version;                       /* cuDriverGetVersion, e.g. 12080; 0 unknown */
  /* NVRTC of this host (or of the described host): */
  int nvrtc_known;                      /* 1: fields below are valid */
  char nvrtc_why[H5FZ_PLAN_REASON_MAX]; /* why not known (nvrtc_known == 0) */
  int nvrtc_major, nvrtc_minor;         /* nvrtcVersion, e.g. 13, 0 */
  int n_nvrtc_archs;                    /* entries of nvrtc_archs */
  int nvrtc_archs[H5FZ_PLAN_MAX_ARCHS]; /* e.g. 75 80 86 ... 120, ascending */
  char note[H5FZ_PLAN_NOTE_MAX];        /* assumptions made while describing */
} h5fz_device_desc;

/* Fill *out with the "none" device (present = 0) and the given reason
 * (NULL = "no GPU"). NVRTC fields are left unknown. Never fails. */
void h5fz_device_none(h5fz_device_desc *out, const char *reason);

/* A real device is described by h5fz_device_detect and h5fz_nvrtc_query
 * (fusion/gpu/h5fz_device_query.h): the planner never loads CUDA itself. */

/* Read a device description file (key = value lines, '#' comments; format
 * in docs/planner.md and planner/devices/) into *out. Unknown keys and
 * malformed values are errors. Returns H5FZ_OK, H5FZ_ERR_IO
 * (cannot open) or H5FZ_ERR_PARSE; err gets "file:line: reason". */
int h5fz_device_load(const char *path, h5fz_device_desc *out, char *err, size_t err_len);

/* As h5fz_device_load, from text in memory (NUL-terminated). `origin` names
 * the text in messages and in out->source (NULL = "<text>"). */
int h5fz_device_parse(const char *text, const char *origin, h5fz_device_desc *out, char *err, size_t err_len);

/* Peak HBM/DRAM bandwidth of the device in GB/s (1e9 bytes/s):
 * 2 (double data rate) * mem_clock_khz * 1e3 * mem_bus_bits / 8 / 1e9.
 * 0 when the device is absent or the figures unknown. */
double h5fz_device_hbm_GBps(const h5fz_device_desc *dev);

/* PCIe bandwidth of the link in GB/s, one direction, after line encoding:
 * GT/s per lane (2.5, 5, 8, 16, 32, 64 for gen 1..6) * encoding efficiency
 * (8b/10b for gen 1-2, 128b/130b for gen 3-5, 242/256 FLIT for gen 6)
 * * width / 8. Gen 4 x16 when unknown. 0 when the device is absent. */
double h5fz_device_pcie_GBps(const h5fz_device_desc *dev);

/* ---- registry of kernel classes ------------------------------------------- */
typedef enum {
  H5FZ_TARGET_CUBIN = 0, /* NVRTC builds SASS for the device's sm_XX */
  H5FZ_TARGET_PTX = 1,   /* NVRTC builds PTX for compute_XX; driver JITs it */
  H5FZ_TARGET_CPU = 2    /* the CPU executor; always available */
} h5fz_target;

/* Feature flags a class uses (bit mask). Each needs a minimum arch. */
#define H5FZ_FEAT_SHFL 0x01u          /* warp shuffles (sm_30+) */
#define H5FZ_FEAT_LDG128 0x02u        /* 128-bit vector loads (sm_30+) */
#define H5FZ_FEAT_CP_ASYNC 0x04u      /* cp.async global->shared copies (sm_80+) */
#define H5FZ_FEAT_TMA 0x08u           /* tensor memory accelerator (sm_90+) */
#define H5FZ_FEAT_CLUSTER 0x10u       /* thread block clusters (sm_90+) */
#define H5FZ_FEAT_PADDED_PLANES 0x20u /* bitshuffle through padded shared-memory planes (+16.5 KiB/block) */
#define H5FZ_FEAT_WARP_FUSED 0x40u    /* warp-fused kernels for the default and fast float32 chains (sm_80+: warp reductions) */

/* Kernel tuning of a class: what the generated kernel looks like.
 * subchunk_bytes == threads_per_block * loads_per_thread * load_bytes for GPU
 * classes (checked when the registry is loaded). */
typedef struct {
  int threads_per_block; /* threads of one block (one block per sub-chunk);
                              0 for the CPU */
  int subchunk_bytes;    /* input bytes per sub-chunk */
  int loads_per_thread;  /* global loads each thread issues per sub-chunk */
  int load_bytes;        /* bytes per load: 4, 8 or 16 */
  int regs_per_thread;   /* register cap (__launch_bounds__/maxrregcount) */
  int smem_per_block;    /* shared memory the kernel uses per block, bytes */
  unsigned features;     /* H5FZ_FEAT_* */
  /* The entropy coders' one-slot encode (the ratio chain: quant lorenzo_nd
   * zigzag huff|huffctx, 64 KiB sub-chunks in 72 KiB of shared memory, so
   * that the coder's serial steps overlap other blocks): threads of its
   * blocks at any sub-chunk size and its register cap; 0: the class's
   * (threads_per_block scaled to the sub-chunk, regs_per_thread). */
  int entropy_threads_per_block;
  int entropy_regs_per_thread;
  /* The huff/huffctx group decode in launches that leave SMs idle (the
   * filter's one chunk): at most this many threads decode each group, in
   * parts (1, 2, 4 or 8; 0: 1, one thread a group). A launch-time choice:
   * the kernels' code and the plan's digest do not depend on it. */
  int entropy_decode_parts;
} h5fz_tuning;

typedef struct {
  char name[H5FZ_PLAN_NAME_MAX]; /* "hopper" */
  h5fz_target target;
  int n_archs;                    /* cubin: archs built for (e.g. 90) */
  int archs[H5FZ_PLAN_MAX_ARCHS]; /* arch numbers: sm_90 -> 90 */
  int min_arch;                   /* ptx: lowest device/virtual arch */
  int min_driver;                 /* lowest driver version, e.g. 12080 */
  h5fz_tuning tuning;
  int all_ops; /* 1: supports every op id */
  int n_ops;
  uint8_t ops[H5FZ_PLAN_MAX_OPS];    /* supported op ids when !all_ops */
  char fallback[H5FZ_PLAN_NAME_MAX]; /* next class of the chain; "" = end */
} h5fz_kernel_class;

typedef struct {
  char source[H5FZ_PLAN_PATH_MAX]; /* "embedded" or the file path */
  char start[H5FZ_PLAN_NAME_MAX];  /* first class of the chain */
  int n_classes;
  h5fz_kernel_class classes[H5FZ_PLAN_MAX_CLASSES];
} h5fz_registry;

/* The registry text embedded at build time (planner/registry/
 * kernel_classes.txt). Static storage, never NULL. */
const char *h5fz_registry_default_text(void);

/* Load the registry: from the file override when it is not NULL or empty
 * (the library passes H5FZ_REGISTRY's value from fusion's settings, the
 * one place that reads h5fz's variables), else the embedded text. Returns
 * H5FZ_OK or the error of h5fz_registry_parse / h5fz_registry_load_file
 * (reason in err). */
int h5fz_registry_load_default(const char *override, h5fz_registry *out, char *err, size_t err_len);

/* Load a registry file. H5FZ_ERR_IO if it cannot be read, else as
 * h5fz_registry_parse. */
int h5fz_registry_load_file(const char *path, h5fz_registry *out, char *err, size_t err_len);

/* Parse registry text (format in docs/planner.md). Checks: known keys,
 * fallback names exist, the chain from `start` has no cycle and ends in a
 * cpu class, tuning is consistent. H5FZ_ERR_PARSE with
 * "origin:line: reason" in err on failure. origin may be NULL. */
int h5fz_registry_parse(const char *text, const char *origin, h5fz_registry *out, char *err, size_t err_len);

/* Class by name, or NULL. The pointer is into *reg. */
const h5fz_kernel_class *h5fz_registry_find(const h5fz_registry *reg, const char *name);

/* ---- calibration ------------------------------------------------------------ */
/* Measured figures for one (device, class); a field < 0 is not set. */
typedef struct {
  int found; /* 1: a line matched */
  char path[H5FZ_PLAN_PATH_MAX];
  int line;           /* line of the last match */
  double kernel_GBps; /* measured kernel throughput (input bytes/s/1e9) */
  double overhead_us; /* measured fixed launch + sync cost per chunk */
  double cpu_GBps;    /* measured CPU executor throughput */
} h5fz_calibration;

/* The cache folder: dir when it is not NULL or empty (the library passes
 * H5FZ_CACHE_DIR's value from fusion's settings), else
 * $XDG_CACHE_HOME/h5fz, else $HOME/.cache/h5fz. Writes it to out
 * (NUL-terminated). Returns H5FZ_OK or H5FZ_ERR_ARG when there is none or
 * out is short. */
int h5fz_planner_cache_dir(const char *dir, char *out, size_t out_len);

/* Look up (device_name, class_name) in a calibration file (lines
 * "device | class | key=value ...", '*' matches any; the last matching line
 * wins field by field). path NULL = calibration.txt in
 * h5fz_planner_cache_dir(NULL, ...); the library and the CLI pass the path
 * in the folder of H5FZ_CACHE_DIR.
 * Returns H5FZ_OK (cal->found tells whether a line matched; a missing
 * file is not an error), or H5FZ_ERR_PARSE with "path:line: reason". */
int h5fz_calibration_lookup(const char *path, const char *device_name, const char *class_name, h5fz_calibration *cal,
                            char *err, size_t err_len);

/* ---- the plan --------------------------------------------------------------- */
typedef enum { H5FZ_EXEC_CPU = 0, H5FZ_EXEC_GPU = 1 } h5fz_exec_route;

/* Model constants; h5fz_plan_options_default fills the documented defaults. */
typedef struct {
  double cpu_GBps;        /* CPU executor throughput (default 1.0) */
  double overhead_us;     /* GPU launch + sync + copy setup per chunk (30) */
  double hbm_efficiency;  /* reachable fraction of peak HBM (0.80) */
  double pcie_efficiency; /* reachable fraction of the PCIe link (0.80) */
  double assumed_ratio;   /* compression ratio assumed for output bytes (4) */
  /* Calibration file; NULL = none is read (the default). When set,
   * h5fz_plan_make looks up (device name, chosen class) in it with
   * h5fz_calibration_lookup; a missing file means "not calibrated". The CLI
   * passes <cache dir>/calibration.txt. Not kept in the plan. */
  const char *calibration_path;
} h5fz_plan_options;

typedef struct {
  char klass[H5FZ_PLAN_NAME_MAX];
  char reason[H5FZ_PLAN_REASON_MAX];
} h5fz_refusal;

typedef struct {
  double hbm_GBps;              /* peak, from clock and bus width */
  double pcie_GBps;             /* link, one direction */
  double predicted_kernel_GBps; /* large chunks, input bytes / kernel time */
  double predicted_e2e_GBps[3]; /* at 1, 4, 16 MiB chunks, with PCIe */
  int blocks_per_sm;            /* resident blocks of the chosen tuning */
} h5fz_roofline;

typedef struct {
  /* device summary */
  h5fz_device_desc device;
  char registry_source[H5FZ_PLAN_PATH_MAX];
  /* the choice */
  char klass[H5FZ_PLAN_NAME_MAX]; /* chosen class, e.g. "hopper" or "cpu" */
  h5fz_target target;
  int arch;           /* 90 for sm_90/compute_90; 0 for cpu */
  char arch_name[24]; /* NVRTC --gpu-architecture: "sm_90",
                                     "compute_75"; "" for cpu */
  h5fz_tuning tuning;
  int n_refused;
  h5fz_refusal refused[H5FZ_PLAN_MAX_CLASSES]; /* in chain order */
  /* model */
  h5fz_plan_options options; /* as used (calibration_path not kept) */
  h5fz_roofline roofline;
  int calibrated; /* 1: calibration overrode the roofline */
  char calibration_note[H5FZ_PLAN_PATH_MAX + H5FZ_PLAN_NOTE_MAX];
  uint64_t crossover_bytes; /* chunks >= this go to the GPU;
                                     UINT64_MAX: never (GPU never pays off) */
  uint64_t digest;          /* FNV-1a 64 of the code-affecting part */
  char digest_hex[17];
} h5fz_plan;

/* Fill *opts with the defaults listed in h5fz_plan_options. */
void h5fz_plan_options_default(h5fz_plan_options *opts);

/* Plan for device `dev` with registry `reg` and the spec's op ids
 * (op_ids[0..n_ops-1], uint8 ids such as 1 quant, 10 delta, 30 rze).
 * opts NULL = defaults. Walks the chain from reg->start, recording each
 * refused class with its reason, and picks the first available class.
 * Returns H5FZ_OK, H5FZ_ERR_ARG, H5FZ_ERR_PARSE (bad
 * calibration file) or H5FZ_ERR_UNSUPPORTED (only with a registry whose
 * cpu class does not support the ops). *out is always fully written. */
int h5fz_plan_make(const h5fz_device_desc *dev, const h5fz_registry *reg, const uint8_t *op_ids, size_t n_ops,
                   const h5fz_plan_options *opts, h5fz_plan *out);

/* Threads per block of the generic kernels for a chain whose sub-chunks
 * hold subchunk_bytes: the plan's tuning, scaled up (to at most 1024) for
 * a sub-chunk larger than the class's, so that each thread keeps as many
 * words (the ratio preset's 64 KiB sub-chunks on sm_90: 256 -> 1024
 * threads, encode 48.6 -> 88.2 GB/s and decode 96.9 -> 111.2 at R = 1e-3,
 * docs/ratio.md; at 16 KiB more threads were slower). A CPU plan: its
 * tuning's figure. */
int h5fz_plan_block_threads(const h5fz_plan *plan, uint32_t subchunk_bytes);

/* Route of one chunk of chunk_bytes input bytes: H5FZ_EXEC_GPU when the plan
 * chose a GPU class and chunk_bytes >= plan->crossover_bytes, else CPU. */
h5fz_exec_route h5fz_plan_route_for_chunk(const h5fz_plan *plan, uint64_t chunk_bytes);

/* Predicted throughputs (GB/s of input) for one chunk size: kernel only and
 * end to end (overhead + PCIe in + kernel + PCIe out of compressed bytes).
 * Either pointer may be NULL. For a cpu plan both are the CPU figure. */
void h5fz_plan_predict(const h5fz_plan *plan, uint64_t chunk_bytes, double *kernel_GBps, double *e2e_GBps);

/* Human-readable plan into buf (snprintf semantics: returns the length the
 * full text needs, excluding NUL; the text is cut if >= buf_len). Negative
 * on a NULL plan. chunk_bytes > 0 adds a line with its route and prediction. */
int h5fz_plan_format_text(const h5fz_plan *plan, uint64_t chunk_bytes, char *buf, size_t buf_len);

/* The plan as one JSON object, same conventions as h5fz_plan_format_text. */
int h5fz_plan_format_json(const h5fz_plan *plan, uint64_t chunk_bytes, char *buf, size_t buf_len);

/* Canonical text the digest is computed over: class, target, arch, tuning
 * (what changes the generated code; not the route). Same conventions. */
int h5fz_plan_canonical_text(const h5fz_plan *plan, char *buf, size_t len);

/* Short names: "cubin"/"ptx"/"cpu", "cpu"/"gpu". Never NULL. */
const char *h5fz_target_name(h5fz_target t);
const char *h5fz_route_name(h5fz_exec_route r);

#ifdef __cplusplus
}
#endif
#endif /* H5FZ_PLANNER_H */
