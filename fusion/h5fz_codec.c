/*
 * h5fz_codec.c - the public chunk codec: plan a chunk, pick the executor,
 * write and read the container.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "h5fz_exec.h"
#include "h5fz_gpu.h"

/* Min and max of the finite values of in[0..n) that are not `skip` and
 * not within `near` of it (near < 0: only skip itself; skip NaN: none). */
static void range_without(h5fz_dtype dtype, const void *in, uint64_t n, int has_skip, double skip, double near,
                          double *lo_out, double *hi_out)
{
  double lo = INFINITY, hi = -INFINITY;
  if (dtype == H5FZ_DTYPE_F32) {
    const float *v = in;
    const float f = (float)skip;
    for (uint64_t i = 0; i < n; i++)
      if (isfinite(v[i]) && !(has_skip && (v[i] == f || fabs((double)v[i] - (double)f) <= near))) {
        if (v[i] < lo) lo = v[i];
        if (v[i] > hi) hi = v[i];
      }
  } else {
    const double *v = in;
    for (uint64_t i = 0; i < n; i++)
      if (isfinite(v[i]) && !(has_skip && (v[i] == skip || fabs(v[i] - skip) <= near))) {
        if (v[i] < lo) lo = v[i];
        if (v[i] > hi) hi = v[i];
      }
  }
  *lo_out = lo;
  *hi_out = hi;
}

/* Min and max of the finite values, for REL bounds, leaving out the fill
 * value (HDF5 pads edge chunks and chunks not yet written with it, and
 * padding must not widen the bound of the real values); +inf/-inf when
 * there are none.
 * A non-zero fill value also leaves out values within bound x the range
 * (the range with only the fill itself left out) of it: HDF5 encodes a
 * chunk written in parts again from its decoded values, and a fill value
 * that was quantized comes back near it, not equal to it (-999 as
 * -998.9996), so it counted in the range of the next encode, and the
 * values written before were quantized again with a far larger eb (53x the
 * bound with fill -999 and three steps; up to 1e13x in a tester's sweep).
 * Any earlier encode's eb of the chunk is at most that distance (its eb is
 * within bound / (1 + 2 bound) x its range, and the range seen now is at
 * least that range less 2 eb), so every decoded fill value is left out.
 * Zero (HDF5's default), NaN, and values too far out for the quantizer
 * come back exactly, so they need no more than the test for equality.
 * Leaving out more values can only tighten the bound.
 * The GPU batch path takes the min and max with the fill left out only
 * (device_ops/h5fz_gpu_batch.h): it encodes whole chunks from the
 * caller's values, where no decoded fill values occur (docs/spec.md §6). */
static void finite_range(const h5fz_spec *spec, const void *in, uint64_t n, double *lo_out, double *hi_out)
{
  int skip = spec->has_fill;
  range_without(spec->dtype, in, n, skip, spec->fill, -1.0, lo_out, hi_out);
  double fill = spec->dtype == H5FZ_DTYPE_F32 ? (double)(float)spec->fill : spec->fill;
  if (skip && isfinite(fill) && fill != 0.0 && *lo_out <= *hi_out && spec->mode == H5FZ_MODE_REL) {
    double near = spec->bound * (*hi_out - *lo_out);
    /* leaving values out moves lo or hi only when one of them is left out:
     * the second pass runs for chunks whose extreme is near the fill */
    int moves = fabs(*lo_out - fill) <= near || fabs(*hi_out - fill) <= near;
    if (isfinite(near) && moves) range_without(spec->dtype, in, n, 1, spec->fill, near, lo_out, hi_out);
  }
}

/* The largest power of 3 that is at most t, built from 1.0 by one
 * multiplication or division by 3 at a time: each step is one correctly
 * rounded IEEE operation, so every machine gets the same bits (no pow or
 * log). Only normal powers: 3^646 is the largest finite one, 3^-644 the
 * smallest normal one; below that (and for t <= 0, NaN, +inf) it gives 0. */
#define H5FZ_POW3_MAX_STEPS 700 /* more than the 646 / 644 steps either way */
double h5fz_pow3_floor(double t)
{
  if (!(t > 0.0) || !isfinite(t)) return 0.0;
  double p = 1.0;
  if (t >= 1.0) {
    /* 3 x p overflows to +inf past 3^646, and +inf <= t is false */
    for (int k = 0; k < H5FZ_POW3_MAX_STEPS && p * 3.0 <= t; k++) p *= 3.0;
    return p;
  }
  for (int k = 0; p > t; k++) {
    if (k == H5FZ_POW3_MAX_STEPS) return 0.0;
    p /= 3.0;
    if (p < DBL_MIN) return 0.0; /* subnormal: the steps would no longer be powers of 3 */
  }
  return p;
}

/* 1/sqrt(2) in binary64: the scale of REL's grid of bounds. Its odd
 * mantissa, 6369051672525773 = 7 x 7 x 11 x 17 x 6173 x 112600627, has no
 * factor 2, 3 or 5, so no round value (an integer, a decimal, a binary
 * fraction) is an odd multiple of C x 3^k, i.e. sits exactly on a bin
 * edge. With C = 1, every odd integer was on a bin edge for every k <= 0:
 * whole-metre elevations at rel=1e-4 came back at ratio 1.56 instead of
 * 3.54, most values escaping the quantizer's check by a rounding. */
#define H5FZ_REL_GRID_SCALE 0.70710678118654757

double h5fz_rel_grid_floor(double t)
{
  /* t / C is rounded, so the power it gives may be one off either way */
  double p = h5fz_pow3_floor(t / H5FZ_REL_GRID_SCALE), up = h5fz_pow3_floor(p * 3.5); /* the next power */
  if (up > p && up * H5FZ_REL_GRID_SCALE <= t) p = up;
  double eb = p * H5FZ_REL_GRID_SCALE;
  if (eb > t) eb = h5fz_pow3_floor(p / 2.0) * H5FZ_REL_GRID_SCALE; /* the power before */
  return eb >= DBL_MIN ? eb : 0.0;
}

/* REL's absolute bound of a chunk: eb = the largest C x 3^k (C = 1/sqrt(2),
 * k an integer of either sign) at most bound / (1 + 2 bound) x range - m,
 * m a margin of a unit in the last place (below); 0 (the chunk is stored
 * exactly) when the range is 0 or not finite, or nothing on the grid fits.
 *
 * Why a grid of powers of 3. HDF5 encodes a chunk again each time part of
 * it is written while the chunk is not in its chunk cache: it reads the
 * chunk back, decoded, changes the part, and the whole chunk comes here
 * again, so the values written before are quantized again from their
 * decoded values, with the eb of the chunk as it is now. The quantizer's
 * bins are centred on the integer multiples of step = 2 eb. When two
 * encodes' bounds differ by an odd integer factor (3^j), the coarse bins'
 * edges (odd multiples of half the coarse step) are edges of fine bins
 * too, so every fine bin lies inside one coarse bin: a decoded value
 * quantized again with a larger eb lands in the coarse bin that holds its
 * original value, within the larger eb of it; with the same or a smaller
 * eb the decoded value is a multiple of the new step and comes back
 * unchanged. Errors no longer add up over re-encodes. With eb = bound x
 * range as it comes, every re-encode could move a value by up to its new
 * eb (chunks of 8 time steps written one step at a time came back with up
 * to 5.2x the bound; docs/spec.md §6, §7). The scale C keeps round values
 * off the bin edges (above).
 *
 * Why 1 + 2 bound. A chunk that comes back decoded can span up to 2 (eb +
 * u) more than its original values (its extremes moved outwards), and a
 * bound just within bound x that wider range can exceed bound x the
 * original range (0 .. 99.9999 % at rel=1e-2 went from 1/3 to 1 with
 * powers of 3 alone). With eb <= bound / (1 + 2 bound) x range - u, each
 * encode keeps eb + u <= bound x the original range, however often the
 * chunk is encoded (docs/spec.md §6 has the induction).
 *
 * Why the margin. A decoded value is rounded to the element type, so after
 * a re-encode with a larger eb a value that was at the edge of its first
 * bin can come back eb plus up to a unit in the last place (u) from its
 * original (the encoder checks the new value against the decoded one);
 * float32 chunks whose range left no room above the grid came back 1.049x
 * over without it (tests/core/test_rel_bound.c, edge_of_power). u is taken
 * at the largest magnitude a decoded value can reach, max(|lo|, |hi|) + 2
 * min(bound, 1) x range; 2^-40 of that is added for the grid's own
 * rounding (C x 3^k in binary64 is not exact, so two grid values differ
 * from an exact 3^j ratio by about |k| units of binary64). A bound below
 * the margin gives 0: the chunk is stored exactly.
 *
 * The cost: eb is up to 3x tighter than bound x range, about log2(3)/2 =
 * 0.8 bit of slack less per value on average. The GPU batch path calls
 * this on the host too, so every executor writes the same eb. */
double h5fz_rel_abs_bound(double bound, double lo, double hi, h5fz_dtype dtype)
{
  double range = hi >= lo && isfinite(hi - lo) ? hi - lo : 0.0;
  if (!(range > 0.0) || !(bound > 0.0)) return 0.0;
  double reach = fmax(fabs(lo), fabs(hi)) + 2.0 * fmin(bound, 1.0) * range;
  int e = 0;
  (void)frexp(isfinite(reach) ? reach : DBL_MAX, &e); /* reach in [2^(e-1), 2^e) */
  double margin = ldexp(1.0, e - (dtype == H5FZ_DTYPE_F64 ? 53 : 24)) + ldexp(1.0, e - 40);
  /* bound / (1 + 2 bound) < 1/2, so the product cannot overflow */
  return h5fz_rel_grid_floor(bound / (1.0 + 2.0 * bound) * range - margin);
}

int h5fz_chunk_plan_make(const h5fz_spec *spec, const void *in, size_t in_bytes, h5fz_chunk_plan *p,
                         h5fz_header *h)
{
  double eb = spec && isfinite(spec->bound) ? spec->bound : 0.0;
  if (spec && spec->mode == H5FZ_MODE_REL && h5fz_dtype_size(spec->dtype)) {
    double lo, hi;
    finite_range(spec, in, in_bytes / h5fz_dtype_size(spec->dtype), &lo, &hi);
    eb = h5fz_rel_abs_bound(spec->bound, lo, hi, spec->dtype);
  }
  return h5fz_chunk_plan_make_eb(spec, in_bytes, eb, p, h);
}

uint64_t h5fz_fill_bits(const h5fz_spec *spec)
{
  const int f32 = spec->dtype == H5FZ_DTYPE_F32;
  const uint64_t negzero = f32 ? 0x80000000u : 0x8000000000000000ull; /* escapes anyway */
  if (!spec->has_fill) return negzero;
  const uint64_t bits = f32 ? h5fz_float_bits_32((float)spec->fill) : h5fz_float_bits_64(spec->fill);
  return bits ? bits : negzero; /* +0.0 is its own bin, exactly */
}

int h5fz_chunk_plan_make_eb(const h5fz_spec *spec, size_t in_bytes, double eb, h5fz_chunk_plan *p, h5fz_header *h)
{
  int rc = h5fz_spec_validate(spec);
  if (rc) return rc;
  if (spec->dtype == H5FZ_DTYPE_UNKNOWN)
    return h5fz_fail(H5FZ_ERR_SPEC, "the spec does not say whether values are float32 or float64");
  if (in_bytes > H5FZ_MAX_CHUNK_BYTES)
    return h5fz_fail(H5FZ_ERR_ARG, "chunk of %zu bytes exceeds the %u-byte limit of format v1",
                     in_bytes, H5FZ_MAX_CHUNK_BYTES);
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
  p->quant = h5fz_quant_params_make((int)spec->mode, eb, h5fz_fill_bits(spec));
  p->row = spec->rank >= 2 ? spec->dims[spec->rank - 1] : 0;
  /* lorenzo_nd: the executor chooses the predictor up to this dimension */
  p->lnd = h5fz_lnd_geom_make(spec->rank, spec->dims, p->n_elements, h5fz_lnd_max_dim(spec->rank));

  h->version = H5FZ_FORMAT_VERSION;
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
  p->quant = h5fz_quant_params_make((int)h->mode, h->abs_bound, 0); /* fill bits: the encoder's */
  p->row = h->rank >= 2 ? h->dims[h->rank - 1] : 0;
  p->lnd = h5fz_lnd_geom_make(h->rank, h->dims, h->n_elements, h->predictor);
}

static int write_raw(const h5fz_header *h, const uint8_t *in, size_t in_bytes, void **out,
                     size_t *out_bytes)
{
  h5fz_header r = *h;
  r.flags = H5FZ_FLAG_STORED_RAW;
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

int h5fz_container_write(const h5fz_header *h, const h5fz_payload *payload, const uint32_t *pos,
                         const void *vals, const uint8_t *in, size_t in_bytes, void **out,
                         size_t *out_bytes)
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
  size_t total = H5FZ_HEADER_BYTES + 4u * (size_t)h->n_subchunks + payload_bytes + side_bytes +
                 trailing + H5FZ_CHECKSUM_BYTES;
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

int h5fz_read_device_mode(h5fz_device_mode *mode)
{
  const char *v = getenv("H5FZ_DEVICE");
  /* any case: GPU and Cpu are what people type too */
  if (!v || !*v || !strcasecmp(v, "auto")) *mode = H5FZ_DEVICE_AUTO;
  else if (!strcasecmp(v, "cpu")) *mode = H5FZ_DEVICE_CPU;
  else if (!strcasecmp(v, "gpu")) *mode = H5FZ_DEVICE_GPU;
  else return h5fz_fail(H5FZ_ERR_ARG, "H5FZ_DEVICE=\"%s\": want auto, gpu or cpu (any case)", v);
  return H5FZ_OK;
}

int h5fz_device_strict(void)
{
  const char *v = getenv("H5FZ_DEVICE_STRICT");
  return v && *v && strcmp(v, "0") != 0;
}

int h5fz_chunk_device_mode(h5fz_device_mode *mode)
{
  int rc = h5fz_read_device_mode(mode);
  if (rc == H5FZ_OK || h5fz_device_strict()) return rc;
  /* A chunk call may run inside HDF5's chunk-cache flush at H5Dclose, where
   * a failure cannot be reported and the chunk would be lost: a setting we
   * cannot read sends the data to the CPU executor, which every machine has
   * (set_local already refused it at H5Dcreate, if that ran here). */
  h5fz_log_once("h5fz: %s; the CPU executor takes the chunks", h5fz_last_error());
  h5fz_clear_error();
  *mode = H5FZ_DEVICE_CPU;
  return H5FZ_OK;
}

/* 1: run this chunk on the GPU; 0: on the CPU; <0 only under
 * H5FZ_DEVICE_STRICT: H5FZ_DEVICE=gpu asked for a GPU that is not usable, or
 * H5FZ_DEVICE holds no device name (the error says which). */
static int choose_gpu(const h5fz_chunk_plan *p, size_t chunk_bytes)
{
  h5fz_device_mode mode = H5FZ_DEVICE_AUTO;
  int rc = h5fz_chunk_device_mode(&mode);
  if (rc) return rc;
  if (mode == H5FZ_DEVICE_CPU || p->n_subchunks == 0) return 0;
  int route = h5fz_gpu_route(p, chunk_bytes, mode == H5FZ_DEVICE_GPU);
  if (route >= 0) return route;
  if (mode == H5FZ_DEVICE_GPU) {
    char why[400];
    snprintf(why, sizeof why, "%s", h5fz_last_error());
    if (h5fz_device_strict())
      return h5fz_fail(H5FZ_ERR_DEVICE, "H5FZ_DEVICE=gpu, but the GPU executor is not usable: %s", why);
    h5fz_log_once("h5fz: H5FZ_DEVICE=gpu, but the GPU executor is not usable (%s); the CPU executor takes the "
                  "chunks", why);
    h5fz_clear_error();
  }
  return 0;
}

/* h5fz_spec_chunk_bytes as a size, 0 (does not say) past what a size holds. */
static size_t spec_chunk_bytes(const h5fz_spec *spec)
{
  uint64_t bytes = h5fz_spec_chunk_bytes(spec);
  return bytes > (uint64_t)SIZE_MAX / 2u ? 0 : (size_t)bytes;
}

int h5fz_device_check(const h5fz_spec *spec, size_t chunk_bytes)
{
  h5fz_clear_error();
  if (!spec) return h5fz_fail(H5FZ_ERR_ARG, "h5fz_device_check: NULL spec");
  h5fz_device_mode mode = H5FZ_DEVICE_AUTO;
  int rc = h5fz_read_device_mode(&mode);
  if (rc || mode != H5FZ_DEVICE_GPU) return rc;
  if (!chunk_bytes) chunk_bytes = spec_chunk_bytes(spec);
  if (!chunk_bytes || chunk_bytes > H5FZ_MAX_CHUNK_BYTES) return H5FZ_OK;
  h5fz_chunk_plan p;
  h5fz_header h;
  /* the kernels depend on the chain, type and sub-chunk, not on the bound */
  rc = h5fz_chunk_plan_make_eb(spec, chunk_bytes, spec->bound, &p, &h);
  if (rc) return rc;
  rc = choose_gpu(&p, chunk_bytes);
  return rc < 0 ? rc : H5FZ_OK;
}

int h5fz_chunk_encode(const h5fz_spec *spec, const void *in, size_t in_bytes, void **out,
                      size_t *out_bytes)
{
  h5fz_clear_error();
  if (!spec || (!in && in_bytes) || !out || !out_bytes)
    return h5fz_fail(H5FZ_ERR_ARG, "h5fz_chunk_encode: NULL argument");
  h5fz_chunk_plan p;
  h5fz_header h;
  int rc = h5fz_chunk_plan_make(spec, in, in_bytes, &p, &h);
  if (rc) return rc;
  if (p.n_subchunks == 0) {
    h5fz_payload none = {NULL, 0, NULL};
    return h5fz_container_write(&h, &none, NULL, NULL, in, in_bytes, out, out_bytes);
  }
  int gpu = choose_gpu(&p, in_bytes);
  if (gpu < 0) return gpu;
  if (gpu) {
    h5fz_header gh = h;
    int gpu_rc = h5fz_gpu_encode_chunk(&p, &gh, in, in_bytes, out, out_bytes);
    if (gpu_rc == H5FZ_OK || h5fz_device_strict()) return gpu_rc;
    h5fz_log_once("h5fz: GPU encode failed, this and later failing chunks use the CPU executor: %s",
                  h5fz_last_error());
  }
  h5fz_clear_error();
  return h5fz_cpu_encode_chunk(&p, &h, in, in_bytes, out, out_bytes);
}

/* want_bytes 0: any chunk; else it must hold want_bytes bytes of want_dtype, and, with want (the
 * dataset's spec), have its chunk shape (when recorded) and keep its bound. */
static int decode_chunk(const void *in_v, size_t in_bytes, void **out, size_t *out_bytes, int allow_gpu,
                        h5fz_dtype want_dtype, size_t want_bytes, const h5fz_spec *want);

static void scatter_outliers(uint8_t *values, const uint32_t *pos, const uint8_t *vals, uint32_t n,
                             uint32_t esize)
{
  for (uint32_t i = 0; i < n; i++) memcpy(values + (size_t)pos[i] * esize, vals + (size_t)i * esize, esize);
}

int h5fz_chunk_decode(const void *in_v, size_t in_bytes, void **out, size_t *out_bytes)
{
  return decode_chunk(in_v, in_bytes, out, out_bytes, 1, H5FZ_DTYPE_UNKNOWN, 0, NULL);
}

int h5fz_chunk_decode_as(const void *in_v, size_t in_bytes, h5fz_dtype dtype, size_t chunk_bytes, void **out,
                         size_t *out_bytes)
{
  return decode_chunk(in_v, in_bytes, out, out_bytes, 1, dtype, chunk_bytes, NULL);
}

int h5fz_chunk_decode_for(const void *in_v, size_t in_bytes, const h5fz_spec *dataset, void **out, size_t *out_bytes)
{
  h5fz_clear_error();
  if (!dataset) return h5fz_fail(H5FZ_ERR_ARG, "h5fz_chunk_decode_for: NULL spec");
  size_t bytes = spec_chunk_bytes(dataset); /* 0 without a dataset part: type and size unchecked */
  return decode_chunk(in_v, in_bytes, out, out_bytes, 1, bytes ? dataset->dtype : H5FZ_DTYPE_UNKNOWN, bytes, dataset);
}

int h5fz_chunk_decode_cpu_as(const void *in_v, size_t in_bytes, h5fz_dtype dtype, size_t chunk_bytes, void **out,
                             size_t *out_bytes)
{
  return decode_chunk(in_v, in_bytes, out, out_bytes, 0, dtype, chunk_bytes, NULL);
}

static const char *dtype_name(unsigned dtype)
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

static int check_shape(uint32_t have_rank, const uint32_t *have_dims, uint32_t want_rank, const uint32_t *want_dims)
{
  if (!want_rank || !have_rank || have_rank > H5FZ_MAX_RANK ||
      (have_rank == want_rank && !memcmp(have_dims, want_dims, want_rank * sizeof *want_dims)))
    return H5FZ_OK;
  char a[96], b[96];
  return h5fz_fail(H5FZ_ERR_CORRUPT, "the chunk is %s elements, the dataset's chunks are %s: its values would come "
                   "back in another order", shape_text(have_rank, have_dims, a, sizeof a),
                   shape_text(want_rank, want_dims, b, sizeof b));
}

static const char *mode_name(unsigned mode)
{
  static const char *const names[] = {"ABS", "REL", "PW_REL", "lossless"};
  return mode < 4 ? names[mode] : "unknown";
}

/* A chunk keeps the dataset's promise when it is exact (stored raw,
 * lossless) or was coded for a bound at least as tight in a mode that makes
 * the same kind of promise: under an ABS bound, ABS and REL chunks whose
 * absolute bound is no looser; under PW_REL, PW_REL chunks with no looser
 * relative bound; under REL, ABS and REL chunks (the bound relative to the
 * chunk's original range cannot be checked from the decoded values alone);
 * a lossless dataset takes only exact chunks. */
static int check_bound(unsigned have_mode, double have_bound, int stored_raw, const h5fz_spec *want)
{
  if (stored_raw || have_mode == H5FZ_MODE_LOSSLESS) return H5FZ_OK;
  int ok;
  switch (want->mode) {
  case H5FZ_MODE_ABS: ok = (have_mode == H5FZ_MODE_ABS || have_mode == H5FZ_MODE_REL) && have_bound <= want->bound; break;
  case H5FZ_MODE_PW_REL: ok = have_mode == H5FZ_MODE_PW_REL && have_bound <= want->bound; break;
  case H5FZ_MODE_REL: ok = have_mode == H5FZ_MODE_ABS || have_mode == H5FZ_MODE_REL; break;
  default: ok = 0; break;
  }
  if (ok) return H5FZ_OK;
  return h5fz_fail(H5FZ_ERR_CORRUPT, "the chunk was coded %s with %sbound %.9g, looser than or unlike the dataset's "
                   "%s %.9g: it would not keep the dataset's error bound", mode_name(have_mode),
                   have_mode == H5FZ_MODE_REL ? "absolute " : "", have_bound, mode_name(want->mode), want->bound);
}

int h5fz_header_check_spec(const h5fz_header *h, const h5fz_spec *want)
{
  int rc = check_shape(h->rank, h->dims, want->rank, want->dims);
  return rc ? rc : check_bound(h->mode, h->abs_bound, (h->flags & H5FZ_FLAG_STORED_RAW) != 0, want);
}

int h5fz_chunk_info_check_spec(const h5fz_chunk_info *info, const h5fz_spec *dataset)
{
  if (!info || !dataset) return h5fz_fail(H5FZ_ERR_ARG, "h5fz_chunk_info_check_spec: NULL argument");
  int rc = check_shape(info->rank, info->dims, dataset->rank, dataset->dims);
  return rc ? rc : check_bound(info->mode, info->abs_bound, info->stored_raw, dataset);
}

/* Under a REL dataset, a lossy chunk's absolute bound eb must be at most
 * rel x the range r of its original finite non-fill values. Decoded values
 * lie within eb of the originals, so r <= r' + 2 eb for the range r' of all
 * finite decoded values:
 * a chunk with eb > rel (r' + 2 eb) cannot have kept the promise (a legal
 * chunk never fails this; a looser one can pass when r' is much larger). */
static int rel_check_decoded(const h5fz_header *h, const h5fz_spec *want, const void *values)
{
  if (!want || want->mode != H5FZ_MODE_REL || (h->flags & H5FZ_FLAG_STORED_RAW) ||
      (h->mode != H5FZ_MODE_ABS && h->mode != H5FZ_MODE_REL))
    return H5FZ_OK;
  h5fz_spec s = *want;
  s.dtype = (h5fz_dtype)h->dtype;
  /* every finite decoded value, the fill value's too: a value within eb of
   * the fill can decode to it exactly, and leaving it out could make r' too
   * small (a false refusal); counting fills only makes the test more lenient */
  s.has_fill = 0;
  double lo, hi, eb = h->abs_bound;
  finite_range(&s, values, h->n_elements, &lo, &hi);
  double decoded = hi >= lo ? hi - lo : 0.0, limit = want->bound * (decoded + 2.0 * eb);
  if (!(eb > limit * (1.0 + 1e-9))) return H5FZ_OK;
  return h5fz_fail(H5FZ_ERR_CORRUPT, "the chunk was coded %s with absolute bound %.9g, more than the dataset's REL "
                   "%.9g of its values' range (%.9g decoded) allows: it would not keep the dataset's error bound",
                   mode_name(h->mode), eb, want->bound, decoded);
}

static int decode_chunk(const void *in_v, size_t in_bytes, void **out, size_t *out_bytes, int allow_gpu,
                        h5fz_dtype want_dtype, size_t want_bytes, const h5fz_spec *want)
{
  h5fz_clear_error();
  if (!in_v || !out || !out_bytes) return h5fz_fail(H5FZ_ERR_ARG, "h5fz_chunk_decode: NULL argument");
  const uint8_t *in = in_v;
  h5fz_header h;
  int rc = h5fz_container_open(in, in_bytes, &h);
  if (rc) return rc;
  if (want_bytes && (h.dtype != (uint8_t)want_dtype || h.input_bytes != want_bytes))
    return h5fz_fail(H5FZ_ERR_CORRUPT, "the chunk holds %llu bytes of %s, the dataset's chunks are %zu bytes of %s",
                     (unsigned long long)h.input_bytes, dtype_name(h.dtype), want_bytes, dtype_name(want_dtype));
  if (want && (rc = h5fz_header_check_spec(&h, want))) return rc;
  const uint8_t *body = in + H5FZ_HEADER_BYTES;
  size_t body_len = in_bytes - H5FZ_HEADER_BYTES - H5FZ_CHECKSUM_BYTES;
  /* The size checks that need no table come before any allocation, so a
   * small corrupt chunk cannot make the decoder allocate the up to 2 GiB its
   * header claims: past them input_bytes <= 16384 * body_len + 8 (at most
   * 65536 bytes per 4-byte size-table entry). Same statuses, same order. */
  if (h.flags & H5FZ_FLAG_STORED_RAW) {
    if (body_len != h.input_bytes)
      return h5fz_fail(H5FZ_ERR_CORRUPT, "stored-raw chunk holds %zu bytes, header says %llu", body_len,
                       (unsigned long long)h.input_bytes);
  } else if (4u * (size_t)h.n_subchunks > body_len) {
    return h5fz_fail(H5FZ_ERR_TRUNCATED, "chunk ends inside its size table");
  }
  uint8_t *values = malloc(h.input_bytes ? h.input_bytes : 1u);
  if (!values) return h5fz_fail(H5FZ_ERR_NOMEM, "cannot allocate %llu bytes", (unsigned long long)h.input_bytes);
  if (h.flags & H5FZ_FLAG_STORED_RAW) {
    memcpy(values, body, body_len);
    *out = values;
    *out_bytes = body_len;
    return H5FZ_OK;
  }
  h5fz_chunk_plan p;
  h5fz_chunk_plan_from_header(&h, &p);
  uint64_t *offsets = malloc(((size_t)h.n_subchunks + 1u) * sizeof *offsets);
  uint32_t *entries = malloc(((size_t)h.n_subchunks + 1u) * 4u);
  uint32_t *pos = malloc(((size_t)h.n_outliers + 1u) * 4u);
  uint8_t *vals = malloc(((size_t)h.n_outliers + 1u) * p.esize);
  size_t payload_end = 0, used = 0;
  if (!offsets || !entries || !pos || !vals) {
    rc = h5fz_fail(H5FZ_ERR_NOMEM, "cannot allocate decode tables");
    goto fail;
  }
  rc = h5fz_size_table_check(&h, body, body_len, offsets, &payload_end);
  if (rc) goto fail;
  for (uint32_t s = 0; s < h.n_subchunks; s++) entries[s] = h5fz_get_u32(body + 4u * (size_t)s);
  if (h.n_outliers) {
    rc = h5fz_side_decode(body + payload_end, body_len - payload_end, h.n_outliers, p.esize, h.n_elements,
                          pos, vals, &used);
    if (rc) goto fail;
  }
  size_t trailing = h.input_bytes - h.n_elements * p.esize;
  if (payload_end + used + trailing != body_len) {
    rc = h5fz_fail(H5FZ_ERR_CORRUPT, "chunk body has %zu bytes, its parts add up to %zu", body_len,
                   payload_end + used + trailing);
    goto fail;
  }
  if (h.n_subchunks) {
    const uint8_t *payload = body + 4u * (size_t)h.n_subchunks;
    size_t payload_bytes = payload_end - 4u * (size_t)h.n_subchunks;
    rc = allow_gpu ? choose_gpu(&p, h.input_bytes) : 0;
    if (rc < 0) goto fail;
    int gpu_rc = rc ? h5fz_gpu_decode_chunk(&p, entries, payload, payload_bytes, offsets, values) : H5FZ_ERR_DEVICE;
    if (rc && gpu_rc == H5FZ_OK) {
      rc = H5FZ_OK;
    } else if (rc && h5fz_device_strict()) {
      rc = gpu_rc;
      goto fail;
    } else {
      if (rc) h5fz_log_once("h5fz: GPU decode failed, this and later failing chunks use the CPU executor: %s",
                            h5fz_last_error());
      rc = h5fz_cpu_decode_chunk(&p, entries, payload, offsets, values);
      if (rc) goto fail;
    }
  }
  scatter_outliers(values, pos, vals, h.n_outliers, p.esize);
  memcpy(values + h.n_elements * p.esize, body + payload_end + used, trailing);
  free(offsets); free(entries); free(pos); free(vals);
  offsets = NULL; entries = NULL; pos = NULL; vals = NULL;
  if ((rc = rel_check_decoded(&h, want, values))) goto fail;
  *out = values;
  *out_bytes = h.input_bytes;
  return H5FZ_OK;
fail:
  free(offsets); free(entries); free(pos); free(vals); free(values);
  return rc;
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
}

int h5fz_chunk_inspect(const void *in_v, size_t in_bytes, h5fz_chunk_info *info)
{
  h5fz_clear_error();
  if (!in_v || !info) return h5fz_fail(H5FZ_ERR_ARG, "h5fz_chunk_inspect: NULL argument");
  const uint8_t *in = in_v;
  h5fz_header h;
  int rc = h5fz_container_open(in, in_bytes, &h);
  if (rc) return rc;
  h5fz_chunk_info_from_header(&h, info);
  if (!info->stored_raw) {
    size_t body_len = in_bytes - H5FZ_HEADER_BYTES - H5FZ_CHECKSUM_BYTES;
    if (4u * (size_t)h.n_subchunks > body_len) return h5fz_fail(H5FZ_ERR_TRUNCATED, "chunk ends inside its size table");
    for (uint32_t s = 0; s < h.n_subchunks; s++)
      if (h5fz_get_u32(in + H5FZ_HEADER_BYTES + 4u * (size_t)s) & H5FZ_SUB_RAW) info->n_raw_subchunks++;
  }
  return H5FZ_OK;
}

int h5fz_chunk_outliers(const void *in_v, size_t in_bytes, uint32_t *pos, void *vals, size_t cap, size_t *n)
{
  h5fz_clear_error();
  if (!in_v || !n || (cap && (!pos || !vals))) return h5fz_fail(H5FZ_ERR_ARG, "h5fz_chunk_outliers: NULL argument");
  const uint8_t *in = in_v;
  h5fz_header h;
  int rc = h5fz_container_open(in, in_bytes, &h);
  if (rc) return rc;
  *n = 0;
  if ((h.flags & H5FZ_FLAG_STORED_RAW) || !h.n_outliers) return H5FZ_OK;
  const uint8_t *body = in + H5FZ_HEADER_BYTES;
  size_t body_len = in_bytes - H5FZ_HEADER_BYTES - H5FZ_CHECKSUM_BYTES, payload_end = 0, used = 0;
  uint32_t esize = (uint32_t)h5fz_dtype_size((h5fz_dtype)h.dtype);
  if (4u * (size_t)h.n_subchunks > body_len) return h5fz_fail(H5FZ_ERR_TRUNCATED, "chunk ends inside its size table");
  uint64_t *offsets = malloc(((size_t)h.n_subchunks + 1u) * sizeof *offsets);
  uint32_t *p = malloc(((size_t)h.n_outliers + 1u) * 4u);
  uint8_t *v = malloc(((size_t)h.n_outliers + 1u) * esize);
  if (!offsets || !p || !v) rc = h5fz_fail(H5FZ_ERR_NOMEM, "cannot allocate the outlier lists");
  if (!rc) rc = h5fz_size_table_check(&h, body, body_len, offsets, &payload_end);
  if (!rc) rc = h5fz_side_decode(body + payload_end, body_len - payload_end, h.n_outliers, esize, h.n_elements, p, v, &used);
  if (!rc) {
    size_t k = h.n_outliers < cap ? h.n_outliers : cap;
    memcpy(pos, p, k * 4u);
    memcpy(vals, v, k * esize);
    *n = h.n_outliers;
  }
  free(offsets);
  free(p);
  free(v);
  return rc;
}
