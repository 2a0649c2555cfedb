/*
 * h5fz_side.c - the outlier side section of a chunk (docs/format.md).
 *
 * Outliers are often clustered (NaN land masks, fill-value corners), so the
 * section stores position gaps and value bits XOR the previous outlier's
 * bits, each as words bit-shuffled and RZE-coded: a run of NaN costs about
 * one bit per value. Same ops as the payload, in their CPU fast forms
 * (device_ops/op_bitshuffle_cpu.c, op_rze_cpu.c: the bytes of the
 * reference ops, one thread).
 */
#include <stdlib.h>
#include <string.h>

#include "h5fz_format.h"
#include "h5fz_internal.h"
#include "h5fz_side.h"
#include "op_bitshuffle_cpu.h"
#include "op_rze_cpu.h"

/* Words (count of esize bytes, already padded to a multiple of 64 in buf)
 * -> bitshuffle -> RZE into out. Returns the entry (size | raw bit). */
static uint32_t pack_words(const void *words, uint32_t padded, uint32_t esize, uint8_t *shuffled, uint8_t *scratch,
                           uint8_t *out)
{
  uint32_t L = padded * esize;
  if (esize == 8)
    h5fz_fast_bitshuffle_encode_64(words, shuffled, padded);
  else
    h5fz_fast_bitshuffle_encode_32(words, shuffled, padded);
  uint32_t size = h5fz_fast_rze_encode(shuffled, L, out, L, scratch);
  if (size != H5FZ_RZE_NOT_SMALLER) return size;
  memcpy(out, shuffled, L);
  return L | H5FZ_SUB_RAW;
}

int h5fz_side_encode(const uint32_t *pos, const void *vals, uint32_t count, uint32_t esize, uint8_t **out,
                     size_t *out_len)
{
  uint32_t padded = h5fz_pad64(count);
  size_t L4 = (size_t)padded * 4u, Lv = (size_t)padded * esize;
  uint8_t *words = calloc(1, Lv), *shuffled = malloc(Lv), *scratch = malloc(h5fz_rze_scratch_bytes((uint32_t)Lv) + 64u);
  uint8_t *buf = malloc(8u + L4 + Lv);
  if (!words || !shuffled || !scratch || !buf) {
    free(words);
    free(shuffled);
    free(scratch);
    free(buf);
    return h5fz_fail(H5FZ_ERR_NOMEM, "cannot allocate the side section of %u outliers", count);
  }
  uint32_t *gaps = (uint32_t *)words;
  for (uint32_t i = 0; i < count; i++) gaps[i] = i ? pos[i] - pos[i - 1] - 1u : pos[0];
  uint32_t e_gaps = pack_words(gaps, padded, 4u, shuffled, scratch, buf + 8);
  size_t off = 8u + (e_gaps & H5FZ_SUB_SIZE_MASK);
  memset(words, 0, Lv);
  if (esize == 8) {
    const uint64_t *v = vals;
    uint64_t *x = (uint64_t *)words;
    for (uint32_t i = 0; i < count; i++) x[i] = v[i] ^ (i ? v[i - 1] : 0u);
  } else {
    const uint32_t *v = vals;
    uint32_t *x = (uint32_t *)words;
    for (uint32_t i = 0; i < count; i++) x[i] = v[i] ^ (i ? v[i - 1] : 0u);
  }
  uint32_t e_vals = pack_words(words, padded, esize, shuffled, scratch, buf + off);
  off += e_vals & H5FZ_SUB_SIZE_MASK;
  h5fz_put_u32(buf, e_gaps);
  h5fz_put_u32(buf + 4, e_vals);
  free(words);
  free(shuffled);
  free(scratch);
  *out = buf;
  *out_len = off;
  return H5FZ_OK;
}

/* Inverse of pack_words into words[0..padded). */
static int unpack_words(const uint8_t *in, size_t avail, uint32_t entry, uint32_t padded, uint32_t esize,
                        uint8_t *shuffled, uint8_t *scratch, void *words)
{
  uint32_t L = padded * esize, size = entry & H5FZ_SUB_SIZE_MASK;
  if (size > avail) return h5fz_fail(H5FZ_ERR_CORRUPT, "outlier section overruns the chunk");
  if (entry & H5FZ_SUB_RAW) {
    if (size != L) return h5fz_fail(H5FZ_ERR_CORRUPT, "raw outlier block has %u bytes, expected %u", size, L);
    memcpy(shuffled, in, L);
  } else if (h5fz_fast_rze_decode(in, size, shuffled, L, scratch)) {
    return h5fz_fail(H5FZ_ERR_CORRUPT, "outlier section RZE stream is inconsistent");
  }
  if (esize == 8)
    h5fz_fast_bitshuffle_decode_64(shuffled, words, padded);
  else
    h5fz_fast_bitshuffle_decode_32(shuffled, words, padded);
  return H5FZ_OK;
}

int h5fz_side_decode(const uint8_t *in, size_t len, uint32_t count, uint32_t esize, uint64_t n_elements, uint32_t *pos,
                     void *vals, size_t *used)
{
  if (len < 8) return h5fz_fail(H5FZ_ERR_TRUNCATED, "outlier section is truncated");
  uint32_t padded = h5fz_pad64(count);
  size_t Lv = (size_t)padded * esize;
  uint8_t *words = malloc(Lv), *shuffled = malloc(Lv), *scratch = malloc(h5fz_rze_scratch_bytes((uint32_t)Lv) + 64u);
  int rc = H5FZ_OK;
  if (!words || !shuffled || !scratch) {
    rc = h5fz_fail(H5FZ_ERR_NOMEM, "cannot allocate buffers for %u outliers", count);
    goto done;
  }
  uint32_t e_gaps = h5fz_get_u32(in), e_vals = h5fz_get_u32(in + 4);
  size_t off = 8;
  rc = unpack_words(in + off, len - off, e_gaps, padded, 4u, shuffled, scratch, words);
  if (rc) goto done;
  off += e_gaps & H5FZ_SUB_SIZE_MASK;
  const uint32_t *gaps = (const uint32_t *)words;
  /* the positions increase (each 1 + its gap past the one before, in 64
   * bits: no wrap), so the last is the largest: one check after the loop,
   * and the first outlier past the end found again only then */
  uint64_t p = 0;
  for (uint32_t i = 0; i < count; i++) {
    p = (i ? p + 1u : 0u) + gaps[i];
    pos[i] = (uint32_t)p;
  }
  if (count && p >= n_elements) {
    uint32_t i = 0;
    for (p = gaps[0]; p < n_elements; p += 1u + gaps[++i]) {}
    rc = h5fz_fail(H5FZ_ERR_CORRUPT, "outlier %u points past the chunk's %llu elements", i,
                   (unsigned long long)n_elements);
    goto done;
  }
  rc = unpack_words(in + off, len - off, e_vals, padded, esize, shuffled, scratch, words);
  if (rc) goto done;
  off += e_vals & H5FZ_SUB_SIZE_MASK;
  /* the running XOR in a register (read back from vals, it was a store
   * and a load in the chain of every value) */
  if (esize == 8) {
    const uint64_t *x = (const uint64_t *)words;
    uint64_t *v = vals, acc = 0;
    for (uint32_t i = 0; i < count; i++) v[i] = acc ^= x[i];
  } else {
    const uint32_t *x = (const uint32_t *)words;
    uint32_t *v = vals, acc = 0;
    for (uint32_t i = 0; i < count; i++) v[i] = acc ^= x[i];
  }
  *used = off;
done:
  free(words);
  free(shuffled);
  free(scratch);
  return rc;
}
