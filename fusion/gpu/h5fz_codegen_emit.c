/*
 * h5fz_codegen_emit.c - the growing text buffer the code generator writes
 * CUDA source into (h5fz_codegen_emit.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "h5fz_codegen_emit.h"

void h5fz_emit(h5fz_strbuf *b, const char *fmt, ...)
{
  va_list ap;
  for (;;) {
    va_start(ap, fmt);
    int n = vsnprintf(b->buf ? b->buf + b->len : NULL, b->buf ? b->cap - b->len : 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
      b->oom = 1;
      return;
    }
    if (b->buf && b->len + (size_t)n < b->cap) {
      b->len += (size_t)n;
      return;
    }
    size_t cap = b->cap ? b->cap * 2 : 8192;
    while (cap < b->len + (size_t)n + 1) cap *= 2;
    char *nb = realloc(b->buf, cap);
    if (!nb) {
      b->oom = 1;
      return;
    }
    b->buf = nb;
    b->cap = cap;
  }
}

