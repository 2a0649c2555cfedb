/*
 * h5fz_cpu_chain.c - the CPU run of a chain on one sub-chunk: the ops in
 * spec order, as the CPU-specialised versions of h5fz_cpu_fast.c, which
 * write exactly the bytes of the device_ops/ ops run with a one-thread
 * "block" (tests/core/test_cpu_fast.c); a delta directly followed by zigzag
 * or negabinary runs as one fused pass.
 */
#include <stdlib.h>
#include <string.h>

#include "h5fz_chain.h"
#include "h5fz_cpu_fast.h"

static const h5fz_blk one_thread = {0u, 1u, NULL};

int h5fz_cpu_work_alloc(h5fz_cpu_work *w, uint32_t max_bytes)
{
  w->a = malloc(max_bytes);
  w->b = malloc(max_bytes);
  w->scratch = malloc(h5fz_rze_scratch_bytes(max_bytes) + 64u);
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

/* Does ops[i] (a delta) fuse with ops[i+1] (zigzag or negabinary)? */
static int fuses(const h5fz_chunk_plan *p, uint32_t i)
{
  return p->ops[i] == H5FZ_OP_DELTA && i + 2 < p->n_ops &&
         (p->ops[i + 1] == H5FZ_OP_ZIGZAG || p->ops[i + 1] == H5FZ_OP_NEGABINARY);
}

/* Forward transform op on n words of sub-chunk s: in -> out. */
static void transform_encode(const h5fz_chunk_plan *p, uint32_t s, uint8_t op, int wide, const void *in, void *out,
                             uint32_t n)
{
  if (op == H5FZ_OP_LORENZO) {
    unsigned long long first = (unsigned long long)s * p->subchunk_elems;
    if (wide) h5fz_lorenzo_encode_64(&one_thread, in, out, n, first, p->row);
    else h5fz_lorenzo_encode_32(&one_thread, in, out, n, first, p->row);
  } else if (op == H5FZ_OP_BITSHUFFLE) {
    if (wide) h5fz_fast_bitshuffle_encode_64(in, out, n);
    else h5fz_fast_bitshuffle_encode_32(in, out, n);
  } else if (wide) {
    h5fz_fast_transform_encode_64(op, in, out, n);
  } else {
    h5fz_fast_transform_encode_32(op, in, out, n);
  }
}

/* Inverse; may overwrite in (Lorenzo uses it as scratch). */
static void transform_decode(const h5fz_chunk_plan *p, uint32_t s, uint8_t op, int wide, void *in, void *out,
                             uint32_t n)
{
  if (op == H5FZ_OP_LORENZO) {
    unsigned long long first = (unsigned long long)s * p->subchunk_elems;
    if (wide) h5fz_lorenzo_decode_64(&one_thread, in, out, n, first, p->row);
    else h5fz_lorenzo_decode_32(&one_thread, in, out, n, first, p->row);
  } else if (op == H5FZ_OP_BITSHUFFLE) {
    if (wide) h5fz_fast_bitshuffle_decode_64(in, out, n);
    else h5fz_fast_bitshuffle_decode_32(in, out, n);
  } else if (wide) {
    h5fz_fast_transform_decode_64(op, in, out, n);
  } else {
    h5fz_fast_transform_decode_32(op, in, out, n);
  }
}

/* Run the coder on L bytes (n words); returns the size-table entry. */
static uint32_t code(uint8_t coder, int wide, const uint8_t *in, uint32_t L, uint32_t n, uint8_t *slot,
                     uint8_t *scratch)
{
  uint32_t size = H5FZ_RZE_NOT_SMALLER;
  if (coder == H5FZ_OP_RZE) size = h5fz_fast_rze_encode(in, L, slot, L, scratch);
  else if (coder == H5FZ_OP_BITPACK)
    size = wide ? h5fz_bitpack_encode_64(&one_thread, (const uint64_t *)in, n, slot, L)
                : h5fz_bitpack_encode_32(&one_thread, (const uint32_t *)in, n, slot, L);
  if (size != H5FZ_RZE_NOT_SMALLER) return size;
  memcpy(slot, in, L); /* raw coder, or the coder did not shrink it */
  return L | H5FZ_SUB_RAW;
}

uint32_t h5fz_cpu_encode_subchunk(const h5fz_chunk_plan *p, uint32_t s, const void *values, uint32_t m,
                                  h5fz_cpu_work *w, uint8_t *slot, uint32_t *out_pos,
                                  void *out_val, uint32_t *n_out)
{
  int wide = p->esize == 8;
  uint32_t m_pad = h5fz_pad64(m), L = m_pad * p->esize;
  uint8_t *cur = w->a, *other = w->b;
  if (p->quant.mode > H5FZ_QMODE_REL) /* PW_REL, LOSSLESS: the reference map */
    *n_out = wide ? h5fz_quant_encode_64(&one_thread, values, m, m_pad, &p->quant, (uint64_t *)cur, out_pos, out_val)
                  : h5fz_quant_encode_32(&one_thread, values, m, m_pad, &p->quant, (uint32_t *)cur, out_pos, out_val);
  else
    *n_out = wide ? h5fz_fast_quant_encode_64(values, m, m_pad, &p->quant, (uint64_t *)cur, out_pos, out_val)
                  : h5fz_fast_quant_encode_32(values, m, m_pad, &p->quant, (uint32_t *)cur, out_pos, out_val);
  for (uint32_t i = 1; i + 1 < p->n_ops; i++) {
    if (fuses(p, i)) {
      if (wide) h5fz_fast_delta_then_encode_64(p->ops[i + 1], (const uint64_t *)cur, (uint64_t *)other, m_pad);
      else h5fz_fast_delta_then_encode_32(p->ops[i + 1], (const uint32_t *)cur, (uint32_t *)other, m_pad);
      i++;
    } else {
      transform_encode(p, s, p->ops[i], wide, cur, other, m_pad);
    }
    uint8_t *t = cur;
    cur = other;
    other = t;
  }
  return code(p->ops[p->n_ops - 1], wide, cur, L, m_pad, slot, w->scratch);
}

int h5fz_cpu_decode_subchunk(const h5fz_chunk_plan *p, uint32_t s, uint32_t entry, const uint8_t *bytes,
                             uint32_t m, h5fz_cpu_work *w, void *values)
{
  int wide = p->esize == 8;
  uint32_t m_pad = h5fz_pad64(m), L = m_pad * p->esize, size = entry & H5FZ_SUB_SIZE_MASK;
  uint8_t *cur = w->a, *other = w->b;
  if (entry & H5FZ_SUB_RAW) {
    if (size != L)
      return h5fz_fail(H5FZ_ERR_CORRUPT, "raw sub-chunk holds %u bytes, expected %u", size, L);
    memcpy(cur, bytes, L);
  } else if (p->ops[p->n_ops - 1] == H5FZ_OP_RZE) {
    if (h5fz_fast_rze_decode(bytes, size, cur, L, w->scratch))
      return h5fz_fail(H5FZ_ERR_CORRUPT, "sub-chunk RZE stream of %u bytes is inconsistent", size);
  } else if (p->ops[p->n_ops - 1] == H5FZ_OP_BITPACK) {
    if (wide ? h5fz_bitpack_decode_64(&one_thread, bytes, size, (uint64_t *)cur, m_pad)
             : h5fz_bitpack_decode_32(&one_thread, bytes, size, (uint32_t *)cur, m_pad))
      return h5fz_fail(H5FZ_ERR_CORRUPT, "sub-chunk bit-packed stream of %u bytes is inconsistent", size);
  } else {
    return h5fz_fail(H5FZ_ERR_CORRUPT, "sub-chunk of a raw-coded chain is not marked raw");
  }
  for (uint32_t i = p->n_ops - 1; i-- > 1;) {
    if (i >= 2 && fuses(p, i - 1)) {
      if (wide) h5fz_fast_undo_then_delta_decode_64(p->ops[i], (const uint64_t *)cur, (uint64_t *)other, m_pad);
      else h5fz_fast_undo_then_delta_decode_32(p->ops[i], (const uint32_t *)cur, (uint32_t *)other, m_pad);
      i--;
    } else {
      transform_decode(p, s, p->ops[i], wide, cur, other, m_pad);
    }
    uint8_t *t = cur;
    cur = other;
    other = t;
  }
  if (p->quant.mode > H5FZ_QMODE_REL) {
    if (wide) h5fz_quant_decode_64(&one_thread, (const uint64_t *)cur, m, &p->quant, values);
    else h5fz_quant_decode_32(&one_thread, (const uint32_t *)cur, m, &p->quant, values);
  } else if (wide) {
    h5fz_fast_quant_decode_64((const uint64_t *)cur, m, &p->quant, values);
  } else {
    h5fz_fast_quant_decode_32((const uint32_t *)cur, m, &p->quant, values);
  }
  return H5FZ_OK;
}
