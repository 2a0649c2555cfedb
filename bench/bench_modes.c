/*
 * bench_modes.c - ratio of each chain (default, Lorenzo, fast) in each
 * error-bound mode (ABS and REL at 1e-2/1e-4/1e-6 of the field's range,
 * PW_REL at 1e-2/1e-4/1e-6, lossless) on every real field, each field one
 * chunk with its own shape as the chunk dims (as an HDF5 dataset stored in
 * one chunk). Every result is decoded and checked against its bound; the
 * Markdown table (--markdown) is what docs/modes.md shows.
 *   h5fz_bench_modes [--data DIR] [--markdown]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../tests/gpu/gpu_test_util.h"
#include "h5fz.h"

static const char *const chains[] = {"delta zigzag bitshuffle rze", "lorenzo zigzag bitshuffle rze",
                                     "delta zigzag bitpack"};

/* ratio, or -1 on an error; *held = every element within its bound */
static double run(const test_field *t, const char *mode, double eb, int pw, int chain, int *held)
{
  char text[256];
  snprintf(text, sizeof text, "%s %s dtype=%s%s%s", mode, chains[chain], t->f64 ? "f64" : "f32",
           strchr(t->shape, 'x') ? " dims=" : "", strchr(t->shape, 'x') ? t->shape : "");
  h5fz_spec s;
  void *enc = NULL, *dec = NULL;
  size_t en = 0, dn = 0;
  if (h5fz_spec_parse(text, &s) || h5fz_chunk_encode(&s, t->data, t->bytes, &enc, &en) ||
      h5fz_chunk_decode(enc, en, &dec, &dn)) {
    fprintf(stderr, "%s: %s: %s\n", t->name, text, h5fz_last_error());
    free(enc);
    return -1;
  }
  *held = dn == t->bytes && count_violations_mode(t->data, dec, t->bytes / (t->f64 ? 8 : 4), t->f64, pw, eb) == 0;
  free(enc);
  free(dec);
  return (double)t->bytes / (double)en;
}

int main(int argc, char **argv)
{
  const char *dir = getenv("H5FZ_DATA_DIR");
  int markdown = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--data") && i + 1 < argc) dir = argv[++i];
    else if (!strcmp(argv[i], "--markdown")) markdown = 1;
    else {
      printf("usage: h5fz_bench_modes [--data DIR] [--markdown]\n"
             "Ratio of the default, Lorenzo and fast chains in every error-bound mode on each real field\n"
             "(JSON lines, or a Markdown table with --markdown); every result is checked against its bound.\n");
      return strcmp(argv[i], "--help") ? 2 : 0;
    }
  }
  setenv("H5FZ_DEVICE", "cpu", 0);
  test_field *fields = NULL;
  int n = dir ? load_fields(dir, &fields) : 0;
  if (!n) {
    fprintf(stderr, "no fields in %s (use --data DIR)\n", dir ? dir : "(unset)");
    return 2;
  }
  static const char *const modes[] = {"abs", "rel", "pw_rel"};
  int all_held = 1;
  if (markdown)
    printf("| field | mode | bound | default | lorenzo | fast |\n|---|---|---|---|---|---|\n");
  for (int f = 0; f < n; f++) {
    test_field *t = &fields[f];
    for (int m = 0; m < 4; m++) {
      for (double b = 1e-2; b > 1e-7; b /= 100) {
        char mode[64];
        double eb = 0;
        int pw = 0;
        if (m == 3) {
          snprintf(mode, sizeof mode, "lossless");
        } else {
          /* ABS: b x the field's range (fill values left out); REL: b of each
           * chunk's range (here the whole field, fill values included, as the
           * codec sees them); PW_REL: b of each value */
          double abs_eb = b * t->range;
          snprintf(mode, sizeof mode, "%s=%.17g", modes[m], m == 0 ? abs_eb : b);
          eb = m == 0 ? abs_eb : m == 1 ? b * t->range_all : b;
          pw = m == 2;
        }
        double r[3];
        int held[3] = {0, 0, 0};
        for (int c = 0; c < 3; c++) {
          r[c] = run(t, mode, eb, pw, c, &held[c]);
          all_held &= held[c] && r[c] > 0;
        }
        if (markdown)
          printf("| %s | %s | %s | %.2f%s | %.2f%s | %.2f%s |\n", t->name, m == 3 ? "lossless" : modes[m],
                 m == 3 ? "0" : b == 1e-2 ? "1e-2" : b == 1e-4 ? "1e-4" : "1e-6", r[0], held[0] ? "" : " (BOUND BROKEN)",
                 r[1], held[1] ? "" : " (BOUND BROKEN)", r[2], held[2] ? "" : " (BOUND BROKEN)");
        else
          printf("{\"field\": \"%s\", \"mode\": \"%s\", \"bound\": %g, \"ratio\": {\"default\": %.3f, \"lorenzo\": %.3f, "
                 "\"fast\": %.3f}, \"bound_held\": [%d, %d, %d]}\n",
                 t->name, m == 3 ? "lossless" : modes[m], m == 3 ? 0 : b, r[0], r[1], r[2], held[0], held[1], held[2]);
        if (m == 3) break;
      }
    }
  }
  for (int f = 0; f < n; f++) free(fields[f].data);
  free(fields);
  return all_held ? 0 : 1;
}
