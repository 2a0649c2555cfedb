/*
 * op_planes_avx2.h - 32 words from their bit planes in AVX2, header only,
 * for the CPU decodes that read bit planes (op_fused_decode_cpu.c,
 * op_bitshuffle_cpu.c). Host C only, x86-64 with GCC-style target
 * attributes; the includer checks AVX2 at run time.
 *
 * A group is 32 words, bytes j .. j+3 of each plane (pb bytes a plane).
 * A plane's 4 bytes are spread to 32 bytes (byte i = the plane's bit of
 * word i) by a broadcast, a byte shuffle and a compare, and 8 planes are
 * summed into one byte per word (r = 2r + bit): a row. 4 rows interleave
 * into the 32 words.
 */
#ifndef H5FZ_OP_PLANES_AVX2_H
#define H5FZ_OP_PLANES_AVX2_H

#include <immintrin.h>
#include <stdint.h>
#include <string.h>

static inline uint32_t h5fz_planes_ld32(const uint8_t *p)
{
  uint32_t v;
  memcpy(&v, p, 4); /* x86: little-endian, as the planes */
  return v;
}

/* Row of planes s[0], s[pb], ..., s[7 pb] (4 bytes each: the group's bits
 * of 8 planes): byte i = the 8 planes' bits of word i, plane 0 lowest. */
__attribute__((target("avx2"))) static inline __m256i h5fz_planes_row(const uint8_t *s, uint32_t pb)
{
  /* byte i of the group's 4 plane bytes is byte i / 8; its bit i % 8 */
  const __m256i spread = _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3,
                                          3, 3, 3, 3, 3, 3);
  const __m256i bit = _mm256_set1_epi64x(0x8040201008040201ll);
  __m256i r = _mm256_setzero_si256();
  for (uint32_t q = 8u; q-- > 0;) {
    __m256i x = _mm256_shuffle_epi8(_mm256_set1_epi32((int)h5fz_planes_ld32(s + (size_t)q * pb)), spread);
    r = _mm256_sub_epi8(_mm256_add_epi8(r, r), _mm256_cmpeq_epi8(_mm256_and_si256(x, bit), bit));
  }
  return r;
}

/* Which of the first nr rows (8 planes each) of the group at byte j hold a
 * set bit: bit b for row b. */
static inline uint32_t h5fz_planes_rows(const uint8_t *planes, uint32_t pb, uint32_t j, uint32_t nr)
{
  uint32_t rows = 0;
  for (uint32_t b = 0; b < nr; b++) {
    const uint8_t *s = planes + (size_t)8u * b * pb + j;
    uint32_t any = 0;
    for (uint32_t q = 0; q < 8u; q++) any |= h5fz_planes_ld32(s + (size_t)q * pb);
    rows |= (uint32_t)(any != 0) << b;
  }
  return rows;
}

/* The group's words 0-7, 8-15, 16-23, 24-31 into w[0..3], building only
 * the rows set in rows (the others are zero). */
__attribute__((target("avx2"))) static inline void h5fz_planes_words(const uint8_t *planes, uint32_t pb, uint32_t j,
                                                                      uint32_t rows, __m256i w[4])
{
  __m256i R[4];
  for (uint32_t b = 0; b < 4u; b++)
    R[b] = (rows >> b) & 1u ? h5fz_planes_row(planes + (size_t)8u * b * pb + j, pb) : _mm256_setzero_si256();
  /* rows (byte b of words 0-15 | 16-31) -> 16-bit pairs -> words */
  __m256i a = _mm256_unpacklo_epi8(R[0], R[1]), c = _mm256_unpacklo_epi8(R[2], R[3]);
  __m256i b = _mm256_unpackhi_epi8(R[0], R[1]), d = _mm256_unpackhi_epi8(R[2], R[3]);
  __m256i w0 = _mm256_unpacklo_epi16(a, c), w1 = _mm256_unpackhi_epi16(a, c);
  __m256i w2 = _mm256_unpacklo_epi16(b, d), w3 = _mm256_unpackhi_epi16(b, d);
  w[0] = _mm256_permute2x128_si256(w0, w1, 0x20);
  w[1] = _mm256_permute2x128_si256(w2, w3, 0x20);
  w[2] = _mm256_permute2x128_si256(w0, w1, 0x31);
  w[3] = _mm256_permute2x128_si256(w2, w3, 0x31);
}

#endif /* H5FZ_OP_PLANES_AVX2_H */
