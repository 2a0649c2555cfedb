/*
 * op_lnd_interp.h - the interpolation predictor of lorenzo_interp (chunk
 * format version 5): multilevel linear interpolation of the quantizer's
 * bins over the chunk's 3-D shape, the fourth predictor (D = 4) beside
 * lorenzo_nd's three, chosen per chunk by the same cost pass. docs/format.md
 * section 5.9 defines it; op_lorenzo_nd.h includes this file (its geometry,
 * its quantizer access) and dispatches to it where the predictor is 4.
 *
 * Why on the bins (a fixed grid) and not on reconstructed values as SZ3
 * does: every element's bin depends on its own value only, so a chunk
 * written in parts keeps every old value's bin and bound (spec.md section
 * 6); predicting from reconstructions would move a value's prediction when
 * a neighbour is written again.
 *
 * The chunk is a box of Z planes of Y rows of X elements (lorenzo_nd's D =
 * 3 geometry: X the last dim, Y the second-last, slower dims folded into
 * the planes; elements at or past n do not exist). Element (z, y, x) other
 * than the origin has the stride s = the lowest set bit of z | y | x and
 * the axis a = the last of z, y, x whose coordinate has bit s set; it is
 * predicted from its neighbours at -s and +s along a (the +s one only when
 * it exists), both of which have their coordinate along a a multiple of 2s
 * and so come earlier in the decode order: s from the largest down to 1,
 * and for each s the axes z, y, x. The prediction of two neighbours is
 * their mean rounded up, floor((qa + qb + 1) / 2), in wrapping word
 * arithmetic (h5fz_lni_mean); of one, that neighbour; the origin's is 0.
 * The residual is q - prediction (wrapping), so the decode is exact: pass
 * by pass, each element of a pass adds its prediction from words already
 * final.
 */

#ifndef H5FZ_LNI_COMMON
#define H5FZ_LNI_COMMON

/* The predictor value of interpolation in the chunk header's byte 35 and
 * in h5fz_lnd_geom.dim. */
#define H5FZ_LNI_PREDICTOR 4u

/* Planes of the box (the last one may be partial). */
H5FZ_FN uint32_t h5fz_lni_planes(const h5fz_lnd_geom *g)
{
  uint32_t P = g->x * g->y;
  return P ? (g->n + P - 1u) / P : 0u;
}

/* Element j's neighbours: returns 0 for the origin (no prediction), 1 when
 * only *ja exists, 2 when *ja and *jb do. */
H5FZ_FN uint32_t h5fz_lni_taps(const h5fz_lnd_geom *g, uint32_t j, uint32_t *ja, uint32_t *jb)
{
  const uint32_t X = g->x, P = g->x * g->y;
  const uint32_t x = j % X, y = j / X % g->y, z = j / P;
  const uint32_t v = x | y | z;
  if (!v) return 0u;
  const uint32_t s = v & (0u - v);
  uint32_t t, c, E;
  if (x & s) {
    t = 1u;
    c = x;
    E = X;
  } else if (y & s) {
    t = X;
    c = y;
    E = g->y;
  } else {
    t = P;
    c = z;
    E = h5fz_lni_planes(g);
  }
  *ja = j - s * t; /* s t <= c t <= j */
  if (c + s < E && (uint64_t)j + (uint64_t)s * t < g->n) {
    *jb = j + s * t;
    return 2u;
  }
  return 1u;
}

/* The decode's passes: pass (s, a) holds the elements of stride s and
 * axis a (0 = z, 1 = y, 2 = x). Its elements lie on a lattice: along a the
 * odd multiples of s, along the axes before a the multiples of s, along
 * those after a the multiples of 2s (h5fz_lni_lattice); j >= n are skipped. */
typedef struct {
  uint32_t cnt[3];  /* lattice points along z, y, x */
  uint32_t step[3]; /* coordinate step along each */
  uint32_t off[3];  /* coordinate of the first point along each */
  uint32_t s;       /* the pass's stride */
  uint32_t a;       /* its axis: 0 = z, 1 = y, 2 = x */
  uint32_t stride;  /* elements between neighbours along a, before the factor s: X Y, X or 1 */
  uint32_t extent;  /* the box's extent along a: Z, Y or X */
} h5fz_lni_lattice;

/* The lattice of pass (s, a); returns its point count (0: the pass is empty). */
H5FZ_FN uint64_t h5fz_lni_lattice_make(const h5fz_lnd_geom *g, uint32_t s, uint32_t a, h5fz_lni_lattice *l)
{
  const uint32_t E[3] = {h5fz_lni_planes(g), g->y, g->x};
  uint64_t total = 1;
  l->s = s;
  l->a = a;
  l->stride = a == 0u ? g->x * g->y : a == 1u ? g->x : 1u;
  l->extent = E[a];
  for (uint32_t e = 0; e < 3u; e++) {
    if (e == a) {
      l->off[e] = s;
      l->step[e] = 2u * s;
      l->cnt[e] = E[e] > s ? (E[e] - s + 2u * s - 1u) / (2u * s) : 0u;
    } else {
      const uint32_t st = e < a ? s : 2u * s;
      l->off[e] = 0u;
      l->step[e] = st;
      l->cnt[e] = (E[e] + st - 1u) / st;
    }
    total *= l->cnt[e];
  }
  return total;
}

/* The chunk element of lattice point t (t below the point count, which is
 * below n), or n (past the chunk) when there is none; *c_a: its coordinate
 * along the pass's axis. 32-bit arithmetic: the GPU runs it a point a
 * thread, and 64-bit divisions cost it several times more. */
H5FZ_FN uint32_t h5fz_lni_lattice_at(const h5fz_lnd_geom *g, const h5fz_lni_lattice *l, uint32_t t, uint32_t *c_a)
{
  const uint32_t ix = t % l->cnt[2], rest = t / l->cnt[2];
  const uint32_t iy = rest % l->cnt[1], iz = rest / l->cnt[1];
  const uint32_t cz = l->off[0] + iz * l->step[0], cy = l->off[1] + iy * l->step[1], cx = l->off[2] + ix * l->step[2];
  *c_a = l->a == 0u ? cz : l->a == 1u ? cy : cx;
  const uint64_t j = ((uint64_t)cz * g->y + cy) * g->x + cx;
  return j < g->n ? (uint32_t)j : g->n;
}

/* The largest stride of the box: the highest power of two below its
 * longest side (0: a box of one element, no pass). The decode runs the
 * passes for s = h5fz_lni_top_stride, s / 2, ..., 1. */
H5FZ_FN uint32_t h5fz_lni_top_stride(const h5fz_lnd_geom *g)
{
  uint32_t E = h5fz_lni_planes(g);
  if (g->y > E) E = g->y;
  if (g->x > E) E = g->x;
  if (E <= 1u) return 0u;
  uint32_t s = 1u;
  while (2u * s < E) s *= 2u; /* E < 2^31 */
  return s;
}

#endif /* H5FZ_LNI_COMMON */

/* ---- per word width ----------------------------------------------------- */

/* floor((a + b + 1) / 2) of two words read as signed, in wrapping word
 * arithmetic: each halved by an arithmetic shift (written out: the C shift
 * of a negative value is the implementation's), plus the carry of their low
 * bits. */
H5FZ_FN H5FZ_T_WORD H5FZ_TN(h5fz_lni_mean)(H5FZ_T_WORD a, H5FZ_T_WORD b)
{
  const H5FZ_T_WORD top = (H5FZ_T_WORD)1 << (H5FZ_T_BITS - 1u);
  return (H5FZ_T_WORD)(((a >> 1) | (a & top)) + ((b >> 1) | (b & top)) + ((a | b) & 1u));
}

/* q of chunk element j for the encode: from the sub-chunk's words qloc
 * (elements first..first + valid, when qloc is given), else from the
 * chunk's words qc (when given), else quantized again from the chunk's
 * values in. */
H5FZ_FN H5FZ_T_WORD H5FZ_TN(h5fz_lni_q)(const H5FZ_T_WORD *qloc, uint32_t first, uint32_t valid,
                                        const H5FZ_T_FLOAT *in, const H5FZ_T_WORD *qc, const h5fz_quant_params *p,
                                        uint32_t j)
{
  if (qloc && j >= first && j - first < valid) return qloc[j - first];
  if (qc) return qc[j];
  return H5FZ_TN(h5fz_quant_word)(in[j], p);
}

/* Encode: the residual of chunk element j (h5fz_lni_q's sources). */
H5FZ_FN H5FZ_T_WORD H5FZ_TN(h5fz_lni_resid)(const H5FZ_T_WORD *qloc, uint32_t first, uint32_t valid,
                                            const H5FZ_T_FLOAT *in, const H5FZ_T_WORD *qc,
                                            const h5fz_quant_params *p, const h5fz_lnd_geom *g, uint32_t j)
{
  uint32_t ja = 0, jb = 0, k = h5fz_lni_taps(g, j, &ja, &jb);
  H5FZ_T_WORD q = H5FZ_TN(h5fz_lni_q)(qloc, first, valid, in, qc, p, j), pred = 0;
  if (k) {
    H5FZ_T_WORD qa = H5FZ_TN(h5fz_lni_q)(qloc, first, valid, in, qc, p, ja);
    pred = k == 2u ? H5FZ_TN(h5fz_lni_mean)(qa, H5FZ_TN(h5fz_lni_q)(qloc, first, valid, in, qc, p, jb)) : qa;
  }
  return (H5FZ_T_WORD)(q - pred);
}

/* Decode, pass (s, a) (h5fz_lni_lattice l): lattice point t gets its
 * prediction added, in place in the chunk's words w, its neighbours along
 * the pass's axis found from the lattice (h5fz_lni_taps' result without
 * its divisions). */
H5FZ_FN void H5FZ_TN(h5fz_lni_point)(H5FZ_T_WORD *w, const h5fz_lnd_geom *g, const h5fz_lni_lattice *l, uint32_t t)
{
  uint32_t c;
  const uint32_t j = h5fz_lni_lattice_at(g, l, t, &c);
  if (j >= g->n) return;
  const uint32_t d = l->s * l->stride; /* <= j: c >= s */
  const H5FZ_T_WORD qa = w[j - d];
  const int has_b = c + l->s < l->extent && (uint64_t)j + d < g->n;
  w[j] = (H5FZ_T_WORD)(w[j] + (has_b ? H5FZ_TN(h5fz_lni_mean)(qa, w[j + d]) : qa));
}

/* ... points [t_lo, t_hi) (the points of one pass read only words of
 * earlier passes: any order, any split). */
H5FZ_FN void H5FZ_TN(h5fz_lni_pass)(H5FZ_T_WORD *w, const h5fz_lnd_geom *g, const h5fz_lni_lattice *l, uint32_t t_lo,
                                    uint32_t t_hi)
{
  for (uint32_t t = t_lo; t < t_hi; t++) H5FZ_TN(h5fz_lni_point)(w, g, l, t);
}

/* Decode: every pass in order over the chunk's residual words w (one
 * thread: the CPU's form); they become the quantizer's words. */
H5FZ_FN void H5FZ_TN(h5fz_lni_decode)(H5FZ_T_WORD *w, const h5fz_lnd_geom *g)
{
  for (uint32_t s = h5fz_lni_top_stride(g); s >= 1u; s /= 2u)
    for (uint32_t a = 0; a < 3u; a++) {
      h5fz_lni_lattice l;
      uint64_t cnt = h5fz_lni_lattice_make(g, s, a, &l);
      if (cnt) H5FZ_TN(h5fz_lni_pass)(w, g, &l, 0, (uint32_t)cnt);
    }
}
