/*
 * compress_copy.c - copy an HDF5 file, compressing its float datasets
 * (compress_copy.h says what is copied how).
 */
#include "compress_copy.h"
#include "compress_missing.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_space.h"
#include "compress_attrs.h"
#include "compress_scales.h"
#include "compress_vlen.h"

/* The failure message goes to the state's err (the first one is kept);
 * WHY() is HDF5's reason, into a local buffer `why`. */
#define FAIL(state, ...) h5fz_cli_keep_error((state)->err, (state)->err_len, __VA_ARGS__)
#define WHY() h5fz_cli_hdf5_why(why, sizeof why)

/* An object reached by more than one hard link: where its copy is. */
typedef struct {
  unsigned char key[16]; /* address (HDF5 1.10) or token (1.12+) */
  char *path;
} seen_object;

typedef struct {
  hid_t in, out;
  const h5fz_compress_options *o;
  h5fz_compress_items *items;
  seen_object *seen;
  size_t n_seen, cap_seen;
  h5fz_cli_names with_scales; /* datasets whose DIMENSION_LIST is to be rebuilt */
  h5fz_cli_names scales;      /* dimension scales (REFERENCE_LIST rebuilt) */
  size_t n_compressed;
  char *err;
  size_t err_len;
} copy_state;

void h5fz_compress_items_free(h5fz_compress_items *list)
{
  for (size_t i = 0; i < list->n; i++) free(list->items[i].path);
  free(list->items);
  list->items = NULL;
  list->n = list->cap = 0;
}

static h5fz_compress_item *add_item(copy_state *st, const char *path)
{
  h5fz_compress_items *l = st->items;
  h5fz_compress_item *it;
  if (l->n == l->cap) {
    size_t cap = l->cap ? 2 * l->cap : 16;
    h5fz_compress_item *grown = realloc(l->items, cap * sizeof *grown);
    if (!grown) return NULL;
    l->items = grown;
    l->cap = cap;
  }
  it = &l->items[l->n];
  memset(it, 0, sizeof *it);
  it->path = strdup(path);
  if (!it->path) return NULL;
  l->n++;
  return it;
}

/* 1 if path is one of names, or lies below one of them (a group). */
static int path_matches(const h5fz_cli_names *names, const char *path)
{
  for (size_t i = 0; names && i < names->n; i++) {
    const char *p = names->names[i];
    size_t len = strlen(p);
    while (len > 1 && p[len - 1] == '/') len--;
    if (!strncmp(path, p, len) && (path[len] == '\0' || path[len] == '/' || (len == 1 && p[0] == '/'))) return 1;
  }
  return 0;
}

/* ---- object identity (hard links) ------------------------------------- */

static int object_key(hid_t loc, const char *name, unsigned char key[16], unsigned *rc)
{
  memset(key, 0, 16);
#if H5_VERSION_GE(1, 12, 0)
  H5O_info2_t info;
  if (H5Oget_info_by_name3(loc, name, &info, H5O_INFO_BASIC, H5P_DEFAULT) < 0) return -1;
  memcpy(key, &info.token, sizeof info.token < 16 ? sizeof info.token : 16);
#else
  H5O_info_t info;
  if (H5Oget_info_by_name2(loc, name, &info, H5O_INFO_BASIC, H5P_DEFAULT) < 0) return -1;
  memcpy(key, &info.addr, sizeof info.addr);
#endif
  *rc = info.rc;
  return 0;
}

static const char *seen_path(const copy_state *st, const unsigned char key[16])
{
  for (size_t i = 0; i < st->n_seen; i++)
    if (!memcmp(st->seen[i].key, key, 16)) return st->seen[i].path;
  return NULL;
}

static int remember(copy_state *st, const unsigned char key[16], const char *path)
{
  if (st->n_seen == st->cap_seen) {
    size_t cap = st->cap_seen ? 2 * st->cap_seen : 16;
    seen_object *grown = realloc(st->seen, cap * sizeof *grown);
    if (!grown) return -1;
    st->seen = grown;
    st->cap_seen = cap;
  }
  memcpy(st->seen[st->n_seen].key, key, 16);
  st->seen[st->n_seen].path = strdup(path);
  if (!st->seen[st->n_seen].path) return -1;
  st->n_seen++;
  return 0;
}

/* ---- datasets -------------------------------------------------------------- */

/* The creation properties of the compressed copy: the original's (fill
 * value and time, allocation time, attribute order), chunked, h5fz as the
 * only filter, its missing-value marker kept exact. Returns the list, or
 * -1 with *why set. */
static hid_t compressed_dcpl(copy_state *st, hid_t dset, const char *path, hid_t space, size_t elem, hsize_t *chunk,
                             int *rank, const char **why)
{
  hid_t dcpl = H5Dget_create_plist(dset);
  hsize_t dims[H5S_MAX_RANK];
  *rank = H5Sget_simple_extent_ndims(space);
  *why = NULL;
  if (dcpl < 0 || *rank < 1 || H5Sget_simple_extent_dims(space, dims, NULL) < 0) {
    *why = "cannot read its creation properties or shape";
    if (dcpl >= 0) H5Pclose(dcpl);
    return -1;
  }
  if (H5Pget_external_count(dcpl) > 0) {
    *why = "its data lives in external files (H5Pset_external)";
    H5Pclose(dcpl);
    return -1;
  }
  if (H5Pget_layout(dcpl) == H5D_CHUNKED) {
    if (H5Pget_chunk(dcpl, *rank, chunk) != *rank) {
      *why = "cannot read its chunk shape";
      H5Pclose(dcpl);
      return -1;
    }
  } else {
    h5fz_cli_default_chunk(dims, *rank, elem, H5FZ_COMPRESS_CHUNK_BYTES, chunk);
  }
  /* the old pipeline (deflate, shuffle, ...) goes: h5fz takes the floats
   * themselves, and refuses any filter before it */
  if (H5Pget_nfilters(dcpl) > 0 && H5Premove_filter(dcpl, H5Z_FILTER_ALL) < 0) {
    *why = "cannot remove its filters";
    H5Pclose(dcpl);
    return -1;
  }
  /* the spec's words, with the variable's missing-value marker (netCDF
   * _FillValue / missing_value) kept exact: compress_missing.h */
  unsigned cd[H5FZ_CD_USER_MAX];
  size_t n_cd = 0;
  if (h5fz_compress_missing_cd(dset, dcpl, &st->o->spec, path, cd, H5FZ_CD_USER_MAX, &n_cd) < 0 ||
      H5Pset_chunk(dcpl, *rank, chunk) < 0 || H5Pset_filter(dcpl, H5FZ_FILTER_ID, H5Z_FLAG_MANDATORY, n_cd, cd) < 0) {
    *why = "cannot set the chunking and the h5fz filter";
    H5Pclose(dcpl);
    return -1;
  }
  return dcpl;
}

static void progress(copy_state *st, const char *path, double fraction)
{
  if (!st->o->progress) return;
  int width = 30, done = (int)(fraction * width + 0.5);
  fprintf(stderr, "\r\033[K[");
  for (int i = 0; i < width; i++) fputc(i < done ? '#' : '.', stderr);
  fprintf(stderr, "] %3.0f%% %zu compressed  %.60s", fraction * 100.0, st->n_compressed, path);
  fflush(stderr);
}

/* Data from src to dst, one slab of chunk[0] rows of the slowest dimension
 * at a time, in the memory type native to the dataset's type (HDF5
 * converts byte order on the way). */
static int copy_data(copy_state *st, hid_t src, hid_t dst, hid_t space, const hsize_t *chunk, int rank,
                     const char *path)
{
  hsize_t dims[H5S_MAX_RANK], start[H5S_MAX_RANK] = {0}, count[H5S_MAX_RANK];
  hid_t ftype = H5Dget_type(src), mtype = ftype < 0 ? -1 : H5Tget_native_type(ftype, H5T_DIR_DEFAULT);
  size_t row = 1, elem = mtype < 0 ? 0 : H5Tget_size(mtype);
  void *buf = NULL;
  int rc = -1;
  char why[400];
  H5Sget_simple_extent_dims(space, dims, NULL);
  for (int i = 1; i < rank; i++) row *= dims[i];
  size_t slab_bytes = (size_t)chunk[0] * row * elem;
  if (mtype < 0 || !(buf = malloc(slab_bytes + 1))) {
    FAIL(st, "%s: out of memory for a slab of %llu elements", path, (unsigned long long)(chunk[0] * row));
    goto done;
  }
  for (int i = 1; i < rank; i++) count[i] = dims[i];
  for (hsize_t z = 0; z < dims[0]; z += chunk[0]) {
    hid_t file_space = H5Scopy(space), mem_space;
    int bad;
    start[0] = z;
    count[0] = dims[0] - z < chunk[0] ? dims[0] - z : chunk[0];
    mem_space = H5Screate_simple(rank, count, NULL);
    bad = file_space < 0 || mem_space < 0 ||
          H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start, NULL, count, NULL) < 0;
    if (!bad && H5Dread(src, mtype, mem_space, file_space, H5P_DEFAULT, buf) < 0) {
      FAIL(st, "%s: cannot read rows %llu-%llu of the input: %s", path, (unsigned long long)z,
           (unsigned long long)(z + count[0] - 1), WHY());
      bad = 1;
    } else if (!bad && H5Dwrite(dst, mtype, mem_space, file_space, H5P_DEFAULT, buf) < 0) {
      FAIL(st, "%s: the h5fz filter failed on rows %llu-%llu: %s", path, (unsigned long long)z,
           (unsigned long long)(z + count[0] - 1), WHY());
      bad = 1;
    }
    if (mem_space >= 0) H5Sclose(mem_space);
    if (file_space >= 0) H5Sclose(file_space);
    if (bad) goto done;
    progress(st, path, (double)(z + count[0]) / (double)dims[0]);
  }
  rc = 0;
done:
  free(buf);
  H5FZ_CLI_CLOSE(mtype, ftype);
  return rc;
}

static int is_virtual(hid_t dset)
{
  hid_t dcpl = H5Dget_create_plist(dset);
  int yes = dcpl >= 0 && H5Pget_layout(dcpl) == H5D_VIRTUAL;
  if (dcpl >= 0) H5Pclose(dcpl);
  return yes;
}

/* Why a dataset is copied unchanged rather than compressed (NULL: compress). */
static const char *copy_reason(copy_state *st, hid_t dset, const char *path, hid_t type, hid_t space)
{
  const h5fz_compress_options *o = st->o;
  int named = path_matches(o->only, path);
  if (path_matches(o->exclude, path)) return "excluded (--exclude)";
  if (o->only && o->only->n && !named) return "not named by --only";
  if (H5Tget_class(type) != H5T_FLOAT) return "not floating point";
  if (is_virtual(dset)) return "virtual dataset (its sources are copied where they are in this file)";
  const char *small = h5fz_cli_space_unfiltered_reason(space);
  if (small) return small;
  if (!named && h5fz_cli_is_dimension_scale(dset))
    return "dimension scale (netCDF coordinate): kept exact; name it with --only to compress it";
  return NULL;
}

/* The type of a compressed copy: the copy of the input's committed
 * datatype when it is one and was copied already, else a transient copy
 * (a committed type of the input cannot be used in the output). */
static hid_t output_type(copy_state *st, hid_t type)
{
  char name[4096];
  if (H5Tcommitted(type) > 0 && H5Iget_name(type, name, sizeof name) > 0) {
    hid_t t;
    H5E_BEGIN_TRY { t = H5Topen2(st->out, name, H5P_DEFAULT); }
    H5E_END_TRY;
    if (t >= 0) return t;
  }
  return H5Tcopy(type);
}

static int copy_unchanged(copy_state *st, hid_t from, const char *name, hid_t to, const char *path)
{
  char why[400];
  hid_t ocpypl = H5Pcreate(H5P_OBJECT_COPY);
  herr_t copied;
  /* a dataset of a committed datatype uses the copy of that datatype (when
   * it was copied already) instead of an anonymous second one */
  if (ocpypl >= 0) H5Pset_copy_object(ocpypl, H5O_COPY_MERGE_COMMITTED_DTYPE_FLAG);
  copied = H5Ocopy(from, name, to, name, ocpypl >= 0 ? ocpypl : H5P_DEFAULT, H5P_DEFAULT);
  if (ocpypl >= 0) H5Pclose(ocpypl);
  if (copied < 0) return FAIL(st, "%s: cannot copy: %s", path, WHY());
  return 0;
}

/* Record datasets that take part in dimension scales, for attach_scales. */
static int note_scales(copy_state *st, hid_t dset, const char *path)
{
  htri_t has_list = H5Aexists(dset, "DIMENSION_LIST");
  if (has_list > 0 && h5fz_cli_names_add(&st->with_scales, path) < 0) return -1;
  if (h5fz_cli_is_dimension_scale(dset) && h5fz_cli_names_add(&st->scales, path) < 0) return -1;
  return 0;
}

typedef struct {
  int rank;
  hsize_t dims[H5S_MAX_RANK];
  char lost[600];
} index_check;

/* A chunk the walk could not locate, or (walked by index, as sparse grids
 * are) one whose offset lies outside the extent. */
static int note_lost_chunk(const h5fz_cli_chunk *c, void *data)
{
  index_check *k = data;
  if (c->error) {
    snprintf(k->lost, sizeof k->lost, "%s", c->error);
    return 1;
  }
  for (int d = 0; d < k->rank && d < c->rank; d++)
    if (c->offset[d] >= k->dims[d]) {
      snprintf(k->lost, sizeof k->lost, "the index lists chunk %llu at offset %llu in dim %d, beyond the extent %llu",
               (unsigned long long)c->index, (unsigned long long)c->offset[d], d, (unsigned long long)k->dims[d]);
      return 1;
    }
  return 0;
}

/* A chunked input whose chunk index lists chunks that its extent's grid
 * does not hold (a damaged index: HDF5 reads such a chunk as the fill
 * value, silently) fails here, before anything is copied: the copy would
 * store fill values where the file has data, and the check after the
 * copy, which reads the input the same way, would pass. One walk of the
 * index (h5fz_cli_walk_chunks, near-linear; no chunk is read). */
static int check_chunk_index(copy_state *st, hid_t dset, const char *path)
{
  hid_t dcpl = H5Dget_create_plist(dset);
  int chunked = dcpl >= 0 && H5Pget_layout(dcpl) == H5D_CHUNKED;
  if (dcpl >= 0) H5Pclose(dcpl);
  if (!chunked) return 0;
  index_check k;
  memset(&k, 0, sizeof k);
  hid_t space = H5Dget_space(dset);
  k.rank = space < 0 ? -1 : H5Sget_simple_extent_dims(space, k.dims, NULL);
  if (space >= 0) H5Sclose(space);
  if (k.rank < 0) return FAIL(st, "%s: cannot read its shape: %s", path, h5fz_cli_hdf5_reason(k.lost, sizeof k.lost));
  hsize_t n = 0;
  if (h5fz_cli_walk_chunks(dset, H5FZ_CLI_WALK_LOCATE, note_lost_chunk, &k, &n) < 0)
    return FAIL(st, "%s: cannot list its chunks: %s", path, h5fz_cli_hdf5_reason(k.lost, sizeof k.lost));
  if (k.lost[0])
    return FAIL(st,
                "%s: its chunk index is damaged (%s): a copy would hold fill values in place of data "
                "(h5fz inspect shows the chunks)",
                path, k.lost);
  return 0;
}

static int copy_dataset(copy_state *st, hid_t from, const char *name, hid_t to, const char *path, hid_t lcpl)
{
  hid_t dset = H5Dopen2(from, name, H5P_DEFAULT), type = -1, space = -1, dcpl = -1, out = -1;
  hid_t ftype = -1;
  h5fz_compress_item *it = add_item(st, path);
  const char *skip, *bad_props;
  hsize_t chunk[H5S_MAX_RANK];
  hssize_t n;
  int rank = 0, rc = -1;
  char why[400];
  if (!it) return FAIL(st, "out of memory");
  if (dset < 0) return FAIL(st, "%s: cannot open: %s", path, WHY());
  type = H5Dget_type(dset);
  space = H5Dget_space(dset);
  n = space < 0 ? -1 : H5Sget_simple_extent_npoints(space);
  if (type < 0 || space < 0 || n < 0) {
    FAIL(st, "%s: cannot read its type or shape: %s", path, WHY());
    goto done;
  }
  h5fz_cli_type_name(type, it->dtype, sizeof it->dtype);
  h5fz_cli_space_shape(space, it->shape, sizeof it->shape);
  it->elements = (uint64_t)n;
  it->raw_bytes = (uint64_t)n * H5Tget_size(type);
  if (note_scales(st, dset, path) < 0) {
    FAIL(st, "out of memory");
    goto done;
  }
  if (H5Tdetect_class(type, H5T_REFERENCE) > 0) {
    FAIL(st, "%s: holds object references, which h5fz compress cannot copy between files", path);
    goto done;
  }
  skip = copy_reason(st, dset, path, type, space);
  if (skip && h5fz_compress_has_variable_data(type) && !is_virtual(dset)) {
    /* not H5Ocopy: it leaves a variable-length fill value pointing into
     * the input (compress_vlen.h) */
    snprintf(it->why, sizeof it->why, "%s", skip);
    ftype = output_type(st, type);
    if (h5fz_compress_copy_by_value(dset, to, name, ftype, lcpl, path, &out, st->err, st->err_len) == 0 &&
        h5fz_compress_copy_attributes(dset, out, path, st->err, st->err_len) == 0)
      rc = 0;
    goto done;
  }
  if (skip) {
    snprintf(it->why, sizeof it->why, "%s", skip);
    rc = copy_unchanged(st, from, name, to, path);
    goto done;
  }
  dcpl = compressed_dcpl(st, dset, path, space, H5Tget_size(type), chunk, &rank, &bad_props);
  if (dcpl < 0) {
    FAIL(st, "%s: %s", path, bad_props);
    goto done;
  }
  ftype = output_type(st, type);
  out = H5Dcreate2(to, name, ftype, space, lcpl, dcpl, H5P_DEFAULT);
  if (out < 0) {
    /* the filter's can_apply/set_local refused it: its reason is on the
     * stack, innermost first; HDF5's own lines after it add nothing */
    h5fz_cli_hdf5_filter_reason(why, sizeof why); /* the filter's entry alone: its reason may hold "; " */
    if (!why[0]) WHY();
    if (!st->o->skip_refused) {
      FAIL(st,
           "%s (%s %s): the h5fz filter refused it: %s (--skip-refused copies such datasets "
           "unchanged)",
           path, it->dtype, it->shape, why);
      goto done;
    }
    snprintf(it->why, sizeof it->why, "REFUSED by the filter, copied unchanged (--skip-refused): %s", why);
    rc = copy_unchanged(st, from, name, to, path);
    goto done;
  }
  it->compressed = 1;
  st->n_compressed++;
  if (check_chunk_index(st, dset, path) < 0 || copy_data(st, dset, out, space, chunk, rank, path) < 0 ||
      h5fz_compress_copy_attributes(dset, out, path, st->err, st->err_len) < 0)
    goto done;
  rc = 0;
done:
  if (out >= 0 && H5Dclose(out) < 0 && rc == 0)
    rc = FAIL(st, "%s: the h5fz filter failed while the last chunks were written: %s", path, WHY());
  H5FZ_CLI_CLOSE(ftype, dcpl, space, type, dset);
  return rc;
}

/* ---- groups and links ------------------------------------------------------ */

static int copy_group_members(copy_state *st, hid_t from, hid_t to, const char *path);

static hid_t link_create_plist(H5T_cset_t cset)
{
  hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
  if (lcpl >= 0) H5Pset_char_encoding(lcpl, cset);
  return lcpl;
}

static int copy_group(copy_state *st, hid_t from, const char *name, hid_t to, const char *path, hid_t lcpl)
{
  hid_t g = H5Gopen2(from, name, H5P_DEFAULT), gcpl = -1, out = -1;
  int rc = -1;
  char why[400];
  if (g < 0) return FAIL(st, "%s: cannot open the group: %s", path, WHY());
  gcpl = H5Gget_create_plist(g);
  out = gcpl < 0 ? -1 : H5Gcreate2(to, name, lcpl, gcpl, H5P_DEFAULT);
  if (out < 0) {
    FAIL(st, "%s: cannot create the group: %s", path, WHY());
  } else if (h5fz_compress_copy_attributes(g, out, path, st->err, st->err_len) == 0 &&
             copy_group_members(st, g, out, path) == 0) {
    rc = 0;
  }
  if (out >= 0) H5Gclose(out);
  if (gcpl >= 0) H5Pclose(gcpl);
  H5Gclose(g);
  return rc;
}

typedef struct {
  copy_state *st;
  hid_t to;
  const char *path;
} member_walk;

static int copy_link(copy_state *st, hid_t from, const char *name, const H5L_info_t *info, hid_t to, const char *path)
{
  hid_t lcpl = link_create_plist(info->cset);
  char why[400];
  int rc = -1;
  if (lcpl < 0) return FAIL(st, "out of memory");
  if (info->type == H5L_TYPE_SOFT || info->type == H5L_TYPE_EXTERNAL) {
    size_t len = info->u.val_size;
    char *val = malloc(len + 1);
    const char *file = NULL, *obj = NULL;
    unsigned flags;
    if (!val || H5Lget_val(from, name, val, len + 1, H5P_DEFAULT) < 0) {
      FAIL(st, "%s: cannot read the link: %s", path, WHY());
    } else if (info->type == H5L_TYPE_SOFT) {
      if (H5Lcreate_soft(val, to, name, lcpl, H5P_DEFAULT) >= 0)
        rc = 0;
      else
        FAIL(st, "%s: cannot create the soft link: %s", path, WHY());
    } else if (H5Lunpack_elink_val(val, len, &flags, &file, &obj) < 0 ||
               H5Lcreate_external(file, obj, to, name, lcpl, H5P_DEFAULT) < 0) {
      FAIL(st, "%s: cannot copy the external link: %s", path, WHY());
    } else {
      rc = 0;
    }
    free(val);
  } else if (info->type == H5L_TYPE_HARD) {
    unsigned char key[16];
    unsigned refs = 1;
    const char *first;
    H5O_type_t otype;
    hid_t obj;
    if (object_key(from, name, key, &refs) < 0) {
      FAIL(st, "%s: cannot read the object: %s", path, WHY());
    } else if ((first = seen_path(st, key)) != NULL) {
      /* a second name of an object already copied */
      if (H5Lcreate_hard(st->out, first, to, name, lcpl, H5P_DEFAULT) >= 0)
        rc = 0;
      else
        FAIL(st, "%s: cannot link it to %s: %s", path, first, WHY());
    } else if ((obj = H5Oopen(from, name, H5P_DEFAULT)) < 0) {
      FAIL(st, "%s: cannot open: %s", path, WHY());
    } else {
      H5I_type_t kind = H5Iget_type(obj);
      H5Oclose(obj);
      otype = kind == H5I_GROUP ? H5O_TYPE_GROUP : kind == H5I_DATASET ? H5O_TYPE_DATASET : H5O_TYPE_NAMED_DATATYPE;
      if (refs > 1 && remember(st, key, path) < 0)
        FAIL(st, "out of memory");
      else if (otype == H5O_TYPE_GROUP)
        rc = copy_group(st, from, name, to, path, lcpl);
      else if (otype == H5O_TYPE_DATASET)
        rc = copy_dataset(st, from, name, to, path, lcpl);
      else
        rc = copy_unchanged(st, from, name, to, path);
    }
  } else {
    FAIL(st, "%s: a user-defined link (type %d), which h5fz compress cannot copy", path, (int)info->type);
  }
  H5Pclose(lcpl);
  return rc;
}

static herr_t copy_member(hid_t group, const char *name, const H5L_info_t *info, void *data)
{
  member_walk *w = data;
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", strcmp(w->path, "/") ? w->path : "", name);
  return copy_link(w->st, group, name, info, w->to, path) < 0 ? -1 : 0;
}

/* Every link of group from into group to, in creation order where the
 * group tracks it (netCDF-4 numbers variables in that order). */
static int copy_group_members(copy_state *st, hid_t from, hid_t to, const char *path)
{
  hid_t gcpl = H5Gget_create_plist(from);
  unsigned flags = 0;
  hsize_t idx = 0;
  member_walk w = {st, to, path};
  if (gcpl >= 0) {
    if (H5Pget_link_creation_order(gcpl, &flags) < 0) flags = 0;
    H5Pclose(gcpl);
  }
  H5_index_t order = (flags & H5P_CRT_ORDER_TRACKED) ? H5_INDEX_CRT_ORDER : H5_INDEX_NAME;
  if (H5Literate(from, order, H5_ITER_INC, &idx, copy_member, &w) < 0) {
    char why[400];
    return FAIL(st, "%s: cannot list the group: %s", path, WHY());
  }
  return 0;
}

/* ---- the whole file ------------------------------------------------------------ */

int h5fz_compress_copy(hid_t in, hid_t out, const h5fz_compress_options *o, h5fz_compress_items *items, char *err,
                       size_t err_len)
{
  copy_state st;
  hid_t in_root, out_root;
  int rc = -1;
  memset(&st, 0, sizeof st);
  st.in = in;
  st.out = out;
  st.o = o;
  st.items = items;
  st.err = err;
  st.err_len = err_len;
  err[0] = '\0';
  in_root = H5Gopen2(in, "/", H5P_DEFAULT);
  out_root = H5Gopen2(out, "/", H5P_DEFAULT);
  if (in_root < 0 || out_root < 0) {
    FAIL(&st, "cannot open the root groups");
  } else if (h5fz_compress_copy_attributes(in_root, out_root, "/", err, err_len) == 0 &&
             copy_group_members(&st, in_root, out_root, "/") == 0 &&
             h5fz_compress_attach_scales(in, out, &st.with_scales, &st.scales, err, err_len) == 0) {
    rc = 0;
  }
  if (o->progress) fprintf(stderr, "\r\033[K");
  if (in_root >= 0) H5Gclose(in_root);
  if (out_root >= 0) H5Gclose(out_root);
  for (size_t i = 0; i < st.n_seen; i++) free(st.seen[i].path);
  free(st.seen);
  h5fz_cli_names_free(&st.with_scales);
  h5fz_cli_names_free(&st.scales);
  return rc;
}
