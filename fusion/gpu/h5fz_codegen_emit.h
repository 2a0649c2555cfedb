/*
 * h5fz_codegen_emit.h - the code generator's text buffer, shared by its
 * files (h5fz_codegen.c: the generic kernels; h5fz_codegen_wf.c: the
 * warp-fused ones). Private to fusion/gpu.
 */
#ifndef H5FZ_CODEGEN_EMIT_H
#define H5FZ_CODEGEN_EMIT_H

#include <stddef.h>

/* Source text being built: buf (malloc'd, NUL-terminated) of len bytes
 * in cap; oom set once an allocation failed (the text is then cut). */
typedef struct {
  char *buf;
  size_t len, cap;
  int oom;
} h5fz_strbuf;

/* Append printf-formatted text to b (growing it; on failure b->oom). */
void h5fz_emit(h5fz_strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif /* H5FZ_CODEGEN_EMIT_H */
