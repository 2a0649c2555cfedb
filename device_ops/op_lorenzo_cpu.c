/*
 * op_lorenzo_cpu.c - lorenzo's CPU form: the reference (op_lorenzo.h) run
 * with a one-thread block, in the op table's transform shape
 * (op_cpu_transform.h). Same words by construction; its own file so that
 * the chain reaches it through the table like every other transform.
 */
#include "op_cpu_transform.h"

static const h5fz_blk one_thread = {0u, 1u, NULL};

static void lorenzo_cpu_forward(const h5fz_cpu_sub *sub, int wide, void *in, void *out, uint32_t n)
{
  if (wide)
    h5fz_lorenzo_encode_64(&one_thread, in, out, n, sub->first, sub->row);
  else
    h5fz_lorenzo_encode_32(&one_thread, in, out, n, sub->first, sub->row);
}

/* The reference's inverse uses in as its intermediate. */
static void lorenzo_cpu_inverse(const h5fz_cpu_sub *sub, int wide, void *in, void *out, uint32_t n)
{
  if (wide)
    h5fz_lorenzo_decode_64(&one_thread, in, out, n, sub->first, sub->row);
  else
    h5fz_lorenzo_decode_32(&one_thread, in, out, n, sub->first, sub->row);
}

const h5fz_cpu_transform h5fz_cpu_lorenzo = {lorenzo_cpu_forward, lorenzo_cpu_inverse};
