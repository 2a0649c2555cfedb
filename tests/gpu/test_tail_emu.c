/*
 * test_tail_emu.c - the GPU executor's tail kernels after the fused encode
 * (fusion/gpu/h5fz_gpu_tail.h: h5fz_tail_reduce, h5fz_tail_scan,
 * h5fz_tail_pack, h5fz_tail_gather) run on the CPU by cuda_emu, block by
 * block, on made-up batches of encoded sub-chunks, against a plain
 * reference: the sizes' and outlier counts' exclusive sums and totals,
 * the payloads back to back, the outliers in order with their positions in
 * their chunk. Batches of 1-5 chunks, partial last sub-chunks, float32 and
 * float64, payloads of every length (so every byte alignment of the packed
 * offsets), sub-chunks without outliers, sub-chunks that are all
 * outliers and batches with 0-2 outliers in every sub-chunk, and more than 1024 sub-chunks (several scan parts). The GPU
 * runs of these kernels: tests/gpu/test_gpu_identical.c and the API tests.
 */
#include "cuda_emu.h" /* first: the device headers then compile their GPU sections */

#include <stdio.h>
#include <stdlib.h>

#include "h5fz_gpu_tail.h"

#define PACK_THREADS 256u   /* as the executor (TAIL_PACK_THREADS) */
#define GATHER_THREADS 256u /* as the executor (TAIL_GATHER_THREADS) */

typedef struct {
  /* the encode's output */
  uint32_t n_chunks, n_sub, sub_elems, esize, n_total, slot_bytes;
  unsigned long long chunk_n;
  uint8_t *slots, *oval;
  uint32_t *entries, *ocount, *opos;
  /* the tail's */
  unsigned long long *parts, *offsets;
  uint32_t *ooffsets, *gpos;
  uint8_t *packed, *gval;
} batch;

static batch B;

static void reduce_block(void *arg)
{
  (void)arg;
  h5fz_tail_reduce(B.entries, B.ocount, B.n_total, B.parts);
}

static void scan_block(void *arg)
{
  (void)arg;
  h5fz_tail_scan(B.entries, B.ocount, B.n_total, B.offsets, B.ooffsets, B.parts);
}

static void pack_block(void *arg)
{
  (void)arg;
  h5fz_tail_pack(B.slots, B.slot_bytes, B.entries, B.offsets, B.n_total, B.packed);
}

static void gather_block(void *arg)
{
  (void)arg;
  h5fz_tail_gather(B.ooffsets, B.n_total, B.parts, B.opos, B.oval, B.sub_elems, B.n_sub, B.chunk_n, B.esize, B.gpos,
                   B.gval);
}

/* grid blocks of `threads` threads each, in a random order (the kernels
 * must not depend on it: the reduce's and the scan's blocks only read
 * what the kernel before wrote) */
static void run_grid(unsigned grid, unsigned threads, void (*fn)(void *))
{
  unsigned start = emu_random() % grid;
  emu_grid_dim = grid;
  for (unsigned k = 0; k < grid; k++) {
    emu_block_idx = (start + k) % grid;
    emu_run_block(threads, fn, NULL);
  }
}

static void *alloc(size_t bytes)
{
  void *p = malloc(bytes ? bytes : 1u);
  if (!p) {
    printf("FAIL: out of memory\n");
    exit(1);
  }
  memset(p, 0xa5, bytes ? bytes : 1u);
  return p;
}

static int failures;

static void check(int ok, unsigned trial, const char *what)
{
  if (!ok) {
    printf("FAIL trial %u: %s\n", trial, what);
    failures++;
  }
}

/* A random batch of n_chunks chunks of n_sub sub-chunks, the last one
 * partial or not, encoded sub-chunks of random sizes and outliers. */
static void make_batch(unsigned big)
{
  B.esize = emu_random() % 2u ? 8u : 4u;
  /* a quarter of the batches: 0-2 outliers in every sub-chunk (the gather's
   * sparse path, windows of 32 sub-chunks that hold fewer than 32) */
  const uint32_t sparse = emu_random() % 4u == 0u;
  B.sub_elems = 64u * (1u + emu_random() % (B.esize == 8u ? 32u : 64u));
  B.n_chunks = 1u + emu_random() % 5u;
  B.n_sub = big ? 1100u / B.n_chunks + emu_random() % 300u : 1u + emu_random() % 40u;
  uint32_t last = emu_random() % 2u ? B.sub_elems : 1u + emu_random() % B.sub_elems;
  B.chunk_n = (unsigned long long)(B.n_sub - 1u) * B.sub_elems + last;
  B.n_total = B.n_sub * B.n_chunks;
  B.slot_bytes = B.sub_elems * B.esize;
  size_t values = (size_t)B.n_chunks * B.chunk_n;
  B.slots = alloc((size_t)B.n_total * B.slot_bytes);
  B.entries = alloc(4u * B.n_total);
  B.ocount = alloc(4u * B.n_total);
  B.opos = alloc(4u * values);
  B.oval = alloc(B.esize * values);
  for (size_t i = 0; i < (size_t)B.n_total * B.slot_bytes; i++) B.slots[i] = (uint8_t)emu_random();
  for (size_t i = 0; i < B.esize * values; i++) B.oval[i] = (uint8_t)emu_random();
  for (uint32_t s = 0; s < B.n_total; s++) {
    uint32_t local = s % B.n_sub, m = local + 1u == B.n_sub ? last : B.sub_elems;
    uint32_t m_pad = (m + 63u) & ~63u, L = m_pad * B.esize, kind = emu_random() % 8u;
    /* sizes: small (so the packed offsets take every alignment), raw, any */
    B.entries[s] = kind == 0 ? (L | 0x80000000u) : kind < 4 ? emu_random() % 200u : emu_random() % L;
    uint32_t n_out = sparse              ? emu_random() % 3u % (m + 1u)
                     : kind == 1         ? m
                     : emu_random() % 3u ? 0u
                                         : emu_random() % (m + 1u);
    B.ocount[s] = n_out;
    uint32_t *pos = B.opos + (size_t)(s / B.n_sub) * B.chunk_n + (size_t)local * B.sub_elems;
    for (uint32_t i = 0, p = 0; i < n_out; i++) { /* n_out of the m positions, increasing */
      uint32_t room = m - p - (n_out - i);
      p += room ? emu_random() % (room / (n_out - i) + 1u) : 0u;
      pos[i] = p++;
    }
  }
  B.parts = alloc(16u + 16u * ((B.n_total + H5FZ_TAIL_THREADS - 1u) / H5FZ_TAIL_THREADS));
  B.offsets = alloc(8u * B.n_total);
  B.ooffsets = alloc(4u * B.n_total);
  B.packed = alloc((size_t)B.n_total * B.slot_bytes + 8u);
  B.gpos = alloc(4u * values + 4u);
  B.gval = alloc(B.esize * values + 8u);
}

static void free_batch(void)
{
  void *all[] = {B.slots,   B.entries,  B.ocount, B.opos, B.oval, B.parts,
                 B.offsets, B.ooffsets, B.packed, B.gpos, B.gval};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) free(all[i]);
}

static void one_batch(unsigned trial, unsigned big)
{
  make_batch(big);
  unsigned parts = (B.n_total + H5FZ_TAIL_THREADS - 1u) / H5FZ_TAIL_THREADS;
  run_grid(parts, H5FZ_TAIL_THREADS, reduce_block);
  run_grid(parts, H5FZ_TAIL_THREADS, scan_block);
  run_grid((B.n_total + PACK_THREADS / 32u - 1u) / (PACK_THREADS / 32u), PACK_THREADS, pack_block);
  run_grid(1u + emu_random() % 4u, GATHER_THREADS, gather_block);

  /* the reference */
  uint64_t bytes = 0, outs = 0;
  int sums = 1, payload = 1, outliers = 1;
  for (uint32_t s = 0; s < B.n_total; s++) {
    uint32_t size = B.entries[s] & 0x7fffffffu, local = s % B.n_sub;
    if (B.offsets[s] != bytes || B.ooffsets[s] != outs) sums = 0;
    if (memcmp(B.packed + bytes, B.slots + (size_t)s * B.slot_bytes, size)) payload = 0;
    size_t first = (size_t)(s / B.n_sub) * B.chunk_n + (size_t)local * B.sub_elems;
    for (uint32_t i = 0; i < B.ocount[s]; i++) {
      if (B.gpos[outs + i] != local * B.sub_elems + B.opos[first + i]) outliers = 0;
      if (memcmp(B.gval + (outs + i) * B.esize, B.oval + (first + i) * B.esize, B.esize)) outliers = 0;
    }
    bytes += size;
    outs += B.ocount[s];
  }
  check(sums, trial, "the exclusive sums of sizes or outlier counts (offsets, ooffsets)");
  check(B.parts[0] == bytes && B.parts[1] == outs, trial, "the totals");
  check(payload, trial, "the packed payload");
  check(B.packed[bytes] == 0xa5u, trial, "a byte written after the packed payload");
  check(outliers, trial, "the gathered outliers");
  check(B.gpos[outs] == 0xa5a5a5a5u, trial, "a position written after the last outlier");
  if (trial < 3u || big)
    printf("ok   trial %u: %u chunks x %u sub-chunks of %u float%u values, %llu payload bytes, %llu outliers\n", trial,
           B.n_chunks, B.n_sub, B.sub_elems, 8u * B.esize, (unsigned long long)bytes, (unsigned long long)outs);
  free_batch();
}

int main(void)
{
  unsigned trials = 0;
  for (unsigned t = 0; t < 40u; t++, trials++) one_batch(trials, 0);
  for (unsigned t = 0; t < 2u; t++, trials++) one_batch(trials, 1);
  if (emu_errors()) {
    printf("FAIL: the emulator saw %d error(s) (divergent collectives, partial masks or deadlocks; see stderr)\n",
           emu_errors());
    failures++;
  }
  printf("%u batches: %s (%d failed)\n", trials, failures ? "FAIL" : "PASS", failures);
  return failures ? 1 : 0;
}
