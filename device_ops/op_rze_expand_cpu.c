/*
 * op_rze_expand_cpu.c - the RZE decode's blocks by byte shuffles (see
 * op_rze_expand_cpu.h). A block's bitmap word is cut into 16-bit pieces;
 * for each, two table rows (one a bitmap byte) give the shuffle that takes
 * 16 output bytes from the next 16 kept bytes in one pshufb: level 0
 * places kept byte r at the r-th set bit and zeros elsewhere, a level >= 1
 * repeats the last kept byte up to the next set bit. Why: the scalar loops
 * moved one byte per set bit (level 0) or per bit (levels >= 1), and on
 * the realistic array they were the CPU decode's largest part after the
 * fused word ops (docs/performance.md, issue 28).
 */
#include <string.h>

#include "op_rze_expand_cpu.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(H5FZ_NO_CLONES)
#define H5FZ_RZE_EXPAND 1
#include <immintrin.h>

/* The tables, made by the preprocessor: row mb, byte i (i = 0..7). */
#define BIT(mb, i) (((mb) >> (i)) & 1u)
#define POP8(x) (BIT(x, 0) + BIT(x, 1) + BIT(x, 2) + BIT(x, 3) + BIT(x, 4) + BIT(x, 5) + BIT(x, 6) + BIT(x, 7))
/* level 0: a set bit takes the kept byte numbered by the set bits below
 * it; a clear bit 0x80, which pshufb turns into 0 */
#define ZB(mb, i) ((uint64_t)(BIT(mb, i) ? POP8((mb) & ((1u << (i)) - 1u)) : 0x80u) << (8 * (i)))
#define ZROW(mb) (ZB(mb, 0) | ZB(mb, 1) | ZB(mb, 2) | ZB(mb, 3) | ZB(mb, 4) | ZB(mb, 5) | ZB(mb, 6) | ZB(mb, 7))
/* levels >= 1: the set bits up to and including i (0: the byte before
 * the kept ones, the last kept byte so far) */
#define RB(mb, i) ((uint64_t)POP8((mb) & ((2u << (i)) - 1u)) << (8 * (i)))
#define RROW(mb) (RB(mb, 0) | RB(mb, 1) | RB(mb, 2) | RB(mb, 3) | RB(mb, 4) | RB(mb, 5) | RB(mb, 6) | RB(mb, 7))
#define T4(F, b) F(b), F((b) + 1u), F((b) + 2u), F((b) + 3u)
#define T16(F, b) T4(F, b), T4(F, (b) + 4u), T4(F, (b) + 8u), T4(F, (b) + 12u)
#define T64(F, b) T16(F, b), T16(F, (b) + 16u), T16(F, (b) + 32u), T16(F, (b) + 48u)
static const uint64_t zero_rows[256] = {T64(ZROW, 0u), T64(ZROW, 64u), T64(ZROW, 128u), T64(ZROW, 192u)};
static const uint64_t repeat_rows[256] = {T64(RROW, 0u), T64(RROW, 64u), T64(RROW, 128u), T64(RROW, 192u)};

#define ONES 0x0101010101010101ull /* adds the low byte's count to every index of the high row */

static inline uint64_t ld64le(const uint8_t *p)
{
  uint64_t v;
  memcpy(&v, p, 8); /* x86: little-endian, as the bitmaps */
  return v;
}

__attribute__((target("ssse3,popcnt"))) void h5fz_rze_expand_zeros(const uint8_t *lmap, const uint8_t *kept,
                                                                    uint64_t avail, uint32_t words, uint8_t *dst,
                                                                    uint32_t *t, uint64_t *rank, uint32_t *extent)
{
  uint32_t tt = *t, ext = *extent;
  uint64_t r = *rank;
  for (; tt < words && r + 64u <= avail; tt++) {
    uint64_t m = ld64le(lmap + 8u * tt);
    uint8_t *d = dst + 64u * tt;
    if (m == 0) {
      memset(d, 0, 64);
      continue;
    }
    ext = 64u * tt + 64u;
    if (m == ~0ull) {
      memcpy(d, kept + r, 64);
      r += 64u;
      continue;
    }
    for (uint32_t h = 0; h < 4u; h++, m >>= 16) {
      uint32_t lo = (uint32_t)m & 0xffu, hi = (uint32_t)(m >> 8) & 0xffu, n_lo = (uint32_t)__builtin_popcount(lo);
      __m128i ctrl = _mm_set_epi64x((long long)(zero_rows[hi] + n_lo * ONES), (long long)zero_rows[lo]);
      __m128i v = _mm_loadu_si128((const __m128i *)(kept + r));
      _mm_storeu_si128((__m128i *)(d + 16u * h), _mm_shuffle_epi8(v, ctrl));
      r += n_lo + (uint32_t)__builtin_popcount(hi);
    }
  }
  *t = tt;
  *rank = r;
  *extent = ext;
}

__attribute__((target("ssse3,popcnt"))) void h5fz_rze_expand_repeats(const uint8_t *lmap, const uint8_t *kept,
                                                                      uint64_t avail, uint32_t words, uint8_t *dst,
                                                                      uint32_t *t, uint64_t *rank, uint8_t *last)
{
  uint32_t tt = *t;
  uint64_t r = *rank;
  uint8_t l = *last;
  for (; tt < words && r + 64u <= avail; tt++) {
    uint64_t m = ld64le(lmap + 8u * tt);
    uint8_t *d = dst + 64u * tt;
    if (m == 0) {
      memset(d, l, 64);
      continue;
    }
    if (m == ~0ull) {
      memcpy(d, kept + r, 64);
      r += 64u;
      l = d[63];
      continue;
    }
    for (uint32_t h = 0; h < 4u; h++, m >>= 16) {
      uint8_t *o = d + 16u * h;
      if ((m & 0xffffu) == 0xffffu) { /* all 16 kept: index 16 is past a shuffle's reach */
        memcpy(o, kept + r, 16);
        r += 16u;
      } else {
        uint32_t lo = (uint32_t)m & 0xffu, hi = (uint32_t)(m >> 8) & 0xffu, n_lo = (uint32_t)__builtin_popcount(lo);
        __m128i ctrl = _mm_set_epi64x((long long)(repeat_rows[hi] + n_lo * ONES), (long long)repeat_rows[lo]);
        /* byte 0: the last kept byte so far; bytes 1..15: the next kept */
        __m128i v = _mm_or_si128(_mm_slli_si128(_mm_loadu_si128((const __m128i *)(kept + r)), 1), _mm_cvtsi32_si128(l));
        _mm_storeu_si128((__m128i *)o, _mm_shuffle_epi8(v, ctrl));
        r += n_lo + (uint32_t)__builtin_popcount(hi);
      }
      l = o[15];
    }
  }
  *t = tt;
  *rank = r;
  *last = l;
}
__attribute__((target("popcnt"))) uint64_t h5fz_rze_popcount(const uint8_t *p, uint32_t nb)
{
  uint64_t c = 0;
  uint32_t i = 0;
  for (; i + 8u <= nb; i += 8u) c += (uint64_t)__builtin_popcountll(ld64le(p + i));
  for (; i < nb; i++) c += (uint64_t)__builtin_popcount(p[i]);
  return c;
}
#else
uint64_t h5fz_rze_popcount(const uint8_t *p, uint32_t nb)
{
  (void)p, (void)nb;
  return 0;
}

void h5fz_rze_expand_zeros(const uint8_t *lmap, const uint8_t *kept, uint64_t avail, uint32_t words, uint8_t *dst,
                           uint32_t *t, uint64_t *rank, uint32_t *extent)
{
  (void)lmap, (void)kept, (void)avail, (void)words, (void)dst, (void)t, (void)rank, (void)extent;
}

void h5fz_rze_expand_repeats(const uint8_t *lmap, const uint8_t *kept, uint64_t avail, uint32_t words, uint8_t *dst,
                             uint32_t *t, uint64_t *rank, uint8_t *last)
{
  (void)lmap, (void)kept, (void)avail, (void)words, (void)dst, (void)t, (void)rank, (void)last;
}
#endif

int h5fz_rze_expand_ok(void)
{
#ifdef H5FZ_RZE_EXPAND
  return __builtin_cpu_supports("ssse3") && __builtin_cpu_supports("popcnt");
#else
  return 0;
#endif
}
