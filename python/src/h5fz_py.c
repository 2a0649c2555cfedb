/*
 * h5fz_py.c - the spec parser and the batched array codec for the Python
 * package (h5fz_py.h). Thin: every decision is the codec's
 * (fusion/h5fz.h, fusion/h5fz_batch.h); this file only turns ctypes-friendly
 * arguments into its structs and keeps the error text per thread.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h5fz.h"
#include "h5fz_batch.h"
#include "h5fz_py.h"
#include "h5fz_py_options.h"
#include "h5fz_py_error.h"

static _Thread_local char g_error[1024];

/* Record a failure of this library (not of the codec) and return status. */
int h5fz_py_fail(int status, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(g_error, sizeof g_error, fmt, ap);
  va_end(ap);
  return status;
}

/* After a codec call: keep its message (h5fz_last_error is overwritten by
 * the next codec call, which may come from a Python callback). */
int h5fz_py_keep(int status)
{
  if (status != H5FZ_OK) {
    const char *e = h5fz_last_error();
    snprintf(g_error, sizeof g_error, "%s", e && e[0] ? e : h5fz_status_name(status));
  }
  return status;
}

const char *h5fzpy_version(void) { return h5fz_version(); }

int h5fzpy_filter_id(void) { return H5FZ_FILTER_ID; }

const char *h5fzpy_last_error(void) { return g_error; }

void h5fz_py_clear_error(void) { g_error[0] = '\0'; }

static int is_blank(const char *text)
{
  for (const char *p = text; p && *p; p++)
    if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r') return 0;
  return 1;
}

int h5fzpy_spec_cd_values(const char *text, unsigned *cd, size_t cap, size_t *n_cd, char *canon, size_t canon_cap,
                          int *has_fill)
{
  g_error[0] = '\0';
  if (!cd || !n_cd) return h5fz_py_fail(H5FZ_ERR_ARG, "h5fzpy_spec_cd_values: NULL argument");
  h5fz_spec spec;
  /* The same steps, in the same order, as `h5fz cd-values` (cli/cmd_cd_values.c). */
  int rc = is_blank(text) ? h5fz_spec_default(&spec) : h5fz_spec_parse(text, &spec);
  if (!rc) rc = h5fz_spec_validate(&spec);
  if (!rc) rc = h5fz_spec_to_cd_values(&spec, 0, cd, cap, n_cd);
  if (!rc && canon) rc = h5fz_spec_format(&spec, canon, canon_cap);
  if (rc) return h5fz_py_keep(rc);
  if (has_fill) *has_fill = spec.has_fill;
  return H5FZ_OK;
}

int h5fzpy_spec_caution(const char *text, char *buf, size_t cap)
{
  h5fz_spec spec;
  if (buf && cap) buf[0] = '\0';
  if (is_blank(text) ? h5fz_spec_default(&spec) : h5fz_spec_parse(text, &spec)) return 0;
  return h5fz_spec_caution(&spec, buf, cap);
}

int h5fzpy_mode_at(size_t i, const char **name, int *takes_bound)
{
  h5fz_mode_info m;
  if (!name || !takes_bound) return H5FZ_ERR_ARG;
  if (h5fz_mode_at(i, &m) != H5FZ_OK) return H5FZ_ERR_ARG;
  *name = m.name;
  *takes_bound = m.takes_bound;
  return H5FZ_OK;
}

int h5fzpy_describe_cd_values(const unsigned *cd, size_t n_cd, char *canon, size_t canon_cap, int *dtype)
{
  g_error[0] = '\0';
  if ((!cd && n_cd) || !canon) return h5fz_py_fail(H5FZ_ERR_ARG, "h5fzpy_describe_cd_values: NULL argument");
  h5fz_spec spec;
  int rc = h5fz_spec_from_cd_values(cd, n_cd, &spec, NULL);
  if (!rc) rc = h5fz_spec_format(&spec, canon, canon_cap);
  if (rc) return h5fz_py_keep(rc);
  if (dtype) *dtype = (int)spec.dtype;
  return H5FZ_OK;
}

int h5fzpy_spec_view_of_cd_values(const unsigned *cd, size_t n_cd, h5fzpy_spec_view *view)
{
  g_error[0] = '\0';
  if ((!cd && n_cd) || !view) return h5fz_py_fail(H5FZ_ERR_ARG, "h5fzpy_spec_view_of_cd_values: NULL argument");
  memset(view, 0, sizeof *view);
  h5fz_spec spec;
  int rc = h5fz_spec_from_cd_values(cd, n_cd, &spec, NULL);
  if (!rc) rc = h5fz_spec_validate(&spec);
  if (rc) return h5fz_py_keep(rc);
  /* the dataset part is set_local's, not the user's: leave it out */
  spec.dtype = H5FZ_DTYPE_UNKNOWN;
  spec.rank = 0;
  spec.has_fill = 0;
  spec.big_endian = 0;
  if ((rc = h5fz_spec_format(&spec, view->spec, sizeof view->spec))) return h5fz_py_keep(rc);
  view->mode = (int)spec.mode;
  view->bound = spec.bound;
  view->subchunk_bytes = spec.subchunk_bytes;
  size_t len = 0;
  for (uint32_t i = 1; i < spec.n_ops; i++) { /* ops[0] is the quantizer */
    const char *name = h5fz_op_name(spec.ops[i]);
    len += (size_t)snprintf(view->chain + len, sizeof view->chain - len, "%s%s", i > 1 ? " " : "", name ? name : "?");
    if (len >= sizeof view->chain) return h5fz_py_fail(H5FZ_ERR_ARG, "the chain's names need more than %zu bytes", sizeof view->chain);
  }
  return H5FZ_OK;
}

/* The dataset's spec from its pipeline words, and the batch geometry; the
 * spec must carry set_local's dataset part and g's chunk must be its chunk. */
static int prepare(const unsigned *cd, size_t n_cd, const h5fzpy_geom *in, h5fz_spec *spec, h5fz_array_geom *g)
{
  if (!cd || !in) return h5fz_py_fail(H5FZ_ERR_ARG, "NULL cd_values or geometry");
  if (in->rank < 1 || in->rank > H5FZ_ARRAY_MAX_RANK)
    return h5fz_py_fail(H5FZ_ERR_ARG, "rank %u: the array codec takes ranks 1..%d", in->rank, H5FZ_ARRAY_MAX_RANK);
  int rc = h5fz_spec_from_cd_values(cd, n_cd, spec, NULL);
  if (rc) return h5fz_py_keep(rc);
  if (spec->dtype == H5FZ_DTYPE_UNKNOWN)
    return h5fz_py_fail(H5FZ_ERR_SPEC, "the dataset's cd_values lack the words set_local adds (dtype, chunk dims): the "
                               "h5fz filter was not available when the dataset was created");
  /* the batches code native values as they are; a big-endian dataset's
   * containers would need the byte-order mark (the C dataset API sets it) */
  if (spec->big_endian)
    return h5fz_py_fail(H5FZ_ERR_UNSUPPORTED, "the dataset is big-endian: the fast path takes little-endian datasets; h5py's "
                                      "own reads and writes compress big-endian ones through the filter");
  memset(g, 0, sizeof *g);
  g->rank = in->rank;
  uint64_t chunk[H5FZ_ARRAY_MAX_RANK];
  for (uint32_t d = 0; d < in->rank; d++) {
    if (!in->chunk[d]) return h5fz_py_fail(H5FZ_ERR_ARG, "chunk dim %u is 0", d);
    g->dims[d] = in->dims[d];
    g->chunk[d] = chunk[d] = in->chunk[d];
  }
  uint32_t frank = 0, fdims[H5FZ_MAX_RANK];
  if ((rc = h5fz_chunk_dims_fold(in->rank, chunk, &frank, fdims))) return h5fz_py_keep(rc);
  if (spec->rank && (frank != spec->rank || memcmp(fdims, spec->dims, frank * sizeof fdims[0])))
    return h5fz_py_fail(H5FZ_ERR_SPEC, "the chunk dims given are not the ones the dataset's cd_values record");
  g->exact_fill = in->exact_fill;
  g->fill_bits = in->fill_bits;
  return H5FZ_OK;
}

static void copy_exec(const h5fz_array_exec *from, h5fzpy_exec *to)
{
  if (!to) return;
  memset(to, 0, sizeof *to);
  to->on_gpu = from->on_gpu;
  snprintf(to->kernel_class, sizeof to->kernel_class, "%s", from->kernel_class);
  to->plan_digest = from->plan_digest;
}

typedef struct {
  h5fzpy_sink sink;
  void *ctx;
} sink_ctx;

static int forward_chunk(void *ctx, const h5fz_encoded_chunk *c)
{
  const sink_ctx *s = ctx;
  h5fzpy_chunk out = {.index = c->index,
                      .container = c->container,
                      .bytes = c->bytes,
                      .abs_bound = c->info.abs_bound,
                      .n_outliers = c->info.n_outliers,
                      .stored_raw = c->info.stored_raw};
  return s->sink(s->ctx, &out);
}

int h5fzpy_encode(const unsigned *cd, size_t n_cd, const h5fzpy_geom *geom, const void *data, int on_device,
                  h5fzpy_sink sink, void *ctx, h5fzpy_exec *ex)
{
  g_error[0] = '\0';
  h5fz_spec spec;
  h5fz_array_geom g;
  if (!sink) return h5fz_py_fail(H5FZ_ERR_ARG, "h5fzpy_encode: NULL sink");
  int rc = prepare(cd, n_cd, geom, &spec, &g);
  if (rc) return rc;
  sink_ctx s = {sink, ctx};
  h5fz_array_exec e;
  memset(&e, 0, sizeof e);
  rc = h5fz_array_encode(&spec, &g, data, on_device ? 1 : 0, forward_chunk, &s, &e);
  /* a sink's own nonzero value is the caller's to explain */
  if (rc < 0 && !g_error[0]) h5fz_py_keep(rc);
  copy_exec(&e, ex);
  return rc;
}

typedef struct {
  h5fzpy_source source;
  void *ctx;
} source_ctx;

/* The codec frees what a source hands it: copy the caller's bytes into
 * malloc'd memory (compressed chunks, so a small copy). */
static int fetch_chunk(void *ctx, uint64_t index, void **container, size_t *bytes)
{
  const source_ctx *s = ctx;
  const void *p = NULL;
  size_t n = 0;
  *container = NULL;
  *bytes = 0;
  int rc = s->source(s->ctx, index, &p, &n);
  if (rc || n == 0) return rc;
  if (!p) return h5fz_py_fail(H5FZ_ERR_ARG, "the source gave %zu bytes at NULL for chunk %llu", n, (unsigned long long)index);
  void *copy = malloc(n);
  if (!copy) return h5fz_py_fail(H5FZ_ERR_NOMEM, "cannot allocate %zu bytes for chunk %llu", n, (unsigned long long)index);
  memcpy(copy, p, n);
  *container = copy;
  *bytes = n;
  return H5FZ_OK;
}

int h5fzpy_decode(const unsigned *cd, size_t n_cd, const h5fzpy_geom *geom, h5fzpy_source source, void *ctx, void *data,
                  int on_device, h5fzpy_exec *ex)
{
  g_error[0] = '\0';
  h5fz_spec spec;
  h5fz_array_geom g;
  if (!source) return h5fz_py_fail(H5FZ_ERR_ARG, "h5fzpy_decode: NULL source");
  int rc = prepare(cd, n_cd, geom, &spec, &g);
  if (rc) return rc;
  source_ctx s = {source, ctx};
  h5fz_array_exec e;
  memset(&e, 0, sizeof e);
  rc = h5fz_array_decode(&g, spec.dtype, &spec, geom->fill, fetch_chunk, &s, data, on_device ? 1 : 0, &e);
  if (rc < 0 && !g_error[0]) h5fz_py_keep(rc);
  copy_exec(&e, ex);
  return rc;
}

int h5fz_py_fail_arg(const char *why) { return h5fz_py_fail(H5FZ_ERR_ARG, "%s", why); }
