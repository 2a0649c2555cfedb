/*
 * h5fz_crc32.c - zlib's CRC-32 by folding with PCLMULQDQ (see h5fz_crc32.h).
 *
 * The method of Gopal et al., "Fast CRC Computation for Generic
 * Polynomials Using PCLMULQDQ Instruction" (Intel, 2009), in the form of
 * Linux's arch/x86/crypto/crc32-pclmul_asm.S, with its constants (powers
 * of x modulo the bit-reflected polynomial, and its Barrett pair): 4
 * blocks of 16 bytes folded 64 bytes ahead at a time, then into one
 * block, then 128 -> 64 -> 32 bits and a Barrett reduction. That works on
 * the CRC register without zlib's inversions, which are applied around
 * it; whole 16-byte blocks from 64 bytes on go through it, what is left
 * (and every CPU without PCLMULQDQ) through zlib.
 */
#include <zlib.h>

#include "h5fz_crc32.h"

/* zlib over any length (its crc32 takes uInt lengths). */
static uint32_t crc32_zlib(uint32_t crc, const uint8_t *buf, size_t len)
{
  uLong c = crc;
  while (len) {
    uInt part = len > 0x40000000u ? 0x40000000u : (uInt)len;
    c = crc32(c, buf, part);
    buf += part;
    len -= part;
  }
  return (uint32_t)c;
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(H5FZ_NO_CLONES)
#define H5FZ_CRC_PCLMUL 1
#include <immintrin.h>

/* The CRC register (no inversions) over len bytes, len >= 64 and a
 * multiple of 16. */
__attribute__((target("pclmul,sse4.1"))) static uint32_t crc32_fold(uint32_t reg, const uint8_t *buf, size_t len)
{
  const __m128i k1k2 = _mm_set_epi64x(0x1c6e41596ll, 0x154442bd4ll); /* 64 bytes ahead */
  const __m128i k3k4 = _mm_set_epi64x(0x0ccaa009ell, 0x1751997d0ll); /* 16 bytes ahead */
  const __m128i k5 = _mm_set_epi64x(0, 0x163cd6124ll);
  const __m128i poly = _mm_set_epi64x(0x1f7011641ll, 0x1db710641ll); /* Barrett: u', P' */
  const __m128i mask32 = _mm_set_epi32(0, 0, 0, -1);
  __m128i x1 = _mm_loadu_si128((const __m128i *)buf), x2 = _mm_loadu_si128((const __m128i *)(buf + 16));
  __m128i x3 = _mm_loadu_si128((const __m128i *)(buf + 32)), x4 = _mm_loadu_si128((const __m128i *)(buf + 48));
  x1 = _mm_xor_si128(x1, _mm_cvtsi32_si128((int)reg));
  buf += 64;
  len -= 64;
#define FOLD(x, k, data)                                                                                               \
  _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00), _mm_clmulepi64_si128(x, k, 0x11)), data)
  for (; len >= 64; buf += 64, len -= 64) {
    x1 = FOLD(x1, k1k2, _mm_loadu_si128((const __m128i *)buf));
    x2 = FOLD(x2, k1k2, _mm_loadu_si128((const __m128i *)(buf + 16)));
    x3 = FOLD(x3, k1k2, _mm_loadu_si128((const __m128i *)(buf + 32)));
    x4 = FOLD(x4, k1k2, _mm_loadu_si128((const __m128i *)(buf + 48)));
  }
  x1 = FOLD(x1, k3k4, x2);
  x1 = FOLD(x1, k3k4, x3);
  x1 = FOLD(x1, k3k4, x4);
  for (; len >= 16; buf += 16, len -= 16) x1 = FOLD(x1, k3k4, _mm_loadu_si128((const __m128i *)buf));
#undef FOLD
  /* 128 -> 64 bits (x1.lo times x^96 mod P, k4), then 64 -> 32 (k5) */
  x1 = _mm_xor_si128(_mm_clmulepi64_si128(k3k4, x1, 0x01), _mm_srli_si128(x1, 8));
  __m128i hi = _mm_srli_si128(x1, 4);
  x1 = _mm_xor_si128(_mm_clmulepi64_si128(_mm_and_si128(x1, mask32), k5, 0x00), hi);
  /* Barrett reduction, bit-reflected: 64 -> 32 bits */
  __m128i t = _mm_clmulepi64_si128(_mm_and_si128(x1, mask32), poly, 0x10);
  t = _mm_clmulepi64_si128(_mm_and_si128(t, mask32), poly, 0x00);
  return (uint32_t)_mm_extract_epi32(_mm_xor_si128(t, x1), 1);
}
#endif

uint32_t h5fz_crc32(uint32_t crc, const uint8_t *buf, size_t len)
{
#ifdef H5FZ_CRC_PCLMUL
  if (len >= 64 && __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1")) {
    size_t bulk = len & ~(size_t)15;
    crc = ~crc32_fold(~crc, buf, bulk);
    buf += bulk;
    len -= bulk;
  }
#endif
  return crc32_zlib(crc, buf, len);
}
