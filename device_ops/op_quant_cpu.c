/*
 * op_quant_cpu.c - the CPU fast form of the quantizer (twin of op_quant.h;
 * see op_quant_cpu.h). Same bytes as the reference with the one-thread
 * block; the linear modes ABS/REL (PW_REL and LOSSLESS run the reference
 * map) are the expressions of op_quant.h in a loop without branches
 * (escapes found afterwards per block of 64), compiled for SSE4.1 / AVX2
 * where the CPU has them (runtime dispatch) so that rint() is one round
 * instruction; -ffp-contract=off, the only fused multiply-add is the
 * float32 bin's (h5fz_bin_f32: fma(), one instruction with FMA3).
 */
#include <stddef.h>
#include <string.h>

#include "op_cpu_util.h"
#include "op_quant_cpu.h"

static const h5fz_blk one_thread = {0u, 1u, NULL};

/* ------------------------------------------------------------- quantizer */

#define BIN_64(x, inv_step) rint((x) * (inv_step)) /* float64's bin: the rounded product's rint */

/* Word and escape flag of one value: the expressions of op_quant.h
 * (h5fz_quant_one), written without branches. The -0.0 test compares the
 * bits, which is x == 0 && signbit(x); so do the fill value's (x's bits and
 * the reconstruction's). A block
 * of 64 with an escape is listed again by the reference (QUANT_ONE). */
#define QUANT_ENCODE_BODY(FLOAT, WORD, SWORD, MAXBIN, SIGNBIT, QUANT_ONE, BIN)                                         \
  uint32_t count = 0;                                                                                                  \
  const double inv_step = p->inv_step, step = p->step, eb = p->eb;                                                     \
  const WORD fill = (WORD)p->fill_bits;                                                                                \
  for (uint32_t base = 0; base < m; base += 64u) {                                                                     \
    uint32_t end = m - base < 64u ? m - base : 64u;                                                                    \
    const FLOAT *x = in + base;                                                                                        \
    WORD *o = out + base;                                                                                              \
    uint32_t bad = 0;                                                                                                  \
    for (uint32_t i = 0; i < end; i++) {                                                                               \
      FLOAT xi = x[i];                                                                                                 \
      WORD bits;                                                                                                       \
      memcpy(&bits, &xi, sizeof bits);                                                                                 \
      double b = BIN((double)xi, inv_step);                                                                            \
      int ok = fabs(b) <= (double)(MAXBIN);                                                                            \
      SWORD bin = (SWORD)(ok ? b : 0.0);                                                                               \
      FLOAT r = (FLOAT)((double)bin * step);                                                                           \
      WORD rbits;                                                                                                      \
      memcpy(&rbits, &r, sizeof rbits);                                                                                \
      ok &= fabs((double)xi - (double)r) <= eb;                                                                        \
      ok &= (bits != (WORD)(SIGNBIT)) & (bits != fill) & (rbits != fill);                                              \
      o[i] = ok ? (WORD)bin : (WORD)0;                                                                                 \
      bad |= (uint32_t)!ok;                                                                                            \
    }                                                                                                                  \
    if (bad) /* rare: list the escapes of this block in index order */                                                 \
      for (uint32_t i = 0; i < end; i++) {                                                                             \
        WORD w;                                                                                                        \
        if (QUANT_ONE(x[i], p, &w)) {                                                                                  \
          out_pos[count] = base + i;                                                                                   \
          memcpy(&out_val[count], &x[i], sizeof(WORD));                                                                \
          count++;                                                                                                     \
        }                                                                                                              \
      }                                                                                                                \
  }                                                                                                                    \
  for (uint32_t i = m; i < m_pad; i++) out[i] = 0;                                                                     \
  return count;

#if defined(__x86_64__) && defined(__GNUC__) && !defined(H5FZ_NO_CLONES)
#define H5FZ_QUANT_AVX2 1
#include <immintrin.h>
/* One block of 64 (or fewer: end) float32 values, 4 at a time in AVX2 and
 * FMA3, with the scalar expressions lane by lane: (double)x, the bin
 * (h5fz_bin_f32: fma with 1.5 * 2^52, less 1.5 * 2^52), |b| <= 2^30 (false for NaN), (int32) of an
 * integral double, (double)bin * step, (float) of it (round to nearest as
 * the scalar conversion), |x - r| <= eb, bits != -0.0 and neither x's
 * nor r's bits are the fill value's. The bin's is the only fused multiply-add.
 * Returns whether any value of the block escapes. */
__attribute__((target("avx2,fma"))) static uint32_t quant_block_32_avx2(const float *x, uint32_t end,
                                                                        const h5fz_quant_params *p, uint32_t *o)
{
  const __m256d inv = _mm256_set1_pd(p->inv_step), step = _mm256_set1_pd(p->step);
  const __m256d eb = _mm256_set1_pd(p->eb), maxbin = _mm256_set1_pd(1073741824.0);
  const __m256d magic = _mm256_set1_pd(6755399441055744.0);
  const __m256d absmask = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7fffffffffffffffll));
  const __m128i negzero = _mm_set1_epi32((int)0x80000000u), fill = _mm_set1_epi32((int)(uint32_t)p->fill_bits);
  uint32_t bad = 0, i = 0;
  for (; i + 4u <= end; i += 4u) {
    __m128 xf = _mm_loadu_ps(x + i);
    __m256d xd = _mm256_cvtps_pd(xf);
    __m256d b = _mm256_sub_pd(_mm256_fmadd_pd(xd, inv, magic), magic);
    __m256d inr = _mm256_cmp_pd(_mm256_and_pd(b, absmask), maxbin, _CMP_LE_OQ);
    __m128i bin = _mm256_cvttpd_epi32(_mm256_and_pd(b, inr)); /* 0 where out of range */
    __m128 rf = _mm256_cvtpd_ps(_mm256_mul_pd(_mm256_cvtepi32_pd(bin), step));
    __m256d r = _mm256_cvtps_pd(rf);
    __m256d okd = _mm256_and_pd(inr, _mm256_cmp_pd(_mm256_and_pd(_mm256_sub_pd(xd, r), absmask), eb, _CMP_LE_OQ));
    /* 64-bit lane masks -> 32-bit lane masks */
    __m256i okl = _mm256_castpd_si256(okd);
    __m128i ok32 =
        _mm_castps_si128(_mm_shuffle_ps(_mm_castsi128_ps(_mm256_castsi256_si128(okl)),
                                        _mm_castsi128_ps(_mm256_extracti128_si256(okl, 1)), _MM_SHUFFLE(2, 0, 2, 0)));
    ok32 = _mm_andnot_si128(_mm_cmpeq_epi32(_mm_castps_si128(xf), negzero), ok32);
    ok32 = _mm_andnot_si128(_mm_cmpeq_epi32(_mm_castps_si128(xf), fill), ok32);
    ok32 = _mm_andnot_si128(_mm_cmpeq_epi32(_mm_castps_si128(rf), fill), ok32);
    _mm_storeu_si128((__m128i *)(o + i), _mm_and_si128(bin, ok32));
    bad |= (uint32_t)_mm_movemask_ps(_mm_castsi128_ps(ok32)) ^ 0xfu;
  }
  for (; i < end; i++) {
    uint32_t w = 0;
    if (h5fz_quant_one_32(x[i], p, &w)) bad = 1, w = 0;
    o[i] = w;
  }
  return bad;
}
#endif

H5FZ_CLONES
static uint32_t quant_encode_32_scalar(const float *in, uint32_t m, uint32_t m_pad, const h5fz_quant_params *p,
                                       uint32_t *out, uint32_t *out_pos, uint32_t *out_val){
    QUANT_ENCODE_BODY(float, uint32_t, int32_t, 1073741824, 0x80000000u, h5fz_quant_one_32, h5fz_bin_f32)}

uint32_t h5fz_fast_quant_encode_32(const float *in, uint32_t m, uint32_t m_pad, const h5fz_quant_params *p,
                                   uint32_t *out, uint32_t *out_pos, uint32_t *out_val)
{
  if (!H5FZ_QMODE_FAST(p->mode)) /* PW_REL, LOSSLESS: the reference map */
    return h5fz_quant_encode_32(&one_thread, in, m, m_pad, p, out, out_pos, out_val);
#ifdef H5FZ_QUANT_AVX2
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    uint32_t count = 0;
    for (uint32_t base = 0; base < m; base += 64u) {
      uint32_t end = m - base < 64u ? m - base : 64u;
      if (!quant_block_32_avx2(in + base, end, p, out + base)) continue;
      for (uint32_t i = 0; i < end; i++) { /* rare: list this block's escapes */
        uint32_t w;
        if (h5fz_quant_one_32(in[base + i], p, &w)) {
          out_pos[count] = base + i;
          out_val[count] = h5fz_float_bits_32(in[base + i]);
          count++;
        }
      }
    }
    for (uint32_t i = m; i < m_pad; i++) out[i] = 0;
    return count;
  }
#endif
  return quant_encode_32_scalar(in, m, m_pad, p, out, out_pos, out_val);
}

H5FZ_CLONES
uint32_t h5fz_fast_quant_encode_64(const double *in, uint32_t m, uint32_t m_pad, const h5fz_quant_params *p,
                                   uint64_t *out, uint32_t *out_pos, uint64_t *out_val)
{
  if (!H5FZ_QMODE_FAST(p->mode)) /* PW_REL, LOSSLESS: the reference map */
    return h5fz_quant_encode_64(&one_thread, in, m, m_pad, p, out, out_pos, out_val);
  QUANT_ENCODE_BODY(double, uint64_t, int64_t, 4503599627370496LL, 0x8000000000000000ull, h5fz_quant_one_64, BIN_64)
}
#undef QUANT_ENCODE_BODY
#undef BIN_64

/* The decode of the linear modes: each word's bin times the step, as
 * h5fz_quant_value; the other modes run the reference. */
#define QUANT_DECODE(W, FLOAT, WORD, SWORD)                                                                            \
  H5FZ_CLONES void h5fz_fast_quant_decode_##W(const WORD *in, uint32_t n, const h5fz_quant_params *p, FLOAT *out)      \
  {                                                                                                                    \
    if (!H5FZ_QMODE_FAST(p->mode)) {                                                                                   \
      h5fz_quant_decode_##W(&one_thread, in, n, p, out);                                                               \
      return;                                                                                                          \
    }                                                                                                                  \
    const double step = p->step;                                                                                       \
    for (uint32_t i = 0; i < n; i++) out[i] = (FLOAT)((double)(SWORD)in[i] * step);                                    \
  }

QUANT_DECODE(32, float, uint32_t, int32_t)
QUANT_DECODE(64, double, uint64_t, int64_t)
#undef QUANT_DECODE
