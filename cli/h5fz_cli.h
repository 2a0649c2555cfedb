/*
 * h5fz_cli.h - subcommands of the h5fz command-line tool and the small
 * HDF5 helpers they share. Private to cli/: users call fusion/h5fz.h.
 *
 * Every subcommand takes argv as the shell gave it from the subcommand name
 * on (argv[0] = "verify", ...) and returns the process exit status:
 * H5FZ_CLI_OK, H5FZ_CLI_FAIL (a check failed), H5FZ_CLI_USAGE (bad
 * arguments or an I/O error; the reason is on stderr).
 */
#ifndef H5FZ_CLI_H
#define H5FZ_CLI_H

#include <stddef.h>
#include <stdio.h>

#include <hdf5.h>

#include "cli_status.h" /* H5FZ_CLI_OK, _FAIL, _USAGE: the exit statuses */
#include "h5fz.h"

#ifndef H5FZ_FILTER_ID
#error "H5FZ_FILTER_ID must be defined by the build (CMake cache variable)"
#endif

int h5fz_cmd_cd_values(int argc, char **argv);
int h5fz_cmd_from_raw(int argc, char **argv);
int h5fz_cmd_verify(int argc, char **argv);
int h5fz_cmd_compress(int argc, char **argv);
int h5fz_cmd_inspect(int argc, char **argv);
int h5fz_cmd_codegen(int argc, char **argv);
int h5fz_cmd_ops(int argc, char **argv);

/* Print "h5fz <cmd>: warning: <caution>" on stderr when the spec is valid
 * but most likely not what was meant (h5fz_spec_caution: a REL bound
 * above 1). Nothing otherwise. */
void h5fz_cli_spec_caution(const char *cmd, const h5fz_spec *spec);

/* Print "h5fz <cmd>: <message>\n" on stderr, printf-style, on one line:
 * every run of blanks and newlines in the message becomes one blank. */
void h5fz_cli_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Write the message into err (len bytes) unless err holds one already, so
 * the innermost reason of a failure survives the callers that add their
 * own. Returns -1, for `return h5fz_cli_keep_error(...)`. */
int h5fz_cli_keep_error(char *err, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* h5fz_cli_hdf5_reason, or "HDF5 gave no reason" when the stack is empty. */
const char *h5fz_cli_hdf5_why(char *buf, size_t len);

/* Free the variable-length parts (strings, also inside compounds) that an
 * H5Aread/H5Dread of mtype over space put into buf (buf itself stays the
 * caller's); a buffer without any is left alone. H5Treclaim from HDF5
 * 1.12 on, H5Dvlen_reclaim before. */
void h5fz_cli_reclaim(hid_t mtype, hid_t space, void *buf);

/* Close ids[0..n) in that order, each with the close call of its kind
 * (H5Iget_type: file, group, dataset, attribute, datatype, dataspace,
 * property list), and set each to -1; a negative id (never opened, or a
 * failed open) is passed over. One cleanup for the `done:` label of a
 * function that opened several kinds of HDF5 objects, in place of an
 * `if (x >= 0) H5?close(x)` line per object. Not for predefined ids
 * (H5T_NATIVE_*, H5P_DEFAULT): they are not the caller's to close. */
/* Print the --help text of command cmd ("cd-values", ...) to out: the
 * text of cli/help/CMD.txt (embedded at build time) with @FILTER_ID@ and
 * each @NAME@ that vars names replaced by its value (vars: NAME, value
 * pairs, then NULL; may be NULL). Returns 0, or -1 (and a line saying so) when there is no
 * such text. */
int h5fz_cli_print_help(FILE *out, const char *cmd, const char *const *vars);

void h5fz_cli_close_ids(hid_t *ids, size_t n);

/* h5fz_cli_close_ids over the ids listed, e.g. H5FZ_CLI_CLOSE(dset, space,
 * dcpl): the list is a compound literal, so the caller's variables are
 * closed but keep their values. */
#define H5FZ_CLI_CLOSE(...) h5fz_cli_close_ids((hid_t[]){__VA_ARGS__}, sizeof((hid_t[]){__VA_ARGS__}) / sizeof(hid_t))

/* After a usage error's message: one line pointing at `h5fz <cmd> --help`
 * (the whole help after every mistake buried the message; a tester). */
void h5fz_cli_usage_hint(const char *cmd);

/* After getopt_long (opterr = 0, optstring starting with ':') returned c
 * = '?' or ':', report the offending option on one line. */
void h5fz_cli_bad_option(const char *cmd, int c, char **argv);

/* Collapse every run of whitespace (newlines included) in s into one blank
 * and trim both ends, in place. Returns s. */
char *h5fz_cli_one_line(char *s);

/* A short name of an HDF5 datatype: "float32", "int16", "uint8", "string",
 * ...; a byte order other than little-endian is part of it: "float32
 * big-endian", "int16 big-endian", "float64 VAX-order". Returns buf. */
const char *h5fz_cli_type_name(hid_t type, char *buf, size_t len);

/* The byte order of an integer or float type: "little-endian",
 * "big-endian", "VAX-order", "mixed-endian"; NULL for other types. */
const char *h5fz_cli_byte_order(hid_t type);

/* 1 if type is a 4- or 8-byte floating-point type, of any byte order. */
int h5fz_cli_is_float_type(hid_t type);

/* 1 if dset is a dimension scale (H5DSis_scale: netCDF-4's coordinate
 * variables and its dimension datasets are), 0 if not or on error. */
int h5fz_cli_is_dimension_scale(hid_t dset);

/* 1 if paths a and b name the same file: same st_dev/st_ino when both
 * exist, else the same realpath. 0 otherwise. */
int h5fz_cli_same_file(const char *a, const char *b);

/* Parse "12x291x360" into dims[0..*rank), slowest first. Every extent must
 * be a positive decimal. Returns 0, or -1 if the text is malformed or has
 * more than max_rank extents. */
int h5fz_cli_parse_dims(const char *text, hsize_t *dims, int max_rank, int *rank);

/* A chunk shape of at most about target bytes for a dataset of dims
 * (rank extents, elem bytes each): whole fast dimensions, the first
 * dimension that does not fit whole cut into equal pieces (so the edge
 * chunk is not mostly padding), slower ones 1. Used by from-raw and
 * compress. */
void h5fz_cli_default_chunk(const hsize_t *dims, int rank, size_t elem, size_t target, hsize_t *chunk);

/* Write dims as "12x291x360" into buf (always NUL terminated). */
void h5fz_cli_format_dims(const hsize_t *dims, int rank, char *buf, size_t len);

/* argv[first..argc) joined with blanks, malloc'd (the caller frees), or
 * NULL when out of memory: a spec given as several words. */
char *h5fz_cli_join_words(int argc, char **argv, int first);

/* The element type named s: "f32"/"float32" or "f64"/"float64" (the
 * --dtype values and raw file extensions), else H5FZ_DTYPE_UNKNOWN. */
h5fz_dtype h5fz_cli_parse_dtype(const char *s);

/* One option of a command that takes its options anywhere among the words
 * of a spec (h5fz_cli_spec_words): name ("--ud"); with takes_value, its
 * value ("--dtype f32" or "--dtype=f32") goes to *value ("" when missing,
 * for the command's own check to refuse), else *flag is set to 1. */
typedef struct {
  const char *name;
  int takes_value;
  int *flag;
  const char **value;
} h5fz_cli_word_option;

/* The spec words of argv[1..argc) joined with blanks (malloc'd; the caller
 * frees), for cd-values and codegen, whose options (opts, ended by a NULL
 * name) may come anywhere: getopt is not used because spec words such as
 * "->" start with '-'; "--" ends the options. Returns NULL with *status =
 * H5FZ_CLI_OK for -h/--help (print the help), or with H5FZ_CLI_USAGE after
 * printing why (an unknown option, listing opts; no SPEC; no memory). */
char *h5fz_cli_spec_words(const char *cmd, int argc, char **argv, const h5fz_cli_word_option *opts, int *status);

/* Parse a finite double; returns 0, or -1 if text is not entirely a number. */
int h5fz_cli_parse_double(const char *text, double *out);

/* A growable list of dataset paths. */
typedef struct {
  char **names;
  size_t n;
  size_t cap;
} h5fz_cli_names;

/* Append to *list the absolute path of every floating-point dataset below
 * the root of file, recursively, in name order, and to *others (when not
 * NULL) those of the other datasets. Returns 0 or -1. */
int h5fz_cli_list_float_datasets(hid_t file, h5fz_cli_names *list, h5fz_cli_names *others);

/* Append a copy of name to *list. Returns 0 or -1 (out of memory). */
int h5fz_cli_names_add(h5fz_cli_names *list, const char *name);

void h5fz_cli_names_free(h5fz_cli_names *list);

/* Look for the h5fz filter in a dataset creation property list. Returns its
 * index in the pipeline (>= 0), *flags, and in *n_cd the number of its
 * cd_values, all of them, of which the first min(cap, *n_cd) are in cd;
 * or -1 if the pipeline does not hold it. */
int h5fz_cli_find_filter(hid_t dcpl, unsigned *flags, unsigned *cd, size_t cap, size_t *n_cd);

/* Print s as a JSON string literal (quotes and escapes included), always
 * valid UTF-8: well-formed UTF-8 sequences pass through as they are, and
 * every other byte of 0x80..0xff (an HDF5 name or string may hold any
 * bytes) is written as \ufffd, the replacement character (docs/cli.md). */
void h5fz_cli_json_string(FILE *out, const char *s);

/* Print a double as a JSON number, or null when it is not finite (JSON has
 * no Inf or NaN). */
void h5fz_cli_json_number(FILE *out, double v);

/* Silence HDF5's automatic error stack printing for the rest of the
 * process: the CLI reports errors itself, once, in its own words (the
 * filter, seeing a printer, does not say its refusals as well). */
void h5fz_cli_quiet_hdf5(void);

/* The descriptions on the current HDF5 error stack, innermost (the real
 * cause, e.g. the filter's own message) first, joined by "; " into buf, on
 * one line. Returns buf ("" when the stack is empty). */
const char *h5fz_cli_hdf5_reason(char *buf, size_t len);

/* h5fz_cli_hdf5_reason, but only the filter's own message when the failure
 * began in the filter (the innermost entry starts with "h5fz:"): HDF5's
 * frames above it ("error during user callback; unable to apply filter;
 * ...") add nothing and ran the line past its end. */
const char *h5fz_cli_hdf5_filter_reason(char *buf, size_t len);

/* One allocated chunk of a dataset, as h5fz_cli_walk_chunks finds it. */
typedef struct {
  hsize_t index;                /* 0, 1, ...: the order of the dataset's chunk index,
                                   the numbering of H5Dget_chunk_info */
  int rank;                     /* entries of offset */
  hsize_t offset[H5S_MAX_RANK]; /* the chunk's first element (all 0 when unknown) */
  hsize_t size;                 /* stored bytes */
  unsigned filter_mask;         /* bit i set: filter i of the pipeline skipped it */
  const void *bytes;            /* the stored bytes when asked for, else NULL */
  const char *error;            /* non-NULL: the chunk could not be located or
                                   read, and why; mask and bytes are not valid */
} h5fz_cli_chunk;

/* Called once per chunk; a nonzero return stops the walk and is returned. */
typedef int (*h5fz_cli_chunk_fn)(const h5fz_cli_chunk *chunk, void *data);

/* h5fz_cli_walk_chunks's want_bytes: the chunks' stored bytes (and
 * filter masks); their filter masks only (the bytes are read and dropped);
 * or only where they are and their sizes (no read; masks unknown, 0: for
 * checking the chunk index alone). */
#define H5FZ_CLI_WALK_BYTES 1
#define H5FZ_CLI_WALK_MASKS 0
#define H5FZ_CLI_WALK_LOCATE (-1)

/* Call fn for every allocated chunk of the chunked dataset dset, in the
 * order H5Dget_chunk_info numbers them, with what want_bytes asks
 * (H5FZ_CLI_WALK_*; walked by index, the mask comes without a read). Near-linear in the number of chunks: it walks the chunk grid
 * in the index's order and looks each chunk up by its offset
 * (H5Dget_chunk_storage_size + H5Dread_chunk, one B-tree descent each)
 * instead of H5Dget_chunk_info by index, which walks the index from its
 * start on every call (HDF5 1.10 and 1.12, and so does
 * H5Dget_chunk_info_by_coord). A sparse grid (far more grid cells than
 * allocated chunks) is walked by index instead, whichever is cheaper.
 * *n_chunks gets H5Dget_num_chunks. Returns 0, -1 when the chunks cannot
 * be counted (the reason is on HDF5's error stack), or fn's nonzero. */
int h5fz_cli_walk_chunks(hid_t dset, int want_bytes, h5fz_cli_chunk_fn fn, void *data, hsize_t *n_chunks);

/* What inspect found in the stored chunks of a dataset, to check the
 * dataset API's attributes against. */
typedef struct {
  unsigned long long chunks;        /* stored chunks (0: nothing to compare) */
  unsigned long long stored_bytes;  /* their bytes */
  unsigned long long outliers;      /* outliers their h5fz headers count */
  unsigned long long dataset_bytes; /* elements x element size (h5fz_ratio's numerator) */
} h5fz_cli_chunk_totals;

/* Print the h5fz_* attributes of dset (docs/dataset_api.md; inspect_attrs.c):
 * as text, a block of indented lines (nothing when there are none), or as
 * JSON, `, "attributes": {...}` and, when the attributes say how many bytes
 * or outliers the chunks hold, `, "attributes_match_chunks": BOOL` (and,
 * when false, `"stale_attributes": [names]`). Attributes that disagree with
 * the stored chunks, and when any does the ratio and the outlier lists
 * (written by the same h5fz_dataset_write), are called stale.
 * Returns the number of attributes shown, or -1 if they cannot be listed. */
int h5fz_cli_print_attributes(hid_t dset, int json, const h5fz_cli_chunk_totals *chunks);

#endif /* H5FZ_CLI_H */
