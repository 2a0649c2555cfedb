/*
 * op_rze_expand_cpu.h - the RZE decode's inner step with byte shuffles
 * (op_rze_expand_cpu.c, SSSE3 + POPCNT, checked at run time): a level's
 * 64-byte blocks from their bitmap word and the kept bytes, 16 bytes a
 * shuffle. Used by op_rze_cpu.c's decode; the bytes are those of its
 * scalar loops (tests/core/test_cpu_fast.c compares the decode with the
 * reference on every stream it makes, corrupt ones included).
 */
#ifndef H5FZ_OP_RZE_EXPAND_CPU_H
#define H5FZ_OP_RZE_EXPAND_CPU_H

#include <stdint.h>

/* Whether the functions below run on this CPU. */
int h5fz_rze_expand_ok(void);

/* Blocks t = *t .. words - 1 of level 0 (a dropped byte is 0) into
 * dst + 64 t, from bitmap lmap and the kept bytes kept[*rank ..], while
 * the 64 bytes from kept + *rank lie inside kept[0 .. avail) (a shuffle
 * reads 16 bytes past the last one it uses); advances *t and *rank, and
 * *extent to the end of the last block with a kept byte. The caller's
 * scalar loop finishes the level. */
void h5fz_rze_expand_zeros(const uint8_t *lmap, const uint8_t *kept, uint64_t avail, uint32_t words, uint8_t *dst,
                           uint32_t *t, uint64_t *rank, uint32_t *extent);

/* The same for a level >= 1 (a dropped byte repeats the one before it,
 * *last: the last kept byte so far, 0 before the first). */
void h5fz_rze_expand_repeats(const uint8_t *lmap, const uint8_t *kept, uint64_t avail, uint32_t words, uint8_t *dst,
                             uint32_t *t, uint64_t *rank, uint8_t *last);

/* The set bits of p[0..nb) with the POPCNT instruction (only when
 * h5fz_rze_expand_ok(); the decode counts each level's bitmap). */
uint64_t h5fz_rze_popcount(const uint8_t *p, uint32_t nb);

#endif /* H5FZ_OP_RZE_EXPAND_CPU_H */
