/*
 * emu_reference.c - the reference side of test_warp_fused_emu: the default
 * chain on one float32 sub-chunk (up to 4096 values) with the plain op
 * functions (one thread, H5FZ_ON_GPU = 0), the bytes the CPU executor
 * writes for such a sub-chunk.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu_reference.h"
#include "h5fz_ops.h"

uint32_t emu_random(void); /* cuda_emu.c */
int emu_errors(void);

static const h5fz_blk one_thread = {0, 1, NULL};

uint32_t emu_fill_bits = 0x7fc00000u;

uint32_t emu_ref_encode(const float *in, uint32_t m, double eb, uint8_t *slot, uint32_t *opos, uint32_t *oval,
                        uint32_t *ocount)
{
  const uint32_t m_pad = (m + 63u) & ~63u, L = 4u * m_pad;
  h5fz_quant_params q = h5fz_quant_params_make(H5FZ_QMODE_ABS, eb, emu_fill_bits);
  uint32_t *words = malloc(4096u * 4u), *deltas = malloc(4096u * 4u);
  uint8_t *planes = malloc(16384u), *scratch = malloc(h5fz_rze_scratch_bytes(16384u) + 64u);
  uint32_t size = 0;
  if (words && deltas && planes && scratch) {
    *ocount = h5fz_quant_encode_32(&one_thread, in, m, m_pad, &q, words, opos, oval);
    h5fz_delta_zigzag_encode_32(&one_thread, words, deltas, m_pad);
    h5fz_bitshuffle_encode_32(&one_thread, deltas, planes, m_pad);
    size = h5fz_rze_encode(&one_thread, planes, L, slot, L, scratch);
    if (size == H5FZ_RZE_NOT_SMALLER) {
      memcpy(slot, planes, L);
      size = L | 0x80000000u;
    }
  }
  free(words);
  free(deltas);
  free(planes);
  free(scratch);
  return size;
}

int emu_ref_decode(const uint8_t *src, uint32_t entry, uint32_t m, double eb, float *out)
{
  const uint32_t m_pad = (m + 63u) & ~63u, L = 4u * m_pad;
  h5fz_quant_params q = h5fz_quant_params_make(H5FZ_QMODE_ABS, eb, emu_fill_bits);
  uint32_t size = entry & 0x7fffffffu, *words = malloc(4096u * 4u);
  uint8_t *planes = malloc(16384u), *scratch = malloc(h5fz_rze_scratch_bytes(16384u) + 64u);
  int bad = !words || !planes || !scratch;
  if (!bad && (entry & 0x80000000u)) {
    if (size != L)
      bad = 1; /* as the CPU executor and the size-table check */
    else
      memcpy(planes, src, L);
  } else if (!bad && h5fz_rze_decode(&one_thread, src, size, planes, L, scratch)) {
    bad = 1;
  }
  if (!bad) {
    h5fz_bitshuffle_decode_32(&one_thread, planes, words, m_pad);
    h5fz_delta_decode_fused_32(&one_thread, words, m_pad, 1, NULL, &q, m, out);
  }
  free(words);
  free(planes);
  free(scratch);
  return bad;
}

uint32_t emu_ref_encode_lnd1(const float *chunk, uint32_t n, uint32_t first, uint32_t m, double eb, uint8_t *slot,
                             uint32_t *opos, uint32_t *oval, uint32_t *ocount)
{
  const uint32_t m_pad = (m + 63u) & ~63u, L = 4u * m_pad;
  h5fz_quant_params q = h5fz_quant_params_make(H5FZ_QMODE_ABS, eb, emu_fill_bits);
  uint32_t *words = malloc(4096u * 4u), *resid = malloc(4096u * 4u), *zz = malloc(4096u * 4u);
  uint8_t *planes = malloc(16384u), *scratch = malloc(h5fz_rze_scratch_bytes(16384u) + 64u);
  uint32_t size = 0, dims[1] = {n};
  h5fz_lnd_geom g = h5fz_lnd_geom_make(0, dims, n, 1u); /* no dims: the 1-D predictor */
  if (words && resid && zz && planes && scratch) {
    *ocount = h5fz_quant_encode_32(&one_thread, chunk + first, m, m_pad, &q, words, opos, oval);
    h5fz_lnd_encode_32(&one_thread, words, resid, m, m_pad, chunk, NULL, first, g, &q);
    h5fz_zigzag_encode_32(&one_thread, resid, zz, m_pad);
    h5fz_bitshuffle_encode_32(&one_thread, zz, planes, m_pad);
    size = h5fz_rze_encode(&one_thread, planes, L, slot, L, scratch);
    if (size == H5FZ_RZE_NOT_SMALLER) {
      memcpy(slot, planes, L);
      size = L | 0x80000000u;
    }
  }
  free(words);
  free(resid);
  free(zz);
  free(planes);
  free(scratch);
  return size;
}

int emu_ref_decode_lnd1(const uint8_t *src, uint32_t entry, uint32_t n, uint32_t first, uint32_t m, uint32_t *words,
                        uint64_t *aux)
{
  const uint32_t m_pad = (m + 63u) & ~63u, L = 4u * m_pad;
  uint32_t size = entry & 0x7fffffffu, *zz = malloc(4096u * 4u), *w = malloc(4096u * 4u), *tmp = malloc(4096u * 4u);
  uint8_t *planes = malloc(16384u), *scratch = malloc(h5fz_rze_scratch_bytes(16384u) + 64u);
  uint32_t dims[1] = {n};
  h5fz_lnd_geom g = h5fz_lnd_geom_make(0, dims, n, 1u);
  int bad = !zz || !w || !tmp || !planes || !scratch;
  if (!bad && (entry & 0x80000000u)) {
    if (size != L)
      bad = 1;
    else
      memcpy(planes, src, L);
  } else if (!bad && h5fz_rze_decode(&one_thread, src, size, planes, L, scratch)) {
    bad = 1;
  }
  if (!bad) {
    h5fz_bitshuffle_decode_32(&one_thread, planes, zz, m_pad);
    h5fz_zigzag_decode_32(&one_thread, zz, w, m_pad);
    h5fz_lnd_xscan_32(&one_thread, w, tmp, m, m_pad, first, g, aux);
    memcpy(words, w, m * 4u);
  }
  free(zz);
  free(w);
  free(tmp);
  free(planes);
  free(scratch);
  return bad;
}

uint32_t emu_ref_fast_encode(const float *in, uint32_t m, double eb, uint8_t *slot, uint32_t *opos, uint32_t *oval,
                             uint32_t *ocount)
{
  const uint32_t m_pad = (m + 63u) & ~63u, L = 4u * m_pad;
  h5fz_quant_params q = h5fz_quant_params_make(H5FZ_QMODE_ABS, eb, emu_fill_bits);
  uint32_t *words = malloc(4096u * 4u), *deltas = malloc(4096u * 4u), size = 0;
  if (words && deltas) {
    *ocount = h5fz_quant_encode_32(&one_thread, in, m, m_pad, &q, words, opos, oval);
    h5fz_delta_zigzag_encode_32(&one_thread, words, deltas, m_pad);
    size = h5fz_bitpack_encode_32(&one_thread, deltas, m_pad, slot, L);
    if (size == H5FZ_RZE_NOT_SMALLER) {
      memcpy(slot, deltas, L);
      size = L | 0x80000000u;
    }
  }
  free(words);
  free(deltas);
  return size;
}

int emu_ref_fast_decode(const uint8_t *src, uint32_t entry, uint32_t m, double eb, float *out)
{
  const uint32_t m_pad = (m + 63u) & ~63u, L = 4u * m_pad;
  h5fz_quant_params q = h5fz_quant_params_make(H5FZ_QMODE_ABS, eb, emu_fill_bits);
  uint32_t size = entry & 0x7fffffffu, *words = malloc(4096u * 4u);
  int bad = !words;
  if (!bad && (entry & 0x80000000u)) {
    if (size != L)
      bad = 1; /* as the CPU executor and the size-table check */
    else
      memcpy(words, src, L);
  } else if (!bad && h5fz_bitpack_decode_32(&one_thread, src, size, words, m_pad)) {
    bad = 1;
  }
  if (!bad) h5fz_delta_decode_fused_32(&one_thread, words, m_pad, 1, NULL, &q, m, out);
  free(words);
  return bad;
}

static double uniform(void) { return emu_random() / 4294967296.0; }

static const char *const kind_names[] = {"smooth",
                                         "noise",
                                         "zeros",
                                         "constant",
                                         "alternating bins near 2^30",
                                         "random bits",
                                         "escapes (NaN, Inf, -0.0, huge, subnormal)",
                                         "dense and flat halves",
                                         "sparse spikes",
                                         "ramps",
                                         "wide range",
                                         "bins over the whole range (raw at abs=0.3)"};

void emu_input(unsigned kind, float *x, uint32_t n)
{
  static const float specials[] = {NAN, INFINITY, -INFINITY, -0.0f, 3e37f, -3e37f, 1e-40f, 7e30f, 0.0f, 1e-45f};
  for (unsigned i = 0; i < n; i++) {
    double v = 0;
    switch (kind) {
    case 0: v = 100.0 * sin(i * 1e-3) + 3.0 * cos(i * 0.37); break;
    case 1: v = uniform() * 2000.0 - 1000.0; break;
    case 2: v = 0; break;
    case 3: v = 42.5; break;
    case 4: v = (i & 1u ? 1.0 : -1.0) * (1e9 - (i % 1000u) * 128.0); break;
    case 5: {
      uint32_t u = emu_random();
      memcpy(&x[i], &u, 4);
      continue;
    }
    case 6:
      v = 10.0 * sin(i * 1e-2);
      if (emu_random() % 16u == 0) {
        x[i] = specials[emu_random() % 10u];
        continue;
      }
      break;
    case 7: v = (i / 512u) % 2u ? uniform() * 1e6 : 1.0; break;
    case 8: v = emu_random() % 64u == 0 ? uniform() * 1e5 : 0.0; break;
    case 9: v = i * 1e-3 * ((i / 128u) % 3u); break;
    case 10: v = ldexp(uniform() - 0.5, (int)(emu_random() % 40u) - 10); break;
    default: v = (uniform() * 2.0 - 1.0) * 1073741823.0 * 0.6; break; /* every bit of the zigzag words busy */
    }
    x[i] = (float)v;
  }
}

const char *emu_input_name(unsigned kind) { return kind < EMU_INPUT_KINDS ? kind_names[kind] : "?"; }

int emu_summary(unsigned cases, unsigned raw, unsigned changed, int failures)
{
  int emu = emu_errors();
  if (emu) {
    printf("FAIL: the emulator saw %d error(s) (divergent collectives, partial masks or deadlocks; see stderr)\n", emu);
    failures++;
  }
  printf("%u sub-chunks (%u raw), %u changed streams: %s (%d failed)\n", cases, raw, changed,
         failures ? "FAIL" : "PASS", failures);
  return failures ? 1 : 0;
}
