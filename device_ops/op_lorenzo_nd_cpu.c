/*
 * op_lorenzo_nd_cpu.c - the CPU fast forms of lorenzo_nd's per-sub-chunk
 * steps (twin of op_lorenzo_nd.h; see op_lorenzo_nd_cpu.h): the encode,
 * the cost pass and the decode's scan along x, row segment by row segment
 * so that each row is one loop the compiler can vectorise. The chunk-wide
 * steps (the carry, xfix, y and z scans) and the choice of the order run
 * the reference on the CPU too.
 */
#include <stddef.h>
#include <string.h>

#include "op_cpu_transform.h"
#include "op_cpu_util.h"
#include "op_lorenzo_nd_cpu.h"

/* Row by row: along a row (or the part of it in the sub-chunk) whether the
 * element has a row above and a plane behind does not change, and only the
 * row's first element lacks a left neighbour, so each row is one loop the
 * compiler can vectorise. */
#define LND_ENCODE(W, WORD)                                                                                            \
  void h5fz_fast_lnd_encode_##W(const WORD *q, WORD *out, uint32_t first, uint32_t m, uint32_t m_pad, h5fz_lnd_geom g) \
  {                                                                                                                    \
    uint32_t ex, ey, i = 0;                                                                                            \
    if (g.dim == 4u) { /* interpolation: the reference, element by element */                                         \
      for (; i < m; i++) out[i] = h5fz_lni_resid_##W(NULL, 0, 0, NULL, q, NULL, &g, first + i);                         \
      for (; i < m_pad; i++) out[i] = 0;                                                                               \
      return;                                                                                                          \
    }                                                                                                                  \
    h5fz_lnd_eff(&g, &ex, &ey);                                                                                        \
    uint32_t P = ex * ey;                                                                                              \
    while (i < m) {                                                                                                    \
      uint32_t gi = first + i, cx = gi % ex, len = ex - cx < m - i ? ex - cx : m - i, k = 0;                           \
      int up = gi / ex % ey > 0, back = gi >= P;                                                                       \
      const WORD *c = q + gi, *u = up ? c - ex : c, *b = back ? c - P : c, *bu = up ? b - ex : b;                      \
      WORD *o = out + i;                                                                                               \
      if (cx == 0) {                                                                                                   \
        WORD r = c[0];                                                                                                 \
        if (up) r = (WORD)(r - u[0]);                                                                                  \
        if (back) r = (WORD)(r - (up ? (WORD)(b[0] - bu[0]) : b[0]));                                                  \
        o[0] = r;                                                                                                      \
        k = 1;                                                                                                         \
      }                                                                                                                \
      if (!up && !back)                                                                                                \
        for (; k < len; k++) o[k] = (WORD)(c[k] - c[(ptrdiff_t)k - 1]);                                                \
      else if (!back)                                                                                                  \
        for (; k < len; k++) o[k] = (WORD)(c[k] - c[(ptrdiff_t)k - 1] - u[k] + u[(ptrdiff_t)k - 1]);                   \
      else if (!up)                                                                                                    \
        for (; k < len; k++) o[k] = (WORD)(c[k] - c[(ptrdiff_t)k - 1] - b[k] + b[(ptrdiff_t)k - 1]);                   \
      else                                                                                                             \
        for (; k < len; k++)                                                                                           \
          o[k] = (WORD)(c[k] - c[(ptrdiff_t)k - 1] - u[k] + u[(ptrdiff_t)k - 1] - b[k] + b[(ptrdiff_t)k - 1] + bu[k] - \
                        bu[(ptrdiff_t)k - 1]);                                                                         \
      i += len;                                                                                                        \
    }                                                                                                                  \
    for (; i < m_pad; i++) out[i] = 0;                                                                                 \
  }

H5FZ_CLONES LND_ENCODE(32, uint32_t)
H5FZ_CLONES LND_ENCODE(64, uint64_t)
#undef LND_ENCODE

/* The cost pass of the encoder on the chunk's words: each sampled group's
 * residuals from the row-by-row encode above, then the estimate of
 * h5fz_lnd_cost_* (the same sums). */
#define LND_COST(W, WORD)                                                                                              \
  void h5fz_fast_lnd_cost_##W(const WORD *q, h5fz_lnd_geom g, uint64_t k_lo, uint64_t k_hi, uint64_t T,                \
                              uint64_t cost[H5FZ_LND_NCOST])                                                           \
  {                                                                                                                    \
    WORD r[128];                                                                                                       \
    uint32_t hist[H5FZ_LND_CLASSES];                                                                                   \
    cost[0] = cost[1] = cost[2] = cost[3] = 0;                                                                         \
    for (uint32_t d = 0; d < H5FZ_LND_NCOST; d++) {                                                                    \
      if (d == 3u ? !g.interp : d >= g.dim) continue;                                                                  \
      h5fz_lnd_geom gd = g;                                                                                            \
      gd.dim = d + 1u;                                                                                                 \
      uint64_t c = 0, raw = 0;                                                                                         \
      memset(hist, 0, sizeof hist);                                                                                    \
      for (uint64_t k = k_lo; k < k_hi; k++) {                                                                         \
        uint64_t g0 = h5fz_lnd_group_start(k, T, g.n, g.interp);                                                       \
        uint32_t cnt = g.n - g0 < 128u ? (uint32_t)(g.n - g0) : 128u;                                                  \
        h5fz_fast_lnd_encode_##W(q, r, (uint32_t)g0, cnt, 128u, gd);                                                   \
        WORD or8[16], diff = 0;                                                                                        \
        for (uint32_t j = 0; j < 16u; j++) {                                                                           \
          WORD o = 0;                                                                                                  \
          for (uint32_t e = 0; e < 8u; e++) {                                                                          \
            WORD z = h5fz_zigzag_word_##W(r[8u * j + e]);                                                              \
            o |= z;                                                                                                    \
            if (g.entropy && 8u * j + e < cnt) { /* the sampled elements only (the padding is none) */                \
              uint32_t b = h5fz_bitlen64((uint64_t)z);                                                                 \
              hist[b]++;                                                                                               \
              raw += b ? b - 1u : 0u;                                                                                  \
            }                                                                                                          \
          }                                                                                                            \
          or8[j] = o;                                                                                                  \
          c += (uint64_t)__builtin_popcountll((unsigned long long)o);                                                  \
        }                                                                                                              \
        for (uint32_t j = 0; j < 8u; j++) diff |= (WORD)(or8[8u + j] ^ or8[j]);                                        \
        c += 2u * (uint64_t)__builtin_popcountll((unsigned long long)diff);                                            \
      }                                                                                                                \
      if (g.entropy) { /* h5fz_lnd_cost_end's sum, in one place */                                                     \
        c = raw << 16;                                                                                                 \
        for (uint32_t cl = 0; cl < H5FZ_LND_CLASSES; cl++) c += h5fz_lnd_entropy_term(hist, cl);                       \
      }                                                                                                                \
      cost[d] = c;                                                                                                     \
    }                                                                                                                  \
  }

LND_COST(32, uint32_t)
LND_COST(64, uint64_t)
#undef LND_COST

/* The decode's prefix sums along x inside a sub-chunk in one pass, row
 * segment by row segment (h5fz_lnd_xscan_* for one thread: the same words
 * and aux). */
#define LND_XSCAN(W, WORD)                                                                                             \
  void h5fz_fast_lnd_xscan_##W(WORD *w, uint32_t m, uint32_t first, h5fz_lnd_geom g, uint64_t *aux)                    \
  {                                                                                                                    \
    uint32_t ex, ey, i = 0, head;                                                                                      \
    if (g.dim == 4u) { /* interpolation: its passes are chunk-wide */                                                  \
      aux[0] = aux[1] = 0;                                                                                             \
      return;                                                                                                          \
    }                                                                                                                  \
    h5fz_lnd_eff(&g, &ex, &ey);                                                                                        \
    head = first % ex ? ex - first % ex : 0u;                                                                          \
    while (i < m) {                                                                                                    \
      uint32_t len = (first + i) % ex ? ex - (first + i) % ex : ex;                                                    \
      if (len > m - i) len = m - i;                                                                                    \
      WORD acc = 0;                                                                                                    \
      for (uint32_t k = 0; k < len; k++) w[i + k] = acc = (WORD)(acc + w[i + k]);                                      \
      i += len;                                                                                                        \
    }                                                                                                                  \
    if (m) {                                                                                                           \
      aux[0] = (uint64_t)w[m - 1u];                                                                                    \
      aux[1] = head < m ? 1u : 0u;                                                                                     \
    }                                                                                                                  \
  }

LND_XSCAN(32, uint32_t)
LND_XSCAN(64, uint64_t)
#undef LND_XSCAN

/* The op table's forms (op_cpu_transform.h): the encode of a sub-chunk
 * from the chunk's quantizer words (sub->lnd_q, which in is part of); no
 * inverse here, it is chunk-wide (the chain's lorenzo_nd steps). */
static void lnd_cpu_forward(const h5fz_cpu_sub *sub, int wide, void *in, void *out, uint32_t n)
{
  (void)in;
  if (wide)
    h5fz_fast_lnd_encode_64(sub->lnd_q, out, (uint32_t)sub->first, sub->m, n, *sub->lnd);
  else
    h5fz_fast_lnd_encode_32(sub->lnd_q, out, (uint32_t)sub->first, sub->m, n, *sub->lnd);
}
const h5fz_cpu_transform h5fz_cpu_lorenzo_nd = {lnd_cpu_forward, NULL};
