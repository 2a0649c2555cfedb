/*
 * op_huff.h - coder: zero runs and canonical Huffman (docs/format.md §5.7).
 *
 * The words of a sub-chunk (zigzag codes of a predictor, mostly zero at
 * loose bounds) become tokens: a maximal run of zero words is one token of
 * a run-length class (two classes an octave, the rest of the length as
 * extra bits); a non-zero word v <= 64 is a literal symbol, a larger one a
 * bit-length class with the bits below its leading one as extra bits. The
 * tokens are coded with a canonical Huffman code of at most 12 bits built
 * per sub-chunk from the exact histogram of its tokens (ties broken by the
 * symbol number), so every executor builds the same code and writes the
 * same bytes. Zero runs and tokens stop at group boundaries (256-1024 words):
 * each group's bits are listed in a small directory, so a decoder can run
 * one thread per group. Why per sub-chunk and not per chunk: a sub-chunk
 * stays self-contained (one thread block each, as the other coders), and
 * the code's table costs 1-3 % of a 64 KiB sub-chunk at ratio 45 (measured
 * with ../shared/tools/ratio_study's quantizer on the 9 real fields).
 *
 * huffctx (op 34) is the same coder with two codes per sub-chunk: a token
 * right after a zero run is coded with the second. Such a token is never a
 * run (runs are maximal), so that code holds only the non-zero words, and
 * the first code mostly the runs and the words after non-zero words: the
 * order-1 structure a single code wastes (ratio_study: 3-6 % smaller at
 * R = 1e-2 ... 1e-3 on the real fields; docs/ratio.md).
 *
 * The block-cooperative steps (tokens, histogram, bit offsets, bit writing,
 * the decoder's table) run with any number of threads; the code's
 * construction is one thread's (it touches at most 151 symbols).
 */

#ifndef H5FZ_HUFF_COMMON
#define H5FZ_HUFF_COMMON

#define H5FZ_HUFF_LITERALS 64u   /* values 1..64 are symbols 0..63 */
#define H5FZ_HUFF_BIG_FIRST 7u   /* bit-length classes start at bitlen 7 (values 65..127) */
#define H5FZ_HUFF_RUN_SYMS 29u   /* run classes: 1, then two per octave up to 2^14 */
#define H5FZ_HUFF_MAX_LEN 12u    /* longest code */
#define H5FZ_HUFF_LUT_BITS 9u    /* the decoder's table: codes of up to 9 bits in one look-up (measured: 10 bits left fewer blocks an SM) */
#define H5FZ_HUFF_MAX_SYMS 151u  /* the alphabet of 64-bit words */
/* The encoder's groups (docs/format.md §5.7): 64 << 4 = 1024 words, or
 * fewer in a sub-chunk dense in tokens, so that a group holds about
 * H5FZ_HUFF_GROUP_TOKENS of them on average and, by the count of non-zero
 * words in each window of the smallest groups, none more than about
 * H5FZ_HUFF_GROUP_MAX_TOKENS: the GPU decodes a group on one thread, and the
 * longest group is a small chunk's decode time (sessions 17, 18: by the
 * average alone, clustered non-zero words made groups of 250-550 tokens). */
#define H5FZ_HUFF_GROUP_LOG2 4u     /* the largest groups the encoder writes */
#define H5FZ_HUFF_MIN_GROUP_LOG2 2u /* the smallest: 256 words (each group costs a directory entry) */
#define H5FZ_HUFF_GROUP_TOKENS 128u /* measured (session 17): 256 left a 4.7 MiB chunk's decode 2x the default's */
#define H5FZ_HUFF_GROUP_MAX_TOKENS 384u /* measured (session 18): see docs/ratio.md */
#define H5FZ_HUFF_WINDOW (64u << H5FZ_HUFF_MIN_GROUP_LOG2) /* words a window: the smallest group */
#define H5FZ_HUFF_WINDOWS 64u       /* windows of 16384 words */
#define H5FZ_HUFF_MAX_GROUP_LOG2 8u /* groups of at most 16384 words: a run class covers them */
#define H5FZ_HUFF_MAX_GROUPS 256u  /* 16384 words in groups of 64 */
#define H5FZ_HUFF_MAX_THREADS 1024u
#define H5FZ_HUFF_NOT_SMALLER 0xffffffffu /* = H5FZ_RZE_NOT_SMALLER: the caller stores it raw */
#define H5FZ_HUFF_MAX_CTX 2u /* huff: one code; huffctx: two (docs/format.md §5.8) */

/* The GPU decode kernel's geometry: sub-chunks per block (their tables
 * fill 22 KiB of shared memory) and the block's threads, which take the
 * sub-chunks' groups one at a time (h5fz_huff_decode_jobs): 512 threads
 * for 128 groups of 1024 words, more where groups are smaller (dense
 * sub-chunks: 512 groups of 256 words), so that a thread that drew short
 * groups takes more; each header is parsed by a thread of its own warp
 * (session 17, with the smaller groups: a 4.7 MiB chunk's decode 0.85 ->
 * 0.51 ms on the H200; session 18, with each group bounded: 256 -> 512
 * threads took its group kernel from 271 to 248 us, where 8 -> 4
 * sub-chunks a block gave 250). */
#define H5FZ_HUFF_SUBS_PER_BLOCK 8u
#define H5FZ_HUFF_DEC_THREADS 512u

/* Symbols of the alphabet for W-bit words: literals, then bit-length
 * classes 7..W, then run classes. */
H5FZ_FN uint32_t h5fz_huff_big_syms(uint32_t W) { return W - H5FZ_HUFF_BIG_FIRST + 1u; }
H5FZ_FN uint32_t h5fz_huff_run_base(uint32_t W) { return H5FZ_HUFF_LITERALS + h5fz_huff_big_syms(W); }
H5FZ_FN uint32_t h5fz_huff_alphabet(uint32_t W) { return h5fz_huff_run_base(W) + H5FZ_HUFF_RUN_SYMS; }

/* Bits of a 32-bit x (0 for 0): one instruction on the GPU where the
 * 64-bit form takes three. */
H5FZ_FN uint32_t h5fz_huff_bitlen32(uint32_t x)
{
#if H5FZ_ON_GPU
  return 32u - (uint32_t)__clz((int)x);
#else
  return x ? 32u - (uint32_t)__builtin_clz(x) : 0u;
#endif
}

/* The run class of a run of r >= 1 zeros, and its extra bits (count). */
H5FZ_FN uint32_t h5fz_huff_run_class(uint32_t r, uint32_t *extra_bits)
{
  if (r == 1u) {
    *extra_bits = 0;
    return 0;
  }
  uint32_t c = h5fz_huff_bitlen32(r) - 1u; /* floor(log2 r) >= 1 */
  *extra_bits = c - 1u;
  return 2u * c - 1u + ((r >> (c - 1u)) & 1u);
}

/* A stream's decoding tables (shared memory on the GPU; 4.8 KiB, so that
 * a block can hold several sub-chunks' tables and decode them one thread
 * a group). Per code t: the canonical code by length (first code of each
 * length, counted MSB first, its symbols' place in sorted[], their count)
 * and a table of H5FZ_HUFF_LUT_BITS bits for the short codes whose
 * entries are decoded tokens (h5fz_huff_token_entry). */
typedef struct {
  uint32_t lut[H5FZ_HUFF_MAX_CTX][1u << H5FZ_HUFF_LUT_BITS]; /* h5fz_huff_token_entry; 0: a longer code or none */
  uint16_t first[H5FZ_HUFF_MAX_CTX][H5FZ_HUFF_MAX_LEN + 1u];
  uint16_t offs[H5FZ_HUFF_MAX_CTX][H5FZ_HUFF_MAX_LEN + 1u];
  uint16_t count[H5FZ_HUFF_MAX_CTX][H5FZ_HUFF_MAX_LEN + 1u];
  uint16_t listed[H5FZ_HUFF_MAX_SYMS]; /* h5fz_huff_get_table's: a table's entries, (symbol << 4) | length */
  uint8_t sorted[H5FZ_HUFF_MAX_CTX][H5FZ_HUFF_MAX_SYMS]; /* symbols by (length, symbol) */
  uint32_t nctx, alphabet, group, groups;
  uint64_t dir_at, start, end; /* bits: the directory's first entry, group 0's tokens, the stream's end */
  uint32_t dir_w, pad_;
} h5fz_huff_dtab;

/* A stream for h5fz_huff_decode_jobs: several streams' groups are
 * decoded by one block's threads (the GPU group kernel: the streams of
 * H5FZ_HUFF_SUBS_PER_BLOCK sub-chunks). */
typedef struct {
  const uint8_t *src;
  void *words;               /* H5FZ_T_WORD[n_store], zeroed: only non-zero words are stored */
  uint32_t size, n, n_store; /* the stream's bytes; its words (a multiple of 64); the words stored */
  uint32_t jobs_end;         /* the groups of this stream and of those before it */
  uint32_t bad;              /* set to 1 when a group is not one h5fz_huff_encode writes */
  uint32_t pad_;
} h5fz_huff_stream;

/* The bits of a sub-chunk's scratch (shared memory on the GPU); per code
 * (context) t < H5FZ_HUFF_MAX_CTX: */
typedef struct {
  uint32_t hist[H5FZ_HUFF_MAX_CTX][H5FZ_HUFF_MAX_SYMS];
  uint16_t code[H5FZ_HUFF_MAX_CTX][H5FZ_HUFF_MAX_SYMS]; /* bit-reversed canonical code: written LSB first */
  uint8_t len[H5FZ_HUFF_MAX_CTX][H5FZ_HUFF_MAX_SYMS];
  uint8_t pad_[2];
  uint32_t group_start[H5FZ_HUFF_MAX_GROUPS + 1u]; /* token bits before each group */
  uint32_t warp_first_nz[H5FZ_HUFF_MAX_THREADS / 32u]; /* the least of a warp's shares (GPU) */
  uint32_t warp_nnz[H5FZ_HUFF_MAX_THREADS / 32u];      /* the non-zero words of a warp's shares (GPU) */
  uint32_t header_bits, flag;
  uint32_t table_bits[H5FZ_HUFF_MAX_CTX];
  uint16_t toff[H5FZ_HUFF_MAX_CTX][H5FZ_HUFF_MAX_SYMS]; /* a symbol's entry in its code's table: bits after the count */
  uint8_t tgap[H5FZ_HUFF_MAX_CTX][H5FZ_HUFF_MAX_SYMS];  /* its distance to the previous listed symbol (the first: a + 1) */
  /* each code's construction (one thread a code, in different warps):
   * leaves by (count, symbol), tree; weights fit 32 bits (at most 16384
   * tokens) */
  uint16_t leaf[H5FZ_HUFF_MAX_CTX][H5FZ_HUFF_MAX_SYMS];
  uint16_t parent[H5FZ_HUFF_MAX_CTX][2u * H5FZ_HUFF_MAX_SYMS];
  uint32_t weight[H5FZ_HUFF_MAX_CTX][2u * H5FZ_HUFF_MAX_SYMS];
  /* the GPU's encode uses nothing from here on (H5FZ_HUFF_GPU_ENCODE_SCRATCH_BYTES) */
  uint32_t thread_first_nz[H5FZ_HUFF_MAX_THREADS]; /* first non-zero word of each share (CPU threads) */
  uint32_t thread_nnz[H5FZ_HUFF_MAX_THREADS];      /* non-zero words of each share (CPU threads) */
  h5fz_huff_dtab dec;                              /* the decoder's */
  h5fz_huff_stream stream;
  uint32_t next_job, pad2_;
} h5fz_huff_scratch;

/* Scratch bytes of one sub-chunk's encode or decode with nctx codes
 * (8-byte aligned; the same for both counts). */
H5FZ_FN uint32_t h5fz_huff_scratch_bytes(uint32_t nctx)
{
  (void)nctx;
  return (uint32_t)((sizeof(h5fz_huff_scratch) + 7u) & ~7u);
}

/* Scratch bytes of the GPU's encode (the fields before thread_first_nz,
 * 16-byte aligned): what its one-slot kernel holds beside the slot, so
 * that three blocks of 64 KiB sub-chunks fit an SM's shared memory. The
 * host computes it (codegen), where offsetof exists. */
#define H5FZ_HUFF_GPU_ENCODE_SCRATCH_BYTES ((offsetof(h5fz_huff_scratch, thread_first_nz) + 15u) & ~(size_t)15u)

/* *p += v (op H5FZ_HUFF_ADD) or *p |= v (H5FZ_HUFF_OR), atomically where
 * several threads share p; returns the old value. */
#define H5FZ_HUFF_ADD 0u
#define H5FZ_HUFF_OR 1u
H5FZ_FN uint32_t h5fz_huff_atomic(uint32_t *p, uint32_t v, uint32_t op)
{
#if H5FZ_ON_GPU
  return op == H5FZ_HUFF_OR ? atomicOr((unsigned *)p, (unsigned)v) : atomicAdd((unsigned *)p, (unsigned)v);
#elif defined(H5FZ_TEST_BLOCK_THREADS)
  return op == H5FZ_HUFF_OR ? __atomic_fetch_or(p, v, __ATOMIC_RELAXED) : __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
#else
  uint32_t old = *p;
  *p = op == H5FZ_HUFF_OR ? old | v : old + v;
  return old;
#endif
}

/* OR the low nbits (<= 64) of v into the stream at bit pos (words of 32
 * bits, LSB first; the words were zero). */
H5FZ_FN void h5fz_huff_put(uint32_t *buf, uint64_t pos, uint64_t v, uint32_t nbits)
{
  while (nbits) {
    uint32_t off = (uint32_t)(pos & 31u), take = 32u - off < nbits ? 32u - off : nbits;
    uint32_t part = (uint32_t)(v & ((1ull << take) - 1u));
    (void)h5fz_huff_atomic(buf + (pos >> 5), part << off, H5FZ_HUFF_OR);
    v >>= take;
    pos += take;
    nbits -= take;
  }
}

/* A thread's bit writer for its contiguous range of the stream: whole
 * 32-bit words of the range with plain stores, only a word it shares with
 * the thread before (its first, when the range starts inside it) or after
 * (its last, partial) by an atomic OR. Why: the stream is written straight
 * into its global slot on the GPU, where an atomic a token costs more than
 * a register and a store a word. The words the ORs reach must be zero
 * (h5fz_huff_wr_zero before the block's barrier). */
typedef struct {
  uint32_t *buf;
  uint64_t acc;           /* nacc pending bits, LSB first */
  uint32_t nacc, w;       /* bits pending; the word they go to */
  uint32_t shared_first;  /* the range starts inside word w: OR it */
} h5fz_huff_wr;

/* Start at bit pos of buf. */
H5FZ_FN void h5fz_huff_wr_init(h5fz_huff_wr *wr, uint32_t *buf, uint64_t pos)
{
  wr->buf = buf;
  wr->acc = 0;
  wr->nacc = (uint32_t)(pos & 31u);
  wr->w = (uint32_t)(pos >> 5);
  wr->shared_first = wr->nacc != 0u;
}

/* Zero the words of the range [pos, end) that h5fz_huff_wr ORs into
 * (its first when shared, its last when partial). */
H5FZ_FN void h5fz_huff_wr_zero(uint32_t *buf, uint64_t pos, uint64_t end)
{
  if (end <= pos) return;
  if (pos & 31u) buf[pos >> 5] = 0;
  if (end & 31u) buf[end >> 5] = 0;
}

H5FZ_FN void h5fz_huff_wr_word(h5fz_huff_wr *wr, uint32_t v)
{
  if (wr->shared_first) {
    (void)h5fz_huff_atomic(wr->buf + wr->w, v, H5FZ_HUFF_OR);
    wr->shared_first = 0;
  } else {
    wr->buf[wr->w] = v;
  }
  wr->w++;
}

/* Append the low nbits (<= 32) of v (its higher bits zero). */
H5FZ_FN void h5fz_huff_wr_put32(h5fz_huff_wr *wr, uint32_t v, uint32_t nbits)
{
  wr->acc |= (uint64_t)v << wr->nacc; /* nacc < 32: no bit lost */
  wr->nacc += nbits;
  if (wr->nacc >= 32u) {
    h5fz_huff_wr_word(wr, (uint32_t)wr->acc);
    wr->acc >>= 32;
    wr->nacc -= 32u;
  }
}

/* The pending bits of a last, partial word (ORed: the next range may start in it). */
H5FZ_FN void h5fz_huff_wr_flush(h5fz_huff_wr *wr)
{
  if (wr->nacc) (void)h5fz_huff_atomic(wr->buf + wr->w, (uint32_t)wr->acc, H5FZ_HUFF_OR);
  wr->nacc = 0;
}

/* Reverse the low n bits of x. */
H5FZ_FN uint32_t h5fz_huff_reverse(uint32_t x, uint32_t n)
{
#if H5FZ_ON_GPU
  return n ? __brev(x) >> (32u - n) : 0u;
#else
  uint32_t r = 0;
  for (uint32_t k = 0; k < n; k++) r |= ((x >> k) & 1u) << (n - 1u - k);
  return r;
#endif
}

/* Elias gamma of x >= 1: floor(log2 x) zeros, a one, the bits below it. */
H5FZ_FN uint32_t h5fz_huff_gamma_bits(uint32_t x) { return 2u * (h5fz_bitlen64(x) - 1u) + 1u; }

/* Canonical codes of code t from the lengths of the A symbols (0 =
 * absent): codes are assigned in order of (length, symbol), stored
 * bit-reversed. */
H5FZ_FN void h5fz_huff_canonical(h5fz_huff_scratch *s, uint32_t t, uint32_t A)
{
  uint32_t count[H5FZ_HUFF_MAX_LEN + 1u], next[H5FZ_HUFF_MAX_LEN + 1u];
  for (uint32_t l = 0; l <= H5FZ_HUFF_MAX_LEN; l++) count[l] = 0;
  for (uint32_t a = 0; a < A; a++) count[s->len[t][a]]++;
  uint32_t c = 0;
  count[0] = 0;
  for (uint32_t l = 1; l <= H5FZ_HUFF_MAX_LEN; l++) {
    c = (c + count[l - 1u]) << 1;
    next[l] = c;
  }
  for (uint32_t a = 0; a < A; a++) {
    uint32_t l = s->len[t][a];
    s->code[t][a] = l ? (uint16_t)h5fz_huff_reverse(next[l]++, l) : 0u;
  }
}

/* All threads: s->leaf[t][0..k[t]) = the symbols of code t (t < nctx)
 * with a non-zero count in order of (count, symbol), each thread ranking
 * its symbols against all (the order is unique, so the split does not
 * change it); sets k[t]. */
H5FZ_FN void h5fz_huff_sort_leaves(const h5fz_blk *blk, h5fz_huff_scratch *s, uint32_t nctx, uint32_t A,
                                   uint32_t k[H5FZ_HUFF_MAX_CTX])
{
  uint32_t mine[H5FZ_HUFF_MAX_CTX] = {0};
  H5FZ_FOR_ITEMS(ta, blk, nctx * A)
  {
    uint32_t t = ta / A, a = ta - t * A;
    const uint32_t *hist = s->hist[t];
    uint32_t c = hist[a];
    if (!c) continue;
    uint32_t rank = 0;
    for (uint32_t b = 0; b < A; b++) {
      uint32_t d = hist[b];
      rank += d && (d < c || (d == c && b < a));
    }
    s->leaf[t][rank] = (uint16_t)a;
    mine[t]++;
  }
#if H5FZ_ON_GPU
  /* each warp counts the symbols with a count itself (a ballot per 32
   * symbols): no block scan, whose two barriers the block waited at
   * (mine[] is the CPU's count; unused here, the compiler drops it) */
  (void)mine;
  const uint32_t lane = blk->tid & 31u;
  for (uint32_t t = 0; t < nctx; t++) {
    k[t] = 0;
    for (uint32_t a0 = 0; a0 < A; a0 += 32u)
      k[t] += (uint32_t)__popc(__ballot_sync(0xffffffffu, a0 + lane < A && s->hist[t][a0 + lane] != 0u));
  }
#else
  /* both codes' counts in one block sum (each below 2^32): one scan's
   * barriers, not one a code */
  uint64_t total;
  (void)h5fz_blk_exscan(blk, (uint64_t)mine[0] | (nctx > 1u ? (uint64_t)mine[1] << 32 : 0u), &total);
  k[0] = (uint32_t)total;
  if (nctx > 1u) k[1] = (uint32_t)(total >> 32);
#endif
  h5fz_blk_sync(blk);
}

/* The thread that builds and writes code t: codes in different warps run
 * at once on the GPU; one thread does all on the CPU. */
H5FZ_FN uint32_t h5fz_huff_builder(const h5fz_blk *blk, uint32_t t) { return 32u * t < blk->nthreads ? 32u * t : 0u; }

/* One thread: the lengths of code t's A symbols from s->hist[t] and the k
 * sorted leaves (a length-limited Huffman code; see docs/format.md §5.7
 * for the exact rules, which decide the bytes). Returns 0. */
H5FZ_FN uint32_t h5fz_huff_lengths(h5fz_huff_scratch *s, uint32_t t, uint32_t A, uint32_t k)
{
  uint8_t *len = s->len[t];
  const uint16_t *leaf = s->leaf[t];
  uint16_t *parent = s->parent[t];
  uint32_t *weight = s->weight[t];
  for (uint32_t a = 0; a < A; a++) len[a] = 0;
  if (k == 0) return 0;
  uint32_t bl[64];
  for (uint32_t l = 0; l < 64u; l++) bl[l] = 0;
  if (k == 1) {
    bl[1] = 1;
  } else {
    /* two queues: leaves (sorted), internal nodes (made in nondecreasing
     * weight); on equal weights the leaf is taken first */
    uint32_t li = 0, ni = k, nn = k; /* nodes: 0..k-1 leaves (by rank), k.. internal */
    for (uint32_t i = 0; i < k; i++) weight[i] = s->hist[t][leaf[i]];
    for (uint32_t m = 0; m + 1u < k; m++) {
      uint32_t pick[2];
      for (uint32_t p = 0; p < 2u; p++) {
        if (li < k && (ni >= nn || weight[li] <= weight[ni]))
          pick[p] = li++;
        else
          pick[p] = ni++;
      }
      weight[nn] = weight[pick[0]] + weight[pick[1]];
      parent[pick[0]] = (uint16_t)nn;
      parent[pick[1]] = (uint16_t)nn;
      nn++;
    }
    /* depths, root (the last node) first; reuse weight[] for them */
    weight[nn - 1u] = 0;
    for (uint32_t v = nn - 1u; v-- > 0;) weight[v] = weight[parent[v]] + 1u;
    for (uint32_t i = 0; i < k; i++) bl[weight[i]]++;
    /* limit to MAX_LEN (JPEG, Annex K.3): keeps the Kraft sum at 1 */
    for (uint32_t i = 63u; i > H5FZ_HUFF_MAX_LEN; i--) {
      while (bl[i] > 0) {
        uint32_t j = i - 2u;
        while (bl[j] == 0) j--;
        bl[i] -= 2u;
        bl[i - 1u] += 1u;
        bl[j + 1u] += 2u;
        bl[j] -= 1u;
      }
    }
  }
  /* lengths: the most frequent leaf (the last by rank) gets the shortest */
  uint32_t l = 1, r = k;
  while (r > 0) {
    while (bl[l] == 0) l++;
    bl[l]--;
    len[leaf[--r]] = (uint8_t)l;
  }
  return 0;
}

#if H5FZ_ON_GPU
/* The largest of v over a warp's lanes (all 32 call it). */
H5FZ_FN uint32_t h5fz_huff_warp_max(uint32_t v)
{
  for (uint32_t d = 16; d; d >>= 1) {
    const uint32_t y = __shfl_xor_sync(0xffffffffu, v, d);
    v = y > v ? y : v;
  }
  return v;
}

/* All 32 lanes of one warp: h5fz_huff_lengths for code t, the same
 * lengths. Why a warp: the block waits for its codes (that wait was a
 * fifth of the GPU encode's stall samples in session 18, a ninth in
 * session 20). Lane 0 does the merges (each depends on the one before),
 * with the queues' heads and each queue's next weight in registers so that
 * a merge waits for no load, and the length limit, from the deepest leaf
 * down (it scanned 51 depths for every code). The lanes clear the lengths,
 * copy the weights, find the internal nodes' depths by pointer jumping
 * (log2 of the depth rounds instead of a dependent load a node), count the
 * leaves' depths (into hist[t], no longer needed once the weights are
 * copied) and hand out the lengths, each by rank. */
H5FZ_FN void h5fz_huff_lengths_warp(h5fz_huff_scratch *s, uint32_t t, uint32_t A, uint32_t k, uint32_t lane)
{
  uint8_t *len = s->len[t];
  const uint16_t *leaf = s->leaf[t];
  uint16_t *parent = s->parent[t];
  uint32_t *weight = s->weight[t], *bl = s->hist[t]; /* bl: leaves by depth, 0..63 */
  for (uint32_t a = lane; a < A; a += 32u) len[a] = 0;
  for (uint32_t i = lane; i < k; i += 32u) weight[i] = s->hist[t][leaf[i]];
  __syncwarp();
  if (k < 2u) {
    if (k == 1u && lane == 0) len[leaf[0]] = 1;
    __syncwarp();
    return;
  }
  bl[lane] = 0;
  bl[lane + 32u] = 0;
  if (lane == 0) {
    /* two queues (leaves sorted, internal nodes made in nondecreasing
     * weight); a leaf first on equal weights; an exhausted queue's head
     * weighs more than any node. wl, wl1: the weights of leaves li, li + 1;
     * wn, wn1: of nodes ni, ni + 1 (none where not made yet) */
    const uint32_t none = 0xffffffffu;
    uint32_t li = 0, ni = k, nn = k, wl = weight[0], wl1 = weight[1], wn = none, wn1 = none;
    for (uint32_t m = 0; m + 1u < k; m++) {
      uint32_t pick[2], w[2];
      for (uint32_t p = 0; p < 2u; p++) {
        if (wl <= wn) {
          pick[p] = li++;
          w[p] = wl;
          wl = wl1;
          wl1 = li + 1u < k ? weight[li + 1u] : none;
        } else {
          pick[p] = ni++;
          w[p] = wn;
          wn = wn1;
          wn1 = ni + 1u < nn ? weight[ni + 1u] : none;
        }
      }
      const uint32_t sum = w[0] + w[1];
      weight[nn] = sum;
      if (ni == nn) wn = sum; /* the node queue was empty: the new node heads it */
      else if (ni + 1u == nn) wn1 = sum;
      parent[pick[0]] = (uint16_t)nn;
      parent[pick[1]] = (uint16_t)nn;
      nn++;
    }
  }
  __syncwarp();
  /* the internal nodes' depths (root 2k - 2: depth 0) by pointer jumping,
   * each node's (depth so far << 16 | its ancestor that far up) in one of
   * two buffers a round reads and writes in turn: weight[v] (the nodes'
   * weights are no longer needed) and weight[v - k] (the leaves'). A node
   * a lane at a time, not unrolled: registers are what this kernel lacks. */
  const uint32_t root = 2u * k - 2u;
  for (uint32_t v = k + lane; v <= root; v += 32u) weight[v] = v < root ? 1u << 16 | parent[v] : root;
  uint32_t from = 0, to = k; /* a buffer's offset: node v at weight[v - offset] */
  __syncwarp();
  for (;;) {
    uint32_t open = 0; /* a node of this lane whose ancestor is not the root yet */
    H5FZ_NO_UNROLL
    for (uint32_t v = k + lane; v <= root; v += 32u) {
      const uint32_t x = weight[v - from], up = weight[(x & 0xffffu) - from];
      weight[v - to] = ((x >> 16) + (up >> 16)) << 16 | (up & 0xffffu);
      open |= (up & 0xffffu) != root;
    }
    __syncwarp();
    const uint32_t t_ = from;
    from = to;
    to = t_;
    if (!__ballot_sync(0xffffffffu, open)) break;
  }
  uint32_t deepest = 0;
  for (uint32_t i = lane; i < k; i += 32u) {
    const uint32_t d = (weight[parent[i] - from] >> 16) + 1u; /* its parent's depth + 1 */
    atomicAdd(&bl[d], 1u);
    deepest = d > deepest ? d : deepest;
  }
  deepest = h5fz_huff_warp_max(deepest);
  __syncwarp();
  if (lane == 0) /* limit to MAX_LEN (JPEG, Annex K.3): keeps the Kraft sum at 1 */
    for (uint32_t i = deepest; i > H5FZ_HUFF_MAX_LEN; i--) {
      while (bl[i] > 0) {
        uint32_t j = i - 2u;
        while (bl[j] == 0) j--;
        bl[i] -= 2u;
        bl[i - 1u] += 1u;
        bl[j + 1u] += 2u;
        bl[j] -= 1u;
      }
    }
  __syncwarp();
  /* the most frequent leaf (the last by rank) gets the shortest: the leaf
   * q-th from the top (q = k - 1 - rank) gets the length l with
   * bl[1] + ... + bl[l - 1] <= q < bl[1] + ... + bl[l] */
  for (uint32_t r = lane; r < k; r += 32u) {
    const uint32_t q = k - 1u - r;
    uint32_t l = 1, below = bl[1];
    while (below <= q) below += bl[++l];
    len[leaf[r]] = (uint8_t)l;
  }
  __syncwarp();
}
#endif

/* One thread (the CPU's form; a block uses h5fz_huff_codes_parallel): code
 * t's canonical codes from its lengths. Returns the bits of the table as
 * the stream stores it (8 for the empty code of huffctx). */
H5FZ_FN uint32_t h5fz_huff_codes_serial(h5fz_huff_scratch *s, uint32_t t, uint32_t A)
{
  const uint8_t *len = s->len[t];
  h5fz_huff_canonical(s, t, A);
  uint32_t bits = 8u, prev = 0, first = 1;
  for (uint32_t a = 0; a < A; a++) {
    if (!len[a]) continue;
    bits += h5fz_huff_gamma_bits(first ? a + 1u : a - prev) + 4u;
    prev = a;
    first = 0;
  }
  return bits;
}

/* One thread: write code t's table at bit pos (the count of symbols, less
 * one for huff, whose code is never empty (nctx 1), as it is for huffctx
 * (nctx 2); then per symbol the gamma of its distance to the previous one
 * and its length). Returns the position after it. */
H5FZ_FN uint64_t h5fz_huff_put_table(const h5fz_huff_scratch *s, uint32_t t, uint32_t nctx, uint32_t A, uint32_t *buf,
                                     uint64_t pos)
{
  const uint8_t *len = s->len[t];
  uint32_t k = 0, prev = 0, first = 1;
  for (uint32_t a = 0; a < A; a++) k += len[a] != 0;
  h5fz_huff_put(buf, pos, nctx == 1u ? k - 1u : k, 8u);
  pos += 8u;
  for (uint32_t a = 0; a < A; a++) {
    if (!len[a]) continue;
    uint32_t x = first ? a + 1u : a - prev, nb = h5fz_bitlen64(x) - 1u;
    /* nb zeros, a one, the nb bits below the leading one */
    h5fz_huff_put(buf, pos + nb, 1u | ((uint64_t)(x & ((1u << nb) - 1u)) << 1), nb + 1u);
    pos += 2u * nb + 1u;
    h5fz_huff_put(buf, pos, len[a], 4u);
    pos += 4u;
    prev = a;
    first = 0;
  }
  return pos;
}

/* All threads of a block (the GPU's form of h5fz_huff_codes_serial and
 * h5fz_huff_put_table's layout): for every symbol a of the nctx codes, its
 * canonical code, its table entry's offset and gap, and each code's table
 * bits, from the lengths alone. Canonical codes in (length, symbol) order
 * are code(a) = (sum over the symbols b before a of 2^(12 - len b)) >>
 * (12 - len a), so one pass over the alphabet gives a symbol its code and
 * its place in the table without the per-length counts; the passes of all
 * symbols run at once (one thread had most of a sub-chunk's time, the
 * block waiting at the barrier after it). */
H5FZ_FN void h5fz_huff_codes_parallel(const h5fz_blk *blk, h5fz_huff_scratch *s, uint32_t nctx, uint32_t A)
{
  H5FZ_FOR_ITEMS(ta, blk, nctx * A)
  {
    const uint32_t t = ta / A, a = ta - t * A;
    const uint8_t *len = s->len[t];
    const uint32_t l = len[a];
    uint32_t sum = 0, before = 0, total = 0, prev = 0, first = 1, gap = 0;
    for (uint32_t b = 0; b < A; b++) {
      const uint32_t lb = len[b];
      if (!lb) continue;
      const uint32_t x = first ? b + 1u : b - prev, eb = h5fz_huff_gamma_bits(x) + 4u;
      if (b == a) gap = x;
      if (b < a) before += eb;
      if (lb < l || (lb == l && b < a)) sum += 1u << (H5FZ_HUFF_MAX_LEN - lb);
      total += eb;
      prev = b;
      first = 0;
    }
    s->code[t][a] = l ? (uint16_t)h5fz_huff_reverse(sum >> (H5FZ_HUFF_MAX_LEN - l), l) : 0u;
    s->toff[t][a] = (uint16_t)before;
    s->tgap[t][a] = (uint8_t)gap;
    if (a == 0) s->table_bits[t] = 8u + total;
  }
}

#if H5FZ_ON_GPU
/* Inclusive prefix sum of v over a warp's lanes (all 32 call it). */
H5FZ_FN uint32_t h5fz_huff_warp_incl(uint32_t v, uint32_t lane)
{
  for (uint32_t d = 1; d < 32u; d <<= 1) {
    const uint32_t y = __shfl_up_sync(0xffffffffu, v, d);
    if (lane >= d) v += y;
  }
  return v;
}

/* The 8-bit field of length l (1..12) in counts packed four lengths a word. */
#define H5FZ_HUFF_LEN_FIELD(c, l) (((c)[((l)-1u) >> 2] >> (8u * (((l)-1u) & 3u))) & 255u)
#define H5FZ_HUFF_LEN_ONE(l) (1u << (8u * (((l)-1u) & 3u)))

/* All 32 lanes of one warp: what h5fz_huff_codes_parallel gives code t,
 * the lanes holding contiguous runs of symbols and warp scans standing in
 * for each symbol's pass over the alphabet (those passes were 5 % of the
 * GPU encode's instructions and a wait for the block, session 18). A
 * symbol's code is (the sum of 2^(12 - L) over the lengths L below its
 * own, counted per symbol: a multiple of 2^(12 - l)) >> (12 - l) plus its
 * rank among the symbols of its length; its table entry's offset is the
 * sum of the entries before it. Per-length counts ride in 8-bit fields
 * (at most 151 symbols). */
H5FZ_FN void h5fz_huff_codes_warp(h5fz_huff_scratch *s, uint32_t t, uint32_t A, uint32_t lane)
{
  const uint8_t *len = s->len[t];
  const uint32_t P = (A + 31u) >> 5, a0 = lane * P;
  uint32_t cnt[3] = {0, 0, 0}, before[3], total[3];
  int32_t last = -1; /* this lane's last listed symbol */
  for (uint32_t j = 0; j < P; j++) {
    const uint32_t a = a0 + j, l = a < A ? len[a] : 0u;
    if (l) {
      cnt[(l - 1u) >> 2] += H5FZ_HUFF_LEN_ONE(l);
      last = (int32_t)a;
    }
  }
  for (uint32_t q = 0; q < 3u; q++) {
    const uint32_t incl = h5fz_huff_warp_incl(cnt[q], lane);
    before[q] = incl - cnt[q];
    total[q] = __shfl_sync(0xffffffffu, incl, 31);
  }
  int32_t prev = last; /* the last listed symbol of this lane and those below it, then of those below only */
  for (uint32_t d = 1; d < 32u; d <<= 1) {
    const int32_t y = __shfl_up_sync(0xffffffffu, prev, d);
    if (lane >= d && y > prev) prev = y;
  }
  prev = __shfl_up_sync(0xffffffffu, prev, 1);
  if (lane == 0) prev = -1;
  /* lane L (1..12): the sum of 2^(12 - L') over the symbols of lengths L' < L */
  const uint32_t mine = lane >= 1u && lane <= H5FZ_HUFF_MAX_LEN ? H5FZ_HUFF_LEN_FIELD(total, lane) << (H5FZ_HUFF_MAX_LEN - lane) : 0u;
  const uint32_t shorter = h5fz_huff_warp_incl(mine, lane) - mine;
  uint32_t bits = 0; /* this lane's table entries */
  for (int32_t j = 0, p = prev; j < (int32_t)P; j++) {
    const uint32_t a = a0 + (uint32_t)j, l = a < A ? len[a] : 0u;
    if (l) {
      bits += h5fz_huff_gamma_bits(p < 0 ? a + 1u : a - (uint32_t)p) + 4u;
      p = (int32_t)a;
    }
  }
  const uint32_t bincl = h5fz_huff_warp_incl(bits, lane), btotal = __shfl_sync(0xffffffffu, bincl, 31);
  uint32_t off = bincl - bits;
  for (uint32_t j = 0; j < P; j++) {
    const uint32_t a = a0 + j, l = a < A ? len[a] : 0u;
    const uint32_t sh = __shfl_sync(0xffffffffu, shorter, l); /* every lane, every j: a full warp */
    if (a >= A) continue;
    uint32_t gap = 0, code = 0;
    if (l) {
      code = (sh >> (H5FZ_HUFF_MAX_LEN - l)) + H5FZ_HUFF_LEN_FIELD(before, l);
      before[(l - 1u) >> 2] += H5FZ_HUFF_LEN_ONE(l);
      gap = prev < 0 ? a + 1u : a - (uint32_t)prev;
      prev = (int32_t)a;
    }
    s->code[t][a] = l ? (uint16_t)h5fz_huff_reverse(code, l) : 0u;
    s->toff[t][a] = (uint16_t)off;
    s->tgap[t][a] = (uint8_t)gap;
    if (l) off += h5fz_huff_gamma_bits(gap) + 4u;
  }
  if (lane == 0) s->table_bits[t] = 8u + btotal;
}
#endif

/* All threads of a block: write the nctx tables at bit table_at (k[t]
 * symbols in code t), each symbol's entry by one thread
 * (h5fz_huff_codes_parallel's offsets; as h5fz_huff_put_table writes). */
H5FZ_FN void h5fz_huff_put_tables_parallel(const h5fz_blk *blk, const h5fz_huff_scratch *s, uint32_t nctx, uint32_t A,
                                           const uint32_t *k, uint32_t *buf, uint64_t table_at)
{
  if (blk->tid < nctx) {
    uint64_t at = table_at;
    for (uint32_t t = 0; t < blk->tid; t++) at += s->table_bits[t];
    h5fz_huff_put(buf, at, nctx == 1u ? k[blk->tid] - 1u : k[blk->tid], 8u);
  }
  H5FZ_FOR_ITEMS(ta, blk, nctx * A)
  {
    const uint32_t t = ta / A, a = ta - t * A, l = s->len[t][a];
    if (!l) continue;
    uint64_t pos = table_at + 8u + s->toff[t][a];
    for (uint32_t u = 0; u < t; u++) pos += s->table_bits[u];
    const uint32_t x = s->tgap[t][a], nb = h5fz_bitlen64(x) - 1u;
    /* nb zeros, a one, the nb bits below the leading one; the length */
    h5fz_huff_put(buf, pos + nb, 1u | ((uint64_t)(x & ((1u << nb) - 1u)) << 1), nb + 1u);
    h5fz_huff_put(buf, pos + 2u * nb + 1u, l, 4u);
  }
}

/* A reader of a byte stream's bits, LSB first; bits past the end read as
 * 0. On the CPU a 64-bit buffer holds at least 57 valid bits after a fill
 * (bytes one at a time); on the GPU at least 32 (one aligned 32-bit load a
 * fill: the group decoder's loop then has one load, not a byte loop whose
 * trip count differs between the lanes of a warp), and the words after
 * them are loaded two fills ahead (`ahead`, `ahead2`), so that a refill
 * waits for no load (session 18: the refill's global load held the group
 * kernel's threads). A loaded word is kept as loaded and its bytes past the
 * end cleared only when a fill shifts it in (`keep`, computed without the
 * load): masking it at the load was a use of the load's register, so the
 * thread waited for the load there at every fill; and one word ahead was
 * not enough, as the compiler issued the load before the fill's read of
 * the old word and so loaded into another register and copied it at the
 * fill's end, a wait for the load it had just issued (sessions 24-25, the
 * SASS). Two ahead, that copy is of the load one fill back.
 * The stream position is derived when asked for (h5fz_huff_rd_pos), not
 * counted at every skip: the decoder's step is a chain of dependent
 * instructions, each one on its critical path. */
typedef struct {
  const uint8_t *in;
  uint32_t size, nacc;
  int32_t next;   /* CPU: the next byte to load; GPU: the byte offset (from in) of the aligned word after `ahead2` */
  uint32_t ahead; /* GPU: the aligned word at next - 8, as loaded (any value when it starts past the end) */
  uint32_t ahead2; /* GPU: the word after it, at next - 4 */
  uint32_t keep, keep2; /* GPU: the masks of ahead's and ahead2's bytes before the end */
  uint64_t acc;   /* nacc pending bits */
  int64_t bias;   /* the position: bias + 8 next - nacc (GPU: less the 64 bits of ahead and ahead2) */
} h5fz_huff_reader;

/* The aligned 32-bit word at p (the GPU reader's load): __ldg on the GPU,
 * memcpy where the device code runs on the host (tests' emulator). */
H5FZ_FN uint32_t h5fz_huff_load_word(const uint8_t *p)
{
#if defined(__CUDACC_RTC__) || defined(__NVCC__)
  return __ldg((const unsigned *)p);
#else
  uint32_t w;
  memcpy(&w, p, 4);
  return w;
#endif
}

#if H5FZ_ON_GPU
/* The GPU reader's aligned word at byte offset at of in (at may be below 0:
 * the word holding the first byte) into *w, as loaded: it may hold bytes
 * at or past size, which h5fz_huff_rd_keep masks. Past the end *w is left
 * as it was (its mask is 0): a load predicated into its own register,
 * which the compiler keeps in place, where a select of the load or 0 made
 * it load into another register and copy it at once, a wait for the load. */
H5FZ_FN void h5fz_huff_rd_load(const h5fz_huff_reader *r, int32_t at, uint32_t *w)
{
  if (at < (int32_t)r->size) *w = h5fz_huff_load_word(r->in + at);
}

/* The mask of that word's bytes before size (they read as loaded, the
 * rest as 0). */
H5FZ_FN uint32_t h5fz_huff_rd_keep(const h5fz_huff_reader *r, int32_t at)
{
  const int32_t valid = (int32_t)r->size - at;
  return valid >= 4 ? 0xffffffffu : valid <= 0 ? 0u : (1u << (8 * valid)) - 1u;
}
#endif

H5FZ_FN void h5fz_huff_rd_fill(h5fz_huff_reader *r)
{
#if H5FZ_ON_GPU
  if (r->nacc < 32u) {
    r->acc |= (uint64_t)(r->ahead & r->keep) << r->nacc; /* the first use of the load two fills back */
    r->nacc += 32u;
    r->ahead = r->ahead2;
    r->keep = r->keep2;
    h5fz_huff_rd_load(r, r->next, &r->ahead2);
    r->keep2 = h5fz_huff_rd_keep(r, r->next);
    r->next += 4;
  }
#else
  while (r->nacc <= 56u) {
    r->acc |= (uint64_t)(r->next < (int32_t)r->size ? r->in[r->next] : 0u) << r->nacc;
    r->next++;
    r->nacc += 8u;
  }
#endif
}

/* The stream position (bits) of the next bit the reader returns. */
H5FZ_FN uint64_t h5fz_huff_rd_pos(const h5fz_huff_reader *r)
{
#if H5FZ_ON_GPU
  return (uint64_t)(r->bias + 8 * (int64_t)r->next - 64 - (int64_t)r->nacc);
#else
  return (uint64_t)(r->bias + 8 * (int64_t)r->next - (int64_t)r->nacc);
#endif
}

H5FZ_FN void h5fz_huff_rd_init(h5fz_huff_reader *r, const uint8_t *in, uint32_t size, uint64_t pos)
{
  r->in = in;
  r->size = size;
  r->acc = 0;
  r->nacc = 0;
  r->ahead = r->ahead2 = 0;
  r->keep = r->keep2 = 0;
  r->bias = 0;
  if (pos >> 3 >= size) { /* all past the end: every fill brings zeros */
    r->next = (int32_t)size;
    r->bias = (int64_t)pos - 8 * (int64_t)size + (H5FZ_ON_GPU ? 64 : 0);
    return;
  }
  uint32_t byte = (uint32_t)(pos >> 3), skip = (uint32_t)(pos & 7u);
#if H5FZ_ON_GPU
  const uint32_t mis = (uint32_t)((unsigned long long)(in + byte) & 3u); /* the aligned word holding the first byte */
  const int32_t at = (int32_t)byte - (int32_t)mis;
  uint32_t first = 0;
  h5fz_huff_rd_load(r, at, &first); /* the three loads in flight at once */
  h5fz_huff_rd_load(r, at + 4, &r->ahead);
  h5fz_huff_rd_load(r, at + 8, &r->ahead2);
  r->acc = first & h5fz_huff_rd_keep(r, at);
  r->keep = h5fz_huff_rd_keep(r, at + 4);
  r->keep2 = h5fz_huff_rd_keep(r, at + 8);
  r->nacc = 32u;
  r->next = at + 12;
  skip += 8u * mis;
#else
  r->next = (int32_t)byte;
  h5fz_huff_rd_fill(r);
#endif
  r->acc >>= skip;
  r->nacc -= skip;
}

/* The next nbits (<= 32) bits, left in the stream / taken from it. */
H5FZ_FN uint32_t h5fz_huff_rd_peek(h5fz_huff_reader *r, uint32_t nbits)
{
  if (r->nacc < nbits) h5fz_huff_rd_fill(r);
  return (uint32_t)(r->acc & ((1ull << nbits) - 1u));
}

H5FZ_FN void h5fz_huff_rd_skip(h5fz_huff_reader *r, uint32_t nbits) /* nbits <= 32, after a peek of them */
{
  r->acc >>= nbits;
  r->nacc -= nbits;
}

H5FZ_FN uint32_t h5fz_huff_rd_get(h5fz_huff_reader *r, uint32_t nbits)
{
  uint32_t v = h5fz_huff_rd_peek(r, nbits);
  h5fz_huff_rd_skip(r, nbits);
  return v;
}

/* One thread: read code t's table from r (nctx: as h5fz_huff_put_table)
 * into its canonical code by length (first, offs, count, sorted). Returns
 * 0, or -1 when it is not a table this coder writes (more symbols than the
 * alphabet, a symbol outside it, a length of 0 or over 12, an incomplete
 * code of two or more symbols, one symbol of length other than 1, a run
 * symbol in huffctx's second code, or a table past the stream's end).
 * Why one peek an entry and no pass over the alphabet: a sub-chunk's
 * headers are read before any of its groups, one thread each, so every
 * step here delays the whole decode; the listed symbols wait in listed[]
 * in stream order, which is symbol order, until the counts place them. */
H5FZ_FN int h5fz_huff_get_table(h5fz_huff_dtab *d, uint32_t t, h5fz_huff_reader *r)
{
  const uint32_t A = d->alphabet;
  uint32_t k = h5fz_huff_rd_get(r, 8u) + (d->nctx == 1u ? 1u : 0u), a = 0, kraft = 0, l = 0;
  uint16_t *first = d->first[t], *offs = d->offs[t], *count = d->count[t], *listed = d->listed;
  for (uint32_t i = 0; i <= H5FZ_HUFF_MAX_LEN; i++) count[i] = 0;
  if (k > A || h5fz_huff_rd_pos(r) > d->end) return -1;
  for (uint32_t i = 0; i < k; i++) {
    /* an entry: the gamma of the distance to the symbol before (nb
     * zeros, a one, nb bits), the length in 4 bits: at most 2 * 8 + 5 bits */
    const uint32_t z = h5fz_huff_rd_peek(r, 21u);
    if (!(z & 511u)) return -1; /* nine zeros: no gamma this coder writes */
    const uint32_t nb = h5fz_bitlen64(z & (0u - z)) - 1u; /* zeros before the first one */
    const uint32_t x = (1u << nb) | ((z >> (nb + 1u)) & ((1u << nb) - 1u));
    l = (z >> (2u * nb + 1u)) & 15u;
    h5fz_huff_rd_skip(r, 2u * nb + 5u);
    a = i == 0 ? x - 1u : a + x;
    if (a >= A || l == 0 || l > H5FZ_HUFF_MAX_LEN || h5fz_huff_rd_pos(r) > d->end) return -1;
    if (t == 1u && a >= A - H5FZ_HUFF_RUN_SYMS) return -1; /* huffctx: the token after a run is never a run */
    listed[i] = (uint16_t)(a << 4 | l);
    count[l]++;
    kraft += 1u << (H5FZ_HUFF_MAX_LEN - l);
  }
  if (k == 0 ? 0 : k == 1 ? l != 1u : kraft != (1u << H5FZ_HUFF_MAX_LEN)) return -1;
  /* canonical order: codes by (length, symbol), numbered MSB first */
  uint32_t c = 0, o = 0;
  for (uint32_t i = 1; i <= H5FZ_HUFF_MAX_LEN; i++) {
    c = (c + count[i - 1u]) << 1;
    first[i] = (uint16_t)c;
    offs[i] = (uint16_t)o;
    o += count[i];
  }
  first[0] = offs[0] = 0;
  uint16_t at[H5FZ_HUFF_MAX_LEN + 1u];
  for (uint32_t i = 0; i <= H5FZ_HUFF_MAX_LEN; i++) at[i] = offs[i];
  for (uint32_t i = 0; i < k; i++) d->sorted[t][at[listed[i] & 15u]++] = (uint8_t)(listed[i] >> 4);
  return 0;
}

/* One thread: the stream's header (the group field, the nctx tables, the
 * directory's width) for n words into d. Returns 0, or -1 when it is not
 * one h5fz_huff_encode writes (a bad group field or table, more groups
 * than 256, a directory past the end). */
H5FZ_FN int h5fz_huff_read_header(h5fz_huff_dtab *d, const uint8_t *in, uint32_t size, uint32_t n, uint32_t nctx,
                                  uint32_t W)
{
  h5fz_huff_reader r;
  h5fz_huff_rd_init(&r, in, size, 0);
  uint32_t g = h5fz_huff_rd_get(&r, 4u);
  d->nctx = nctx;
  d->alphabet = h5fz_huff_alphabet(W);
  d->end = 8ull * size;
  d->group = 64u << (g <= H5FZ_HUFF_MAX_GROUP_LOG2 ? g : 0u);
  d->groups = (n + d->group - 1u) / d->group;
  if (size == 0 || g > H5FZ_HUFF_MAX_GROUP_LOG2 || n == 0 || d->groups > H5FZ_HUFF_MAX_GROUPS) return -1;
  for (uint32_t t = 0; t < nctx; t++)
    if (h5fz_huff_get_table(d, t, &r)) return -1;
  d->dir_w = h5fz_huff_rd_get(&r, 5u);
  d->dir_at = h5fz_huff_rd_pos(&r);
  d->start = d->dir_at + (uint64_t)(d->groups - 1u) * d->dir_w;
  return d->start <= d->end ? 0 : -1;
}

/* Reverse the low H5FZ_HUFF_LUT_BITS bits of x. */
H5FZ_FN uint32_t h5fz_huff_rev_lut(uint32_t x)
{
#if H5FZ_ON_GPU
  return __brev(x) >> (32u - H5FZ_HUFF_LUT_BITS);
#else
  return h5fz_huff_reverse(x, H5FZ_HUFF_LUT_BITS);
#endif
}

/* A token in the decoder's form (a look-up table entry, 32 bits; never
 * 0): bits 0-5 the bits to skip (the code's, and its extra bits' where
 * they are in the entry), bits 6-11 the extra bits still to read (more),
 * bit 12 a run, bit 13 a bit-length class whose leading one is 1 << more,
 * bit 14 a token h5fz_huff_encode never writes, bits 16-31 the value: a literal's word, a run's length (or the base its
 * extra bits are ORed into), a bit-length class's word. Why the extra
 * bits in the entry: the token step is a chain of dependent instructions
 * (session 23: about 1300 cycles a token on the H200), and a short code
 * with its few extra bits, the most common token, then takes one look-up
 * and one skip. */
#define H5FZ_HUFF_E_SKIP(e) ((e)&63u)
#define H5FZ_HUFF_E_MORE(e) (((e) >> 6) & 63u)
#define H5FZ_HUFF_E_RUN 0x1000u
#define H5FZ_HUFF_E_LEAD 0x2000u
#define H5FZ_HUFF_E_BAD 0x4000u
#define H5FZ_HUFF_E_VALUE(e) ((e) >> 16)

/* The entry of symbol sym of an alphabet whose run classes start at
 * run_base, coded in len bits, followed by the stream bits x of which
 * avail are known (the look-up table's index above the code; 0: none):
 * its extra bits go into the entry when they are among them. A
 * bit-length class value that a literal codes (64, the only one an entry
 * can hold) is H5FZ_HUFF_E_BAD. */
H5FZ_FN uint32_t h5fz_huff_token_entry(uint32_t sym, uint32_t len, uint32_t run_base, uint32_t x, uint32_t avail)
{
  if (sym < H5FZ_HUFF_LITERALS) return len | (sym + 1u) << 16;
  if (sym < run_base) { /* bit length b = sym - 64 + 7: the leading one, b - 1 bits below it */
    const uint32_t eb = sym - H5FZ_HUFF_LITERALS + H5FZ_HUFF_BIG_FIRST - 1u;
    if (eb > avail) return len | eb << 6 | H5FZ_HUFF_E_LEAD;
    const uint32_t v = 1u << eb | (x & ((1u << eb) - 1u));
    return (len + eb) | (v <= H5FZ_HUFF_LITERALS ? H5FZ_HUFF_E_BAD : v << 16);
  }
  const uint32_t idx = sym - run_base; /* run class idx: 1, or 2^c + h 2^(c-1) with c - 1 extra bits */
  if (idx == 0u) return len | H5FZ_HUFF_E_RUN | 1u << 16;
  const uint32_t c = (idx + 1u) >> 1, h = (idx + 1u) & 1u, eb = c - 1u, base = (2u | h) << (c - 1u);
  if (eb > avail) return len | eb << 6 | H5FZ_HUFF_E_RUN | base << 16;
  return (len + eb) | H5FZ_HUFF_E_RUN | (base | (x & ((1u << eb) - 1u))) << 16;
}

/* Threads lane < nlanes of those that share d: fill code t's look-up
 * table, each entry once (no zeroing, no barrier inside). Entry x is
 * looked up by the next stream bits, LSB first; read MSB first, y =
 * reverse(x), the short codes' left-justified ranges tile [0, 2^9) in
 * canonical order, so a lane walks its entries y and the codes together. */
H5FZ_FN void h5fz_huff_fill_lut(h5fz_huff_dtab *d, uint32_t t, uint32_t lane, uint32_t nlanes)
{
  const uint16_t *first = d->first[t], *offs = d->offs[t];
  const uint32_t B = H5FZ_HUFF_LUT_BITS, shorts = offs[B + 1u]; /* codes of at most B bits */
  const uint32_t run_base = d->alphabet - H5FZ_HUFF_RUN_SYMS;
  uint32_t k = 0, l = 1, end = 0; /* code k (sorted), its length, the end of its range */
  for (uint32_t y = lane; y < (1u << B); y += nlanes) {
    while (k < shorts && end <= y) {
      while (offs[l] + d->count[t][l] <= k) l++;
      end = ((uint32_t)first[l] + (k - offs[l]) + 1u) << (B - l);
      if (end <= y) k++;
    }
    const uint32_t x = h5fz_huff_rev_lut(y);
    d->lut[t][x] = k < shorts && end > y ? h5fz_huff_token_entry(d->sorted[t][k], l, run_base, x >> l, B - l) : 0u;
  }
}

/* The entry of a code longer than H5FZ_HUFF_LUT_BITS (code t) at the
 * stream bits `bits` (at least H5FZ_HUFF_MAX_LEN of them, LSB first): by
 * length, from H5FZ_HUFF_LUT_BITS + 1; 0 for bits that start no code. */
H5FZ_FN uint32_t h5fz_huff_long_entry(const h5fz_huff_dtab *d, uint32_t t, uint32_t bits)
{
  const uint32_t msb = h5fz_huff_reverse(bits, H5FZ_HUFF_MAX_LEN);
  for (uint32_t l = H5FZ_HUFF_LUT_BITS + 1u; l <= H5FZ_HUFF_MAX_LEN; l++) {
    const uint32_t code = msb >> (H5FZ_HUFF_MAX_LEN - l);
    if (code - d->first[t][l] < d->count[t][l])
      return h5fz_huff_token_entry(d->sorted[t][d->offs[t][l] + code - d->first[t][l]], l,
                                   d->alphabet - H5FZ_HUFF_RUN_SYMS, 0u, 0u);
  }
  return 0u;
}

/* Stream header (after the group field): the table, the directory's width
 * and its entries. Its bits for this code and these groups. */
H5FZ_FN uint32_t h5fz_huff_dir_width(const h5fz_huff_scratch *s, uint32_t groups)
{
  uint32_t most = 0;
  for (uint32_t g = 0; g + 1u < groups; g++) {
    uint32_t len = s->group_start[g + 1u] - s->group_start[g];
    most = len > most ? len : most;
  }
  return h5fz_bitlen64(most);
}

#define H5FZ_HUFF_NONE 0xffffffffu /* a share without a non-zero word */

/* The code (context) of the token at word i of w in groups of `group`
 * words: huffctx (nctx 2) codes a token right after a zero run (never a
 * run itself: runs are maximal) with code 1, every other token (a group's
 * first, one after a non-zero word) with code 0; huff has code 0 only. */
#define H5FZ_HUFF_CTX(w, i, group, nctx) ((nctx) > 1u && ((i) & ((group)-1u)) != 0u && (w)[(i)-1u] == 0u ? 1u : 0u)

/* The token of a run of r >= 1 zeros in the alphabet of W-bit words:
 * its symbol, extra bits and their count. */
H5FZ_FN uint32_t h5fz_huff_run_token(uint32_t W, uint32_t r, uint64_t *extra, uint32_t *extra_bits)
{
  const uint32_t sym = h5fz_huff_run_base(W) + h5fz_huff_run_class(r, extra_bits);
  *extra = r & ((1u << *extra_bits) - 1u); /* extra_bits <= 13 */
  return sym;
}

/* The token of a non-zero W-bit word v: a literal (v <= 64) or a
 * bit-length class with the bits below v's leading one as extra bits.
 * W is a constant at every call: 32-bit words take 32-bit operations. */
H5FZ_FN uint32_t h5fz_huff_word_token(uint64_t v, uint32_t W, uint64_t *extra, uint32_t *extra_bits)
{
  if (v <= H5FZ_HUFF_LITERALS) {
    *extra_bits = 0;
    *extra = 0;
    return (uint32_t)v - 1u;
  }
  const uint32_t b = W <= 32u ? h5fz_huff_bitlen32((uint32_t)v) : h5fz_bitlen64(v);
  *extra_bits = b - 1u;
  *extra = W <= 32u ? (uint64_t)((uint32_t)v & ((1u << (b - 1u)) - 1u)) : v & ((1ull << (b - 1u)) - 1u);
  return H5FZ_HUFF_LITERALS + b - H5FZ_HUFF_BIG_FIRST;
}

/* Walk the tokens of this thread's share [lo, hi) of the words in[0..n)
 * (groups of `group` words, a power of two) in stream order: for each,
 * BODY runs with sym, ex, eb and the token's first word i. A zero run is
 * the share's that starts it, runs to the next non-zero word or its
 * group's end, and past the share's end to next_nz (the first non-zero
 * word after the share, H5FZ_HUFF_NONE when none: h5fz_huff_next_nz);
 * zeros at the share's start that go on a run of an earlier share are
 * skipped. The GPU's form takes the share 64 words at a time: a mask of
 * its non-zero words and group starts (one load and compare a word), then
 * one iteration a token, found by the mask's lowest bit (mask0: the
 * non-zero words among the share's first 64, from the caller's first pass
 * over the share; the CPU's form ignores it). Why by the mask
 * (session 19): one iteration a word, the walks were a third of the
 * encode's instructions, and at loose bounds most words are inside runs;
 * the lanes of a warp still stay together (no lane scans a run alone).
 * The CPU's form (below) finds the same tokens by scanning each run to
 * its end: a thread alone waits for nobody, and the scan is its fastest
 * loop (gpu.huff_emulated and core.huff hold the two forms to the same
 * bytes). */
#if H5FZ_ON_GPU
#define H5FZ_HUFF_WALK(W_, in, n, group, lo, hi, next_nz, mask0, BODY)                                             \
  {                                                                                                                \
    const uint32_t gmask_ = (group)-1u;                                                                            \
    uint32_t run_at_ = H5FZ_HUFF_NONE, from_ = (lo); /* from_: the first word no token or skip has covered */     \
    uint32_t skip_ = (lo) < (hi) && ((lo)&gmask_) != 0u && (in)[lo] == 0u && (in)[(lo)-1u] == 0u;                 \
    for (uint32_t s_ = (lo); s_ < (hi); s_ += 64u) {                                                               \
      const uint32_t e_end_ = (hi)-s_ < 64u ? (hi) : s_ + 64u;                                                     \
      uint64_t ev_ = s_ == (lo) ? (mask0) : 0u; /* the first 64 words' mask: the caller's */                      \
      if (s_ != (lo))                                                                                              \
        for (uint32_t j_ = s_; j_ < e_end_; j_++) ev_ |= (uint64_t)((in)[j_] != 0u) << (j_ - s_);                  \
      const uint32_t gs_ = (s_ + gmask_) & ~gmask_; /* groups of 256 words or more: one start a segment at most */ \
      if (gs_ < e_end_) ev_ |= 1ull << (gs_ - s_);                                                                 \
      while (ev_) {                                                                                                \
        const uint32_t w_ = s_ + (uint32_t)(__ffsll((long long)ev_) - 1);                                          \
        ev_ &= ev_ - 1u;                                                                                           \
        if (w_ > from_ && !skip_ && run_at_ == H5FZ_HUFF_NONE) run_at_ = from_;                                    \
        skip_ = 0;                                                                                                 \
        const uint64_t v_ = (uint64_t)(in)[w_];                                                                    \
        if (run_at_ != H5FZ_HUFF_NONE) { /* a non-zero word or a group's start ends the run */                    \
          uint32_t sym, eb;                                                                                        \
          uint64_t ex;                                                                                             \
          sym = h5fz_huff_run_token(W_, w_ - run_at_, &ex, &eb);                                                   \
          const uint32_t i = run_at_;                                                                              \
          run_at_ = H5FZ_HUFF_NONE;                                                                                \
          BODY;                                                                                                    \
        }                                                                                                          \
        if (v_ != 0u) {                                                                                            \
          uint32_t sym, eb;                                                                                        \
          uint64_t ex;                                                                                             \
          sym = h5fz_huff_word_token(v_, W_, &ex, &eb);                                                            \
          const uint32_t i = w_;                                                                                   \
          BODY;                                                                                                    \
        } else {                                                                                                   \
          run_at_ = w_; /* a zero at a group's start opens a run */                                                \
        }                                                                                                          \
        from_ = w_ + 1u;                                                                                           \
      }                                                                                                            \
      if (e_end_ > from_ && !skip_ && run_at_ == H5FZ_HUFF_NONE) run_at_ = from_;                                  \
      from_ = e_end_;                                                                                              \
    }                                                                                                              \
    if (run_at_ != H5FZ_HUFF_NONE) { /* the share ends inside a run: on to its group's end or next_nz */          \
      const uint32_t gend_ = (run_at_ | gmask_) + 1u;                                                              \
      uint32_t stop_ = gend_ < (n) ? gend_ : (n);                                                                  \
      stop_ = (next_nz) < stop_ ? (next_nz) : stop_;                                                               \
      uint32_t sym, eb;                                                                                            \
      uint64_t ex;                                                                                                 \
      sym = h5fz_huff_run_token(W_, stop_ - run_at_, &ex, &eb);                                                    \
      const uint32_t i = run_at_;                                                                                  \
      BODY;                                                                                                        \
    }                                                                                                              \
  }
#else
/* The CPU's form (one thread, or the pthread blocks of the tests): a run
 * scanned to its end at its first word. */
#define H5FZ_HUFF_WALK(W_, in, n, group, lo, hi, next_nz, mask0, BODY)                                             \
  for (uint32_t w_ = (lo); w_ < (hi);) {                                                                           \
    const uint64_t v_ = (uint64_t)(in)[w_];                                                                        \
    uint32_t sym, eb;                                                                                              \
    uint64_t ex;                                                                                                   \
    const uint32_t i = w_;                                                                                         \
    if (v_ != 0u) {                                                                                                \
      sym = h5fz_huff_word_token(v_, W_, &ex, &eb);                                                                \
      BODY;                                                                                                        \
      w_++;                                                                                                        \
      continue;                                                                                                    \
    }                                                                                                              \
    const uint32_t g_ = (w_ / (group) + 1u) * (group), gend_ = g_ < (n) ? g_ : (n), lim_ = gend_ < (hi) ? gend_ : (hi); \
    uint32_t j_ = w_ + 1u;                                                                                         \
    while (j_ < lim_ && (in)[j_] == 0u) j_++;                                                                      \
    if (j_ == lim_ && lim_ < gend_) j_ = (next_nz) < gend_ ? (next_nz) : gend_; /* on past the share */            \
    if (w_ == (lo) && w_ % (group) != 0u && (in)[w_ - 1u] == 0u) { /* an earlier share's run */                  \
      w_ = j_;                                                                                                     \
      continue;                                                                                                    \
    }                                                                                                              \
    sym = h5fz_huff_run_token(W_, j_ - w_, &ex, &eb);                                                              \
    BODY;                                                                                                          \
    w_ = j_;                                                                                                       \
  }
#endif

/* One group's decode in progress (h5fz_huff_group_begin, then
 * h5fz_huff_group_step until i reaches gend, then h5fz_huff_group_end):
 * a thread can hold one and take the next group when it is done. */
typedef struct {
  h5fz_huff_reader r;
  uint64_t stop;            /* the bit after the group's last */
  uint32_t i, gend;         /* the next word, the group's end */
  uint32_t after_run, last; /* the last token was a run; this is the stream's last group */
} h5fz_huff_gstate;

/* Start group g of a stream of n words whose header d holds: its first
 * bit from the directory's entries before it. Returns 0, or 1 when those
 * entries reach past the stream's end. */
H5FZ_FN uint32_t h5fz_huff_group_begin(const h5fz_huff_dtab *d, const uint8_t *in, uint32_t size, uint32_t g, uint32_t n,
                                       h5fz_huff_gstate *st)
{
  h5fz_huff_reader r;
  h5fz_huff_rd_init(&r, in, size, d->dir_at);
  uint64_t at = d->start, stop = d->end;
  for (uint32_t k = 0; k < g; k++) {
    at += h5fz_huff_rd_get(&r, d->dir_w);
    if (at > d->end) return 1;
  }
  if (g + 1u < d->groups) {
    stop = at + h5fz_huff_rd_get(&r, d->dir_w);
    if (stop > d->end) return 1;
  }
  h5fz_huff_rd_init(&st->r, in, size, at);
  st->stop = stop;
  st->i = g * d->group;
  st->gend = st->i + d->group < n ? st->i + d->group : n;
  st->after_run = 0;
  st->last = g + 1u == d->groups;
  return 0;
}

/* A group whose words are all decoded: 0 when it used exactly its listed
 * bits (the last group may leave the final byte's zero padding), else 1. */
H5FZ_FN uint32_t h5fz_huff_group_end(h5fz_huff_gstate *st)
{
  h5fz_huff_reader *r = &st->r;
  const uint64_t pos = h5fz_huff_rd_pos(r);
  if (!st->last) return pos != st->stop;
  return pos > st->stop || st->stop - pos >= 8u || h5fz_huff_rd_peek(r, (uint32_t)(st->stop - pos)) != 0;
}

/* The first non-zero word after this thread's share, from f, its share's
 * first (H5FZ_HUFF_NONE: none): the least f of the shares after it (they
 * are in order); and in *block_nnz the sum of every share's nnz (its
 * non-zero words). A warp's by shuffles, then the warps after it from
 * shared memory: no thread scans the shares one by one. Every thread of
 * the block must call it (a barrier); on the GPU the block is whole warps. */
H5FZ_FN uint32_t h5fz_huff_next_nz(const h5fz_blk *blk, h5fz_huff_scratch *s, uint32_t f, uint32_t nnz,
                                   uint32_t *block_nnz)
{
  if (blk->nthreads == 1u) {
    *block_nnz = nnz;
    return H5FZ_HUFF_NONE;
  }
#if H5FZ_ON_GPU
  const uint32_t lane = blk->tid & 31u, warp = blk->tid >> 5, nwarps = (blk->nthreads + 31u) >> 5;
  uint32_t v = f; /* the least of this lane's and the lanes' above it */
  for (uint32_t d = 1; d < 32u; d <<= 1) {
    const uint32_t y = __shfl_sync(0xffffffffu, v, (lane + d) & 31u);
    if (lane + d < 32u && y < v) v = y;
  }
  uint32_t warp_nnz = nnz; /* by shuffles: __reduce_add_sync needs sm_80, the code runs from sm_75 */
  for (uint32_t d = 16; d; d >>= 1) warp_nnz += __shfl_xor_sync(0xffffffffu, warp_nnz, d);
  if (lane == 0) {
    s->warp_first_nz[warp] = v;
    s->warp_nnz[warp] = warp_nnz;
  }
  uint32_t next = __shfl_sync(0xffffffffu, v, (lane + 1u) & 31u);
  if (lane == 31u) next = H5FZ_HUFF_NONE;
  h5fz_blk_sync(blk);
  for (uint32_t w = warp + 1u; w < nwarps; w++) next = s->warp_first_nz[w] < next ? s->warp_first_nz[w] : next;
  uint32_t sum = 0;
  for (uint32_t w = 0; w < nwarps; w++) sum += s->warp_nnz[w];
  *block_nnz = sum;
  return next;
#else
  s->thread_first_nz[blk->tid] = f;
  s->thread_nnz[blk->tid] = nnz;
  h5fz_blk_sync(blk);
  uint32_t next = H5FZ_HUFF_NONE, sum = 0;
  for (uint32_t t = blk->tid + 1u; t < blk->nthreads && next == H5FZ_HUFF_NONE; t++) next = s->thread_first_nz[t];
  for (uint32_t t = 0; t < blk->nthreads; t++) sum += s->thread_nnz[t];
  *block_nnz = sum;
  return next;
#endif
}

/* The tokens of a group of `words` words of which z are not zero, at most
 * (a non-zero word is one token, a zero run at most one before each). */
H5FZ_FN uint32_t h5fz_huff_tokens_est(uint32_t z, uint32_t words) { return z + (z < words - z ? z : words - z); }

/* The group field by the average rule alone: the largest g in
 * [H5FZ_HUFF_MIN_GROUP_LOG2, H5FZ_HUFF_GROUP_LOG2] whose groups hold on
 * average at most H5FZ_HUFF_GROUP_TOKENS tokens by the sub-chunk's
 * estimate (both forms of h5fz_huff_group_log2 start from it). */
H5FZ_FN uint32_t h5fz_huff_group_log2_average(uint32_t n, uint32_t nnz)
{
  const uint64_t est = h5fz_huff_tokens_est(nnz, n);
  uint32_t g = H5FZ_HUFF_GROUP_LOG2;
  while (g > H5FZ_HUFF_MIN_GROUP_LOG2 && est * (64ull << g) > (uint64_t)H5FZ_HUFF_GROUP_TOKENS * n) g--;
  return g;
}

/* The encoder's group field g for n words of which nnz are not zero,
 * win[w] of them in window w (H5FZ_HUFF_WINDOW words each, the last one
 * partial): the largest g <= H5FZ_HUFF_GROUP_LOG2 (and >=
 * H5FZ_HUFF_MIN_GROUP_LOG2) whose groups of 64 << g words hold on average
 * at most H5FZ_HUFF_GROUP_TOKENS tokens by the estimate
 * h5fz_huff_tokens_est(nnz, n), and each at most
 * H5FZ_HUFF_GROUP_MAX_TOKENS by the estimate of its own words. Why by
 * words counted, not tokens: the tokens depend on the groups (a run ends
 * at a group's end), the counts of non-zero words do not, so g is known
 * before the first walk. The CPU's form (a loop over the windows); a
 * block on the GPU uses h5fz_huff_group_log2_warp, the same g. */
H5FZ_FN uint32_t h5fz_huff_group_log2(uint32_t n, uint32_t nnz, const uint32_t *win)
{
  uint32_t g = h5fz_huff_group_log2_average(n, nnz);
  for (; g > H5FZ_HUFF_MIN_GROUP_LOG2; g--) {
    const uint32_t per = 1u << (g - H5FZ_HUFF_MIN_GROUP_LOG2), nwin = (n + H5FZ_HUFF_WINDOW - 1u) / H5FZ_HUFF_WINDOW;
    uint32_t worst = 0;
    for (uint32_t w0 = 0; w0 < nwin; w0 += per) {
      uint32_t z = 0;
      for (uint32_t w = w0; w < w0 + per && w < nwin; w++) z += win[w];
      const uint32_t start = w0 * H5FZ_HUFF_WINDOW, end = start + per * H5FZ_HUFF_WINDOW < n ? start + per * H5FZ_HUFF_WINDOW : n;
      const uint32_t t = h5fz_huff_tokens_est(z, end - start);
      worst = t > worst ? t : worst;
    }
    if (worst <= H5FZ_HUFF_GROUP_MAX_TOKENS) break;
  }
  return g;
}

#if H5FZ_ON_GPU
#if H5FZ_HUFF_GROUP_LOG2 != 4u || H5FZ_HUFF_MIN_GROUP_LOG2 != 2u
#error "h5fz_huff_group_log2_warp checks groups of 4 and 2 windows: the group sizes changed"
#endif
/* h5fz_huff_group_log2 by the 32 lanes of a warp, each holding two
 * windows (at most 64 of them): every warp of a block computes it alone,
 * so that no barrier hands the result out. */
H5FZ_FN uint32_t h5fz_huff_group_log2_warp(uint32_t n, uint32_t nnz, const uint32_t *win, uint32_t lane)
{
  uint32_t g = h5fz_huff_group_log2_average(n, nnz);
  const uint32_t W = H5FZ_HUFF_WINDOW, a = 2u * lane * W, b = a + W, e = b + W;
  const uint32_t wa = a < n ? (b < n ? W : n - a) : 0u, wb = b < n ? (e < n ? W : n - b) : 0u; /* words */
  const uint32_t za = a < n ? win[2u * lane] : 0u, zb = b < n ? win[2u * lane + 1u] : 0u;
  const uint32_t z4 = za + zb + __shfl_xor_sync(0xffffffffu, za + zb, 1), w4 = wa + wb + __shfl_xor_sync(0xffffffffu, wa + wb, 1);
  const uint32_t worst4 = h5fz_huff_warp_max(h5fz_huff_tokens_est(z4, w4));
  const uint32_t worst3 = h5fz_huff_warp_max(h5fz_huff_tokens_est(za + zb, wa + wb));
  if (g == 4u && worst4 > H5FZ_HUFF_GROUP_MAX_TOKENS) g = 3u;
  if (g == 3u && worst3 > H5FZ_HUFF_GROUP_MAX_TOKENS) g = 2u;
  return g;
}
#endif

#endif /* H5FZ_HUFF_COMMON */

/* Encode n words (a multiple of 64, at most 16384) into out[0..cap) with
 * nctx codes: the stream of docs/format.md §5.7 (huff, nctx 1) or §5.8
 * (huffctx, nctx 2). tmp: at least n words' bytes, 4-byte aligned (the
 * stream is assembled there; tmp == out, as on the GPU, writes it in
 * place, out then 4-byte aligned too); scratch: h5fz_huff_scratch_bytes(nctx)
 * bytes, 8-byte aligned. Returns the size, or H5FZ_HUFF_NOT_SMALLER when it
 * would not be smaller than the words' bytes or not fit cap (the caller
 * then stores the words raw). Every thread of the block must call it. */
H5FZ_FN uint32_t H5FZ_TN(h5fz_huff_encode)(const h5fz_blk *blk, const H5FZ_T_WORD *in, uint32_t n, uint8_t *out,
                                           uint32_t cap, void *scratch, void *tmp, uint32_t nctx)
{
  h5fz_huff_scratch *s = (h5fz_huff_scratch *)scratch;
  const uint32_t W = H5FZ_T_BITS, A = h5fz_huff_alphabet(W), L = n * (W / 8u);
  /* contiguous shares (a thread's tokens are contiguous in the stream) of
   * an odd number of words: the lanes of a warp then read 32 different
   * banks of shared memory (64 words a share read all the same bank) */
  uint32_t lo, hi;
  (void)h5fz_blk_share_odd(blk, n, &lo, &hi);
  H5FZ_FOR_ITEMS(a, blk, H5FZ_HUFF_MAX_CTX * H5FZ_HUFF_MAX_SYMS) s->hist[a / H5FZ_HUFF_MAX_SYMS][a % H5FZ_HUFF_MAX_SYMS] = 0;
  uint32_t *win = s->group_start; /* the windows' non-zero words, until the bits walk (below) writes group_start */
  H5FZ_FOR_ITEMS(w, blk, H5FZ_HUFF_WINDOWS) win[w] = 0;
  uint32_t f = H5FZ_HUFF_NONE, nnz = 0, nnz_first = 0; /* nnz_first: in the window of lo */
  const uint32_t first_end = (lo / H5FZ_HUFF_WINDOW + 1u) * H5FZ_HUFF_WINDOW;
  uint64_t mask0 = 0; /* the non-zero words among the share's first 64 (the GPU's walks; a share is 33 words there) */
  for (uint32_t i = hi; i > lo;) { /* downwards: f ends at the first non-zero word */
    i--;
    const uint32_t nz = in[i] != 0;
    f = nz ? i : f;
    nnz += nz;
    nnz_first += i < first_end ? nz : 0u;
#if H5FZ_ON_GPU
    mask0 |= nz && i - lo < 64u ? 1ull << (i - lo) : 0u;
#endif
  }
  (void)mask0;
  uint32_t block_nnz;
  const uint32_t next_nz = h5fz_huff_next_nz(blk, s, f, nnz, &block_nnz); /* its barrier also orders the zeroed histogram and windows */
  if (lo < hi && hi <= first_end + H5FZ_HUFF_WINDOW) { /* a share of at most two windows (the GPU's) */
    if (nnz_first) (void)h5fz_huff_atomic(&win[lo / H5FZ_HUFF_WINDOW], nnz_first, H5FZ_HUFF_ADD);
    if (nnz > nnz_first) (void)h5fz_huff_atomic(&win[lo / H5FZ_HUFF_WINDOW + 1u], nnz - nnz_first, H5FZ_HUFF_ADD);
  } else {
    for (uint32_t w = lo / H5FZ_HUFF_WINDOW; w * H5FZ_HUFF_WINDOW < hi; w++) {
      const uint32_t a = w * H5FZ_HUFF_WINDOW > lo ? w * H5FZ_HUFF_WINDOW : lo, b = a - a % H5FZ_HUFF_WINDOW + H5FZ_HUFF_WINDOW;
      uint32_t z = 0;
      for (uint32_t i = a; i < b && i < hi; i++) z += in[i] != 0;
      if (z) (void)h5fz_huff_atomic(&win[w], z, H5FZ_HUFF_ADD);
    }
  }
  h5fz_blk_sync(blk);
#if H5FZ_ON_GPU
  const uint32_t glog2 = h5fz_huff_group_log2_warp(n, block_nnz, win, blk->tid & 31u);
#else
  const uint32_t glog2 = h5fz_huff_group_log2(n, block_nnz, win);
#endif
  const uint32_t group = 64u << glog2;
  const uint32_t groups = (n + group - 1u) / group;
  H5FZ_HUFF_WALK(W, in, n, group, lo, hi, next_nz, mask0,
                 (void)h5fz_huff_atomic(&s->hist[H5FZ_HUFF_CTX(in, i, group, nctx)][sym], 1u, H5FZ_HUFF_ADD))
  h5fz_blk_sync(blk);
  uint32_t k[H5FZ_HUFF_MAX_CTX];
  h5fz_huff_sort_leaves(blk, s, nctx, A, k);
#if H5FZ_ON_GPU
  if (blk->nthreads >= 32u * nctx) { /* code t by warp t: its lengths on lane 0, its codes by the warp */
    const uint32_t warp = blk->tid >> 5, lane = blk->tid & 31u;
    if (warp < nctx) {
      h5fz_huff_lengths_warp(s, warp, A, k[warp], lane);
      h5fz_huff_codes_warp(s, warp, A, lane);
    }
    h5fz_blk_sync(blk);
  } else
#endif
  {
    for (uint32_t t = 0; t < nctx; t++)
      if (blk->tid == h5fz_huff_builder(blk, t)) {
        (void)h5fz_huff_lengths(s, t, A, k[t]);
        if (blk->nthreads == 1u) s->table_bits[t] = h5fz_huff_codes_serial(s, t, A);
      }
    h5fz_blk_sync(blk);
    if (blk->nthreads > 1u) { /* the same codes and tables by all threads */
      h5fz_huff_codes_parallel(blk, s, nctx, A);
      h5fz_blk_sync(blk);
    }
  }
  if (blk->tid == 0) {
    s->header_bits = 4u;
    for (uint32_t t = 0; t < nctx; t++) s->header_bits += s->table_bits[t];
  }
  /* each token's bits; a group's first word starts a token: its offset in this share */
  uint64_t bits = 0;
  H5FZ_HUFF_WALK(W, in, n, group, lo, hi, next_nz, mask0, {
    if ((i & (group - 1u)) == 0) s->group_start[i >> (6u + glog2)] = (uint32_t)bits;
    bits += s->len[H5FZ_HUFF_CTX(in, i, group, nctx)][sym] + eb;
  })
  uint64_t total;
  uint64_t at = h5fz_blk_exscan(blk, bits, &total); /* its barriers publish header_bits */
  for (uint32_t g = (lo + group - 1u) / group; g * group < hi; g++) s->group_start[g] += (uint32_t)at;
  h5fz_blk_sync(blk);
  uint32_t dir_w = h5fz_huff_dir_width(s, groups);
  uint64_t head = s->header_bits + 5u + (uint64_t)(groups - 1u) * dir_w;
  uint64_t size = (head + total + 7u) / 8u;
  if (size >= L || size > cap) {
    h5fz_blk_sync(blk);
    return H5FZ_HUFF_NOT_SMALLER;
  }
  /* the stream's words in tmp (out itself on the GPU: its 4-byte aligned
   * global slot); zeroed where ORs reach: the header, each range's shared
   * and partial words */
  uint32_t *buf = (uint32_t *)tmp;
  const uint64_t p = head + at;
  H5FZ_FOR_ITEMS(i, blk, (uint32_t)((head + 31u) / 32u)) buf[i] = 0;
  h5fz_huff_wr_zero(buf, p, p + bits);
  h5fz_blk_sync(blk);
  /* the header: the group field, each code's table by its builder, the
   * directory's entries one a thread (disjoint bits: the ORs commute) */
  if (blk->tid == 0) h5fz_huff_put(buf, 0, glog2, 4u);
  uint64_t table_at = 4u;
  if (blk->nthreads > 1u) h5fz_huff_put_tables_parallel(blk, s, nctx, A, k, buf, table_at);
  for (uint32_t t = 0; t < nctx; t++) {
    if (blk->nthreads == 1u) (void)h5fz_huff_put_table(s, t, nctx, A, buf, table_at);
    table_at += s->table_bits[t];
  }
  if (blk->tid == 0) h5fz_huff_put(buf, table_at, dir_w, 5u);
  H5FZ_FOR_ITEMS(g, blk, groups - 1u)
  h5fz_huff_put(buf, table_at + 5u + (uint64_t)g * dir_w, s->group_start[g + 1u] - s->group_start[g], dir_w);
  h5fz_huff_wr wr;
  h5fz_huff_wr_init(&wr, buf, p);
  H5FZ_HUFF_WALK(W, in, n, group, lo, hi, next_nz, mask0, {
    uint32_t t = H5FZ_HUFF_CTX(in, i, group, nctx); /* one declaration each: the macro's commas */
    uint32_t cl = s->len[t][sym];
    if (cl + eb <= 32u) { /* the code and its extra bits in one append (the stream is LSB first) */
      h5fz_huff_wr_put32(&wr, s->code[t][sym] | (eb ? (uint32_t)ex << cl : 0u), cl + eb);
    } else {
      h5fz_huff_wr_put32(&wr, s->code[t][sym], cl);
      if (eb > 32u) {
        h5fz_huff_wr_put32(&wr, (uint32_t)ex, 32u);
        h5fz_huff_wr_put32(&wr, (uint32_t)(ex >> 32), eb - 32u);
      } else {
        h5fz_huff_wr_put32(&wr, (uint32_t)ex, eb);
      }
    }
  })
  h5fz_huff_wr_flush(&wr);
  h5fz_blk_sync(blk);
  if ((void *)out != tmp) H5FZ_FOR_ITEMS(i, blk, (uint32_t)size) out[i] = (uint8_t)(buf[i >> 2] >> (8u * (i & 3u)));
  h5fz_blk_sync(blk);
  return (uint32_t)size;
}

/* Decode the next token of the group st holds (d: its stream's header,
 * the look-up tables filled) into words out[i] for i < n_store (the rest
 * are checked, not stored). Only the non-zero words are stored: out[]
 * must hold zeros (a zero run is then only a skip; the caller zeroes with
 * all its threads at once). Returns 0, or 1 when the token is not one
 * h5fz_huff_encode writes: a bit string that starts no code, a run past
 * the group's end, a value in a longer form than needed, a run right after
 * a run (huffctx: a code-1 token that is a run). The token comes decoded
 * from the look-up table (h5fz_huff_token_entry) and its kind picks values
 * by selects, not branches: the lanes of a warp decode tokens of
 * different kinds at once; the extra bits are read only when a token
 * has them. (A loop over the whole group here, its state in locals, ran
 * the group kernel 5.7x slower on the H200, session 25 call 3, likely
 * because the lanes of a warp no longer met at every token; holding the
 * table's address in st instead of reading the header's fields gained
 * nothing measurable, call 4.) */
H5FZ_FN uint32_t H5FZ_TN(h5fz_huff_group_step)(const h5fz_huff_dtab *d, h5fz_huff_gstate *st, H5FZ_T_WORD *out,
                                               uint32_t n_store)
{
  h5fz_huff_reader *r = &st->r;
  const uint32_t bits = h5fz_huff_rd_peek(r, H5FZ_HUFF_MAX_LEN);
  const uint32_t t = d->nctx > 1u ? st->after_run : 0u; /* huffctx: code 1 after a run */
  uint32_t e = d->lut[t][bits & ((1u << H5FZ_HUFF_LUT_BITS) - 1u)];
  if (!e) e = h5fz_huff_long_entry(d, t, bits);
  if (!e || (e & H5FZ_HUFF_E_BAD)) return 1;
  h5fz_huff_rd_skip(r, H5FZ_HUFF_E_SKIP(e));
  const uint32_t more = H5FZ_HUFF_E_MORE(e); /* extra bits not in the entry (0 for most tokens) */
  H5FZ_T_WORD v = (H5FZ_T_WORD)H5FZ_HUFF_E_VALUE(e);
  if (more) {
    uint64_t ex;
    if (H5FZ_T_BITS > 32u && more > 32u) {
      ex = h5fz_huff_rd_get(r, 32u);
      ex |= (uint64_t)h5fz_huff_rd_get(r, more - 32u) << 32;
    } else {
      ex = h5fz_huff_rd_get(r, more);
    }
    v |= (H5FZ_T_WORD)ex | ((e & H5FZ_HUFF_E_LEAD) ? (H5FZ_T_WORD)1 << more : (H5FZ_T_WORD)0);
  }
  if (e & H5FZ_HUFF_E_RUN) {
    if (v > st->gend - st->i || st->after_run) return 1;
    st->after_run = 1;
    st->i += (uint32_t)v;
  } else {
    if ((e & H5FZ_HUFF_E_LEAD) && v <= H5FZ_HUFF_LITERALS) return 1;
    if (st->i < n_store) out[st->i] = v;
    st->i++;
    st->after_run = 0;
  }
  return 0;
}

/* The threads of a block: decode every group of the nsub streams s[]
 * (their headers d[], the look-up tables filled; their words zeroed), each
 * thread taking the next group from the counter *next_job (0 before the
 * call; an atomic in shared memory on the GPU) when its own is done. Why
 * not one thread a group: groups differ in length (a smooth region's
 * group is one run, a rough one's hundreds of tokens), and the lanes of a
 * warp wait for its longest group (2 of 32 lanes were busy). Why a token
 * an iteration, the job taken inside the loop: the lanes of a warp then
 * meet at every token (a loop over a group's tokens inside a loop over the
 * jobs ran 5.7x slower, session 25, likely for want of that). A group that is not one
 * h5fz_huff_encode writes (its directory entries past the stream's end, a
 * bad token, not using exactly its listed bits, bits past the last group
 * other than the final byte's zero padding) sets its stream's bad; the
 * groups decode independently. */
H5FZ_FN void H5FZ_TN(h5fz_huff_decode_jobs)(const h5fz_huff_dtab *d, h5fz_huff_stream *s, uint32_t nsub,
                                            uint32_t *next_job)
{
  const uint32_t total = nsub ? s[nsub - 1u].jobs_end : 0u;
  h5fz_huff_gstate st;
  H5FZ_T_WORD *out = (H5FZ_T_WORD *)0;
  uint32_t j = 0, n_store = 0, busy = 0;
  for (;;) {
    if (!busy) {
      const uint32_t job = h5fz_huff_atomic(next_job, 1u, H5FZ_HUFF_ADD);
      if (job >= total) break;
      for (j = 0; job >= s[j].jobs_end;) j++;
      const uint32_t g = job - (j ? s[j - 1u].jobs_end : 0u);
      if (h5fz_huff_group_begin(&d[j], s[j].src, s[j].size, g, s[j].n, &st)) {
        s[j].bad = 1u;
        continue;
      }
      out = (H5FZ_T_WORD *)s[j].words;
      n_store = s[j].n_store;
      busy = 1;
    }
    if (H5FZ_TN(h5fz_huff_group_step)(&d[j], &st, out, n_store)) {
      s[j].bad = 1u; /* only ever set to 1: the race is harmless */
      busy = 0;
    } else if (st.i >= st.gend) {
      if (h5fz_huff_group_end(&st)) s[j].bad = 1u;
      busy = 0;
    }
  }
}

/* Decode size bytes of a stream with nctx codes (1: huff, 2: huffctx)
 * into n words (a multiple of 64, at most 16384): the header on one
 * thread, the tables and the groups over all (h5fz_huff_decode_jobs).
 * Returns 0, or -1 (block-uniform) when the stream is not one
 * h5fz_huff_encode writes for n words (h5fz_huff_read_header,
 * h5fz_huff_decode_jobs). scratch: h5fz_huff_scratch_bytes(nctx) bytes,
 * 8-byte aligned. Every thread of the block must call it. */
H5FZ_FN int H5FZ_TN(h5fz_huff_decode)(const h5fz_blk *blk, const uint8_t *in, uint32_t size, H5FZ_T_WORD *out,
                                      uint32_t n, void *scratch, uint32_t nctx)
{
  h5fz_huff_scratch *s = (h5fz_huff_scratch *)scratch;
  h5fz_huff_dtab *d = &s->dec;
  if (blk->tid == 0) {
    s->flag = h5fz_huff_read_header(d, in, size, n, nctx, H5FZ_T_BITS) ? 1u : 0u;
    h5fz_huff_stream one = {in, out, size, n, n, s->flag ? 0u : d->groups, 0u, 0u};
    s->stream = one;
    s->next_job = 0;
  }
  h5fz_blk_sync(blk);
  if (s->flag) {
    h5fz_blk_sync(blk);
    return -1;
  }
  for (uint32_t t = 0; t < nctx; t++) h5fz_huff_fill_lut(d, t, blk->tid, blk->nthreads);
  H5FZ_FOR_ITEMS(i, blk, n) out[i] = 0;
  h5fz_blk_sync(blk);
  H5FZ_TN(h5fz_huff_decode_jobs)(d, &s->stream, 1u, &s->next_job);
  h5fz_blk_sync(blk);
  int rc = s->stream.bad ? -1 : 0;
  h5fz_blk_sync(blk);
  return rc;
}
