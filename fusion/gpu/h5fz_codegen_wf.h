/*
 * h5fz_codegen_wf.h - the warp-fused kernels' source (h5fz_codegen_wf.c):
 * which chains have them, their names, their text. Private to fusion/gpu
 * (h5fz_codegen.h includes it).
 */
#ifndef H5FZ_CODEGEN_WF_H
#define H5FZ_CODEGEN_WF_H

#include "h5fz.h"
#include "h5fz_codegen_emit.h"

/* Only with H5FZ_CODEGEN_WARP_FUSED and a chain it serves: the warp-fused
 * kernels of full sub-chunks (device_ops/op_warp_fused.h, op_warp_fast.h). */
#define H5FZ_KERNEL_ENCODE_WF "h5fz_encode_wf"
#define H5FZ_KERNEL_DECODE_WF "h5fz_decode_wf"
/* ... those of the fast chain (device_ops/op_warp_fast.h): the same
 * arguments, their own names so that profilers can tell them apart */
#define H5FZ_KERNEL_ENCODE_WFP "h5fz_encode_wfp"
#define H5FZ_KERNEL_DECODE_WFP "h5fz_decode_wfp"
/* Which warp-fused kernels serve spec's chain (float32, 16 KiB
 * sub-chunks): H5FZ_WF_CHAIN_DEFAULT for quant delta zigzag bitshuffle rze
 * and quant lorenzo_nd zigzag bitshuffle rze (device_ops/op_warp_fused.h),
 * H5FZ_WF_CHAIN_FAST for quant delta zigzag bitpack
 * (device_ops/op_warp_fast.h, with the default chain's kernel arguments,
 * so the host launches them alike), 0 for none. */
#define H5FZ_WF_CHAIN_DEFAULT 1
#define H5FZ_WF_CHAIN_FAST 2
int h5fz_codegen_warp_fused_chain(const h5fz_spec *spec);

/* Append the warp-fused kernels of spec's chain when it has a pair
 * (h5fz_codegen_warp_fused_chain), nothing otherwise. */
void h5fz_codegen_emit_warp_fused(h5fz_strbuf *b, const h5fz_spec *spec);

#endif /* H5FZ_CODEGEN_WF_H */
