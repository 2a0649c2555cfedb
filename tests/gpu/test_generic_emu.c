/*
 * test_generic_emu.c - the generic GPU kernels' device code for the
 * default float32 chain, run on the CPU by cuda_emu (see
 * test_warp_fused_emu.c), against the plain op chain (emu_reference.c).
 * These are the GPU forms of the ops (warp-segmented quantizer outlier
 * pass, bitshuffle by ballots or transposes, plain and padded planes, RZE
 * level 0 by warp segments, the fused delta decode) that the ampere,
 * blackwell and portable classes run for every sub-chunk and hopper for each
 * chunk's partial last one. The glue between the ops is what `h5fz codegen`
 * generates for `abs=... quant delta zigzag bitshuffle rze` (one block per
 * sub-chunk, two ping-pong buffers in shared memory). Sub-chunks of 4096
 * values and partial ones (1, 63, 64, 65, 1000, 4095 values), 256 threads
 * with padded planes and 512 with plain ones; decode of the same streams
 * and of changed ones must give the same values and verdicts.
 */
#include "cuda_emu.h" /* first: the op headers then compile their GPU sections */

#include <stdio.h>
#include <stdlib.h>

#include "emu_reference.h"
#include "h5fz_ops.h"

#define SUB 4096u
#define SLOT 16384u

/* the block's shared memory: buf0, buf1, RZE scratch, padded planes (the
 * layout of the generated kernels), and the block-scan scratch */
static uint64_t smem[(2u * SLOT + 4096u + H5FZ_BITSHUFFLE_PAD_BYTES(SUB, 32u)) / 8u];
static uint64_t scan[H5FZ_SCAN_SCRATCH_WORDS];

typedef struct {
  const float *in;
  uint32_t m, entry, ocount, padded;
  h5fz_quant_params q;
  uint8_t *slot;
  uint32_t *opos, *oval;
  const uint8_t *src;
  float *out;
  int bad[1024];
} job;

static uint8_t *buf0(void) { return (uint8_t *)smem; }
static uint8_t *buf1(void) { return (uint8_t *)smem + SLOT; }
static uint8_t *scratch(void) { return (uint8_t *)smem + 2u * SLOT; }
static uint32_t *planes_pad(void)
{
  uint32_t pad_offset = (h5fz_rze_scratch_bytes(SLOT) + 64u + 15u) & ~15u; /* as h5fz_codegen */
  return (uint32_t *)(scratch() + pad_offset);
}

/* h5fz_encode of the default chain, as generated */
static void encode_thread(void *arg)
{
  job *j = arg;
  const h5fz_blk blk = {threadIdx.x, blockDim.x, scan};
  const uint32_t m = j->m, m_pad = (m + 63u) & ~63u, L = m_pad * 4u;
  h5fz_blk_copy(&blk, j->in, buf1(), m * 4u);
  __syncthreads();
  const uint32_t n_out =
      h5fz_quant_encode_32(&blk, (const float *)buf1(), m, m_pad, &j->q, (uint32_t *)buf0(), j->opos, j->oval);
  __syncthreads();
  h5fz_delta_zigzag_encode_32(&blk, (const uint32_t *)buf0(), (uint32_t *)buf1(), m_pad);
  __syncthreads();
  if (j->padded)
    h5fz_bitshuffle_encode_padded_32(&blk, (const uint32_t *)buf1(), buf0(), m_pad, planes_pad());
  else
    h5fz_bitshuffle_encode_32(&blk, (const uint32_t *)buf1(), buf0(), m_pad);
  __syncthreads();
  uint32_t size = h5fz_rze_encode(&blk, buf0(), L, j->slot, L, scratch());
  if (size == H5FZ_RZE_NOT_SMALLER) {
    for (uint32_t i = threadIdx.x; i < L; i += blockDim.x) j->slot[i] = buf0()[i];
    size = L | 0x80000000u;
  }
  if (threadIdx.x == 0) {
    j->entry = size;
    j->ocount = n_out;
  }
}

/* h5fz_decode of the default chain, as generated (a raw entry's size was
 * checked on the host: callers pass only raw entries of L bytes) */
static void decode_thread(void *arg)
{
  job *j = arg;
  const h5fz_blk blk = {threadIdx.x, blockDim.x, scan};
  const uint32_t m = j->m, m_pad = (m + 63u) & ~63u, L = m_pad * 4u, size = j->entry & 0x7fffffffu;
  j->bad[threadIdx.x] = 0;
  if (j->entry & 0x80000000u) {
    for (uint32_t i = threadIdx.x; i < size; i += blockDim.x) buf0()[i] = j->src[i];
  } else if (h5fz_rze_decode(&blk, j->src, size, buf0(), L, scratch())) {
    j->bad[threadIdx.x] = 1;
    return;
  }
  __syncthreads();
  if (j->padded)
    h5fz_bitshuffle_decode_padded_32(&blk, buf0(), (uint32_t *)buf1(), m_pad, planes_pad());
  else
    h5fz_bitshuffle_decode_32(&blk, buf0(), (uint32_t *)buf1(), m_pad);
  __syncthreads();
  h5fz_delta_decode_fused_32(&blk, (const uint32_t *)buf1(), m_pad, 1, (uint32_t *)0, &j->q, m, (float *)buf0());
  __syncthreads();
  h5fz_blk_copy(&blk, buf0(), j->out, m * 4u);
}

static void fill_shared_with_noise(void)
{
  uint8_t *p = (uint8_t *)smem;
  for (size_t i = 0; i < sizeof smem; i++) p[i] = (uint8_t)emu_random();
  p = (uint8_t *)scan;
  for (size_t i = 0; i < sizeof scan; i++) p[i] = (uint8_t)emu_random();
}

static int failures;
static job J;

static float ref_out[SUB], gpu_out[SUB];

static void check_decode(const uint8_t *stream, uint32_t entry, uint32_t m, double eb, unsigned threads, int padded,
                         const char *what)
{
  uint32_t size = entry & 0x7fffffffu, L = ((m + 63u) & ~63u) * 4u;
  if ((entry & 0x80000000u) && size != L) return; /* refused by the size-table check before any kernel */
  uint8_t *exact = malloc(size ? size : 1u);
  if (!exact) return;
  memcpy(exact, stream, size);
  memset(ref_out, 0, sizeof ref_out);
  memset(gpu_out, 0xff, sizeof gpu_out);
  int a = emu_ref_decode(exact, entry, m, eb, ref_out);
  J.src = exact;
  J.entry = entry;
  J.m = m;
  J.q = h5fz_quant_params_make(H5FZ_QMODE_ABS, eb, emu_fill_bits);
  J.out = gpu_out;
  J.padded = (uint32_t)padded;
  fill_shared_with_noise();
  emu_run_block(threads, decode_thread, &J);
  int b = J.bad[0];
  for (unsigned t = 1; t < threads; t++)
    if (J.bad[t] != b) {
      printf("FAIL %s: decode verdict differs between threads 0 and %u\n", what, t);
      failures++;
      break;
    }
  if (a != b) {
    printf("FAIL %s: entry %#x: the reference %s it, the generic decode %s it\n", what, entry, a ? "refuses" : "reads",
           b ? "refuses" : "reads");
    failures++;
  } else if (!a && memcmp(ref_out, gpu_out, 4u * m)) {
    printf("FAIL %s: entry %#x: other values\n", what, entry);
    failures++;
  }
  free(exact);
}

int main(int argc, char **argv)
{
  int changes_per_case = argc > 1 ? atoi(argv[1]) : 4;
  static const uint32_t lengths[] = {SUB, 4095u, 1000u, 65u, 64u, 63u, 1u};
  static const double bounds[] = {1e-2, 1e-5, 0.3, 1e-300};
  static float in[SUB];
  static uint8_t ref_slot[SLOT], gpu_slot[SLOT], changed[SLOT];
  static uint32_t ref_pos[SUB], ref_val[SUB], gpu_pos[SUB], gpu_val[SUB];
  unsigned cases = 0, raw = 0, changed_streams = 0;
  for (unsigned kind = 0; kind < EMU_INPUT_KINDS; kind++)
    for (unsigned b = 0; b < sizeof bounds / sizeof *bounds; b++) {
      uint32_t m = lengths[(kind + b) % (sizeof lengths / sizeof *lengths)];
      if (bounds[b] == 0.3) m = SUB; /* the case that makes raw sub-chunks needs a whole one */
      int padded = (kind + b) % 2 == 0;
      unsigned threads = padded ? 256u : 512u;
      double eb = bounds[b];
      char what[200];
      snprintf(what, sizeof what, "%s, abs=%g, %u values, %u threads%s", emu_input_name(kind), eb, m, threads,
               padded ? ", padded planes" : "");
      emu_input(kind, in, m);
      uint32_t ref_n = 0, ref_entry = emu_ref_encode(in, m, eb, ref_slot, ref_pos, ref_val, &ref_n);
      memset(gpu_slot, 0xa5, sizeof gpu_slot);
      J.in = in;
      J.m = m;
      J.q = h5fz_quant_params_make(H5FZ_QMODE_ABS, eb, emu_fill_bits);
      J.slot = gpu_slot;
      J.opos = gpu_pos;
      J.oval = gpu_val;
      J.padded = (uint32_t)padded;
      J.entry = 0xdeadbeefu;
      fill_shared_with_noise();
      emu_run_block(threads, encode_thread, &J);
      uint32_t size = ref_entry & 0x7fffffffu;
      cases++;
      raw += (ref_entry >> 31) != 0;
      if (J.entry != ref_entry || J.ocount != ref_n || memcmp(ref_slot, gpu_slot, size) ||
          memcmp(ref_pos, gpu_pos, 4u * ref_n) || memcmp(ref_val, gpu_val, 4u * ref_n)) {
        printf("FAIL encode %s: entry %#x / %#x, outliers %u / %u (reference / generic)\n", what, ref_entry, J.entry,
               ref_n, J.ocount);
        failures++;
        continue;
      }
      check_decode(ref_slot, ref_entry, m, eb, threads, padded, what);
      for (int c = 0; c < changes_per_case; c++, changed_streams++) {
        uint32_t entry = ref_entry;
        memcpy(changed, ref_slot, size);
        switch (emu_random() % 3u) {
        case 0: changed[emu_random() % size] ^= (uint8_t)(1u + emu_random() % 255u); break;
        case 1: entry = (entry & 0x80000000u) | (size - 1u - emu_random() % (size < 8u ? size : 8u)); break;
        default: { /* a run of zeros */
          uint32_t at = emu_random() % size, len = 1u + emu_random() % 8u;
          memset(changed + at, 0, len < size - at ? len : size - at);
          break;
        }
        }
        check_decode(changed, entry, m, eb, threads, padded, what);
      }
      printf("ok   %-80s entry %#x, %u outliers\n", what, ref_entry, ref_n);
    }
  return emu_summary(cases, raw, changed_streams, failures);
}
