/*
 * emu_reference.h - the plain (CPU) default chain on one float32 sub-chunk
 * of 4096 values, for test_warp_fused_emu. ABS bound eb.
 */
#ifndef EMU_REFERENCE_H
#define EMU_REFERENCE_H

#include <stdint.h>

/* Encode in[4096]: returns the size-table entry (RZE size, or 16384 |
 * 0x80000000 for raw planes); slot gets the bytes (16384 at most), the
 * escaped values' positions and bits opos[]/oval[] (4096 each), *ocount
 * their count. 0 when out of memory. */
uint32_t emu_ref_encode(const float *in, double eb, uint8_t *slot, uint32_t *opos, uint32_t *oval, uint32_t *ocount);

/* Decode a sub-chunk of entry's size at src into out[4096] (escaped values
 * come back as bin 0's value): 0, or 1 when the stream is refused. */
int emu_ref_decode(const uint8_t *src, uint32_t entry, double eb, float *out);

#endif
