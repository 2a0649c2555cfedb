/* op_bitpack_cpu.c - bitpack's CPU form: the reference, one thread. */
#include "op_bitpack_cpu.h"
#include "h5fz_ops.h"

static const h5fz_blk one_thread = {0u, 1u, NULL};

uint32_t h5fz_cpu_coder_bitpack_encode(int wide, const uint8_t *in, uint32_t L, uint32_t n, uint8_t *out,
                                       uint32_t cap, void *scratch, void *tmp)
{
  (void)scratch, (void)tmp;
  (void)cap; /* the reference's cap is the raw size: a larger stream is stored raw */
  return wide ? h5fz_bitpack_encode_64(&one_thread, (const uint64_t *)in, n, out, L)
              : h5fz_bitpack_encode_32(&one_thread, (const uint32_t *)in, n, out, L);
}

int h5fz_cpu_coder_bitpack_decode(int wide, const uint8_t *in, uint32_t size, uint8_t *out, uint32_t L, uint32_t n,
                                  void *scratch)
{
  (void)scratch, (void)L;
  return wide ? h5fz_bitpack_decode_64(&one_thread, in, size, (uint64_t *)out, n)
              : h5fz_bitpack_decode_32(&one_thread, in, size, (uint32_t *)out, n);
}
