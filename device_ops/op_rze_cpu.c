/*
 * op_rze_cpu.c - the CPU fast form of RZE (twin of op_rze.h; see
 * op_rze_cpu.h). Same bytes as the reference with the one-thread block;
 * only the way of computing them differs: bitmaps built 8 input bytes at a
 * time with a SWAR non-zero test (level 0) or a SWAR "differs from the byte
 * before" test (levels >= 1), kept counts with popcounts, kept bytes copied
 * by 64-byte runs where the bitmap word is all ones and by set bits
 * elsewhere. All multi-byte loads and stores go through little-endian
 * helpers. The level sizes come from the reference (h5fz_rze_levels).
 */
#include <stddef.h>
#include <string.h>

#include "h5fz_ops.h"
#include "op_cpu_util.h"
#include "op_rze_cpu.h"
#include "op_rze_expand_cpu.h"

/* ------------------------------------------------------------------- RZE */

/* Bit k set iff byte k of t is non-zero. */
static inline uint32_t nz_bits8(uint64_t t)
{
  const uint64_t lo7 = 0x7f7f7f7f7f7f7f7full;
  uint64_t hi = (t | ((t & lo7) + lo7)) & 0x8080808080808080ull;
  return (uint32_t)(((hi >> 7) * 0x0102040810204080ull) >> 56);
}

/* Bitmap of level `level` over src[0..n) into bitmap[0..ceil(n/8)). */
static void rze_bitmap(const uint8_t *src, uint32_t n, uint32_t level, uint8_t *bitmap)
{
  uint32_t full = n / 8u, j;
  if (level == 0) {
    for (j = 0; j < full; j++) bitmap[j] = (uint8_t)nz_bits8(ld64(src + 8u * j));
  } else {
    uint64_t before = 0; /* the byte before src[8j], in the low byte */
    for (j = 0; j < full; j++) {
      uint64_t v = ld64(src + 8u * j);
      bitmap[j] = (uint8_t)nz_bits8(v ^ ((v << 8) | before));
      before = v >> 56;
    }
  }
  if (n & 7u) {
    uint32_t byte = 0;
    for (uint32_t b = 0; b < (n & 7u); b++) {
      uint32_t i = 8u * full + b;
      uint32_t keep = level == 0 ? src[i] != 0 : src[i] != (i ? src[i - 1u] : 0u);
      byte |= keep << b;
    }
    bitmap[full] = (uint8_t)byte;
  }
}

/* Population count of 64 bits (SWAR: the x86-64 baseline has no POPCNT
 * and __builtin_popcountll would call libgcc). */
static inline uint32_t pop64(uint64_t x)
{
  x = x - ((x >> 1) & 0x5555555555555555ull);
  x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
  x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
  return (uint32_t)((x * 0x0101010101010101ull) >> 56);
}

static uint64_t popcount_bytes(const uint8_t *p, uint32_t nb)
{
  uint64_t c = 0;
  uint32_t i = 0;
  for (; i + 8u <= nb; i += 8u) c += pop64(ld64(p + i));
  for (; i < nb; i++) c += pop64(p[i]);
  return c;
}

/* Appends the kept bytes of src[0..n) (bitmap map) at out + pos, where
 * out[0..limit) may be written (limit: the encoded size). Returns the new pos. */
static uint64_t rze_gather(const uint8_t *src, uint32_t n, const uint8_t *map, uint8_t *out, uint64_t pos,
                           uint64_t limit)
{
  uint32_t words = n / 64u;
  for (uint32_t t = 0; t < words; t++) {
    uint64_t m = ld64(map + 8u * t);
    const uint8_t *s = src + 64u * t;
    if (m == ~0ull) {
      memcpy(out + pos, s, 64);
      pos += 64u;
    } else if (m == 0) {
      continue;
    } else if (pos + 64u <= limit && pop64(m) > 16) {
      /* dense: store every byte, advance past the kept ones (the others are
       * overwritten by later kept bytes, all below limit) */
      for (uint32_t b = 0; b < 64u; b++) {
        out[pos] = s[b];
        pos += (m >> b) & 1u;
      }
    } else {
      while (m) {
        out[pos++] = s[__builtin_ctzll(m)];
        m &= m - 1u;
      }
    }
  }
  for (uint32_t i = 64u * words; i < n; i++)
    if ((map[i / 8u] >> (i & 7u)) & 1u) out[pos++] = src[i];
  return pos;
}

uint32_t h5fz_fast_rze_encode(const uint8_t *in, uint32_t L, uint8_t *out, uint32_t cap, uint8_t *scratch)
{
  uint32_t len[H5FZ_RZE_MAX_LEVELS + 1u], levels = h5fz_rze_levels(L, len);
  uint32_t bitmap_off[H5FZ_RZE_MAX_LEVELS + 1u];
  uint64_t kept[H5FZ_RZE_MAX_LEVELS];
  const uint8_t *src = in;
  bitmap_off[0] = 0;
  for (uint32_t k = 0; k < levels; k++) {
    uint8_t *bitmap = scratch + bitmap_off[k];
    rze_bitmap(src, len[k], k, bitmap);
    kept[k] = popcount_bytes(bitmap, len[k + 1u]);
    bitmap_off[k + 1u] = bitmap_off[k] + len[k + 1u];
    src = bitmap;
  }
  uint64_t size = len[levels];
  for (uint32_t k = 0; k < levels; k++) size += kept[k];
  if (size >= L || size > cap) return H5FZ_RZE_NOT_SMALLER;
  memcpy(out, scratch + bitmap_off[levels - 1u], len[levels]);
  uint64_t offset = len[levels];
  for (uint32_t kk = levels; kk-- > 0;) {
    const uint8_t *lsrc = kk ? scratch + bitmap_off[kk - 1u] : in;
    offset = rze_gather(lsrc, len[kk], scratch + bitmap_off[kk], out, offset, size);
  }
  return (uint32_t)size;
}

/* Level 0 of the decode: the n bytes of dst from the kept (non-zero) bytes
 * (avail of them readable) and the bitmap lmap; a dropped byte is 0. By
 * shuffles where the CPU has them (op_rze_expand_cpu.h), the rest here. Returns the extent: every byte
 * from it on is 0 (the end of the last 64-byte block with a kept byte). */
static uint32_t unpack_zeros(const uint8_t *lmap, const uint8_t *kept, uint64_t avail, uint32_t n, uint8_t *dst)
{
  uint64_t rank = 0;
  uint32_t words = n / 64u, extent = 0, t = 0;
  if (h5fz_rze_expand_ok()) h5fz_rze_expand_zeros(lmap, kept, avail, words, dst, &t, &rank, &extent);
  for (; t < words; t++) {
    uint64_t m = ld64(lmap + 8u * t);
    uint8_t *d = dst + 64u * t;
    extent = m ? 64u * t + 64u : extent;
    if (m == ~0ull) {
      memcpy(d, kept + rank, 64);
      rank += 64u;
    } else {
      memset(d, 0, 64);
      while (m) {
        d[__builtin_ctzll(m)] = kept[rank++];
        m &= m - 1u;
      }
    }
  }
  if (64u * words < n) extent = n; /* the tail: not looked at */
  for (uint32_t i = 64u * words; i < n; i++) dst[i] = ((lmap[i / 8u] >> (i & 7u)) & 1u) ? kept[rank++] : 0u;
  return extent;
}

/* A level >= 1 (a bitmap of the level below): a dropped byte repeats the
 * one before it, the last kept byte (0 before the first). Shuffles as in
 * unpack_zeros. */
static void unpack_repeats(const uint8_t *lmap, const uint8_t *kept, uint64_t avail, uint32_t n, uint8_t *dst)
{
  uint64_t rank = 0;
  uint32_t words = n / 64u, t = 0;
  uint8_t last = 0;
  if (h5fz_rze_expand_ok()) h5fz_rze_expand_repeats(lmap, kept, avail, words, dst, &t, &rank, &last);
  for (; t < words; t++) {
    uint64_t m = ld64(lmap + 8u * t);
    uint8_t *d = dst + 64u * t;
    if (m == 0) {
      memset(d, last, 64);
    } else if (m == ~0ull) {
      memcpy(d, kept + rank, 64);
      rank += 64u;
      last = d[63];
    } else {
      for (uint32_t b = 0; b < 64u; b++) {
        if ((m >> b) & 1u) last = kept[rank++];
        d[b] = last;
      }
    }
  }
  for (uint32_t i = 64u * words; i < n; i++) {
    if ((lmap[i / 8u] >> (i & 7u)) & 1u) last = kept[rank++];
    dst[i] = last;
  }
}

int h5fz_fast_rze_decode_extent(const uint8_t *in, uint32_t size, uint8_t *out, uint32_t L, uint8_t *scratch,
                                uint32_t *extent)
{
  uint32_t len[H5FZ_RZE_MAX_LEVELS + 1u], levels = h5fz_rze_levels(L, len);
  *extent = L;
  if (len[levels] > size) return -1;
  /* where level k decodes to: level 0 into out, level k >= 1 (the bitmap of
   * level k - 1) into the scratch, the levels one after the other */
  uint8_t *dst[H5FZ_RZE_MAX_LEVELS];
  dst[0] = out;
  for (uint32_t k = 1, off = 0; k < levels; off += len[k], k++) dst[k] = scratch + off;
  /* from the top bitmap (the stream's first len[levels] bytes) down; each
   * level's kept bytes follow the levels above it's */
  uint64_t offset = len[levels];
  const uint8_t *lmap = in;
  const int shuffles = h5fz_rze_expand_ok();
  for (uint32_t k = levels; k-- > 0; lmap = dst[k]) {
    uint32_t n = len[k], nb = len[k + 1u];
    if ((n & 7u) && (lmap[nb - 1u] >> (n & 7u))) return -1; /* bits past the level's end */
    uint64_t total = shuffles ? h5fz_rze_popcount(lmap, nb) : popcount_bytes(lmap, nb);
    if (offset + total > size) return -1;
    if (k)
      unpack_repeats(lmap, in + offset, size - offset, n, dst[k]);
    else
      *extent = unpack_zeros(lmap, in + offset, size - offset, n, dst[k]);
    offset += total;
  }
  return offset == size ? 0 : -1;
}

int h5fz_fast_rze_decode(const uint8_t *in, uint32_t size, uint8_t *out, uint32_t L, uint8_t *scratch)
{
  uint32_t extent;
  return h5fz_fast_rze_decode_extent(in, size, out, L, scratch, &extent);
}

uint32_t h5fz_cpu_coder_rze_encode(int wide, const uint8_t *in, uint32_t L, uint32_t n, uint8_t *out, uint32_t cap,
                                   void *scratch, void *tmp)
{
  (void)wide, (void)n, (void)tmp;
  return h5fz_fast_rze_encode(in, L, out, cap, (uint8_t *)scratch);
}

int h5fz_cpu_coder_rze_decode(int wide, const uint8_t *in, uint32_t size, uint8_t *out, uint32_t L, uint32_t n,
                              void *scratch)
{
  (void)wide, (void)n;
  return h5fz_fast_rze_decode(in, size, out, L, (uint8_t *)scratch);
}
