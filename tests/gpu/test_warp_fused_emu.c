/*
 * test_warp_fused_emu.c - the warp-fused kernels' device code
 * (device_ops/op_warp_fused.h) run on the CPU by cuda_emu (a block of
 * coroutine threads with warp collectives, barriers and random schedules,
 * shared memory filled with noise before every block), against the plain
 * op chain (emu_reference.c), so CI machines without a GPU test it too.
 * Encode: the same entry, bytes and outlier lists for inputs made for each
 * branch (ballot and transposed planes, raw sub-chunks, escapes, constant
 * and zero sub-chunks, 32-bit zigzag words) at several bounds, with 1, 2, 4
 * and 8 warps per block. Decode: the same values, and for changed streams
 * (bytes flipped, sizes off by a few, the raw bit flipped) the same
 * verdict. Any divergent collective, deadlock or missing barrier that the
 * emulator notices fails the test. The real kernels on a GPU:
 * tests/gpu/test_gpu_warp_fused.c.
 */
#include "cuda_emu.h" /* first: the op headers then compile their GPU sections */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "emu_reference.h"
#include "h5fz_ops.h"

#define N 4096u

static h5fz_wf_smem smem; /* the block's shared memory */

typedef struct {
  const float *in;
  h5fz_quant_params q;
  uint8_t *slot;
  uint32_t entry, ocount, *opos, *oval;
} encode_job;

typedef struct {
  const uint8_t *src;
  uint32_t entry;
  h5fz_quant_params q;
  float *out;
  int rc[1024];
} decode_job;

static void encode_thread(void *arg)
{
  encode_job *j = arg;
  h5fz_wf_encode(&smem, j->in, &j->q, 0u, j->slot, &j->entry, &j->ocount, j->opos, j->oval);
}

static void decode_thread(void *arg)
{
  decode_job *j = arg;
  j->rc[threadIdx.x] = h5fz_wf_decode(&smem, j->src, j->entry, &j->q, j->out, (uint32_t *)0);
}

static void fill_shared_with_noise(void)
{
  uint8_t *p = (uint8_t *)&smem;
  for (size_t i = 0; i < sizeof smem; i++) p[i] = (uint8_t)emu_random();
}

static int failures;

static uint32_t wf_encode(const float *in, double eb, unsigned warps, uint8_t *slot, uint32_t *opos, uint32_t *oval,
                          uint32_t *ocount)
{
  encode_job j = {in, h5fz_quant_params_make(H5FZ_QMODE_ABS, eb, emu_fill_bits), slot, 0xdeadbeefu, 0, opos, oval};
  fill_shared_with_noise();
  emu_run_block(32u * warps, encode_thread, &j);
  *ocount = j.ocount;
  return j.entry;
}

static int wf_decode(const uint8_t *src, uint32_t entry, double eb, unsigned warps, float *out)
{
  static decode_job j;
  j.src = src;
  j.entry = entry;
  j.q = h5fz_quant_params_make(H5FZ_QMODE_ABS, eb, emu_fill_bits);
  j.out = out;
  for (unsigned t = 0; t < 1024u; t++) j.rc[t] = -7;
  fill_shared_with_noise();
  emu_run_block(32u * warps, decode_thread, &j);
  for (unsigned t = 1; t < 32u * warps; t++)
    if (j.rc[t] != j.rc[0]) {
      printf("FAIL decode: threads 0 and %u returned %d and %d (must be block-uniform)\n", t, j.rc[0], j.rc[t]);
      failures++;
      break;
    }
  return j.rc[0];
}

static float ref_out[N], wf_out[N];

/* The same verdict, and the same values when read; src holds exactly
 * entry's size bytes (a read past them is a read past the allocation). */
static void check_decode(const uint8_t *stream, uint32_t entry, double eb, const char *what)
{
  uint32_t size = entry & 0x7fffffffu;
  uint8_t *exact = malloc(size ? size : 1u);
  if (!exact) return;
  memcpy(exact, stream, size);
  memset(ref_out, 0, sizeof ref_out);
  memset(wf_out, 0xff, sizeof wf_out);
  unsigned warps = 1u << (emu_random() % 4u);
  int a = emu_ref_decode(exact, entry, N, eb, ref_out), b = wf_decode(exact, entry, eb, warps, wf_out);
  if (a != b) {
    printf("FAIL %s: entry %#x: the reference %s it, the warp-fused decode (%u warps) %s it\n", what, entry,
           a ? "refuses" : "reads", warps, b ? "refuses" : "reads");
    failures++;
  } else if (!a && memcmp(ref_out, wf_out, sizeof ref_out)) {
    printf("FAIL %s: entry %#x: other values (%u warps)\n", what, entry, warps);
    failures++;
  }
  free(exact);
}

int main(int argc, char **argv)
{
  int changes_per_case = argc > 1 ? atoi(argv[1]) : 6;
  static const double bounds[] = {1e-2, 1e-5, 1.0, 0.5, 1e-4, 1e-300, 1e-30, 1e3, 0.3};
  static float in[N];
  static uint8_t ref_slot[16384], wf_slot[16384], changed[16384];
  static uint32_t ref_pos[N], ref_val[N], wf_pos[N], wf_val[N];
  unsigned cases = 0, raw = 0, changed_streams = 0;
  for (unsigned kind = 0; kind < EMU_INPUT_KINDS; kind++)
    for (unsigned b = 0; b < sizeof bounds / sizeof *bounds; b++) {
      double eb = bounds[b];
      unsigned warps = 1u << ((kind + b) % 4u);
      /* the fill value, which escapes: NaN and 7e30 (the escapes input),
       * which escape anyway, 42.5 (the constant input), a bin else, and
       * 100.0, the reconstruction of a bin at most bounds, which the values
       * of the smooth and uniform inputs within eb of it escape for */
      static const uint32_t fills[4] = {0x7fc00000u, 0x72b0b471u, 0x422a0000u, 0x42c80000u};
      emu_fill_bits = fills[(kind + b) % 4u];
      char what[160];
      snprintf(what, sizeof what, "%s, abs=%g, %u warps, fill %#x", emu_input_name(kind), eb, warps, emu_fill_bits);
      emu_input(kind, in, N);
      uint32_t ref_n = 0, wf_n = 0;
      uint32_t ref_entry = emu_ref_encode(in, N, eb, ref_slot, ref_pos, ref_val, &ref_n);
      memset(wf_slot, 0xa5, sizeof wf_slot);
      uint32_t wf_entry = wf_encode(in, eb, warps, wf_slot, wf_pos, wf_val, &wf_n);
      uint32_t size = ref_entry & 0x7fffffffu;
      cases++;
      raw += (ref_entry >> 31) != 0;
      if (ref_entry != wf_entry || ref_n != wf_n || memcmp(ref_slot, wf_slot, size) ||
          memcmp(ref_pos, wf_pos, 4u * ref_n) || memcmp(ref_val, wf_val, 4u * ref_n)) {
        printf("FAIL encode %s: entry %#x / %#x, outliers %u / %u (reference / warp-fused)\n", what, ref_entry,
               wf_entry, ref_n, wf_n);
        failures++;
        continue;
      }
      check_decode(ref_slot, ref_entry, eb, what);
      for (int c = 0; c < changes_per_case; c++, changed_streams++) {
        uint32_t entry = ref_entry, s = size;
        memcpy(changed, ref_slot, s);
        switch (emu_random() % 5u) {
        case 0: changed[emu_random() % s] ^= (uint8_t)(1u + emu_random() % 255u); break; /* any byte */
        case 1:
          changed[emu_random() % (s < 32u ? s : 32u)] ^= (uint8_t)(1u << (emu_random() % 8u));
          break;                                                                                    /* top bitmap */
        case 2: entry = (entry & 0x80000000u) | (s - 1u - emu_random() % (s < 8u ? s : 8u)); break; /* shorter */
        case 3: entry ^= 0x80000000u; break;                                                        /* the raw bit */
        default: {                                                                                  /* a run of zeros */
          uint32_t at = emu_random() % s, len = 1u + emu_random() % 8u;
          memset(changed + at, 0, len < s - at ? len : s - at);
          break;
        }
        }
        if ((entry & 0x7fffffffu) > 16384u) continue;
        check_decode(changed, entry, eb, what);
      }
      printf("ok   %-64s entry %#x, %u outliers\n", what, ref_entry, ref_n);
    }
  return emu_summary(cases, raw, changed_streams, failures);
}
