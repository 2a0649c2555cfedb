/*
 * op_cpu_transform.h - the one shape of a transform's CPU forms, so that
 * the op table (fusion/format/h5fz_optable.c) reaches every transform the
 * same way, as it reaches the coders through op_cpu_coder.h, and the CPU
 * chain (fusion/cpu/h5fz_cpu_chain.c) needs no case per op.
 *
 * Each transform's twin (device_ops/op_X_cpu.c) defines one object,
 * `const h5fz_cpu_transform h5fz_cpu_X`, its forward and inverse form over
 * one sub-chunk; the op table declares it beside the op's row (its only
 * user), so an op's twin needs no header for the table. Host C only.
 */
#ifndef H5FZ_OP_CPU_TRANSFORM_H
#define H5FZ_OP_CPU_TRANSFORM_H

#include <stdint.h>

#include "h5fz_ops.h" /* h5fz_lnd_geom */

/* What a transform may need of the sub-chunk beyond its words: most need
 * nothing; the predictors look at where the words lie in the chunk. */
typedef struct {
  unsigned long long first;  /* the sub-chunk's first element in the chunk */
  uint32_t m;                /* its values (the n words past them are padding) */
  uint32_t row;              /* lorenzo: the chunk's last dim (0: 1-D) */
  const void *lnd_q;         /* lorenzo_nd encode: the chunk's quantizer words */
  const h5fz_lnd_geom *lnd;  /* lorenzo_nd: the chunk's geometry and predictor */
} h5fz_cpu_sub;

/* n words (or their bytes, for an op whose output is bytes) in -> out, for
 * 64-bit words when wide, else 32-bit; in and out differ. The forward form
 * only reads in; an inverse may overwrite it (lorenzo's uses it as
 * scratch). No errors: a transform is total on its input. */
typedef void (*h5fz_cpu_transform_fn)(const h5fz_cpu_sub *sub, int wide, void *in, void *out, uint32_t n);

/* A transform's CPU forms. inverse is NULL only for lorenzo_nd, whose
 * inverse is chunk-wide and run by the chain's lorenzo_nd steps. */
typedef struct {
  h5fz_cpu_transform_fn forward;
  h5fz_cpu_transform_fn inverse;
} h5fz_cpu_transform;

/* A pair of transforms that runs as one pass: the op whose row lists it,
 * followed directly by op `next`; forms runs both (inverse: both undone). */
typedef struct {
  uint8_t next; /* the op id after it; 0 ends a row's list */
  const h5fz_cpu_transform *forms;
} h5fz_cpu_fusion;

/* A static h5fz_cpu_transform_fn fname that runs FN##_64(in, out, n) for
 * wide words, else FN##_32(in, out, n) (void * converts to each form's
 * own pointer types); sub is not needed. */
#define H5FZ_CPU_BY_WIDTH(fname, FN)                                                                                   \
  static void fname(const h5fz_cpu_sub *sub, int wide, void *in, void *out, uint32_t n)                                \
  {                                                                                                                    \
    (void)sub;                                                                                                         \
    if (wide)                                                                                                          \
      FN##_64(in, out, n);                                                                                             \
    else                                                                                                               \
      FN##_32(in, out, n);                                                                                             \
  }

/* Defines `const h5fz_cpu_transform h5fz_cpu_<name>` for an op whose fast
 * forms take (in, out, n) in each word width and need nothing of the
 * sub-chunk: ENC##_32 / ENC##_64 forward, DEC##_32 / DEC##_64 inverse. */
#define H5FZ_CPU_TRANSFORM_WORDS(name, ENC, DEC)                                                                       \
  H5FZ_CPU_BY_WIDTH(name##_cpu_forward, ENC)                                                                           \
  H5FZ_CPU_BY_WIDTH(name##_cpu_inverse, DEC)                                                                           \
  const h5fz_cpu_transform h5fz_cpu_##name = {name##_cpu_forward, name##_cpu_inverse}

#endif /* H5FZ_OP_CPU_TRANSFORM_H */
