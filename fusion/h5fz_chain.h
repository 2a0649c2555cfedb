/*
 * h5fz_chain.h - one chunk's resolved chain and geometry, shared by the
 * executors, and the CPU run of the chain on one sub-chunk.
 */
#ifndef H5FZ_CHAIN_H
#define H5FZ_CHAIN_H

#include "../device_ops/h5fz_ops.h"
#include "h5fz_container.h"

/* Everything an executor needs to encode or decode one chunk. */
typedef struct {
  h5fz_dtype dtype;
  uint32_t esize;           /* bytes per element: 4 or 8 */
  uint64_t n_elements;
  uint32_t subchunk_elems;  /* a multiple of 64 */
  uint32_t n_subchunks;
  uint32_t n_ops;
  uint8_t ops[H5FZ_MAX_OPS];
  h5fz_quant_params quant;
  uint32_t row;             /* Lorenzo row length: the chunk's last dim (0: 1-D) */
  h5fz_lnd_geom lnd;        /* lorenzo_nd: geometry and predictor (encode: the highest allowed
                               until the executor chooses; decode: the header's) */
  const void *lnd_q;        /* CPU encode with lorenzo_nd: the chunk's quantizer words
                               (padded to whole sub-chunks) */
} h5fz_chunk_plan;

/* Does the chain have lorenzo_nd (always ops[1])? */
static inline int h5fz_plan_has_lnd(const h5fz_chunk_plan *p)
{
  return p->n_ops > 2 && p->ops[1] == H5FZ_OP_LORENZO_ND;
}

/* Elements of sub-chunk s, and the padded word count the chain works on. */
static inline uint32_t h5fz_sub_elems(const h5fz_chunk_plan *p, uint32_t s)
{
  uint64_t lo = (uint64_t)s * p->subchunk_elems, left = p->n_elements - lo;
  return left < p->subchunk_elems ? (uint32_t)left : p->subchunk_elems;
}
static inline uint32_t h5fz_pad64(uint32_t m) { return (m + 63u) & ~63u; }


/* Work buffers for one CPU thread: two ping-pong buffers of the full
 * sub-chunk's bytes and the RZE scratch. */
typedef struct {
  uint8_t *a, *b, *scratch;
} h5fz_cpu_work;

int h5fz_cpu_work_alloc(h5fz_cpu_work *w, uint32_t max_bytes);
void h5fz_cpu_work_free(h5fz_cpu_work *w);

/* Encode sub-chunk s, values[0..m) (m <= subchunk_elems), through the chain into
 * slot[0..cap) (cap >= padded bytes). Outliers are appended to out_pos
 * (local positions) / out_val (raw bits, esize bytes each), capacity m.
 * Returns the size-table entry (size | H5FZ_SUB_RAW when stored raw);
 * *n_out receives the outlier count. */
uint32_t h5fz_cpu_encode_subchunk(const h5fz_chunk_plan *p, uint32_t s, const void *values, uint32_t m,
                                  h5fz_cpu_work *w, uint8_t *slot, uint32_t *out_pos,
                                  void *out_val, uint32_t *n_out);

/* Decode sub-chunk s from its size-table entry and bytes into values[0..m)
 * (outliers come back as 0). With lorenzo_nd it stops before that op's
 * chunk-wide inverse: values[0..m) receive the sub-chunk's x-prefix sums as
 * words and lnd_aux[0..2) its carry information (h5fz_lnd_xscan); the
 * caller finishes with h5fz_cpu_lnd_finish. Returns H5FZ_OK or
 * H5FZ_ERR_CORRUPT. */
int h5fz_cpu_decode_subchunk(const h5fz_chunk_plan *p, uint32_t s, uint32_t entry, const uint8_t *bytes,
                             uint32_t m, h5fz_cpu_work *w, void *values, uint64_t *lnd_aux);

/* lorenzo_nd on the CPU. The encoder runs the map on the whole chunk first:
 * h5fz_cpu_lnd_quant_words puts sub-chunk s's words in quant_words (n_subchunks
 * x subchunk_elems words, the last sub-chunk's padding included) and lists
 * its escapes as h5fz_cpu_encode_subchunk would (which then, with p->lnd_q
 * set, starts from these words and lists none); h5fz_cpu_lnd_choose picks
 * the predictor from them. h5fz_cpu_lnd_finish is the chunk-wide end of the
 * decode (carry along x, sums along y and z, quantizer decode) on words,
 * which become the values in place (aux: 2 words per sub-chunk from the
 * sub-chunk decodes). */
uint32_t h5fz_cpu_lnd_quant_words(const h5fz_chunk_plan *p, uint32_t s, const void *chunk, void *quant_words,
                                  uint32_t *out_pos, void *out_val);
uint32_t h5fz_cpu_lnd_choose(const h5fz_chunk_plan *p, const void *quant_words);
void h5fz_cpu_lnd_finish(const h5fz_chunk_plan *p, void *words, uint64_t *aux);

/* Outlier side section (docs/format.md): encode count outliers (global
 * positions strictly increasing, raw value bits of esize bytes) into a
 * malloc'd buffer. */
int h5fz_side_encode(const uint32_t *pos, const void *vals, uint32_t count, uint32_t esize,
                     uint8_t **out, size_t *out_len);
/* Decode a side section of len bytes into pos/vals (capacity count each);
 * checks that positions are strictly increasing and < n_elements.
 * *used receives the bytes consumed. */
int h5fz_side_decode(const uint8_t *in, size_t len, uint32_t count, uint32_t esize,
                     uint64_t n_elements, uint32_t *pos, void *vals, size_t *used);

#endif /* H5FZ_CHAIN_H */
