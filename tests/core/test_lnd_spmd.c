/*
 * test_lnd_spmd.c - lorenzo_nd (device_ops/op_lorenzo_nd.h) against a
 * reference written from docs/format.md section 5.3, with the ops run as
 * the GPU runs them: blocks of several threads (pthreads meeting at a
 * barrier, H5FZ_TEST_BLOCK_THREADS in h5fz_dev.h), neighbours in earlier
 * sub-chunks quantized again, the cost pass split in parts, the inverse
 * along y and z one line per thread, and one residual at a time
 * (h5fz_lnd_resid_at, the GPU's one-slot encode). Also the CPU executor's row-by-row
 * encode and cost pass (device_ops/op_lorenzo_nd_cpu.c). Random geometries (ranks 0..4, dims that do not
 * divide the sub-chunk, element counts that do not match the dims), all
 * three predictors, float32 and float64, the three quantizer forms, NaN,
 * Inf and outliers.
 */
#define H5FZ_TEST_BLOCK_THREADS 64
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../device_ops/h5fz_ops.h"
#include "core_block.h"
#include "op_lorenzo_nd_cpu.h"

#define CORE_RNG_SEED 0x6a09e667f3bcc909ull
#define CORE_MAX_PRINTED 20
#include "core_check.h"

/* ---- one case, per word width --------------------------------------------- */

typedef struct {
  uint32_t n, sub, rank, dims[4], dim, nthreads, mode;
} lnd_case;

static const char *case_text(const lnd_case *c, int wide)
{
  static char buf[200];
  snprintf(buf, sizeof buf, "f%d n=%u sub=%u rank=%u dims=%ux%ux%ux%u D=%u threads=%u mode=%u", wide ? 64 : 32, c->n,
           c->sub, c->rank, c->dims[0], c->dims[1], c->dims[2], c->dims[3], c->dim, c->nthreads, c->mode);
  return buf;
}

#define LND_TEST(W, WORD, FLOAT)                                                                                       \
  typedef struct {                                                                                                     \
    const FLOAT *in;                                                                                                   \
    const WORD *qloc;                                                                                                  \
    WORD *out, *w, *scratch;                                                                                           \
    uint32_t m, m_pad;                                                                                                 \
    unsigned long long first;                                                                                          \
    h5fz_lnd_geom g;                                                                                                   \
    const h5fz_quant_params *p;                                                                                        \
    uint64_t k_lo, k_hi, T, cost[3], *aux, carry;                                                                      \
  } ctx_##W;                                                                                                           \
  static void enc_##W(const h5fz_blk *b, void *v)                                                                      \
  {                                                                                                                    \
    ctx_##W *c = v;                                                                                                    \
    h5fz_lnd_encode_##W(b, c->qloc, c->out, c->m, c->m_pad, c->in, NULL, c->first, c->g, c->p);                        \
  }                                                                                                                    \
  static void cost_##W(const h5fz_blk *b, void *v)                                                                     \
  {                                                                                                                    \
    ctx_##W *c = v;                                                                                                    \
    uint64_t cost[3];                                                                                                  \
    h5fz_lnd_cost_##W(b, c->in, NULL, c->g, c->p, c->k_lo, c->k_hi, c->T, cost);                                       \
    if (b->tid == 0) memcpy(c->cost, cost, sizeof cost);                                                               \
  }                                                                                                                    \
  static void xscan_##W(const h5fz_blk *b, void *v)                                                                    \
  {                                                                                                                    \
    ctx_##W *c = v;                                                                                                    \
    h5fz_lnd_xscan_##W(b, c->w, c->scratch, c->m, c->m_pad, c->first, c->g, c->aux);                                   \
  }                                                                                                                    \
  static void xfix_##W(const h5fz_blk *b, void *v)                                                                     \
  {                                                                                                                    \
    ctx_##W *c = v;                                                                                                    \
    h5fz_lnd_xfix_##W(b, c->w, c->m, c->first, c->g, c->carry);                                                        \
  }                                                                                                                    \
  /* The residual of docs/format.md 5.3, written out: the 8 corners. */                                                \
  static WORD ref_resid_##W(const WORD *q, uint32_t gi, uint32_t ex, uint32_t ey)                                      \
  {                                                                                                                    \
    uint64_t P = (uint64_t)ex * ey;                                                                                    \
    int a = gi % ex > 0, bb = gi / ex % ey > 0, cc = gi >= P;                                                          \
    WORD r = 0;                                                                                                        \
    for (int dz = 0; dz <= cc; dz++)                                                                                   \
      for (int dy = 0; dy <= bb; dy++)                                                                                 \
        for (int dx = 0; dx <= a; dx++) {                                                                              \
          WORD v = q[gi - dx - (uint64_t)dy * ex - (uint64_t)dz * P];                                                  \
          r = (dx + dy + dz) % 2 ? (WORD)(r - v) : (WORD)(r + v);                                                      \
        }                                                                                                              \
    return r;                                                                                                          \
  }                                                                                                                    \
  static void one_case_##W(const lnd_case *lc)                                                                         \
  {                                                                                                                    \
    uint32_t n = lc->n, sub = lc->sub, n_sub = (n + sub - 1u) / sub;                                                   \
    size_t padded = (size_t)n_sub * sub;                                                                               \
    FLOAT *in = malloc(padded * sizeof(FLOAT));                                                                        \
    WORD *q = calloc(padded, sizeof(WORD)), *r = calloc(padded, sizeof(WORD)), *fast = calloc(padded, sizeof(WORD));   \
    WORD *spmd = calloc(padded, sizeof(WORD)), *words = calloc(padded, sizeof(WORD));                                  \
    WORD *buf = calloc(sub, sizeof(WORD)), *scratch = calloc(sub, sizeof(WORD));                                       \
    uint64_t *aux = calloc(2u * (size_t)n_sub + 2u, sizeof(uint64_t));                                                 \
    double phase = (double)(rnd() % 1000u);                                                                            \
    for (uint32_t i = 0; i < n; i++) {                                                                                 \
      double x = 100.0 + 10.0 * sin(i * 0.013 + phase) + 3.0 * cos(i * 0.0007) + 1e-3 * (double)(rnd() % 1000u);       \
      uint64_t k = rnd() % 200u;                                                                                       \
      in[i] = k == 0 ? (FLOAT)NAN : k == 1 ? (FLOAT)INFINITY : k == 2 ? (FLOAT)1e30 : k == 3 ? (FLOAT)-0.0 : (FLOAT)x; \
    }                                                                                                                  \
    h5fz_quant_params p = h5fz_quant_params_make((int)lc->mode, lc->mode == H5FZ_QMODE_PW_REL ? 1e-3 : 1e-2,           \
                                                 sizeof(WORD) == 4 ? 0x7fc00000u : 0x7ff8000000000000ull);             \
    for (uint32_t i = 0; i < n; i++) q[i] = h5fz_quant_word_##W(in[i], &p);                                            \
    h5fz_lnd_geom g = h5fz_lnd_geom_make(lc->rank, lc->dims, n, lc->dim);                                              \
    uint32_t ex, ey;                                                                                                   \
    h5fz_lnd_eff(&g, &ex, &ey);                                                                                        \
    for (uint32_t i = 0; i < n; i++) r[i] = ref_resid_##W(q, i, ex, ey);                                               \
    const h5fz_blk one = {0, 1, NULL};                                                                                 \
    for (uint32_t s = 0; s < n_sub; s++) {                                                                             \
      uint32_t first = s * sub, m = n - first < sub ? n - first : sub, m_pad = (m + 63u) & ~63u;                       \
      /* encode: the CPU executor's rows, the SPMD op from the chunk's words, and as the GPU runs it */                \
      h5fz_fast_lnd_encode_##W(q, fast + first, first, m, m_pad, g);                                                   \
      h5fz_lnd_encode_##W(&one, q + first, buf, m, m_pad, in, q, first, g, &p);                                        \
      CHECK(!memcmp(buf, fast + first, m_pad * sizeof(WORD)), "%s: s=%u SPMD (chunk words) != CPU rows",               \
            case_text(lc, W == 64), s);                                                                                \
      /* one residual at a time, as the GPU's one-slot encode computes them (neighbours quantized again) */           \
      uint32_t at_bad = 0;                                                                                             \
      for (uint32_t i = 0; i < m; i++) at_bad += h5fz_lnd_resid_at_##W(q + first, first, in, &p, g, i) != buf[i];      \
      CHECK(at_bad == 0, "%s: s=%u h5fz_lnd_resid_at differs from the encode at %u words", case_text(lc, W == 64), s,  \
            at_bad);                                                                                                   \
      ctx_##W c = {in, q + first, spmd + first, NULL, NULL, m, m_pad, first, g, &p, 0, 0, 0, {0, 0, 0}, NULL, 0};      \
      run_block(lc->nthreads, enc_##W, &c);                                                                            \
    }                                                                                                                  \
    size_t bad = 0;                                                                                                    \
    for (uint32_t i = 0; i < n; i++) bad += fast[i] != r[i] || spmd[i] != r[i];                                        \
    for (size_t i = n; i < padded && i < ((size_t)n + 63u) / 64u * 64u; i++) bad += fast[i] != 0 || spmd[i] != 0;      \
    CHECK(bad == 0, "%s: %zu residuals differ from format.md's", case_text(lc, W == 64), bad);                         \
    /* the cost pass: 16 parts of a block each (the GPU) = one part of one thread (the CPU) */                         \
    {                                                                                                                  \
      uint64_t k_lo, k_hi, T, whole[3], parts[3 * H5FZ_LND_COST_PARTS];                                                \
      h5fz_lnd_geom gm = g;                                                                                            \
      gm.dim = h5fz_lnd_max_dim(lc->rank);                                                                             \
      h5fz_lnd_sample(n, 0, 1, &k_lo, &k_hi, &T);                                                                      \
      h5fz_lnd_cost_##W(&one, in, q, gm, &p, k_lo, k_hi, T, whole);                                                    \
      uint64_t fastc[3];                                                                                               \
      h5fz_fast_lnd_cost_##W(q, gm, k_lo, k_hi, T, fastc);                                                             \
      CHECK(!memcmp(fastc, whole, sizeof fastc), "%s: CPU cost pass %llu %llu %llu != %llu %llu %llu",                 \
            case_text(lc, W == 64), (unsigned long long)fastc[0], (unsigned long long)fastc[1],                        \
            (unsigned long long)fastc[2], (unsigned long long)whole[0], (unsigned long long)whole[1],                  \
            (unsigned long long)whole[2]);                                                                             \
      for (uint32_t part = 0; part < H5FZ_LND_COST_PARTS; part++) {                                                    \
        ctx_##W c = {in, NULL, NULL, NULL, NULL, 0, 0, 0, gm, &p, 0, 0, 0, {0, 0, 0}, NULL, 0};                        \
        h5fz_lnd_sample(n, part, H5FZ_LND_COST_PARTS, &c.k_lo, &c.k_hi, &c.T);                                         \
        run_block(lc->nthreads, cost_##W, &c);                                                                         \
        memcpy(parts + 3u * part, c.cost, sizeof c.cost);                                                              \
      }                                                                                                                \
      CHECK(h5fz_lnd_choose(whole, 1, gm.dim) == h5fz_lnd_choose(parts, H5FZ_LND_COST_PARTS, gm.dim),                  \
            "%s: the GPU's cost parts choose another predictor", case_text(lc, W == 64));                              \
      for (uint32_t d = 0; d < 3u; d++) {                                                                              \
        uint64_t sum = 0;                                                                                              \
        for (uint32_t part = 0; part < H5FZ_LND_COST_PARTS; part++) sum += parts[3u * part + d];                       \
        CHECK(sum == whole[d], "%s: cost of D=%u: parts sum to %llu, whole %llu", case_text(lc, W == 64), d + 1u,      \
              (unsigned long long)sum, (unsigned long long)whole[d]);                                                  \
      }                                                                                                                \
    }                                                                                                                  \
    /* decode as the GPU: x inside each sub-chunk (a block), carry, x fix (a block), y and z one line each */          \
    for (uint32_t s = 0; s < n_sub; s++) {                                                                             \
      uint32_t first = s * sub, m = n - first < sub ? n - first : sub, m_pad = (m + 63u) & ~63u;                       \
      memcpy(buf, spmd + first, m_pad * sizeof(WORD));                                                                 \
      for (uint32_t i = m; i < m_pad; i++) buf[i] = (WORD)rnd(); /* padding words are not the decoder's concern */     \
      ctx_##W c = {in, NULL, NULL, buf, scratch, m, m_pad, first, g, &p, 0, 0, 0, {0, 0, 0}, aux + 2u * s, 0};         \
      run_block(lc->nthreads, xscan_##W, &c);                                                                          \
      memcpy(words + first, buf, m * sizeof(WORD));                                                                    \
    }                                                                                                                  \
    h5fz_lnd_carry(aux, n_sub);                                                                                        \
    for (uint32_t s = 0; s < n_sub; s++) {                                                                             \
      uint32_t first = s * sub, m = n - first < sub ? n - first : sub;                                                 \
      ctx_##W c = {in, NULL, NULL, words + first, NULL, m, 0, first, g, &p, 0, 0, 0, {0, 0, 0}, NULL, aux[2u * s]};    \
      run_block(lc->nthreads, xfix_##W, &c);                                                                           \
    }                                                                                                                  \
    uint32_t yl = h5fz_lnd_ylines(&g), zl = h5fz_lnd_zlines(&g);                                                       \
    for (uint32_t line = 0; line < yl; line++) h5fz_lnd_yscan_##W(words, g, line / ex, line % ex, line % ex + 1u);     \
    for (uint32_t line = 0; line < zl; line++) h5fz_lnd_zscan_##W(words, g, line, line + 1u);                          \
    bad = 0;                                                                                                           \
    for (uint32_t i = 0; i < n; i++) bad += words[i] != q[i];                                                          \
    CHECK(bad == 0, "%s: %zu words not restored by the GPU-style decode", case_text(lc, W == 64), bad);                \
    /* and as the CPU: whole rows and planes */                                                                        \
    memset(aux, 0, (2u * (size_t)n_sub + 2u) * sizeof(uint64_t));                                                      \
    for (uint32_t s = 0; s < n_sub; s++) {                                                                             \
      uint32_t first = s * sub, m = n - first < sub ? n - first : sub, m_pad = (m + 63u) & ~63u;                       \
      memcpy(buf, r + first, m * sizeof(WORD));                                                                        \
      memset(buf + m, 0, (m_pad - m) * sizeof(WORD));                                                                  \
      h5fz_lnd_xscan_##W(&one, buf, scratch, m, m_pad, first, g, aux + 2u * s);                                        \
      uint64_t faux[2] = {0, 0};                                                                                       \
      memcpy(scratch, r + first, m * sizeof(WORD));                                                                    \
      h5fz_fast_lnd_xscan_##W(scratch, m, first, g, faux);                                                             \
      CHECK(!memcmp(scratch, buf, m * sizeof(WORD)) && faux[0] == aux[2u * s] && faux[1] == aux[2u * s + 1u],          \
            "%s: s=%u CPU x scan differs", case_text(lc, W == 64), s);                                                 \
      memcpy(words + first, buf, m * sizeof(WORD));                                                                    \
    }                                                                                                                  \
    h5fz_lnd_carry(aux, n_sub);                                                                                        \
    for (uint32_t s = 0; s < n_sub; s++) {                                                                             \
      uint32_t first = s * sub, m = n - first < sub ? n - first : sub;                                                 \
      h5fz_lnd_xfix_##W(&one, words + first, m, first, g, aux[2u * s]);                                                \
    }                                                                                                                  \
    for (uint32_t z = 0; yl && z < yl / ex; z++) h5fz_lnd_yscan_##W(words, g, z, 0, ex);                               \
    if (zl) h5fz_lnd_zscan_##W(words, g, 0, zl);                                                                       \
    bad = 0;                                                                                                           \
    for (uint32_t i = 0; i < n; i++) bad += words[i] != q[i];                                                          \
    CHECK(bad == 0, "%s: %zu words not restored by the CPU-style decode", case_text(lc, W == 64), bad);                \
    free(in);                                                                                                          \
    free(q);                                                                                                           \
    free(r);                                                                                                           \
    free(fast);                                                                                                        \
    free(spmd);                                                                                                        \
    free(words);                                                                                                       \
    free(buf);                                                                                                         \
    free(scratch);                                                                                                     \
    free(aux);                                                                                                         \
  }

LND_TEST(32, uint32_t, float)
LND_TEST(64, uint64_t, double)

static uint32_t pick(const uint32_t *v, size_t k) { return v[rnd() % k]; }

int main(void)
{
  static const uint32_t subs32[] = {128, 256, 4096}, subs64[] = {64, 128, 2048};
  static const uint32_t threads[] = {1, 2, 7, 32};
  static const uint32_t small_dims[] = {1, 2, 3, 5, 7, 13, 31, 64, 100};
  int n_cases = 0;
  for (int iter = 0; iter < 90; iter++) {
    lnd_case c;
    memset(&c, 0, sizeof c);
    int wide = iter % 2;
    c.sub = wide ? pick(subs64, 3) : pick(subs32, 3);
    c.nthreads = pick(threads, 4);
    c.mode = (uint32_t)(iter / 2 % 3 == 0   ? H5FZ_QMODE_ABS
                        : iter / 2 % 3 == 1 ? H5FZ_QMODE_PW_REL
                                            : H5FZ_QMODE_LOSSLESS);
    c.rank = (uint32_t)(rnd() % 5u);
    uint64_t prod = 1;
    for (uint32_t i = 0; i < c.rank; i++) {
      c.dims[i] = pick(small_dims, 9);
      prod *= c.dims[i];
    }
    /* the element count: the dims' product, or (as a corrupt header or a
     * chunk cut from a bigger field might say) something else */
    c.n = rnd() % 4u ? (uint32_t)prod : 1u + (uint32_t)(rnd() % 20000u);
    if (c.n > 40000u) c.n = 1u + (uint32_t)(rnd() % 40000u);
    if (iter == 0) c.n = 1; /* one element */
    for (c.dim = 1; c.dim <= h5fz_lnd_max_dim(c.rank); c.dim++) {
      if (wide)
        one_case_64(&c);
      else
        one_case_32(&c);
      n_cases++;
    }
  }
  /* a 3-D chunk several sub-chunks deep, planes larger than a sub-chunk */
  lnd_case big = {70000, 4096, 3, {7, 100, 100, 0}, 3, 32, H5FZ_QMODE_ABS};
  one_case_32(&big);
  big.sub = 2048;
  big.dims[1] = 51;
  big.dims[2] = 97;
  big.n = 7u * 51u * 97u;
  one_case_64(&big);
  n_cases += 2;
  if (failures)
    fprintf(stderr, "%d of %ld checks failed\n", failures, checks);
  else
    printf("lorenzo_nd SPMD: %d cases, %ld checks passed\n", n_cases, checks);
  return failures ? 1 : 0;
}
