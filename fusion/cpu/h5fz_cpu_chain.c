/*
 * h5fz_cpu_chain.c - the CPU run of a chain on one sub-chunk: the ops in
 * spec order, each through its row of the op table (format/h5fz_optable.c):
 * a transform's CPU forms (device_ops/op_cpu_transform.h), a coder's
 * (op_cpu_coder.h), so no op has a case here. Each form writes exactly the
 * bytes of the reference op run with a one-thread "block"
 * (tests/core/test_cpu_fast.c), or is the reference itself (lorenzo,
 * bitpack); the quantizer runs its fast form, or the reference for the
 * PW_REL and LOSSLESS modes; the chunk-wide steps of lorenzo_nd are here.
 * A pair of transforms that the first one's row lists as fused (a delta
 * directly followed by zigzag or negabinary) runs as one pass. Errors
 * become an h5fz_status here.
 */
#include <stdlib.h>
#include <string.h>

#include "h5fz_cpu_chain.h"
#include "op_fused_decode_cpu.h"
#include "op_huff_cpu.h"
#include "op_lorenzo_nd_cpu.h"
#include "op_quant_cpu.h"
#include "op_rze_cpu.h"

static const h5fz_blk one_thread = {0u, 1u, NULL};

int h5fz_cpu_work_alloc(h5fz_cpu_work *w, uint32_t max_bytes)
{
  w->a = malloc(max_bytes);
  w->b = malloc(max_bytes);
  /* the coders' scratch: RZE's bitmaps or huff's tables, whichever is larger */
  uint32_t rze = h5fz_rze_scratch_bytes(max_bytes) + 64u, huff = h5fz_cpu_huff_scratch_bytes();
  w->scratch = malloc(rze > huff ? rze : huff);
  if (w->a && w->b && w->scratch) return H5FZ_OK;
  h5fz_cpu_work_free(w);
  return h5fz_fail(H5FZ_ERR_NOMEM, "cannot allocate %u bytes of sub-chunk work buffers", 3u * max_bytes);
}

void h5fz_cpu_work_free(h5fz_cpu_work *w)
{
  free(w->a);
  free(w->b);
  free(w->scratch);
  w->a = w->b = w->scratch = NULL;
}

/* The one-pass forms of ops[i] with ops[i + 1] when ops[i]'s row lists
 * them as fused, else NULL (never with the coder, the last op). */
static const h5fz_cpu_transform *fused_with_next(const h5fz_chunk_plan *p, uint32_t i)
{
  if (i + 2 >= p->n_ops) return NULL;
  for (const h5fz_cpu_fusion *f = h5fz_op_lookup(p->ops[i])->cpu_fused; f && f->next; f++)
    if (f->next == p->ops[i + 1]) return f->forms;
  return NULL;
}

/* The transform forms t on n words of sub-chunk s (m values), forward or
 * (inverse) backward: in -> out. Only an inverse writes in. lorenzo_nd
 * runs forward only here (the rest of its inverse is chunk-wide), from the
 * chunk's words p->lnd_q, which in is part of. */
static void transform(const h5fz_chunk_plan *p, uint32_t s, const h5fz_cpu_transform *t, int wide, int inverse,
                      void *in, void *out, uint32_t n, uint32_t m)
{
  const h5fz_cpu_sub sub = {(unsigned long long)s * p->subchunk_elems, m, p->row, p->lnd_q, &p->lnd};
  (inverse ? t->inverse : t->forward)(&sub, wide, in, out, n);
}

/* Run the coder (its CPU form from the op table) on L bytes (n words);
 * tmp: a free buffer of L bytes. Returns the size-table entry. */
static uint32_t code(uint8_t coder, int wide, const uint8_t *in, uint32_t L, uint32_t n, uint8_t *slot,
                     uint8_t *scratch, uint8_t *tmp)
{
  const h5fz_op_info *op = h5fz_op_lookup(coder);
  uint32_t size = op->cpu_encode ? op->cpu_encode(wide, in, L, n, slot, L, scratch, tmp) : H5FZ_RZE_NOT_SMALLER;
  if (size != H5FZ_RZE_NOT_SMALLER) return size;
  memcpy(slot, in, L); /* raw coder, or the coder did not shrink it */
  return L | H5FZ_SUB_RAW;
}

/* The map: m values -> m_pad words, the escapes listed (local positions). */
static uint32_t quant_map(const h5fz_chunk_plan *p, const void *values, uint32_t m, uint32_t m_pad, void *words,
                          uint32_t *out_pos, void *out_val)
{
  int wide = p->esize == 8;
  if (!H5FZ_QMODE_FAST(p->quant.mode)) /* PW_REL, LOSSLESS: the reference map */
    return wide ? h5fz_quant_encode_64(&one_thread, values, m, m_pad, &p->quant, words, out_pos, out_val)
                : h5fz_quant_encode_32(&one_thread, values, m, m_pad, &p->quant, words, out_pos, out_val);
  return wide ? h5fz_fast_quant_encode_64(values, m, m_pad, &p->quant, words, out_pos, out_val)
              : h5fz_fast_quant_encode_32(values, m, m_pad, &p->quant, words, out_pos, out_val);
}

uint32_t h5fz_cpu_encode_subchunk(const h5fz_chunk_plan *p, uint32_t s, const void *values, uint32_t m,
                                  h5fz_cpu_work *w, uint8_t *slot, uint32_t *out_pos, void *out_val, uint32_t *n_out)
{
  int wide = p->esize == 8;
  uint32_t m_pad = h5fz_pad64(m), L = m_pad * p->esize;
  const uint8_t *cur = w->a;
  if (p->lnd_q) { /* lorenzo_nd: the chunk's words and escapes are h5fz_cpu_lnd_quant_words' */
    cur = (const uint8_t *)p->lnd_q + (size_t)s * p->subchunk_elems * p->esize;
    *n_out = 0;
  } else {
    *n_out = quant_map(p, values, m, m_pad, w->a, out_pos, out_val);
  }
  for (uint32_t i = 1; i + 1 < p->n_ops; i++) {
    uint8_t *other = cur == w->a ? w->b : w->a;
    const h5fz_cpu_transform *forms = fused_with_next(p, i);
    if (forms)
      i++; /* the pair in one pass */
    else
      forms = h5fz_op_lookup(p->ops[i])->cpu_transform;
    transform(p, s, forms, wide, 0, (void *)cur, other, m_pad, m); /* forward: cur is only read */
    cur = other;
  }
  return code(p->ops[p->n_ops - 1], wide, cur, L, m_pad, slot, w->scratch, cur == w->a ? w->b : w->a);
}

/* Is the chain the default chain's words (any coder) for float32 in ABS or
 * REL, which op_fused_decode_cpu.h decodes from the bit planes in one
 * pass? A form of a whole chain, not of an op: it is matched here. */
static int fused_decode(const h5fz_chunk_plan *p)
{
  return p->esize == 4 && H5FZ_QMODE_FAST(p->quant.mode) && p->n_ops == 5 && !memcmp(p->ops, h5fz_default_chain, 4) &&
         h5fz_fast_planes_dzq_ok();
}

/* The coder's decode of a sub-chunk (entry, bytes) into L bytes at *cur, or
 * a raw sub-chunk: *cur then points at bytes itself when in_place, else
 * they are copied. *extent: every byte from it on is 0 (L when unknown). */
static int decode_coder(const h5fz_chunk_plan *p, uint32_t entry, const uint8_t *bytes, uint32_t L, uint32_t m_pad,
                        h5fz_cpu_work *w, int in_place, const uint8_t **cur, uint32_t *extent)
{
  uint32_t size = entry & H5FZ_SUB_SIZE_MASK;
  *extent = L;
  if (entry & H5FZ_SUB_RAW) {
    if (size != L) return h5fz_fail(H5FZ_ERR_CORRUPT, "raw sub-chunk holds %u bytes, expected %u", size, L);
    if (in_place)
      *cur = bytes;
    else
      memcpy((uint8_t *)*cur, bytes, L);
    return H5FZ_OK;
  }
  uint8_t coder_id = p->ops[p->n_ops - 1];
  const h5fz_op_info *coder = h5fz_op_lookup(coder_id);
  if (!coder->cpu_decode) return h5fz_fail(H5FZ_ERR_CORRUPT, "sub-chunk of a raw-coded chain is not marked raw");
  int bad = coder_id == H5FZ_OP_RZE
                ? h5fz_fast_rze_decode_extent(bytes, size, (uint8_t *)*cur, L, w->scratch, extent)
                : coder->cpu_decode(p->esize == 8, bytes, size, (uint8_t *)*cur, L, m_pad, w->scratch);
  if (bad) return h5fz_fail(H5FZ_ERR_CORRUPT, "sub-chunk %s stream of %u bytes is inconsistent", coder->name, size);
  return H5FZ_OK;
}

int h5fz_cpu_decode_subchunk(const h5fz_chunk_plan *p, uint32_t s, uint32_t entry, const uint8_t *bytes, uint32_t m,
                             h5fz_cpu_work *w, void *values, uint64_t *lnd_aux)
{
  int wide = p->esize == 8, fused = fused_decode(p);
  uint32_t m_pad = h5fz_pad64(m), L = m_pad * p->esize, extent;
  const uint8_t *planes = w->a;
  int rc = decode_coder(p, entry, bytes, L, m_pad, w, fused, &planes, &extent);
  if (rc) return rc;
  if (fused) {
    h5fz_fast_planes_dzq_decode_32(planes, m_pad, extent, m, p->quant.step, values);
    return H5FZ_OK;
  }
  uint8_t *cur = w->a, *other = w->b;
  int lnd = h5fz_plan_has_lnd(p);
  for (uint32_t i = p->n_ops - 1; i-- > (lnd ? 2u : 1u);) {
    const h5fz_cpu_transform *forms = fused_with_next(p, i - 1);
    if (forms)
      i--; /* the pair in one pass */
    else
      forms = h5fz_op_lookup(p->ops[i])->cpu_transform;
    transform(p, s, forms, wide, 1, cur, other, m_pad, m);
    uint8_t *t = cur;
    cur = other;
    other = t;
  }
  if (lnd) { /* the chunk-wide rest of the inverse is h5fz_cpu_lnd_finish's */
    uint32_t first = s * p->subchunk_elems;
    if (wide)
      h5fz_fast_lnd_xscan_64((uint64_t *)cur, m, first, p->lnd, lnd_aux);
    else
      h5fz_fast_lnd_xscan_32((uint32_t *)cur, m, first, p->lnd, lnd_aux);
    memcpy(values, cur, (size_t)m * p->esize);
    return H5FZ_OK;
  }
  if (!H5FZ_QMODE_FAST(p->quant.mode)) {
    if (wide)
      h5fz_quant_decode_64(&one_thread, (const uint64_t *)cur, m, &p->quant, values);
    else
      h5fz_quant_decode_32(&one_thread, (const uint32_t *)cur, m, &p->quant, values);
  } else if (wide) {
    h5fz_fast_quant_decode_64((const uint64_t *)cur, m, &p->quant, values);
  } else {
    h5fz_fast_quant_decode_32((const uint32_t *)cur, m, &p->quant, values);
  }
  return H5FZ_OK;
}

uint32_t h5fz_cpu_lnd_quant_words(const h5fz_chunk_plan *p, uint32_t s, const void *chunk, void *quant_words,
                                  uint32_t *out_pos, void *out_val)
{
  size_t first = (size_t)s * p->subchunk_elems;
  uint32_t m = h5fz_sub_elems(p, s);
  return quant_map(p, (const uint8_t *)chunk + first * p->esize, m, h5fz_pad64(m),
                   (uint8_t *)quant_words + first * p->esize, out_pos, out_val);
}

uint32_t h5fz_cpu_lnd_choose(const h5fz_chunk_plan *p, const void *quant_words)
{
  /* the GPU's parts (the entropy cost is not additive over parts: the same split everywhere) */
  uint64_t k_lo, k_hi, T, cost[H5FZ_LND_NCOST * H5FZ_LND_COST_PARTS];
  if (!h5fz_lnd_has_choice(p->lnd)) return 1u;
  for (uint32_t part = 0; part < H5FZ_LND_COST_PARTS; part++) {
    h5fz_lnd_sample(p->lnd.n, part, H5FZ_LND_COST_PARTS, &k_lo, &k_hi, &T);
    if (p->esize == 8)
      h5fz_fast_lnd_cost_64(quant_words, p->lnd, k_lo, k_hi, T, cost + H5FZ_LND_NCOST * part);
    else
      h5fz_fast_lnd_cost_32(quant_words, p->lnd, k_lo, k_hi, T, cost + H5FZ_LND_NCOST * part);
  }
  return h5fz_lnd_choose(cost, H5FZ_LND_COST_PARTS, p->lnd);
}

/* The Lorenzo predictors' inverse on the chunk's words: the carry along x,
 * then the sums along y and z (one line at a time on the GPU). */
static void lnd_lorenzo_finish(const h5fz_chunk_plan *p, void *words, uint64_t *aux)
{
  const h5fz_lnd_geom g = p->lnd;
  uint32_t ex, ey, n_sub = p->n_subchunks, wide = p->esize == 8;
  h5fz_lnd_eff(&g, &ex, &ey);
  h5fz_lnd_carry(aux, n_sub);
  for (uint32_t s = 0; s < n_sub; s++) {
    size_t first = (size_t)s * p->subchunk_elems;
    uint32_t m = h5fz_sub_elems(p, s);
    if (wide)
      h5fz_lnd_xfix_64(&one_thread, (uint64_t *)words + first, m, first, g, aux[2u * s]);
    else
      h5fz_lnd_xfix_32(&one_thread, (uint32_t *)words + first, m, first, g, aux[2u * s]);
  }
  uint32_t planes = h5fz_lnd_ylines(&g) / ex;
  for (uint32_t z = 0; z < planes; z++) {
    if (wide)
      h5fz_lnd_yscan_64(words, g, z, 0, ex);
    else
      h5fz_lnd_yscan_32(words, g, z, 0, ex);
  }
  uint32_t zl = h5fz_lnd_zlines(&g);
  if (zl) {
    if (wide)
      h5fz_lnd_zscan_64(words, g, 0, zl);
    else
      h5fz_lnd_zscan_32(words, g, 0, zl);
  }
}

void h5fz_cpu_lnd_finish(const h5fz_chunk_plan *p, void *words, uint64_t *aux)
{
  const h5fz_lnd_geom g = p->lnd;
  int wide = p->esize == 8;
  if (g.dim != H5FZ_LNI_PREDICTOR)
    lnd_lorenzo_finish(p, words, aux);
  else if (wide) /* interpolation: its passes, stride after stride (aux unused) */
    h5fz_lni_decode_64(words, &g);
  else
    h5fz_lni_decode_32(words, &g);
  /* the quantizer decode, in place (each word becomes its value) */
  if (wide)
    h5fz_fast_quant_decode_64(words, g.n, &p->quant, words);
  else
    h5fz_fast_quant_decode_32(words, g.n, &p->quant, words);
}
