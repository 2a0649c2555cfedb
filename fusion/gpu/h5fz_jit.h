/*
 * h5fz_jit.h - NVRTC compilation of generated source, and the module cache
 * (in memory per process, and on disk shared by processes).
 */
#ifndef H5FZ_JIT_H
#define H5FZ_JIT_H

#include <stddef.h>
#include <stdint.h>

#include "h5fz_cuda.h"
#include "h5fz_sha256.h"

/* Compile src for arch_name ("sm_90": cubin for that arch; "compute_90":
 * PTX the driver finishes) with --fmad=false and no fast math, the op
 * headers embedded. On success *image is malloc'd (caller frees), *size its
 * bytes. *log (may be NULL) receives a malloc'd NVRTC log on failure.
 * Returns H5FZ_OK, H5FZ_ERR_DEVICE (no NVRTC or the compile failed),
 * H5FZ_ERR_NOMEM. Needs no GPU. */
int h5fz_jit_compile(const char *src, const char *arch_name, void **image, size_t *size, char **log);

/* Where the module came from. */
typedef enum { H5FZ_JIT_COMPILED = 0, H5FZ_JIT_DISK = 1, H5FZ_JIT_MEMORY = 2, H5FZ_JIT_EMBEDDED = 3 } h5fz_jit_source;

typedef struct {
  CUmodule module;
  CUfunction encode, decode, tail_reduce, tail_scan, tail_pack, tail_gather;
  /* batch kernels, [0] for 32-bit and [1] for 64-bit values */
  CUfunction gather[2], scatter[2], fill[2], patch[2], range[2];
  /* lorenzo_nd's chunk-level kernels: NULL unless the chain has lorenzo_nd */
  CUfunction lnd_cost, lnd_carry, lnd_xfix, lnd_asum, lnd_ascan;
  CUfunction lni_pass, lni_dequant; /* lorenzo_interp's interpolation decode (NULL in other modules) */
  /* the warp-fused kernels: NULL unless the source has them (H5FZ_CODEGEN_WARP_FUSED) */
  CUfunction encode_wf, decode_wf;
  /* huff/huffctx's decode, one thread a group (H5FZ_KERNEL_HUFF_GROUPS): NULL for other coders */
  CUfunction huff_groups;
} h5fz_jit_module;

/* The loaded module for (src, arch_name, plan digest) in the CUDA context
 * ctx, which is current on this thread: from memory (per context), else from the modules embedded at build time
 * (h5fz_jit_embedded.h; one the driver refuses falls through), else from
 * the disk cache ($H5FZ_CACHE_DIR, else
 * $XDG_CACHE_HOME/h5fz, else ~/.cache/h5fz; subfolder jit/), else
 * compiled and stored there (atomic rename; a corrupt or unloadable entry
 * is recompiled, never trusted). Modules stay loaded for the process.
 * *from (may be NULL) says where it came from; *millis the time taken.
 * Returns H5FZ_OK or H5FZ_ERR_DEVICE / H5FZ_ERR_NOMEM. */
int h5fz_jit_get(const char *src, const char *arch_name, uint64_t plan_digest, CUcontext ctx, h5fz_jit_module *out,
                 h5fz_jit_source *from, double *millis);

#endif /* H5FZ_JIT_H */
