/*
 * h5fz_cpu_fast.c - CPU-specialised word ops (see h5fz_cpu_fast.h): the
 * quantizer, the word transforms and lorenzo_nd. Same bytes as device_ops/
 * with the one-thread block; the quantizer (linear modes ABS/REL; PW_REL
 * and LOSSLESS run the reference map) is the expressions of op_quant.h in a
 * loop without branches (escapes found afterwards per block of 64),
 * compiled for SSE4.1 / AVX2 where the CPU has them (runtime dispatch) so
 * that rint() is one round instruction; -ffp-contract=off, the only fused
 * multiply-add is the float32 bin's (h5fz_bin_f32: fma(), one instruction
 * with FMA3). Bitshuffle and RZE are in h5fz_cpu_fast_bits.c.
 */
#include <stddef.h>
#include <string.h>

#include "h5fz.h"
#include "h5fz_cpu_fast.h"
#include "h5fz_cpu_fast_util.h"

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
  if (p->mode > H5FZ_QMODE_REL) /* PW_REL, LOSSLESS: the reference map */
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
  if (p->mode > H5FZ_QMODE_REL) /* PW_REL, LOSSLESS: the reference map */
    return h5fz_quant_encode_64(&one_thread, in, m, m_pad, p, out, out_pos, out_val);
  QUANT_ENCODE_BODY(double, uint64_t, int64_t, 4503599627370496LL, 0x8000000000000000ull, h5fz_quant_one_64, BIN_64)
}
#undef QUANT_ENCODE_BODY
#undef BIN_64

H5FZ_CLONES
void h5fz_fast_quant_decode_32(const uint32_t *in, uint32_t n, const h5fz_quant_params *p, float *out)
{
  if (p->mode > H5FZ_QMODE_REL) {
    h5fz_quant_decode_32(&one_thread, in, n, p, out);
    return;
  }
  const double step = p->step;
  for (uint32_t i = 0; i < n; i++) out[i] = (float)((double)(int32_t)in[i] * step);
}

H5FZ_CLONES
void h5fz_fast_quant_decode_64(const uint64_t *in, uint32_t n, const h5fz_quant_params *p, double *out)
{
  if (p->mode > H5FZ_QMODE_REL) {
    h5fz_quant_decode_64(&one_thread, in, n, p, out);
    return;
  }
  const double step = p->step;
  for (uint32_t i = 0; i < n; i++) out[i] = (double)((double)(int64_t)in[i] * step);
}

/* ------------------------------------------------------------ transforms */

#define NEGA_M(WORD) ((WORD)((WORD) ~(WORD)0 / 3u * 2u))
#define ZZ_ENC(WORD, BITS, v) ((WORD)(((v) << 1) ^ ((WORD)0 - ((v) >> ((BITS)-1u)))))
#define ZZ_DEC(WORD, u) ((WORD)(((u) >> 1) ^ ((WORD)0 - ((u)&1u))))
#define NB_ENC(WORD, v) ((WORD)(((v) + NEGA_M(WORD)) ^ NEGA_M(WORD)))
#define NB_DEC(WORD, u) ((WORD)(((u) ^ NEGA_M(WORD)) - NEGA_M(WORD)))

#define TRANSFORMS(W, WORD, BITS)                                                                                      \
  int h5fz_fast_transform_encode_##W(uint8_t op, const WORD *in, WORD *out, uint32_t n)                                \
  {                                                                                                                    \
    switch (op) {                                                                                                      \
    case H5FZ_OP_DELTA:                                                                                                \
      if (n) out[0] = in[0];                                                                                           \
      for (uint32_t i = 1; i < n; i++) out[i] = (WORD)(in[i] - in[i - 1u]);                                            \
      return 0;                                                                                                        \
    case H5FZ_OP_ZIGZAG:                                                                                               \
      for (uint32_t i = 0; i < n; i++) out[i] = ZZ_ENC(WORD, BITS, in[i]);                                             \
      return 0;                                                                                                        \
    case H5FZ_OP_NEGABINARY:                                                                                           \
      for (uint32_t i = 0; i < n; i++) out[i] = NB_ENC(WORD, in[i]);                                                   \
      return 0;                                                                                                        \
    }                                                                                                                  \
    return -1;                                                                                                         \
  }                                                                                                                    \
  int h5fz_fast_transform_decode_##W(uint8_t op, const WORD *in, WORD *out, uint32_t n)                                \
  {                                                                                                                    \
    switch (op) {                                                                                                      \
    case H5FZ_OP_DELTA: {                                                                                              \
      WORD acc = 0;                                                                                                    \
      for (uint32_t i = 0; i < n; i++) out[i] = acc = (WORD)(acc + in[i]);                                             \
      return 0;                                                                                                        \
    }                                                                                                                  \
    case H5FZ_OP_ZIGZAG:                                                                                               \
      for (uint32_t i = 0; i < n; i++) out[i] = ZZ_DEC(WORD, in[i]);                                                   \
      return 0;                                                                                                        \
    case H5FZ_OP_NEGABINARY:                                                                                           \
      for (uint32_t i = 0; i < n; i++) out[i] = NB_DEC(WORD, in[i]);                                                   \
      return 0;                                                                                                        \
    }                                                                                                                  \
    return -1;                                                                                                         \
  }                                                                                                                    \
  void h5fz_fast_delta_then_encode_##W(uint8_t op2, const WORD *in, WORD *out, uint32_t n)                             \
  {                                                                                                                    \
    if (!n) return;                                                                                                    \
    if (op2 == H5FZ_OP_ZIGZAG) {                                                                                       \
      out[0] = ZZ_ENC(WORD, BITS, in[0]);                                                                              \
      for (uint32_t i = 1; i < n; i++) {                                                                               \
        WORD d = (WORD)(in[i] - in[i - 1u]);                                                                           \
        out[i] = ZZ_ENC(WORD, BITS, d);                                                                                \
      }                                                                                                                \
    } else {                                                                                                           \
      out[0] = NB_ENC(WORD, in[0]);                                                                                    \
      for (uint32_t i = 1; i < n; i++) out[i] = NB_ENC(WORD, (WORD)(in[i] - in[i - 1u]));                              \
    }                                                                                                                  \
  }                                                                                                                    \
  void h5fz_fast_undo_then_delta_decode_##W(uint8_t op2, const WORD *in, WORD *out, uint32_t n)                        \
  {                                                                                                                    \
    WORD acc = 0;                                                                                                      \
    if (op2 == H5FZ_OP_ZIGZAG)                                                                                         \
      for (uint32_t i = 0; i < n; i++) out[i] = acc = (WORD)(acc + ZZ_DEC(WORD, in[i]));                               \
    else                                                                                                               \
      for (uint32_t i = 0; i < n; i++) out[i] = acc = (WORD)(acc + NB_DEC(WORD, in[i]));                               \
  }

TRANSFORMS(32, uint32_t, 32u)
TRANSFORMS(64, uint64_t, 64u)

/* ------------------------------------------------------------ lorenzo_nd */

/* Row by row: along a row (or the part of it in the sub-chunk) whether the
 * element has a row above and a plane behind does not change, and only the
 * row's first element lacks a left neighbour, so each row is one loop the
 * compiler can vectorise. */
#define LND_ENCODE(W, WORD)                                                                                            \
  void h5fz_fast_lnd_encode_##W(const WORD *q, WORD *out, uint32_t first, uint32_t m, uint32_t m_pad, h5fz_lnd_geom g) \
  {                                                                                                                    \
    uint32_t ex, ey, i = 0;                                                                                            \
    h5fz_lnd_eff(&g, &ex, &ey);                                                                                        \
    uint32_t P = ex * ey;                                                                                              \
    while (i < m) {                                                                                                    \
      uint32_t gi = first + i, cx = gi % ex, len = ex - cx < m - i ? ex - cx : m - i, k = 0;                           \
      int up = gi / ex % ey > 0, back = gi >= P;                                                                       \
      const WORD *c = q + gi, *u = up ? c - ex : c, *b = back ? c - P : c, *bu = up ? b - ex : b;                      \
      WORD *o = out + i;                                                                                               \
      if (cx == 0) {                                                                                                   \
        WORD r = c[0];                                                                                                 \
        if (up) r = (WORD)(r - u[0]);                                                                                  \
        if (back) r = (WORD)(r - (up ? (WORD)(b[0] - bu[0]) : b[0]));                                                  \
        o[0] = r;                                                                                                      \
        k = 1;                                                                                                         \
      }                                                                                                                \
      if (!up && !back)                                                                                                \
        for (; k < len; k++) o[k] = (WORD)(c[k] - c[(ptrdiff_t)k - 1]);                                                \
      else if (!back)                                                                                                  \
        for (; k < len; k++) o[k] = (WORD)(c[k] - c[(ptrdiff_t)k - 1] - u[k] + u[(ptrdiff_t)k - 1]);                   \
      else if (!up)                                                                                                    \
        for (; k < len; k++) o[k] = (WORD)(c[k] - c[(ptrdiff_t)k - 1] - b[k] + b[(ptrdiff_t)k - 1]);                   \
      else                                                                                                             \
        for (; k < len; k++)                                                                                           \
          o[k] = (WORD)(c[k] - c[(ptrdiff_t)k - 1] - u[k] + u[(ptrdiff_t)k - 1] - b[k] + b[(ptrdiff_t)k - 1] + bu[k] - \
                        bu[(ptrdiff_t)k - 1]);                                                                         \
      i += len;                                                                                                        \
    }                                                                                                                  \
    for (; i < m_pad; i++) out[i] = 0;                                                                                 \
  }

H5FZ_CLONES LND_ENCODE(32, uint32_t)
H5FZ_CLONES LND_ENCODE(64, uint64_t)
#undef LND_ENCODE

/* The cost pass of the encoder on the chunk's words: each sampled group's
 * residuals from the row-by-row encode above, then the estimate of
 * h5fz_lnd_cost_* (the same sums). */
#define LND_COST(W, WORD)                                                                                              \
  void h5fz_fast_lnd_cost_##W(const WORD *q, h5fz_lnd_geom g, uint64_t k_lo, uint64_t k_hi, uint64_t T,                \
                              uint64_t cost[3])                                                                        \
  {                                                                                                                    \
    WORD r[128];                                                                                                       \
    cost[0] = cost[1] = cost[2] = 0;                                                                                   \
    for (uint32_t d = 0; d < g.dim && d < 3u; d++) {                                                                   \
      h5fz_lnd_geom gd = g;                                                                                            \
      gd.dim = d + 1u;                                                                                                 \
      uint64_t c = 0;                                                                                                  \
      for (uint64_t k = k_lo; k < k_hi; k++) {                                                                         \
        uint64_t g0 = k * T * 128u;                                                                                    \
        uint32_t cnt = g.n - g0 < 128u ? (uint32_t)(g.n - g0) : 128u;                                                  \
        h5fz_fast_lnd_encode_##W(q, r, (uint32_t)g0, cnt, 128u, gd);                                                   \
        WORD or8[16], diff = 0;                                                                                        \
        for (uint32_t j = 0; j < 16u; j++) {                                                                           \
          WORD o = 0;                                                                                                  \
          for (uint32_t e = 0; e < 8u; e++) {                                                                          \
            WORD v = r[8u * j + e];                                                                                    \
            o |= (WORD)((v << 1) ^ ((WORD)0 - (v >> (8u * sizeof(WORD) - 1u))));                                       \
          }                                                                                                            \
          or8[j] = o;                                                                                                  \
          c += (uint64_t)__builtin_popcountll((unsigned long long)o);                                                  \
        }                                                                                                              \
        for (uint32_t j = 0; j < 8u; j++) diff |= (WORD)(or8[8u + j] ^ or8[j]);                                        \
        c += 2u * (uint64_t)__builtin_popcountll((unsigned long long)diff);                                            \
      }                                                                                                                \
      cost[d] = c;                                                                                                     \
    }                                                                                                                  \
  }

    LND_COST(32, uint32_t) LND_COST(64, uint64_t)
#undef LND_COST

/* The decode's prefix sums along x inside a sub-chunk in one pass, row
 * segment by row segment (h5fz_lnd_xscan_* for one thread: the same words
 * and aux). */
#define LND_XSCAN(W, WORD)                                                                                             \
  void h5fz_fast_lnd_xscan_##W(WORD *w, uint32_t m, uint32_t first, h5fz_lnd_geom g, uint64_t *aux)                    \
  {                                                                                                                    \
    uint32_t ex, ey, i = 0, head;                                                                                      \
    h5fz_lnd_eff(&g, &ex, &ey);                                                                                        \
    head = first % ex ? ex - first % ex : 0u;                                                                          \
    while (i < m) {                                                                                                    \
      uint32_t len = (first + i) % ex ? ex - (first + i) % ex : ex;                                                    \
      if (len > m - i) len = m - i;                                                                                    \
      WORD acc = 0;                                                                                                    \
      for (uint32_t k = 0; k < len; k++) w[i + k] = acc = (WORD)(acc + w[i + k]);                                      \
      i += len;                                                                                                        \
    }                                                                                                                  \
    if (m) {                                                                                                           \
      aux[0] = (uint64_t)w[m - 1u];                                                                                    \
      aux[1] = head < m ? 1u : 0u;                                                                                     \
    }                                                                                                                  \
  }

        LND_XSCAN(32, uint32_t) LND_XSCAN(64, uint64_t)
#undef LND_XSCAN
