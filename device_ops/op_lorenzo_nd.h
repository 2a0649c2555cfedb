/*
 * op_lorenzo_nd.h - transform: Lorenzo prediction over the chunk's own 1-,
 * 2- or 3-D shape, across sub-chunks, on the quantizer's bins (the cuSZ
 * approach: Lorenzo on pre-quantized integers, which makes it exact and
 * invertible in wrapping integer arithmetic). docs/format.md section 5.6
 * defines it; this file is the code both executors run.
 *
 * Geometry (h5fz_lnd_geom): the chunk's n elements in rows of x (its last
 * dim) and planes of y rows (its second-last dim); slower dims fold into
 * the planes. The predictor's dimension D (1, 2 or 3) is chosen per chunk
 * by the encoder and stored in the chunk header; with it the chunk is seen
 * as rows of ex elements in planes of ey rows (h5fz_lnd_eff):
 *   D = 1: ex = n, ey = 1          (one row: the 1-D delta over the chunk)
 *   D = 2: ex = x, ey = ceil(n/x)  (one plane: rows of all planes stacked)
 *   D = 3: ex = x, ey = y
 * Element g sits at column g mod ex, row (g / ex) mod ey of plane g / (ex ey).
 * Its residual is q minus the Lorenzo prediction from the q of its
 * neighbours at (z-1, y, x), (z, y-1, x), ... (up to 7), 0 outside the chunk:
 *   r = (1 - Sx)(1 - Sy)(1 - Sz) q    with S the shift by one along an axis
 * Only the quantizer's words q are needed, and q is pointwise, so a
 * sub-chunk gets the q of neighbours in earlier sub-chunks by quantizing
 * their values again (h5fz_quant_word), or from the chunk's q when the
 * executor has them (the CPU): sub-chunks still encode independently.
 *
 * The inverse is a prefix sum along each axis over the whole chunk (it
 * crosses sub-chunks): along x inside each sub-chunk (h5fz_lnd_xscan), the
 * x segments that began in an earlier sub-chunk completed with a carry
 * (h5fz_lnd_carry, h5fz_lnd_xfix), then along y (h5fz_lnd_yscan) and z
 * (h5fz_lnd_zscan); the quantizer decode follows on the whole chunk.
 *
 * The encoder picks D by the estimated coded size of each predictor's
 * residuals on a sample of the chunk (h5fz_lnd_cost, h5fz_lnd_choose).
 */

#ifndef H5FZ_LND_COMMON
#define H5FZ_LND_COMMON

/* A loop the GPU compiler must not unroll (code size). */
#if H5FZ_ON_GPU
#define H5FZ_NO_UNROLL _Pragma("unroll 1")
#else
#define H5FZ_NO_UNROLL
#endif

/* A chunk's geometry for lorenzo_nd (computed on the host, passed by value
 * to the kernels). All counts fit 32 bits: n < 2^30 (chunks <= 2 GiB). */
typedef struct {
  uint32_t n;   /* elements of the chunk */
  uint32_t x;   /* row length: the last chunk dim, in [1, n] */
  uint32_t y;   /* rows per plane: the second-last chunk dim, in [1, ceil(n / x)] */
  uint32_t dim; /* predictor: dimension 1..3, or 4 (lorenzo_interp's interpolation, op_lnd_interp.h);
                 * the encoder's cost pass: the highest dimension allowed */
  uint32_t interp; /* encode: 1 when the chain's op is lorenzo_interp (the cost pass measures predictor 4
                    * too), else 0; the decode reads only dim */
  uint32_t entropy; /* encode: the cost pass estimates entropy-coded bits, for huff / huffctx (1), rather
                     * than the bit planes bitshuffle + RZE keep (0) (h5fz_lnd_cost) */
} h5fz_lnd_geom;

/* The encoder estimates each predictor on at most this many groups of 128
 * elements, spread evenly over the chunk, split into this many parts (one
 * GPU block each; the sum is the same however it is split). */
#define H5FZ_LND_SAMPLE_GROUPS 512u
#define H5FZ_LND_COST_PARTS 16u
/* The GPU cost pass's block: a warp per sampled group (h5fz_lnd_cost_lanes),
 * so a part of 512 / 16 = 32 groups takes one round of 1024 threads. */
#define H5FZ_LND_COST_THREADS 1024u
/* Cost words a part: predictors 1..4 (the fourth only measured with interp). */
#define H5FZ_LND_NCOST 4u

/* The entropy cost (g.entropy): residual classes by bit length, 0..64. */
#define H5FZ_LND_CLASSES 65u

/* log2(x) in units of 2^-16 for x >= 1: the bit length, then 16 squarings
 * of the mantissa. Integer arithmetic only, so that every executor gets
 * the same bits (the cost decides the predictor, which the bytes follow). */
H5FZ_FN uint64_t h5fz_log2_q16(uint64_t x)
{
  const uint32_t e = h5fz_bitlen64(x) - 1u;
  uint64_t m = e >= 31u ? x >> (e - 31u) : x << (31u - e); /* x / 2^e in [1, 2), 31 fraction bits */
  uint64_t r = (uint64_t)e << 16;
  for (int i = 15; i >= 0; i--) {
    m = (m * m) >> 31;
    if (m >= (2ull << 31)) {
      m >>= 1;
      r |= 1ull << i;
    }
  }
  return r;
}

/* The entropy cost's term of class c of predictor d (t = d H5FZ_LND_CLASSES
 * + c) from a part's histogram hist: n_c (log2 N - log2 n_c) in units of
 * 2^-16 bits, N the part's sampled elements (the sum of d's classes). */
H5FZ_FN uint64_t h5fz_lnd_entropy_term(const uint32_t *hist, uint32_t t)
{
  const uint32_t d = t / H5FZ_LND_CLASSES, nc = hist[t];
  if (!nc) return 0;
  uint64_t N = 0;
  for (uint32_t c = 0; c < H5FZ_LND_CLASSES; c++) N += hist[d * H5FZ_LND_CLASSES + c];
  return (uint64_t)nc * (h5fz_log2_q16(N) - h5fz_log2_q16(nc));
}

/* The end of a cost pass, every thread of the block: with g.entropy, the
 * entropy terms of the part's histogram hist (shared, complete after a
 * barrier) spread over the threads and the raw bits (raw, each thread's,
 * in bits) join each thread's c[d] in units of 2^-16 bits; then the
 * block-wide sums into cost[0..4), the same on every thread. */
H5FZ_FN void h5fz_lnd_cost_end(const h5fz_blk *blk, h5fz_lnd_geom g, const uint32_t *hist,
                               const uint64_t raw[H5FZ_LND_NCOST], uint64_t c[H5FZ_LND_NCOST],
                               uint64_t cost[H5FZ_LND_NCOST])
{
  if (g.entropy) {
    h5fz_blk_sync(blk); /* every thread's counts in */
    for (uint32_t d = 0; d < H5FZ_LND_NCOST; d++) c[d] = raw[d] << 16;
    for (uint32_t t = blk->tid; t < H5FZ_LND_NCOST * H5FZ_LND_CLASSES; t += blk->nthreads)
      c[t / H5FZ_LND_CLASSES] += h5fz_lnd_entropy_term(hist, t);
  }
  for (uint32_t d = 0; d < H5FZ_LND_NCOST; d++) {
    uint64_t total;
    h5fz_blk_exscan(blk, c[d], &total);
    cost[d] = total;
  }
}

/* Highest predictor dimension a chunk of this rank allows. */
H5FZ_FN uint32_t h5fz_lnd_max_dim(uint32_t rank) { return rank >= 3u ? 3u : rank == 2u ? 2u : 1u; }

/* Geometry from the chunk dims (slowest first; a 0 dim counts as absent):
 * x = the last dim, y = the second-last, each clamped so that they never
 * exceed what n elements hold. */
H5FZ_FN h5fz_lnd_geom h5fz_lnd_geom_make(uint32_t rank, const uint32_t *dims, uint64_t n, uint32_t dim)
{
  h5fz_lnd_geom g;
  uint64_t x = rank >= 1u && dims[rank - 1u] ? dims[rank - 1u] : n;
  if (x > n) x = n;
  if (x == 0) x = 1;
  uint64_t rows = (n + x - 1u) / x;
  uint64_t y = rank >= 2u && dims[rank - 2u] ? dims[rank - 2u] : rows;
  if (y > rows) y = rows;
  if (y == 0) y = 1;
  g.n = (uint32_t)n;
  g.x = (uint32_t)x;
  g.y = (uint32_t)y;
  g.dim = dim;
  g.interp = 0u;
  g.entropy = 0u;
  return g;
}

/* Rows of ex elements in planes of ey rows, for the predictor g->dim. */
H5FZ_FN void h5fz_lnd_eff(const h5fz_lnd_geom *g, uint32_t *ex, uint32_t *ey)
{
  uint32_t n = g->n ? g->n : 1u;
  if (g->dim <= 1u) {
    *ex = n;
    *ey = 1u;
  } else {
    *ex = g->x;
    *ey = g->dim == 2u ? (n + g->x - 1u) / g->x : g->y;
  }
}

/* h5fz_lnd_eff of each predictor D = 1..3 of one shape (the cost passes
 * measure all of them): ex[D - 1], ey[D - 1]. */
typedef struct {
  uint32_t ex[3], ey[3];
} h5fz_lnd_effs;

H5FZ_FN h5fz_lnd_effs h5fz_lnd_eff_each(h5fz_lnd_geom g)
{
  h5fz_lnd_effs e;
  for (uint32_t d = 0; d < 3u; d++) {
    g.dim = d + 1u;
    h5fz_lnd_eff(&g, &e.ex[d], &e.ey[d]);
  }
  return e;
}

/* Lines of the y and z passes of the inverse (0: no such pass). A y line
 * is a column of one plane, a z line a position in the plane. */
H5FZ_FN uint32_t h5fz_lnd_ylines(const h5fz_lnd_geom *g)
{
  uint32_t ex, ey;
  if (g->dim == 4u) return 0u; /* interpolation: no Lorenzo passes */
  h5fz_lnd_eff(g, &ex, &ey);
  uint32_t plane = ex * ey;
  return ey > 1u ? (g->n + plane - 1u) / plane * ex : 0u;
}

H5FZ_FN uint32_t h5fz_lnd_zlines(const h5fz_lnd_geom *g)
{
  uint32_t ex, ey;
  if (g->dim == 4u) return 0u;
  h5fz_lnd_eff(g, &ex, &ey);
  return ex * ey < g->n ? ex * ey : 0u;
}

/* The sample of the cost pass: groups k * T (k < G) of 128 elements, G <=
 * H5FZ_LND_SAMPLE_GROUPS; part `part` of `parts` takes k in [*k_lo, *k_hi). */
H5FZ_FN void h5fz_lnd_sample(uint32_t n, uint32_t part, uint32_t parts, uint64_t *k_lo, uint64_t *k_hi,
                             uint64_t *T)
{
  uint64_t groups = ((uint64_t)n + 127u) / 128u;
  uint64_t t = (groups + H5FZ_LND_SAMPLE_GROUPS - 1u) / H5FZ_LND_SAMPLE_GROUPS;
  if (t == 0) t = 1;
  uint64_t G = (groups + t - 1u) / t;
  *T = t;
  *k_lo = G * part / parts;
  *k_hi = G * (part + 1u) / parts;
}

/* The first element of sampled group k (h5fz_lnd_sample's stride T): k T
 * 128, or with jitter (lorenzo_interp's chains) the group a fixed hash of k
 * draws from its T, so that the sample does not alias with the
 * interpolation's power-of-two strides (a regular sample of a 50 x 64 x 100
 * chunk read rows 0, 6, 12, 19, ... and missed every row of stride 8 and
 * 16, where its zero-padded edge cost the most). */
H5FZ_FN uint64_t h5fz_lnd_group_start(uint64_t k, uint64_t T, uint32_t n, uint32_t jitter)
{
  uint64_t groups = ((uint64_t)n + 127u) / 128u, first = k * T;
  if (jitter && T > 1u && first < groups) {
    uint64_t span = groups - first < T ? groups - first : T;
    first += (uint64_t)(((uint32_t)k * 2654435761u) >> 7) % span;
  }
  return first * 128u;
}

/* Whether the encoder has predictors to choose from (a chunk of more than
 * one dimension, or lorenzo_interp's interpolation). Without a choice the
 * predictor is 1: the cost pass (a launch on the GPU, a pass over a
 * sample of the chunk on the CPU) is not run, and h5fz_lnd_choose reads
 * no sums. */
H5FZ_FN uint32_t h5fz_lnd_has_choice(h5fz_lnd_geom g) { return g.dim > 1u || g.interp ? 1u : 0u; }

/* The predictor to use: of the dimensions up to g.dim, and interpolation
 * (4) when g.interp, the one whose summed cost over the parts
 * (costs[H5FZ_LND_NCOST part + D - 1]) is smallest; a tie goes to the lower
 * number. (Interpolation after the loop: a loop over all four spilled 36
 * bytes more a thread in the one-slot encode.) */
H5FZ_FN uint32_t h5fz_lnd_choose(const uint64_t *costs, uint32_t parts, h5fz_lnd_geom g)
{
  if (!h5fz_lnd_has_choice(g)) return 1u; /* no cost pass ran: costs hold nothing */
  uint32_t best = 1u;
  uint64_t best_cost = 0;
  for (uint32_t d = 1u; d <= g.dim && d <= 3u; d++) {
    uint64_t c = 0;
    for (uint32_t k = 0; k < parts; k++) c += costs[H5FZ_LND_NCOST * k + d - 1u];
    if (d == 1u || c < best_cost) {
      best = d;
      best_cost = c;
    }
  }
  if (g.interp) {
    uint64_t c = 0;
    for (uint32_t k = 0; k < parts; k++) c += costs[H5FZ_LND_NCOST * k + 3u];
    if (c < best_cost) best = 4u;
  }
  return best;
}

/* Turn aux[2 s] = the last x-prefix sum of sub-chunk s, aux[2 s + 1] =
 * whether an x segment starts in it, into aux[2 s] = the carry its first
 * elements (those of a segment begun earlier) lack. Sequential over the
 * n_sub sub-chunks; wrapping, only the low word bits matter. */
H5FZ_FN void h5fz_lnd_carry(uint64_t *aux, uint32_t n_sub)
{
  uint64_t carry = 0;
  for (uint32_t s = 0; s < n_sub; s++) {
    uint64_t tail = aux[2u * s], starts = aux[2u * s + 1u];
    aux[2u * s] = carry;
    carry = starts ? tail : carry + tail;
  }
}

/* One pass of the inverse along y or z, seen as lines: line (grp, c) has
 * the elements grp G + i S + c (i < L, only those < n). A line is cut in
 * segments of R elements so that the pass has enough threads (one per
 * line walked the whole column before, 403 threads for a 344x403 chunk):
 * h5fz_lnd_asum sums each segment, h5fz_lnd_ascan adds the sums of the
 * segments before it on its line (its offset) to its own prefix sums (and
 * runs the quantizer decode when it is the last pass). */
typedef struct {
  uint32_t n;      /* elements of the chunk */
  uint32_t S;      /* stride between the elements of a line: ex (y) or ex ey (z) */
  uint32_t L;      /* elements of a line: ey (y) or the planes (z) */
  uint32_t G;      /* elements between groups of lines: a plane (y), 0 (z: one group) */
  uint32_t groups; /* groups of S lines: the planes (y), 1 (z) */
  uint32_t R;      /* elements per segment */
  uint32_t nseg;   /* segments per line, ceil(L / R) */
} h5fz_lnd_axis;

/* The y pass (z = 0) or the z pass (z = 1) of predictor g->dim; returns 0
 * when the predictor has no such pass. R grows with the line (about its
 * square root) so that neither the segments nor the scan of their sums is
 * long. */
H5FZ_FN int h5fz_lnd_axis_make(const h5fz_lnd_geom *g, uint32_t z, h5fz_lnd_axis *a)
{
  uint32_t ex, ey, n = g->n ? g->n : 1u;
  if (g->dim == 4u) return 0; /* interpolation: its own passes (op_lnd_interp.h) */
  h5fz_lnd_eff(g, &ex, &ey);
  uint32_t P = ex * ey;
  if (z ? P >= n : ey <= 1u) return 0;
  a->n = g->n;
  a->S = z ? P : ex;
  a->L = z ? (n + P - 1u) / P : ey;
  a->G = z ? 0u : P;
  a->groups = z ? 1u : (n + P - 1u) / P;
  uint32_t R = 32u;
  while ((uint64_t)R * R < a->L) R *= 2u;
  a->R = R;
  a->nseg = (a->L + R - 1u) / R;
  return 1;
}

/* Threads of h5fz_lnd_asum and h5fz_lnd_ascan (one per segment), which is
 * also the number of segment sums. */
H5FZ_FN uint64_t h5fz_lnd_axis_segments(const h5fz_lnd_axis *a) { return (uint64_t)a->groups * a->nseg * a->S; }

/* Segment t (t < h5fz_lnd_axis_segments): its line's first element and
 * its range of i. */
H5FZ_FN void h5fz_lnd_axis_segment(const h5fz_lnd_axis *a, uint64_t t, uint64_t *base, uint32_t *i_lo, uint32_t *i_hi)
{
  uint32_t c = (uint32_t)(t % a->S);
  uint64_t rest = t / a->S;
  uint32_t seg = (uint32_t)(rest % a->nseg), grp = (uint32_t)(rest / a->nseg);
  *base = (uint64_t)grp * a->G + c;
  *i_lo = seg * a->R;
  *i_hi = a->L - *i_lo < a->R ? a->L : *i_lo + a->R;
}

/* The elements of segment [lo, hi) (from h5fz_lnd_axis_segment) that lie
 * in the chunk: its i end cut where base + i S reaches a.n, so that the
 * walks below need no test a step and can have several loads in flight
 * (a chunk's decode is a chain of such short launches: each load waited
 * for the one before it behind the test). */
H5FZ_FN uint32_t h5fz_lnd_axis_seg_end(const h5fz_lnd_axis *a, uint64_t base, uint32_t lo, uint32_t hi)
{
  if (base >= a->n) return lo;
  const uint64_t in_chunk = (a->n - base + a->S - 1u) / a->S; /* i with base + i S < n */
  return in_chunk < hi ? (in_chunk > lo ? (uint32_t)in_chunk : lo) : hi;
}

/* Words of segment sums the decode of predictor g->dim needs (the larger
 * of its two passes; 0 when every line is one segment), after the 2 words
 * of carry information per sub-chunk. */
H5FZ_FN uint64_t h5fz_lnd_part_words(const h5fz_lnd_geom *g)
{
  uint64_t most = 0;
  h5fz_lnd_axis a;
  for (uint32_t z = 0; z < 2u; z++)
    if (h5fz_lnd_axis_make(g, z, &a) && a.nseg > 1u && h5fz_lnd_axis_segments(&a) > most)
      most = h5fz_lnd_axis_segments(&a);
  return most;
}

/* h5fz_lnd_carry by a whole block (GPU: one block of up to 1024 threads
 * instead of one thread walking every sub-chunk). The carry is a segmented
 * scan: sub-chunk s is (starts_s, tail_s) and the pairs combine as
 * (a, b) -> (a.starts | b.starts, b.starts ? b.tail : a.tail + b.tail),
 * which is associative, so each thread reduces a contiguous share, the
 * block scans the shares (sv, sf: nthreads words each of scratch, shared
 * memory on the GPU), and each thread writes its share's carries. The
 * same words as h5fz_lnd_carry (wrapping sums). */
H5FZ_FN void h5fz_lnd_carry_blk(const h5fz_blk *blk, uint64_t *aux, uint32_t n_sub, uint64_t *sv, uint32_t *sf)
{
  uint32_t lo, hi, T = blk->nthreads, t = blk->tid;
  h5fz_blk_share(blk, n_sub, 1u, &lo, &hi);
  uint64_t v = 0;
  uint32_t f = 0;
  for (uint32_t s = lo; s < hi; s++) {
    uint64_t tail = aux[2u * s];
    if (aux[2u * s + 1u]) {
      v = tail;
      f = 1u;
    } else {
      v += tail;
    }
  }
  sv[t] = v;
  sf[t] = f;
  h5fz_blk_sync(blk);
  for (uint32_t d = 1u; d < T; d <<= 1) { /* inclusive scan of the shares (Hillis-Steele) */
    uint64_t pv = t >= d ? sv[t - d] : 0;
    uint32_t pf = t >= d ? sf[t - d] : 0u;
    h5fz_blk_sync(blk);
    if (t >= d) {
      if (!f) v += pv;
      f |= pf;
      sv[t] = v;
      sf[t] = f;
    }
    h5fz_blk_sync(blk);
  }
  uint64_t carry = t ? sv[t - 1u] : 0;
  for (uint32_t s = lo; s < hi; s++) {
    uint64_t tail = aux[2u * s], starts = aux[2u * s + 1u];
    aux[2u * s] = carry;
    carry = starts ? tail : carry + tail;
  }
}

#endif /* H5FZ_LND_COMMON */

/* lorenzo_interp's predictor 4 (its common part once, its word functions
 * per width, like this file's) */
#include "op_lnd_interp.h"

/* ---- per word width ----------------------------------------------------- */

/* q of chunk element j: from the sub-chunk's own words qloc (elements
 * first.. of the sub-chunk, when qloc is given), else from the chunk's words
 * qc (when given), else quantized again from the chunk's values in. */
H5FZ_FN H5FZ_T_WORD H5FZ_TN(h5fz_lnd_q)(const H5FZ_T_WORD *qloc, uint32_t first, const H5FZ_T_FLOAT *in,
                                        const H5FZ_T_WORD *qc, const h5fz_quant_params *p, uint32_t j)
{
  if (qloc && j >= first) return qloc[j - first];
  if (qc) return qc[j];
  return H5FZ_TN(h5fz_quant_word)(in[j], p);
}

/* Residual of element g in rows of ex, planes of P = ex ey elements; a:
 * its column is not 0, b: its row in the plane is not 0. The 8 corners of
 * the cube behind it (those inside the chunk), with the sign of the
 * Lorenzo predictor, in one loop so that the GPU code stays small (each
 * fetch may quantize a value again). */
H5FZ_FN H5FZ_T_WORD H5FZ_TN(h5fz_lnd_resid)(const H5FZ_T_WORD *qloc, uint32_t first, const H5FZ_T_FLOAT *in,
                                            const H5FZ_T_WORD *qc, const h5fz_quant_params *p, uint32_t g,
                                            uint32_t ex, uint32_t P, int a, int b)
{
  uint32_t have = 1u | (a ? 2u : 0u) | (b ? 4u : 0u) | (g >= P ? 8u : 0u);
  H5FZ_T_WORD r = 0;
  H5FZ_NO_UNROLL
  for (uint32_t k = 0; k < 8u; k++) {
    uint32_t dx = k & 1u, dy = (k >> 1) & 1u, dz = k >> 2;
    if ((dx && !(have & 2u)) || (dy && !(have & 4u)) || (dz && !(have & 8u))) continue;
    H5FZ_T_WORD v = H5FZ_TN(h5fz_lnd_q)(qloc, first, in, qc, p, g - dx - dy * ex - dz * P);
    r = (dx ^ dy ^ dz) ? (H5FZ_T_WORD)(r - v) : (H5FZ_T_WORD)(r + v);
  }
  return r;
}

/* Encode: out[i] = residual of chunk element first + i (i < m) with the
 * predictor g.dim, 0 for the padding words m..m_pad. qloc: the sub-chunk's
 * quantizer words; in: the chunk's values; qc: the chunk's quantizer words
 * or NULL (then neighbours in earlier sub-chunks are quantized again). */
H5FZ_FN void H5FZ_TN(h5fz_lnd_encode)(const h5fz_blk *blk, const H5FZ_T_WORD *qloc, H5FZ_T_WORD *out, uint32_t m,
                                      uint32_t m_pad, const H5FZ_T_FLOAT *in, const H5FZ_T_WORD *qc,
                                      unsigned long long first, h5fz_lnd_geom g, const h5fz_quant_params *p)
{
  uint32_t ex, ey, lo, hi, f = (uint32_t)first;
  h5fz_lnd_eff(&g, &ex, &ey);
  uint32_t P = ex * ey;
  h5fz_blk_share_odd(blk, m_pad, &lo, &hi); /* odd shares: no bank conflicts */
  if (lo >= hi) return;
  if (g.dim == 4u) { /* interpolation: neighbours on both sides, qloc holds the sub-chunk's m */
    for (uint32_t i = lo; i < hi; i++)
      out[i] = i < m ? H5FZ_TN(h5fz_lni_resid)(qloc, f, m, in, qc, p, &g, f + i) : (H5FZ_T_WORD)0;
    return;
  }
  if (g.dim <= 1u) { /* 1-D: the delta over the chunk, one neighbour (the common case: no dims) */
    for (uint32_t i = lo; i < hi; i++) {
      if (i >= m) {
        out[i] = 0;
        continue;
      }
      H5FZ_T_WORD prev = f + i ? H5FZ_TN(h5fz_lnd_q)(qloc, f, in, qc, p, f + i - 1u) : (H5FZ_T_WORD)0;
      out[i] = (H5FZ_T_WORD)(H5FZ_TN(h5fz_lnd_q)(qloc, f, in, qc, p, f + i) - prev);
    }
    return;
  }
  uint32_t cx = (f + lo) % ex, ry = (f + lo) / ex % ey;
  for (uint32_t i = lo; i < hi; i++) {
    out[i] = i < m ? H5FZ_TN(h5fz_lnd_resid)(qloc, f, in, qc, p, f + i, ex, P, cx > 0, ry > 0) : (H5FZ_T_WORD)0;
    if (++cx == ex) {
      cx = 0;
      if (++ry == ey) ry = 0;
    }
  }
}

/* The residual h5fz_lnd_encode stores at out[i] (i < m; qc NULL) with a
 * Lorenzo predictor (g.dim 1..3): for a caller that computes them in its
 * own order (the GPU's one-slot encode holds them in registers and writes
 * them over qloc, from the top down; a residual reads no bin above its
 * own). Interpolation's is h5fz_lni_resid: apart, so that a kernel of
 * lorenzo_nd does not carry its code (it spilled 72 bytes more a thread). */
H5FZ_FN H5FZ_T_WORD H5FZ_TN(h5fz_lnd_resid_at)(const H5FZ_T_WORD *qloc, uint32_t first, const H5FZ_T_FLOAT *in,
                                               const h5fz_quant_params *p, h5fz_lnd_geom g, uint32_t i)
{
  const uint32_t j = first + i;
  if (g.dim <= 1u) {
    H5FZ_T_WORD prev = j ? H5FZ_TN(h5fz_lnd_q)(qloc, first, in, (const H5FZ_T_WORD *)0, p, j - 1u) : (H5FZ_T_WORD)0;
    return (H5FZ_T_WORD)(H5FZ_TN(h5fz_lnd_q)(qloc, first, in, (const H5FZ_T_WORD *)0, p, j) - prev);
  }
  uint32_t ex, ey;
  h5fz_lnd_eff(&g, &ex, &ey);
  return H5FZ_TN(h5fz_lnd_resid)(qloc, first, in, (const H5FZ_T_WORD *)0, p, j, ex, ex * ey, j % ex > 0u,
                                 j / ex % ey > 0u);
}

/* q of chunk element j for the cost pass: qg when j is gi, qprev when j is
 * gi - 1 and have_prev, else from qc or quantized again. Why: the cost
 * pass's residuals of every predictor read element gi and, along x, its
 * left neighbour, which the element before it (in the same run of 8) has
 * just quantized; scalars rather than a window array, which the GPU would
 * keep in local memory. */
H5FZ_FN H5FZ_T_WORD H5FZ_TN(h5fz_lnd_cost_q)(H5FZ_T_WORD qg, H5FZ_T_WORD qprev, int have_prev, uint32_t gi,
                                             const H5FZ_T_FLOAT *in, const H5FZ_T_WORD *qc,
                                             const h5fz_quant_params *p, uint32_t j)
{
  if (j == gi) return qg;
  if (have_prev && j + 1u == gi) return qprev;
  return qc ? qc[j] : H5FZ_TN(h5fz_quant_word)(in[j], p);
}

/* The zigzagged residual z of element gi under the predictor D = d + 1,
 * for each D <= g.dim and, with g.interp, D = 4 (eff: h5fz_lnd_eff_each),
 * into what the cost passes gather: or8[d] |= z (per 8 elements); with
 * hist (g.entropy), hist[d H5FZ_LND_CLASSES + bit length of z] += 1
 * (atomically: the block's threads share it) and raw[d] += the bit length
 * less 1 (the bits below the leading one, which a class code leaves).
 * *qprev: in, the bin of gi - 1 when have_prev; out, the bin of gi (the
 * residuals are h5fz_lnd_resid's and h5fz_lni_resid's, their bins read
 * through h5fz_lnd_cost_q). */
H5FZ_FN void H5FZ_TN(h5fz_lnd_or_resid)(const H5FZ_T_FLOAT *in, const H5FZ_T_WORD *qc, h5fz_lnd_geom g,
                                        const h5fz_quant_params *p, const h5fz_lnd_effs *eff, uint32_t gi,
                                        H5FZ_T_WORD or8[H5FZ_LND_NCOST], uint32_t *hist,
                                        uint64_t raw[H5FZ_LND_NCOST], H5FZ_T_WORD *qprev, int have_prev)
{
  const H5FZ_T_WORD qg = qc ? qc[gi] : H5FZ_TN(h5fz_quant_word)(in[gi], p), qp = *qprev;
  for (uint32_t d = 0; d < H5FZ_LND_NCOST; d++) {
    H5FZ_T_WORD r = 0;
    if (d == 3u) {
      if (!g.interp) continue;
      uint32_t ja = 0, jb = 0, k = h5fz_lni_taps(&g, gi, &ja, &jb);
      H5FZ_T_WORD pred = 0;
      if (k) {
        H5FZ_T_WORD qa = H5FZ_TN(h5fz_lnd_cost_q)(qg, qp, have_prev, gi, in, qc, p, ja);
        pred = k == 2u ? H5FZ_TN(h5fz_lni_mean)(qa, H5FZ_TN(h5fz_lnd_cost_q)(qg, qp, have_prev, gi, in, qc, p, jb))
                       : qa;
      }
      r = (H5FZ_T_WORD)(qg - pred);
    } else {
      if (d >= g.dim) continue;
      const uint32_t ex = eff->ex[d], P = ex * eff->ey[d];
      const uint32_t have = 1u | (gi % ex > 0 ? 2u : 0u) | (gi / ex % eff->ey[d] > 0 ? 4u : 0u) | (gi >= P ? 8u : 0u);
      H5FZ_NO_UNROLL
      for (uint32_t k = 0; k < 8u; k++) { /* h5fz_lnd_resid's corners */
        uint32_t dx = k & 1u, dy = (k >> 1) & 1u, dz = k >> 2;
        if ((dx && !(have & 2u)) || (dy && !(have & 4u)) || (dz && !(have & 8u))) continue;
        H5FZ_T_WORD v = H5FZ_TN(h5fz_lnd_cost_q)(qg, qp, have_prev, gi, in, qc, p, gi - dx - dy * ex - dz * P);
        r = (dx ^ dy ^ dz) ? (H5FZ_T_WORD)(r - v) : (H5FZ_T_WORD)(r + v);
      }
    }
    H5FZ_T_WORD z = (H5FZ_T_WORD)((r << 1) ^ ((H5FZ_T_WORD)0 - (r >> (H5FZ_T_BITS - 1u))));
    or8[d] |= z;
    if (hist) {
      const uint32_t b = h5fz_bitlen64((uint64_t)z);
      (void)h5fz_atomic_add_u32(hist + d * H5FZ_LND_CLASSES + b, 1u);
      raw[d] += b ? b - 1u : 0u;
    }
  }
  *qprev = qg;
}

/* Cost of each predictor D = 1..g.dim (and 4 with g.interp) on the
 * sampled groups k_lo..k_hi (stride T, h5fz_lnd_sample, placed by
 * h5fz_lnd_group_start) of 128 elements, into cost[0..4) (0 for the
 * predictors g does not allow), the same on every thread.
 *
 * With g.entropy (the huff coders): the bits an order-0 entropy coder
 * would spend on the part's residuals, in units of 2^-16: the residuals'
 * classes by bit length, n_c log2(N / n_c) summed over the classes, plus
 * the bits below each leading one. Not additive over parts: the executors
 * all split the sample into the same H5FZ_LND_COST_PARTS parts and sum
 * their costs. Why not the bit planes: at loose bounds the codes are
 * mostly zero, and huff pays per non-zero what RZE pays per bit plane
 * touched; Lorenzo's clustered non-zeros and interpolation's scattered
 * ones rank differently under the two (the bit planes chose
 * interpolation where it coded 2x larger).
 *
 * Else an estimate of the bytes bitshuffle + RZE keep of their zigzagged
 * residuals. Per 8 elements, the set bits of the OR of their words (the
 * bit planes with a non-zero byte: RZE level 0 keeps exactly those); per
 * 64, twice the bit planes whose level-0 bitmap byte differs between the
 * two halves of the group (what level 1 keeps, measured on the second
 * half). hist: H5FZ_LND_NCOST H5FZ_LND_CLASSES words of block-shared
 * scratch (used with g.entropy only). */
H5FZ_FN void H5FZ_TN(h5fz_lnd_cost)(const h5fz_blk *blk, const H5FZ_T_FLOAT *in, const H5FZ_T_WORD *qc,
                                    h5fz_lnd_geom g, const h5fz_quant_params *p, uint64_t k_lo, uint64_t k_hi,
                                    uint64_t T, uint32_t *hist, uint64_t cost[H5FZ_LND_NCOST])
{
  uint64_t c[H5FZ_LND_NCOST] = {0, 0, 0, 0}, raw[H5FZ_LND_NCOST] = {0, 0, 0, 0};
  const h5fz_lnd_effs eff = h5fz_lnd_eff_each(g);
  if (g.entropy) {
    for (uint32_t t = blk->tid; t < H5FZ_LND_NCOST * H5FZ_LND_CLASSES; t += blk->nthreads) hist[t] = 0;
    h5fz_blk_sync(blk);
  }
  for (uint64_t k = k_lo + blk->tid; k < k_hi; k += blk->nthreads) {
    uint64_t g0 = h5fz_lnd_group_start(k, T, g.n, g.interp);
    H5FZ_T_WORD prev[8][H5FZ_LND_NCOST], diff[H5FZ_LND_NCOST] = {0, 0, 0, 0};
    for (uint32_t e8 = 0; e8 < 128u; e8 += 8u) {
      H5FZ_T_WORD or8[H5FZ_LND_NCOST] = {0, 0, 0, 0}, qprev = 0;
      for (uint32_t e = e8; e < e8 + 8u && g0 + e < g.n; e++)
        H5FZ_TN(h5fz_lnd_or_resid)(in, qc, g, p, &eff, (uint32_t)(g0 + e), or8, g.entropy ? hist : (uint32_t *)0,
                                   raw, &qprev, e > e8);
      for (uint32_t d = 0; d < H5FZ_LND_NCOST; d++) {
        c[d] += h5fz_popcount64((uint64_t)or8[d]);
        if (e8 < 64u) prev[e8 / 8u][d] = or8[d];
        else diff[d] |= (H5FZ_T_WORD)(or8[d] ^ prev[e8 / 8u - 8u][d]);
      }
    }
    for (uint32_t d = 0; d < H5FZ_LND_NCOST; d++) c[d] += 2u * h5fz_popcount64((uint64_t)diff[d]);
  }
  h5fz_lnd_cost_end(blk, g, hist, raw, c, cost);
}

#if H5FZ_ON_GPU
/* h5fz_lnd_cost with a warp per sampled group: lane j takes its elements
 * 4j..4j+3; lanes 2i and 2i + 1 together hold the OR of the run of 8 i,
 * and the level-1 term is by shuffles between lanes j and j + 16. The
 * same sums (integer sums do not depend on the order); blk->nthreads must
 * be a multiple of 32. Why 4 elements a lane, not 8 or 128: a chunk's
 * sample is H5FZ_LND_COST_PARTS blocks, one per part, and the encode of a
 * single chunk (the filter's) waits for them; each lane's elements are a
 * chain of dependent loads and quantizations, so the shorter the chain the
 * sooner the pass ends (session 23: 8 elements a lane and 2 rounds a block
 * took 65 us of a 0.6 ms chunk encode). */
H5FZ_FN void H5FZ_TN(h5fz_lnd_cost_lanes)(const h5fz_blk *blk, const H5FZ_T_FLOAT *in, const H5FZ_T_WORD *qc,
                                          h5fz_lnd_geom g, const h5fz_quant_params *p, uint64_t k_lo, uint64_t k_hi,
                                          uint64_t T, uint32_t *hist, uint64_t cost[H5FZ_LND_NCOST])
{
  uint64_t c[H5FZ_LND_NCOST] = {0, 0, 0, 0}, raw[H5FZ_LND_NCOST] = {0, 0, 0, 0};
  const h5fz_lnd_effs eff = h5fz_lnd_eff_each(g);
  const uint32_t j = blk->tid & 31u;
  const uint64_t items = (k_hi - k_lo) * 32u;
  if (g.entropy) {
    for (uint32_t t = blk->tid; t < H5FZ_LND_NCOST * H5FZ_LND_CLASSES; t += blk->nthreads) hist[t] = 0;
    h5fz_blk_sync(blk);
  }
  for (uint64_t base = 0; base < items; base += blk->nthreads) { /* warp-uniform: the shuffles need every lane */
    const uint64_t it = base + blk->tid;
    const uint32_t active = it < items; /* the same on a warp's lanes: a warp is one group */
    const uint64_t g0 = h5fz_lnd_group_start(k_lo + it / 32u, T, g.n, g.interp) + 4u * j;
    H5FZ_T_WORD or4[H5FZ_LND_NCOST] = {0, 0, 0, 0}, qprev = 0;
    for (uint32_t e = 0; active && e < 4u && g0 + e < g.n; e++)
      H5FZ_TN(h5fz_lnd_or_resid)(in, qc, g, p, &eff, (uint32_t)(g0 + e), or4, g.entropy ? hist : (uint32_t *)0, raw,
                                 &qprev, e > 0);
    if (g.entropy) continue; /* h5fz_lnd_cost_end counts the histogram's bits, not the bit planes */
    for (uint32_t d = 0; d < H5FZ_LND_NCOST; d++) {
      const H5FZ_T_WORD or8 = (H5FZ_T_WORD)(or4[d] | __shfl_xor_sync(0xffffffffu, or4[d], 1));
      const H5FZ_T_WORD other = __shfl_xor_sync(0xffffffffu, or8, 16);
      H5FZ_T_WORD diff = j < 16u ? (H5FZ_T_WORD)(or8 ^ other) : (H5FZ_T_WORD)0;
      diff |= __shfl_xor_sync(0xffffffffu, diff, 2);
      diff |= __shfl_xor_sync(0xffffffffu, diff, 4);
      diff |= __shfl_xor_sync(0xffffffffu, diff, 8);
      if (active) {
        if (!(j & 1u)) c[d] += h5fz_popcount64((uint64_t)or8);
        if (j == 0) c[d] += 2u * h5fz_popcount64((uint64_t)diff);
      }
    }
  }
  h5fz_lnd_cost_end(blk, g, hist, raw, c, cost);
}
#endif

/* Decode, inside a sub-chunk: w (m_pad residual words) becomes the prefix
 * sums along x, each from the start of its x segment, or from the
 * sub-chunk's element 0 when the segment began in an earlier sub-chunk.
 * scratch: m_pad words. Thread 0 stores in aux[0] the last sum (of element
 * m - 1) and in aux[1] whether an x segment starts in the sub-chunk, for
 * h5fz_lnd_carry. Interpolation (predictor 4) leaves the residuals as they
 * are (its passes are chunk-wide) and aux zero. */
H5FZ_FN void H5FZ_TN(h5fz_lnd_xscan)(const h5fz_blk *blk, H5FZ_T_WORD *w, H5FZ_T_WORD *scratch, uint32_t m,
                                     uint32_t m_pad, unsigned long long first, h5fz_lnd_geom g, uint64_t *aux)
{
  if (g.dim == 4u) {
    if (blk->tid == 0) aux[0] = aux[1] = 0;
    return;
  }
  uint32_t ex, ey, lo, hi, f = (uint32_t)first;
  h5fz_lnd_eff(&g, &ex, &ey);
  H5FZ_TN(h5fz_delta_decode)(blk, w, scratch, m_pad); /* prefix sums of the sub-chunk */
  h5fz_blk_sync(blk);
  h5fz_blk_share_odd(blk, m_pad, &lo, &hi); /* odd shares: no bank conflicts */
  uint32_t off = lo < hi ? (f + lo) % ex : 0; /* position in the x segment */
  for (uint32_t i = lo; i < hi; i++) {
    uint32_t start = off > i ? 0u : i - off; /* the segment's first element in the sub-chunk */
    w[i] = (H5FZ_T_WORD)(scratch[i] - (start ? scratch[start - 1u] : (H5FZ_T_WORD)0));
    if (++off == ex) off = 0;
  }
  h5fz_blk_sync(blk);
  if (blk->tid == 0 && m) {
    uint32_t head = f % ex ? ex - f % ex : 0u;
    aux[0] = (uint64_t)w[m - 1u];
    aux[1] = head < m ? 1u : 0u;
  }
}

/* Decode: add the carry of h5fz_lnd_carry to the sub-chunk's first elements
 * (w = its m words) that belong to an x segment begun earlier. */
H5FZ_FN void H5FZ_TN(h5fz_lnd_xfix)(const h5fz_blk *blk, H5FZ_T_WORD *w, uint32_t m, unsigned long long first,
                                    h5fz_lnd_geom g, uint64_t carry)
{
  uint32_t ex, ey, lo, hi, f = (uint32_t)first;
  h5fz_lnd_eff(&g, &ex, &ey);
  uint32_t head = f % ex ? ex - f % ex : 0u;
  if (head > m) head = m;
  h5fz_blk_share(blk, head, 1u, &lo, &hi);
  for (uint32_t i = lo; i < hi; i++) w[i] = (H5FZ_T_WORD)(w[i] + (H5FZ_T_WORD)carry);
}

/* Decode, the last step when the predictor is 1-D (no y or z pass):
 * h5fz_lnd_xfix and the quantizer decode in one pass, each word of the
 * sub-chunk (w, m words) becoming its value in place (outliers are
 * patched from the side section by the executor). Items strided over
 * the threads: coalesced on the GPU. */
H5FZ_FN void H5FZ_TN(h5fz_lnd_xfix_dequant)(const h5fz_blk *blk, H5FZ_T_WORD *w, uint32_t m, unsigned long long first,
                                            h5fz_lnd_geom g, uint64_t carry, const h5fz_quant_params *p)
{
  uint32_t ex, ey, f = (uint32_t)first;
  h5fz_lnd_eff(&g, &ex, &ey);
  uint32_t head = f % ex ? ex - f % ex : 0u;
  H5FZ_T_FLOAT *v = (H5FZ_T_FLOAT *)(void *)w;
  H5FZ_FOR_ITEMS(i, blk, m) {
    H5FZ_T_WORD x = (H5FZ_T_WORD)(w[i] + (i < head ? (H5FZ_T_WORD)carry : (H5FZ_T_WORD)0));
    v[i] = H5FZ_TN(h5fz_quant_value)(x, p);
  }
}

/* Decode, one pass along an axis (h5fz_lnd_axis), step 1: part[t] = the
 * sum of segment t of the words w (wrapping), eight loads at a time (a
 * segment of R = 32 words is then 4 round trips to memory; these kernels
 * run at a few warps an SM, so each thread's round trips are the time). */
H5FZ_FN void H5FZ_TN(h5fz_lnd_asum)(const H5FZ_T_WORD *w, h5fz_lnd_axis a, uint64_t t, H5FZ_T_WORD *part)
{
  uint64_t base;
  uint32_t lo, hi;
  h5fz_lnd_axis_segment(&a, t, &base, &lo, &hi);
  hi = h5fz_lnd_axis_seg_end(&a, base, lo, hi);
  const H5FZ_T_WORD *at = w + base + (uint64_t)lo * a.S;
  H5FZ_T_WORD acc = 0;
  uint32_t i = lo;
  const uint64_t S = a.S;
  for (; i + 8u <= hi; i += 8u, at += 8u * S) {
    H5FZ_T_WORD x[8];
    for (uint32_t k = 0; k < 8u; k++) x[k] = at[k * S];
    for (uint32_t k = 0; k < 8u; k++) acc = (H5FZ_T_WORD)(acc + x[k]);
  }
  for (; i < hi; i++, at += S) acc = (H5FZ_T_WORD)(acc + *at);
  part[t] = acc;
}

/* h5fz_lnd_ascan's store of the sum x at w[at]: the word, or with p its
 * value. */
H5FZ_FN void H5FZ_TN(h5fz_lnd_ascan_put)(H5FZ_T_WORD *w, uint64_t at, H5FZ_T_WORD x, const h5fz_quant_params *p)
{
  if (p)
    ((H5FZ_T_FLOAT *)(void *)w)[at] = H5FZ_TN(h5fz_quant_value)(x, p);
  else
    w[at] = x;
}

/* ... step 2: the prefix sums of segment t in place, from its offset: the
 * sum of the segment sums of its line before it (part[t - S], part[t - 2
 * S], ...; part may be NULL when a line is one segment); with p (the last
 * pass), each word becomes its value in place instead (outliers are
 * patched from the side section by the executor). Why the offset is
 * summed here: a kernel of its own that scanned each line's sums, a
 * thread a line, took 18 us of a 4.7 MiB chunk's decode on the H200
 * (session 25), a chain of dependent loads and stores; these loads are
 * independent, at most nseg - 1 <= R of them beside the R words. Eight
 * words loaded before the first is summed (their addresses differ: S >=
 * 1), as in h5fz_lnd_asum. */
H5FZ_FN void H5FZ_TN(h5fz_lnd_ascan)(H5FZ_T_WORD *w, h5fz_lnd_axis a, uint64_t t, const H5FZ_T_WORD *part,
                                     const h5fz_quant_params *p)
{
  uint64_t base;
  uint32_t lo, hi;
  h5fz_lnd_axis_segment(&a, t, &base, &lo, &hi);
  hi = h5fz_lnd_axis_seg_end(&a, base, lo, hi);
  const uint64_t S = a.S;
  H5FZ_T_WORD acc = 0;
  if (part && lo) { /* the segments before this one on its line: seg = lo / R of them */
    const H5FZ_T_WORD *before = part + t;
    uint32_t k = lo / a.R;
    H5FZ_T_WORD s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    for (; k >= 4u; k -= 4u, before -= 4u * S) {
      s0 = (H5FZ_T_WORD)(s0 + before[-(int64_t)S]);
      s1 = (H5FZ_T_WORD)(s1 + before[-2 * (int64_t)S]);
      s2 = (H5FZ_T_WORD)(s2 + before[-3 * (int64_t)S]);
      s3 = (H5FZ_T_WORD)(s3 + before[-4 * (int64_t)S]);
    }
    for (; k > 0u; k--, before -= S) s0 = (H5FZ_T_WORD)(s0 + before[-(int64_t)S]);
    acc = (H5FZ_T_WORD)((H5FZ_T_WORD)(s0 + s1) + (H5FZ_T_WORD)(s2 + s3));
  }
  uint64_t at = base + (uint64_t)lo * S;
  uint32_t i = lo;
  for (; i + 8u <= hi; i += 8u, at += 8u * S) {
    H5FZ_T_WORD x[8];
    for (uint32_t k = 0; k < 8u; k++) x[k] = w[at + k * S];
    for (uint32_t k = 0; k < 8u; k++) {
      acc = (H5FZ_T_WORD)(acc + x[k]);
      x[k] = acc;
    }
    for (uint32_t k = 0; k < 8u; k++) H5FZ_TN(h5fz_lnd_ascan_put)(w, at + k * S, x[k], p);
  }
  for (; i < hi; i++, at += S) {
    acc = (H5FZ_T_WORD)(acc + w[at]);
    H5FZ_TN(h5fz_lnd_ascan_put)(w, at, acc, p);
  }
}

/* Decode: prefix sums along y of columns [c_lo, c_hi) of plane `plane`,
 * row after row (w = the chunk's words). */
H5FZ_FN void H5FZ_TN(h5fz_lnd_yscan)(H5FZ_T_WORD *w, h5fz_lnd_geom g, uint32_t plane, uint32_t c_lo, uint32_t c_hi)
{
  uint32_t ex, ey;
  h5fz_lnd_eff(&g, &ex, &ey);
  uint64_t base = (uint64_t)plane * ex * ey;
  for (uint32_t t = 1; t < ey; t++) {
    uint64_t row = base + (uint64_t)t * ex;
    if (row >= g.n) break;
    uint64_t hi = g.n - row < c_hi ? g.n - row : c_hi;
    for (uint64_t c = c_lo; c < hi; c++) w[row + c] = (H5FZ_T_WORD)(w[row + c] + w[row + c - ex]);
  }
}

/* Decode: prefix sums along z of plane positions [c_lo, c_hi), plane after
 * plane. */
H5FZ_FN void H5FZ_TN(h5fz_lnd_zscan)(H5FZ_T_WORD *w, h5fz_lnd_geom g, uint32_t c_lo, uint32_t c_hi)
{
  uint32_t ex, ey;
  h5fz_lnd_eff(&g, &ex, &ey);
  uint64_t P = (uint64_t)ex * ey;
  for (uint64_t base = P; base < g.n; base += P) {
    uint64_t hi = g.n - base < c_hi ? g.n - base : c_hi;
    for (uint64_t c = c_lo; c < hi; c++) w[base + c] = (H5FZ_T_WORD)(w[base + c] + w[base + c - P]);
  }
}
