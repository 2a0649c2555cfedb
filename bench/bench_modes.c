/*
 * bench_modes.c - ratio of each chain (default, Lorenzo, Lorenzo N-D, fast)
 * in each error-bound mode (ABS and REL at 1e-2/1e-4/1e-6 of the field's
 * range, PW_REL at 1e-2/1e-4/1e-6, lossless) on every real field. A field
 * is cut into chunks that keep its shape: slabs of whole planes along its
 * slowest dim, as many as fit 4 MiB (the whole field when it fits), each
 * with its own shape as the chunk dims (as an HDF5 dataset chunked that
 * way). Every chunk is decoded and checked against its bound (REL: the
 * bound in its header, and that bound against b x the chunk's range); the Markdown
 * table (--markdown) is what docs/modes.md shows.
 *   h5fz_bench_modes [--data DIR] [--markdown]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "field_data.h"
#include "h5fz.h"

#define N_CHAINS 4
#define CHUNK_LIMIT (4u << 20)

static const char *const chains[N_CHAINS] = {"delta zigzag bitshuffle rze", "lorenzo zigzag bitshuffle rze",
                                             "lorenzo_nd zigzag bitshuffle rze", "delta zigzag bitpack"};
static const char *const chain_names[N_CHAINS] = {"default", "lorenzo", "lorenzo_nd", "fast"};

typedef struct {
  double ratio;   /* -1 on an error */
  int held;       /* every element within its bound */
  unsigned preds; /* lorenzo_nd: bit D-1 set when a chunk used predictor D */
} result;

/* The field's dims (slowest first) and the slabs of its slowest dim per chunk. */
static int field_dims(const test_field *t, unsigned dims[4], unsigned *per_chunk)
{
  int rank = 0;
  const char *p = t->shape;
  while (*p && rank < 4) {
    dims[rank++] = (unsigned)strtoul(p, (char **)&p, 10);
    if (*p == 'x') p++;
  }
  size_t slab = t->f64 ? 8 : 4;
  for (int i = 1; i < rank; i++) slab *= dims[i];
  *per_chunk = rank > 1 && slab * dims[0] > CHUNK_LIMIT ? (unsigned)(CHUNK_LIMIT / slab) : dims[0];
  if (!*per_chunk) *per_chunk = 1;
  return rank;
}

/* One chain on every chunk of the field. eb: the bound to check (REL: from
 * each chunk's header); pw: PW_REL. */
static result run(const test_field *t, const char *mode, double eb, int pw, int chain)
{
  result res = {-1, 0, 0};
  unsigned dims[4] = {0, 0, 0, 0}, per;
  int rank = field_dims(t, dims, &per);
  size_t es = t->f64 ? 8 : 4, slab = es, total = 0;
  for (int i = 1; i < rank; i++) slab *= dims[i];
  int held = 1;
  for (unsigned z = 0; z < dims[0]; z += per) {
    unsigned k = dims[0] - z < per ? dims[0] - z : per;
    char text[320], shape[64];
    int n = snprintf(shape, sizeof shape, "%u", k);
    for (int i = 1; i < rank; i++) n += snprintf(shape + n, sizeof shape - (size_t)n, "x%u", dims[i]);
    snprintf(text, sizeof text, "%s %s dtype=%s%s%s", mode, chains[chain], t->f64 ? "f64" : "f32",
             rank > 1 ? " dims=" : "", rank > 1 ? shape : "");
    const unsigned char *in = t->data + (size_t)z * slab;
    size_t bytes = rank > 1 ? (size_t)k * slab : t->bytes;
    h5fz_spec s;
    h5fz_chunk_info info;
    void *enc = NULL, *dec = NULL;
    size_t en = 0, dn = 0;
    if (h5fz_spec_parse(text, &s) || h5fz_chunk_encode(&s, in, bytes, &enc, &en) ||
        h5fz_chunk_inspect(enc, en, &info) || h5fz_chunk_decode(enc, en, &dec, &dn)) {
      fprintf(stderr, "%s: %s: %s\n", t->name, text, h5fz_last_error());
      free(enc);
      return res;
    }
    /* REL: every value within the bound the chunk's header gives, and that
     * bound within b x the range of the chunk's finite values (the codec is
     * not told of fill values here, so they count) */
    int rel = !pw && eb > 0 && !strncmp(mode, "rel=", 4);
    double check = rel ? info.abs_bound : eb;
    if (rel) {
      double lo = INFINITY, hi = -INFINITY;
      for (size_t i = 0; i < bytes / es; i++) {
        double x = t->f64 ? ((const double *)in)[i] : ((const float *)in)[i];
        if (isfinite(x)) {
          lo = x < lo ? x : lo;
          hi = x > hi ? x : hi;
        }
      }
      held &= info.abs_bound == 0.0 || info.abs_bound <= eb * (hi - lo);
    }
    held &= dn == bytes && count_violations_mode(in, dec, bytes / es, t->f64, pw, check) == 0;
    if (info.predictor) res.preds |= 1u << (info.predictor - 1u);
    total += en;
    free(enc);
    free(dec);
    if (rank <= 1) break;
  }
  res.held = held;
  res.ratio = (double)t->bytes / (double)total;
  return res;
}

static void preds_text(unsigned preds, char *buf, size_t len)
{
  size_t n = 0;
  buf[0] = '\0';
  for (unsigned d = 1; d <= 3; d++)
    if (preds & (1u << (d - 1u))) n += (size_t)snprintf(buf + n, len - n, "%s%u", n ? "/" : "", d);
}

int main(int argc, char **argv)
{
  const char *dir = getenv("H5FZ_DATA_DIR");
  int markdown = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--data") && i + 1 < argc)
      dir = argv[++i];
    else if (!strcmp(argv[i], "--markdown"))
      markdown = 1;
    else {
      printf("usage: h5fz_bench_modes [--data DIR] [--markdown]\n"
             "Ratio of the default, Lorenzo, Lorenzo N-D and fast chains in every error-bound mode on each\n"
             "real field (JSON lines, or a Markdown table with --markdown); every result is checked against\n"
             "its bound.\n");
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
    printf("| field | chunk | mode | bound | default | lorenzo | lorenzo_nd | D | nd vs default | fast |\n"
           "|---|---|---|---|---|---|---|---|---|---|\n");
  for (int f = 0; f < n; f++) {
    test_field *t = &fields[f];
    unsigned dims[4], per;
    int rank = field_dims(t, dims, &per);
    char chunk[64];
    int cn = snprintf(chunk, sizeof chunk, "%u", rank > 1 ? per : dims[0]);
    for (int i = 1; i < rank; i++) cn += snprintf(chunk + cn, sizeof chunk - (size_t)cn, "x%u", dims[i]);
    for (int m = 0; m < 4; m++) {
      for (double b = 1e-2; b > 1e-7; b /= 100) {
        char mode[64];
        double eb = 0;
        int pw = 0;
        if (m == 3) {
          snprintf(mode, sizeof mode, "lossless");
        } else {
          /* ABS: b x the field's range (fill values left out); REL: b of each
           * chunk's range (fill values included, as the codec sees them,
           * because it is not told which values are fill here); PW_REL: b of
           * each value */
          double abs_eb = b * t->range;
          snprintf(mode, sizeof mode, "%s=%.17g", modes[m], m == 0 ? abs_eb : b);
          eb = m == 0 ? abs_eb : b;
          pw = m == 2;
        }
        result r[N_CHAINS];
        for (int c = 0; c < N_CHAINS; c++) {
          r[c] = run(t, mode, eb, pw, c);
          all_held &= r[c].held && r[c].ratio > 0;
        }
        char preds[16];
        preds_text(r[2].preds, preds, sizeof preds);
        double gain = 100.0 * (r[2].ratio / r[0].ratio - 1.0);
        const char *bound = m == 3 ? "0" : b == 1e-2 ? "1e-2" : b == 1e-4 ? "1e-4" : "1e-6";
        if (markdown) {
          printf("| %s | %s | %s | %s |", t->name, chunk, m == 3 ? "lossless" : modes[m], bound);
          for (int c = 0; c < N_CHAINS; c++) {
            printf(" %.2f%s |", r[c].ratio, r[c].held ? "" : " (BOUND BROKEN)");
            if (c == 2) printf(" %s | %+.1f %% |", preds, gain);
          }
          printf("\n");
        } else {
          printf("{\"field\": \"%s\", \"chunk\": \"%s\", \"mode\": \"%s\", \"bound\": %g, \"ratio\": {", t->name, chunk,
                 m == 3 ? "lossless" : modes[m], m == 3 ? 0 : b);
          for (int c = 0; c < N_CHAINS; c++) printf("%s\"%s\": %.3f", c ? ", " : "", chain_names[c], r[c].ratio);
          printf("}, \"lorenzo_nd_predictors\": \"%s\", \"bound_held\": [", preds);
          for (int c = 0; c < N_CHAINS; c++) printf("%s%d", c ? ", " : "", r[c].held);
          printf("]}\n");
        }
        fflush(stdout);
        if (m == 3) break;
      }
    }
  }
  for (int f = 0; f < n; f++) free(fields[f].data);
  free(fields);
  return all_held ? 0 : 1;
}
