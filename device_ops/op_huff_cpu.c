/* op_huff_cpu.c - huff's CPU form: the reference, one thread. */
#include "op_huff_cpu.h"
#include "h5fz_ops.h"

static const h5fz_blk one_thread = {0u, 1u, NULL};

uint32_t h5fz_cpu_huff_scratch_bytes(void) { return h5fz_huff_scratch_bytes(); }

uint32_t h5fz_cpu_coder_huff_encode(int wide, const uint8_t *in, uint32_t L, uint32_t n, uint8_t *out, uint32_t cap,
                                    void *scratch, void *tmp)
{
  (void)L;
  return wide ? h5fz_huff_encode_64(&one_thread, (const uint64_t *)in, n, out, cap, scratch, tmp)
              : h5fz_huff_encode_32(&one_thread, (const uint32_t *)in, n, out, cap, scratch, tmp);
}

int h5fz_cpu_coder_huff_decode(int wide, const uint8_t *in, uint32_t size, uint8_t *out, uint32_t L, uint32_t n,
                               void *scratch)
{
  (void)L;
  return wide ? h5fz_huff_decode_64(&one_thread, in, size, (uint64_t *)out, n, scratch)
              : h5fz_huff_decode_32(&one_thread, in, size, (uint32_t *)out, n, scratch);
}
