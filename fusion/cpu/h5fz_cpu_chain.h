/*
 * h5fz_cpu_chain.h - the CPU run of a chain on one sub-chunk, and
 * lorenzo_nd's chunk-wide steps on the CPU (h5fz_cpu_chain.c).
 */
#ifndef H5FZ_CPU_CHAIN_H
#define H5FZ_CPU_CHAIN_H

#include "h5fz_chunk_plan.h"

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
                                  h5fz_cpu_work *w, uint8_t *slot, uint32_t *out_pos, void *out_val, uint32_t *n_out);

/* Decode sub-chunk s from its size-table entry and bytes into values[0..m)
 * (outliers come back as 0). With lorenzo_nd it stops before that op's
 * chunk-wide inverse: values[0..m) receive the sub-chunk's x-prefix sums as
 * words and lnd_aux[0..2) its carry information (h5fz_lnd_xscan); the
 * caller finishes with h5fz_cpu_lnd_finish. Returns H5FZ_OK or
 * H5FZ_ERR_CORRUPT. */
int h5fz_cpu_decode_subchunk(const h5fz_chunk_plan *p, uint32_t s, uint32_t entry, const uint8_t *bytes, uint32_t m,
                             h5fz_cpu_work *w, void *values, uint64_t *lnd_aux);

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

#endif /* H5FZ_CPU_CHAIN_H */
