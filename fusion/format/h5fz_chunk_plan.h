/*
 * h5fz_chunk_plan.h - one chunk's resolved chain and geometry (the chunk
 * plan every executor runs), made from a spec and the chunk's values or
 * from a container's header (h5fz_chunk_plan.c).
 */
#ifndef H5FZ_CHUNK_PLAN_H
#define H5FZ_CHUNK_PLAN_H

#include "h5fz_ops.h"
#include "h5fz_container.h"

/* Everything an executor needs to encode or decode one chunk. */
typedef struct {
  h5fz_dtype dtype;
  uint32_t esize; /* bytes per element: 4 or 8 */
  uint64_t n_elements;
  uint32_t subchunk_elems; /* a multiple of 64 */
  uint32_t n_subchunks;
  uint32_t n_ops;
  uint8_t ops[H5FZ_MAX_OPS];
  h5fz_quant_params quant;
  uint32_t row;      /* Lorenzo row length: the chunk's last dim (0: 1-D) */
  h5fz_lnd_geom lnd; /* lorenzo_nd: geometry and predictor (encode: the highest allowed
                               until the executor chooses; decode: the header's) */
  const void *lnd_q; /* CPU encode with lorenzo_nd: the chunk's quantizer words
                               (padded to whole sub-chunks) */
} h5fz_chunk_plan;

/* Does the chain have lorenzo_nd or lorenzo_interp (always ops[1])? */
static inline int h5fz_plan_has_lnd(const h5fz_chunk_plan *p)
{
  return p->n_ops > 2 && h5fz_op_is_lnd(p->ops[1]);
}

/* Elements of sub-chunk s, and the padded word count the chain works on. */
static inline uint32_t h5fz_sub_elems(const h5fz_chunk_plan *p, uint32_t s)
{
  uint64_t lo = (uint64_t)s * p->subchunk_elems, left = p->n_elements - lo;
  return left < p->subchunk_elems ? (uint32_t)left : p->subchunk_elems;
}

/* Resolve spec + chunk into a plan and the matching header: element count,
 * sub-chunk geometry, the absolute bound (for REL: h5fz_rel_abs_bound of
 * the chunk's finite non-fill values). Returns H5FZ_OK, H5FZ_ERR_SPEC, H5FZ_ERR_ARG. */
int h5fz_chunk_plan_make(const h5fz_spec *spec, const void *in, size_t in_bytes, h5fz_chunk_plan *p, h5fz_header *h);

/* The bits of the value that h5fz's encoder makes escape, so that it comes
 * back exactly (h5fz_quant_params.fill_bits): the spec's missing value
 * (missing=) when it has one, else its fill value, in its dtype (float32:
 * low 32 bits), unless that is +0.0 (which bin 0 keeps exactly);
 * otherwise -0.0's bits, which escape in any case (LOSSLESS keeps every
 * value and ignores it). An encoder rule only: the chunk format does not
 * change. */
uint64_t h5fz_fill_bits(const h5fz_spec *spec);

/* The same with the absolute bound given (the batch path computes REL
 * ranges on the GPU). */
int h5fz_chunk_plan_make_eb(const h5fz_spec *spec, size_t in_bytes, double eb, h5fz_chunk_plan *p, h5fz_header *h);

/* The h5fz_chunk_inspect summary of a header (n_raw_subchunks left 0). */
void h5fz_chunk_info_from_header(const h5fz_header *h, h5fz_chunk_info *info);

/* The plan a decoder uses, from a checked header. */
void h5fz_chunk_plan_from_header(const h5fz_header *h, h5fz_chunk_plan *p);

#endif /* H5FZ_CHUNK_PLAN_H */
