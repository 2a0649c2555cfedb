/*
 * op_fused_decode_cpu.c - the default chain's word ops decoded in one pass
 * (see op_fused_decode_cpu.h): for each group of 32 words, their bytes from
 * the bit planes, unzigzag, the running sum, the quantizer's decode, the 32
 * values stored; nothing in between goes back to memory.
 *
 * AVX2 (checked at run time): the words of a group of 32 from their
 * planes as op_planes_avx2.h builds them. What makes it fast on real
 * data, besides the fusion:
 * - planes from `extent` on are zero (the RZE decode says where its
 *   output's last non-zero 64-byte block ends), so the rows above them are
 *   never built: smooth data needs 1 or 2 rows of the 4;
 * - a group whose planes are all zero (long runs: constant regions, NaN or
 *   fill land) only stores the running sum's value 32 times;
 * - the running sum of 8 words is three in-register steps, and the 4
 *   vectors of a group chain their totals by plain adds.
 * The values are (float)((double)(int32_t)bin * step) as h5fz_quant_recon:
 * int32 -> double is exact, the product and the rounding to float are the
 * same IEEE operations, no fused multiply-add.
 */
#include <string.h>

#include "op_fused_decode_cpu.h"

/* The bits of word i: bit q from plane q's byte i / 8 (op_bitshuffle.h),
 * for the CPUs without AVX2 (the callers prefer the three fast ops there). */
static void dzq_portable(const uint8_t *planes, uint32_t n, uint32_t m, double step, float *out)
{
  uint32_t pb = n / 8u, acc = 0;
  for (uint32_t i = 0; i < m; i++) {
    uint32_t u = 0;
    for (uint32_t q = 0; q < 32u; q++) u |= (uint32_t)((planes[(size_t)q * pb + i / 8u] >> (i & 7u)) & 1u) << q;
    acc += (u >> 1) ^ (0u - (u & 1u));
    out[i] = (float)((double)(int32_t)acc * step);
  }
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(H5FZ_NO_CLONES)
#define H5FZ_FUSED_AVX2 1
#include "op_planes_avx2.h"

/* 8 running sums -> 8 values: (float)((double)(int32_t)x * step). */
__attribute__((target("avx2"))) static inline __m256 dequant8(__m256i x, __m256d step)
{
  __m256d lo = _mm256_mul_pd(_mm256_cvtepi32_pd(_mm256_castsi256_si128(x)), step);
  __m256d hi = _mm256_mul_pd(_mm256_cvtepi32_pd(_mm256_extracti128_si256(x, 1)), step);
  return _mm256_set_m128(_mm256_cvtpd_ps(hi), _mm256_cvtpd_ps(lo));
}

/* Unzigzag and inclusive running sum of 8 words, from 0. */
__attribute__((target("avx2"))) static inline __m256i unzz_scan8(__m256i w)
{
  __m256i x = _mm256_xor_si256(_mm256_srli_epi32(w, 1), _mm256_sub_epi32(_mm256_setzero_si256(),
                                                                          _mm256_and_si256(w, _mm256_set1_epi32(1))));
  x = _mm256_add_epi32(x, _mm256_slli_si256(x, 4)); /* within each 128-bit lane */
  x = _mm256_add_epi32(x, _mm256_slli_si256(x, 8));
  __m256i t = _mm256_shuffle_epi32(x, 0xff);            /* each lane's total ... */
  t = _mm256_permute2x128_si256(t, t, 0x08);            /* ... the low one into the high lane */
  return _mm256_add_epi32(x, t);
}

__attribute__((target("avx2"))) static void dzq_avx2(const uint8_t *planes, uint32_t n, uint32_t extent, uint32_t m,
                                                     double step, float *out)
{
  const uint32_t pb = n / 8u; /* bytes a plane; a group is 4 of them */
  const uint32_t k = (extent + pb - 1u) / pb; /* planes that may hold a set bit (extent <= 4n: k <= 32) */
  const uint32_t nr = (k + 7u) / 8u;           /* rows of 8 planes that may */
  const __m256d vstep = _mm256_set1_pd(step);
  const __m256i top = _mm256_set1_epi32(7);
  __m256i carry = _mm256_setzero_si256(); /* the running sum so far, every lane */
  __m256 carry_value = _mm256_setzero_ps(); /* its value (bin 0: +0.0f) */
  float tail[32];
  for (uint32_t base = 0, j = 0; base < m; base += 32u, j += 4u) {
    float *o = base + 32u <= m ? out + base : tail;
    uint32_t rows = h5fz_planes_rows(planes, pb, j, nr); /* rows of 8 planes with a set bit here */
    if (!rows) { /* every word 0: the sum stays */
      for (uint32_t v = 0; v < 4u; v++) _mm256_storeu_ps(o + 8u * v, carry_value);
    } else {
      __m256i w[4];
      h5fz_planes_words(planes, pb, j, rows, w);
      __m256i x0 = unzz_scan8(w[0]), x1 = unzz_scan8(w[1]), x2 = unzz_scan8(w[2]), x3 = unzz_scan8(w[3]);
      /* the carries: plain adds of each vector's total */
      __m256i c1 = _mm256_add_epi32(carry, _mm256_permutevar8x32_epi32(x0, top));
      __m256i c2 = _mm256_add_epi32(c1, _mm256_permutevar8x32_epi32(x1, top));
      __m256i c3 = _mm256_add_epi32(c2, _mm256_permutevar8x32_epi32(x2, top));
      _mm256_storeu_ps(o, dequant8(_mm256_add_epi32(x0, carry), vstep));
      _mm256_storeu_ps(o + 8, dequant8(_mm256_add_epi32(x1, c1), vstep));
      _mm256_storeu_ps(o + 16, dequant8(_mm256_add_epi32(x2, c2), vstep));
      _mm256_storeu_ps(o + 24, dequant8(_mm256_add_epi32(x3, c3), vstep));
      carry = _mm256_add_epi32(c3, _mm256_permutevar8x32_epi32(x3, top));
      carry_value = dequant8(carry, vstep);
    }
    if (o == tail) memcpy(out + base, tail, (size_t)(m - base) * sizeof *out);
  }
}
#endif

int h5fz_fast_planes_dzq_ok(void)
{
#ifdef H5FZ_FUSED_AVX2
  return __builtin_cpu_supports("avx2");
#else
  return 0;
#endif
}

void h5fz_fast_planes_dzq_decode_32(const uint8_t *planes, uint32_t n, uint32_t extent, uint32_t m, double step,
                                    float *out)
{
  if (m > n) m = n;
#ifdef H5FZ_FUSED_AVX2
  if (__builtin_cpu_supports("avx2")) {
    dzq_avx2(planes, n, extent > 4u * n ? 4u * n : extent, m, step, out);
    return;
  }
#endif
  (void)extent;
  dzq_portable(planes, n, m, step, out);
}
