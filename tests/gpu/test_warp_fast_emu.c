/*
 * test_warp_fast_emu.c - the fast chain's warp-fused kernels' device code
 * (device_ops/op_warp_fast.h) run on the CPU by cuda_emu (see
 * test_warp_fused_emu.c: coroutine threads, warp collectives, barriers,
 * random schedules, shared memory filled with noise before every block)
 * against the plain op chain quant delta zigzag bitpack
 * (emu_reference.c), so CI machines without a GPU test it too.
 * Encode: the same entry, bytes and outlier lists for the inputs made for
 * each branch (width 0 groups, ballot and transposed planes, width 32,
 * raw sub-chunks, escapes: NaN, Inf, -0.0, huge values and the fill value)
 * at several bounds, and for sub-chunks of the real fields of
 * ../shared/data (argument 1; skipped when absent) at 1e-2 and 1e-4 of
 * each field's finite range, with 1, 2, 4 and 8 warps per block. Decode:
 * the same values from a stream at any byte alignment, and for changed
 * streams (bytes flipped, sizes off by a few, the raw bit flipped, widths
 * over 32) the same verdict. The real kernels on a GPU:
 * tests/gpu/test_gpu_identical.c (the fast chain is one of its chains).
 */
#include "cuda_emu.h" /* first: the op headers then compile their GPU sections */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "emu_reference.h"
#include "h5fz_ops.h"

#define N 4096u
#define L 16384u

static h5fz_wfp_smem smem; /* the block's shared memory */

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
  h5fz_wfp_encode(&smem, blockDim.x / 32u, j->in, &j->q, j->slot, &j->entry, &j->ocount, j->opos, j->oval);
}

static void decode_thread(void *arg)
{
  decode_job *j = arg;
  j->rc[threadIdx.x] = h5fz_wfp_decode(&smem, blockDim.x / 32u, j->src, j->entry, &j->q, j->out);
}

static void fill_shared_with_noise(void)
{
  uint8_t *p = (uint8_t *)&smem;
  for (size_t i = 0; i < sizeof smem; i++) p[i] = (uint8_t)emu_random();
}

static int failures;

static uint32_t wfp_encode(const float *in, double eb, unsigned warps, uint8_t *slot, uint32_t *opos, uint32_t *oval,
                           uint32_t *ocount)
{
  encode_job j = {in, h5fz_quant_params_make(H5FZ_QMODE_ABS, eb, emu_fill_bits), slot, 0xdeadbeefu, 0xdeadbeefu,
                  opos, oval};
  fill_shared_with_noise();
  emu_run_block(32u * warps, encode_thread, &j);
  *ocount = j.ocount;
  return j.entry;
}

static int wfp_decode(const uint8_t *src, uint32_t entry, double eb, unsigned warps, float *out)
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
static unsigned misaligned;

/* The same verdict, and the same values when read. The stream sits at a
 * random byte offset (0..3) of its buffer, as in the packed payload; the
 * buffer ends with the stream's last byte. */
static void check_decode(const uint8_t *stream, uint32_t entry, double eb, const char *what)
{
  uint32_t size = entry & 0x7fffffffu, shift = emu_random() % 4u;
  uint8_t *buf = malloc(size + shift + 1u);
  if (!buf) return;
  memset(buf, 0x5a, shift);
  memcpy(buf + shift, stream, size);
  misaligned += shift != 0;
  memset(ref_out, 0, sizeof ref_out);
  memset(wf_out, 0xff, sizeof wf_out);
  unsigned warps = 1u << (emu_random() % 4u);
  int a = emu_ref_fast_decode(buf + shift, entry, N, eb, ref_out), b = wfp_decode(buf + shift, entry, eb, warps, wf_out);
  if (a != b) {
    printf("FAIL %s: entry %#x: the reference %s it, the warp-fused decode (%u warps) %s it\n", what, entry,
           a ? "refuses" : "reads", warps, b ? "refuses" : "reads");
    failures++;
  } else if (!a && memcmp(ref_out, wf_out, sizeof ref_out)) {
    printf("FAIL %s: entry %#x: other values (%u warps, offset %u)\n", what, entry, warps, shift);
    failures++;
  }
  free(buf);
}

static uint8_t ref_slot[L], wf_slot[L], changed[L];
static uint32_t ref_pos[N], ref_val[N], wf_pos[N], wf_val[N];
static unsigned cases, raw, changed_streams, width32;

/* Encode in[] both ways, compare, then decode it and changed copies of it. */
static void check_case(const float *in, double eb, unsigned warps, int changes, const char *what)
{
  uint32_t ref_n = 0, wf_n = 0;
  uint32_t ref_entry = emu_ref_fast_encode(in, N, eb, ref_slot, ref_pos, ref_val, &ref_n);
  memset(wf_slot, 0xa5, sizeof wf_slot);
  uint32_t wf_entry = wfp_encode(in, eb, warps, wf_slot, wf_pos, wf_val, &wf_n);
  uint32_t size = ref_entry & 0x7fffffffu;
  cases++;
  raw += (ref_entry >> 31) != 0;
  if (!(ref_entry >> 31))
    for (unsigned g = 0; g < 128u; g++) width32 += ref_slot[g] == 32u;
  if (ref_entry != wf_entry || ref_n != wf_n || memcmp(ref_slot, wf_slot, size) ||
      memcmp(ref_pos, wf_pos, 4u * ref_n) || memcmp(ref_val, wf_val, 4u * ref_n)) {
    printf("FAIL encode %s: entry %#x / %#x, outliers %u / %u (reference / warp-fused)\n", what, ref_entry, wf_entry,
           ref_n, wf_n);
    failures++;
    return;
  }
  check_decode(ref_slot, ref_entry, eb, what);
  for (int c = 0; c < changes; c++, changed_streams++) {
    uint32_t entry = ref_entry, s = size;
    memcpy(changed, ref_slot, s);
    switch (emu_random() % 6u) {
    case 0: changed[emu_random() % s] ^= (uint8_t)(1u + emu_random() % 255u); break;       /* any byte */
    case 1: changed[emu_random() % 128u] ^= (uint8_t)(1u << (emu_random() % 8u)); break;   /* a width */
    case 2: entry = (entry & 0x80000000u) | (s - 1u - emu_random() % 8u); break;           /* shorter */
    case 3: entry ^= 0x80000000u; break;                                                   /* the raw bit */
    case 4: changed[emu_random() % 128u] = (uint8_t)(33u + emu_random() % 223u); break;    /* width over 32 */
    default: entry = (entry & 0x80000000u) | (s - 4u * (1u + emu_random() % 4u)); break;  /* planes short */
    }
    if ((entry & 0x7fffffffu) > L) continue;
    check_decode(changed, entry, eb, what);
  }
  printf("ok   %-72s entry %#x, %u outliers\n", what, ref_entry, ref_n);
}

/* Sub-chunks of the real float32 fields of dir, spread over each file, at
 * 1e-2 and 1e-4 of the field's finite range, the field's fill value (MSG:
 * -1073741824.0) or NaN (siconc's land) as the fill. Returns the files read. */
static unsigned real_fields(const char *dir, int changes)
{
  static const struct {
    const char *name;
    uint32_t fill;
  } files[] = {
      {"um_sea_ice_northward_velocity_float32_120x215x360.f32", 0x7fc00000u},
      {"glosea4_surface_temperature_float32_13x6x145x192.f32", 0x7fc00000u},
      {"eraint_geopotential_float32_2x3x241x480.f32", 0x7fc00000u},
      {"canesm5_siconc_float32_12x291x360.f32", 0x7fc00000u},
      {"mitgcm_deep_convection_theta_float32_50x100x100.f32", 0x7fc00000u},
      {"jacksboro_fault_dem_float32_344x403.f32", 0x7fc00000u},
      {"goes15_xrs_long_flux_float32_42177.f32", 0x7fc00000u},
      {"msg_toa_brightness_temperature_float32_160x256.f32", 0xce800000u}, /* -1073741824.0f */
  };
  static float in[N];
  unsigned read = 0;
  for (unsigned f = 0; f < sizeof files / sizeof *files; f++) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, files[f].name);
    FILE *fp = fopen(path, "rb");
    if (!fp) continue;
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp) / 4;
    float *all = n >= (long)N ? malloc((size_t)n * 4u) : NULL;
    if (!all || fseek(fp, 0, SEEK_SET) || fread(all, 4, (size_t)n, fp) != (size_t)n) {
      printf("FAIL reading %s\n", path);
      failures++;
      free(all);
      fclose(fp);
      continue;
    }
    fclose(fp);
    read++;
    float lo = INFINITY, hi = -INFINITY;
    for (long i = 0; i < n; i++) {
      uint32_t u;
      memcpy(&u, &all[i], 4);
      if (isfinite(all[i]) && u != files[f].fill) {
        lo = all[i] < lo ? all[i] : lo;
        hi = all[i] > hi ? all[i] : hi;
      }
    }
    emu_fill_bits = files[f].fill;
    const long subs = n / (long)N, picks = subs < 6 ? subs : 6;
    for (long k = 0; k < picks; k++) {
      long s = picks > 1 ? k * (subs - 1) / (picks - 1) : 0;
      memcpy(in, all + s * (long)N, sizeof in);
      for (unsigned r = 0; r < 2u; r++) {
        double eb = (r ? 1e-4 : 1e-2) * ((double)hi - (double)lo);
        unsigned warps = 1u << ((k + r + f) % 4u);
        char what[200];
        snprintf(what, sizeof what, "%.30s sub-chunk %ld, abs=%.3g, %u warps", files[f].name, s, eb, warps);
        check_case(in, eb, warps, changes, what);
      }
    }
    free(all);
  }
  return read;
}

int main(int argc, char **argv)
{
  const char *data = argc > 1 ? argv[1] : NULL;
  int changes_per_case = argc > 2 ? atoi(argv[2]) : 6;
  static const double bounds[] = {1e-2, 1e-5, 1.0, 0.5, 1e-4, 1e-300, 1e-30, 1e3, 0.3};
  static float in[N];
  for (unsigned kind = 0; kind < EMU_INPUT_KINDS; kind++)
    for (unsigned b = 0; b < sizeof bounds / sizeof *bounds; b++) {
      double eb = bounds[b];
      unsigned warps = 1u << ((kind + b) % 4u);
      /* the fill values of test_warp_fused_emu.c: NaN, 7e30, 42.5 (the
       * constant input), 100.0 (a reconstruction the smooth input meets) */
      static const uint32_t fills[4] = {0x7fc00000u, 0x72b0b471u, 0x422a0000u, 0x42c80000u};
      emu_fill_bits = fills[(kind + b) % 4u];
      char what[160];
      snprintf(what, sizeof what, "%s, abs=%g, %u warps, fill %#x", emu_input_name(kind), eb, warps, emu_fill_bits);
      emu_input(kind, in, N);
      check_case(in, eb, warps, changes_per_case, what);
    }
  unsigned files = data ? real_fields(data, changes_per_case) : 0u;
  printf("%u real fields read from %s; %u groups of width 32; %u decodes from a misaligned stream\n", files,
         data ? data : "(no directory given)", width32, misaligned);
  if (!width32 || !misaligned) {
    printf("FAIL: no group of width 32 or no misaligned stream was tested\n");
    failures++;
  }
  return emu_summary(cases, raw, changed_streams, failures);
}
