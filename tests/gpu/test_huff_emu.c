/*
 * test_huff_emu.c - the huff coder's GPU form (device_ops/op_huff.h with
 * H5FZ_ON_GPU: shared-memory atomics for the histogram and the bit
 * writing, the warp-shuffle block scan, one thread a group decoding) run
 * on the CPU by cuda_emu, against its CPU form (op_huff_cpu.c, one thread),
 * for huff and huffctx:
 * the same bytes for blocks of 128, 256 and 512 threads, float32 and
 * float64 words, 16 and 64 KiB sub-chunks and partial ones; the decode of
 * those streams gives the words back, and of damaged ones the same verdict
 * as the CPU's (words of seven kinds: sparse, mixed, runs, wide, counts
 * skewed so that the code is length-limited, one symbol, clustered). The encode runs both ways the executors call it: the
 * stream assembled in a separate buffer, and written in place into its
 * output (the GPU kernel's global slot: tmp == out).
 */
#include "cuda_emu.h" /* first: the op headers then compile their GPU sections */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h5fz_ops.h"
#include "op_huff_cpu.h"

#define MAXN 16384u

uint32_t emu_random(void); /* cuda_emu.c */
int emu_errors(void);

static uint64_t smem[(2u * 8u * MAXN + 32768u) / 8u];
static uint64_t scan[H5FZ_SCAN_SCRATCH_WORDS];

typedef struct {
  int wide;
  uint32_t n, size;
  const void *words;
  uint8_t *out;
  const uint8_t *src;
  void *back;
  int rc;
  uint32_t codes; /* 1: huff, 2: huffctx */
  int in_place;   /* 1: tmp is out, as the GPU's kernel calls it */
} job;

static uint8_t *tmp_buf(void) { return (uint8_t *)smem; }
static void *scratch(void) { return (uint8_t *)smem + 2u * 8u * MAXN; }

static void encode_thread(void *arg)
{
  job *j = arg;
  const h5fz_blk blk = {threadIdx.x, blockDim.x, scan};
  uint32_t L = j->n * (j->wide ? 8u : 4u);
  void *tmp = j->in_place ? (void *)j->out : (void *)tmp_buf();
  uint32_t size = j->wide ? h5fz_huff_encode_64(&blk, j->words, j->n, j->out, L, scratch(), tmp, j->codes)
                          : h5fz_huff_encode_32(&blk, j->words, j->n, j->out, L, scratch(), tmp, j->codes);
  if (threadIdx.x == 0) j->size = size;
}

static void decode_thread(void *arg)
{
  job *j = arg;
  const h5fz_blk blk = {threadIdx.x, blockDim.x, scan};
  int rc = j->wide ? h5fz_huff_decode_64(&blk, j->src, j->size, j->back, j->n, scratch(), j->codes)
                   : h5fz_huff_decode_32(&blk, j->src, j->size, j->back, j->n, scratch(), j->codes);
  if (threadIdx.x == 0) j->rc = rc;
}

static int failures;
#define CHECK(c, ...)                                                                                                  \
  do {                                                                                                                 \
    if (!(c) && failures++ < 20) {                                                                                     \
      fprintf(stderr, "FAIL: " __VA_ARGS__);                                                                           \
      fprintf(stderr, "\n");                                                                                           \
    }                                                                                                                  \
  } while (0)

static uint64_t w[MAXN];
static uint32_t w32[MAXN];
static uint8_t ref[8u * MAXN], got[8u * MAXN] __attribute__((aligned(8))), back_ref[8u * MAXN], back_got[8u * MAXN];
static uint8_t cpu_scratch[32768] __attribute__((aligned(8))), cpu_tmp[8u * MAXN] __attribute__((aligned(8)));

static void one(const char *what, int wide, uint32_t n, unsigned threads, uint32_t codes)
{
  const void *words = wide ? (const void *)w : (const void *)w32;
  uint32_t L = n * (wide ? 8u : 4u);
  h5fz_cpu_coder_encode_fn encode = codes == 1u ? h5fz_cpu_coder_huff_encode : h5fz_cpu_coder_huffctx_encode;
  h5fz_cpu_coder_decode_fn decode = codes == 1u ? h5fz_cpu_coder_huff_decode : h5fz_cpu_coder_huffctx_decode;
  uint32_t rsize = encode(wide, words, L, n, ref, L, cpu_scratch, cpu_tmp);
  job j = {wide, n, 0, words, got, NULL, back_got, 0, codes, 1};
  memset(got, 0xa5, L); /* in place: no byte of the slot may be left from before */
  emu_run_block(threads, encode_thread, &j);
  CHECK(j.size == rsize, "%s, %u threads, in place: size %u, CPU %u", what, threads, j.size, rsize);
  if (j.size == rsize && rsize != 0xffffffffu)
    CHECK(!memcmp(got, ref, rsize), "%s, %u threads, in place: other bytes than the CPU's", what, threads);
  j.in_place = 0;
  emu_run_block(threads, encode_thread, &j);
  CHECK(j.size == rsize, "%s, %u threads: size %u, CPU %u", what, threads, j.size, rsize);
  if (j.size != rsize || rsize == 0xffffffffu) return;
  CHECK(!memcmp(got, ref, rsize), "%s, %u threads: other bytes than the CPU's", what, threads);
  j.src = ref;
  j.size = rsize;
  emu_run_block(threads, decode_thread, &j);
  CHECK(j.rc == 0 && !memcmp(back_got, words, L), "%s, %u threads: decode rc %d or other words", what, threads, j.rc);
  for (int k = 0; k < 6; k++) { /* damaged: the CPU's verdict, and its words when both accept */
    memcpy(got, ref, rsize);
    uint32_t bit = emu_random() % (8u * rsize);
    got[bit >> 3] ^= (uint8_t)(1u << (bit & 7u));
    uint32_t size = k == 5 ? rsize - 1u : rsize;
    int rc_cpu = decode(wide, got, size, back_ref, L, n, cpu_scratch);
    j.src = got;
    j.size = size;
    emu_run_block(threads, decode_thread, &j);
    CHECK((j.rc != 0) == (rc_cpu != 0), "%s, %u threads: damaged stream: GPU rc %d, CPU rc %d", what, threads, j.rc,
          rc_cpu);
    if (!j.rc && !rc_cpu) CHECK(!memcmp(back_got, back_ref, L), "%s: damaged stream decodes differently", what);
  }
}

int main(void)
{
  static const uint32_t sizes[] = {64u, 1000u, 4096u, 16384u};
  char what[96];
  for (int wide = 0; wide <= 1; wide++)
    for (size_t si = 0; si < 4; si++) {
      uint32_t n = (sizes[si] + 63u) & ~63u;
      if (wide && n > 8192u) n = 8192u;
      for (int kind = 0; kind < 7; kind++) {
        for (uint32_t i = 0; i < n; i++) {
          uint32_t r = emu_random();
          uint64_t v = kind == 0   ? (r % 29u == 0 ? 1u + r % 2u : 0u)
                       : kind == 1 ? (r % 5u ? r % 9u : (uint64_t)(r >> 3) * (wide ? 0x10001ull : 1u))
                       : kind == 2 ? (i % 1500u < 700u ? 0u : r % 100u)
                                   : (uint64_t)r << (wide ? r % 32u : 0u);
          w[i] = v;
          w32[i] = (uint32_t)v;
        }
        if (kind == 4) { /* skewed counts (value v about 1.5^v times): a tree deeper than 12 bits, limited */
          uint32_t pos = 0, cnt = 1;
          for (uint32_t v = 1; v <= 40u && pos < n; v++, cnt = cnt * 3u / 2u + 1u)
            for (uint32_t c = 0; c < cnt && pos < n; c++, pos++) w[pos] = w32[pos] = v;
        } else if (kind == 5) { /* one symbol (huffctx: its second code empty) */
          for (uint32_t i = 0; i < n; i++) w[i] = w32[i] = 7u;
        } else if (kind == 6) { /* sparse but clustered: the group field bounded by the densest window */
          for (uint32_t i = 0; i < n; i++) w[i] = w32[i] = i % 4096u >= 1024u && i % 4096u < 1424u && i % 2u == 0 ? 1u + i % 5u : 0u;
        }
        for (unsigned threads = 128; threads <= 512; threads *= 2)
          for (uint32_t codes = 1; codes <= 2u; codes++) {
            snprintf(what, sizeof what, "%s n=%u kind %d %s", wide ? "f64" : "f32", n, kind,
                     codes == 1u ? "huff" : "huffctx");
            one(what, wide, n, threads, codes);
          }
      }
    }
  CHECK(emu_errors() == 0, "emulator: %d errors (deadlock, collective misuse)", emu_errors());
  printf("huff emulated: %d failures\n", failures);
  return failures ? 1 : 0;
}
