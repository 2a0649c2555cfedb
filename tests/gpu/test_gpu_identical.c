/*
 * test_gpu_identical.c - the GPU executor writes the same bytes as the CPU
 * executor, and each decodes the other's output within the bound, on every
 * real field, for each chain of v1 at three bounds; and one chunk of about
 * 160 MiB (the float32 fields back to back: 10 parts of the tail's scan),
 * ABS and REL; and big-endian chunks (order=big: the values byte-swapped),
 * whose containers must be the CPU's and, past the version byte, the flag
 * and the checksum, the little-endian chunk's. Skips (77) without a GPU.
 *   test_gpu_identical [DATA_DIR] (default $H5FZ_DATA_DIR)
 */
#include <stdint.h>

#include "gpu_test_util.h"
#include "h5fz.h"
#include "h5fz_gpu.h"

/* mode (printf format taking the bound) x chain */
static const struct {
  const char *mode, *chain;
} cases[] = {
    {"abs=%.17g", ""}, /* default: delta zigzag bitshuffle rze */
    {"abs=%.17g", "delta negabinary bitshuffle rze"},
    {"abs=%.17g", "zigzag bitshuffle rze"},
    {"abs=%.17g", "delta zigzag rze"},
    {"abs=%.17g", "delta zigzag raw"},
    {"abs=%.17g", "delta zigzag bitpack"},          /* the fast chain, after cuSZp */
    {"abs=%.17g", "lorenzo zigzag bitshuffle rze"}, /* dims from the field's shape */
    /* lorenzo_nd: the cost kernel, the fused encode quantizing neighbours again,
   * the chunk-level decode kernels; dims from the field's shape, so a 4 MiB
   * slice of a larger field is a chunk whose element count does not match
   * its dims (allowed: format.md 5.3) */
    {"abs=%.17g", "lorenzo_nd zigzag bitshuffle rze"},
    {"abs=%.17g", "lorenzo_nd zigzag bitpack"},
    /* the ratio chain (huff: histogram by shared-memory atomics, bits by a
     * scan, one thread a group decoding) in every mode, and huff after delta */
    {"abs=%.17g", "ratio"},
    {"rel=%.17g", "ratio"},
    {"pw_rel=%.17g", "ratio"},
    {"lossless", "ratio"},
    {"abs=%.17g", "lorenzo_nd zigzag huff"},
    {"abs=%.17g", "delta zigzag huff"},
    /* lorenzo_interp: the interpolation's cost, encode and decode passes (the log counts the chunks
     * that chose it); in calls 1 and 3 of session 21 these ran as "ratio", which named it then */
    {"abs=%.17g", "lorenzo_interp zigzag huffctx subchunk=65536"},
    {"rel=%.17g", "lorenzo_interp zigzag huffctx subchunk=65536"},
    {"pw_rel=%.17g", "lorenzo_interp zigzag huffctx subchunk=65536"},
    {"abs=%.17g", "lorenzo_interp zigzag bitshuffle rze"},
    {"rel=%.17g", "lorenzo_nd negabinary bitshuffle rze"},
    {"pw_rel=%.17g", "lorenzo_nd zigzag bitshuffle rze"},
    {"lossless", "lorenzo_nd zigzag bitshuffle rze"},
    {"rel=%.17g", ""},
    {"pw_rel=%.17g", ""},
    {"lossless", ""},
};

/* Does the chain predict along the chunk's dims (lorenzo, lorenzo_nd, the ratio preset)? */
static int has_lnd(const char *chain) { return strstr(chain, "lorenzo") || strstr(chain, "ratio"); }

/* strict: fail, never fall back to the CPU, so the GPU must have run; the
 * device through an options value (H5FZ_DEVICE is read once per process) */
static int encode_with(const char *device, const h5fz_spec *s, const void *in, size_t n, void **out, size_t *out_n)
{
  return gpu_test_encode_on(device, s, in, n, out, out_n);
}

static int decode_with(const char *device, const void *in, size_t n, void **out, size_t *out_n)
{
  return gpu_test_decode_on(device, in, n, out, out_n);
}

/* The float32 fields back to back, repeated to about 160 MiB plus 3 values
 * (so 10 scan parts of 1024 sub-chunks and a partial last sub-chunk), as
 * one chunk, default chain, ABS and REL: the GPU writes the CPU's bytes and
 * decodes them within the bound. Returns the failures. */
static int big_chunk(const test_field *fields, int n_fields, int *n_cases)
{
  size_t want = (160u << 20) + 12u, have = 0, f32_bytes = 0;
  for (int f = 0; f < n_fields; f++) f32_bytes += fields[f].f64 ? 0u : fields[f].bytes;
  if (!f32_bytes) return printf("SKIP 160 MiB chunk: no float32 field\n"), 0;
  unsigned char *big = malloc(want);
  if (!big) return printf("FAIL: no memory for the 160 MiB chunk\n"), 1;
  while (have < want)
    for (int f = 0; f < n_fields && have < want; f++) {
      if (fields[f].f64) continue;
      size_t len = fields[f].bytes < want - have ? fields[f].bytes : want - have;
      memcpy(big + have, fields[f].data, len);
      have += len;
    }
  /* ABS from the range without fill values (|x| >= 1e9), REL checked
   * against the range of every finite value (what REL sees: no fill named) */
  double lo = INFINITY, hi = -INFINITY, alo = INFINITY, ahi = -INFINITY;
  for (size_t j = 0; j < want / 4u; j++) {
    double x = ((const float *)big)[j];
    if (!isfinite(x)) continue;
    if (fabs(x) < 1e9) {
      lo = x < lo ? x : lo;
      hi = x > hi ? x : hi;
    }
    alo = x < alo ? x : alo;
    ahi = x > ahi ? x : ahi;
  }
  int failures = 0;
  for (int rel_mode = 0; rel_mode < 2; rel_mode++) {
    char text[128];
    double eb = rel_mode ? 1e-4 : 1e-4 * (hi - lo), check_eb = rel_mode ? 1e-4 * (ahi - alo) : eb;
    snprintf(text, sizeof text, "%s=%.17g dtype=f32", rel_mode ? "rel" : "abs", eb);
    h5fz_spec s;
    void *cpu = NULL;
    size_t cpu_n = 0;
    if (h5fz_spec_parse(text, &s) || encode_with("cpu", &s, big, want, &cpu, &cpu_n)) {
      printf("FAIL 160 MiB chunk %s: %s\n", text, h5fz_last_error());
      failures++;
      continue;
    }
    {
      void *gpu = NULL, *back = NULL;
      size_t gpu_n = 0, back_n = 0, bad = 0;
      int err = encode_with("gpu", &s, big, want, &gpu, &gpu_n) || decode_with("gpu", gpu, gpu_n, &back, &back_n);
      int same = !err && gpu_n == cpu_n && !memcmp(cpu, gpu, cpu_n);
      if (!err && back_n == want) bad = count_violations_mode(big, back, want / 4u, 0, 0, check_eb);
      int ok = same && !bad && back_n == want;
      failures += !ok;
      (*n_cases)++;
      printf("%s 160 MiB chunk, %-26s ratio=%8.2f %s%s%s\n", ok ? "ok  " : "FAIL", text, (double)want / (double)cpu_n,
             ok ? "identical" : "MISMATCH/ERROR", err ? ": " : "", err ? h5fz_last_error() : "");
      if (!ok && !err) printf("     bytes %s, values out of bound %zu\n", same ? "same" : "differ", bad);
      free(gpu);
      free(back);
    }
    free(cpu);
  }
  free(big);
  return failures;
}

static void swap_copy(const unsigned char *in, unsigned char *out, size_t n, size_t es)
{
  for (size_t i = 0; i < n; i++)
    for (size_t b = 0; b < es; b++) out[i * es + b] = in[i * es + es - 1 - b];
}

/* Big-endian chunks (the first 4 MiB of each field, byte-swapped, spec
 * order=big) on the GPU: the same container as the CPU's; the same as the
 * little-endian chunk's but for header bytes 4 (version 2) and 7 (flag
 * 0x02) and the CRC; decoded by the GPU back to the big-endian input's
 * byte order, within the bound. Modes ABS (the warp-fused kernel for
 * float32 on classes that have it), REL, PW_REL, and lorenzo_nd. Returns
 * the failures. */
static int big_endian_chunks(const test_field *fields, int n_fields, int *n_cases)
{
  static const char *const modes[] = {"abs=%.17g", "rel=1e-4", "pw_rel=1e-4",
                                      "abs=%.17g lorenzo_nd zigzag bitshuffle rze"};
  int failures = 0;
  for (int f = 0; f < n_fields; f++) {
    const test_field *t = &fields[f];
    size_t es = t->f64 ? 8 : 4, len = t->bytes < (4u << 20) ? t->bytes : (4u << 20), n = len / es;
    unsigned char *be = malloc(len), *back_le = malloc(len);
    if (!be || !back_le) {
      free(be), free(back_le);
      return failures + 1;
    }
    swap_copy(t->data, be, n, es);
    for (size_t m = 0; m < sizeof modes / sizeof *modes; m++) {
      char mode[128], text[256];
      snprintf(mode, sizeof mode, modes[m], 1e-4 * t->range);
      snprintf(text, sizeof text, "%s dtype=%s%s%s", mode, t->f64 ? "f64" : "f32",
               strstr(mode, "lorenzo") && strchr(t->shape, 'x') ? " dims=" : "",
               strstr(mode, "lorenzo") && strchr(t->shape, 'x') ? t->shape : "");
      h5fz_spec le_spec, be_spec;
      if (h5fz_spec_parse(text, &le_spec)) {
        printf("FAIL big-endian %s: %s\n", text, h5fz_last_error());
        failures++;
        continue;
      }
      be_spec = le_spec;
      be_spec.big_endian = 1;
      void *cpu = NULL, *gpu = NULL, *le = NULL, *back = NULL;
      size_t cpu_n = 0, gpu_n = 0, le_n = 0, back_n = 0, bad = 0;
      int err =
          encode_with("cpu", &be_spec, be, len, &cpu, &cpu_n) || encode_with("gpu", &be_spec, be, len, &gpu, &gpu_n) ||
          encode_with("gpu", &le_spec, t->data, len, &le, &le_n) || decode_with("gpu", gpu, gpu_n, &back, &back_n);
      int same_cpu = !err && cpu_n == gpu_n && !memcmp(cpu, gpu, cpu_n);
      const unsigned char *g = gpu, *l = le;
      int same_le = !err && le_n == gpu_n && gpu_n > 88 && g[4] == 2 && l[4] == 1 && g[7] == (l[7] | 2u) &&
                    !memcmp(g, l, 4) && !memcmp(g + 5, l + 5, 2) && !memcmp(g + 8, l + 8, gpu_n - 12);
      int back_be = !err && back_n == len; /* the values: below, swapped back */
      if (back_be) {
        swap_copy(back, back_le, n, es);
        double check = m == 1 ? 1e-4 * t->range_all : 1e-4 * (m == 2 ? 1.0 : t->range);
        bad = count_violations_mode(t->data, back_le, n, t->f64, m == 2, check);
      }
      int ok = same_cpu && same_le && back_be && !bad;
      failures += !ok;
      (*n_cases)++;
      printf("%s big-endian %-48s %-44s %s%s%s\n", ok ? "ok  " : "FAIL", t->name, mode,
             ok ? "identical" : "MISMATCH/ERROR", err ? ": " : "", err ? h5fz_last_error() : "");
      if (!ok && !err)
        printf("     same as CPU %d, same as little-endian but header/CRC %d, values out of bound %zu\n", same_cpu,
               same_le, bad);
      free(cpu), free(gpu), free(le), free(back);
    }
    free(be), free(back_le);
  }
  return failures;
}

int main(int argc, char **argv)
{
  const char *dir = argc > 1 ? argv[1] : getenv("H5FZ_DATA_DIR");
  if (!gpu_test_have_gpu()) return CTEST_SKIP;
  test_field *fields = NULL;
  int n_fields = dir ? load_fields(dir, &fields) : 0;
  if (!n_fields) {
    printf("SKIP: no real fields in %s (set H5FZ_DATA_DIR)\n", dir ? dir : "(unset)");
    return CTEST_SKIP;
  }
  size_t chunk_bytes = 4u << 20; /* as an HDF5 chunk of 4 MiB */
  int failures = 0, n_cases = 0;
  h5fz_gpu_stats before, after;
  h5fz_gpu_get_stats(&before);
  for (int f = 0; f < n_fields; f++) {
    test_field *t = &fields[f];
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
      int lossless = cases[c].mode[0] == 'l', pw = cases[c].mode[0] == 'p', rel_mode = cases[c].mode[0] == 'r';
      for (double rel = 1e-2; rel > 1e-7; rel /= 100) {
        char text[256], mode[64];
        /* the bound each element is checked against: REL per chunk is checked
         * against the whole field's range of finite values (fill values
         * included: the codec is not told which they are), which bounds
         * every chunk's */
        double eb = lossless ? 0 : pw || rel_mode ? rel : rel * t->range;
        snprintf(mode, sizeof mode, cases[c].mode, eb);
        snprintf(text, sizeof text, "%s %s dtype=%s%s%s", mode, cases[c].chain, t->f64 ? "f64" : "f32",
                 has_lnd(cases[c].chain) && strchr(t->shape, 'x') ? " dims=" : "",
                 has_lnd(cases[c].chain) && strchr(t->shape, 'x') ? t->shape : "");
        double check_eb = rel_mode ? rel * t->range_all : eb;
        h5fz_spec s;
        if (h5fz_spec_parse(text, &s)) {
          printf("FAIL %s: %s\n", text, h5fz_last_error());
          failures++;
          continue;
        }
        size_t total_cpu = 0, mism = 0, bad = 0, errors = 0, n_chunks = 0, n_interp = 0;
        for (size_t off = 0; off < t->bytes; off += chunk_bytes) {
          size_t len = t->bytes - off < chunk_bytes ? t->bytes - off : chunk_bytes;
          const unsigned char *in = t->data + off;
          void *cpu = NULL, *gpu = NULL, *back1 = NULL, *back2 = NULL;
          size_t cpu_n = 0, gpu_n = 0, b1 = 0, b2 = 0;
          if (encode_with("cpu", &s, in, len, &cpu, &cpu_n) || encode_with("gpu", &s, in, len, &gpu, &gpu_n)) {
            printf("  encode error: %s\n", h5fz_last_error());
            errors++;
          } else {
            total_cpu += cpu_n;
            n_chunks++;
            /* header byte 35: lorenzo_interp's interpolation (predictor 4), so the log says it was compared */
            n_interp += cpu_n > 35 && ((const unsigned char *)cpu)[35] == 4u;
            if (cpu_n != gpu_n || memcmp(cpu, gpu, cpu_n)) mism++;
            if (decode_with("cpu", gpu, gpu_n, &back1, &b1) || decode_with("gpu", cpu, cpu_n, &back2, &b2)) {
              printf("  decode error: %s\n", h5fz_last_error());
              errors++;
            } else {
              size_t es = t->f64 ? 8 : 4;
              bad += count_violations_mode(in, back1, len / es, t->f64, pw, check_eb);
              bad += count_violations_mode(in, back2, len / es, t->f64, pw, check_eb);
              if (b1 != len || b2 != len || memcmp(back1, back2, len)) mism++;
            }
          }
          free(cpu);
          free(gpu);
          free(back1);
          free(back2);
        }
        n_cases++;
        int ok = !mism && !bad && !errors;
        failures += !ok;
        printf("%s %-52s %-28s chain=%-32s ratio=%8.2f %s", ok ? "ok  " : "FAIL", t->name, mode,
               cases[c].chain[0] ? cases[c].chain : "(default)", (double)t->bytes / (double)total_cpu,
               ok ? "identical" : "MISMATCH/ERROR");
        if (n_interp) printf(" (interpolation in %zu of %zu chunks)", n_interp, n_chunks);
        printf("\n");
        if (!ok) printf("     byte mismatches %zu, values out of bound %zu, errors %zu\n", mism, bad, errors);
        if (lossless) break; /* one bound is enough */
      }
    }
  }
  failures += big_chunk(fields, n_fields, &n_cases);
  failures += big_endian_chunks(fields, n_fields, &n_cases);
  h5fz_gpu_get_stats(&after);
  printf("GPU chunks encoded: %llu, decoded: %llu\n", after.chunks_encoded - before.chunks_encoded,
         after.chunks_decoded - before.chunks_decoded);
  if (after.chunks_encoded == before.chunks_encoded || after.chunks_decoded == before.chunks_decoded) {
    printf("FAIL: the GPU executor did not run\n");
    failures++;
  }
  printf("%d passed, %d failed\n", n_cases - (failures > n_cases ? n_cases : failures), failures);
  for (int f = 0; f < n_fields; f++) free(fields[f].data);
  free(fields);
  return failures ? 1 : 0;
}
