/*
 * op_bitshuffle_cpu.c - the CPU fast form of bitshuffle (twin of
 * op_bitshuffle.h; see op_bitshuffle_cpu.h). Same bytes as the reference
 * with the one-thread block; only the way of computing them differs: 8
 * words at a time, byte b of the 8 words packed into one uint64 (an 8x8
 * bit matrix, row k = word k) and transposed, so that byte q of the result
 * is byte j of plane 8b+q; 16 words at a time with SSE2 (the x86-64
 * baseline); the 32-bit decode 32 words at a time with AVX2 where the CPU
 * has it (op_planes_avx2.h).
 */
#include <stddef.h>
#include <string.h>

#include "op_bitshuffle_cpu.h"
#include "op_cpu_transform.h"
#include "op_cpu_util.h"

/* ------------------------------------------------------------ bitshuffle */

/* Bit planes 8b..8b+7 of one group of 8 words. */
#define BS_STORE(x, b)                                                                                                 \
  do {                                                                                                                 \
    uint64_t y_ = transpose8(x);                                                                                       \
    uint8_t *o_ = out + (size_t)(8u * (b)) * pb + j;                                                                   \
    for (uint32_t q = 0; q < 8u; q++) o_[(size_t)q * pb] = (uint8_t)(y_ >> (8u * q));                                  \
  } while (0)

static void bs_encode_32_groups(const uint32_t *in, uint8_t *out, uint32_t n, uint32_t j0)
{
  uint32_t pb = n / 8u;
  for (uint32_t j = j0; j < pb; j++) {
    const uint32_t *w = in + 8u * j;
    uint64_t x0 = 0, x1 = 0, x2 = 0, x3 = 0;
    for (uint32_t k = 0; k < 8u; k++) {
      uint64_t v = w[k];
      x0 |= (v & 0xffu) << (8u * k);
      x1 |= ((v >> 8) & 0xffu) << (8u * k);
      x2 |= ((v >> 16) & 0xffu) << (8u * k);
      x3 |= ((v >> 24) & 0xffu) << (8u * k);
    }
    BS_STORE(x0, 0u);
    BS_STORE(x1, 1u);
    BS_STORE(x2, 2u);
    BS_STORE(x3, 3u);
  }
}

static void bs_encode_64_groups(const uint64_t *in, uint8_t *out, uint32_t n, uint32_t j0)
{
  uint32_t pb = n / 8u;
  for (uint32_t j = j0; j < pb; j++) {
    const uint64_t *w = in + 8u * j;
    uint64_t x[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (uint32_t k = 0; k < 8u; k++) {
      uint64_t v = w[k];
      for (uint32_t b = 0; b < 8u; b++) x[b] |= ((v >> (8u * b)) & 0xffu) << (8u * k);
    }
    for (uint32_t b = 0; b < 8u; b++) BS_STORE(x[b], b);
  }
}
#undef BS_STORE

/* Byte j of planes 8b..8b+7, transposed: byte k = byte b of word 8j+k. */
static inline uint64_t bs_gather(const uint8_t *in, uint32_t pb, uint32_t j, uint32_t b)
{
  const uint8_t *s = in + (size_t)(8u * b) * pb + j;
  uint64_t x = 0;
  for (uint32_t q = 0; q < 8u; q++) x |= (uint64_t)s[(size_t)q * pb] << (8u * q);
  return transpose8(x);
}

static void bs_decode_32_groups(const uint8_t *in, uint32_t *out, uint32_t n, uint32_t j0)
{
  uint32_t pb = n / 8u;
  for (uint32_t j = j0; j < pb; j++) {
    uint64_t x0 = bs_gather(in, pb, j, 0), x1 = bs_gather(in, pb, j, 1);
    uint64_t x2 = bs_gather(in, pb, j, 2), x3 = bs_gather(in, pb, j, 3);
    uint32_t *w = out + 8u * j;
    for (uint32_t k = 0; k < 8u; k++)
      w[k] = (uint32_t)((x0 >> (8u * k)) & 0xffu) | (uint32_t)((x1 >> (8u * k)) & 0xffu) << 8 |
             (uint32_t)((x2 >> (8u * k)) & 0xffu) << 16 | (uint32_t)((x3 >> (8u * k)) & 0xffu) << 24;
  }
}

static void bs_decode_64_groups(const uint8_t *in, uint64_t *out, uint32_t n, uint32_t j0)
{
  uint32_t pb = n / 8u;
  for (uint32_t j = j0; j < pb; j++) {
    uint64_t x[8];
    for (uint32_t b = 0; b < 8u; b++) x[b] = bs_gather(in, pb, j, b);
    uint64_t *w = out + 8u * j;
    for (uint32_t k = 0; k < 8u; k++) {
      uint64_t v = 0;
      for (uint32_t b = 0; b < 8u; b++) v |= ((x[b] >> (8u * k)) & 0xffu) << (8u * b);
      w[k] = v;
    }
  }
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(H5FZ_NO_CLONES)
#define H5FZ_BS_AVX2 1
#include "op_planes_avx2.h"

/* AVX2 (checked at run time): 32 words a group (op_planes_avx2.h), rows
 * of 8 planes with no set bit in the group not built; returns the first
 * byte column left to the caller. */
__attribute__((target("avx2"))) static uint32_t bs_decode_32_avx2(const uint8_t *in, uint32_t *out, uint32_t n)
{
  uint32_t pb = n / 8u, j = 0;
  for (; j + 4u <= pb; j += 4u) {
    __m256i w[4];
    h5fz_planes_words(in, pb, j, h5fz_planes_rows(in, pb, j, 4u), w);
    __m256i *o = (__m256i *)(out + 8u * j);
    for (uint32_t v = 0; v < 4u; v++) _mm256_storeu_si256(o + v, w[v]);
  }
  return j;
}
#endif

#if defined(__SSE2__) && !defined(H5FZ_NO_SSE2)
/* SSE2 (the x86-64 baseline): 16 words at a time. */
#include <emmintrin.h>

/* Four vectors of 4 32-bit words (words 0..15) -> four vectors R_b, byte k
 * of R_b = byte b of word k. */
static inline void bytes_to_rows(__m128i a0, __m128i a1, __m128i a2, __m128i a3, __m128i r[4])
{
  __m128i u0 = _mm_unpacklo_epi8(a0, a1), u1 = _mm_unpackhi_epi8(a0, a1);
  __m128i u2 = _mm_unpacklo_epi8(a2, a3), u3 = _mm_unpackhi_epi8(a2, a3);
  __m128i v0 = _mm_unpacklo_epi8(u0, u1), v1 = _mm_unpackhi_epi8(u0, u1);
  __m128i v2 = _mm_unpacklo_epi8(u2, u3), v3 = _mm_unpackhi_epi8(u2, u3);
  __m128i x0 = _mm_unpacklo_epi8(v0, v1), x1 = _mm_unpackhi_epi8(v0, v1);
  __m128i x2 = _mm_unpacklo_epi8(v2, v3), x3 = _mm_unpackhi_epi8(v2, v3);
  r[0] = _mm_unpacklo_epi64(x0, x2);
  r[1] = _mm_unpackhi_epi64(x0, x2);
  r[2] = _mm_unpacklo_epi64(x1, x3);
  r[3] = _mm_unpackhi_epi64(x1, x3);
}

/* Planes 8b..8b+7 of 16 words from their row R_b: 2 bytes each at byte j. */
static inline void row_to_planes(__m128i r, uint8_t *out, uint32_t pb, uint32_t b, uint32_t j)
{
  for (uint32_t q = 8u; q-- > 0;) {
    uint32_t mk = (uint32_t)_mm_movemask_epi8(r);
    uint8_t *o = out + (size_t)(8u * b + q) * pb + j;
    o[0] = (uint8_t)mk;
    o[1] = (uint8_t)(mk >> 8);
    r = _mm_add_epi8(r, r);
  }
}

/* Inverse: row R_b of 16 words from 2 bytes of each of planes 8b..8b+7. */
static inline __m128i planes_to_row(const uint8_t *in, uint32_t pb, uint32_t b, uint32_t j)
{
  const uint8_t *s = in + (size_t)(8u * b) * pb + j;
  __m128i v = _mm_setzero_si128(), t;
  /* 16-bit lane q: bytes j, j+1 of plane 8b+q (pinsrw: the lane is an
   * immediate; the pointer steps a plane, cheaper than q * pb) */
#define INSERT(q) (v = _mm_insert_epi16(v, s[0] | s[1] << 8, q), s += pb)
  INSERT(0), INSERT(1), INSERT(2), INSERT(3), INSERT(4), INSERT(5), INSERT(6), INSERT(7);
#undef INSERT
  /* lane 0: byte q = plane q's bits of words 0..7; lane 1: words 8..15 */
  v = _mm_packus_epi16(_mm_and_si128(v, _mm_set1_epi16(0xff)), _mm_srli_epi16(v, 8));
  /* 8x8 bit transpose of each 64-bit lane (transpose8) */
  t = _mm_and_si128(_mm_xor_si128(v, _mm_srli_epi64(v, 7)), _mm_set1_epi64x(0x00AA00AA00AA00AAll));
  v = _mm_xor_si128(v, _mm_xor_si128(t, _mm_slli_epi64(t, 7)));
  t = _mm_and_si128(_mm_xor_si128(v, _mm_srli_epi64(v, 14)), _mm_set1_epi64x(0x0000CCCC0000CCCCll));
  v = _mm_xor_si128(v, _mm_xor_si128(t, _mm_slli_epi64(t, 14)));
  t = _mm_and_si128(_mm_xor_si128(v, _mm_srli_epi64(v, 28)), _mm_set1_epi64x(0x00000000F0F0F0F0ll));
  v = _mm_xor_si128(v, _mm_xor_si128(t, _mm_slli_epi64(t, 28)));
  return v;
}

/* Rows R_0..R_3 -> 16 32-bit words (4 vectors). */
static inline void rows_to_words(const __m128i r[4], __m128i w[4])
{
  __m128i a = _mm_unpacklo_epi8(r[0], r[1]), b = _mm_unpackhi_epi8(r[0], r[1]);
  __m128i c = _mm_unpacklo_epi8(r[2], r[3]), d = _mm_unpackhi_epi8(r[2], r[3]);
  w[0] = _mm_unpacklo_epi16(a, c);
  w[1] = _mm_unpackhi_epi16(a, c);
  w[2] = _mm_unpacklo_epi16(b, d);
  w[3] = _mm_unpackhi_epi16(b, d);
}

void h5fz_fast_bitshuffle_encode_32(const uint32_t *in, uint8_t *out, uint32_t n)
{
  uint32_t pb = n / 8u, g, r16 = n / 16u;
  for (g = 0; g < r16; g++) {
    const __m128i *v = (const __m128i *)(in + 16u * g);
    __m128i r[4];
    bytes_to_rows(_mm_loadu_si128(v), _mm_loadu_si128(v + 1), _mm_loadu_si128(v + 2), _mm_loadu_si128(v + 3), r);
    for (uint32_t b = 0; b < 4u; b++) row_to_planes(r[b], out, pb, b, 2u * g);
  }
  bs_encode_32_groups(in, out, n, 2u * r16);
}

void h5fz_fast_bitshuffle_encode_64(const uint64_t *in, uint8_t *out, uint32_t n)
{
  uint32_t pb = n / 8u, g, r16 = n / 16u;
  for (g = 0; g < r16; g++) {
    const __m128i *v = (const __m128i *)(in + 16u * g);
    __m128i lo[4], hi[4], r[4];
    for (uint32_t i = 0; i < 4u; i++) {
      /* [w0lo w0hi w1lo w1hi] -> [w0lo w1lo w0hi w1hi] */
      __m128i s0 = _mm_shuffle_epi32(_mm_loadu_si128(v + 2u * i), _MM_SHUFFLE(3, 1, 2, 0));
      __m128i s1 = _mm_shuffle_epi32(_mm_loadu_si128(v + 2u * i + 1u), _MM_SHUFFLE(3, 1, 2, 0));
      lo[i] = _mm_unpacklo_epi64(s0, s1);
      hi[i] = _mm_unpackhi_epi64(s0, s1);
    }
    bytes_to_rows(lo[0], lo[1], lo[2], lo[3], r);
    for (uint32_t b = 0; b < 4u; b++) row_to_planes(r[b], out, pb, b, 2u * g);
    bytes_to_rows(hi[0], hi[1], hi[2], hi[3], r);
    for (uint32_t b = 0; b < 4u; b++) row_to_planes(r[b], out, pb, 4u + b, 2u * g);
  }
  bs_encode_64_groups(in, out, n, 2u * r16);
}

void h5fz_fast_bitshuffle_decode_32(const uint8_t *in, uint32_t *out, uint32_t n)
{
  uint32_t pb = n / 8u, g, r16 = n / 16u;
#ifdef H5FZ_BS_AVX2
  if (__builtin_cpu_supports("avx2")) {
    bs_decode_32_groups(in, out, n, bs_decode_32_avx2(in, out, n));
    return;
  }
#endif
  for (g = 0; g < r16; g++) {
    __m128i r[4], w[4];
    for (uint32_t b = 0; b < 4u; b++) r[b] = planes_to_row(in, pb, b, 2u * g);
    rows_to_words(r, w);
    __m128i *o = (__m128i *)(out + 16u * g);
    for (uint32_t i = 0; i < 4u; i++) _mm_storeu_si128(o + i, w[i]);
  }
  bs_decode_32_groups(in, out, n, 2u * r16);
}

void h5fz_fast_bitshuffle_decode_64(const uint8_t *in, uint64_t *out, uint32_t n)
{
  uint32_t pb = n / 8u, g, r16 = n / 16u;
  for (g = 0; g < r16; g++) {
    __m128i r[4], lo[4], hi[4];
    for (uint32_t b = 0; b < 4u; b++) r[b] = planes_to_row(in, pb, b, 2u * g);
    rows_to_words(r, lo);
    for (uint32_t b = 0; b < 4u; b++) r[b] = planes_to_row(in, pb, 4u + b, 2u * g);
    rows_to_words(r, hi);
    __m128i *o = (__m128i *)(out + 16u * g);
    for (uint32_t i = 0; i < 4u; i++) {
      _mm_storeu_si128(o + 2u * i, _mm_unpacklo_epi32(lo[i], hi[i]));
      _mm_storeu_si128(o + 2u * i + 1u, _mm_unpackhi_epi32(lo[i], hi[i]));
    }
  }
  bs_decode_64_groups(in, out, n, 2u * r16);
}
#else
void h5fz_fast_bitshuffle_encode_32(const uint32_t *in, uint8_t *out, uint32_t n)
{
  bs_encode_32_groups(in, out, n, 0);
}
void h5fz_fast_bitshuffle_encode_64(const uint64_t *in, uint8_t *out, uint32_t n)
{
  bs_encode_64_groups(in, out, n, 0);
}
void h5fz_fast_bitshuffle_decode_32(const uint8_t *in, uint32_t *out, uint32_t n)
{
  bs_decode_32_groups(in, out, n, 0);
}
void h5fz_fast_bitshuffle_decode_64(const uint8_t *in, uint64_t *out, uint32_t n)
{
  bs_decode_64_groups(in, out, n, 0);
}
#endif

/* The op table's forms (op_cpu_transform.h): words -> bit planes, back. */
H5FZ_CPU_TRANSFORM_WORDS(bitshuffle, h5fz_fast_bitshuffle_encode, h5fz_fast_bitshuffle_decode);
