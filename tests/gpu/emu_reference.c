/*
 * emu_reference.c - the reference side of test_warp_fused_emu: the default
 * chain on one float32 sub-chunk of 4096 values with the plain op
 * functions (one thread, H5FZ_ON_GPU = 0), the bytes the CPU executor
 * writes for such a sub-chunk.
 */
#include <stdlib.h>
#include <string.h>

#include "emu_reference.h"
#include "h5fz_ops.h"

static const h5fz_blk one_thread = {0, 1, NULL};

uint32_t emu_ref_encode(const float *in, double eb, uint8_t *slot, uint32_t *opos, uint32_t *oval, uint32_t *ocount)
{
  h5fz_quant_params q = h5fz_quant_params_make(H5FZ_QMODE_ABS, eb);
  uint32_t *words = malloc(4096u * 4u), *deltas = malloc(4096u * 4u);
  uint8_t *planes = malloc(16384u), *scratch = malloc(h5fz_rze_scratch_bytes(16384u) + 64u);
  uint32_t size = 0;
  if (words && deltas && planes && scratch) {
    *ocount = h5fz_quant_encode_32(&one_thread, in, 4096u, 4096u, &q, words, opos, oval);
    h5fz_delta_zigzag_encode_32(&one_thread, words, deltas, 4096u);
    h5fz_bitshuffle_encode_32(&one_thread, deltas, planes, 4096u);
    size = h5fz_rze_encode(&one_thread, planes, 16384u, slot, 16384u, scratch);
    if (size == H5FZ_RZE_NOT_SMALLER) {
      memcpy(slot, planes, 16384u);
      size = 16384u | 0x80000000u;
    }
  }
  free(words);
  free(deltas);
  free(planes);
  free(scratch);
  return size;
}

int emu_ref_decode(const uint8_t *src, uint32_t entry, double eb, float *out)
{
  h5fz_quant_params q = h5fz_quant_params_make(H5FZ_QMODE_ABS, eb);
  uint32_t size = entry & 0x7fffffffu, *words = malloc(4096u * 4u);
  uint8_t *planes = malloc(16384u), *scratch = malloc(h5fz_rze_scratch_bytes(16384u) + 64u);
  int bad = !words || !planes || !scratch;
  if (!bad && (entry & 0x80000000u)) {
    if (size != 16384u) bad = 1; /* as the CPU executor and the size-table check */
    else memcpy(planes, src, 16384u);
  } else if (!bad && h5fz_rze_decode(&one_thread, src, size, planes, 16384u, scratch)) {
    bad = 1;
  }
  if (!bad) {
    h5fz_bitshuffle_decode_32(&one_thread, planes, words, 4096u);
    h5fz_delta_decode_fused_32(&one_thread, words, 4096u, 1, NULL, &q, 4096u, out);
  }
  free(words);
  free(planes);
  free(scratch);
  return bad;
}
