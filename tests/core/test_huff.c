/*
 * test_huff.c - the huff coder (device_ops/op_huff.h): words of many
 * distributions (all zero, sparse, geometric, every bit length, the
 * largest words, runs across group and share boundaries) come back
 * exactly; a block of several threads (pthreads at a barrier, as the GPU
 * runs the op) writes the same bytes as one thread and decodes them the
 * same way; the size is never the raw size or more; every truncation and
 * many bit flips of a stream are refused or decode without reading or
 * writing out of bounds (ASan in the fuzz build); the handful of streams
 * the format rules out are refused. All of it for huff (one code) and
 * huffctx (two: the token after a zero run has its own), which must be
 * smaller than huff on isolated non-zero words and never much larger.
 */
#define H5FZ_TEST_BLOCK_THREADS 96
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../device_ops/h5fz_ops.h"
#include "core_block.h"

#define CORE_RNG_SEED 0x3c6ef372fe94f82bull
#define CORE_MAX_PRINTED 20
#include "core_check.h"

#define MAXN 16384u

typedef struct {
  int wide;
  const void *in;
  uint32_t n, cap, size;
  uint8_t *out;
  void *scratch, *tmp;
  void *words;
  int rc;
} job;

static uint32_t codes = 1; /* 1: huff, 2: huffctx (main runs every case with both) */

static void encode_fn(const h5fz_blk *blk, void *ctx)
{
  job *j = ctx;
  uint32_t size = j->wide ? h5fz_huff_encode_64(blk, j->in, j->n, j->out, j->cap, j->scratch, j->tmp, codes)
                          : h5fz_huff_encode_32(blk, j->in, j->n, j->out, j->cap, j->scratch, j->tmp, codes);
  if (blk->tid == 0) j->size = size;
}

static void decode_fn(const h5fz_blk *blk, void *ctx)
{
  job *j = ctx;
  int rc = j->wide ? h5fz_huff_decode_64(blk, j->out, j->size, j->words, j->n, j->scratch, codes)
                   : h5fz_huff_decode_32(blk, j->out, j->size, j->words, j->n, j->scratch, codes);
  if (blk->tid == 0) j->rc = rc;
}

static uint8_t *scratch_a, *tmp_a, *out1, *outk, *back;

/* One stream of n words: encode with 1 and with nthreads threads (same
 * bytes), decode both ways (the words), then damage it. */
static uint32_t roundtrip(const char *what, int wide, const void *words, uint32_t n, uint32_t nthreads,
                          int expect_coded)
{
  uint32_t L = n * (wide ? 8u : 4u);
  job j = {wide, words, n, L, 0, out1, scratch_a, tmp_a, back, 0};
  run_block(1, encode_fn, &j);
  uint32_t size1 = j.size;
  CHECK(size1 == 0xffffffffu || size1 < L, "%s: size %u not below the raw %u", what, size1, L);
  if (expect_coded) CHECK(size1 != 0xffffffffu, "%s: not coded", what);
  j.out = outk;
  run_block(nthreads, encode_fn, &j);
  CHECK(j.size == size1, "%s: %u threads give %u bytes, one thread %u", what, nthreads, j.size, size1);
  if (size1 == 0xffffffffu || j.size != size1) return size1;
  CHECK(!memcmp(out1, outk, size1), "%s: %u threads write other bytes than one", what, nthreads);
  for (uint32_t threads = 1; threads <= nthreads; threads += nthreads - 1u) {
    memset(back, 0xa5, L);
    j.out = out1;
    j.size = size1;
    run_block(threads, decode_fn, &j);
    CHECK(j.rc == 0, "%s: decode with %u threads refused its own stream", what, threads);
    CHECK(!memcmp(back, words, L), "%s: decode with %u threads gave other words", what, threads);
    if (nthreads == 1) break;
  }
  /* every truncation is refused (the last group must end in the final byte) */
  for (uint32_t cut = 0; cut < size1; cut += size1 > 64u ? size1 / 17u + 1u : 1u) {
    j.out = out1;
    j.size = cut;
    run_block(1, decode_fn, &j);
    CHECK(j.rc != 0, "%s: a stream cut to %u of %u bytes decoded", what, cut, size1);
  }
  /* bit flips: refused, or words of the right count (never a crash) */
  for (int k = 0; k < 40; k++) {
    memcpy(outk, out1, size1);
    uint64_t bit = rnd() % (8ull * size1);
    outk[bit >> 3] ^= (uint8_t)(1u << (bit & 7u));
    j.out = outk;
    j.size = size1;
    run_block(1 + (uint32_t)(k & 1) * (nthreads - 1u), decode_fn, &j);
    (void)j.rc;
  }
  return size1;
}

static uint32_t w32[MAXN];
static uint64_t w64[MAXN];

/* A hand-made stream of 64 float32 words (one group): a code of k symbols
 * (sym[], len[]; huffctx's second code empty), written by the encoder's
 * own table writer, then the tokens tok[] (a symbol each, with nx[i]
 * extra bits x[i]). Returns its bytes in out1. */
static uint32_t craft(const uint32_t *sym, const uint32_t *len, uint32_t k, const uint32_t *tok, const uint32_t *x,
                      const uint32_t *nx, uint32_t ntok)
{
  static h5fz_huff_scratch s;
  const uint32_t A = h5fz_huff_alphabet(32u);
  uint32_t *b = (uint32_t *)tmp_a;
  memset(b, 0, 4096);
  memset(&s, 0, sizeof s);
  for (uint32_t i = 0; i < k; i++) s.len[0][sym[i]] = (uint8_t)len[i];
  h5fz_huff_canonical(&s, 0u, A);
  uint64_t pos = 0;
  h5fz_huff_put(b, pos, 4u, 4u); /* groups of 1024 words: one */
  pos += 4;
  for (uint32_t t = 0; t < codes; t++) pos = h5fz_huff_put_table(&s, t, codes, A, b, pos);
  h5fz_huff_put(b, pos, 0u, 5u); /* directory width */
  pos += 5;
  for (uint32_t i = 0; i < ntok; i++) {
    h5fz_huff_put(b, pos, s.code[0][tok[i]], s.len[0][tok[i]]); /* codes are kept bit-reversed: LSB first */
    pos += s.len[0][tok[i]];
    h5fz_huff_put(b, pos, x[i], nx[i]);
    pos += nx[i];
  }
  memcpy(out1, b, (size_t)((pos + 7u) / 8u));
  return (uint32_t)((pos + 7u) / 8u);
}

/* Decode a crafted stream of 64 float32 words: 0, or the refusal. */
static int decode_crafted(uint32_t size)
{
  job j = {0, w32, 64u, 256u, size, out1, scratch_a, tmp_a, back, 0};
  run_block(1, decode_fn, &j);
  return j.rc;
}

/* Streams whose every bit is well formed but whose tokens the encoder
 * never writes: each beside the same stream made valid, so that the
 * refusal is the token's. The look-up table holds short tokens whole,
 * their extra bits with them, and longer ones take another way: both. */
static void crafted_tokens(void)
{
  static uint32_t tok[80], x[80], nx[80];
  const uint32_t run_base = h5fz_huff_run_base(32u), cls7 = H5FZ_HUFF_LITERALS; /* bit length 7: 64..127 */
  for (int longer = 0; longer <= 1; longer++) {
    /* class 7 with extra bits 0 is 64, a literal's word; 65 is its own */
    const uint32_t sym_s[] = {0u, cls7}, len_s[] = {1u, 1u};
    const uint32_t sym_l[] = {0u, 1u, 2u, cls7, cls7 + 1u}, len_l[] = {1u, 2u, 3u, 4u, 4u};
    for (int bad = 0; bad <= 1; bad++) {
      tok[0] = cls7, x[0] = bad ? 0u : 1u, nx[0] = 6u;
      for (uint32_t i = 1; i < 64u; i++) tok[i] = 0u, x[i] = 0u, nx[i] = 0u;
      const uint32_t size = longer ? craft(sym_l, len_l, 5u, tok, x, nx, 64u) : craft(sym_s, len_s, 2u, tok, x, nx, 64u);
      const int rc = decode_crafted(size);
      CHECK(bad ? rc != 0 : rc == 0 && ((uint32_t *)back)[0] == 65u && ((uint32_t *)back)[1] == 1u,
            "%s code: a class-7 token of value %u %s", longer ? "a 4-bit" : "a 1-bit", bad ? 64u : 65u,
            bad ? "accepted" : "not decoded as 65");
    }
  }
  /* runs: a run past the group's end; huff: a run right after a run */
  const uint32_t sym_r[] = {0u, run_base, run_base + 1u}, len_r[] = {1u, 2u, 2u}; /* words 1, runs of 1 and 2 */
  for (int bad = 0; bad <= 1; bad++) {
    for (uint32_t i = 0; i < 62u; i++) tok[i] = 0u, x[i] = 0u, nx[i] = 0u;
    tok[62] = bad ? 0u : run_base + 1u, x[62] = nx[62] = 0u; /* 62 words and a run of 2, or 63 and a run of 2 */
    tok[63] = run_base + 1u, x[63] = nx[63] = 0u;
    const int rc = decode_crafted(craft(sym_r, len_r, 3u, tok, x, nx, bad ? 64u : 63u));
    CHECK(bad ? rc != 0 : rc == 0, "a run of 2 after %u words of 64 %s", bad ? 63u : 62u, bad ? "accepted" : "refused");
    if (codes == 2u) continue; /* huffctx: the second code, after a run, never holds one */
    tok[0] = run_base, tok[1] = bad ? run_base : 0u; /* a run of 1, then a run of 1 or a word */
    for (uint32_t i = 2; i < 64u; i++) tok[i] = 0u;
    const int rc2 = decode_crafted(craft(sym_r, len_r, 3u, tok, x, nx, 64u));
    CHECK(bad ? rc2 != 0 : rc2 == 0, "huff: a run after a %s %s", bad ? "run" : "word", bad ? "accepted" : "refused");
  }
}

/* A word of the distribution `kind` (0 sparse +-1, 1 geometric, 2 every
 * bit length, 3 zero runs of every length, 4 largest words). */
static uint64_t draw(int kind, uint32_t i, int wide)
{
  uint64_t mask = wide ? ~0ull : 0xffffffffull, r = rnd();
  switch (kind) {
  case 0: return r % 23u == 0 ? 1u + (r >> 20) % 2u : 0u;
  case 1: {
    uint64_t v = 0;
    while ((r & 3u) != 0 && v < 300u) {
      v++;
      r = rnd();
    }
    return v;
  }
  case 2: {
    unsigned b = (unsigned)((r >> 8) % (wide ? 65u : 33u));
    return b == 0 ? 0 : ((rnd() | 1ull << 63) >> (64u - b)) & mask;
  }
  case 3: return (i * 2654435761u >> 7) % 97u == 0 ? (r % 70u) + 1u : 0u;
  default: return r % 3u ? mask - r % 5u : 0u;
  }
}

/* Every case of the coder with `codes` codes; the sizes of the random
 * distributions' streams are summed into sizes_of[kind]. */
static void all_cases(uint64_t sizes_of[5])
{
  static const uint32_t sizes[] = {64u, 128u, 1024u, 1088u, 4096u, 8192u, 16384u};
  char what[128];
  for (int wide = 0; wide <= 1; wide++)
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
      uint32_t n = sizes[si];
      if (wide && n > 8192u) continue; /* 64 KiB sub-chunks of float64 */
      for (int kind = 0; kind < 5; kind++) {
        for (uint32_t i = 0; i < n; i++) {
          uint64_t v = draw(kind, i, wide);
          if (wide)
            w64[i] = v;
          else
            w32[i] = (uint32_t)v;
        }
        snprintf(what, sizeof what, "%s n=%u kind %d, %u code(s)", wide ? "64-bit" : "32-bit", n, kind, codes);
        uint32_t size = roundtrip(what, wide, wide ? (void *)w64 : (void *)w32, n,
                                  kind == 3 ? 96u : 33u + (uint32_t)kind * 7u, kind <= 1 || kind == 3);
        sizes_of[kind] += size == 0xffffffffu ? n * (wide ? 8u : 4u) : size;
      }
      /* all zero: one run token a group */
      memset(w32, 0, sizeof w32);
      memset(w64, 0, sizeof w64);
      snprintf(what, sizeof what, "%s n=%u all zero", wide ? "64-bit" : "32-bit", n);
      roundtrip(what, wide, wide ? (void *)w64 : (void *)w32, n, 96u, 1);
      /* one value everywhere: a code of one symbol (length 1) */
      for (uint32_t i = 0; i < n; i++) w32[i] = 7u, w64[i] = 7u;
      snprintf(what, sizeof what, "%s n=%u one symbol", wide ? "64-bit" : "32-bit", n);
      roundtrip(what, wide, wide ? (void *)w64 : (void *)w32, n, 64u, 1);
    }
  /* 16384 zeros with 2 ones: the longest runs (class of 2^13 and more) */
  memset(w32, 0, sizeof w32);
  w32[3] = 1;
  w32[16000] = 2;
  roundtrip("long runs", 0, w32, 16384u, 96u, 1);
  /* skewed counts: a Huffman tree deeper than 12 bits is limited */
  for (uint32_t i = 0; i < 16384u; i++) w32[i] = 0;
  {
    uint32_t pos = 0, cnt = 1;
    for (uint32_t v = 1; v <= 40u && pos < 16384u; v++, cnt = cnt * 3u / 2u + 1u)
      for (uint32_t c = 0; c < cnt && pos < 16384u; c++) w32[pos++] = v;
  }
  roundtrip("length-limited", 0, w32, 16384u, 64u, 1);
  {
    /* the code lengths of those counts: at most 12 bits, Kraft sum 1 */
    h5fz_huff_scratch *s = (h5fz_huff_scratch *)scratch_a;
    memset(s->hist, 0, sizeof s->hist);
    for (uint32_t a = 0; a < 40u; a++) s->hist[0][a] = 1u << (a < 30u ? a : 30u) >> 10;
    for (uint32_t a = 0; a < 40u; a++) s->hist[0][a] += 1u;
    static const h5fz_blk one = {0u, 1u, NULL};
    uint32_t k[H5FZ_HUFF_MAX_CTX];
    h5fz_huff_sort_leaves(&one, s, 1u, h5fz_huff_alphabet(32u), k);
    h5fz_huff_lengths(s, 0, h5fz_huff_alphabet(32u), k[0]);
    uint32_t kraft = 0, longest = 0;
    for (uint32_t a = 0; a < h5fz_huff_alphabet(32u); a++)
      if (s->len[0][a]) {
        kraft += 1u << (12u - s->len[0][a]);
        longest = s->len[0][a] > longest ? s->len[0][a] : longest;
      }
    CHECK(kraft == 4096u && longest <= 12u, "length limit: Kraft sum %u/4096, longest %u", kraft, longest);
  }
  /* the group field: 1024-word groups where tokens are sparse, smaller
   * where they are dense (h5fz_huff_group_log2), so that groups hold
   * about H5FZ_HUFF_GROUP_TOKENS tokens on average and none many more than
   * H5FZ_HUFF_GROUP_MAX_TOKENS; both decode */
  {
    for (uint32_t i = 0; i < 16384u; i++) w32[i] = draw(0, i, 0) ? 1u : 0u; /* 1 in 23 non-zero */
    uint32_t sparse = roundtrip("sparse: groups of 1024", 0, w32, 16384u, 64u, 1) != 0xffffffffu ? out1[0] & 15u : 99u;
    CHECK(sparse == H5FZ_HUFF_GROUP_LOG2, "sparse words: group field %u, want %u", sparse, H5FZ_HUFF_GROUP_LOG2);
    for (uint32_t i = 0; i < 16384u; i++) w32[i] = i % 3u ? 1u + (uint32_t)(rnd() % 3u) : 0u; /* 2 in 3 */
    uint32_t dense = roundtrip("dense: small groups", 0, w32, 16384u, 64u, 1) != 0xffffffffu ? out1[0] & 15u : 99u;
    CHECK(dense == H5FZ_HUFF_MIN_GROUP_LOG2, "dense words: group field %u, want %u", dense, H5FZ_HUFF_MIN_GROUP_LOG2);
    for (uint32_t i = 0; i < 16384u; i++) w32[i] = i % 10u == 0 ? 1u : 0u; /* 1 in 10: 20 % tokens, groups of 512 */
    uint32_t mid = roundtrip("one in ten: groups of 512", 0, w32, 16384u, 64u, 1) != 0xffffffffu ? out1[0] & 15u : 99u;
    CHECK(mid == 3u, "one word in ten: group field %u, want 3", mid);
    /* clustered: sparse on average (1024 of 16384 words), all of them in
     * one 1024-word stretch: groups of 256 words bound the stretch's groups */
    for (uint32_t i = 0; i < 16384u; i++) w32[i] = i >= 4096u && i < 5120u ? 1u + (uint32_t)(rnd() % 60u) : 0u;
    uint32_t clustered = roundtrip("clustered: small groups", 0, w32, 16384u, 64u, 1) != 0xffffffffu ? out1[0] & 15u : 99u;
    CHECK(clustered == H5FZ_HUFF_MIN_GROUP_LOG2, "clustered words: group field %u, want %u", clustered, H5FZ_HUFF_MIN_GROUP_LOG2);
    uint32_t win[H5FZ_HUFF_WINDOWS] = {0};
    CHECK(h5fz_huff_group_log2(16384u, 0, win) == H5FZ_HUFF_GROUP_LOG2, "all zero words (a run a group) are dense");
    for (uint32_t w = 0; w < H5FZ_HUFF_WINDOWS; w++) win[w] = H5FZ_HUFF_WINDOW;
    CHECK(h5fz_huff_group_log2(16384u, 16384u, win) == H5FZ_HUFF_MIN_GROUP_LOG2, "all non-zero words are not dense");
    /* the bound per group alone: about 400 tokens in one 1024-word group of a sparse sub-chunk -> 512-word groups */
    for (uint32_t w = 0; w < H5FZ_HUFF_WINDOWS; w++) win[w] = w < 4u ? 50u : 0u; /* 200 isolated words, about 400 tokens */
    CHECK(h5fz_huff_group_log2(16384u, 200u, win) == 3u, "a 400-token group: field %u, want 3",
          h5fz_huff_group_log2(16384u, 200u, win));
    /* ... and the same 200 words in one 512-word stretch -> 256-word groups */
    for (uint32_t w = 0; w < H5FZ_HUFF_WINDOWS; w++) win[w] = w < 2u ? 100u : 0u;
    CHECK(h5fz_huff_group_log2(16384u, 200u, win) == H5FZ_HUFF_MIN_GROUP_LOG2, "a 400-token half group: field %u, want %u",
          h5fz_huff_group_log2(16384u, 200u, win), H5FZ_HUFF_MIN_GROUP_LOG2);
  }
  /* streams the format rules out */
  {
    job j = {0, w32, 64u, 256u, 0, out1, scratch_a, tmp_a, back, 0};
    memset(out1, 0, 64);
    out1[0] = 9u; /* group field 9: groups of 32768 words */
    j.size = 8;
    run_block(1, decode_fn, &j);
    CHECK(j.rc != 0, "group field 9 accepted");
    j.size = 0;
    run_block(1, decode_fn, &j);
    CHECK(j.rc != 0, "an empty stream accepted");
    /* a table of two symbols of length 1 and 2 (incomplete code) */
    memset(out1, 0, 64);
    uint32_t *b32 = (uint32_t *)tmp_a;
    memset(b32, 0, 64);
    h5fz_huff_put(b32, 0, 4u, 4u);
    h5fz_huff_put(b32, 4, codes == 1u ? 1u : 2u, 8u); /* two symbols (huff stores the count less one) */
    h5fz_huff_put(b32, 12, 1u, 1u);      /* gamma(1): symbol 0 */
    h5fz_huff_put(b32, 13, 1u, 4u);      /* length 1 */
    h5fz_huff_put(b32, 17, 1u, 1u);      /* gamma(1): symbol 1 */
    h5fz_huff_put(b32, 18, 2u, 4u);      /* length 2: Kraft 3/4 */
    memcpy(out1, b32, 16);
    j.size = 16;
    run_block(1, decode_fn, &j);
    CHECK(j.rc != 0, "an incomplete code accepted");
    if (codes == 2u) {
      /* huffctx: a run symbol in the second code (the token after a run is never one) */
      const uint32_t run_base = h5fz_huff_run_base(32u), x = run_base + 1u, nb = h5fz_bitlen64(x) - 1u;
      memset(b32, 0, 64);
      h5fz_huff_put(b32, 0, 4u, 4u);
      h5fz_huff_put(b32, 4, 1u, 8u);  /* first code: one symbol */
      h5fz_huff_put(b32, 12, 1u, 1u); /* gamma(1): symbol 0 (the word 1) */
      h5fz_huff_put(b32, 13, 1u, 4u); /* length 1 */
      h5fz_huff_put(b32, 17, 1u, 8u); /* second code: one symbol */
      h5fz_huff_put(b32, 25 + nb, 1u | (x & ((1u << nb) - 1u)) << 1, nb + 1u); /* gamma(run_base + 1) */
      h5fz_huff_put(b32, 26 + 2u * nb, 1u, 4u);
      memcpy(out1, b32, 16);
      j.size = 16;
      run_block(1, decode_fn, &j);
      CHECK(j.rc != 0, "huffctx: a run in the second code accepted");
    }
  }
  crafted_tokens();
}

int main(void)
{
  scratch_a = aligned_alloc(64, (h5fz_huff_scratch_bytes(H5FZ_HUFF_MAX_CTX) + 63u) & ~63u);
  tmp_a = aligned_alloc(64, 8u * MAXN);
  out1 = malloc(8u * MAXN);
  outk = malloc(8u * MAXN);
  back = malloc(8u * MAXN);
  uint64_t sizes_of[2][5] = {{0}};
  for (codes = 1; codes <= H5FZ_HUFF_MAX_CTX; codes++) {
    rng = CORE_RNG_SEED; /* the same words for both coders */
    all_cases(sizes_of[codes - 1u]);
  }
  /* isolated non-zero words (kind 0): the second code pays; elsewhere at
   * most its table more */
  CHECK(sizes_of[1][0] * 100u < sizes_of[0][0] * 97u, "huffctx %llu bytes, huff %llu on isolated words",
        (unsigned long long)sizes_of[1][0], (unsigned long long)sizes_of[0][0]);
  for (int kind = 1; kind < 5; kind++)
    CHECK(sizes_of[1][kind] * 100u < sizes_of[0][kind] * 102u, "kind %d: huffctx %llu bytes, huff %llu", kind,
          (unsigned long long)sizes_of[1][kind], (unsigned long long)sizes_of[0][kind]);
  printf("isolated words: huff %llu bytes, huffctx %llu\n", (unsigned long long)sizes_of[0][0],
         (unsigned long long)sizes_of[1][0]);
  free(scratch_a);
  free(tmp_a);
  free(out1);
  free(outk);
  free(back);
  printf("huff: %ld checks, %d failures\n", checks, failures);
  return failures ? 1 : 0;
}
