/*
 * fuzz_chunk_decode.c - libFuzzer target: h5fz_chunk_inspect and
 * h5fz_chunk_decode on arbitrary bytes.
 *
 * Input: byte 0 selects the mode, the rest is the container.
 *   bit 0 set: recompute the CRC-32 (zlib crc32 of all bytes but the last 4,
 *              stored little-endian in the last 4) before decoding, so that
 *              mutations reach the header / size-table / RZE / side-section
 *              checks behind the checksum (docs/format.md section 4);
 *   bit 1 set: also make n_elements (offset 16) and n_subchunks (offset 40)
 *              agree with input_bytes, dtype and subchunk_elems, so that a
 *              mutated size gets past the header consistency checks.
 *   bit 0 clear: the bytes as they are (checksum, magic, version paths).
 * The container is copied into a buffer of exactly its size, so ASan sees a
 * read one byte past the end.
 *
 * Invariants checked: no out-of-bounds access / UB (sanitizers); decode and
 * inspect agree (both fail or both succeed); a decoded chunk has exactly the
 * header's input_bytes; every failure is one of the documented statuses and
 * leaves a message; a decoded chunk round-trips through the encoder with the
 * header's chain and bound (lossy within the bound, outliers exact;
 * bit-exact for a lossless chunk).
 */
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <zlib.h>

#include "h5fz.h"
#include "fuzz_common.h"

static uint32_t get_u32(const uint8_t *p)
{
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t get_u64(const uint8_t *p) { return (uint64_t)get_u32(p) | (uint64_t)get_u32(p + 4) << 32; }
static void put_u32(uint8_t *p, uint32_t v)
{
  p[0] = (uint8_t)v;
  p[1] = (uint8_t)(v >> 8);
  p[2] = (uint8_t)(v >> 16);
  p[3] = (uint8_t)(v >> 24);
}
static void put_u64(uint8_t *p, uint64_t v)
{
  put_u32(p, (uint32_t)v);
  put_u32(p + 4, (uint32_t)(v >> 32));
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
  (void)argc;
  (void)argv;
  fuzz_setup_env();
  return 0;
}

static int known_decode_status(int rc)
{
  return rc == H5FZ_ERR_TRUNCATED || rc == H5FZ_ERR_CORRUPT || rc == H5FZ_ERR_CHECKSUM || rc == H5FZ_ERR_VERSION ||
         rc == H5FZ_ERR_UNSUPPORTED || rc == H5FZ_ERR_NOMEM;
}

/* Encode what was decoded with the header's chain and absolute bound, decode
 * it again: every value within the bound of the first decode (NaN for NaN,
 * bit-exact for what was not quantizable). */
static void reencode_check(const h5fz_chunk_info *info, const uint8_t *vals, size_t n_bytes)
{
  int lossless = info->mode == H5FZ_MODE_LOSSLESS;
  if (info->stored_raw || (!lossless && (info->abs_bound <= 0 || !(info->abs_bound <= 1e300)))) return;
  h5fz_spec spec;
  h5fz_spec_default(&spec);
  /* lossless: bit-exact; any other mode: checked as ABS with the header's
   * bound (the encoder's guarantee for that bound) */
  spec.mode = lossless ? H5FZ_MODE_LOSSLESS : H5FZ_MODE_ABS;
  spec.bound = lossless ? 0.0 : info->abs_bound;
  spec.dtype = info->dtype;
  spec.n_ops = info->n_ops;
  memcpy(spec.ops, info->ops, H5FZ_MAX_OPS);
  size_t es = h5fz_dtype_size(info->dtype);
  spec.subchunk_bytes = (uint32_t)(info->subchunk_elems * es);
  if (h5fz_spec_validate(&spec)) return; /* e.g. a sub-chunk below 512 bytes */
  void *enc = NULL, *dec = NULL;
  size_t enc_n = 0, dec_n = 0;
  int rc = h5fz_chunk_encode(&spec, vals, n_bytes, &enc, &enc_n);
  FUZZ_CHECK(rc == H5FZ_OK, "re-encode failed: %d %s", rc, h5fz_last_error());
  rc = h5fz_chunk_decode(enc, enc_n, &dec, &dec_n);
  FUZZ_CHECK(rc == H5FZ_OK, "decode of the re-encoded chunk failed: %d %s", rc, h5fz_last_error());
  FUZZ_CHECK(dec_n == n_bytes, "re-decode gives %zu bytes, want %zu", dec_n, n_bytes);
  size_t n = n_bytes / es;
  const uint8_t *a = vals, *b = dec;
  if (lossless) FUZZ_CHECK(!memcmp(a, b, n_bytes), "lossless re-encode is not bit-exact");
  for (size_t i = 0; i < n; i++) {
    double x, y;
    if (es == 4) {
      float fx, fy;
      memcpy(&fx, a + 4 * i, 4);
      memcpy(&fy, b + 4 * i, 4);
      x = fx;
      y = fy;
    } else {
      memcpy(&x, a + 8 * i, 8);
      memcpy(&y, b + 8 * i, 8);
    }
    if (isnan(x) || isinf(x) || (x == 0 && signbit(x))) {
      FUZZ_CHECK(!memcmp(a + es * i, b + es * i, es), "element %zu (not quantizable) not kept exactly", i);
    } else {
      FUZZ_CHECK(fabs(x - y) <= info->abs_bound, "element %zu: %.17g -> %.17g, bound %.17g", i, x, y, info->abs_bound);
    }
  }
  FUZZ_CHECK(!memcmp(a + n * es, b + n * es, n_bytes - n * es), "trailing bytes differ");
  free(enc);
  free(dec);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
  if (size < 1) return 0;
  unsigned mode = data[0];
  size_t len = size - 1;
  /* exactly len bytes (malloc(0) may be NULL: keep one byte, pass len 0) */
  uint8_t *buf = malloc(len ? len : 1);
  if (!buf) return 0;
  memcpy(buf, data + 1, len);
  if ((mode & 2) && len >= 44) {
    uint64_t in_bytes = get_u64(buf + 8);
    size_t es = buf[6] == 1 ? 4 : buf[6] == 2 ? 8 : 0;
    if (es) {
      uint64_t n = in_bytes / es;
      put_u64(buf + 16, n);
      uint32_t se = get_u32(buf + 36);
      if (se) {
        uint64_t ns = (n + se - 1) / se;
        if (ns <= 0xffffffffu) put_u32(buf + 40, (uint32_t)ns);
      }
    }
  }
  if ((mode & 1) && len >= 4) {
    uLong crc = crc32(0L, Z_NULL, 0);
    crc = crc32(crc, buf, (uInt)(len - 4));
    put_u32(buf + len - 4, (uint32_t)crc);
  }

  h5fz_chunk_info info;
  memset(&info, 0xA5, sizeof info);
  int irc = h5fz_chunk_inspect(buf, len, &info);
  if (irc) {
    FUZZ_CHECK(known_decode_status(irc), "inspect returned %d", irc);
    FUZZ_CHECK(h5fz_last_error()[0] != '\0', "inspect failed (%d) without a message", irc);
  }
  void *out = NULL;
  size_t out_n = 0;
  int rc = h5fz_chunk_decode(buf, len, &out, &out_n);
  if (rc) {
    FUZZ_CHECK(known_decode_status(rc), "decode returned %d", rc);
    FUZZ_CHECK(h5fz_last_error()[0] != '\0', "decode failed (%d) without a message", rc);
    /* inspect checks less (no payload); it may pass where decode fails,
     * never the other way round */
  } else {
    FUZZ_CHECK(irc == H5FZ_OK, "decode succeeded where inspect failed (%d)", irc);
    FUZZ_CHECK(out_n == info.input_bytes, "decoded %zu bytes, header says %llu", out_n,
               (unsigned long long)info.input_bytes);
    FUZZ_CHECK(out != NULL, "decode succeeded with a NULL buffer");
    if (info.stored_raw) FUZZ_CHECK(!memcmp(out, buf + 80, out_n), "stored-raw chunk not copied");
    /* the re-encode costs time: only for small chunks */
    if (out_n <= (1u << 20)) reencode_check(&info, out, out_n);
    free(out);
  }
  free(buf);
  return 0;
}
