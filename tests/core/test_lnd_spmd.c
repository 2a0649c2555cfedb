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
 * Inf and outliers. And lorenzo_interp's fourth predictor, the
 * interpolation (op_lnd_interp.h), against a reference written from
 * format.md section 5.9 in the same ways.
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
    uint64_t k_lo, k_hi, T, cost[H5FZ_LND_NCOST], *aux, carry;                                                        \
    uint32_t *hist;                                                                                                    \
  } ctx_##W;                                                                                                           \
  static void enc_##W(const h5fz_blk *b, void *v)                                                                      \
  {                                                                                                                    \
    ctx_##W *c = v;                                                                                                    \
    h5fz_lnd_encode_##W(b, c->qloc, c->out, c->m, c->m_pad, c->in, NULL, c->first, c->g, c->p);                        \
  }                                                                                                                    \
  static void cost_##W(const h5fz_blk *b, void *v)                                                                     \
  {                                                                                                                    \
    ctx_##W *c = v;                                                                                                    \
    uint64_t cost[H5FZ_LND_NCOST];                                                                                     \
    h5fz_lnd_cost_##W(b, c->in, NULL, c->g, c->p, c->k_lo, c->k_hi, c->T, c->hist, cost);                              \
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
      ctx_##W c = {in, q + first, spmd + first, NULL, NULL, m, m_pad, first, g, &p, 0, 0, 0, {0, 0, 0, 0}, NULL, 0, NULL};\
      run_block(lc->nthreads, enc_##W, &c);                                                                            \
    }                                                                                                                  \
    size_t bad = 0;                                                                                                    \
    for (uint32_t i = 0; i < n; i++) bad += fast[i] != r[i] || spmd[i] != r[i];                                        \
    for (size_t i = n; i < padded && i < ((size_t)n + 63u) / 64u * 64u; i++) bad += fast[i] != 0 || spmd[i] != 0;      \
    CHECK(bad == 0, "%s: %zu residuals differ from format.md's", case_text(lc, W == 64), bad);                         \
    /* the cost pass: 16 parts of a block each (the GPU) = one part of one thread (the CPU); the entropy cost of  \
     * the huff coders part by part (it is not additive over parts: every executor splits the same way) */             \
    {                                                                                                                  \
      uint64_t k_lo, k_hi, T, whole[H5FZ_LND_NCOST], parts[H5FZ_LND_NCOST * H5FZ_LND_COST_PARTS];                      \
      uint64_t fparts[H5FZ_LND_NCOST * H5FZ_LND_COST_PARTS];                                                           \
      uint32_t hist[H5FZ_LND_NCOST * H5FZ_LND_CLASSES];                                                                \
      h5fz_lnd_geom gm = g;                                                                                            \
      gm.dim = h5fz_lnd_max_dim(lc->rank);                                                                             \
      gm.interp = 1u; /* lorenzo_interp's: the interpolation's cost as well */                                         \
      gm.entropy = (uint32_t)(rnd() % 2u);                                                                             \
      h5fz_lnd_sample(n, 0, 1, &k_lo, &k_hi, &T);                                                                      \
      h5fz_lnd_cost_##W(&one, in, q, gm, &p, k_lo, k_hi, T, hist, whole);                                              \
      uint64_t fastc[H5FZ_LND_NCOST];                                                                                  \
      h5fz_fast_lnd_cost_##W(q, gm, k_lo, k_hi, T, fastc);                                                             \
      CHECK(!memcmp(fastc, whole, sizeof fastc), "%s entropy %u: CPU cost pass %llu %llu %llu %llu != %llu %llu %llu %llu", \
            case_text(lc, W == 64), gm.entropy, (unsigned long long)fastc[0], (unsigned long long)fastc[1],            \
            (unsigned long long)fastc[2], (unsigned long long)fastc[3], (unsigned long long)whole[0],                  \
            (unsigned long long)whole[1], (unsigned long long)whole[2], (unsigned long long)whole[3]);                 \
      for (uint32_t part = 0; part < H5FZ_LND_COST_PARTS; part++) {                                                    \
        ctx_##W c = {in, NULL, NULL, NULL, NULL, 0, 0, 0, gm, &p, 0, 0, 0, {0, 0, 0, 0}, NULL, 0, hist};               \
        h5fz_lnd_sample(n, part, H5FZ_LND_COST_PARTS, &c.k_lo, &c.k_hi, &c.T);                                         \
        run_block(lc->nthreads, cost_##W, &c);                                                                         \
        memcpy(parts + H5FZ_LND_NCOST * part, c.cost, sizeof c.cost);                                                  \
        h5fz_fast_lnd_cost_##W(q, gm, c.k_lo, c.k_hi, c.T, fparts + H5FZ_LND_NCOST * part);                            \
      }                                                                                                                \
      CHECK(!memcmp(parts, fparts, sizeof parts), "%s entropy %u: the CPU's cost parts differ from the SPMD blocks'",   \
            case_text(lc, W == 64), gm.entropy);                                                                       \
      for (uint32_t d = 0; d < H5FZ_LND_NCOST && !gm.entropy; d++) {                                                   \
        uint64_t sum = 0;                                                                                              \
        for (uint32_t part = 0; part < H5FZ_LND_COST_PARTS; part++) sum += parts[H5FZ_LND_NCOST * part + d];           \
        CHECK(sum == whole[d], "%s: cost of D=%u: parts sum to %llu, whole %llu", case_text(lc, W == 64), d + 1u,      \
              (unsigned long long)sum, (unsigned long long)whole[d]);                                                  \
      }                                                                                                                \
    }                                                                                                                  \
    /* decode as the GPU: x inside each sub-chunk (a block), carry, x fix (a block), y and z one line each */          \
    for (uint32_t s = 0; s < n_sub; s++) {                                                                             \
      uint32_t first = s * sub, m = n - first < sub ? n - first : sub, m_pad = (m + 63u) & ~63u;                       \
      memcpy(buf, spmd + first, m_pad * sizeof(WORD));                                                                 \
      for (uint32_t i = m; i < m_pad; i++) buf[i] = (WORD)rnd(); /* padding words are not the decoder's concern */     \
      ctx_##W c = {in, NULL, NULL, buf, scratch, m, m_pad, first, g, &p, 0, 0, 0, {0, 0, 0, 0}, aux + 2u * s, 0, NULL};\
      run_block(lc->nthreads, xscan_##W, &c);                                                                          \
      memcpy(words + first, buf, m * sizeof(WORD));                                                                    \
    }                                                                                                                  \
    h5fz_lnd_carry(aux, n_sub);                                                                                        \
    for (uint32_t s = 0; s < n_sub; s++) {                                                                             \
      uint32_t first = s * sub, m = n - first < sub ? n - first : sub;                                                 \
      ctx_##W c = {in, NULL, NULL, words + first, NULL, m, 0, first, g, &p, 0, 0, 0, {0, 0, 0, 0}, NULL, aux[2u * s], NULL};\
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

/* ---- lorenzo_interp's interpolation (predictor 4), per word width --------- */

/* floor((a + b + 1) / 2) of the words read as signed, in exact arithmetic,
 * then wrapped to the word (docs/format.md 5.9's mean, written out). */
static uint64_t ref_mean(uint64_t a, uint64_t b, int bits)
{
  __int128 sa = bits == 32 ? (__int128)(int32_t)(uint32_t)a : (__int128)(int64_t)a;
  __int128 sb = bits == 32 ? (__int128)(int32_t)(uint32_t)b : (__int128)(int64_t)b;
  __int128 sum = sa + sb + 1, m = sum >= 0 ? sum / 2 : -((-sum + 1) / 2);
  uint64_t u = (uint64_t)m;
  return bits == 32 ? (uint32_t)u : u;
}

#define LNI_TEST(W, WORD, FLOAT)                                                                                       \
  typedef struct {                                                                                                     \
    const FLOAT *in;                                                                                                   \
    const WORD *qloc;                                                                                                  \
    WORD *out;                                                                                                         \
    uint32_t m, m_pad;                                                                                                 \
    unsigned long long first;                                                                                          \
    h5fz_lnd_geom g;                                                                                                   \
    const h5fz_quant_params *p;                                                                                        \
  } ictx_##W;                                                                                                          \
  static void ienc_##W(const h5fz_blk *b, void *v)                                                                     \
  {                                                                                                                    \
    ictx_##W *c = v;                                                                                                   \
    h5fz_lnd_encode_##W(b, c->qloc, c->out, c->m, c->m_pad, c->in, NULL, c->first, c->g, c->p);                        \
  }                                                                                                                    \
  /* The residuals of docs/format.md 5.9 from its words: stride after stride, axis after axis, every element of  \
   * the box tested for membership of the pass by its coordinates. Returns the elements assigned. */                  \
  static uint64_t ref_interp_##W(const WORD *q, WORD *r, uint32_t n, uint32_t X, uint32_t Y)                           \
  {                                                                                                                    \
    uint32_t Z = (n + X * Y - 1u) / (X * Y), E = X > Y ? X : Y, top = 0;                                               \
    if (Z > E) E = Z;                                                                                                  \
    if (E > 1u)                                                                                                        \
      for (top = 1; 2u * top < E;) top *= 2u;                                                                          \
    uint64_t done = 0;                                                                                                 \
    if (n) r[0] = q[0], done = 1;                                                                                      \
    for (uint32_t s = top; s >= 1u; s /= 2u)                                                                           \
      for (int a = 0; a < 3; a++)                                                                                      \
        for (uint32_t z = 0; z < Z; z++)                                                                               \
          for (uint32_t y = 0; y < Y; y++)                                                                             \
            for (uint32_t x = 0; x < X; x++) {                                                                         \
              uint32_t c[3] = {z, y, x}, ext[3] = {Z, Y, X};                                                           \
              uint64_t stride[3] = {(uint64_t)X * Y, X, 1}, j = ((uint64_t)z * Y + y) * X + x;                         \
              int ok = c[a] % (2u * s) == s && j < n;                                                                  \
              for (int e = 0; e < 3; e++)                                                                              \
                if (e != a) ok = ok && c[e] % (e < a ? s : 2u * s) == 0;                                               \
              if (!ok) continue;                                                                                       \
              uint64_t ja = j - s * stride[a], jb = j + s * stride[a];                                                 \
              WORD pred = c[a] + s < ext[a] && jb < n ? (WORD)ref_mean(q[ja], q[jb], W) : q[ja];                        \
              r[j] = (WORD)(q[j] - pred);                                                                              \
              done++;                                                                                                  \
            }                                                                                                          \
    return done;                                                                                                       \
  }                                                                                                                    \
  static void one_interp_##W(const lnd_case *lc)                                                                       \
  {                                                                                                                    \
    uint32_t n = lc->n, sub = lc->sub, n_sub = (n + sub - 1u) / sub;                                                   \
    size_t padded = (size_t)n_sub * sub;                                                                               \
    FLOAT *in = malloc(padded * sizeof(FLOAT));                                                                        \
    WORD *q = calloc(padded, sizeof(WORD)), *r = calloc(padded, sizeof(WORD)), *fast = calloc(padded, sizeof(WORD));   \
    WORD *spmd = calloc(padded, sizeof(WORD)), *words = calloc(padded, sizeof(WORD));                                  \
    WORD *buf = calloc(sub, sizeof(WORD)), *scratch = calloc(sub, sizeof(WORD));                                       \
    double phase = (double)(rnd() % 1000u);                                                                            \
    for (uint32_t i = 0; i < n; i++) {                                                                                 \
      double x = 100.0 + 10.0 * sin(i * 0.013 + phase) + 3.0 * cos(i * 0.0007) + 1e-3 * (double)(rnd() % 1000u);       \
      uint64_t k = rnd() % 200u;                                                                                       \
      in[i] = k == 0 ? (FLOAT)NAN : k == 1 ? (FLOAT)INFINITY : k == 2 ? (FLOAT)1e30 : k == 3 ? (FLOAT)-0.0 : (FLOAT)x; \
    }                                                                                                                  \
    h5fz_quant_params p = h5fz_quant_params_make((int)lc->mode, lc->mode == H5FZ_QMODE_PW_REL ? 1e-3 : 1e-2,           \
                                                 sizeof(WORD) == 4 ? 0x7fc00000u : 0x7ff8000000000000ull);             \
    for (uint32_t i = 0; i < n; i++) q[i] = h5fz_quant_word_##W(in[i], &p);                                            \
    h5fz_lnd_geom g = h5fz_lnd_geom_make(lc->rank, lc->dims, n, H5FZ_LNI_PREDICTOR);                                   \
    uint64_t done = ref_interp_##W(q, r, n, g.x, g.y);                                                                 \
    CHECK(done == n, "%s: the passes of format.md 5.9 reach %llu of %u elements", case_text(lc, W == 64),              \
          (unsigned long long)done, n);                                                                                \
    const h5fz_blk one = {0, 1, NULL};                                                                                 \
    for (uint32_t s = 0; s < n_sub; s++) {                                                                             \
      uint32_t first = s * sub, m = n - first < sub ? n - first : sub, m_pad = (m + 63u) & ~63u;                       \
      h5fz_fast_lnd_encode_##W(q, fast + first, first, m, m_pad, g);                                                   \
      /* one residual at a time, the sub-chunk's bins only below a random bound (the one-slot encode's top-down \
       * passes have overwritten those above it), the rest quantized again */                                          \
      uint32_t valid = (uint32_t)(rnd() % (m + 1u)), at_bad = 0;                                                       \
      for (uint32_t i = 0; i < m; i++) at_bad += h5fz_lni_resid_##W(q + first, first, valid, in, NULL, &p, &g, first + i) != r[first + i]; \
      CHECK(at_bad == 0, "%s: s=%u valid=%u h5fz_lni_resid differs from format.md's at %u words",                  \
            case_text(lc, W == 64), s, valid, at_bad);                                                                 \
      ictx_##W c = {in, q + first, spmd + first, m, m_pad, first, g, &p};                                              \
      run_block(lc->nthreads, ienc_##W, &c);                                                                           \
      /* the decode's part inside a sub-chunk leaves the residuals as they are */                                      \
      uint64_t aux[2] = {7, 7};                                                                                        \
      memcpy(buf, r + first, m * sizeof(WORD));                                                                        \
      h5fz_lnd_xscan_##W(&one, buf, scratch, m, m_pad, first, g, aux);                                                 \
      CHECK(!memcmp(buf, r + first, m * sizeof(WORD)) && !aux[0] && !aux[1], "%s: s=%u x scan touched interpolation", \
            case_text(lc, W == 64), s);                                                                                \
      h5fz_fast_lnd_xscan_##W(buf, m, first, g, aux);                                                                  \
      CHECK(!memcmp(buf, r + first, m * sizeof(WORD)), "%s: s=%u CPU x scan touched interpolation",                  \
            case_text(lc, W == 64), s);                                                                                \
    }                                                                                                                  \
    size_t bad = 0;                                                                                                    \
    for (uint32_t i = 0; i < n; i++) bad += fast[i] != r[i] || spmd[i] != r[i];                                        \
    for (size_t i = n; i < padded && i < ((size_t)n + 63u) / 64u * 64u; i++) bad += fast[i] != 0 || spmd[i] != 0;      \
    CHECK(bad == 0, "%s: %zu interpolation residuals differ from format.md's", case_text(lc, W == 64), bad);           \
    /* decode as the CPU (every pass in order) */                                                                      \
    memcpy(words, r, n * sizeof(WORD));                                                                                \
    h5fz_lni_decode_##W(words, &g);                                                                                    \
    bad = 0;                                                                                                           \
    for (uint32_t i = 0; i < n; i++) bad += words[i] != q[i];                                                          \
    CHECK(bad == 0, "%s: %zu words not restored by the interpolation decode", case_text(lc, W == 64), bad);            \
    /* and as the GPU: a pass's points in any order (here from the last to the first, in random pieces) */             \
    memcpy(words, r, n * sizeof(WORD));                                                                                \
    for (uint32_t s = h5fz_lni_top_stride(&g); s >= 1u; s /= 2u)                                                       \
      for (uint32_t a = 0; a < 3u; a++) {                                                                              \
        h5fz_lni_lattice l;                                                                                            \
        uint32_t cnt = (uint32_t)h5fz_lni_lattice_make(&g, s, a, &l), hi = cnt;                                        \
        while (hi) {                                                                                                   \
          uint32_t len = 1u + (uint32_t)(rnd() % 37u), lo = hi > len ? hi - len : 0;                                   \
          h5fz_lni_pass_##W(words, &g, &l, lo, hi);                                                                    \
          hi = lo;                                                                                                     \
        }                                                                                                              \
      }                                                                                                                \
    bad = 0;                                                                                                           \
    for (uint32_t i = 0; i < n; i++) bad += words[i] != q[i];                                                          \
    CHECK(bad == 0, "%s: %zu words not restored by the GPU-style interpolation decode", case_text(lc, W == 64), bad);  \
    free(in);                                                                                                          \
    free(q);                                                                                                           \
    free(r);                                                                                                           \
    free(fast);                                                                                                        \
    free(spmd);                                                                                                        \
    free(words);                                                                                                       \
    free(buf);                                                                                                         \
    free(scratch);                                                                                                     \
  }

LNI_TEST(32, uint32_t, float)
LNI_TEST(64, uint64_t, double)

/* The mean of two words against the written-out formula, extremes included. */
static void check_mean(void)
{
  static const uint64_t edge[] = {0, 1, 2, 3, 0x7fffffffu, 0x80000000u, 0x80000001u, 0xfffffffeu, 0xffffffffu,
                                  0x7fffffffffffffffull, 0x8000000000000000ull, 0xffffffffffffffffull};
  for (int k = 0; k < 20000; k++) {
    uint64_t a = k < 144 ? edge[k % 12] : rnd(), b = k < 144 ? edge[k / 12] : rnd();
    if (k >= 144 && k % 3 == 0) b = a + (rnd() % 9u) - 4u; /* near each other, as neighbouring bins are */
    uint32_t a32 = (uint32_t)a, b32 = (uint32_t)b;
    CHECK(h5fz_lni_mean_32(a32, b32) == (uint32_t)ref_mean(a32, b32, 32), "mean of 32-bit words %08x %08x", a32, b32);
    CHECK(h5fz_lni_mean_64(a, b) == ref_mean(a, b, 64), "mean of 64-bit words %016llx %016llx", (unsigned long long)a,
          (unsigned long long)b);
  }
}

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
    c.dim = H5FZ_LNI_PREDICTOR; /* lorenzo_interp's interpolation on the same geometry */
    if (wide)
      one_interp_64(&c);
    else
      one_interp_32(&c);
    n_cases++;
  }
  /* a 3-D chunk several sub-chunks deep, planes larger than a sub-chunk */
  lnd_case big = {70000, 4096, 3, {7, 100, 100, 0}, 3, 32, H5FZ_QMODE_ABS};
  one_case_32(&big);
  big.sub = 2048;
  big.dims[1] = 51;
  big.dims[2] = 97;
  big.n = 7u * 51u * 97u;
  one_case_64(&big);
  big.dim = H5FZ_LNI_PREDICTOR;
  one_interp_64(&big);
  big.n = 70000;
  big.sub = 4096;
  big.dims[1] = big.dims[2] = 100;
  one_interp_32(&big);
  n_cases += 4;
  check_mean();
  /* the entropy cost's integer log2 against the C library's, within its 16 fraction bits */
  for (int k = 0; k < 20000; k++) {
    uint64_t x = k < 64 ? 1ull << k : k < 2000 ? (uint64_t)k : rnd() >> (rnd() % 64u);
    if (!x) x = 1;
    double want = log2((double)x), got = (double)h5fz_log2_q16(x) / 65536.0;
    CHECK(got <= want + 1e-12 && want - got < 2.0 / 65536.0, "log2_q16(%llu) = %.6f, log2 %.6f", (unsigned long long)x,
          got, want);
  }
  if (failures)
    fprintf(stderr, "%d of %ld checks failed\n", failures, checks);
  else
    printf("lorenzo_nd / lorenzo_interp SPMD: %d cases, %ld checks passed\n", n_cases, checks);
  return failures ? 1 : 0;
}
