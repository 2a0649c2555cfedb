/*
 * h5fz_chunk_check.c - does a chunk belong to a dataset and keep its
 * promise: its recorded shape, its mode and bound, and (under REL) its
 * bound against the range of its decoded values.
 */
#include <stdio.h>
#include <string.h>

#include "h5fz_chunk_check.h"
#include "h5fz_modes.h"
#include "h5fz_rel_bound.h"

const char *h5fz_dtype_name(unsigned dtype)
{
  return dtype == H5FZ_DTYPE_F32 ? "float32" : dtype == H5FZ_DTYPE_F64 ? "float64" : "an unknown type";
}

/* "a x b x c" into buf. */
static const char *shape_text(uint32_t rank, const uint32_t *dims, char *buf, size_t len)
{
  size_t n = 0;
  buf[0] = '\0';
  for (uint32_t d = 0; d < rank && n < len; d++)
    n += (size_t)snprintf(buf + n, len - n, "%s%u", d ? " x " : "", dims[d]);
  return buf;
}

/* dims without its size-1 entries into out; returns how many are left. */
static uint32_t drop_unit_dims(uint32_t rank, const uint32_t *dims, uint32_t out[H5FZ_MAX_RANK])
{
  uint32_t n = 0;
  for (uint32_t d = 0; d < rank; d++)
    if (dims[d] != 1u) out[n++] = dims[d];
  return n;
}

/* The chunk's values come back in the dataset's element order when the two
 * shapes agree once their size-1 dims are dropped: a dim of extent 1 adds no
 * step to the row-major order (a 64 x 64 chunk written into a dataset of
 * 1 x 64 x 64 chunks, as h5py's own direct-chunk test does, reads back as
 * written). */
static int check_shape(uint32_t have_rank, const uint32_t *have_dims, uint32_t want_rank, const uint32_t *want_dims)
{
  if (!want_rank || !have_rank || have_rank > H5FZ_MAX_RANK || want_rank > H5FZ_MAX_RANK) return H5FZ_OK;
  uint32_t have[H5FZ_MAX_RANK], want[H5FZ_MAX_RANK];
  uint32_t n_have = drop_unit_dims(have_rank, have_dims, have), n_want = drop_unit_dims(want_rank, want_dims, want);
  if (n_have == n_want && !memcmp(have, want, n_have * sizeof *have)) return H5FZ_OK;
  char a[96], b[96];
  return h5fz_fail(H5FZ_ERR_CORRUPT,
                   "the chunk is %s elements, the dataset's chunks are %s: its values would come "
                   "back in another order",
                   shape_text(have_rank, have_dims, a, sizeof a), shape_text(want_rank, want_dims, b, sizeof b));
}

static const char *mode_label(const h5fz_mode_row *m) { return m ? m->label : "unknown"; }

/* A chunk keeps the dataset's promise when it is exact (stored raw,
 * lossless) or was coded for a bound at least as tight in a mode that makes
 * the same kind of promise (the mode table's rule, h5fz_mode_chunk_keeps):
 * under an ABS bound, ABS and REL chunks whose absolute bound is no looser;
 * under PW_REL, PW_REL chunks with no looser relative bound; under REL, ABS
 * and REL chunks (the bound relative to the chunk's original range cannot
 * be checked from the decoded values alone); a lossless dataset takes only
 * exact chunks. */
static int check_bound(unsigned have_mode, double have_bound, int stored_raw, const h5fz_spec *want)
{
  const h5fz_mode_row *have = h5fz_mode_lookup(have_mode), *dataset = h5fz_mode_lookup((unsigned)want->mode);
  if (stored_raw || h5fz_mode_chunk_keeps(have, have_bound, dataset, want->bound)) return H5FZ_OK;
  /* a bound resolved from a range is recorded as an absolute one */
  int absolute = have && have->resolve == H5FZ_RESOLVE_CHUNK_RANGE;
  return h5fz_fail(H5FZ_ERR_CORRUPT,
                   "the chunk was coded %s with %sbound %.9g, looser than or unlike the dataset's "
                   "%s %.9g: it would not keep the dataset's error bound",
                   mode_label(have), absolute ? "absolute " : "", have_bound, mode_label(dataset), want->bound);
}

/* A chunk decodes to its recorded byte order; HDF5 reads those bytes as
 * the dataset's type, so the two must agree (a spec without a dataset part
 * names no order). */
static int check_order(int have_big, const h5fz_spec *want)
{
  if (want->dtype == H5FZ_DTYPE_UNKNOWN || !have_big == !want->big_endian) return H5FZ_OK;
  return h5fz_fail(H5FZ_ERR_CORRUPT,
                   "the chunk holds %s-endian values, the dataset is %s-endian: its values would "
                   "come back byte-swapped",
                   have_big ? "big" : "little", want->big_endian ? "big" : "little");
}

int h5fz_header_check_spec(const h5fz_header *h, const h5fz_spec *want)
{
  int rc = check_shape(h->rank, h->dims, want->rank, want->dims);
  if (!rc) rc = check_order((h->flags & H5FZ_FLAG_BIG_ENDIAN) != 0, want);
  return rc ? rc : check_bound(h->mode, h->abs_bound, (h->flags & H5FZ_FLAG_STORED_RAW) != 0, want);
}

int h5fz_chunk_info_check_spec(const h5fz_chunk_info *info, const h5fz_spec *dataset)
{
  if (!info || !dataset) return h5fz_fail(H5FZ_ERR_ARG, "h5fz_chunk_info_check_spec: NULL argument");
  int rc = check_shape(info->rank, info->dims, dataset->rank, dataset->dims);
  if (!rc) rc = check_order(info->big_endian, dataset);
  return rc ? rc : check_bound(info->mode, info->abs_bound, info->stored_raw, dataset);
}

/* Under a REL dataset, a lossy chunk's absolute bound eb must be at most
 * rel x the range r of its original finite non-fill values. Decoded values
 * lie within eb of the originals, so r <= r' + 2 eb for the range r' of all
 * finite decoded values:
 * a chunk with eb > rel (r' + 2 eb) cannot have kept the promise (a legal
 * chunk never fails this; a looser one can pass when r' is much larger). */
int h5fz_rel_check_decoded(const h5fz_header *h, const h5fz_spec *want, const void *values)
{
  const h5fz_mode_row *dataset = want ? h5fz_mode_lookup((unsigned)want->mode) : NULL,
                      *have = h5fz_mode_lookup(h->mode);
  if (!dataset || dataset->resolve != H5FZ_RESOLVE_CHUNK_RANGE || (h->flags & H5FZ_FLAG_STORED_RAW) || !have ||
      have->promise != H5FZ_PROMISE_ABSOLUTE)
    return H5FZ_OK;
  h5fz_spec s = *want;
  s.dtype = (h5fz_dtype)h->dtype;
  /* every finite decoded value, the fill value's too: a value within eb of
   * the fill can decode to it exactly, and leaving it out could make r' too
   * small (a false refusal); counting fills only makes the test more lenient */
  s.has_fill = 0;
  double lo, hi, eb = h->abs_bound;
  h5fz_rel_range(&s, values, h->n_elements, &lo, &hi);
  double decoded = hi >= lo ? hi - lo : 0.0, limit = want->bound * (decoded + 2.0 * eb);
  if (!(eb > limit * (1.0 + 1e-9))) return H5FZ_OK;
  return h5fz_fail(H5FZ_ERR_CORRUPT,
                   "the chunk was coded %s with absolute bound %.9g, more than the dataset's %s "
                   "%.9g of its values' range (%.9g decoded) allows: it would not keep the dataset's error bound",
                   have->label, eb, dataset->label, want->bound, decoded);
}
