/*
 * cmd_cd_values.c - `h5fz cd-values SPEC`: the cd_values of a spec in the
 * forms h5repack, C and h5py want, so nobody splits a double by hand.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "h5fz.h"
#include "h5fz_cli.h"

static const char *const cmd = "cd-values";

static void help(FILE *out) {
  fprintf(out,
          "usage: h5fz cd-values [--ud | --json] SPEC...\n"
          "\n"
          "Print the user cd_values of an h5fz spec (words after the first are joined\n"
          "with blanks, so quoting the spec is optional):\n"
          "  spec      the canonical text form of the spec\n"
          "  h5repack  the -f argument: UD=<id>,0,<n>,<v1>,...\n"
          "  C         an initialiser for H5Pset_filter\n"
          "  h5py      the create_dataset keyword arguments\n"
          "\n"
          "options:\n"
          "  --ud      print only the h5repack UD= string (for scripts)\n"
          "  --json    print {spec, filter_id, cd_values, ud} as JSON\n"
          "\n"
          "Spec examples: \"abs=1e-3\", \"rel=1e-4 delta zigzag bitshuffle rze\",\n"
          "\"abs=0.5 -> delta -> negabinary -> bitshuffle -> rze subchunk=8192\"\n"
          "(grammar: docs/spec.md). Filter id: %d.\n",
          H5FZ_FILTER_ID);
}

/* Joins argv[first..argc) with blanks into a malloc'd string. */
static char *join_args(int argc, char **argv, int first) {
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

/* Values as unsigned decimals: h5repack reads a leading 0 as octal, and a
 * decimal never starts with 0 unless it is 0 itself. */
static void print_words(FILE *out, const unsigned *cd, size_t n, const char *sep) {
  for (size_t i = 0; i < n; i++) fprintf(out, "%s%u", i ? sep : "", cd[i]);
}

static void print_ud(FILE *out, const unsigned *cd, size_t n) {
  fprintf(out, "UD=%d,0,%zu", H5FZ_FILTER_ID, n);
  for (size_t i = 0; i < n; i++) fprintf(out, ",%u", cd[i]);
}

int h5fz_cmd_cd_values(int argc, char **argv) {
  static const struct option options[] = {{"ud", no_argument, NULL, 'u'},
                                          {"json", no_argument, NULL, 'j'},
                                          {"help", no_argument, NULL, 'h'},
                                          {NULL, 0, NULL, 0}};
  int ud_only = 0, json = 0, c;
  unsigned cd[H5FZ_CD_USER_MAX];
  size_t n = 0;
  char canonical[512];
  h5fz_spec spec;
  char *text;
  int status;

  optind = 1;
  /* '+': stop at the first non-option, so a spec word such as "-x" is not
   * taken for an option by mistake. */
  while ((c = getopt_long(argc, argv, "+h", options, NULL)) != -1) {
    switch (c) {
      case 'u': ud_only = 1; break;
      case 'j': json = 1; break;
      case 'h': help(stdout); return H5FZ_CLI_OK;
      default: help(stderr); return H5FZ_CLI_USAGE;
    }
  }
  if (optind >= argc) {
    h5fz_cli_error(cmd, "missing SPEC (e.g. \"abs=1e-3\")");
    help(stderr);
    return H5FZ_CLI_USAGE;
  }
  text = join_args(argc, argv, optind);
  if (!text) {
    h5fz_cli_error(cmd, "out of memory");
    return H5FZ_CLI_USAGE;
  }
  status = h5fz_spec_parse(text, &spec);
  if (status == H5FZ_OK) status = h5fz_spec_validate(&spec);
  if (status == H5FZ_OK) status = h5fz_spec_to_cd_values(&spec, 0, cd, H5FZ_CD_USER_MAX, &n);
  if (status == H5FZ_OK) status = h5fz_spec_format(&spec, canonical, sizeof canonical);
  if (status != H5FZ_OK) {
    h5fz_cli_error(cmd, "invalid spec \"%s\": %s", text, h5fz_last_error()[0]
                                                            ? h5fz_last_error()
                                                            : h5fz_status_name(status));
    free(text);
    return H5FZ_CLI_USAGE;
  }
  free(text);

  if (ud_only) {
    print_ud(stdout, cd, n);
    putchar('\n');
  } else if (json) {
    printf("{\"spec\": ");
    h5fz_cli_json_string(stdout, canonical);
    printf(", \"filter_id\": %d, \"cd_values\": [", H5FZ_FILTER_ID);
    print_words(stdout, cd, n, ", ");
    printf("], \"ud\": \"");
    print_ud(stdout, cd, n);
    printf("\"}\n");
  } else {
    printf("spec:     %s\n", canonical);
    printf("h5repack: -f ");
    print_ud(stdout, cd, n);
    printf("\nC:        const unsigned cd_values[%zu] = {", n);
    print_words(stdout, cd, n, ", ");
    printf("};\n          H5Pset_filter(dcpl, %d, H5Z_FLAG_MANDATORY, %zu, cd_values);\n",
           H5FZ_FILTER_ID, n);
    printf("h5py:     compression=%d, compression_opts=(", H5FZ_FILTER_ID);
    print_words(stdout, cd, n, ", ");
    /* A one-element Python tuple needs its trailing comma. */
    printf("%s)\n", n == 1 ? "," : "");
  }
  return H5FZ_CLI_OK;
}
