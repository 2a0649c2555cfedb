/*
 * cmd_inspect.c - `h5fz inspect FILE [DATASET]`: the filter parameters of a
 * dataset, per stored chunk what the h5fz container says about it (stored
 * raw or coded), and the h5fz_* attributes of the dataset API.
 * Reads the stored bytes with H5Dread_chunk, so nothing is decoded and the
 * plugin need not be loadable.
 */
#include <getopt.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "h5fz.h"
#include "cli_input.h"
#include "cli_space.h"
#include "h5fz_cli.h"

static const char *const cmd = "inspect";

static void help(FILE *out) { (void)h5fz_cli_print_help(out, cmd, NULL); }

typedef struct {
  int json, summary;
} inspect_options;

typedef struct {
  uint64_t chunks, stored, input, outliers, raw_sub, sub, raw_chunks, errors, unfiltered, not_h5fz;
  uint64_t readable_stored; /* stored bytes of the chunks counted in input: the chunk ratio's divisor */
  uint64_t later_filter;    /* chunks coded by a filter after h5fz (not decoded here) */
} totals;

static void print_offset(const hsize_t *off, int rank)
{
  char buf[256];
  h5fz_cli_format_dims(off, rank, buf, sizeof buf);
  /* Offsets may be 0, which format_dims prints fine; separators as commas
   * read better for coordinates. */
  for (char *p = buf; *p; p++)
    if (*p == 'x') *p = ',';
  if (rank == 0) strcpy(buf, "0");
  printf("[%s]", buf);
}

/* The op chain of a chunk header as names joined by sep ("quant delta ..."). */
static void format_chain(const h5fz_chunk_info *info, const char *sep, char *buf, size_t len)
{
  size_t used = 0;
  buf[0] = '\0';
  for (uint32_t i = 0; i < info->n_ops && i < H5FZ_MAX_OPS && used < len; i++) {
    const char *name = h5fz_op_name(info->ops[i]);
    char unknown[32];
    int n;
    if (!name) {
      snprintf(unknown, sizeof unknown, "op%u", (unsigned)info->ops[i]);
      name = unknown;
    }
    n = snprintf(buf + used, len - used, "%s%s", i ? sep : "", name);
    if (n < 0) break;
    used += (size_t)n;
  }
}

/* Filters after h5fz in the pipeline: their bytes wrap the container. */
#define MAX_LATER 16
typedef struct {
  int n;
  int pos[MAX_LATER]; /* position in the pipeline */
  H5Z_filter_t id[MAX_LATER];
  char name[MAX_LATER][48];
} later_filters;

/* What inspect_chunk needs besides the chunk. */
typedef struct {
  const inspect_options *o;
  int filter_pos;
  const later_filters *later;
  totals *t;
  uint64_t want_bytes;   /* bytes of one of the dataset's chunks (0: unknown) */
  h5fz_dtype want_dtype; /* its element type */
  int have_spec;         /* spec: the dataset's (cd_values), chunk shape from its chunk dims */
  h5fz_spec spec;
} chunk_walk;

static void find_later_filters(hid_t dcpl, int pos, later_filters *l)
{
  int n = pos >= 0 ? H5Pget_nfilters(dcpl) : 0;
  l->n = 0;
  for (int i = pos + 1; i < n && l->n < MAX_LATER; i++) {
    unsigned flags, config;
    size_t n_cd = 0;
    char name[48] = "";
    H5Z_filter_t id = H5Pget_filter2(dcpl, (unsigned)i, &flags, &n_cd, NULL, sizeof name, name, &config);
    if (id < 0) continue;
    l->pos[l->n] = i;
    l->id[l->n] = id;
    snprintf(l->name[l->n], sizeof l->name[l->n], "%s", name[0] ? name : "?");
    l->n++;
  }
}

/* How much of the chunk is the container, given the filters after h5fz
 * that coded it (mask bit clear): Fletcher32 only appends a 4-byte
 * checksum, which is cut off; any other filter changes the bytes, which
 * inspect does not decode: then *other names it and -1 is returned. */
static long long container_bytes(const h5fz_cli_chunk *c, const later_filters *l, const char **other)
{
  long long size = (long long)c->size;
  for (int k = 0; k < l->n; k++) {
    if ((c->filter_mask >> l->pos[k]) & 1u) continue; /* skipped this chunk */
    if (l->id[k] == H5Z_FILTER_FLETCHER32 && size >= 4) {
      size -= 4;
      continue;
    }
    *other = l->name[k];
    return -1;
  }
  return size;
}

/* One chunk, as h5fz_cli_walk_chunks found it with its stored bytes:
 * parse the container header. */
static int inspect_chunk(const h5fz_cli_chunk *c, void *data)
{
  const chunk_walk *w = data;
  const inspect_options *o = w->o;
  totals *t = w->t;
  int filter_pos = w->filter_pos, rank = c->rank;
  hsize_t index = c->index, size = c->size;
  const hsize_t *off = c->offset;
  h5fz_chunk_info info;
  int st = H5FZ_ERR_ARG;
  const char *why = "cannot read the chunk";
  char later_why[200];

  memset(&info, 0, sizeof info);
  if (c->error) {
    why = c->error;
  } else if (filter_pos < 0) {
    /* No h5fz in the pipeline: the bytes are not a container, whatever
     * they are; do not look for the magic. */
    why = "not compressed by h5fz";
    st = 2;
  } else if ((c->filter_mask >> filter_pos) & 1u) {
    why = "stored unfiltered (the filter skipped this chunk)";
    st = 1;
  } else {
    const char *other = NULL;
    long long bytes = container_bytes(c, w->later, &other);
    if (bytes < 0) {
      snprintf(later_why, sizeof later_why,
               "coded by filter '%s' after h5fz: not decoded here, so the container is not shown", other);
      why = later_why;
      st = 3;
    } else {
      st = h5fz_chunk_inspect(c->bytes, (size_t)bytes, &info);
      if (st != H5FZ_OK) {
        why = h5fz_last_error()[0] ? h5fz_last_error() : h5fz_status_name(st);
      } else if (w->want_bytes && (info.input_bytes != w->want_bytes || info.dtype != w->want_dtype)) {
        /* a valid container, but not a chunk of this dataset: the filter and
         * the API refuse it, so no reader gets its values */
        snprintf(later_why, sizeof later_why,
                 "a container of %llu bytes of %s, the dataset's chunks are %llu bytes of %s: unreadable here",
                 (unsigned long long)info.input_bytes, info.dtype == H5FZ_DTYPE_F64 ? "float64" : "float32",
                 (unsigned long long)w->want_bytes, w->want_dtype == H5FZ_DTYPE_F64 ? "float64" : "float32");
        why = later_why;
        st = H5FZ_ERR_CORRUPT;
      } else if (w->have_spec && (st = h5fz_chunk_info_check_spec(&info, &w->spec))) {
        /* same size, another shape or a looser bound: the filter and the API refuse it too */
        snprintf(later_why, sizeof later_why, "%s: unreadable here", h5fz_last_error());
        why = later_why;
      }
    }
  }

  t->chunks++;
  t->stored += size;
  if (st == H5FZ_OK) {
    t->input += info.input_bytes;
    t->readable_stored += size;
    t->outliers += info.n_outliers;
    t->raw_sub += info.n_raw_subchunks;
    t->sub += info.n_subchunks;
    if (info.stored_raw) t->raw_chunks++;
  } else if (st == 1) {
    t->unfiltered++;
  } else if (st == 2) {
    t->not_h5fz++;
  } else if (st == 3) {
    t->later_filter++;
  } else {
    t->errors++;
  }
  if (o->summary) return 0;
  if (o->json) {
    printf("%s\n      {\"index\": %llu, \"offset\": [", index ? "," : "", (unsigned long long)index);
    for (int i = 0; i < rank; i++) printf("%s%llu", i ? ", " : "", (unsigned long long)off[i]);
    printf("], \"stored_bytes\": %llu", (unsigned long long)size);
    if (st == H5FZ_OK) {
      /* "ratio" is the chunk ratio: padded chunk bytes / stored bytes. */
      printf(", \"input_bytes\": %llu, \"ratio\": %.6g, \"outliers\": %u, "
             "\"subchunks\": %u, \"raw_subchunks\": %u, \"stored_raw\": %s, "
             "\"abs_bound\": %.17g, \"chain\": [",
             (unsigned long long)info.input_bytes, size ? (double)info.input_bytes / (double)size : 0.0,
             info.n_outliers, info.n_subchunks, info.n_raw_subchunks, info.stored_raw ? "true" : "false",
             info.abs_bound);
      for (uint32_t i = 0; i < info.n_ops && i < H5FZ_MAX_OPS; i++) {
        const char *name = h5fz_op_name(info.ops[i]);
        if (i) printf(", ");
        if (name)
          h5fz_cli_json_string(stdout, name);
        else
          printf("\"op%u\"", (unsigned)info.ops[i]);
      }
      printf("]");
      if (info.predictor) printf(", \"lorenzo_nd_predictor\": %u", info.predictor);
      printf(", \"big_endian\": %s, \"format_version\": %u}", info.big_endian ? "true" : "false", info.format_version);
    } else {
      printf(", \"error\": ");
      h5fz_cli_json_string(stdout, why);
      printf("}");
    }
    return 0;
  }
  printf("  %6llu ", (unsigned long long)index);
  print_offset(off, rank);
  if (st == H5FZ_OK && info.stored_raw) {
    /* The header keeps the chain that was tried; the chunk is the input
     * bytes as they are (no sub-chunks, no outliers). */
    char chain[256];
    format_chain(&info, " ", chain, sizeof chain);
    printf("  stored %llu  chunk ratio %.3f  STORED RAW: whole chunk verbatim (coding with %s "
           "did not make it smaller)%s\n",
           (unsigned long long)size, size ? (double)info.input_bytes / (double)size : 0.0, chain,
           info.big_endian ? "  big-endian (format v2)" : "");
  } else if (st == H5FZ_OK) {
    char chain[256];
    format_chain(&info, " ", chain, sizeof chain);
    char pred[32] = "";
    if (info.predictor) snprintf(pred, sizeof pred, " (%u-D)", info.predictor);
    printf("  stored %llu  chunk ratio %.3f  outliers %u  raw sub-chunks %u/%u  chain %s%s%s\n",
           (unsigned long long)size, size ? (double)info.input_bytes / (double)size : 0.0, info.n_outliers,
           info.n_raw_subchunks, info.n_subchunks, chain, pred, info.big_endian ? "  big-endian (format v2)" : "");
  } else
    printf("  stored %llu  %s\n", (unsigned long long)size, why);
  return 0;
}

/* The filter line: cd_values as stored (user and set_local words) and the
 * spec they mean, also into *spec (*have_spec 0 when they do not parse).
 * Returns the filter's position in the pipeline or -1. */
static int describe_filter(hid_t dcpl, const inspect_options *o, h5fz_spec *spec_out, int *have_spec)
{
  unsigned flags = 0, words[H5FZ_CD_MAX], *cd = words;
  size_t n = 0, shown;
  char text[512] = "";
  h5fz_spec spec;
  *have_spec = 0;
  int pos = h5fz_cli_find_filter(dcpl, &flags, cd, H5FZ_CD_MAX, &n);
  /* More words than a valid h5fz pipeline holds: fetch them all, to show
   * what is really there (the spec will not parse). */
  if (pos >= 0 && n > H5FZ_CD_MAX) {
    unsigned *all = malloc(n * sizeof *all);
    size_t again = 0;
    if (all && h5fz_cli_find_filter(dcpl, &flags, all, n, &again) >= 0 && again == n)
      cd = all;
    else
      free(all);
  }
  /* Only what was fetched (all of them unless out of memory). */
  shown = cd == words && n > H5FZ_CD_MAX ? H5FZ_CD_MAX : n;
  if (pos >= 0 && h5fz_spec_from_cd_values(cd, shown, &spec, NULL) == H5FZ_OK) {
    h5fz_spec_format(&spec, text, sizeof text);
    *spec_out = spec;
    *have_spec = 1;
  }
  if (o->json) {
    printf(", \"filter_id\": %d, \"filter_found\": %s, \"filter_index\": %d, "
           "\"filter_mandatory\": %s, \"cd_values\": [",
           H5FZ_FILTER_ID, pos >= 0 ? "true" : "false", pos,
           pos >= 0 && !(flags & H5Z_FLAG_OPTIONAL) ? "true" : "false");
    for (size_t i = 0; i < shown; i++) printf("%s%u", i ? ", " : "", cd[i]);
    printf("], ");
    if (shown < n) printf("\"cd_values_count\": %zu, \"cd_values_truncated\": true, ", n);
    printf("\"spec\": ");
    h5fz_cli_json_string(stdout, text);
  } else if (pos < 0) {
    printf("  filter: h5fz (id %d) not in the pipeline\n", H5FZ_FILTER_ID);
  } else {
    printf("  filter: h5fz (id %d) at position %d, %s\n  cd_values (%zu):", H5FZ_FILTER_ID, pos,
           flags & H5Z_FLAG_OPTIONAL ? "optional" : "mandatory", n);
    for (size_t i = 0; i < shown; i++) printf(" %u", cd[i]);
    if (shown < n) printf(" ... (the first %zu shown: out of memory)", shown);
    if (n > H5FZ_CD_MAX)
      printf("\n  (%zu words: more than the %d an h5fz pipeline holds, %d user words and the "
             "dataset part)",
             n, H5FZ_CD_MAX, H5FZ_CD_USER_MAX);
    printf("\n  spec: %s\n", text[0] ? text : "(cd_values not understood)");
  }
  if (cd != words) free(cd);
  return pos;
}

static int inspect_dataset(hid_t file, const char *name, const inspect_options *o, int first)
{
  hid_t dset = H5Dopen2(file, name, H5P_DEFAULT), dcpl = -1, space = -1, type = -1;
  hsize_t dims[H5S_MAX_RANK], chunk[H5S_MAX_RANK], n_chunks = 0;
  char shape[256], chunk_text[256] = "", type_name[64];
  char why[400];
  int rank, pos, rc = H5FZ_CLI_OK;
  hssize_t n_elems;
  uint64_t storage, logical;
  double ratio;
  totals t;

  memset(&t, 0, sizeof t);
  if (dset < 0) {
    h5fz_cli_error(cmd, "cannot open dataset %s: %s", name, h5fz_cli_hdf5_reason(why, sizeof why));
    return H5FZ_CLI_USAGE;
  }
  dcpl = H5Dget_create_plist(dset);
  space = H5Dget_space(dset);
  type = H5Dget_type(dset);
  rank = H5Sget_simple_extent_dims(space, dims, NULL);
  if (rank < 0) rank = 0;
  h5fz_cli_space_shape(space, shape, sizeof shape);
  h5fz_cli_type_name(type, type_name, sizeof type_name);
  if (H5Pget_layout(dcpl) == H5D_CHUNKED) {
    int crank = H5Pget_chunk(dcpl, H5S_MAX_RANK, chunk);
    h5fz_cli_format_dims(chunk, crank, chunk_text, sizeof chunk_text);
  }
  /* The ratio as verify reports it: the dataset's logical bytes over its
   * storage size. Edge chunks are stored padded to the full chunk shape,
   * so the chunks' own ratio (padded bytes / stored) is higher. */
  n_elems = H5Sget_simple_extent_npoints(space);
  storage = H5Dget_storage_size(dset);
  logical = (uint64_t)(n_elems > 0 ? n_elems : 0) * H5Tget_size(type);
  ratio = storage ? (double)logical / (double)storage : 0.0;
  if (o->json) {
    printf("%s\n    {\"dataset\": ", first ? "" : ",");
    h5fz_cli_json_string(stdout, name);
    printf(", \"dtype\": \"%s\", \"shape\": \"%s\", \"element_bytes\": %zu, "
           "\"chunk\": \"%s\", \"storage_bytes\": %llu, \"dataset_bytes\": %llu, "
           "\"ratio\": %.6g, \"byte_order\": ",
           type_name, shape, H5Tget_size(type), chunk_text, (unsigned long long)storage, (unsigned long long)logical,
           ratio);
    if (h5fz_cli_byte_order(type))
      h5fz_cli_json_string(stdout, h5fz_cli_byte_order(type));
    else
      printf("null");
  } else {
    printf("%s: %s, shape %s, chunk %s, stored %llu bytes\n", name, type_name, shape,
           chunk_text[0] ? chunk_text : (rank == 0 ? "(not chunked, cannot be compressed)" : "(not chunked)"),
           (unsigned long long)storage);
  }
  h5fz_spec spec = {0};
  int have_spec = 0;
  pos = describe_filter(dcpl, o, &spec, &have_spec);
  if (!o->json && !h5fz_cli_is_float_type(type))
    printf("  %s is not float32/float64: not compressed by h5fz (the filter skips it)\n", type_name);
  if (chunk_text[0] && H5Dget_num_chunks(dset, space, &n_chunks) < 0) {
    h5fz_cli_error(cmd, "%s: cannot count chunks: %s", name, h5fz_cli_hdf5_reason(why, sizeof why));
    rc = H5FZ_CLI_USAGE;
    n_chunks = 0;
  }
  if (o->json)
    printf(", \"chunks\": [");
  else if (!o->summary && n_chunks && pos >= 0)
    printf("  chunks: index [offset]  stored bytes  chunk ratio (padded chunk bytes / stored "
           "bytes)  outliers  raw sub-chunks  op chain; STORED RAW: the chunk kept verbatim\n");
  if (n_chunks) {
    later_filters later;
    /* the checks the filter makes when it decodes: the spec set_local stored */
    chunk_walk w = {o, pos, &later, &t, 0, H5FZ_DTYPE_UNKNOWN, have_spec, spec};
    hsize_t cdims[H5S_MAX_RANK];
    int crank = H5Pget_chunk(dcpl, H5S_MAX_RANK, cdims);
    if (crank > 0 && h5fz_cli_is_float_type(type)) {
      /* a chunk must decode to the dataset's byte order (HDF5 reads its bytes as the type) */
      w.spec.big_endian = H5Tget_order(type) == H5T_ORDER_BE;
      w.want_bytes = H5Tget_size(type);
      for (int d = 0; d < crank; d++) w.want_bytes *= cdims[d];
      w.want_dtype = H5Tget_size(type) == 8 ? H5FZ_DTYPE_F64 : H5FZ_DTYPE_F32;
      uint64_t dims64[H5S_MAX_RANK];
      for (int d = 0; d < crank; d++) dims64[d] = cdims[d];
      if (h5fz_chunk_dims_fold((size_t)crank, dims64, &w.spec.rank, w.spec.dims) != H5FZ_OK) w.spec.rank = 0;
    }
    find_later_filters(dcpl, pos, &later);
    if (h5fz_cli_walk_chunks(dset, 1, inspect_chunk, &w, &n_chunks) < 0) {
      h5fz_cli_error(cmd, "%s: cannot count chunks: %s", name, h5fz_cli_hdf5_reason(why, sizeof why));
      rc = H5FZ_CLI_USAGE;
    }
  }
  if (o->json) {
    printf("%s], \"totals\": {\"chunks\": %llu, \"stored_bytes\": %llu, \"input_bytes\": %llu, "
           "\"outliers\": %llu, \"subchunks\": %llu, \"raw_subchunks\": %llu, "
           "\"raw_chunks\": %llu, \"unfiltered_chunks\": %llu, \"unreadable_chunks\": %llu, "
           "\"not_h5fz_chunks\": %llu, \"later_filter_chunks\": %llu, \"dataset_bytes\": %llu, "
           "\"ratio\": %.6g, \"chunk_ratio\": %.6g}",
           n_chunks && !o->summary ? "\n    " : "", (unsigned long long)t.chunks, (unsigned long long)t.stored,
           (unsigned long long)t.input, (unsigned long long)t.outliers, (unsigned long long)t.sub,
           (unsigned long long)t.raw_sub, (unsigned long long)t.raw_chunks, (unsigned long long)t.unfiltered,
           (unsigned long long)t.errors, (unsigned long long)t.not_h5fz, (unsigned long long)t.later_filter,
           (unsigned long long)logical, ratio, t.readable_stored ? (double)t.input / (double)t.readable_stored : 0.0);
  } else if (pos < 0) {
    printf("  total: %llu chunks, stored %llu, dataset %llu bytes, ratio %.3f (dataset bytes / "
           "storage size); not compressed by h5fz\n",
           (unsigned long long)t.chunks, (unsigned long long)storage, (unsigned long long)logical, ratio);
  } else {
    char chunk_ratio[128] = "chunk ratio n/a (no h5fz chunk)";
    /* over the stored bytes of the same chunks: an unreadable chunk adds
     * stored bytes but no padded bytes, and must not lower the ratio */
    if (t.input && t.readable_stored)
      snprintf(chunk_ratio, sizeof chunk_ratio,
               t.readable_stored == t.stored ? "chunk ratio %.3f (padded chunk bytes %llu / stored)"
                                             : "chunk ratio %.3f (padded chunk bytes %llu / stored bytes %llu of "
                                               "the readable chunks)",
               (double)t.input / (double)t.readable_stored, (unsigned long long)t.input,
               (unsigned long long)t.readable_stored);
    printf("  total: %llu chunks, stored %llu, ratio %.3f (dataset bytes %llu / storage size "
           "%llu, as verify), %s, outliers %llu, raw sub-chunks %llu/%llu, stored raw "
           "chunks %llu, unfiltered chunks %llu, unreadable %llu",
           (unsigned long long)t.chunks, (unsigned long long)t.stored, ratio, (unsigned long long)logical,
           (unsigned long long)storage, chunk_ratio, (unsigned long long)t.outliers, (unsigned long long)t.raw_sub,
           (unsigned long long)t.sub, (unsigned long long)t.raw_chunks, (unsigned long long)t.unfiltered,
           (unsigned long long)t.errors);
    if (t.later_filter) printf(", coded by a filter after h5fz (not decoded) %llu", (unsigned long long)t.later_filter);
    printf("\n");
  }
  if (t.errors) {
    h5fz_cli_error(cmd, "%s: %llu of %llu chunks unreadable or not valid h5fz containers (%s)", name,
                   (unsigned long long)t.errors, (unsigned long long)t.chunks,
                   o->summary ? "run without --summary to see which and why"
                   : o->json  ? "each one's \"error\" says why"
                              : "each one's line says why");
    if (rc == H5FZ_CLI_OK) rc = H5FZ_CLI_FAIL;
  }
  {
    /* Only chunks h5fz wrote can be compared with the attributes. */
    h5fz_cli_chunk_totals ct = {0, 0, 0, 0};
    if (pos >= 0 && !t.errors && !t.unfiltered && !t.not_h5fz && !t.later_filter) {
      ct.chunks = t.chunks;
      ct.stored_bytes = t.stored;
      ct.outliers = t.outliers;
      ct.dataset_bytes = logical;
    }
    if (h5fz_cli_print_attributes(dset, o->json, &ct) < 0)
      h5fz_cli_error(cmd, "%s: cannot list its attributes: %s", name, h5fz_cli_hdf5_reason(why, sizeof why));
  }
  if (o->json) printf("}");
  H5FZ_CLI_CLOSE(type, space, dcpl, dset);
  return rc;
}

int h5fz_cmd_inspect(int argc, char **argv)
{
  static const struct option options[] = {{"json", no_argument, NULL, 'j'},
                                          {"summary", no_argument, NULL, 's'},
                                          {"help", no_argument, NULL, 'h'},
                                          {NULL, 0, NULL, 0}};
  inspect_options o = {0, 0};
  h5fz_cli_names names = {NULL, 0, 0};
  int c, rc = H5FZ_CLI_OK;
  hid_t file;

  optind = 1;
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":h", options, NULL)) != -1) {
    switch (c) {
    case 'j': o.json = 1; break;
    case 's': o.summary = 1; break;
    case 'h': help(stdout); return H5FZ_CLI_OK;
    default:
      h5fz_cli_bad_option(cmd, c, argv);
      h5fz_cli_usage_hint(cmd);
      return H5FZ_CLI_USAGE;
    }
  }
  if (argc - optind < 1 || argc - optind > 2) {
    h5fz_cli_error(cmd, "need FILE.h5 and at most one DATASET");
    h5fz_cli_usage_hint(cmd);
    return H5FZ_CLI_USAGE;
  }
  h5fz_cli_quiet_hdf5();
  file = h5fz_cli_open_input(cmd, argv[optind]);
  if (file < 0) return H5FZ_CLI_USAGE;
  if (argc - optind == 2 ? h5fz_cli_names_add(&names, argv[optind + 1])
                         : h5fz_cli_list_float_datasets(file, &names, NULL)) {
    h5fz_cli_error(cmd, "cannot list the datasets of %s", argv[optind]);
    rc = H5FZ_CLI_USAGE;
  }
  if (o.json) {
    printf("{\"file\": ");
    h5fz_cli_json_string(stdout, argv[optind]);
    printf(", \"datasets\": [");
  }
  for (size_t i = 0; i < names.n; i++) {
    /* The worst status wins: usage/open errors (2) over unreadable chunks (1). */
    int r = inspect_dataset(file, names.names[i], &o, i == 0);
    if (r > rc) rc = r;
  }
  if (o.json) printf("\n  ]}\n");
  H5Fclose(file);
  h5fz_cli_names_free(&names);
  return rc;
}
