/*
 * cmd_compress.c - `h5fz compress IN.h5 OUT.h5 SPEC`: h5repack for h5fz
 * without its traps. The whole file is copied (compress_copy.c), every
 * float dataset compressed, a dataset the filter refuses is an error
 * naming it, and every element is checked against the bound afterwards
 * (compress_check.c) before OUT appears.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_input.h"
#include "cli_tempfile.h"
#include "compress_check.h"
#include "compress_copy.h"
#include "h5fz.h"
#include "cli_status.h"
#include "h5fz_cli.h"

static const char *const cmd = "compress";

static void help(FILE *out) { (void)h5fz_cli_print_help(out, cmd, NULL); }

static int parse_spec(const char *text, h5fz_compress_options *o, char *canonical, size_t len)
{
  int st = h5fz_spec_parse(text, &o->spec);
  if (st == H5FZ_OK) st = h5fz_spec_validate(&o->spec);
  if (st == H5FZ_OK) st = h5fz_spec_to_cd_values(&o->spec, 0, o->cd, H5FZ_CD_USER_MAX, &o->n_cd);
  if (st == H5FZ_OK) st = h5fz_spec_format(&o->spec, canonical, len);
  if (st != H5FZ_OK) {
    h5fz_cli_library_error(cmd, st, "invalid spec \"%s\"", text);
    return -1;
  }
  /* H5FZ_DEVICE (and a GPU it asks for) once, before any dataset: a
   * mistyped value would otherwise be each dataset's refusal, which
   * --skip-refused turns into copies of the input, unchanged */
  h5fz_spec probe = o->spec; /* a float32 chunk of 1 MiB: whether a GPU that H5FZ_DEVICE=gpu asks for is usable */
  if (probe.dtype == H5FZ_DTYPE_UNKNOWN) probe.dtype = H5FZ_DTYPE_F32;
  st = h5fz_device_check(&probe, (size_t)1 << 20);
  if (st != H5FZ_OK) {
    h5fz_cli_library_error(cmd, st, "device setting");
    return -1;
  }
  /* a rel= above 1 is said by the filter's set_local, once, when the
   * first dataset is created with it (not twice) */
  return 0;
}

/* The userblock (bytes before the HDF5 superblock) is not part of the
 * HDF5 objects: copied byte for byte into the new file's, same size. */
static int copy_userblock(const char *in, const char *out, hsize_t size)
{
  FILE *a, *b;
  char buf[4096];
  int rc = 0;
  if (size == 0) return 0;
  a = fopen(in, "rb");
  b = fopen(out, "r+b");
  if (!a || !b) rc = -1;
  for (hsize_t done = 0; rc == 0 && done < size;) {
    size_t want = size - done < sizeof buf ? (size_t)(size - done) : sizeof buf;
    if (fread(buf, 1, want, a) != want || fwrite(buf, 1, want, b) != want) rc = -1;
    done += want;
  }
  if (a) fclose(a);
  if (b && fclose(b) != 0) rc = -1;
  return rc;
}

static int json_report_printed; /* print_json_report ran: a failure before it gets print_json_failure's */

/* --json: a failure before the report (a bad spec or path, a refused
 * dataset, a file that cannot be read) is one object too, so that a script always reads JSON
 * from stdout: {"input", "output", "ok": false, "error"} (the message also goes to
 * stderr, as without --json). */
static void print_json_failure(const char *in, const char *out)
{
  printf("{\"input\": ");
  h5fz_cli_json_string(stdout, in ? in : "");
  printf(", \"output\": ");
  h5fz_cli_json_string(stdout, out ? out : "");
  printf(", \"ok\": false, \"error\": ");
  h5fz_cli_json_string(stdout, h5fz_cli_last_error());
  printf("}\n");
}

static void print_json_report(const char *in, const char *out, const char *spec, const h5fz_compress_items *items,
                              unsigned long long in_bytes, unsigned long long out_bytes, int ok)
{
  json_report_printed = 1;
  printf("{\"input\": ");
  h5fz_cli_json_string(stdout, in);
  printf(", \"output\": ");
  h5fz_cli_json_string(stdout, out);
  printf(", \"spec\": ");
  h5fz_cli_json_string(stdout, spec);
  printf(", \"filter_id\": %d, \"datasets\": [", H5FZ_FILTER_ID);
  for (size_t i = 0; i < items->n; i++) {
    const h5fz_compress_item *it = &items->items[i];
    printf("%s\n    {\"path\": ", i ? "," : "");
    h5fz_cli_json_string(stdout, it->path);
    printf(", \"action\": \"%s\", \"dtype\": ", it->compressed ? "compressed" : "copied");
    h5fz_cli_json_string(stdout, it->dtype);
    printf(", \"shape\": ");
    h5fz_cli_json_string(stdout, it->shape);
    printf(", \"elements\": %llu, \"raw_bytes\": %llu, \"stored_bytes\": %llu, \"ratio\": ",
           (unsigned long long)it->elements, (unsigned long long)it->raw_bytes, (unsigned long long)it->stored_bytes);
    h5fz_cli_json_number(stdout, it->stored_bytes ? (double)it->raw_bytes / (double)it->stored_bytes : 0.0);
    if (it->compressed) {
      printf(", \"bound\": ");
      h5fz_cli_json_number(stdout, it->bound);
      printf(", \"max_error\": ");
      h5fz_cli_json_number(stdout, it->max_err);
      printf(", \"chunks\": %llu, \"unfiltered_chunks\": %llu, \"ok\": %s", (unsigned long long)it->chunks,
             (unsigned long long)it->unfiltered_chunks, it->ok ? "true" : "false");
      if (it->problem[0]) {
        printf(", \"problem\": ");
        h5fz_cli_json_string(stdout, it->problem);
      }
    } else {
      printf(", \"reason\": ");
      h5fz_cli_json_string(stdout, it->why);
    }
    printf("}");
  }
  printf("\n  ], \"input_bytes\": %llu, \"output_bytes\": %llu, \"ok\": %s}\n", in_bytes, out_bytes,
         ok ? "true" : "false");
}

static void print_text_report(const char *in, const char *out, const h5fz_compress_items *items,
                              unsigned long long in_bytes, unsigned long long out_bytes, int ok)
{
  size_t n_comp = 0;
  for (size_t i = 0; i < items->n; i++) {
    const h5fz_compress_item *it = &items->items[i];
    if (it->compressed) {
      n_comp++;
      printf("%s: %s %s  compressed  ratio %.3f  max_err %.6g  bound %.6g  %s%s%s\n", it->path, it->dtype, it->shape,
             it->stored_bytes ? (double)it->raw_bytes / (double)it->stored_bytes : 0.0, it->max_err, it->bound,
             it->ok ? "ok" : "FAIL", it->problem[0] ? ": " : "", it->problem);
    } else {
      printf("%s: %s %s  copied unchanged (%s)\n", it->path, it->dtype, it->shape, it->why);
    }
  }
  printf("%s -> %s: %zu dataset%s compressed, %zu copied unchanged; %llu -> %llu bytes (%.2fx); %s\n", in, out, n_comp,
         n_comp == 1 ? "" : "s", items->n - n_comp, in_bytes, out_bytes,
         out_bytes ? (double)in_bytes / (double)out_bytes : 0.0,
         ok ? "every element within the bound" : "CHECK FAILED: not written");
}

static unsigned long long file_bytes(const char *path)
{
  struct stat st;
  return stat(path, &st) == 0 ? (unsigned long long)st.st_size : 0;
}

/* After the copy: the stored bytes of every dataset and the check of every
 * compressed one, on the closed and reopened copy (what a reader sees).
 * Returns 1 when every check passed, 0 when one failed, -1 on a read error. */
static int check_copy(hid_t in, const char *tmp, const h5fz_spec *spec, h5fz_compress_items *items)
{
  hid_t out = H5Fopen(tmp, H5F_ACC_RDONLY, H5P_DEFAULT);
  int all_ok = 1;
  if (out < 0) return -1;
  for (size_t i = 0; i < items->n; i++) {
    h5fz_compress_item *it = &items->items[i];
    hid_t d = H5Dopen2(out, it->path, H5P_DEFAULT);
    if (d >= 0) {
      it->stored_bytes = H5Dget_storage_size(d);
      H5Dclose(d);
    }
    if (!it->compressed) continue;
    if (h5fz_compress_check(in, out, spec, it) < 0) {
      H5Fclose(out);
      return -1;
    }
    if (!it->ok) all_ok = 0;
  }
  H5Fclose(out);
  return all_ok;
}

/* The file creation properties of the copy: the input's (userblock size,
 * sizes), plus the root group's link and attribute creation order, which
 * H5Fget_create_plist does not report but netCDF-4 sets (it numbers
 * variables in link creation order). */
static hid_t root_creation_plist(hid_t in, hsize_t *userblock)
{
  hid_t fcpl = H5Fget_create_plist(in), root = H5Gopen2(in, "/", H5P_DEFAULT);
  hid_t gcpl = root < 0 ? -1 : H5Gget_create_plist(root);
  unsigned links = 0, attrs = 0;
  if (fcpl >= 0) H5Pget_userblock(fcpl, userblock);
  if (fcpl >= 0 && gcpl >= 0 && H5Pget_link_creation_order(gcpl, &links) >= 0 &&
      H5Pget_attr_creation_order(gcpl, &attrs) >= 0) {
    H5Pset_link_creation_order(fcpl, links);
    H5Pset_attr_creation_order(fcpl, attrs);
  }
  if (gcpl >= 0) H5Pclose(gcpl);
  if (root >= 0) H5Gclose(root);
  return fcpl;
}

typedef struct {
  const char *in, *out;
  int force, json;
  h5fz_cli_names only, exclude;
} compress_args;

/* Checks on the two paths before anything is read or written. */
static int check_paths(const compress_args *a)
{
  struct stat st;
  if (h5fz_cli_check_input(cmd, a->in) < 0) return -1;
  if (h5fz_cli_same_file(a->in, a->out)) {
    h5fz_cli_error(cmd, "%s and %s are the same file: h5fz compress never overwrites its input", a->in, a->out);
    return -1;
  }
  /* even with --force: the rename at the end cannot replace a folder, and
   * a FIFO or device is no file to replace (it failed after all the work) */
  const char *out_kind = h5fz_cli_not_a_file(a->out);
  if (out_kind) {
    h5fz_cli_error(cmd, "%s is %s, not a file: give OUT.h5 as a file name", a->out, out_kind);
    return -1;
  }
  if (stat(a->out, &st) == 0 && !a->force) {
    h5fz_cli_error(cmd, "%s exists; give --force to replace it", a->out);
    return -1;
  }
  return 0;
}

/* The copy into a temporary file beside OUT, its check, and the rename.
 * Returns the exit status. */

/* 1 when path names an object of file (every link on the way exists and
 * the last one resolves), checked link by link so that a missing group on
 * the way is no HDF5 error. */
static int object_exists(hid_t file, const char *path)
{
  char buf[4096];
  if (strlen(path) >= sizeof buf) return 0;
  if (!strcmp(path, "/") || !*path) return 1;
  snprintf(buf, sizeof buf, "%s", path);
  for (char *p = buf + 1;; p++) {
    if (*p == '/' || !*p) {
      char c = *p;
      *p = '\0';
      htri_t e = 0, o = 0;
      H5E_BEGIN_TRY
      {
        e = H5Lexists(file, buf, H5P_DEFAULT);
        if (e > 0) o = H5Oexists_by_name(file, buf, H5P_DEFAULT);
      }
      H5E_END_TRY;
      if (e <= 0 || o <= 0) return 0;
      if (!c) return 1;
      *p = c;
    }
  }
}

static int run(const compress_args *a, h5fz_compress_options *o, const char *canonical)
{
  char err[1024], why[400], *tmp = malloc(strlen(a->out) + 32);
  hid_t in = -1, out = -1, fcpl = -1;
  hsize_t userblock = 0;
  h5fz_compress_items items = {NULL, 0, 0};
  int fd, rc = H5FZ_CLI_USAGE, checked;
  if (!tmp) return H5FZ_CLI_USAGE;
  sprintf(tmp, "%s.h5fz-tmp-XXXXXX", a->out);
  if (H5Zfilter_avail(H5FZ_FILTER_ID) <= 0) {
    h5fz_cli_error(cmd,
                   "the h5fz filter (id %d) is not available: set HDF5_PLUGIN_PATH to the "
                   "folder of libh5fz.so",
                   H5FZ_FILTER_ID);
    free(tmp);
    return H5FZ_CLI_USAGE;
  }
  in = H5Fopen(a->in, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (in < 0) {
    h5fz_cli_error(cmd, "cannot open %s as an HDF5 file (not HDF5, or damaged): %s", a->in,
                   h5fz_cli_hdf5_reason(why, sizeof why));
    free(tmp);
    return H5FZ_CLI_USAGE;
  }
  /* a mistyped --only would compress nothing, a mistyped --exclude what
   * the user meant to keep exact, each reporting success */
  for (int which = 0; which < 2; which++) {
    const h5fz_cli_names *names = which ? &a->exclude : &a->only;
    for (size_t i = 0; i < names->n; i++)
      if (!object_exists(in, names->names[i])) {
        h5fz_cli_error(cmd, "--%s %s: no such object in %s", which ? "exclude" : "only", names->names[i], a->in);
        free(tmp);
        H5Fclose(in);
        return H5FZ_CLI_USAGE;
      }
  }
  fd = mkstemp(tmp);
  if (fd < 0) {
    h5fz_cli_error(cmd, "cannot create a file beside %s: %s", a->out, strerror(errno));
    goto done;
  }
  /* mkstemp makes the file 0600; OUT gets what the umask gives a new file,
   * as from-raw's and h5repack's outputs do */
  mode_t mask = umask(0);
  umask(mask);
  if (fchmod(fd, 0666 & ~mask) != 0) {
    h5fz_cli_error(cmd, "cannot set the mode of %s: %s", tmp, strerror(errno));
    close(fd);
    goto done;
  }
  close(fd);
  h5fz_cli_temp_guard(tmp); /* Ctrl-C from here on leaves no half-written file */
  /* the input's creation properties: userblock, and the root group's link
   * creation order (netCDF-4 tracks it) */
  fcpl = root_creation_plist(in, &userblock);
  out = H5Fcreate(tmp, H5F_ACC_TRUNC, fcpl >= 0 ? fcpl : H5P_DEFAULT, H5P_DEFAULT);
  if (out < 0) {
    h5fz_cli_error(cmd, "cannot create %s: %s", tmp, h5fz_cli_hdf5_reason(why, sizeof why));
    goto done;
  }
  o->progress = isatty(STDERR_FILENO);
  if (h5fz_compress_copy(in, out, o, &items, err, sizeof err) < 0) {
    h5fz_cli_error(cmd, "%s: %s", a->in, err);
    goto done;
  }
  herr_t closed = H5Fclose(out);
  out = -1;
  if (closed < 0) {
    h5fz_cli_error(cmd, "writing %s failed: %s", tmp, h5fz_cli_hdf5_reason(why, sizeof why));
    goto done;
  }
  checked = check_copy(in, tmp, &o->spec, &items);
  if (checked < 0) {
    h5fz_cli_error(cmd, "cannot read the copy back: %s", h5fz_cli_hdf5_reason(why, sizeof why));
    goto done;
  }
  if (copy_userblock(a->in, tmp, userblock) < 0) {
    h5fz_cli_error(cmd, "cannot copy the %llu-byte userblock", (unsigned long long)userblock);
    goto done;
  }
  if (checked && rename(tmp, a->out) != 0) {
    h5fz_cli_error(cmd, "cannot rename %s to %s: %s", tmp, a->out, strerror(errno));
    goto done;
  }
  if (checked) h5fz_cli_temp_release(); /* it is OUT now */
  if (a->json)
    print_json_report(a->in, a->out, canonical, &items, file_bytes(a->in), file_bytes(checked ? a->out : tmp), checked);
  else
    print_text_report(a->in, a->out, &items, file_bytes(a->in), file_bytes(checked ? a->out : tmp), checked);
  rc = checked ? H5FZ_CLI_OK : H5FZ_CLI_FAIL;
done:
  H5FZ_CLI_CLOSE(out, fcpl, in);
  if (rc != H5FZ_CLI_OK) unlink(tmp); /* nothing half-written is left behind */
  h5fz_cli_temp_release();
  h5fz_compress_items_free(&items);
  free(tmp);
  return rc;
}

int h5fz_cmd_compress(int argc, char **argv)
{
  static const struct option options[] = {{"only", required_argument, NULL, 'o'},
                                          {"exclude", required_argument, NULL, 'x'},
                                          {"skip-refused", no_argument, NULL, 's'},
                                          {"force", no_argument, NULL, 'f'},
                                          {"json", no_argument, NULL, 'j'},
                                          {"help", no_argument, NULL, 'h'},
                                          {NULL, 0, NULL, 0}};
  compress_args a;
  h5fz_compress_options o;
  char canonical[512], *spec_text = NULL;
  int c, rc = H5FZ_CLI_USAGE;
  memset(&a, 0, sizeof a);
  memset(&o, 0, sizeof o);
  optind = 1;
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":h", options, NULL)) != -1) {
    switch (c) {
    case 'o':
    case 'x':
      if (optarg[0] != '/') {
        h5fz_cli_error(cmd, "--%s '%s': give an absolute path in the file (starting with /)",
                       c == 'o' ? "only" : "exclude", optarg);
        goto usage;
      }
      if (h5fz_cli_names_add(c == 'o' ? &a.only : &a.exclude, optarg) < 0) goto usage;
      break;
    case 's': o.skip_refused = 1; break;
    case 'f': a.force = 1; break;
    case 'j': a.json = 1; break;
    case 'h':
      help(stdout);
      rc = H5FZ_CLI_OK;
      goto out;
    default: h5fz_cli_bad_option(cmd, c, argv); goto usage;
    }
  }
  if (argc - optind < 3) {
    h5fz_cli_error(cmd, "need IN.h5, OUT.h5 and a SPEC (e.g. \"abs=1e-3\")");
    goto usage;
  }
  a.in = argv[optind];
  a.out = argv[optind + 1];
  spec_text = h5fz_cli_join_words(argc, argv, optind + 2);
  if (!spec_text || parse_spec(spec_text, &o, canonical, sizeof canonical) < 0) goto out;
  o.only = &a.only;
  o.exclude = &a.exclude;
  h5fz_cli_quiet_hdf5();
  if (check_paths(&a) < 0) goto out;
  rc = run(&a, &o, canonical);
  goto out;
usage:
  h5fz_cli_usage_hint(cmd);
out:
  /* every failure once --json is read (a bad spec or path, a usage error after it, the run's) */
  if (a.json && rc != H5FZ_CLI_OK && !json_report_printed) print_json_failure(a.in, a.out);
  free(spec_text);
  h5fz_cli_names_free(&a.only);
  h5fz_cli_names_free(&a.exclude);
  return rc;
}
