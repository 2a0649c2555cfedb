/* h5fz_container.c - write and open the v1 chunk container (docs/format.md). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "h5fz_ops.h"
#include "h5fz_batch.h" /* h5fz_container_set_byte_order */
#include "h5fz_container.h"
#include "h5fz_crc32.h"
#include "h5fz_modes.h"
#include "h5fz_side.h"

static const uint8_t magic[4] = {'H', '5', 'F', 'Z'};

uint32_t h5fz_checksum(const uint8_t *buf, size_t len) { return h5fz_crc32(0, buf, len); }

void h5fz_swap_elements(void *buf, uint64_t n, size_t esize)
{
  uint8_t *p = buf;
  for (uint64_t i = 0; i < n; i++, p += esize)
    for (size_t a = 0, b = esize - 1u; a < b; a++, b--) {
      uint8_t t = p[a];
      p[a] = p[b];
      p[b] = t;
    }
}

int h5fz_container_set_byte_order(uint8_t *buf, size_t len, int big_endian)
{
  h5fz_header h;
  int rc = h5fz_container_open(buf, len, &h);
  if (rc) return rc;
  buf[4] = (uint8_t)h5fz_chain_format_version(h.ops, h.n_ops, big_endian);
  buf[7] = (uint8_t)((h.flags & ~H5FZ_FLAG_BIG_ENDIAN) | (big_endian ? H5FZ_FLAG_BIG_ENDIAN : 0u));
  h5fz_put_u32(buf + len - 4u, h5fz_checksum(buf, len - 4u));
  return H5FZ_OK;
}

void h5fz_header_write(const h5fz_header *h, uint8_t *out)
{
  uint64_t bound_bits;
  memset(out, 0, H5FZ_HEADER_BYTES);
  memcpy(out, magic, 4);
  out[4] = h->version;
  out[5] = H5FZ_HEADER_BYTES;
  out[6] = h->dtype;
  out[7] = h->flags;
  h5fz_put_u64(out + 8, h->input_bytes);
  h5fz_put_u64(out + 16, h->n_elements);
  memcpy(&bound_bits, &h->abs_bound, 8);
  h5fz_put_u64(out + 24, bound_bits);
  out[32] = h->mode;
  out[33] = h->n_ops;
  out[34] = h->rank;
  out[35] = h->predictor;
  h5fz_put_u32(out + 36, h->subchunk_elems);
  h5fz_put_u32(out + 40, h->n_subchunks);
  h5fz_put_u32(out + 44, h->n_outliers);
  memcpy(out + 48, h->ops, H5FZ_MAX_OPS);
  for (int i = 0; i < H5FZ_MAX_RANK; i++) h5fz_put_u32(out + 60 + 4 * i, h->dims[i]);
}

static int all_zero(const uint8_t *p, size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (p[i]) return 0;
  return 1;
}

static int check_fields(const h5fz_header *h, const uint8_t *in)
{
  size_t esize = h5fz_dtype_size((h5fz_dtype)h->dtype);
  if (!esize) return h5fz_fail(H5FZ_ERR_CORRUPT, "chunk header names unknown element type %u", h->dtype);
  unsigned known = H5FZ_FLAG_STORED_RAW | (h->version >= 2u ? H5FZ_FLAG_BIG_ENDIAN : 0u);
  if (h->flags & ~known) return h5fz_fail(H5FZ_ERR_CORRUPT, "chunk header has unknown flags 0x%02x", h->flags);
  if (!all_zero(in + 58, 2) || !all_zero(in + 76, 4))
    return h5fz_fail(H5FZ_ERR_CORRUPT, "chunk header reserved bytes are not zero");
  if (h->input_bytes > H5FZ_MAX_CHUNK_BYTES || h->n_elements != h->input_bytes / esize)
    return h5fz_fail(H5FZ_ERR_CORRUPT, "chunk header sizes disagree (%llu bytes, %llu elements)",
                     (unsigned long long)h->input_bytes, (unsigned long long)h->n_elements);
  if (h->flags & H5FZ_FLAG_STORED_RAW) return H5FZ_OK;
  const h5fz_mode_row *mode = h5fz_mode_lookup(h->mode);
  if (!mode) return h5fz_fail(H5FZ_ERR_CORRUPT, "chunk header mode %u unknown", h->mode);
  if (!h5fz_mode_header_bound_ok(mode, h->abs_bound))
    return h5fz_fail(H5FZ_ERR_CORRUPT, "chunk header error bound %g does not fit mode %u", h->abs_bound, h->mode);
  uint32_t se = h->subchunk_elems;
  if (se == 0 || se % 64u || se * esize > H5FZ_MAX_SUBCHUNK_BYTES)
    return h5fz_fail(H5FZ_ERR_CORRUPT, "chunk header sub-chunk size %u elements is invalid", se);
  if (h->n_subchunks != (h->n_elements + se - 1) / se)
    return h5fz_fail(H5FZ_ERR_CORRUPT, "chunk header sub-chunk count %u does not match %llu elements", h->n_subchunks,
                     (unsigned long long)h->n_elements);
  if (h->n_outliers > h->n_elements)
    return h5fz_fail(H5FZ_ERR_CORRUPT, "chunk header counts more outliers than elements");
  if (h->rank > H5FZ_MAX_RANK) return h5fz_fail(H5FZ_ERR_CORRUPT, "chunk header rank %u", h->rank);
  h5fz_spec s;
  h5fz_spec_default(&s);
  s.n_ops = h->n_ops;
  if (h->n_ops > H5FZ_MAX_OPS) return h5fz_fail(H5FZ_ERR_CORRUPT, "chunk header lists %u ops", h->n_ops);
  memcpy(s.ops, h->ops, H5FZ_MAX_OPS);
  if (!all_zero(h->ops + h->n_ops, H5FZ_MAX_OPS - h->n_ops))
    return h5fz_fail(H5FZ_ERR_CORRUPT, "chunk header has op ids past its chain");
  if (h5fz_spec_validate(&s)) {
    char why[256];
    strncpy(why, h5fz_last_error(), sizeof why - 1);
    why[sizeof why - 1] = '\0';
    return h5fz_fail(H5FZ_ERR_CORRUPT, "chunk header chain is invalid: %s", why);
  }
  for (uint32_t i = 0; i < h->n_ops; i++) {
    const h5fz_op_info *op = h5fz_op_lookup(h->ops[i]);
    if (op->since_version > h->version)
      return h5fz_fail(H5FZ_ERR_CORRUPT, "chunk header of format version %u lists op '%s', which version %u brought",
                       h->version, op->name, op->since_version);
  }
  /* byte 35: lorenzo_nd's predictor, or lorenzo_interp's (4: interpolation; the type check put either at ops[1]) */
  int lnd = h->n_ops > 1 && h5fz_op_is_lnd(h->ops[1]);
  int interp = lnd && h->ops[1] == H5FZ_OP_LORENZO_INTERP && h->predictor == H5FZ_LNI_PREDICTOR;
  if (lnd ? !interp && !(h->predictor >= 1 && h->predictor <= h5fz_lnd_max_dim(h->rank)) : h->predictor != 0)
    return h5fz_fail(H5FZ_ERR_CORRUPT, "chunk header predictor byte %u does not fit %s of rank %u", h->predictor,
                     lnd ? h5fz_op_name(h->ops[1]) : "a chain without lorenzo_nd", h->rank);
  return H5FZ_OK;
}

int h5fz_container_open(const uint8_t *in, size_t len, h5fz_header *h)
{
  if (!in) return h5fz_fail(H5FZ_ERR_ARG, "NULL chunk");
  if (len < 6) return h5fz_fail(H5FZ_ERR_TRUNCATED, "chunk of %zu bytes is too short for an h5fz header", len);
  if (memcmp(in, magic, 4)) return h5fz_fail(H5FZ_ERR_CORRUPT, "chunk does not start with the h5fz magic 'H5FZ'");
  if (in[4] > h5fz_newest_format_version())
    return h5fz_fail(H5FZ_ERR_VERSION,
                     "chunk format version %u is newer than this h5fz (reads up to version %u); "
                     "upgrade h5fz to read it (if no h5fz writes that version, the chunk is damaged)",
                     in[4], h5fz_newest_format_version());
  if (in[4] == 0) return h5fz_fail(H5FZ_ERR_CORRUPT, "chunk format version 0 does not exist");
  /* every version so far has the same header length: name the chunk's own */
  if (in[5] != H5FZ_HEADER_BYTES)
    return h5fz_fail(H5FZ_ERR_CORRUPT, "chunk header length %u, version %u has %u", in[5], in[4], H5FZ_HEADER_BYTES);
  if (len < H5FZ_HEADER_BYTES + H5FZ_CHECKSUM_BYTES)
    return h5fz_fail(H5FZ_ERR_TRUNCATED, "chunk of %zu bytes is shorter than header and checksum", len);
  uint32_t stored = h5fz_get_u32(in + len - H5FZ_CHECKSUM_BYTES);
  uint32_t actual = h5fz_checksum(in, len - H5FZ_CHECKSUM_BYTES);
  if (stored != actual)
    return h5fz_fail(H5FZ_ERR_CHECKSUM,
                     "stored CRC-32 %08x, computed %08x: "
                     "the chunk is corrupt or truncated",
                     stored, actual);
  memset(h, 0, sizeof *h);
  h->version = in[4];
  h->dtype = in[6];
  h->flags = in[7];
  h->input_bytes = h5fz_get_u64(in + 8);
  h->n_elements = h5fz_get_u64(in + 16);
  uint64_t bound_bits = h5fz_get_u64(in + 24);
  memcpy(&h->abs_bound, &bound_bits, 8);
  h->mode = in[32];
  h->n_ops = in[33];
  h->rank = in[34];
  h->predictor = in[35];
  h->subchunk_elems = h5fz_get_u32(in + 36);
  h->n_subchunks = h5fz_get_u32(in + 40);
  h->n_outliers = h5fz_get_u32(in + 44);
  memcpy(h->ops, in + 48, H5FZ_MAX_OPS);
  for (int i = 0; i < H5FZ_MAX_RANK; i++) h->dims[i] = h5fz_get_u32(in + 60 + 4 * i);
  return check_fields(h, in);
}

static int size_entry_check(uint32_t s, uint32_t e, uint32_t L)
{
  uint32_t size = e & H5FZ_SUB_SIZE_MASK;
  if (size > L || (size == L && !(e & H5FZ_SUB_RAW)))
    return h5fz_fail(H5FZ_ERR_CORRUPT, "sub-chunk %u claims %u bytes, more than its %u raw bytes", s, size, L);
  if ((e & H5FZ_SUB_RAW) && size != L)
    return h5fz_fail(H5FZ_ERR_CORRUPT, "raw sub-chunk %u holds %u bytes, expected %u", s, size, L);
  return H5FZ_OK;
}

int h5fz_size_table_check(const h5fz_header *h, const uint8_t *body, size_t body_len, uint64_t *offsets,
                          size_t *payload_end)
{
  size_t table = 4u * (size_t)h->n_subchunks;
  if (table > body_len) return h5fz_fail(H5FZ_ERR_TRUNCATED, "chunk ends inside its size table");
  uint32_t esize = (uint32_t)h5fz_dtype_size((h5fz_dtype)h->dtype);
  uint64_t off = 0, room = body_len - table;
  for (uint32_t s = 0; s < h->n_subchunks; s++) {
    uint32_t e = h5fz_get_u32(body + 4u * (size_t)s), size = e & H5FZ_SUB_SIZE_MASK;
    uint64_t m = h->n_elements - (uint64_t)s * h->subchunk_elems;
    if (m > h->subchunk_elems) m = h->subchunk_elems;
    uint32_t L = h5fz_pad64((uint32_t)m) * esize;
    int rc = size_entry_check(s, e, L);
    if (rc) return rc;
    if (size > room - off) return h5fz_fail(H5FZ_ERR_TRUNCATED, "sub-chunk %u runs past the end of the chunk", s);
    if (offsets) offsets[s] = off;
    off += size;
  }
  *payload_end = table + off;
  return H5FZ_OK;
}

static int write_raw(const h5fz_header *h, const uint8_t *in, size_t in_bytes, void **out, size_t *out_bytes)
{
  h5fz_header r = *h;
  r.flags = (uint8_t)(H5FZ_FLAG_STORED_RAW | (h->flags & H5FZ_FLAG_BIG_ENDIAN));
  r.n_outliers = 0;
  size_t total = H5FZ_HEADER_BYTES + in_bytes + H5FZ_CHECKSUM_BYTES;
  uint8_t *buf = malloc(total);
  if (!buf) return h5fz_fail(H5FZ_ERR_NOMEM, "cannot allocate %zu bytes", total);
  h5fz_header_write(&r, buf);
  memcpy(buf + H5FZ_HEADER_BYTES, in, in_bytes);
  h5fz_put_u32(buf + total - 4, h5fz_checksum(buf, total - 4));
  *out = buf;
  *out_bytes = total;
  return H5FZ_OK;
}

int h5fz_container_write(const h5fz_header *h, const h5fz_payload *payload, const uint32_t *pos, const void *vals,
                         const uint8_t *in, size_t in_bytes, void **out, size_t *out_bytes)
{
  uint32_t esize = (uint32_t)h5fz_dtype_size((h5fz_dtype)h->dtype);
  size_t trailing = in_bytes - (size_t)h->n_elements * esize;
  size_t payload_bytes = 0;
  for (uint32_t s = 0; s < h->n_subchunks; s++) payload_bytes += payload->entries[s] & H5FZ_SUB_SIZE_MASK;
  uint8_t *side = NULL;
  size_t side_bytes = 0;
  if (h->n_outliers) {
    int rc = h5fz_side_encode(pos, vals, h->n_outliers, esize, &side, &side_bytes);
    if (rc) return rc;
  }
  size_t total =
      H5FZ_HEADER_BYTES + 4u * (size_t)h->n_subchunks + payload_bytes + side_bytes + trailing + H5FZ_CHECKSUM_BYTES;
  if (total >= H5FZ_HEADER_BYTES + in_bytes + H5FZ_CHECKSUM_BYTES) {
    free(side);
    if (!in) return H5FZ_NEED_RAW_INPUT;
    return write_raw(h, in, in_bytes, out, out_bytes);
  }
  uint8_t *buf = malloc(total);
  if (!buf) {
    free(side);
    return h5fz_fail(H5FZ_ERR_NOMEM, "cannot allocate a %zu-byte container", total);
  }
  h5fz_header_write(h, buf);
  uint8_t *w = buf + H5FZ_HEADER_BYTES;
  for (uint32_t s = 0; s < h->n_subchunks; s++, w += 4) h5fz_put_u32(w, payload->entries[s]);
  const uint8_t *src = payload->base;
  for (uint32_t s = 0; s < h->n_subchunks; s++) {
    size_t size = payload->entries[s] & H5FZ_SUB_SIZE_MASK;
    const uint8_t *from = payload->stride ? payload->base + (size_t)s * payload->stride : src;
    memcpy(w, from, size);
    w += size;
    src += size;
  }
  if (side_bytes) memcpy(w, side, side_bytes);
  w += side_bytes;
  memcpy(w, in + (size_t)h->n_elements * esize, trailing);
  w += trailing;
  h5fz_put_u32(w, h5fz_checksum(buf, total - 4));
  free(side);
  *out = buf;
  *out_bytes = total;
  return H5FZ_OK;
}
