/* op_huff_cpu.c - the CPU forms of huff and huffctx: the reference, one thread. */
#include "op_huff_cpu.h"
#include "h5fz_ops.h"

static const h5fz_blk one_thread = {0u, 1u, NULL};

uint32_t h5fz_cpu_huff_scratch_bytes(void) { return h5fz_huff_scratch_bytes(H5FZ_HUFF_MAX_CTX); }

static uint32_t encode(int wide, const uint8_t *in, uint32_t n, uint8_t *out, uint32_t cap, void *scratch, void *tmp,
                       uint32_t nctx)
{
  return wide ? h5fz_huff_encode_64(&one_thread, (const uint64_t *)in, n, out, cap, scratch, tmp, nctx)
              : h5fz_huff_encode_32(&one_thread, (const uint32_t *)in, n, out, cap, scratch, tmp, nctx);
}

static int decode(int wide, const uint8_t *in, uint32_t size, uint8_t *out, uint32_t n, void *scratch, uint32_t nctx)
{
  return wide ? h5fz_huff_decode_64(&one_thread, in, size, (uint64_t *)out, n, scratch, nctx)
              : h5fz_huff_decode_32(&one_thread, in, size, (uint32_t *)out, n, scratch, nctx);
}

/* The op table's coder functions of huff (one code) and huffctx (two):
 * the table's signature has no code count, so each coder gets its pair. */
#define H5FZ_HUFF_CPU_CODER(name, nctx)                                                                               \
  uint32_t h5fz_cpu_coder_##name##_encode(int wide, const uint8_t *in, uint32_t L, uint32_t n, uint8_t *out,          \
                                          uint32_t cap, void *scratch, void *tmp)                                     \
  {                                                                                                                    \
    (void)L;                                                                                                           \
    return encode(wide, in, n, out, cap, scratch, tmp, nctx);                                                          \
  }                                                                                                                    \
  int h5fz_cpu_coder_##name##_decode(int wide, const uint8_t *in, uint32_t size, uint8_t *out, uint32_t L, uint32_t n, \
                                     void *scratch)                                                                    \
  {                                                                                                                    \
    (void)L;                                                                                                           \
    return decode(wide, in, size, out, n, scratch, nctx);                                                              \
  }

H5FZ_HUFF_CPU_CODER(huff, 1u)
H5FZ_HUFF_CPU_CODER(huffctx, 2u)
