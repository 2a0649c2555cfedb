/*
 * test_huff_groups_emu.c - the huff / huffctx group decode kernel's body
 * (fusion/gpu/h5fz_gpu_huff_groups.h: h5fz_huff_groups_block, what the
 * generated h5fz_huff_groups kernel runs before h5fz_decode) on the CPU
 * by cuda_emu, block by block, over batches laid out as the fused encode's
 * tail leaves them: several chunks, each cut into sub-chunks whose streams
 * the CPU coder wrote (op_huff_cpu.c), packed back to back at any byte
 * offset, some sub-chunks stored raw, partial last sub-chunks, more
 * sub-chunks than one block takes (H5FZ_HUFF_SUBS_PER_BLOCK), so the
 * blocks' threads share groups of up to eight streams of different
 * lengths and group sizes; and in each launch geometry the launcher picks
 * (fusion/gpu/h5fz_gpu_launch.c): eight sub-chunks a block and one thread
 * a group, and 1, 2 or 4 sub-chunks a block with 8, 4 or 2 threads a
 * group decoding its parts (h5fz_huff_decode_parts). Checks, for float32
 * and float64 words and one and two codes:
 *  - every coded sub-chunk's words come back, raw ones are left untouched
 *    (h5fz_decode copies them), nothing is written past a chunk's values,
 *    status stays 0;
 *  - a damaged stream (a bit flipped, or its last byte cut off) gets the
 *    CPU decoder's verdict: status = that sub-chunk's index + 1 where the
 *    CPU refuses it, else the CPU's words; the other sub-chunks of the
 *    batch still decode.
 * The GPU runs of the kernel: tests/gpu/test_gpu_identical.c.
 */
#include "cuda_emu.h" /* first: the device headers then compile their GPU sections */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h5fz_gpu_huff_groups.h"
#include "op_huff_cpu.h"

#define MAX_SUB 12u      /* sub-chunks in a batch: two blocks, the second partly past the end */
#define MAX_ELEMS 16384u /* a 64 KiB sub-chunk of float32 */

static int failures;
#define CHECK(c, ...)                                                                                                  \
  do {                                                                                                                 \
    if (!(c) && failures++ < 20) {                                                                                     \
      fprintf(stderr, "FAIL: " __VA_ARGS__);                                                                           \
      fprintf(stderr, "\n");                                                                                           \
    }                                                                                                                  \
  } while (0)

/* the batch, as the tail leaves it */
typedef struct {
  uint32_t W, nctx, sub_elems, n_sub, n_total;
  unsigned long long n;
  uint8_t *payload;
  unsigned long long offsets[MAX_SUB];
  uint32_t entries[MAX_SUB];
  uint8_t *out;
  int status;
} batch;

static batch B;
/* the block's shared memory */
static h5fz_huff_dtab T[H5FZ_HUFF_SUBS_PER_BLOCK];
static h5fz_huff_stream S[H5FZ_HUFF_SUBS_PER_BLOCK];
static uint32_t next_job;

/* The launch geometries the launcher picks from (h5fz_gpu_launch.c): sub-chunks
 * a block, and threads a group at most; the block then takes the most
 * threads a group (1, 2, 4 or 8) its 512 threads hold for its groups. */
static const uint32_t geometries[][2] = {{H5FZ_HUFF_SUBS_PER_BLOCK, 1u}, {1u, 8u}, {2u, 8u}, {4u, 8u}};
#define N_GEOMETRIES (sizeof geometries / sizeof geometries[0])
static uint32_t subs = H5FZ_HUFF_SUBS_PER_BLOCK, max_parts = 1u;

static void group_block(void *arg)
{
  (void)arg;
  h5fz_huff_groups_block(B.payload, B.offsets, B.entries, B.n, B.n_sub, B.n_total, B.sub_elems, B.W, B.nctx, subs,
                         max_parts, B.out, &B.status, T, S, &next_job);
}

static void run_batch(void)
{
  emu_grid_dim = (B.n_total + subs - 1u) / subs;
  for (unsigned b = 0; b < emu_grid_dim; b++) {
    memset(T, 0x5a, sizeof T); /* noise: a read of what the block did not write shows */
    memset(S, 0x5a, sizeof S);
    emu_block_idx = b;
    emu_run_block(H5FZ_HUFF_DEC_THREADS, group_block, NULL);
  }
}

/* Sub-chunk s's words of kind k (m of them, then zeros to a multiple of
 * 64, or other words where pad_words says so: the decoder checks those
 * and stores nothing of them). */
static void make_words(uint8_t *dst, uint32_t W, uint32_t m, uint32_t m_pad, int kind, int pad_words)
{
  for (uint32_t i = 0; i < m_pad; i++) {
    uint32_t r = emu_random();
    uint64_t v = kind == 0   ? (r % 29u == 0 ? 1u + r % 2u : 0u)
                 : kind == 1 ? (r % 5u ? r % 9u : (uint64_t)(r >> 3) * (W == 64u ? 0x10001ull : 1u))
                 : kind == 2 ? (i % 1500u < 700u ? 0u : r % 100u)
                 : kind == 3 ? (uint64_t)r << (W == 64u ? r % 32u : 0u)
                 : kind == 4 ? (i % 4096u >= 1024u && i % 4096u < 1424u && i % 2u == 0 ? 1u + i % 5u : 0u)
                             : 0u; /* kind 5: all zero (one run a group) */
    if (i >= m && !pad_words) v = 0;
    if (W == 64u)
      memcpy(dst + 8u * i, &v, 8);
    else {
      uint32_t v32 = (uint32_t)v;
      memcpy(dst + 4u * i, &v32, 4);
    }
  }
}

static uint8_t words_in[MAX_SUB][8u * MAX_ELEMS], streams[MAX_SUB][8u * MAX_ELEMS];
static uint32_t sizes[MAX_SUB];
static uint8_t cpu_back[8u * MAX_ELEMS];
static uint8_t cpu_scratch[65536] __attribute__((aligned(8))), cpu_tmp[8u * MAX_ELEMS] __attribute__((aligned(8)));
static uint8_t payload[MAX_SUB * 8u * MAX_ELEMS + 64u], out[MAX_SUB * 8u * MAX_ELEMS + 64u];

/* Sub-chunk s's place in the batch: its words, its stored words. */
static uint32_t sub_words(uint32_t s)
{
  const unsigned long long f = (unsigned long long)(s % B.n_sub) * B.sub_elems;
  return B.n - f < B.sub_elems ? (uint32_t)(B.n - f) : B.sub_elems;
}
static uint8_t *sub_out(uint32_t s)
{
  return out + ((unsigned long long)(s / B.n_sub) * B.n + (unsigned long long)(s % B.n_sub) * B.sub_elems) * (B.W / 8u);
}

/* Pack the streams (damaged: sub-chunk bad_sub's with the bit flipped, or,
 * with flip_bit ~0u, its last byte cut) with a gap of gap bytes between
 * them; outputs filled with noise. */
static void pack(uint32_t gap, uint32_t bad_sub, uint32_t flip_bit)
{
  unsigned long long at = 1u; /* an odd start: no stream is aligned by luck */
  for (uint32_t s = 0; s < B.n_total; s++) {
    B.offsets[s] = at;
    if (B.entries[s] & 0x80000000u) {
      uint32_t raw = sub_words(s) * (B.W / 8u);
      memcpy(payload + at, words_in[s], raw);
      at += raw + gap;
      continue;
    }
    memcpy(payload + at, streams[s], sizes[s]);
    B.entries[s] = sizes[s];
    if (s == bad_sub) {
      if (flip_bit == ~0u)
        B.entries[s] = sizes[s] - 1u;
      else
        payload[at + flip_bit / 8u] ^= (uint8_t)(1u << (flip_bit % 8u));
    }
    at += sizes[s] + gap;
  }
  memset(out, 0xa5, sizeof out);
  B.status = 0;
}

/* The batch B holds, decoded with the geometry in subs / max_parts: valid
 * streams at several gaps, then damaged ones. */
static void one_geometry(h5fz_cpu_coder_decode_fn decode, const char *what)
{
  const uint32_t W = B.W, esize = W / 8u, n_chunks = B.n_total / B.n_sub;
  const unsigned long long n = B.n;
  /* the several-threads geometries less often: the emulator's collectives are slow */
  const int first = subs == H5FZ_HUFF_SUBS_PER_BLOCK;
  for (uint32_t gap = first ? 0u : 1u; gap < (first ? 3u : 2u); gap++) {
    pack(gap, ~0u, 0u);
    run_batch();
    CHECK(B.status == 0, "%s gap %u: status %d on valid streams", what, gap, B.status);
    for (uint32_t s = 0; s < B.n_total; s++) {
      const uint32_t bytes = sub_words(s) * esize;
      if (B.entries[s] & 0x80000000u) {
        int untouched = 1;
        for (uint32_t i = 0; i < bytes; i++) untouched &= sub_out(s)[i] == 0xa5;
        CHECK(untouched, "%s: raw sub-chunk %u written", what, s);
      } else {
        CHECK(!memcmp(sub_out(s), words_in[s], bytes), "%s gap %u: sub-chunk %u other words", what, gap, s);
      }
    }
    int after = 1; /* nothing past the batch's values */
    for (unsigned long long i = (unsigned long long)n_chunks * n * esize; i < sizeof out; i++) after &= out[i] == 0xa5;
    CHECK(after, "%s: bytes written past the batch", what);
  }
  /* damaged streams: the CPU's verdict; the other sub-chunks unharmed */
  for (int k = 0, damaged = first ? 12 : 5; k < damaged; k++) {
    uint32_t bad = emu_random() % B.n_total;
    for (uint32_t tries = 0; tries < B.n_total && (B.entries[bad] & 0x80000000u); tries++) bad = (bad + 1u) % B.n_total;
    if (B.entries[bad] & 0x80000000u) return;
    const uint32_t m = sub_words(bad), m_pad = (m + 63u) & ~63u;
    const uint32_t flip = k == damaged - 1 ? ~0u : emu_random() % (8u * sizes[bad]);
    pack(1u, bad, flip);
    const uint8_t *src = payload + B.offsets[bad];
    int rc_cpu = decode(W == 64u, src, B.entries[bad], cpu_back, m_pad * esize, m_pad, cpu_scratch);
    run_batch();
    CHECK((B.status == (int)bad + 1) == (rc_cpu != 0) && (B.status == 0 || B.status == (int)bad + 1),
          "%s: sub-chunk %u damaged (bit %u): status %d, CPU rc %d", what, bad, flip, B.status, rc_cpu);
    if (!rc_cpu && !B.status)
      CHECK(!memcmp(sub_out(bad), cpu_back, m * esize), "%s: damaged sub-chunk %u decodes other words", what, bad);
    for (uint32_t s = 0; s < B.n_total; s++)
      if (s != bad && !(B.entries[s] & 0x80000000u))
        CHECK(!memcmp(sub_out(s), words_in[s], sub_words(s) * esize), "%s: sub-chunk %u harmed by %u's damage", what, s,
              bad);
  }
}

static void one_batch(uint32_t W, uint32_t nctx, uint32_t sub_elems, unsigned long long n, uint32_t n_chunks)
{
  const uint32_t esize = W / 8u;
  h5fz_cpu_coder_encode_fn encode = nctx == 1u ? h5fz_cpu_coder_huff_encode : h5fz_cpu_coder_huffctx_encode;
  h5fz_cpu_coder_decode_fn decode = nctx == 1u ? h5fz_cpu_coder_huff_decode : h5fz_cpu_coder_huffctx_decode;
  B.W = W;
  B.nctx = nctx;
  B.sub_elems = sub_elems;
  B.n = n;
  B.n_sub = (uint32_t)((n + sub_elems - 1u) / sub_elems);
  B.n_total = B.n_sub * n_chunks;
  B.payload = payload;
  B.out = out;
  if (h5fz_cpu_huff_scratch_bytes() > sizeof cpu_scratch) {
    CHECK(0, "the CPU coder's scratch is %u bytes", h5fz_cpu_huff_scratch_bytes());
    return;
  }
  if (B.n_total > MAX_SUB) {
    CHECK(0, "test batch of %u sub-chunks", B.n_total);
    return;
  }
  for (uint32_t s = 0; s < B.n_total; s++) {
    const uint32_t m = sub_words(s), m_pad = (m + 63u) & ~63u;
    make_words(words_in[s], W, m, m_pad, (int)((s + W + nctx) % 6u), s % 5u == 4u);
    sizes[s] = encode(W == 64u, words_in[s], m_pad * esize, m_pad, streams[s], m_pad * esize, cpu_scratch, cpu_tmp);
    /* raw: one the coder would not shrink, and every seventh (the kernel skips them) */
    B.entries[s] = sizes[s] == H5FZ_HUFF_NOT_SMALLER || s % 7u == 3u ? 0x80000000u | m * esize : sizes[s];
  }
  char what[128];
  for (uint32_t geo = 0; geo < N_GEOMETRIES; geo++) {
    subs = geometries[geo][0];
    max_parts = geometries[geo][1];
    snprintf(what, sizeof what, "W=%u %s sub=%u n=%llu x%u, %u a block, parts <= %u", W,
             nctx == 1u ? "huff" : "huffctx", sub_elems, n, n_chunks, subs, max_parts);
    one_geometry(decode, what);
  }
}

int main(void)
{
  for (uint32_t W = 32u; W <= 64u; W += 32u)
    for (uint32_t nctx = 1u; nctx <= 2u; nctx++) {
      const uint32_t full = 65536u / (W / 8u);           /* the ratio chain's 64 KiB sub-chunks */
      one_batch(W, nctx, full, 3ull * full + 1037u, 3u); /* 12 sub-chunks: two blocks, partial last ones */
      one_batch(W, nctx, full, 2ull * full, 5u);         /* 10 whole sub-chunks */
      one_batch(W, nctx, 4096u, 4096u * 2u + 64u, 4u);   /* 16 KiB sub-chunks, a 64-word last one */
      one_batch(W, nctx, 4096u, 37u, 1u);                /* one tiny chunk */
    }
  CHECK(emu_errors() == 0, "emulator: %d errors (deadlock, collective misuse)", emu_errors());
  printf("huff groups emulated: %d failures\n", failures);
  return failures ? 1 : 0;
}
