/*
 * cmd_from_raw.c - `h5fz from-raw`: a raw little-endian field (as in
 * shared/data) into one chunked HDF5 dataset, uncompressed or through the
 * h5fz filter. This is also the smallest example of writing with the filter
 * from C (see write_dataset).
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "h5fz.h"
#include "cli_status.h"
#include "h5fz_cli.h"

static const char *const cmd = "from-raw";

#define DEFAULT_CHUNK_BYTES (4u << 20)
#define SMALL_CHUNK_BYTES 4096u /* below this, a warning: the container overhead dominates */

static void help(FILE *out)
{
  char bytes[16];
  snprintf(bytes, sizeof bytes, "%u", DEFAULT_CHUNK_BYTES);
  const char *const vars[] = {"DEFAULT_CHUNK_BYTES", bytes, NULL};
  (void)h5fz_cli_print_help(out, cmd, vars);
}

static h5fz_dtype dtype_from_path(const char *path)
{
  const char *dot = strrchr(path, '.');
  return dot ? h5fz_cli_parse_dtype(dot + 1) : H5FZ_DTYPE_UNKNOWN;
}

/* Opens path and checks that it is a regular file of exactly want bytes
 * (NULL with the error printed otherwise). */
static FILE *open_raw(const char *path, size_t want)
{
  struct stat st;
  /* before fopen: opening a FIFO would wait for a writer, forever */
  if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
    h5fz_cli_error(cmd, "%s is not a regular file (%s); give the raw array's file", path,
                   S_ISDIR(st.st_mode)    ? "a directory"
                   : S_ISFIFO(st.st_mode) ? "a FIFO"
                                          : "a device or socket");
    return NULL;
  }
  FILE *f = fopen(path, "rb");
  long size;
  if (!f) {
    h5fz_cli_error(cmd, "cannot open %s: %s", path, strerror(errno));
    return NULL;
  }
  if (fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
    h5fz_cli_error(cmd, "cannot size %s", path);
    fclose(f);
    return NULL;
  }
  if ((size_t)size != want) {
    h5fz_cli_error(cmd, "%s has %ld bytes, but the shape and type need %zu", path, size, want);
    fclose(f);
    return NULL;
  }
  return f;
}

/* Reads the want bytes of f (from open_raw) and closes it. */
static void *read_raw(FILE *f, const char *path, size_t want)
{
  void *buf = malloc(want ? want : 1);
  if (!buf || fread(buf, 1, want, f) != want) {
    h5fz_cli_error(cmd, "cannot read %s", path);
    free(buf);
    buf = NULL;
  }
  fclose(f);
  return buf;
}

typedef struct {
  double min, max;
  size_t n_nan, n_inf;
} field_stats;

/* Element i of data (float32 or float64, little- or big-endian) as a double. */
static double value_at(const void *data, size_t i, h5fz_dtype dtype, int big_endian)
{
  size_t esize = dtype == H5FZ_DTYPE_F32 ? 4 : 8;
  unsigned char b[8];
  memcpy(b, (const unsigned char *)data + i * esize, esize);
  for (size_t k = 0; big_endian && k < esize / 2; k++) {
    unsigned char t = b[k];
    b[k] = b[esize - 1 - k];
    b[esize - 1 - k] = t;
  }
  float f;
  double d;
  if (esize == 4) return memcpy(&f, b, 4), (double)f;
  return memcpy(&d, b, 8), d;
}

static field_stats stats_of(const void *data, size_t n, h5fz_dtype dtype, int big_endian)
{
  field_stats s = {INFINITY, -INFINITY, 0, 0};
  for (size_t i = 0; i < n; i++) {
    double v = value_at(data, i, dtype, big_endian);
    if (isnan(v)) {
      s.n_nan++;
    } else if (isinf(v)) {
      s.n_inf++;
    } else {
      if (v < s.min) s.min = v;
      if (v > s.max) s.max = v;
    }
  }
  return s;
}

/* The spec text as the user cd_values cd[0..*n) (H5FZ_CD_USER_MAX words)
 * and its fill= (*has_fill, *fill), which the user cd_values do not carry:
 * it becomes the dataset's fill value, which set_local passes on; -1 with
 * the error printed. */
static int spec_to_cd(const char *spec_text, unsigned *cd, size_t *n, int *has_fill, double *fill)
{
  h5fz_spec spec;
  int st = h5fz_spec_parse(spec_text, &spec);
  *has_fill = st == H5FZ_OK && spec.has_fill;
  *fill = *has_fill ? spec.fill : 0.0;
  if (st == H5FZ_OK) st = h5fz_spec_to_cd_values(&spec, 0, cd, H5FZ_CD_USER_MAX, n);
  if (st != H5FZ_OK) {
    h5fz_cli_library_error(cmd, st, "invalid --spec \"%s\"", spec_text);
    return -1;
  }
  /* a rel= above 1 is said by the filter's set_local (not twice) */
  return 0;
}

/* Adds the user cd_values cd[0..n) (spec_to_cd's) to the dataset creation
 * property list as a mandatory filter (an optional one would silently
 * store chunks raw when the filter fails). */
static int add_filter(hid_t dcpl, const unsigned *cd, size_t n)
{
  char why[512];
  if (H5Zfilter_avail(H5FZ_FILTER_ID) <= 0) {
    h5fz_cli_error(cmd,
                   "the h5fz filter (id %d) is not available: set HDF5_PLUGIN_PATH "
                   "to the folder of libh5fz.so",
                   H5FZ_FILTER_ID);
    return -1;
  }
  if (H5Pset_filter(dcpl, H5FZ_FILTER_ID, H5Z_FLAG_MANDATORY, n, cd) < 0) {
    h5fz_cli_error(cmd, "H5Pset_filter failed: %s", h5fz_cli_hdf5_reason(why, sizeof why));
    return -1;
  }
  return 0;
}

typedef struct {
  const char *out_path, *dataset, *spec_text;
  unsigned cd[H5FZ_CD_USER_MAX]; /* spec_text as user cd_values (spec_to_cd) */
  size_t n_cd;
  int has_fill; /* the spec's fill=: the dataset's fill value */
  double fill;
  h5fz_dtype dtype;
  int big_endian; /* RAW and the dataset are big-endian */
  int rank;
  hsize_t dims[H5S_MAX_RANK], chunk[H5S_MAX_RANK];
} write_job;

static int write_dataset(const write_job *job, const void *data)
{
  hid_t file = -1, space = -1, dcpl = -1, lcpl = -1, dset = -1;
  hid_t type = job->dtype == H5FZ_DTYPE_F32 ? H5T_IEEE_F32LE : H5T_IEEE_F64LE;
  if (job->big_endian) type = job->dtype == H5FZ_DTYPE_F32 ? H5T_IEEE_F32BE : H5T_IEEE_F64BE;
  hid_t fill_type = job->dtype == H5FZ_DTYPE_F32 ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE;
  char why[512];
  int rc = -1;

  file = H5Fcreate(job->out_path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (file < 0) {
    h5fz_cli_error(cmd, "cannot create %s: %s", job->out_path, h5fz_cli_hdf5_reason(why, sizeof why));
    goto done;
  }
  space = H5Screate_simple(job->rank, job->dims, NULL);
  dcpl = H5Pcreate(H5P_DATASET_CREATE);
  lcpl = H5Pcreate(H5P_LINK_CREATE);
  if (space < 0 || dcpl < 0 || lcpl < 0 || H5Pset_chunk(dcpl, job->rank, job->chunk) < 0 ||
      H5Pset_create_intermediate_group(lcpl, 1) < 0) {
    h5fz_cli_error(cmd, "cannot set up the dataset: %s", h5fz_cli_hdf5_reason(why, sizeof why));
    goto done;
  }
  if (job->has_fill) { /* in the dataset's precision (a byte swap at most) */
    float fill32 = (float)job->fill;
    if (H5Pset_fill_value(dcpl, fill_type,
                          job->dtype == H5FZ_DTYPE_F32 ? (const void *)&fill32 : (const void *)&job->fill) < 0) {
      h5fz_cli_error(cmd, "cannot set the fill value: %s", h5fz_cli_hdf5_reason(why, sizeof why));
      goto done;
    }
  }
  if (job->spec_text && add_filter(dcpl, job->cd, job->n_cd) < 0) goto done;
  dset = H5Dcreate2(file, job->dataset, type, space, lcpl, dcpl, H5P_DEFAULT);
  if (dset < 0) {
    h5fz_cli_error(cmd, "cannot create dataset %s: %s", job->dataset, h5fz_cli_hdf5_filter_reason(why, sizeof why));
    goto done;
  }
  /* The memory type is the file's type (its byte order is RAW's): the raw
   * bytes are written as they are on any host. */
  if (H5Dwrite(dset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0) {
    h5fz_cli_error(cmd, "write failed: %s", h5fz_cli_hdf5_reason(why, sizeof why));
    goto done;
  }
  rc = 0;
done:
  /* A mandatory filter may fail only when its chunks are flushed, so the
   * closes are checked too. */
  if (dset >= 0 && H5Dclose(dset) < 0 && rc == 0) {
    h5fz_cli_error(cmd, "flush failed: %s", h5fz_cli_hdf5_reason(why, sizeof why));
    rc = -1;
  }
  H5FZ_CLI_CLOSE(lcpl, dcpl, space);
  if (file >= 0 && H5Fclose(file) < 0 && rc == 0) {
    h5fz_cli_error(cmd, "closing %s failed: %s", job->out_path, h5fz_cli_hdf5_reason(why, sizeof why));
    rc = -1;
  }
  /* the file was created (truncated) here: leave no half-written one */
  if (rc && file >= 0) unlink(job->out_path);
  return rc;
}

static void print_summary(const write_job *job, const field_stats *s, hsize_t n)
{
  char shape[256], chunk[256];
  hsize_t n_chunks = 1;
  int edge = 0;
  for (int i = 0; i < job->rank; i++) {
    n_chunks *= (job->dims[i] + job->chunk[i] - 1) / job->chunk[i];
    edge |= job->dims[i] % job->chunk[i] != 0;
  }
  h5fz_cli_format_dims(job->dims, job->rank, shape, sizeof shape);
  h5fz_cli_format_dims(job->chunk, job->rank, chunk, sizeof chunk);
  printf("%s:%s %s%s %s chunk %s (%llu chunks%s)%s%s\n", job->out_path, job->dataset,
         job->dtype == H5FZ_DTYPE_F32 ? "float32" : "float64", job->big_endian ? " big-endian" : "", shape, chunk,
         (unsigned long long)n_chunks, edge ? ", with edge chunks" : "", job->spec_text ? " filter " : "",
         job->spec_text ? job->spec_text : "");
  printf("elements %llu, finite min %.9g max %.9g range %.9g, NaN %zu, Inf %zu\n", (unsigned long long)n, s->min,
         s->max, s->max - s->min, s->n_nan, s->n_inf);
}

int h5fz_cmd_from_raw(int argc, char **argv)
{
  static const struct option options[] = {{"shape", required_argument, NULL, 's'},
                                          {"chunk", required_argument, NULL, 'c'},
                                          {"chunk-bytes", required_argument, NULL, 'b'},
                                          {"dataset", required_argument, NULL, 'd'},
                                          {"dtype", required_argument, NULL, 't'},
                                          {"byte-order", required_argument, NULL, 'o'},
                                          {"spec", required_argument, NULL, 'f'},
                                          {"quiet", no_argument, NULL, 'q'},
                                          {"force", no_argument, NULL, 'F'},
                                          {"help", no_argument, NULL, 'h'},
                                          {NULL, 0, NULL, 0}};
  write_job job = {.dataset = "/data", .dtype = H5FZ_DTYPE_UNKNOWN};
  const char *shape_text = NULL, *chunk_text = NULL;
  double chunk_bytes = DEFAULT_CHUNK_BYTES;
  int quiet = 0, force = 0, c, chunk_rank = 0;
  struct stat out_st;
  hsize_t n = 1;
  size_t elem;
  void *data;
  field_stats stats;

  optind = 1;
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":h", options, NULL)) != -1) {
    switch (c) {
    case 's': shape_text = optarg; break;
    case 'c': chunk_text = optarg; break;
    case 'b':
      /* at most 2^32 (a chunk of HDF5 1.10 is below 4 GiB): a larger value would overflow size_t */
      if (h5fz_cli_parse_double(optarg, &chunk_bytes) < 0 || chunk_bytes < 1 || chunk_bytes > 4294967296.0) {
        h5fz_cli_error(cmd, "bad --chunk-bytes '%s' (want 1..4294967296)", optarg);
        return H5FZ_CLI_USAGE;
      }
      break;
    case 'd': job.dataset = optarg; break;
    case 't':
      job.dtype = h5fz_cli_parse_dtype(optarg);
      if (job.dtype == H5FZ_DTYPE_UNKNOWN) {
        h5fz_cli_error(cmd, "bad --dtype '%s' (f32 or f64)", optarg);
        return H5FZ_CLI_USAGE;
      }
      break;
    case 'o':
      if (!strcmp(optarg, "big") || !strcmp(optarg, "be"))
        job.big_endian = 1;
      else if (!strcmp(optarg, "little") || !strcmp(optarg, "le"))
        job.big_endian = 0;
      else {
        h5fz_cli_error(cmd, "bad --byte-order '%s' (little or big)", optarg);
        return H5FZ_CLI_USAGE;
      }
      break;
    case 'f': job.spec_text = optarg; break;
    case 'q': quiet = 1; break;
    case 'F': force = 1; break;
    case 'h': help(stdout); return H5FZ_CLI_OK;
    default:
      h5fz_cli_bad_option(cmd, c, argv);
      h5fz_cli_usage_hint(cmd);
      return H5FZ_CLI_USAGE;
    }
  }
  if (argc - optind != 2 || !shape_text) {
    h5fz_cli_error(cmd, "need RAW, OUT.h5 and --shape");
    h5fz_cli_usage_hint(cmd);
    return H5FZ_CLI_USAGE;
  }
  job.out_path = argv[optind + 1];
  /* A typo such as `from-raw IN IN` must not destroy the input. */
  if (h5fz_cli_same_file(argv[optind], job.out_path)) {
    h5fz_cli_error(cmd, "refusing to write %s: it is the input file %s", job.out_path, argv[optind]);
    return H5FZ_CLI_USAGE;
  }
  if (job.dtype == H5FZ_DTYPE_UNKNOWN) job.dtype = dtype_from_path(argv[optind]);
  if (job.dtype == H5FZ_DTYPE_UNKNOWN) {
    h5fz_cli_error(cmd, "cannot tell the type of %s: name it .f32/.f64 or give --dtype", argv[optind]);
    return H5FZ_CLI_USAGE;
  }
  elem = h5fz_dtype_size(job.dtype);
  if (elem == 0) elem = job.dtype == H5FZ_DTYPE_F32 ? 4 : 8;
  if (h5fz_cli_parse_dims(shape_text, job.dims, H5S_MAX_RANK, &job.rank) < 0) {
    h5fz_cli_error(cmd, "bad --shape '%s' (e.g. 12x291x360)", shape_text);
    return H5FZ_CLI_USAGE;
  }
  for (int i = 0; i < job.rank; i++) {
    if (n > SIZE_MAX / elem / job.dims[i]) {
      h5fz_cli_error(cmd, "--shape '%s' is too large", shape_text);
      return H5FZ_CLI_USAGE;
    }
    n *= job.dims[i];
  }
  if (chunk_text) {
    if (h5fz_cli_parse_dims(chunk_text, job.chunk, H5S_MAX_RANK, &chunk_rank) < 0 || chunk_rank != job.rank) {
      h5fz_cli_error(cmd, "bad --chunk '%s': need %d positive extents", chunk_text, job.rank);
      return H5FZ_CLI_USAGE;
    }
    for (int i = 0; i < job.rank; i++)
      if (job.chunk[i] > job.dims[i]) {
        h5fz_cli_error(cmd, "--chunk extent %llu exceeds the dimension %llu", (unsigned long long)job.chunk[i],
                       (unsigned long long)job.dims[i]);
        return H5FZ_CLI_USAGE;
      }
  } else {
    h5fz_cli_default_chunk(job.dims, job.rank, elem, (size_t)chunk_bytes, job.chunk);
  }
  FILE *raw = open_raw(argv[optind], (size_t)n * elem);
  if (!raw) return H5FZ_CLI_USAGE;
  /* after the other arguments, so that a run names the mistakes in them
   * before --force would matter */
  if (!force && lstat(job.out_path, &out_st) == 0) {
    h5fz_cli_error(cmd, "%s exists: give --force to replace it", job.out_path);
    fclose(raw);
    return H5FZ_CLI_USAGE;
  }
  if (job.spec_text &&
      spec_to_cd(job.spec_text, job.cd, &job.n_cd, &job.has_fill, &job.fill) < 0) { /* before any warning */
    fclose(raw);
    return H5FZ_CLI_USAGE;
  }

  h5fz_cli_quiet_hdf5();
  data = read_raw(raw, argv[optind], (size_t)n * elem);
  if (!data) return H5FZ_CLI_USAGE;
  stats = stats_of(data, (size_t)n, job.dtype, job.big_endian);
  if (write_dataset(&job, data) < 0) {
    free(data);
    return H5FZ_CLI_USAGE;
  }
  free(data);
  /* each chunk is a container of at least 88 bytes (header, size table,
   * checksum): tiny chunks grow instead of shrinking; said once the file is
   * written, so a run that fails names only its error */
  uint64_t one_chunk_bytes = elem;
  for (int i = 0; i < job.rank; i++) one_chunk_bytes *= job.chunk[i];
  if (one_chunk_bytes < SMALL_CHUNK_BYTES && !quiet)
    fprintf(stderr,
            "h5fz %s: warning: chunks of %llu bytes are small; each stored chunk costs at least 88 bytes, "
            "so the file may be larger than the raw data (1-16 MiB chunks are typical)\n",
            cmd, (unsigned long long)one_chunk_bytes);
  if (!quiet) print_summary(&job, &stats, n);
  return H5FZ_CLI_OK;
}
