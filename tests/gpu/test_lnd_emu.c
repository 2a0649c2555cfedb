/*
 * test_lnd_emu.c - lorenzo_nd's GPU device code run on the CPU by cuda_emu
 * (see test_warp_fused_emu.c), over the real fields of the data folder
 * (argv[1]), against the plain ops (emu_reference.c, op_lorenzo_nd.h as
 * the CPU runs it) and against docs/format.md's definition:
 *  - the cost pass with 16 threads a sampled group (h5fz_lnd_cost_lanes)
 *    gives the sums of the one-thread-a-group form, part by part, for every
 *    predictor, float32 and float64;
 *  - the carry along x as a block-wide segmented scan (h5fz_lnd_carry_blk)
 *    gives h5fz_lnd_carry's words (1..65536 sub-chunks, 32..1024 threads);
 *  - the warp-fused kernels with lorenzo_nd's 1-D predictor (the value
 *    before the sub-chunk as the first one's prediction; words and carry
 *    information out) give the plain chain's bytes, outliers and words;
 *  - the 1-D decode's end (carry, then x fix and quantizer decode in one
 *    pass) gives every value of a chunk with partial sub-chunks back within
 *    the bound, escapes aside (the executor patches those);
 *  - the y and z passes in segments (h5fz_lnd_asum, then h5fz_lnd_ascan from the sums before each segment, the
 *    quantizer decode in the last) restore the quantizer's words of 2-D
 *    and 3-D chunks, whole fields and edge chunks with a partial last
 *    plane, for each predictor.
 * Skips (77) without the data folder.
 */
#include "cuda_emu.h" /* first: the op headers then compile their GPU sections */

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>

#include "emu_reference.h"
#include "h5fz_ops.h"

static int failures;
#define FAIL(...)                                                                                                      \
  do {                                                                                                                 \
    printf("FAIL ");                                                                                                   \
    printf(__VA_ARGS__);                                                                                               \
    printf("\n");                                                                                                      \
    failures++;                                                                                                        \
  } while (0)

/* ---- the real fields ------------------------------------------------------ */

typedef struct {
  char name[200];
  int f64;
  uint32_t rank, dims[4];
  size_t n;
  void *data;
  double range;
} field;

/* name_<type>_<d0>x<d1>....f32|f64 */
static int load_field(const char *dir, const char *file, field *f)
{
  size_t len = strlen(file);
  if (len < 5 || (strcmp(file + len - 4, ".f32") && strcmp(file + len - 4, ".f64"))) return 0;
  snprintf(f->name, sizeof f->name, "%s", file);
  f->f64 = !strcmp(file + len - 4, ".f64");
  const char *shape = strrchr(file, '_');
  if (!shape) return 0;
  f->rank = 0;
  f->n = 1;
  for (const char *p = shape + 1; f->rank < 4 && *p >= '0' && *p <= '9';) {
    char *end;
    unsigned long d = strtoul(p, &end, 10);
    f->dims[f->rank++] = (uint32_t)d;
    f->n *= d;
    p = *end == 'x' ? end + 1 : end;
    if (*end != 'x') break;
  }
  char path[600];
  snprintf(path, sizeof path, "%s/%s", dir, file);
  FILE *fp = fopen(path, "rb");
  if (!fp) return 0;
  size_t es = f->f64 ? 8u : 4u;
  f->data = malloc(f->n * es);
  int ok = f->data && fread(f->data, es, f->n, fp) == f->n;
  fclose(fp);
  if (!ok) {
    free(f->data);
    return 0;
  }
  double lo = INFINITY, hi = -INFINITY;
  for (size_t i = 0; i < f->n; i++) {
    double x = f->f64 ? ((double *)f->data)[i] : ((float *)f->data)[i];
    if (isfinite(x) && fabs(x) < 1e9) {
      if (x < lo) lo = x;
      if (x > hi) hi = x;
    }
  }
  f->range = hi > lo ? hi - lo : 1.0;
  return 1;
}

/* ---- cost pass ------------------------------------------------------------ */

typedef struct {
  const void *in;
  h5fz_lnd_geom g;
  h5fz_quant_params q;
  uint64_t k_lo, k_hi, T, cost[H5FZ_LND_NCOST];
  int f64, lanes;
} cost_job;

static uint64_t scan_scratch[H5FZ_SCAN_SCRATCH_WORDS];
static uint32_t cost_hist[H5FZ_LND_NCOST * H5FZ_LND_CLASSES]; /* the block's shared histogram */

static void cost_thread(void *arg)
{
  cost_job *j = arg;
  const h5fz_blk blk = {threadIdx.x, blockDim.x, scan_scratch};
  uint64_t c[H5FZ_LND_NCOST];
  if (j->f64 && j->lanes)
    h5fz_lnd_cost_lanes_64(&blk, j->in, NULL, j->g, &j->q, j->k_lo, j->k_hi, j->T, cost_hist, c);
  else if (j->f64)
    h5fz_lnd_cost_64(&blk, j->in, NULL, j->g, &j->q, j->k_lo, j->k_hi, j->T, cost_hist, c);
  else if (j->lanes)
    h5fz_lnd_cost_lanes_32(&blk, j->in, NULL, j->g, &j->q, j->k_lo, j->k_hi, j->T, cost_hist, c);
  else
    h5fz_lnd_cost_32(&blk, j->in, NULL, j->g, &j->q, j->k_lo, j->k_hi, j->T, cost_hist, c);
  if (threadIdx.x == 0) memcpy(j->cost, c, sizeof c);
}

static void check_cost(const field *f, uint32_t n, double eb, unsigned threads)
{
  h5fz_lnd_geom g = h5fz_lnd_geom_make(f->rank, f->dims, n, h5fz_lnd_max_dim(f->rank));
  g.interp = 1u; /* lorenzo_interp's: the interpolation's cost too */
  for (g.entropy = 0; g.entropy < 2u; g.entropy++) { /* RZE's bit planes, the huff coders' entropy */
  cost_job j;
  memset(&j, 0, sizeof j);
  j.in = f->data;
  j.g = g;
  j.q = h5fz_quant_params_make(H5FZ_QMODE_ABS, eb, f->f64 ? 0x7ff8000000000000ull : 0x7fc00000u);
  j.f64 = f->f64;
  for (uint32_t part = 0; part < H5FZ_LND_COST_PARTS; part++) {
    h5fz_lnd_sample(n, part, H5FZ_LND_COST_PARTS, &j.k_lo, &j.k_hi, &j.T);
    uint64_t want[H5FZ_LND_NCOST];
    j.lanes = 0;
    emu_run_block(threads, cost_thread, &j);
    memcpy(want, j.cost, sizeof want);
    j.lanes = 1;
    memset(j.cost, 0xee, sizeof j.cost);
    emu_run_block(threads, cost_thread, &j);
    if (memcmp(want, j.cost, sizeof want))
      FAIL("cost %s n=%u part %u (%u threads, entropy %u): lanes %llu %llu %llu %llu, one thread a group %llu %llu %llu %llu",
           f->name, n, part, threads, g.entropy, (unsigned long long)j.cost[0], (unsigned long long)j.cost[1],
           (unsigned long long)j.cost[2], (unsigned long long)j.cost[3], (unsigned long long)want[0],
           (unsigned long long)want[1], (unsigned long long)want[2], (unsigned long long)want[3]);
  }
  }
}

/* ---- carry ---------------------------------------------------------------- */

typedef struct {
  uint64_t *aux;
  uint32_t n_sub;
} carry_job;

static uint64_t carry_sv[1024];
static uint32_t carry_sf[1024];

static void carry_thread(void *arg)
{
  carry_job *j = arg;
  const h5fz_blk blk = {threadIdx.x, blockDim.x, NULL};
  h5fz_lnd_carry_blk(&blk, j->aux, j->n_sub, carry_sv, carry_sf);
}

/* aux as h5fz_lnd_xscan leaves it; pattern 0: a segment starts only in
 * sub-chunk 0 (the 1-D predictor), 1: in every third, 2: at random, 3: in
 * every one */
static void check_carry(uint32_t n_sub, unsigned pattern, unsigned threads)
{
  uint64_t *a = malloc(2u * (size_t)n_sub * 8u), *b = malloc(2u * (size_t)n_sub * 8u);
  if (!a || !b) exit(2);
  for (uint32_t s = 0; s < n_sub; s++) {
    a[2u * s] = ((uint64_t)emu_random() << 32) | emu_random();
    a[2u * s + 1u] =
        s == 0 || pattern == 3u || (pattern == 1u && s % 3u == 0) || (pattern == 2u && emu_random() % 8u == 0);
  }
  memcpy(b, a, 2u * (size_t)n_sub * 8u);
  h5fz_lnd_carry(b, n_sub);
  carry_job j = {a, n_sub};
  emu_run_block(threads, carry_thread, &j);
  for (uint32_t s = 0; s < n_sub; s++)
    if (a[2u * s] != b[2u * s]) {
      FAIL("carry n_sub=%u pattern %u (%u threads): sub-chunk %u gets %#llx, h5fz_lnd_carry %#llx", n_sub, pattern,
           threads, s, (unsigned long long)a[2u * s], (unsigned long long)b[2u * s]);
      break;
    }
  free(a);
  free(b);
}

/* ---- warp-fused kernels, 1-D predictor ------------------------------------ */

static h5fz_wf_smem wf_smem;

typedef struct {
  const float *chunk;
  uint32_t first;
  h5fz_quant_params q;
  uint8_t *slot;
  uint32_t entry, ocount, *opos, *oval;
  const uint8_t *src;
  uint32_t *words;
  int rc;
} wf_job;

/* as h5fz_encode_wf of a lorenzo_nd chain (h5fz_codegen.c) */
static void wf_encode_thread(void *arg)
{
  wf_job *j = arg;
  uint32_t carry0 = 0;
  if (j->first) (void)h5fz_wf_quant(j->chunk[j->first - 1u], &j->q, &carry0);
  h5fz_wf_encode(&wf_smem, j->chunk + j->first, &j->q, carry0, j->slot, &j->entry, &j->ocount, j->opos + j->first,
                 j->oval + j->first);
}

static void wf_decode_thread(void *arg)
{
  wf_job *j = arg;
  int rc = h5fz_wf_decode(&wf_smem, j->src, j->entry, &j->q, (float *)0, j->words);
  if (threadIdx.x == 0) j->rc = rc;
}

static void noise_shared(void)
{
  uint8_t *p = (uint8_t *)&wf_smem;
  for (size_t i = 0; i < sizeof wf_smem; i++) p[i] = (uint8_t)emu_random();
}

/* ---- 1-D decode end: x fix and quantizer decode --------------------------- */

typedef struct {
  uint32_t *w;
  uint32_t m;
  unsigned long long first;
  h5fz_lnd_geom g;
  uint64_t carry;
  h5fz_quant_params q;
} fix_job;

static void fix_thread(void *arg)
{
  fix_job *j = arg;
  const h5fz_blk blk = {threadIdx.x, blockDim.x, NULL};
  h5fz_lnd_xfix_dequant_32(&blk, j->w, j->m, j->first, j->g, j->carry, &j->q);
}

/* A chunk of the flattened float32 field: values [0, n), every sub-chunk
 * encoded by the plain chain (full ones also by the warp-fused kernel,
 * compared), decoded to words, then the chunk-wide end on the emulator. */
static unsigned check_1d_chunk(const field *f, uint32_t n, double eb, unsigned *raw)
{
  const float *x = f->data;
  uint32_t n_sub = (n + 4095u) / 4096u, dims[1] = {n};
  h5fz_lnd_geom g = h5fz_lnd_geom_make(0, dims, n, 1u);
  h5fz_quant_params q = h5fz_quant_params_make(H5FZ_QMODE_ABS, eb, emu_fill_bits);
  static uint8_t ref_slot[16384], wf_slot[16384];
  uint32_t *words = malloc((size_t)n_sub * 4096u * 4u), *wf_words = malloc(4096u * 4u);
  uint32_t *ref_pos = malloc(4096u * 4u), *ref_val = malloc(4096u * 4u);
  uint32_t *wf_pos = malloc((size_t)n * 4u), *wf_val = malloc((size_t)n * 4u);
  uint64_t *aux = malloc(2u * (size_t)n_sub * 8u), *aux_cpu = malloc(2u * (size_t)n_sub * 8u);
  uint8_t *escaped = calloc(n, 1);
  if (!words || !wf_words || !ref_pos || !ref_val || !wf_pos || !wf_val || !aux || !aux_cpu || !escaped) exit(2);
  unsigned cases = 0;
  for (uint32_t s = 0; s < n_sub; s++) {
    uint32_t first = s * 4096u, m = n - first < 4096u ? n - first : 4096u, ref_n = 0;
    uint32_t entry = emu_ref_encode_lnd1(x, n, first, m, eb, ref_slot, ref_pos, ref_val, &ref_n);
    for (uint32_t k = 0; k < ref_n; k++) escaped[first + ref_pos[k]] = 1;
    if (emu_ref_decode_lnd1(ref_slot, entry, n, first, m, words + first, aux + 2u * s)) {
      FAIL("%s n=%u sub-chunk %u: the plain decode refuses the plain encode's stream", f->name, n, s);
      continue;
    }
    *raw += (entry & 0x80000000u) != 0;
    cases++;
    if (m < 4096u) continue; /* partial: the generic kernel's */
    unsigned warps = 1u << (emu_random() % 4u);
    wf_job j = {x, first, q, wf_slot, 0xdeadbeefu, 0, wf_pos, wf_val, NULL, NULL, -7};
    noise_shared();
    emu_run_block(32u * warps, wf_encode_thread, &j);
    uint32_t size = entry & 0x7fffffffu;
    if (j.entry != entry || memcmp(wf_slot, ref_slot, size) || j.ocount != ref_n ||
        memcmp(wf_pos + first, ref_pos, ref_n * 4u) || memcmp(wf_val + first, ref_val, ref_n * 4u)) {
      FAIL("%s n=%u sub-chunk %u (%u warps): warp-fused encode entry %#x, %u outliers; plain %#x, %u", f->name, n, s,
           warps, j.entry, j.ocount, entry, ref_n);
      continue;
    }
    wf_job d = {x, first, q, NULL, entry, 0, NULL, NULL, ref_slot, wf_words, -7};
    memset(wf_words, 0xa5, 4096u * 4u);
    noise_shared();
    emu_run_block(32u * warps, wf_decode_thread, &d);
    if (d.rc || memcmp(wf_words, words + first, 4096u * 4u) || aux[2u * s] != wf_words[4095])
      FAIL("%s n=%u sub-chunk %u (%u warps): warp-fused decode rc %d, words differ from h5fz_lnd_xscan's", f->name, n,
           s, warps, d.rc);
  }
  /* the chunk-wide end: carry by a block, x fix + quantizer decode by a block a sub-chunk */
  memcpy(aux_cpu, aux, 2u * (size_t)n_sub * 8u);
  h5fz_lnd_carry(aux_cpu, n_sub);
  carry_job cj = {aux, n_sub};
  emu_run_block(1024u, carry_thread, &cj);
  if (memcmp(aux, aux_cpu, 2u * (size_t)n_sub * 8u))
    FAIL("%s n=%u: block carry differs from h5fz_lnd_carry", f->name, n);
  size_t off = 0, wrong = 0;
  for (uint32_t s = 0; s < n_sub; s++) {
    uint32_t first = s * 4096u, m = n - first < 4096u ? n - first : 4096u;
    fix_job fj = {words + first, m, first, g, aux[2u * s], q};
    emu_run_block(256u, fix_thread, &fj);
  }
  const float *v = (const float *)(const void *)words;
  for (uint32_t i = 0; i < n; i++) {
    if (escaped[i]) continue;
    if (!(fabs((double)v[i] - (double)x[i]) <= eb)) {
      if (!wrong++) printf("  first: element %u: %.9g for %.9g (bound %g)\n", i, v[i], x[i], eb);
      off++;
    }
  }
  if (wrong) FAIL("%s n=%u: %zu values off after the 1-D decode", f->name, n, off);
  free(words);
  free(wf_words);
  free(ref_pos);
  free(ref_val);
  free(wf_pos);
  free(wf_val);
  free(aux);
  free(aux_cpu);
  free(escaped);
  return cases;
}

/* ---- y and z passes in segments ------------------------------------------- */

#define AXIS_CHECK(W, WORD, FLOAT)                                                                                     \
  static void check_axes_##W(const field *f, uint32_t n, double eb, uint32_t dim)                                      \
  {                                                                                                                    \
    const FLOAT *x = f->data;                                                                                          \
    h5fz_quant_params q = h5fz_quant_params_make(H5FZ_QMODE_ABS, eb,                                                   \
                                                 W == 64 ? 0x7ff8000000000000ull : (unsigned long long)emu_fill_bits); \
    h5fz_lnd_geom g = h5fz_lnd_geom_make(f->rank, f->dims, n, dim);                                                    \
    uint32_t ex, ey;                                                                                                   \
    h5fz_lnd_eff(&g, &ex, &ey);                                                                                        \
    uint64_t P = (uint64_t)ex * ey;                                                                                    \
    WORD *qw = malloc((size_t)n * sizeof(WORD)), *w = malloc((size_t)n * sizeof(WORD));                                \
    WORD *part = malloc(((size_t)h5fz_lnd_part_words(&g) + 1u) * sizeof(WORD));                                        \
    if (!qw || !w || !part) exit(2);                                                                                   \
    for (uint32_t i = 0; i < n; i++) qw[i] = h5fz_quant_word_##W(x[i], &q);                                            \
    /* residuals by format.md's formula, then the x pass as plain prefix sums along each row */                        \
    for (uint32_t i = 0; i < n; i++) {                                                                                 \
      int a = i % ex > 0, b = i / ex % ey > 0, c = i >= P;                                                             \
      WORD r = 0;                                                                                                      \
      for (int dz = 0; dz <= c; dz++)                                                                                  \
        for (int dy = 0; dy <= b; dy++)                                                                                \
          for (int dx = 0; dx <= a; dx++) {                                                                            \
            WORD v = qw[i - dx - (uint64_t)dy * ex - (uint64_t)dz * P];                                                \
            r = (dx + dy + dz) % 2 ? (WORD)(r - v) : (WORD)(r + v);                                                    \
          }                                                                                                            \
      w[i] = r;                                                                                                        \
    }                                                                                                                  \
    for (uint32_t i = 1; i < n; i++)                                                                                   \
      if (i % ex) w[i] = (WORD)(w[i] + w[i - 1u]);                                                                     \
    h5fz_lnd_axis ax[2];                                                                                               \
    int has[2] = {h5fz_lnd_axis_make(&g, 0, &ax[0]), h5fz_lnd_axis_make(&g, 1, &ax[1])};                               \
    int last_pass = has[1] ? 1 : has[0] ? 0 : -1;                                                                      \
    for (int z = 0; z < 2; z++) {                                                                                      \
      if (!has[z]) continue;                                                                                           \
      h5fz_lnd_axis a = ax[z];                                                                                         \
      uint64_t segs = h5fz_lnd_axis_segments(&a);                                                                      \
      /* each a thread of its own kernel: any order within a step */                                                   \
      if (a.nseg > 1u)                                                                                                 \
        for (uint64_t t = segs; t-- > 0;) h5fz_lnd_asum_##W(w, a, t, part);                                            \
      for (uint64_t t = segs; t-- > 0;)                                                                                \
        h5fz_lnd_ascan_##W(w, a, t, a.nseg > 1u ? part : NULL, z == last_pass ? &q : NULL);                            \
    }                                                                                                                  \
    size_t bad = 0;                                                                                                    \
    const FLOAT *v = (const FLOAT *)(const void *)w;                                                                   \
    for (uint32_t i = 0; i < n; i++) {                                                                                 \
      if (last_pass < 0)                                                                                               \
        bad += w[i] != qw[i];                                                                                          \
      else                                                                                                             \
        bad += memcmp(&v[i], &(FLOAT){h5fz_quant_value_##W(qw[i], &q)}, sizeof(FLOAT)) != 0;                           \
    }                                                                                                                  \
    if (bad)                                                                                                           \
      FAIL("%s n=%zu of %zu, D=%u (x %u, y %u; segments of %u and %u): %zu values not restored by the y/z passes",     \
           f->name, (size_t)n, f->n, dim, ex, ey, has[0] ? ax[0].R : 0u, has[1] ? ax[1].R : 0u, bad);                  \
    free(qw);                                                                                                          \
    free(w);                                                                                                           \
    free(part);                                                                                                        \
  }
AXIS_CHECK(32, uint32_t, float)
AXIS_CHECK(64, uint64_t, double)

int main(int argc, char **argv)
{
  /* the real fields, else (a fresh clone, CI) the embedded one of tests/data (argv[2]) */
  field fields[32];
  int nf = 0;
  const char *dir = NULL;
  for (int a = 1; a < 3 && !nf; a++) {
    dir = argc > a ? argv[a] : a == 1 ? "../shared/data" : NULL;
    DIR *d = dir ? opendir(dir) : NULL;
    if (!d) continue;
    struct dirent *e;
    while ((e = readdir(d)) && nf < 32)
      if (load_field(dir, e->d_name, &fields[nf])) nf++;
    closedir(d);
  }
  if (!nf) {
    printf("SKIP: no fields in %s or %s\n", argc > 1 ? argv[1] : "../shared/data", argc > 2 ? argv[2] : "(none)");
    return 77;
  }
  printf("fields from %s: %d\n", dir, nf);
  unsigned cases = 0, raw = 0;
  /* carry: sub-chunk counts around the block size, every pattern */
  static const uint32_t subs[] = {1, 2, 31, 1000, 1023, 1024, 1025, 4097, 65536};
  static const unsigned threads[] = {32, 256, 1024};
  for (size_t k = 0; k < sizeof subs / sizeof *subs; k++)
    for (unsigned pattern = 0; pattern < 4u; pattern++) check_carry(subs[k], pattern, threads[(k + pattern) % 3u]);
  printf("carry: %zu cases\n", 4 * sizeof subs / sizeof *subs);
  for (int i = 0; i < nf; i++) {
    const field *f = &fields[i];
    double eb = 1e-4 * f->range;
    /* the fill value: the canonical NaN (fields with NaN keep it escaping) */
    emu_fill_bits = 0x7fc00000u;
    uint32_t n = (uint32_t)f->n, edge = n > 5000u ? n - 1234u : n; /* an edge chunk: a partial last plane */
    check_cost(f, n, eb, H5FZ_LND_COST_THREADS); /* the GPU's block: one round a part */
    check_cost(f, edge, eb, 128u);             /* several rounds a part */
    for (uint32_t dim = 1; dim <= h5fz_lnd_max_dim(f->rank); dim++) {
      if (f->f64) {
        check_axes_64(f, n, eb, dim);
        check_axes_64(f, edge, eb, dim);
      } else {
        check_axes_32(f, n, eb, dim);
        check_axes_32(f, edge, eb, dim);
      }
    }
    if (!f->f64) {
      /* the 1-D path on the first 5.3 sub-chunks (a partial one) and on a chunk of 2 full ones */
      uint32_t n1 = n < 21800u ? n : 21800u;
      cases += check_1d_chunk(f, n1, eb, &raw);
      if (n >= 8192u) cases += check_1d_chunk(f, 8192u, 1e-2 * f->range, &raw);
    }
    printf("%s: done (%d failures so far)\n", f->name, failures);
    free(fields[i].data);
  }
  return emu_summary(cases, raw, 0, failures);
}
