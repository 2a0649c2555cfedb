/*
 * cli_util.c - argument parsing and HDF5 helpers shared by the subcommands.
 */
#include "h5fz_cli.h"

#include <hdf5_hl.h>

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

char *h5fz_cli_one_line(char *s)
{
  char *w = s;
  int blank = 0;
  for (const char *r = s; *r; r++) {
    if (isspace((unsigned char)*r)) {
      blank = 1;
      continue;
    }
    /* "... 2026\n, name" reads better as "... 2026, name". */
    if (blank && w != s && *r != ',' && *r != ';') *w++ = ' ';
    blank = 0;
    *w++ = *r;
  }
  *w = '\0';
  return s;
}

void h5fz_cli_error(const char *cmd, const char *fmt, ...)
{
  va_list ap;
  char msg[2048];
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  /* One line, always: HDF5 messages embed newlines (a time string). */
  fprintf(stderr, "h5fz %s: %s\n", cmd, h5fz_cli_one_line(msg));
}

void h5fz_cli_spec_caution(const char *cmd, const h5fz_spec *spec)
{
  char text[320];
  if (h5fz_spec_caution(spec, text, sizeof text)) fprintf(stderr, "h5fz %s: warning: %s\n", cmd, text);
}

const char *h5fz_cli_byte_order(hid_t type)
{
  H5T_class_t cls = type >= 0 ? H5Tget_class(type) : H5T_NO_CLASS;
  if (cls != H5T_FLOAT && cls != H5T_INTEGER) return NULL;
  switch (H5Tget_order(type)) {
  case H5T_ORDER_LE: return "little-endian";
  case H5T_ORDER_BE: return "big-endian";
  case H5T_ORDER_VAX: return "VAX-order";
  case H5T_ORDER_MIXED: return "mixed-endian";
  default: return NULL;
  }
}

const char *h5fz_cli_type_name(hid_t type, char *buf, size_t len)
{
  size_t size = type >= 0 ? H5Tget_size(type) : 0;
  const char *order = h5fz_cli_byte_order(type);
  /* Little-endian is what h5fz takes and what nearly every file holds: it
   * goes unsaid. Any other order is part of the name ("float32
   * big-endian"); one byte has no order. */
  const char *suffix = size > 1 && order && strcmp(order, "little-endian") ? order : NULL;
  if (len == 0) return buf;
  switch (type >= 0 ? H5Tget_class(type) : H5T_NO_CLASS) {
  case H5T_FLOAT: snprintf(buf, len, "float%zu%s%s", 8 * size, suffix ? " " : "", suffix ? suffix : ""); break;
  case H5T_INTEGER:
    snprintf(buf, len, "%sint%zu%s%s", H5Tget_sign(type) == H5T_SGN_NONE ? "u" : "", 8 * size, suffix ? " " : "",
             suffix ? suffix : "");
    break;
  case H5T_STRING: snprintf(buf, len, "string"); break;
  case H5T_COMPOUND: snprintf(buf, len, "compound (%zu bytes)", size); break;
  case H5T_ENUM: snprintf(buf, len, "enum (%zu bytes)", size); break;
  case H5T_ARRAY: snprintf(buf, len, "array (%zu bytes)", size); break;
  case H5T_BITFIELD: snprintf(buf, len, "bitfield (%zu bytes)", size); break;
  case H5T_OPAQUE: snprintf(buf, len, "opaque (%zu bytes)", size); break;
  case H5T_VLEN: snprintf(buf, len, "variable-length"); break;
  case H5T_REFERENCE: snprintf(buf, len, "reference"); break;
  default: snprintf(buf, len, "unknown type"); break;
  }
  return buf;
}

int h5fz_cli_is_float_type(hid_t type)
{
  size_t size = H5Tget_size(type);
  return H5Tget_class(type) == H5T_FLOAT && (size == 4 || size == 8);
}

int h5fz_cli_same_file(const char *a, const char *b)
{
  struct stat sa, sb;
  char *ra, *rb;
  int same = 0;
  if (stat(a, &sa) == 0 && stat(b, &sb) == 0) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  /* b may not exist yet: compare the canonical paths of what exists. */
  ra = realpath(a, NULL);
  rb = realpath(b, NULL);
  if (ra && rb) same = !strcmp(ra, rb);
  free(ra);
  free(rb);
  return same;
}

int h5fz_cli_parse_dims(const char *text, hsize_t *dims, int max_rank, int *rank)
{
  const char *p = text;
  int r = 0;
  if (!text || !*text) return -1;
  for (;;) {
    char *end;
    unsigned long long v;
    /* strtoull would accept a sign or blanks; an extent is digits only. */
    if (*p < '0' || *p > '9') return -1;
    errno = 0;
    v = strtoull(p, &end, 10);
    if (errno || v == 0 || r >= max_rank) return -1;
    dims[r++] = (hsize_t)v;
    if (*end == '\0') break;
    if (*end != 'x' && *end != 'X' && *end != ',') return -1;
    p = end + 1;
  }
  *rank = r;
  return 0;
}

void h5fz_cli_format_dims(const hsize_t *dims, int rank, char *buf, size_t len)
{
  size_t used = 0;
  if (len == 0) return;
  buf[0] = '\0';
  for (int i = 0; i < rank && used < len; i++) {
    int n = snprintf(buf + used, len - used, "%s%llu", i ? "x" : "", (unsigned long long)dims[i]);
    if (n < 0) break;
    used += (size_t)n;
  }
}

int h5fz_cli_parse_double(const char *text, double *out)
{
  char *end;
  double v;
  if (!text || !*text) return -1;
  errno = 0;
  v = strtod(text, &end);
  if (errno || *end != '\0' || !isfinite(v)) return -1;
  *out = v;
  return 0;
}

int h5fz_cli_names_add(h5fz_cli_names *list, const char *name)
{
  char *copy;
  if (list->n == list->cap) {
    size_t cap = list->cap ? 2 * list->cap : 16;
    char **grown = realloc(list->names, cap * sizeof *grown);
    if (!grown) return -1;
    list->names = grown;
    list->cap = cap;
  }
  copy = malloc(strlen(name) + 1);
  if (!copy) return -1;
  strcpy(copy, name);
  list->names[list->n++] = copy;
  return 0;
}

void h5fz_cli_names_free(h5fz_cli_names *list)
{
  for (size_t i = 0; i < list->n; i++) free(list->names[i]);
  free(list->names);
  list->names = NULL;
  list->n = list->cap = 0;
}

static int is_float_dataset(hid_t obj)
{
  hid_t type;
  int yes;
  if (H5Iget_type(obj) != H5I_DATASET) return 0;
  type = H5Dget_type(obj);
  if (type < 0) return 0;
  yes = H5Tget_class(type) == H5T_FLOAT;
  H5Tclose(type);
  return yes;
}

typedef struct {
  h5fz_cli_names *list, *others;
  int failed;
} visit_state;

static herr_t visit_link(hid_t group, const char *name, const H5L_info_t *info, void *data)
{
  visit_state *st = data;
  hid_t obj;
  char path[4096];
  /* Soft and external links may dangle or leave the file; hard links reach
   * every object of the file. */
  if (info->type != H5L_TYPE_HARD) return 0;
  obj = H5Oopen(group, name, H5P_DEFAULT);
  if (obj < 0) return 0;
  h5fz_cli_names *to = is_float_dataset(obj) ? st->list : H5Iget_type(obj) == H5I_DATASET ? st->others : NULL;
  if (to) {
    snprintf(path, sizeof path, "/%s", name);
    if (h5fz_cli_names_add(to, path) < 0) {
      st->failed = 1;
      H5Oclose(obj);
      return -1;
    }
  }
  H5Oclose(obj);
  return 0;
}

int h5fz_cli_list_float_datasets(hid_t file, h5fz_cli_names *list, h5fz_cli_names *others)
{
  visit_state st = {list, others, 0};
  if (H5Lvisit(file, H5_INDEX_NAME, H5_ITER_INC, visit_link, &st) < 0 || st.failed) return -1;
  return 0;
}

int h5fz_cli_find_filter(hid_t dcpl, unsigned *flags, unsigned *cd, size_t cap, size_t *n_cd)
{
  int n = H5Pget_nfilters(dcpl);
  for (int i = 0; i < n; i++) {
    size_t n_words = cap;
    char name[64];
    unsigned config;
    H5Z_filter_t id = H5Pget_filter2(dcpl, (unsigned)i, flags, &n_words, cd, sizeof name, name, &config);
    if (id == H5FZ_FILTER_ID) {
      /* HDF5 reports the full count even when it exceeds cap (and fills
       * only cap words): so does *n_cd, for the caller to ask again. */
      *n_cd = n_words;
      return i;
    }
  }
  return -1;
}

/* The length (2..4) of the well-formed UTF-8 sequence of a non-ASCII
 * character at p (Unicode's table 3-7: no overlong forms, no surrogates,
 * nothing above U+10FFFF), or 0 when p does not start one. */
static size_t utf8_sequence_length(const unsigned char *p)
{
  unsigned char lo = 0x80, hi = 0xbf;
  size_t n;
  if (p[0] >= 0xc2 && p[0] <= 0xdf)
    n = 2;
  else if (p[0] >= 0xe0 && p[0] <= 0xef) {
    n = 3;
    if (p[0] == 0xe0) lo = 0xa0;
    if (p[0] == 0xed) hi = 0x9f;
  } else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
    n = 4;
    if (p[0] == 0xf0) lo = 0x90;
    if (p[0] == 0xf4) hi = 0x8f;
  } else
    return 0;
  if (p[1] < lo || p[1] > hi) return 0; /* also the terminating NUL */
  for (size_t i = 2; i < n; i++)
    if (p[i] < 0x80 || p[i] > 0xbf) return 0;
  return n;
}

void h5fz_cli_json_string(FILE *out, const char *s)
{
  fputc('"', out);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    size_t n;
    if (*p == '"' || *p == '\\')
      fprintf(out, "\\%c", *p);
    else if (*p < 0x20)
      fprintf(out, "\\u%04x", *p);
    else if (*p < 0x80)
      fputc(*p, out);
    else if ((n = utf8_sequence_length(p)) != 0) {
      fwrite(p, 1, n, out);
      p += n - 1;
    } else
      fputs("\\ufffd", out); /* not UTF-8 (an HDF5 name is any bytes): JSON must be */
  }
  fputc('"', out);
}

void h5fz_cli_json_number(FILE *out, double v)
{
  if (isfinite(v))
    fprintf(out, "%.17g", v);
  else
    fputs("null", out);
}

void h5fz_cli_quiet_hdf5(void) { H5Eset_auto2(H5E_DEFAULT, NULL, NULL); }

typedef struct {
  char *buf;
  size_t len;
  size_t used;
} reason_state;

static herr_t collect_reason(unsigned n, const H5E_error2_t *err, void *data)
{
  reason_state *st = data;
  int w;
  (void)n;
  if (!err->desc || !*err->desc || st->used + 1 >= st->len) return 0;
  w = snprintf(st->buf + st->used, st->len - st->used, "%s%s", st->used ? "; " : "", err->desc);
  if (w > 0) st->used += (size_t)w;
  if (st->used >= st->len) st->used = st->len - 1;
  return 0;
}

const char *h5fz_cli_hdf5_reason(char *buf, size_t len)
{
  reason_state st = {buf, len, 0};
  if (len == 0) return buf;
  buf[0] = '\0';
  /* H5E_WALK_UPWARD starts at the innermost frame: the library (or the
   * filter) function where the error began. */
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, collect_reason, &st);
  return h5fz_cli_one_line(buf);
}

void h5fz_cli_usage_hint(const char *cmd) { fprintf(stderr, "h5fz %s: see `h5fz %s --help`\n", cmd, cmd); }

void h5fz_cli_bad_option(const char *cmd, int c, char **argv)
{
  const char *arg = optind > 0 ? argv[optind - 1] : "";
  if (c == ':')
    h5fz_cli_error(cmd, "option '%s' needs a value", arg);
  else if (optopt && optopt != '?')
    h5fz_cli_error(cmd, "unknown option '-%c'", optopt);
  else
    h5fz_cli_error(cmd, "unknown option '%s'", arg);
}

/* ---- chunk walk ----------------------------------------------------------- */

/* The stored bytes of one chunk at a time, grown as needed. */
typedef struct {
  void *buf;
  size_t cap;
} chunk_buffer;

/* Read the stored bytes and filter mask of the chunk at c->offset (c->size
 * bytes) into b. Returns 0, or -1 with c->error set (why holds it). */
static int read_chunk(hid_t dset, h5fz_cli_chunk *c, chunk_buffer *b, char *why, size_t len)
{
  uint32_t filters = 0;
  size_t want = c->size ? (size_t)c->size : 1;
  if (!b->buf || b->cap < want) {
    void *grown = realloc(b->buf, want);
    if (!grown) {
      snprintf(why, len, "out of memory (a chunk of %llu bytes)", (unsigned long long)c->size);
      c->error = why;
      return -1;
    }
    b->buf = grown;
    b->cap = want;
  }
  if (H5Dread_chunk(dset, H5P_DEFAULT, c->offset, &filters, b->buf) < 0) {
    if (!h5fz_cli_hdf5_reason(why, len)[0]) snprintf(why, len, "cannot read the chunk");
    c->error = why;
    return -1;
  }
  c->filter_mask = filters;
  c->bytes = b->buf;
  return 0;
}

/* The grid's geometry, for both walks. */
typedef struct {
  int rank;
  hsize_t dims[H5S_MAX_RANK], chunk[H5S_MAX_RANK];
  int order[H5S_MAX_RANK];
  int swizzled;                     /* order[] is not the identity */
  hsize_t max_chunks[H5S_MAX_RANK]; /* chunks along the maximum extent (unlimited: 0) */
} grid_geom;

/* The grid in the order the chunk index lists chunks: row-major over the
 * scaled chunk coordinates for every index type (v1 and v2 B-trees compare
 * them in dimension order; fixed arrays, implicit and single-chunk indexes
 * are row-major), except an extensible array whose unlimited dimension is
 * not the first: it lists that dimension slowest ("swizzled"), the others
 * row-major. order[0] is the slowest dimension. */
static void index_order(hid_t dset, hid_t space, grid_geom *g)
{
  H5D_chunk_index_t type;
  hsize_t maxdims[H5S_MAX_RANK];
  int unlimited = -1, n_unlimited = 0;
  for (int d = 0; d < g->rank; d++) g->order[d] = d;
  if (H5Dget_chunk_index_type(dset, &type) < 0 || type != H5D_CHUNK_IDX_EARRAY) return;
  if (H5Sget_simple_extent_dims(space, NULL, maxdims) < 0) return;
  for (int d = 0; d < g->rank; d++) {
    if (maxdims[d] == H5S_UNLIMITED) {
      unlimited = d;
      n_unlimited++;
      g->max_chunks[d] = 0;
    } else {
      g->max_chunks[d] = (maxdims[d] + g->chunk[d] - 1) / g->chunk[d];
      if (g->max_chunks[d] == 0) return; /* a zero maximum extent: nothing to swizzle */
    }
  }
  if (n_unlimited != 1 || unlimited <= 0) return;
  g->order[0] = unlimited;
  for (int d = 0, k = 1; d < g->rank; d++)
    if (d != unlimited) g->order[k++] = d;
  g->swizzled = 1;
}

/* 1 when this HDF5 reports the offsets of the chunks of an extensible
 * array (one unlimited dimension, not the first) wrongly: HDF5 1.10 lists
 * such an index by its linear slot, numbered over the "swizzled" maximum
 * chunk grid (the unlimited dimension moved first), but H5Dget_chunk_info
 * (and, the same way round, H5Dget_chunk_info_by_coord) turns the slot
 * back into coordinates by counting over the unswizzled maximum grid, so
 * the offset names another chunk or none. Probed once, on a small
 * in-memory file: one chunk at [2,0] of a 3 x 2 dataset unlimited in its
 * second dimension, reported as [0,2] when the bug is there. */
static int swizzled_offsets(void)
{
  static int known = -1;
  hid_t fapl, file = -1, dcpl = -1, space = -1, mem = -1, dset = -1;
  hsize_t dims[2] = {3, 2}, maxdims[2] = {3, H5S_UNLIMITED}, one[2] = {1, 1};
  hsize_t start[2] = {2, 0}, off[2] = {0, 0}, size = 0;
  unsigned mask = 0;
  haddr_t addr;
  float v = 1.0f;
  if (known >= 0) return known;
  known = 0;
  fapl = H5Pcreate(H5P_FILE_ACCESS);
  if (fapl < 0 || H5Pset_fapl_core(fapl, 4096, 0) < 0 ||
      H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST) < 0)
    goto done;
  file = H5Fcreate("h5fz-swizzle-probe.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  dcpl = H5Pcreate(H5P_DATASET_CREATE);
  space = H5Screate_simple(2, dims, maxdims);
  mem = H5Screate_simple(2, one, NULL);
  if (file < 0 || dcpl < 0 || space < 0 || mem < 0 || H5Pset_chunk(dcpl, 2, one) < 0) goto done;
  dset = H5Dcreate2(file, "probe", H5T_NATIVE_FLOAT, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  if (dset < 0 || H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, one, NULL) < 0 ||
      H5Dwrite(dset, H5T_NATIVE_FLOAT, mem, space, H5P_DEFAULT, &v) < 0 || H5Sselect_all(space) < 0 ||
      H5Dget_chunk_info(dset, space, 0, off, &mask, &addr, &size) < 0)
    goto done;
  known = off[0] == 0 && off[1] == 2;
done:
  if (dset >= 0) H5Dclose(dset);
  if (mem >= 0) H5Sclose(mem);
  if (space >= 0) H5Sclose(space);
  if (dcpl >= 0) H5Pclose(dcpl);
  if (file >= 0) H5Fclose(file);
  if (fapl >= 0) H5Pclose(fapl);
  return known;
}

/* An offset as swizzled_offsets() describes it, back to the chunk's own:
 * its slot from the coordinates as reported (the unlimited dimension u
 * never wraps there, so the dimensions before it read 0), then the
 * coordinates from the slot over the swizzled grid (u slowest). */
static void unswizzle_offset(const grid_geom *g, hsize_t *off)
{
  int u = g->order[0];
  hsize_t slot = off[u] / g->chunk[u];
  for (int d = u + 1; d < g->rank; d++) slot = slot * g->max_chunks[d] + off[d] / g->chunk[d];
  for (int k = g->rank - 1; k >= 1; k--) {
    int d = g->order[k];
    off[d] = slot % g->max_chunks[d] * g->chunk[d];
    slot /= g->max_chunks[d];
  }
  off[u] = slot * g->chunk[u];
}

/* The old way, for sparse grids: H5Dget_chunk_info by index. Each call
 * walks the index up to the chunk, so n chunks cost n^2 / 2 steps. */
static int walk_by_index(hid_t dset, hid_t space, const grid_geom *g, hsize_t n, int want_bytes, h5fz_cli_chunk_fn fn,
                         void *data, chunk_buffer *b)
{
  for (hsize_t i = 0; i < n; i++) {
    h5fz_cli_chunk c;
    char why[400];
    haddr_t addr;
    unsigned mask = 0;
    hsize_t size = 0;
    int rc;
    memset(&c, 0, sizeof c);
    c.index = i;
    c.rank = g->rank;
    if (H5Dget_chunk_info(dset, space, i, c.offset, &mask, &addr, &size) < 0) {
      if (!h5fz_cli_hdf5_reason(why, sizeof why)[0]) snprintf(why, sizeof why, "cannot locate the chunk");
      memset(c.offset, 0, sizeof c.offset);
      c.error = why;
    } else {
      if (g->swizzled && swizzled_offsets()) unswizzle_offset(g, c.offset);
      c.size = size;
      c.filter_mask = mask;
      if (want_bytes == H5FZ_CLI_WALK_BYTES) read_chunk(dset, &c, b, why, sizeof why);
    }
    if ((rc = fn(&c, data)) != 0) return rc;
  }
  return 0;
}

int h5fz_cli_walk_chunks(hid_t dset, int want_bytes, h5fz_cli_chunk_fn fn, void *data, hsize_t *n_chunks)
{
  hid_t space = H5Dget_space(dset), dcpl = -1;
  hsize_t grid[H5S_MAX_RANK], scaled[H5S_MAX_RANK];
  hsize_t n = 0, found = 0;
  double cells = 1.0;
  int rc = 0;
  const char *walk;
  char lookup_failed[300] = "";
  grid_geom g;
  chunk_buffer b = {NULL, 0};

  memset(&g, 0, sizeof g);
  *n_chunks = 0;
  if (space < 0) return -1;
  g.rank = H5Sget_simple_extent_dims(space, g.dims, NULL);
  dcpl = H5Dget_create_plist(dset);
  if (g.rank < 0 || dcpl < 0 || H5Dget_num_chunks(dset, space, &n) < 0) {
    rc = -1;
    goto done;
  }
  *n_chunks = n;
  if (n == 0) goto done;
  if (g.rank < 1 || H5Pget_chunk(dcpl, g.rank, g.chunk) != g.rank) {
    g.rank = g.rank < 0 ? 0 : g.rank;
    rc = walk_by_index(dset, space, &g, n, want_bytes, fn, data, &b);
    goto done;
  }
  index_order(dset, space, &g);
  for (int d = 0; d < g.rank; d++) {
    grid[d] = g.chunk[d] ? (g.dims[d] + g.chunk[d] - 1) / g.chunk[d] : 0;
    cells *= (double)grid[d];
    scaled[d] = 0;
  }
  /* A grid lookup costs about 50 steps of an index walk: walk the grid
   * unless it is so sparse that n^2 / 2 steps are cheaper.
   * H5FZ_CHUNK_WALK=grid or =index forces one (tests compare the two). */
  walk = getenv("H5FZ_CHUNK_WALK");
  if (walk && *walk && strcmp(walk, "grid") && strcmp(walk, "index")) {
    static int warned; /* once a run, not once a dataset */
    if (!warned)
      fprintf(stderr, "h5fz: ignoring H5FZ_CHUNK_WALK=%s (want grid or index); choosing by the chunk count\n", walk);
    warned = 1;
    walk = NULL;
  }
  if (cells == 0.0 || (walk && !strcmp(walk, "index")) ||
      (!(walk && !strcmp(walk, "grid")) && cells > 4.0 * (double)n && cells > (double)n * (double)n / 100.0)) {
    rc = walk_by_index(dset, space, &g, n, want_bytes, fn, data, &b);
    goto done;
  }
  for (;;) {
    h5fz_cli_chunk c;
    char why[400];
    hsize_t size = 0;
    int k;
    memset(&c, 0, sizeof c);
    c.rank = g.rank;
    for (int d = 0; d < g.rank; d++) c.offset[d] = scaled[d] * g.chunk[d];
    if (H5Dget_chunk_storage_size(dset, c.offset, &size) < 0) {
      /* HDF5 1.10 fails here for a chunk that is not allocated ("chunk
       * storage is not allocated"); later versions give size 0. A lookup
       * that failed for another reason leaves a chunk unfound, which the
       * count below catches. */
      size = 0;
      if (!lookup_failed[0]) h5fz_cli_hdf5_reason(lookup_failed, sizeof lookup_failed);
    }
    if (size) {
      c.size = size;
      /* The filter mask comes with the bytes only. */
      if (want_bytes != H5FZ_CLI_WALK_LOCATE) read_chunk(dset, &c, &b, why, sizeof why);
    }
    if (c.size) {
      c.index = found++;
      if ((rc = fn(&c, data)) != 0 || found == n) break;
    }
    for (k = g.rank - 1; k >= 0; k--) {
      if (++scaled[g.order[k]] < grid[g.order[k]]) break;
      scaled[g.order[k]] = 0;
    }
    if (k < 0) break;
  }
  if (!rc && found < n) {
    /* H5Dget_num_chunks counted chunks the grid of the extent does not
     * hold: say so rather than show fewer chunks silently. */
    h5fz_cli_chunk c;
    char why[600];
    memset(&c, 0, sizeof c);
    c.index = found;
    c.rank = g.rank;
    snprintf(why, sizeof why,
             "the dataset counts %llu allocated chunks, but only %llu were found in its extent's "
             "chunk grid%s%s",
             (unsigned long long)n, (unsigned long long)found, lookup_failed[0] ? "; a lookup failed: " : "",
             lookup_failed);
    c.error = why;
    rc = fn(&c, data);
  }
done:
  free(b.buf);
  if (dcpl >= 0) H5Pclose(dcpl);
  H5Sclose(space);
  return rc;
}

int h5fz_cli_is_dimension_scale(hid_t dset)
{
  htri_t is;
  /* H5DSis_scale pushes an error for a dataset without a CLASS attribute
   * on some HDF5 versions: the answer is still "no" */
  H5E_BEGIN_TRY { is = H5DSis_scale(dset); }
  H5E_END_TRY;
  return is > 0;
}

int h5fz_cli_keep_error(char *err, size_t len, const char *fmt, ...)
{
  va_list ap;
  if (err[0]) return -1;
  va_start(ap, fmt);
  vsnprintf(err, len, fmt, ap);
  va_end(ap);
  return -1;
}

const char *h5fz_cli_hdf5_why(char *buf, size_t len)
{
  h5fz_cli_hdf5_reason(buf, len);
  if (!buf[0]) snprintf(buf, len, "HDF5 gave no reason");
  return buf;
}

void h5fz_cli_default_chunk(const hsize_t *dims, int rank, size_t elem, size_t target, hsize_t *chunk)
{
  hsize_t inner = elem;
  for (int i = rank - 1; i >= 0; i--) {
    if (inner * dims[i] <= target) {
      chunk[i] = dims[i];
      inner *= dims[i];
    } else {
      hsize_t fit = target / inner, pieces;
      if (fit == 0) fit = 1;
      pieces = (dims[i] + fit - 1) / fit;
      chunk[i] = (dims[i] + pieces - 1) / pieces;
      for (int j = i - 1; j >= 0; j--) chunk[j] = 1;
      return;
    }
  }
}

char *h5fz_cli_join_words(int argc, char **argv, int first)
{
  size_t len = 1;
  char *text;
  for (int i = first; i < argc; i++) len += strlen(argv[i]) + 1;
  text = malloc(len);
  if (!text) return NULL;
  text[0] = '\0';
  for (int i = first; i < argc; i++) {
    if (i > first) strcat(text, " ");
    strcat(text, argv[i]);
  }
  return text;
}

void h5fz_cli_reclaim(hid_t mtype, hid_t space, void *buf)
{
#if H5_VERSION_GE(1, 12, 0)
  H5Treclaim(mtype, space, H5P_DEFAULT, buf);
#else
  H5Dvlen_reclaim(mtype, space, H5P_DEFAULT, buf);
#endif
}
