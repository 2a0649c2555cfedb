/*
 * h5fz_codegen_lnd.h - lorenzo_nd's and lorenzo_interp's chunk-level
 * kernels' source (h5fz_codegen_lnd.c). Private to fusion/gpu.
 */
#ifndef H5FZ_CODEGEN_LND_H
#define H5FZ_CODEGEN_LND_H

#include "h5fz_codegen_emit.h"

/* Append to b, for words of the type suffix w ("32" or "64"), the kernels
 * of a chain with lorenzo_nd (the cost pass h5fz_lnd_cost_kernel, the
 * decode's carry, x fix and y / z passes) and, with interp (lorenzo_interp),
 * the interpolation decode's h5fz_lni_pass_kernel and
 * h5fz_lni_dequant_kernel (names in h5fz_codegen.h). The kernels use the
 * macros the generated source defines before (THREADS, SUB_ELEMS,
 * DEC_THREADS, value_t, word_t). */
void h5fz_codegen_emit_lnd(h5fz_strbuf *b, const char *w, int interp);

#endif /* H5FZ_CODEGEN_LND_H */
