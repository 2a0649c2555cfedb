/*
 * op_cpu_util.h - what the CPU fast forms of the ops (op_*_cpu.c) share,
 * header only: the target clones of the hot loops and little-endian 64-bit
 * loads, stores and 8x8 bit transposes. Host C only, never handed to NVRTC.
 */
#ifndef H5FZ_OP_CPU_UTIL_H
#define H5FZ_OP_CPU_UTIL_H

#include <stdint.h>
#include <string.h>

#if defined(__x86_64__) && defined(__linux__) && defined(__GNUC__) && !defined(__clang__) && !defined(H5FZ_NO_CLONES)
#define H5FZ_CLONES __attribute__((target_clones("avx2", "sse4.1", "default")))
#else
#define H5FZ_CLONES
#endif

static inline uint64_t ld64(const uint8_t *p)
{
  uint64_t v;
  memcpy(&v, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  v = __builtin_bswap64(v);
#endif
  return v;
}

static inline void st64(uint8_t *p, uint64_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  v = __builtin_bswap64(v);
#endif
  memcpy(p, &v, 8);
}

/* Transpose of an 8x8 bit matrix: bit 8r+c <-> bit 8c+r (Hacker's Delight
 * 7-3). With row r = byte r, byte q of the result holds bit q of every byte. */
static inline uint64_t transpose8(uint64_t x)
{
  uint64_t t;
  t = (x ^ (x >> 7)) & 0x00AA00AA00AA00AAull;
  x ^= t ^ (t << 7);
  t = (x ^ (x >> 14)) & 0x0000CCCC0000CCCCull;
  x ^= t ^ (t << 14);
  t = (x ^ (x >> 28)) & 0x00000000F0F0F0F0ull;
  x ^= t ^ (t << 28);
  return x;
}

#endif /* H5FZ_OP_CPU_UTIL_H */
