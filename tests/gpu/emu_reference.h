/*
 * emu_reference.h - the plain (CPU) default chain and fast chain on one
 * float32 sub-chunk of 4096 values, for test_warp_fused_emu and
 * test_warp_fast_emu. ABS bound eb.
 */
#ifndef EMU_REFERENCE_H
#define EMU_REFERENCE_H

#include <stdint.h>

/* The fill value bits (they escape) of the emulated tests
 * quantizer: the canonical quiet NaN unless a test changes it. */
extern uint32_t emu_fill_bits;

/* Encode in[m] (m <= 4096; the words are padded to m_pad = m rounded up to
 * 64, L = 4 m_pad bytes, as the executors do): returns the size-table
 * entry (RZE size, or L | 0x80000000 for raw planes); slot gets the bytes
 * (L at most), the escaped values' positions and bits opos[]/oval[] (m
 * each), *ocount their count. 0 when out of memory. */
uint32_t emu_ref_encode(const float *in, uint32_t m, double eb, uint8_t *slot, uint32_t *opos, uint32_t *oval,
                        uint32_t *ocount);

/* Decode a sub-chunk of m values and entry's size at src into out[m]
 * (escaped values come back as bin 0's value): 0, or 1 when the stream is
 * refused (a raw entry must hold L bytes). */
int emu_ref_decode(const uint8_t *src, uint32_t entry, uint32_t m, double eb, float *out);

/* lorenzo_nd zigzag bitshuffle rze with the 1-D predictor (the delta over
 * the whole chunk) on sub-chunk [first, first + m) of chunk[n], ABS eb, as
 * emu_ref_encode: the plain ops of op_lorenzo_nd.h (the value before the
 * sub-chunk quantized again). */
uint32_t emu_ref_encode_lnd1(const float *chunk, uint32_t n, uint32_t first, uint32_t m, double eb, uint8_t *slot,
                             uint32_t *opos, uint32_t *oval, uint32_t *ocount);

/* Its decode inside the sub-chunk (h5fz_lnd_xscan): words[m] (the prefix
 * sums from the sub-chunk's start) and aux[2] (the last sum, whether an x
 * segment starts here); 0, or 1 when the stream is refused. */
int emu_ref_decode_lnd1(const uint8_t *src, uint32_t entry, uint32_t n, uint32_t first, uint32_t m, uint32_t *words,
                        uint64_t *aux);

/* The same for the fast chain (quant delta zigzag bitpack): entry =
 * bitpack size, or L | 0x80000000 for the raw zigzag words. */
uint32_t emu_ref_fast_encode(const float *in, uint32_t m, double eb, uint8_t *slot, uint32_t *opos, uint32_t *oval,
                             uint32_t *ocount);
int emu_ref_fast_decode(const uint8_t *src, uint32_t entry, uint32_t m, double eb, float *out);

/* Test inputs, each aimed at a branch of the kernels: kind 0 ..
 * EMU_INPUT_KINDS-1 into x[n] (random parts from emu_random). */
#define EMU_INPUT_KINDS 12u
void emu_input(unsigned kind, float *x, uint32_t n);
const char *emu_input_name(unsigned kind);

/* The end of an emulated test: adds the emulator's own errors, prints the
 * summary line, returns the exit code (0 or 1). */
int emu_summary(unsigned cases, unsigned raw, unsigned changed, int failures);

#endif
