/*
 * h5fz_chunk_plan.c - a spec and a chunk (or a container's header) become
 * the chunk plan an executor runs and the header the container records.
 */
#include <math.h>
#include <string.h>

#include "h5fz_chunk_plan.h"
#include "h5fz_modes.h"
#include "h5fz_rel_bound.h"

int h5fz_chunk_plan_make(const h5fz_spec *spec, const void *in, size_t in_bytes, h5fz_chunk_plan *p, h5fz_header *h)
{
  double eb = spec && isfinite(spec->bound) ? spec->bound : 0.0;
  if (spec && h5fz_mode_from_chunk_range((unsigned)spec->mode) && h5fz_dtype_size(spec->dtype)) {
    double lo, hi;
    h5fz_rel_range(spec, in, in_bytes / h5fz_dtype_size(spec->dtype), &lo, &hi);
    eb = h5fz_rel_abs_bound(spec->bound, lo, hi, spec->dtype);
  }
  return h5fz_chunk_plan_make_eb(spec, in_bytes, eb, p, h);
}

uint64_t h5fz_fill_bits(const h5fz_spec *spec)
{
  const int f32 = spec->dtype == H5FZ_DTYPE_F32;
  const uint64_t negzero = f32 ? 0x80000000u : 0x8000000000000000ull; /* escapes anyway */
  /* missing= takes the one place; validation refused a fill value that
   * would need it too (a fill of +0.0 or NaN needs none) */
  if (!spec->has_fill && !spec->has_missing) return negzero;
  const double exact = spec->has_missing ? spec->missing : spec->fill;
  const uint64_t bits = f32 ? h5fz_float_bits_32((float)exact) : h5fz_float_bits_64(exact);
  return bits ? bits : negzero; /* +0.0 is its own bin, exactly */
}

int h5fz_chunk_plan_make_eb(const h5fz_spec *spec, size_t in_bytes, double eb, h5fz_chunk_plan *p, h5fz_header *h)
{
  int rc = h5fz_spec_validate(spec);
  if (rc) return rc;
  if (spec->dtype == H5FZ_DTYPE_UNKNOWN)
    return h5fz_fail(H5FZ_ERR_SPEC, "the spec does not say whether values are float32 or float64");
  if (in_bytes > H5FZ_MAX_CHUNK_BYTES)
    return h5fz_fail(H5FZ_ERR_ARG, "chunk of %zu bytes exceeds the %u-byte limit of format v1", in_bytes,
                     H5FZ_MAX_CHUNK_BYTES);
  memset(p, 0, sizeof *p);
  memset(h, 0, sizeof *h);
  p->dtype = spec->dtype;
  p->esize = (uint32_t)h5fz_dtype_size(spec->dtype);
  p->n_elements = in_bytes / p->esize;
  p->subchunk_elems = spec->subchunk_bytes / p->esize;
  p->n_subchunks = (uint32_t)((p->n_elements + p->subchunk_elems - 1) / p->subchunk_elems);
  p->n_ops = spec->n_ops;
  memcpy(p->ops, spec->ops, H5FZ_MAX_OPS);
  if (!isfinite(eb)) eb = 0.0;
  p->quant = h5fz_quant_params_make(h5fz_mode_lookup((unsigned)spec->mode)->qmode, eb, h5fz_fill_bits(spec));
  p->row = spec->rank >= 2 ? spec->dims[spec->rank - 1] : 0;
  /* lorenzo_nd: the executor chooses the predictor up to this dimension */
  p->lnd = h5fz_lnd_geom_make(spec->rank, spec->dims, p->n_elements, h5fz_lnd_max_dim(spec->rank));
  p->lnd.interp = spec->n_ops > 1 && spec->ops[1] == H5FZ_OP_LORENZO_INTERP; /* ... or interpolation */
  /* ... by the cost its coder pays: entropy-coded bits (huff, huffctx) or bit planes (the others) */
  p->lnd.entropy = spec->n_ops > 1 && h5fz_op_is_zero_run_coder(spec->ops[spec->n_ops - 1]);

  /* big-endian values: coded as little-endian ones (the caller swapped
   * them), the order recorded for the decoder (format version 2) */
  h->version = (uint8_t)h5fz_chain_format_version(spec->ops, spec->n_ops, spec->big_endian);
  h->flags = spec->big_endian ? H5FZ_FLAG_BIG_ENDIAN : 0u;
  h->dtype = (uint8_t)spec->dtype;
  h->mode = (uint8_t)spec->mode;
  h->input_bytes = in_bytes;
  h->n_elements = p->n_elements;
  h->abs_bound = eb;
  h->subchunk_elems = p->subchunk_elems;
  h->n_subchunks = p->n_subchunks;
  h->n_ops = (uint8_t)spec->n_ops;
  memcpy(h->ops, spec->ops, H5FZ_MAX_OPS);
  h->rank = (uint8_t)spec->rank;
  /* dims past rank are written 0 (docs/format.md section 3) */
  for (uint32_t i = 0; i < spec->rank; i++) h->dims[i] = spec->dims[i];
  h->predictor = h5fz_plan_has_lnd(p) ? 1u : 0u; /* the executor writes its choice */
  return H5FZ_OK;
}

void h5fz_chunk_plan_from_header(const h5fz_header *h, h5fz_chunk_plan *p)
{
  memset(p, 0, sizeof *p);
  p->dtype = (h5fz_dtype)h->dtype;
  p->esize = (uint32_t)h5fz_dtype_size(p->dtype);
  p->n_elements = h->n_elements;
  p->subchunk_elems = h->subchunk_elems;
  p->n_subchunks = h->n_subchunks;
  p->n_ops = h->n_ops;
  memcpy(p->ops, h->ops, H5FZ_MAX_OPS);
  /* the header's mode was checked (h5fz_container_open); fill bits: the encoder's */
  p->quant = h5fz_quant_params_make(h5fz_mode_lookup(h->mode)->qmode, h->abs_bound, 0);
  p->row = h->rank >= 2 ? h->dims[h->rank - 1] : 0;
  p->lnd = h5fz_lnd_geom_make(h->rank, h->dims, h->n_elements, h->predictor);
}

void h5fz_chunk_info_from_header(const h5fz_header *h, h5fz_chunk_info *info)
{
  memset(info, 0, sizeof *info);
  info->format_version = h->version;
  info->dtype = (h5fz_dtype)h->dtype;
  info->mode = (h5fz_mode)h->mode;
  info->abs_bound = h->abs_bound;
  info->input_bytes = h->input_bytes;
  info->n_elements = h->n_elements;
  info->subchunk_elems = h->subchunk_elems;
  info->n_subchunks = h->n_subchunks;
  info->n_outliers = h->n_outliers;
  info->stored_raw = (h->flags & H5FZ_FLAG_STORED_RAW) != 0;
  info->n_ops = h->n_ops;
  memcpy(info->ops, h->ops, H5FZ_MAX_OPS);
  info->predictor = info->stored_raw ? 0u : h->predictor;
  info->rank = h->rank <= H5FZ_MAX_RANK ? h->rank : 0u;
  for (uint32_t d = 0; d < info->rank; d++) info->dims[d] = h->dims[d];
  info->big_endian = (h->flags & H5FZ_FLAG_BIG_ENDIAN) != 0;
}
