/*
 * test_cpu_fast.c - the CPU fast forms of the ops (device_ops/op_*_cpu.c)
 * write exactly the bytes of their reference twins (device_ops/op_*.h) run
 * with the one-thread block, on random and structured inputs of many sizes:
 * bitshuffle (32/64), RZE encode (including the NOT_SMALLER decision and
 * small caps) and decode (including corrupt streams: same -1 cases, same
 * bytes otherwise), the quantizer (specials, eb = 0, padding) and the word
 * transforms, fused and not; the fused decode of the default chain's word
 * ops (bit planes -> values) against the reference ops in turn.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../device_ops/h5fz_ops.h"
#include "h5fz.h"
#include "op_bitshuffle_cpu.h"
#include "op_delta_cpu.h"
#include "op_fused_decode_cpu.h"
#include "op_negabinary_cpu.h"
#include "op_quant_cpu.h"
#include "op_rze_cpu.h"
#include "op_zigzag_cpu.h"

static const h5fz_blk blk = {0u, 1u, NULL};
#define CORE_RNG_SEED 0x243f6a8885a308d3ull
#define CORE_MAX_PRINTED 30
#include "core_check.h"

enum { PAT_ZERO, PAT_ONES, PAT_RANDOM, PAT_SPARSE, PAT_SMALL, PAT_RUNS, PAT_RAMP, N_PAT };
static const char *pat_name[N_PAT] = {"zeros", "all-ones", "random", "sparse", "small", "runs", "ramp"};

static uint64_t pattern_word(int pat, uint32_t i, unsigned bits)
{
  uint64_t mask = bits == 64 ? ~0ull : (1ull << bits) - 1u;
  switch (pat) {
  case PAT_ZERO: return 0;
  case PAT_ONES: return mask;
  case PAT_RANDOM: return rnd() & mask;
  case PAT_SPARSE: return (rnd() % 97u == 0) ? (rnd() & mask) : 0;
  case PAT_SMALL: return (rnd() & 0x1fu) & mask;
  case PAT_RUNS: return ((i / 37u) % 3u == 0) ? (rnd() & mask) : ((i / 37u) % 3u == 1 ? mask : 0);
  default: return ((uint64_t)i * 2654435761u) & mask & 0xfffffu;
  }
}

/* Word counts: 64..16384 in steps, plus a few multiples of 8 that are not
 * multiples of 64 (the ops allow them). */
static uint32_t sizes[64];
static int n_sizes;
static void make_sizes(void)
{
  for (uint32_t n = 64; n <= 1024; n += 64) sizes[n_sizes++] = n;
  for (uint32_t n = 1536; n <= 16384; n += 1536) sizes[n_sizes++] = n;
  sizes[n_sizes++] = 16384;
  sizes[n_sizes++] = 8;
  sizes[n_sizes++] = 24;
  sizes[n_sizes++] = 72;
  sizes[n_sizes++] = 1000;
}

static void test_bitshuffle(void)
{
  size_t maxb = 16384u * 8u;
  uint8_t *words = malloc(maxb), *ref = malloc(maxb), *got = malloc(maxb);
  uint8_t *back_ref = malloc(maxb), *back_got = malloc(maxb);
  for (int s = 0; s < n_sizes; s++)
    for (int pat = 0; pat < N_PAT; pat++)
      for (unsigned wide = 0; wide < 2; wide++) {
        uint32_t n = sizes[s], bytes = n * (wide ? 8u : 4u);
        for (uint32_t i = 0; i < n; i++) {
          if (wide)
            ((uint64_t *)words)[i] = pattern_word(pat, i, 64);
          else
            ((uint32_t *)words)[i] = (uint32_t)pattern_word(pat, i, 32);
        }
        memset(ref, 0xa5, bytes);
        memset(got, 0x5a, bytes);
        if (wide) {
          h5fz_bitshuffle_encode_64(&blk, (const uint64_t *)words, ref, n);
          h5fz_fast_bitshuffle_encode_64((const uint64_t *)words, got, n);
        } else {
          h5fz_bitshuffle_encode_32(&blk, (const uint32_t *)words, ref, n);
          h5fz_fast_bitshuffle_encode_32((const uint32_t *)words, got, n);
        }
        CHECK(!memcmp(ref, got, bytes), "bitshuffle encode_%u n=%u %s", wide ? 64 : 32, n, pat_name[pat]);
        /* decode of arbitrary planes too: use random bytes half the time */
        if (pat == PAT_RANDOM)
          for (uint32_t i = 0; i < bytes; i++) ref[i] = (uint8_t)rnd();
        memset(back_ref, 0xa5, bytes);
        memset(back_got, 0x5a, bytes);
        if (wide) {
          h5fz_bitshuffle_decode_64(&blk, ref, (uint64_t *)back_ref, n);
          h5fz_fast_bitshuffle_decode_64(ref, (uint64_t *)back_got, n);
        } else {
          h5fz_bitshuffle_decode_32(&blk, ref, (uint32_t *)back_ref, n);
          h5fz_fast_bitshuffle_decode_32(ref, (uint32_t *)back_got, n);
        }
        CHECK(!memcmp(back_ref, back_got, bytes), "bitshuffle decode_%u n=%u %s", wide ? 64 : 32, n, pat_name[pat]);
      }
  free(words);
  free(ref);
  free(got);
  free(back_ref);
  free(back_got);
}

/* RZE on in[0..L): encode with both, compare; decode the stream with both,
 * compare; then corrupt it in several ways and compare again. */
static void rze_case(const uint8_t *in, uint32_t L, const char *what)
{
  uint32_t sb = h5fz_rze_scratch_bytes(L) + 64u, cap_full = L + 64u;
  uint8_t *s1 = malloc(sb), *s2 = malloc(sb);
  uint8_t *e1 = malloc(cap_full), *e2 = malloc(cap_full);
  uint8_t *d1 = malloc(L + 1u), *d2 = malloc(L + 1u), *bad = malloc(cap_full);
  uint32_t caps[3] = {L, L / 2u, L / 8u + 3u};
  for (int c = 0; c < 3; c++) {
    uint32_t cap = caps[c];
    memset(e1, 0x11, cap_full);
    memset(e2, 0x11, cap_full);
    uint32_t r1 = h5fz_rze_encode(&blk, in, L, e1, cap, s1);
    uint32_t r2 = h5fz_fast_rze_encode(in, L, e2, cap, s2);
    CHECK(r1 == r2, "rze encode %s L=%u cap=%u: size %u vs %u", what, L, cap, r1, r2);
    if (r1 != r2 || r1 == H5FZ_RZE_NOT_SMALLER) continue;
    CHECK(!memcmp(e1, e2, r1), "rze encode %s L=%u cap=%u: bytes differ", what, L, cap);
    CHECK(!memcmp(e1 + r1, e2 + r1, cap_full - r1) || r1 + 64u > cap_full, "rze encode %s L=%u: wrote past the size",
          what, L);
  }
  uint32_t size = h5fz_rze_encode(&blk, in, L, e1, L + 64u, s1);
  if (size == H5FZ_RZE_NOT_SMALLER) { /* force a stream anyway: all data kept */
    size = 0;
  }
  if (size) {
    int a = h5fz_rze_decode(&blk, e1, size, d1, L, s1);
    int b = h5fz_fast_rze_decode(e1, size, d2, L, s2);
    CHECK(a == 0 && b == 0 && !memcmp(d1, d2, L) && !memcmp(d1, in, L), "rze decode %s L=%u: rc %d/%d", what, L, a, b);
    /* corrupt streams: flipped bytes, truncated, extended */
    for (int t = 0; t < 24; t++) {
      uint32_t bsize = size;
      memcpy(bad, e1, size);
      if (t < 12) {
        uint32_t at = (uint32_t)(rnd() % size);
        bad[at] ^= (uint8_t)(1u << (rnd() % 8u));
        if (t & 1) bad[(uint32_t)(rnd() % size)] = (uint8_t)rnd();
      } else if (t < 16) {
        bsize = size - 1u - (uint32_t)(rnd() % (size < 8u ? size : 8u));
        if (bsize > size) bsize = 0;
      } else if (t < 20) {
        uint32_t more = 1u + (uint32_t)(rnd() % 8u);
        for (uint32_t k = 0; k < more; k++) bad[size + k] = (uint8_t)rnd();
        bsize = size + more;
      } else {
        uint32_t at = (uint32_t)(rnd() % (size < 70u ? size : 70u)); /* the top bitmap */
        bad[at] = (uint8_t)rnd();
      }
      memset(d1, 0x33, L);
      memset(d2, 0x33, L);
      int ra = h5fz_rze_decode(&blk, bad, bsize, d1, L, s1);
      int rb = h5fz_fast_rze_decode(bad, bsize, d2, L, s2);
      CHECK(ra == rb, "rze corrupt decode %s L=%u case %d: rc %d vs %d", what, L, t, ra, rb);
      if (ra == 0 && rb == 0) CHECK(!memcmp(d1, d2, L), "rze corrupt decode %s L=%u case %d: bytes", what, L, t);
    }
  }
  /* garbage of random length */
  for (int t = 0; t < 4; t++) {
    uint32_t gsize = (uint32_t)(rnd() % (L + 1u));
    for (uint32_t k = 0; k < gsize; k++) bad[k] = (t & 1) ? (uint8_t)rnd() : (uint8_t)(rnd() & rnd() & rnd());
    int ra = h5fz_rze_decode(&blk, bad, gsize, d1, L, s1);
    int rb = h5fz_fast_rze_decode(bad, gsize, d2, L, s2);
    CHECK(ra == rb, "rze garbage decode %s L=%u size=%u: rc %d vs %d", what, L, gsize, ra, rb);
    if (ra == 0 && rb == 0) CHECK(!memcmp(d1, d2, L), "rze garbage decode %s L=%u: bytes", what, L);
  }
  free(s1);
  free(s2);
  free(e1);
  free(e2);
  free(d1);
  free(d2);
  free(bad);
}

static void test_rze(void)
{
  size_t maxb = 16384u * 8u;
  uint8_t *words = malloc(maxb), *shuf = malloc(maxb);
  char what[64];
  /* bitshuffled words, as the chain feeds RZE */
  for (int s = 0; s < n_sizes; s++)
    for (int pat = 0; pat < N_PAT; pat++)
      for (unsigned wide = 0; wide < 2; wide++) {
        uint32_t n = sizes[s], bytes = n * (wide ? 8u : 4u);
        for (uint32_t i = 0; i < n; i++) {
          if (wide)
            ((uint64_t *)words)[i] = pattern_word(pat, i, 64);
          else
            ((uint32_t *)words)[i] = (uint32_t)pattern_word(pat, i, 32);
        }
        if (wide)
          h5fz_bitshuffle_encode_64(&blk, (const uint64_t *)words, shuf, n);
        else
          h5fz_bitshuffle_encode_32(&blk, (const uint32_t *)words, shuf, n);
        snprintf(what, sizeof what, "shuffled %s w%u", pat_name[pat], wide ? 64 : 32);
        rze_case(shuf, bytes, what);
        snprintf(what, sizeof what, "plain %s w%u", pat_name[pat], wide ? 64 : 32);
        rze_case(words, bytes, what);
      }
  /* odd lengths, byte patterns */
  for (uint32_t L = 1; L <= 700; L += (L < 80 ? 1 : 37))
    for (int pat = 0; pat < N_PAT; pat++) {
      for (uint32_t i = 0; i < L; i++) words[i] = (uint8_t)pattern_word(pat, i, 8);
      snprintf(what, sizeof what, "bytes %s", pat_name[pat]);
      rze_case(words, L, what);
    }
  free(words);
  free(shuf);
}

static double special(uint64_t r)
{
  switch (r % 12u) {
  case 0: return NAN;
  case 1: return INFINITY;
  case 2: return -INFINITY;
  case 3: return -0.0;
  case 4: return 0.0;
  case 5: return 1e300;
  case 6: return 5e-324;
  case 7: return 1.5e-45;
  case 8: return -3.4e38;
  case 9: return 1e10;
  default: return ((double)(int64_t)rnd()) * 0x1p-60;
  }
}

/* h5fz_bin_f32 is rint of the exact product x * inv_step (docs/format.md
 * 5.4). The rounded product p = x * inv_step and the exact one can only
 * round to different bins when p is exactly a half-integer (p is the exact
 * product rounded, and half-integers below 2^51 are doubles): then the sign
 * of the product's error e = fma(x, inv_step, -p) decides. Step sizes
 * aimed at half-integers make such cases; the test fails if none came up. */
static void test_bin_f32(void)
{
  unsigned ties = 0, ties_moved = 0;
  for (unsigned t = 0; t < 2000000u; t++) {
    float x = (float)((double)(int64_t)(rnd() >> 11) * 0x1p-40);
    if (x == 0) continue;
    double k = (double)(int64_t)(rnd() % 2000001u) - 1000000.0, inv;
    if (t % 2u)
      inv = (k + 0.5) / (double)x; /* a product near a half-integer */
    else
      inv = ldexp(1.0 + (double)(rnd() >> 12) * 0x1p-52, (int)(rnd() % 40u) - 20);
    double p = (double)x * inv, e = fma((double)x, inv, -p), want = rint(p);
    if (fabs(p) < 0x1p50 && p - floor(p) == 0.5) {
      ties++;
      if (e != 0) {
        want = e > 0 ? floor(p) + 1.0 : floor(p);
        ties_moved += want != rint(p);
      }
    }
    if (fabs(p) < 0x1p50)
      CHECK(h5fz_bin_f32((double)x, inv) == want, "bin of %.9g * %.17g: %.17g, want %.17g", x, inv,
            h5fz_bin_f32((double)x, inv), want);
  }
  CHECK(ties_moved > 100, "only %u of %u half-integer products moved to the other bin: the test misses its case",
        ties_moved, ties);
}

static void test_quant(void)
{
  uint32_t nmax = 16384;
  float *f = malloc(nmax * 4u);
  double *d = malloc(nmax * 8u);
  uint64_t *w1 = malloc(nmax * 8u), *w2 = malloc(nmax * 8u);
  uint32_t *p1 = malloc(nmax * 4u), *p2 = malloc(nmax * 4u);
  uint64_t *v1 = malloc(nmax * 8u), *v2 = malloc(nmax * 8u);
  double ebs[] = {1e-3, 0.5, 1e-7, 3.0e-5, 0.0, 1e-300, 1e30, 0.1};
  const int modes[3] = {H5FZ_QMODE_ABS, H5FZ_QMODE_PW_REL, H5FZ_QMODE_LOSSLESS};
  for (int s = 0; s < n_sizes; s++)
    for (unsigned e = 0; e < sizeof ebs / sizeof ebs[0]; e++)
      for (int kind = 0; kind < 4 * 3; kind++) {
        int mode = modes[kind / 4];
        uint32_t m_pad = sizes[s] < 64 ? 64 : sizes[s], m = m_pad - (uint32_t)(rnd() % 64u);
        if (kind % 4 == 3) m = m_pad;
        if (mode != H5FZ_QMODE_ABS && s % 4 != 0) continue; /* the reference map: fewer sizes */
        double phase = (double)(rnd() % 1000u);
        for (uint32_t i = 0; i < m; i++) {
          double x;
          if (kind % 4 == 0)
            x = sin(0.01 * i + phase) * 100.0;
          else if (kind % 4 == 1)
            x = ((double)(int64_t)rnd()) * 0x1p-40;
          else
            x = (rnd() % 5u == 0) ? special(rnd()) : (double)(rnd() % 2000u) * 1e-4 - 0.1;
          if (kind % 4 == 3 && i % 7u == 0) { /* exact bit patterns */
            uint64_t b = rnd();
            memcpy(&x, &b, 8);
          }
          d[i] = x;
          f[i] = (float)x;
          if (kind % 4 == 3 && i % 11u == 0) {
            uint32_t b = (uint32_t)rnd();
            memcpy(&f[i], &b, 4);
          }
        }
        for (unsigned wide = 0; wide < 2; wide++) {
          /* the fill word's value: the canonical NaN, a value of the data,
           * -0.0 (which escapes otherwise) */
          uint64_t fill;
          if (e % 3u == 0)
            fill = wide ? 0x7ff8000000000000ull : 0x7fc00000u;
          else if (e % 3u == 1 && wide)
            memcpy(&fill, &d[m / 2u], 8);
          else if (e % 3u == 1)
            fill = h5fz_float_bits_32(f[m / 2u]);
          else
            fill = wide ? 0x8000000000000000ull : 0x80000000u;
          h5fz_quant_params q = h5fz_quant_params_make(mode, ebs[e], fill);
          memset(w1, 0x77, m_pad * 8u);
          memset(w2, 0x66, m_pad * 8u);
          uint32_t c1, c2;
          if (wide) {
            c1 = h5fz_quant_encode_64(&blk, d, m, m_pad, &q, w1, p1, v1);
            c2 = h5fz_fast_quant_encode_64(d, m, m_pad, &q, w2, p2, v2);
          } else {
            c1 = h5fz_quant_encode_32(&blk, f, m, m_pad, &q, (uint32_t *)w1, p1, (uint32_t *)v1);
            c2 = h5fz_fast_quant_encode_32(f, m, m_pad, &q, (uint32_t *)w2, p2, (uint32_t *)v2);
          }
          uint32_t es = wide ? 8u : 4u;
          CHECK(c1 == c2, "quant_%u encode m=%u eb=%g kind=%d: %u vs %u outliers", wide ? 64 : 32, m, q.eb, kind, c1,
                c2);
          CHECK(!memcmp(w1, w2, m_pad * es), "quant_%u encode m=%u eb=%g kind=%d: words", wide ? 64 : 32, m, q.eb,
                kind);
          if (c1 == c2) {
            CHECK(!memcmp(p1, p2, c1 * 4u) && !memcmp(v1, v2, c1 * es),
                  "quant_%u encode m=%u eb=%g kind=%d: outlier list", wide ? 64 : 32, m, q.eb, kind);
          }
          /* decode of any words, including huge bins */
          if (kind % 4 == 1)
            for (uint32_t i = 0; i < m_pad; i++) w1[i] = rnd();
          memset(v1, 0x12, m_pad * 8u);
          memset(v2, 0x12, m_pad * 8u);
          if (wide) {
            h5fz_quant_decode_64(&blk, w1, m, &q, (double *)v1);
            h5fz_fast_quant_decode_64(w1, m, &q, (double *)v2);
          } else {
            h5fz_quant_decode_32(&blk, (uint32_t *)w1, m, &q, (float *)v1);
            h5fz_fast_quant_decode_32((uint32_t *)w1, m, &q, (float *)v2);
          }
          CHECK(!memcmp(v1, v2, m_pad * 8u), "quant_%u decode m=%u eb=%g kind=%d", wide ? 64 : 32, m, q.eb, kind);
        }
      }
  free(f);
  free(d);
  free(w1);
  free(w2);
  free(p1);
  free(p2);
  free(v1);
  free(v2);
}

static void ref_transform(uint8_t op, int enc, unsigned wide, const void *in, void *out, uint32_t n)
{
#define R(name) (wide ? name##_64(&blk, in, out, n) : name##_32(&blk, in, out, n))
  switch (op) {
  case H5FZ_OP_DELTA: enc ? R(h5fz_delta_encode) : R(h5fz_delta_decode); break;
  case H5FZ_OP_ZIGZAG: enc ? R(h5fz_zigzag_encode) : R(h5fz_zigzag_decode); break;
  default: enc ? R(h5fz_negabinary_encode) : R(h5fz_negabinary_decode); break;
  }
#undef R
}

/* The fast form of the same: op's own function; fused (a delta then op, or
 * the inverse), the fused pass. */
static void fast_transform(uint8_t op, int enc, int fused, unsigned wide, const void *in, void *out, uint32_t n)
{
#define F(name) (wide ? name##_64(in, out, n) : name##_32(in, out, n))
  if (fused && op == H5FZ_OP_ZIGZAG)
    enc ? F(h5fz_fast_delta_zigzag_encode) : F(h5fz_fast_delta_zigzag_decode);
  else if (fused)
    enc ? F(h5fz_fast_delta_negabinary_encode) : F(h5fz_fast_delta_negabinary_decode);
  else if (op == H5FZ_OP_DELTA)
    enc ? F(h5fz_fast_delta_encode) : F(h5fz_fast_delta_decode);
  else if (op == H5FZ_OP_ZIGZAG)
    enc ? F(h5fz_fast_zigzag_encode) : F(h5fz_fast_zigzag_decode);
  else
    enc ? F(h5fz_fast_negabinary_encode) : F(h5fz_fast_negabinary_decode);
#undef F
}

static void test_transforms(void)
{
  size_t maxb = 16384u * 8u;
  uint8_t *in = malloc(maxb), *a = malloc(maxb), *b = malloc(maxb), *t = malloc(maxb);
  const uint8_t ops[3] = {H5FZ_OP_DELTA, H5FZ_OP_ZIGZAG, H5FZ_OP_NEGABINARY};
  for (int s = 0; s < n_sizes; s++)
    for (int pat = 0; pat < N_PAT; pat++)
      for (unsigned wide = 0; wide < 2; wide++) {
        uint32_t n = sizes[s], bytes = n * (wide ? 8u : 4u);
        for (uint32_t i = 0; i < n; i++) {
          if (wide)
            ((uint64_t *)in)[i] = pattern_word(pat, i, 64) - (pat == PAT_RAMP ? 500000u : 0u);
          else
            ((uint32_t *)in)[i] = (uint32_t)pattern_word(pat, i, 32) - (pat == PAT_RAMP ? 500000u : 0u);
        }
        for (int o = 0; o < 3; o++)
          for (int enc = 0; enc < 2; enc++) {
            ref_transform(ops[o], enc, wide, in, a, n);
            fast_transform(ops[o], enc, 0, wide, in, b, n);
            CHECK(!memcmp(a, b, bytes), "transform op %u %s w%u n=%u %s", ops[o], enc ? "enc" : "dec", wide ? 64 : 32,
                  n, pat_name[pat]);
          }
        for (int o = 1; o < 3; o++) {
          /* fused delta + op2 = delta then op2 */
          ref_transform(H5FZ_OP_DELTA, 1, wide, in, t, n);
          ref_transform(ops[o], 1, wide, t, a, n);
          fast_transform(ops[o], 1, 1, wide, in, b, n);
          CHECK(!memcmp(a, b, bytes), "fused delta+%u encode w%u n=%u %s", ops[o], wide ? 64 : 32, n, pat_name[pat]);
          ref_transform(ops[o], 0, wide, in, t, n);
          ref_transform(H5FZ_OP_DELTA, 0, wide, t, a, n);
          fast_transform(ops[o], 0, 1, wide, in, b, n);
          CHECK(!memcmp(a, b, bytes), "fused %u+delta decode w%u n=%u %s", ops[o], wide ? 64 : 32, n, pat_name[pat]);
        }
      }
  free(in);
  free(a);
  free(b);
  free(t);
}

/* The fused decode (bit planes -> values) = bitshuffle, zigzag, delta and
 * quantizer decodes of the references in turn, value bits for value bits,
 * with the extent the RZE decode reports and with the whole length; it
 * writes nothing past the m values. */
static void test_fused_decode(void)
{
  uint32_t nmax = 16384;
  uint32_t *words = malloc(nmax * 4u), *t1 = malloc(nmax * 4u), *t2 = malloc(nmax * 4u);
  uint8_t *planes = malloc(nmax * 4u), *enc = malloc(nmax * 4u + 64u), *dec = malloc(nmax * 4u);
  uint8_t *scratch = malloc(h5fz_rze_scratch_bytes(nmax * 4u) + 64u);
  float *ref = malloc(nmax * 4u), *got = malloc((nmax + 64u) * 4u);
  const double steps[] = {2e-4, 0.3, 2.0, 1e30, 1e-300, 3.0e-39};
  for (int s = 0; s < n_sizes; s++)
    for (int pat = 0; pat < N_PAT + 2; pat++)
      for (unsigned st = 0; st < sizeof steps / sizeof steps[0]; st++) {
        uint32_t n = sizes[s], L = 4u * n;
        if (n % 64u) continue; /* the chain's words are padded to 64 */
        for (uint32_t i = 0; i < n; i++) {
          if (pat < N_PAT)
            words[i] = (uint32_t)pattern_word(pat, i, 32);
          else if (pat == N_PAT) /* zigzagged small deltas in runs, as smooth data makes */
            words[i] = ((i / 200u) % 2u) ? (uint32_t)(rnd() % 9u) : 0u;
          else /* one large word among zeros (a jump to and from an escape) */
            words[i] = (i % 777u == 5u) ? (uint32_t)rnd() : 0u;
        }
        h5fz_bitshuffle_encode_32(&blk, words, planes, n);
        h5fz_quant_params q = h5fz_quant_params_make(H5FZ_QMODE_ABS, steps[st] / 2.0, 0);
        h5fz_bitshuffle_decode_32(&blk, planes, t1, n);
        h5fz_zigzag_decode_32(&blk, t1, t2, n);
        h5fz_delta_decode_32(&blk, t2, t1, n);
        h5fz_quant_decode_32(&blk, t1, n, &q, ref);
        uint32_t size = h5fz_fast_rze_encode(planes, L, enc, L, scratch), extent = L;
        const uint8_t *src = planes;
        if (size != H5FZ_RZE_NOT_SMALLER) {
          CHECK(h5fz_fast_rze_decode_extent(enc, size, dec, L, scratch, &extent) == 0 && !memcmp(dec, planes, L),
                "rze decode (extent) n=%u pattern %d", n, pat);
          int zero = extent <= L;
          for (uint32_t i = extent; zero && i < L; i++) zero = dec[i] == 0;
          CHECK(zero, "rze extent %u n=%u pattern %d: a non-zero byte after it", extent, n, pat);
          src = dec;
        }
        uint32_t ms[3] = {n, n - 1u - (uint32_t)(rnd() % 63u), 1u + (uint32_t)(rnd() % n)};
        for (int k = 0; k < 3; k++)
          for (int whole = 0; whole < 2; whole++) {
            uint32_t m = ms[k];
            memset(got, 0x7b, (n + 64u) * 4u);
            h5fz_fast_planes_dzq_decode_32(src, n, whole ? L : extent, m, q.step, got);
            CHECK(!memcmp(got, ref, (size_t)m * 4u), "fused decode n=%u m=%u pattern %d step %g extent %u", n, m, pat,
                  q.step, whole ? L : extent);
            uint32_t past = 0;
            for (uint32_t i = m; i < n + 64u; i++) past |= ((uint32_t *)got)[i] != 0x7b7b7b7bu;
            CHECK(!past, "fused decode n=%u m=%u pattern %d: wrote past m", n, m, pat);
          }
      }
  free(words);
  free(t1);
  free(t2);
  free(planes);
  free(enc);
  free(dec);
  free(scratch);
  free(ref);
  free(got);
}

int main(void)
{
  make_sizes();
  test_bitshuffle();
  test_rze();
  test_bin_f32();
  test_quant();
  test_transforms();
  test_fused_decode();
  printf("test_cpu_fast: %ld checks, %d failures\n", checks, failures);
  return failures ? 1 : 0;
}
