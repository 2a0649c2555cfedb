/*
 * test_gpu_warp_fused.c - the warp-fused kernels (device_ops/op_warp_fused.h
 * for the default chain, op_warp_fast.h for the fast chain quant delta
 * zigzag bitpack: every case runs for both) write the CPU executor's bytes and read them back as it does, on inputs
 * built to reach each of their branches: smooth data (ballot planes), noise
 * at a tight bound (transposed planes, raw sub-chunks), every kind of
 * escaped value at sub-chunk edges, constant and all-escaped sub-chunks,
 * 32-bit zigzag words, chunk lengths with and without a partial last
 * sub-chunk, ABS and REL, fill values inside the data (values whose
 * reconstruction is the fill's escape too: none may read back as the fill)
 * (and the generic kernels, H5FZ_GPU_WARP_FUSED=0,
 * on the same inputs). Then corrupt streams: single bytes changed in an
 * encoded chunk (checksum mended, so the decoders see the change): the GPU
 * refuses exactly the chunks the CPU refuses and reads the others to the
 * same values. Checks that the warp-fused kernels ran. Skips (77) without a
 * GPU.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "gpu_test_util.h"
#include "h5fz.h"
#include "h5fz_gpu.h"
#define SUB 4096u

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint32_t next_u32(void)
{
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (uint32_t)(rng >> 16);
}

/* strict: fail, never fall back to the CPU, so the GPU must have run; the
 * device through an options value (H5FZ_DEVICE is read once per process) */
static int encode_on(const char *device, const h5fz_spec *s, const float *in, size_t n, void **out, size_t *out_n)
{
  return gpu_test_encode_on(device, s, in, n * sizeof(float), out, out_n);
}

static int decode_on(const char *device, const void *in, size_t n, void **out, size_t *out_n)
{
  return gpu_test_decode_on(device, in, n, out, out_n);
}

/* Same bytes both ways, each reads the other's, every value within eb
 * (escaped values exactly: NaN as NaN, -0.0 as -0.0). Returns failures. */
static int check_one(const char *name, const char *spec_text, const float *x, size_t n, double eb)
{
  h5fz_spec s;
  if (h5fz_spec_parse(spec_text, &s)) {
    printf("FAIL %s: spec %s: %s\n", name, spec_text, h5fz_last_error());
    return 1;
  }
  void *cpu = NULL, *gpu = NULL, *back_gpu = NULL, *back_cpu = NULL;
  size_t cpu_n = 0, gpu_n = 0, bg = 0, bc = 0;
  int fail = 0;
  if (encode_on("cpu", &s, x, n, &cpu, &cpu_n) || encode_on("gpu", &s, x, n, &gpu, &gpu_n)) {
    printf("FAIL %s: encode: %s\n", name, h5fz_last_error());
    fail = 1;
    goto out;
  }
  if (cpu_n != gpu_n || memcmp(cpu, gpu, cpu_n)) {
    size_t at = 0;
    while (at < cpu_n && at < gpu_n && ((unsigned char *)cpu)[at] == ((unsigned char *)gpu)[at]) at++;
    printf("FAIL %s: GPU bytes differ from the CPU's (sizes %zu / %zu, first difference at byte %zu)\n", name, gpu_n,
           cpu_n, at);
    fail = 1;
  }
  if (decode_on("gpu", cpu, cpu_n, &back_gpu, &bg) || decode_on("cpu", cpu, cpu_n, &back_cpu, &bc)) {
    printf("FAIL %s: decode: %s\n", name, h5fz_last_error());
    fail = 1;
    goto out;
  }
  if (bg != n * sizeof(float) || bc != bg || memcmp(back_gpu, back_cpu, bg)) {
    printf("FAIL %s: the GPU read other values than the CPU\n", name);
    fail = 1;
  }
  size_t bad = 0;
  const float *y = back_gpu;
  for (size_t i = 0; i < n; i++) {
    int same_bits = !memcmp(&x[i], &y[i], sizeof(float));
    if (!same_bits && !(fabs((double)x[i] - (double)y[i]) <= eb)) bad++;
  }
  if (bad) {
    printf("FAIL %s: %zu values out of bound %g\n", name, bad, eb);
    fail = 1;
  }
  if (s.has_fill) { /* a mask by equality must find exactly the fill values written */
    float fill = (float)s.fill;
    size_t masked = 0, lost = 0;
    for (size_t i = 0; i < n; i++) {
      int was = !memcmp(&x[i], &fill, sizeof fill), is = !memcmp(&y[i], &fill, sizeof fill);
      masked += !was && is;
      lost += was && !is;
    }
    if (masked || lost) {
      printf("FAIL %s: %zu real values read back as the fill, %zu fill values changed\n", name, masked, lost);
      fail = 1;
    }
  }
  /* the generic kernels on the same chain (other kernel classes run them);
   * no options value carries H5FZ_GPU_WARP_FUSED: the environment, reloaded */
  gpu_test_setenv("H5FZ_GPU_WARP_FUSED", "0");
  void *gen = NULL, *back_gen = NULL;
  size_t gen_n = 0, bgen = 0;
  if (encode_on("gpu", &s, x, n, &gen, &gen_n) || decode_on("gpu", cpu, cpu_n, &back_gen, &bgen)) {
    printf("FAIL %s: generic kernels: %s\n", name, h5fz_last_error());
    fail = 1;
  } else if (gen_n != cpu_n || memcmp(gen, cpu, cpu_n) || bgen != bc || memcmp(back_gen, back_cpu, bc)) {
    printf("FAIL %s: the generic kernels' bytes or values differ from the CPU's\n", name);
    fail = 1;
  }
  gpu_test_setenv("H5FZ_GPU_WARP_FUSED", NULL);
  free(gen);
  free(back_gen);
  if (!fail) printf("ok   %-44s n=%-8zu ratio %8.2f\n", name, n, (double)(n * sizeof(float)) / (double)cpu_n);
out:
  free(cpu);
  free(gpu);
  free(back_gpu);
  free(back_cpu);
  return fail;
}

/* The case with the default chain (spec_text as given) and with the fast
 * chain (its ops added). */
static int check_case(const char *name, const char *spec_text, const float *x, size_t n, double eb)
{
  char fast_name[160], fast_spec[200];
  snprintf(fast_name, sizeof fast_name, "%s [fast]", name);
  snprintf(fast_spec, sizeof fast_spec, "%s delta zigzag bitpack", spec_text);
  return check_one(name, spec_text, x, n, eb) + check_one(fast_name, fast_spec, x, n, eb);
}

/* max - min of the finite values (what REL bounds are relative to) */
static double finite_range(const float *x, size_t n)
{
  double lo = INFINITY, hi = -INFINITY;
  for (size_t i = 0; i < n; i++)
    if (isfinite(x[i])) {
      lo = x[i] < lo ? x[i] : lo;
      hi = x[i] > hi ? x[i] : hi;
    }
  return hi >= lo ? hi - lo : 0.0;
}

static void mend_checksum(unsigned char *c, size_t n)
{
  uLong crc = crc32(crc32(0L, Z_NULL, 0), c, (uInt)(n - 4));
  for (int b = 0; b < 4; b++) c[n - 4 + (size_t)b] = (unsigned char)(crc >> (8 * b));
}

/* Changed bytes in a valid chunk: the GPU and the CPU agree on refusing
 * it, and on its values when both read it. Returns failures. */
static int check_corruptions_one(const char *name, const char *spec_text, const float *x, size_t n, int tries)
{
  h5fz_spec s;
  void *enc = NULL;
  size_t en = 0;
  if (h5fz_spec_parse(spec_text, &s) || encode_on("cpu", &s, x, n, &enc, &en)) {
    printf("FAIL %s: %s\n", name, h5fz_last_error());
    return 1;
  }
  unsigned char *c = malloc(en);
  int fail = 0, refused = 0, read = 0;
  for (int t = 0; t < tries && c; t++) {
    memcpy(c, enc, en);
    /* mostly the payload (past the header and size table), sometimes anywhere */
    size_t at = (t % 4 == 0) ? next_u32() % (en - 4) : en / 8 + next_u32() % (en - 4 - en / 8);
    c[at] ^= (unsigned char)(1u + next_u32() % 255u);
    mend_checksum(c, en);
    void *a = NULL, *b = NULL;
    size_t an = 0, bn = 0;
    int ra = decode_on("gpu", c, en, &a, &an), rb = decode_on("cpu", c, en, &b, &bn);
    if ((ra != 0) != (rb != 0)) {
      printf("FAIL %s: byte %zu changed: GPU %s, CPU %s\n", name, at, ra ? "refused" : "read", rb ? "refused" : "read");
      fail = 1;
    } else if (!ra && (an != bn || memcmp(a, b, an))) {
      printf("FAIL %s: byte %zu changed: GPU and CPU read different values\n", name, at);
      fail = 1;
    }
    refused += ra != 0;
    read += ra == 0;
    free(a);
    free(b);
  }
  if (!fail) printf("ok   %-44s %d changed chunks: %d refused by both, %d read alike\n", name, tries, refused, read);
  free(c);
  free(enc);
  return fail;
}

/* ... with the default chain and with the fast chain */
static int check_corruptions(const char *name, const char *spec_text, const float *x, size_t n, int tries)
{
  char fast_name[160], fast_spec[200];
  snprintf(fast_name, sizeof fast_name, "%s [fast]", name);
  snprintf(fast_spec, sizeof fast_spec, "%s delta zigzag bitpack", spec_text);
  return check_corruptions_one(name, spec_text, x, n, tries) + check_corruptions_one(fast_name, fast_spec, x, n, tries);
}

int main(void)
{
  if (!gpu_test_have_gpu()) return CTEST_SKIP;
  h5fz_gpu_stats before, after;
  h5fz_gpu_get_stats(&before);

  const size_t N = 64u * SUB + 1000u; /* 64 full sub-chunks and a partial one */
  float *x = malloc(N * sizeof(float)), *y = malloc(N * sizeof(float));
  if (!x || !y) return 1;
  int failures = 0;
  char spec[128];

  /* smooth: few significant bits (ballot planes), high ratio */
  for (size_t i = 0; i < N; i++) x[i] = (float)(100.0 * sin((double)i * 1e-3) + 3.0 * cos((double)i * 0.37));
  failures += check_case("smooth abs=1e-2", "abs=1e-2 dtype=f32", x, N, 1e-2);
  failures += check_case("smooth abs=1e-5", "abs=1e-5 dtype=f32", x, N, 1e-5);
  failures += check_case("smooth rel=1e-4", "rel=1e-4 dtype=f32", x, N, 1e-4 * finite_range(x, N));
  failures += check_case("smooth, full sub-chunks only", "abs=1e-3 dtype=f32", x, 64u * SUB, 1e-3);
  failures += check_case("smooth, last sub-chunk one value", "abs=1e-3 dtype=f32", x, 3u * SUB + 1u, 1e-3);
  failures += check_case("smooth, last sub-chunk one short", "abs=1e-3 dtype=f32", x, 3u * SUB + 4095u, 1e-3);
  failures += check_case("smooth, under one sub-chunk", "abs=1e-3 dtype=f32", x, 1000u, 1e-3);

  /* fill values inside the data: 100 and 20 are reconstructions at
   * abs=1e-2 (bins 5000, 1000), so the values within 1e-2 of them escape
   * too; written fill values among them */
  for (size_t i = 0; i < N; i += 97u) x[i] = 100.0f;
  failures += check_case("smooth, fill 100 inside the data", "abs=1e-2 dtype=f32 fill=100", x, N, 1e-2);
  for (size_t i = 0; i < N; i += 97u) x[i] = 20.0f;
  failures += check_case("smooth, fill 20 inside the data", "abs=1e-2 dtype=f32 fill=20", x, N, 1e-2);
  failures += check_case("smooth, fill 20, rel", "rel=1e-4 dtype=f32 fill=20", x, N, 1e-4 * finite_range(x, N));

  /* noise: many significant bits (transposed planes); at a tight bound
   * RZE cannot shrink most sub-chunks, which are stored raw */
  for (size_t i = 0; i < N; i++) x[i] = (float)((double)next_u32() / 4294967296.0 * 2000.0 - 1000.0);
  failures += check_case("noise abs=1", "abs=1 dtype=f32", x, N, 1.0);
  failures += check_case("noise abs=1e-4 (raw sub-chunks)", "abs=1e-4 dtype=f32", x, N, 1e-4);
  /* noise in a few sub-chunks only: raw and RZE sub-chunks side by side */
  for (size_t i = 0; i < N; i++) x[i] = (i / SUB) % 3 == 1 ? x[i] : (float)(i % 7);
  failures += check_case("noise in every third sub-chunk", "abs=1e-4 dtype=f32", x, N, 1e-4);

  /* 32-bit zigzag words: bins near +-2^30 alternating */
  for (size_t i = 0; i < N; i++) x[i] = (float)((i & 1 ? 1.0 : -1.0) * (1.0e9 - (double)(i % 1000) * 128.0));
  failures += check_case("alternating bins near 2^30", "abs=0.5 dtype=f32", x, N, 0.5);

  /* constant: no significant bit at all; zero and nonzero */
  for (size_t i = 0; i < N; i++) x[i] = 0.0f;
  failures += check_case("all zero", "abs=1e-3 dtype=f32", x, N, 1e-3);
  for (size_t i = 0; i < N; i++) x[i] = 42.5f;
  failures += check_case("constant 42.5", "abs=1e-3 dtype=f32", x, N, 1e-3);

  /* escaped values of every kind, at the edges of sub-chunks and groups,
   * plus one sub-chunk that escapes entirely */
  for (size_t i = 0; i < N; i++) x[i] = (float)(10.0 * sin((double)i * 1e-2));
  const size_t edges[] = {0, 1, 31, 32, 33, 4095, 4096, 4097, 8191, 8192, 12287, 20000, 65535, 65536, N - 1};
  const float specials[] = {NAN, INFINITY, -INFINITY, -0.0f, 3.0e37f, -3.0e37f, 1.0e-40f, 7.0e30f};
  for (size_t k = 0; k < sizeof edges / sizeof *edges; k++)
    x[edges[k]] = specials[k % (sizeof specials / sizeof *specials)];
  for (size_t i = 10u * SUB; i < 11u * SUB; i++) x[i] = NAN;
  for (size_t k = 0; k < 3000; k++) x[next_u32() % N] = specials[next_u32() % 8u];
  failures += check_case("escapes at edges, an all-NaN sub-chunk", "abs=1e-3 dtype=f32", x, N, 1e-3);
  failures += check_case("escapes, rel", "rel=1e-3 dtype=f32", x, N, 1e-3 * finite_range(x, N));
  failures +=
      check_case("escapes, abs=1e-300 (every nonzero value escapes)", "abs=1e-300 dtype=f32", x, 8u * SUB, 1e-300);

  /* corrupt streams: smooth (RZE with all three levels busy) and noise
   * (raw and transposed) chunks */
  for (size_t i = 0; i < N; i++) x[i] = (float)(100.0 * sin((double)i * 1e-3) + (double)(next_u32() % 100) * 1e-3);
  snprintf(spec, sizeof spec, "abs=1e-3 dtype=f32");
  failures += check_corruptions("corrupt smooth chunk", spec, x, 16u * SUB, 600);
  for (size_t i = 0; i < N; i++) y[i] = (float)((double)next_u32() / 4294967296.0);
  failures += check_corruptions("corrupt noisy chunk", "abs=1e-3 dtype=f32", y, 16u * SUB, 300);

  /* a coded entry flipped to raw (checksum mended) is refused, by the
   * table check before the kernels and, behind it, by the warp-fused decode */
  for (int fast = 0; fast < 2; fast++) {
    h5fz_spec zs;
    void *enc = NULL, *dec = NULL;
    size_t en = 0, dn = 0;
    memset(x, 0, 3u * SUB * sizeof(float));
    if (h5fz_spec_parse(fast ? "abs=1e-3 dtype=f32 delta zigzag bitpack" : "abs=1e-3 dtype=f32", &zs) ||
        encode_on("gpu", &zs, x, 3u * SUB, &enc, &en)) {
      printf("FAIL raw entry: encode: %s\n", h5fz_last_error());
      failures++;
    } else {
      unsigned char *c = enc;
      c[83] ^= 0x80; /* sub-chunk 0's raw bit (the size table follows the 80-byte header) */
      mend_checksum(c, en);
      int rc = decode_on("gpu", c, en, &dec, &dn);
      if (rc == 0) {
        printf("FAIL raw entry: a %s sub-chunk marked raw was read\n", fast ? "128-byte" : "32-byte");
        failures++;
      } else {
        printf("ok   a coded entry marked raw is refused%s: %s\n", fast ? " [fast]" : "", h5fz_last_error());
      }
    }
    free(enc);
    free(dec);
  }

  h5fz_gpu_get_stats(&after);
  unsigned long long enc = after.warp_fused_encodes - before.warp_fused_encodes,
                     dec = after.warp_fused_decodes - before.warp_fused_decodes;
  printf("warp-fused launches: %llu encode, %llu decode\n", enc, dec);
  if (!enc || !dec) {
    printf("FAIL: the warp-fused kernels did not run (class without the warp_fused feature, or "
           "H5FZ_GPU_WARP_FUSED=0?)\n");
    failures++;
  }
  printf("%s: %d failed\n", failures ? "FAIL" : "PASS", failures);
  free(x);
  free(y);
  return failures ? 1 : 0;
}
