/*
 * op_rze.h - coder: repeated-zero elimination (RZE), after PFPL.
 *
 * Level 0 keeps the non-zero bytes of the input and a bitmap with one bit
 * per input byte (set = kept). Level k >= 1 does the same to the bitmap of
 * level k-1, but keeps a byte when it differs from the byte before it
 * (so runs of 0x00 and of 0xFF both vanish). Levels stop once a bitmap is at
 * most H5FZ_RZE_TOP_MAX bytes; that top bitmap is stored as it is.
 * Output: [top bitmap][kept bytes of the top level] ... [kept bytes of level 0].
 * The level structure depends only on the input length L, which the decoder
 * knows. Bits of a bitmap past the end of its level are zero.
 */
#define H5FZ_RZE_TOP_MAX 64u
#define H5FZ_RZE_MAX_LEVELS 12u
#define H5FZ_RZE_NOT_SMALLER 0xffffffffu

/* Lengths of the levels for an input of L bytes: len[0] = L, len[k+1] =
 * bitmap bytes of level k. Returns the number of levels (>= 1); the top
 * bitmap has len[levels] bytes. */
H5FZ_FN uint32_t h5fz_rze_levels(uint32_t L, uint32_t len[H5FZ_RZE_MAX_LEVELS + 1u])
{
  uint32_t k = 0;
  len[0] = L;
  for (;;) {
    len[k + 1u] = (len[k] + 7u) / 8u;
    if (len[k + 1u] <= H5FZ_RZE_TOP_MAX || k + 1u == H5FZ_RZE_MAX_LEVELS) return k + 1u;
    k++;
  }
}

/* Scratch bytes the encoder needs for an input of L bytes (all bitmaps). */
H5FZ_FN uint32_t h5fz_rze_scratch_bytes(uint32_t L)
{
  uint32_t len[H5FZ_RZE_MAX_LEVELS + 1u], levels = h5fz_rze_levels(L, len), s = 0;
  for (uint32_t k = 1; k <= levels; k++) s += len[k];
  return s;
}

/* Is byte i of level k's input kept? */
H5FZ_FN uint32_t h5fz_rze_keep(const uint8_t *src, uint32_t i, uint32_t n, uint32_t level)
{
  if (i >= n) return 0;
  if (level == 0) return src[i] != 0;
  return src[i] != (i ? src[i - 1u] : 0u);
}

/* Bitmap byte j of level `level` over src[0..n): bit b set when byte 8j+b is
 * kept. Level 0 (nonzero bytes) takes the whole 8 bytes at once when they
 * lie inside src (SWAR zero test, src 8-byte aligned at 8j). */
H5FZ_FN uint32_t h5fz_rze_bitmap_byte(const uint8_t *src, uint32_t j, uint32_t n, uint32_t level)
{
  uint32_t byte = 0;
  if (level == 0 && 8u * j + 8u <= n) {
    for (uint32_t h = 0; h < 2u; h++) {
      uint32_t x;
#if H5FZ_ON_GPU
      x = ((const uint32_t *)(src + 8u * j))[h];
#else
      memcpy(&x, src + 8u * j + 4u * h, 4); /* no aliasing of the byte buffer */
#endif
      /* high bit of each byte set iff the byte is nonzero */
      uint32_t nz = (((x & 0x7f7f7f7fu) + 0x7f7f7f7fu) | x) & 0x80808080u;
      byte |= ((nz >> 7) & 1u) << (4u * h);
      byte |= ((nz >> 15) & 1u) << (4u * h + 1u);
      byte |= ((nz >> 23) & 1u) << (4u * h + 2u);
      byte |= ((nz >> 31) & 1u) << (4u * h + 3u);
    }
    return byte;
  }
  for (uint32_t b = 0; b < 8u; b++) byte |= h5fz_rze_keep(src, 8u * j + b, n, level) << b;
  return byte;
}

/* Kept bytes of src[0..n) in this thread's share, as a count (1st pass) */
H5FZ_FN uint32_t h5fz_rze_count_share(const uint8_t *bitmap, uint32_t lo, uint32_t hi)
{
  uint32_t c = 0;
  for (uint32_t i = lo; i < hi; i += 8u) c += h5fz_popcount8(bitmap[i / 8u]);
  return c;
}

#if H5FZ_ON_GPU
/* Level 0 on the GPU, where it is most of the work: each warp takes one
 * contiguous segment of words (a multiple of 32 words, so bitmap bytes
 * never straddle two warps), lane l the l-th word of each 128-byte round:
 * consecutive lanes on consecutive words (no bank conflicts), ballot-free
 * shuffles for the in-warp ranks. The bytes are the same as the generic
 * path's: nonzero bytes in index order, bit b of bitmap byte j for byte 8j+b. */
H5FZ_FN void h5fz_rze_warp_segment(const h5fz_blk *blk, uint32_t words, uint32_t *w0, uint32_t *w1)
{
  uint32_t nwarps = (blk->nthreads + 31u) >> 5, warp = blk->tid >> 5;
  uint32_t seg = ((words + nwarps - 1u) / nwarps + 31u) & ~31u;
  *w0 = warp * seg < words ? warp * seg : words;
  *w1 = *w0 + seg < words ? *w0 + seg : words;
}

/* The 4 keep bits (nonzero bytes) of one little-endian word. */
H5FZ_FN uint32_t h5fz_rze_nibble(uint32_t x)
{
  uint32_t nz = (((x & 0x7f7f7f7fu) + 0x7f7f7f7fu) | x) & 0x80808080u;
  return ((nz >> 7) & 1u) | ((nz >> 14) & 2u) | ((nz >> 21) & 4u) | ((nz >> 28) & 8u);
}

H5FZ_FN uint32_t h5fz_warp_sum(uint32_t v)
{
  for (uint32_t d = 16; d > 0; d >>= 1) v += __shfl_xor_sync(0xffffffffu, v, d);
  return v;
}

H5FZ_FN uint32_t h5fz_warp_inclusive(uint32_t v)
{
  uint32_t lane = threadIdx.x & 31u;
  for (uint32_t d = 1; d < 32; d <<= 1) {
    uint32_t y = __shfl_up_sync(0xffffffffu, v, d);
    if (lane >= d) v += y;
  }
  return v;
}

/* Bitmap of level 0 over L bytes of in (4-byte aligned, L a multiple of 8)
 * into bitmap; returns the kept bytes before this warp's segment (the same
 * on every lane) and sets *total to the block's kept bytes. */
H5FZ_FN uint64_t h5fz_rze_level0_bitmap(const h5fz_blk *blk, const uint8_t *in, uint32_t L, uint8_t *bitmap,
                                        uint64_t *total)
{
  const uint32_t *in32 = (const uint32_t *)in;
  uint32_t w0, w1, lane = blk->tid & 31u, cnt = 0;
  h5fz_rze_warp_segment(blk, L / 4u, &w0, &w1);
  for (uint32_t base = w0; base < w1; base += 32u) {
    uint32_t wi = base + lane;
    uint32_t nib = wi < w1 ? h5fz_rze_nibble(in32[wi]) : 0u;
    uint32_t other = __shfl_xor_sync(0xffffffffu, nib, 1);
    cnt += (uint32_t)__popc(nib);
    if (!(lane & 1u) && wi < w1) bitmap[wi / 2u] = (uint8_t)(nib | (other << 4));
  }
  cnt = h5fz_warp_sum(cnt);
  uint64_t before = h5fz_blk_exscan(blk, lane == 0 ? (uint64_t)cnt : 0u, total);
  return __shfl_sync(0xffffffffu, before, 0);
}

/* The kept bytes of level 0, this warp's segment, to out[pos..). */
H5FZ_FN void h5fz_rze_level0_pack(const h5fz_blk *blk, const uint8_t *in, uint32_t L, uint8_t *out, uint64_t pos)
{
  const uint32_t *in32 = (const uint32_t *)in;
  uint32_t w0, w1, lane = blk->tid & 31u;
  h5fz_rze_warp_segment(blk, L / 4u, &w0, &w1);
  for (uint32_t base = w0; base < w1; base += 32u) {
    uint32_t wi = base + lane;
    uint32_t x = wi < w1 ? in32[wi] : 0u, nib = h5fz_rze_nibble(x), c = (uint32_t)__popc(nib);
    uint32_t incl = h5fz_warp_inclusive(c);
    uint64_t p = pos + incl - c;
    if (nib) /* most words of a well-compressed sub-chunk are zero */
      for (uint32_t b = 0; b < 4u; b++)
        if ((nib >> b) & 1u) out[p++] = (uint8_t)(x >> (8u * b));
    pos += __shfl_sync(0xffffffffu, incl, 31);
  }
}

/* Decode level 0: L bytes (a multiple of 8) into dst (4-byte aligned) from
 * the bitmap lmap and the kept bytes kept[0..avail). Returns -1 (the same
 * on every thread) when the bitmap asks for more than avail, else 0;
 * *total receives the kept count. */
H5FZ_FN int h5fz_rze_level0_unpack(const h5fz_blk *blk, const uint8_t *lmap, const uint8_t *kept, uint64_t avail,
                                   uint32_t L, uint8_t *dst, uint64_t *total)
{
  uint32_t *d32 = (uint32_t *)dst;
  uint32_t w0, w1, lane = blk->tid & 31u, cnt = 0;
  h5fz_rze_warp_segment(blk, L / 4u, &w0, &w1);
  for (uint32_t wi = w0 + lane; wi < w1; wi += 32u) cnt += (uint32_t)__popc((lmap[wi / 2u] >> (4u * (wi & 1u))) & 15u);
  cnt = h5fz_warp_sum(cnt);
  uint64_t before = h5fz_blk_exscan(blk, lane == 0 ? (uint64_t)cnt : 0u, total);
  if (*total > avail) return -1;
  uint64_t rank = __shfl_sync(0xffffffffu, before, 0);
  for (uint32_t base = w0; base < w1; base += 32u) {
    uint32_t wi = base + lane;
    uint32_t nib = wi < w1 ? (lmap[wi / 2u] >> (4u * (wi & 1u))) & 15u : 0u, c = (uint32_t)__popc(nib);
    uint32_t incl = h5fz_warp_inclusive(c);
    uint64_t r = rank + incl - c;
    uint32_t word = 0;
    for (uint32_t b = 0; b < 4u; b++)
      if ((nib >> b) & 1u) word |= (uint32_t)kept[r++] << (8u * b);
    if (wi < w1) d32[wi] = word;
    rank += __shfl_sync(0xffffffffu, incl, 31);
  }
  return 0;
}
#endif

/* Encode L bytes in[] into out[0..cap). scratch holds
 * h5fz_rze_scratch_bytes(L) bytes. Returns the encoded size, or
 * H5FZ_RZE_NOT_SMALLER when it would not be smaller than L or not fit cap
 * (the caller then stores the input raw). Same result on every thread. */
H5FZ_FN uint32_t h5fz_rze_encode(const h5fz_blk *blk, const uint8_t *in, uint32_t L,
                                 uint8_t *out, uint32_t cap, uint8_t *scratch)
{
  uint32_t len[H5FZ_RZE_MAX_LEVELS + 1u], levels = h5fz_rze_levels(L, len);
  uint32_t lo, hi;
  uint64_t total, kept[H5FZ_RZE_MAX_LEVELS];
  const uint8_t *src = in;
  uint8_t *bitmap = scratch;
  /* 1st pass: bitmaps and the kept count of every level */
#if H5FZ_ON_GPU
  uint64_t level0_before = 0;
#endif
  for (uint32_t k = 0; k < levels; k++) {
#if H5FZ_ON_GPU
    if (k == 0 && (L & 7u) == 0 && ((uint64_t)in & 3u) == 0) {
      level0_before = h5fz_rze_level0_bitmap(blk, in, L, bitmap, &total);
      kept[0] = total;
      src = bitmap;
      bitmap += len[1];
      continue;
    }
#endif
    h5fz_blk_share(blk, len[k + 1u], 1u, &lo, &hi);
    for (uint32_t j = lo; j < hi; j++) bitmap[j] = (uint8_t)h5fz_rze_bitmap_byte(src, j, len[k], k);
    h5fz_blk_sync(blk);
    h5fz_blk_share(blk, len[k], 8u, &lo, &hi);
    (void)h5fz_blk_exscan(blk, h5fz_rze_count_share(bitmap, lo, hi), &total);
    kept[k] = total;
    src = bitmap;
    bitmap += len[k + 1u];
  }
  uint64_t size = len[levels];
  for (uint32_t k = 0; k < levels; k++) size += kept[k];
  if (size >= L || size > cap) return H5FZ_RZE_NOT_SMALLER;
  /* 2nd pass: top bitmap, then kept bytes from the top level down */
  const uint8_t *top = bitmap - len[levels];
  h5fz_blk_share(blk, len[levels], 1u, &lo, &hi);
  for (uint32_t j = lo; j < hi; j++) out[j] = top[j];
  uint64_t offset = len[levels];
  uint32_t bitmap_off[H5FZ_RZE_MAX_LEVELS];
  bitmap_off[0] = 0;
  for (uint32_t k = 1; k < levels; k++) bitmap_off[k] = bitmap_off[k - 1u] + len[k];
  for (uint32_t kk = levels; kk-- > 0;) {
    const uint8_t *lsrc = kk ? scratch + bitmap_off[kk - 1u] : in;
    const uint8_t *lmap = scratch + bitmap_off[kk];
#if H5FZ_ON_GPU
    if (kk == 0 && (L & 7u) == 0 && ((uint64_t)in & 3u) == 0) {
      h5fz_blk_sync(blk); /* the bitmaps of pass 1 are complete */
      h5fz_rze_level0_pack(blk, in, L, out, offset + level0_before);
      offset += kept[0];
      continue;
    }
#endif
    h5fz_blk_share(blk, len[kk], 8u, &lo, &hi);
    uint64_t pos = offset + h5fz_blk_exscan(blk, h5fz_rze_count_share(lmap, lo, hi), &total);
    for (uint32_t i = lo; i < hi; i += 8u) { /* shares start at multiples of 8 */
      uint32_t bits = lmap[i / 8u];
      for (uint32_t b = 0; bits; b++, bits >>= 1)
        if (bits & 1u) out[pos++] = lsrc[i + b];
    }
    offset += kept[kk];
  }
  h5fz_blk_sync(blk);
  return (uint32_t)size;
}

/* Decode size bytes in[] into L bytes out[]. scratch holds
 * h5fz_rze_scratch_bytes(L) bytes. Returns 0 on success, -1 when the input
 * is inconsistent (bits past a level's end, counts that overrun or do not
 * use up the input). Every read is bounds-checked against size. */
H5FZ_FN int h5fz_rze_decode(const h5fz_blk *blk, const uint8_t *in, uint32_t size,
                            uint8_t *out, uint32_t L, uint8_t *scratch)
{
  uint32_t len[H5FZ_RZE_MAX_LEVELS + 1u], levels = h5fz_rze_levels(L, len);
  uint32_t lo, hi, bitmap_off[H5FZ_RZE_MAX_LEVELS];
  uint64_t total;
  if (len[levels] > size) return -1;
  bitmap_off[0] = 0;
  for (uint32_t k = 1; k < levels; k++) bitmap_off[k] = bitmap_off[k - 1u] + len[k];
  uint64_t offset = len[levels];
  const uint8_t *lmap = in; /* the top bitmap */
  for (uint32_t kk = levels; kk-- > 0;) {
    uint8_t *dst = kk ? scratch + bitmap_off[kk - 1u] : out;
    uint32_t n = len[kk];
    /* the bitmap of this level has len[kk+1] bytes; bits past n must be 0 */
    if ((n & 7u) && (lmap[len[kk + 1u] - 1u] >> (n & 7u))) return -1;
#if H5FZ_ON_GPU
    if (kk == 0 && (n & 7u) == 0 && ((uint64_t)dst & 3u) == 0) {
      if (h5fz_rze_level0_unpack(blk, lmap, in + offset, size - offset, n, dst, &total)) return -1;
      h5fz_blk_sync(blk);
      offset += total;
      lmap = dst;
      continue;
    }
#endif
    h5fz_blk_share(blk, n, 8u, &lo, &hi);
    uint64_t rank = h5fz_blk_exscan(blk, h5fz_rze_count_share(lmap, lo, hi), &total);
    if (offset + total > size) return -1;
    const uint8_t *kept = in + offset;
    if (kk == 0) {
      for (uint32_t i = lo; i < hi; i += 8u) { /* shares start at multiples of 8 */
        uint32_t bits = lmap[i / 8u], end = hi - i < 8u ? hi - i : 8u;
        if (!bits && end == 8u) {
#if H5FZ_ON_GPU
          uint32_t *d32 = (uint32_t *)(dst + i); /* dst is 8-byte aligned at i */
          d32[0] = 0u;
          d32[1] = 0u;
#else
          memset(dst + i, 0, 8);
#endif
          continue;
        }
        for (uint32_t b = 0; b < end; b++) dst[i + b] = ((bits >> b) & 1u) ? kept[rank++] : 0u;
      }
    } else {
      /* a dropped byte repeats the one before it: the last kept byte */
      for (uint32_t i = lo; i < hi; i++) {
        rank += (lmap[i / 8u] >> (i & 7u)) & 1u;
        dst[i] = rank ? kept[rank - 1u] : 0u;
      }
    }
    h5fz_blk_sync(blk);
    offset += total;
    lmap = dst;
  }
  return offset == size ? 0 : -1;
}
