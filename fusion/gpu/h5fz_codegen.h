/*
 * h5fz_codegen.h - a ChunkFusionSpec becomes CUDA source: one fused encode
 * kernel and one fused decode kernel that call the ops of device_ops/ in
 * chain order on a sub-chunk held in shared memory, one thread block per
 * sub-chunk. Only this glue is generated; the ops are the embedded headers.
 */
#ifndef H5FZ_CODEGEN_H
#define H5FZ_CODEGEN_H

#include <stddef.h>

#include "h5fz.h"
#include "h5fz_codegen_wf.h"

/* Generated kernels' names. */
#define H5FZ_KERNEL_ENCODE "h5fz_encode"
#define H5FZ_KERNEL_DECODE "h5fz_decode"
#define H5FZ_KERNEL_HUFF_GROUPS "h5fz_huff_groups" /* huff/huffctx decode before h5fz_decode */
#define H5FZ_KERNEL_TAIL_SCAN "h5fz_tail_scan"
#define H5FZ_KERNEL_TAIL_PACK "h5fz_tail_pack"
#define H5FZ_KERNEL_TAIL_GATHER "h5fz_tail_gather"
#define H5FZ_KERNEL_TAIL_REDUCE "h5fz_tail_reduce"
/* The warp-fused kernels' names: h5fz_codegen_wf.h. */
/* Only in the source of a chain with lorenzo_nd: its chunk-level kernels. */
#define H5FZ_KERNEL_LND_COST "h5fz_lnd_cost_kernel"
#define H5FZ_KERNEL_LND_CARRY "h5fz_lnd_carry_kernel"
#define H5FZ_KERNEL_LND_XFIX "h5fz_lnd_xfix_kernel"
#define H5FZ_KERNEL_LND_ASUM "h5fz_lnd_asum_kernel"
#define H5FZ_KERNEL_LND_ASCAN "h5fz_lnd_ascan_kernel"
/* lorenzo_interp's interpolation (predictor 4): one pass of the decode, the quantizer decode after the last */
#define H5FZ_KERNEL_LNI_PASS "h5fz_lni_pass_kernel"
#define H5FZ_KERNEL_LNI_DEQUANT "h5fz_lni_dequant_kernel"

/* Codegen flags. PADDED_PLANES: bitshuffle goes through planes padded by
 * one word in shared memory (no bank conflicts; the kernel class's
 * `padded_planes` feature): about 16.5 KiB more per block, worth it where
 * two blocks per SM still fit (sm_90, sm_100: 228 KiB per SM). */
#define H5FZ_CODEGEN_PADDED_PLANES 1u
/* Resident blocks per SM the kernels' register use must allow (the
 * __launch_bounds__ minimum; the compiler caps registers per thread to
 * fit), 1..255; 0 = 1024 / threads_per_block (64 registers per thread). */
#define H5FZ_CODEGEN_MIN_BLOCKS(n) (((unsigned)(n)&0xffu) << 8)
/* The decode side's own geometry (h5fz_decode and lorenzo_nd's x kernel,
 * launched with that many threads): DEC_THREADS(n), a multiple of 32 up to
 * 1024, 0 = the encode's threads_per_block; DEC_MIN_BLOCKS(n), 0..63 as
 * MIN_BLOCKS, 0 = 1024 / the decode's threads. A kernel class whose
 * entropy_* tuning shapes the one-slot encode (fewer threads, a tighter
 * register cap) keeps its own geometry for the decode this way. */
#define H5FZ_CODEGEN_DEC_THREADS(n) ((((unsigned)(n) / 32u) & 0x3fu) << 20)
#define H5FZ_CODEGEN_DEC_MIN_BLOCKS(n) (((unsigned)(n)&0x3fu) << 26)

/* WARP_FUSED: also emit h5fz_encode_wf / h5fz_decode_wf when the chain is
 * one they serve (h5fz_codegen_warp_fused_chain), with WF_WARPS(n) warps
 * (1, 2, 4 or 8; 0 = 4) per block of one sub-chunk; needs sm_80 or newer
 * (warp reductions). The generic kernels then still serve the partial last
 * sub-chunk of each chunk (their tail_only argument) and the modes the
 * warp-fused ones do not (PW_REL, lossless). */
#define H5FZ_CODEGEN_WARP_FUSED 2u
#define H5FZ_CODEGEN_WF_WARPS(n) (((unsigned)(n)&0xfu) << 16)
#define H5FZ_CODEGEN_WF_WARPS_OF(flags) (((flags) >> 16) & 0xfu ? ((flags) >> 16) & 0xfu : 4u)

/* Generate the source for spec (dtype must be known) with
 * threads_per_block threads (a multiple of 32, 32..1024) and flags
 * (H5FZ_CODEGEN_*). *src is a malloc'd NUL-terminated string (caller
 * frees); *smem_bytes receives the dynamic shared memory a block of the
 * decode kernel needs (the encode's: h5fz_codegen_encode_smem). Returns H5FZ_OK, H5FZ_ERR_SPEC, H5FZ_ERR_ARG, H5FZ_ERR_NOMEM. */
int h5fz_codegen(const h5fz_spec *spec, int threads_per_block, unsigned flags, char **src, size_t *smem_bytes);

/* 1 when the encode kernel of the chain ops[0..n_ops) holds one slot of
 * shared memory, not two: `quant lorenzo_nd zigzag huff|huffctx` (the
 * ratio chain), whose quantizer reads global memory, whose transforms run
 * in place through registers and whose coder writes its global slot
 * directly; the 64 KiB it frees let two blocks share an SM. */
int h5fz_codegen_one_slot_encode(const uint8_t *ops, uint32_t n_ops);

/* The encode kernel's dynamic shared memory when h5fz_codegen gave
 * smem_bytes for the chain with sub-chunks of subchunk_bytes (the decode
 * kernel takes smem_bytes). */
size_t h5fz_codegen_encode_smem(const uint8_t *ops, uint32_t n_ops, uint32_t subchunk_bytes, size_t smem_bytes);

/* The op headers embedded at build time, as NVRTC wants them: *count
 * entries of names[] (include names) and sources[] (NUL-terminated). */
void h5fz_embedded_headers(size_t *count, const char *const **names, const char *const **sources);

#endif /* H5FZ_CODEGEN_H */
