/*
 * cmd_cd_values.c - `h5fz cd-values SPEC`: the cd_values of a spec in the
 * forms h5repack, C and h5py want, so nobody splits a double by hand.
 */
#include <stdlib.h>
#include <string.h>

#include "h5fz.h"
#include "cli_status.h"
#include "h5fz_cli.h"

static const char *const cmd = "cd-values";

static void help(FILE *out) { (void)h5fz_cli_print_help(out, cmd, NULL); }

/* Values as unsigned decimals: h5repack reads a leading 0 as octal, and a
 * decimal never starts with 0 unless it is 0 itself. */
static void print_words(FILE *out, const unsigned *cd, size_t n, const char *sep)
{
  for (size_t i = 0; i < n; i++) fprintf(out, "%s%u", i ? sep : "", cd[i]);
}

/* Fortran has no unsigned INTEGER: HDF5's Fortran library passes each
 * INTEGER's bits to the C cd_values, so a word of 2^31 or more is written
 * as the signed number with the same 32 bits (3539053052 -> -755914244).
 * -2^31 has no literal (the minus applies to 2147483648, out of range), so
 * it is written as an expression. */
static void print_fortran_word(FILE *out, unsigned w)
{
  if (w == 0x80000000u)
    fprintf(out, "(-2147483647-1)");
  else if (w > 0x7fffffffu)
    fprintf(out, "%lld", (long long)w - 4294967296LL);
  else
    fprintf(out, "%u", w);
}

/* The words as a Fortran array constructor's items, at most 6 a line with
 * free-form continuations, so no line passes the 132-character limit. */
static void print_fortran_words(FILE *out, const unsigned *cd, size_t n, const char *indent)
{
  for (size_t i = 0; i < n; i++) {
    if (i && i % 6 == 0)
      fprintf(out, ", &\n%s", indent);
    else if (i)
      fprintf(out, ", ");
    print_fortran_word(out, cd[i]);
  }
}

static void print_ud(FILE *out, const unsigned *cd, size_t n)
{
  fprintf(out, "UD=%d,0,%zu", H5FZ_FILTER_ID, n);
  for (size_t i = 0; i < n; i++) fprintf(out, ",%u", cd[i]);
}

int h5fz_cmd_cd_values(int argc, char **argv)
{
  int ud_only = 0, json = 0, blank = 1;
  unsigned cd[H5FZ_CD_USER_MAX];
  size_t n = 0;
  char canonical[512];
  h5fz_spec spec;
  char *text;
  int status;

  const h5fz_cli_word_option opts[] = {{"--ud", 0, &ud_only, NULL}, {"--json", 0, &json, NULL}, {NULL, 0, NULL, NULL}};
  if (!(text = h5fz_cli_spec_words(cmd, argc, argv, opts, &status))) {
    if (status == H5FZ_CLI_OK) help(stdout);
    return status;
  }
  if (ud_only && json) {
    h5fz_cli_error(cmd, "--ud and --json exclude each other");
    free(text);
    return H5FZ_CLI_USAGE;
  }
  for (const char *p = text; *p; p++)
    if (*p != ' ' && *p != '\t' && *p != '\n') blank = 0;
  status = blank ? h5fz_spec_default(&spec) : h5fz_spec_parse(text, &spec);
  if (status == H5FZ_OK) status = h5fz_spec_validate(&spec);
  if (status == H5FZ_OK) status = h5fz_spec_to_cd_values(&spec, 0, cd, H5FZ_CD_USER_MAX, &n);
  if (status == H5FZ_OK) status = h5fz_spec_format(&spec, canonical, sizeof canonical);
  if (status != H5FZ_OK) {
    int rc = h5fz_cli_library_error(cmd, status, "invalid spec \"%s\"", text);
    free(text);
    return rc;
  }
  h5fz_cli_spec_caution(cmd, &spec);
  /* An empty spec is what `UD=<id>,0,0` means: the defaults. Say so, since
   * an empty shell variable is the usual way to get here by accident. */
  if (blank)
    fprintf(stderr,
            "h5fz %s: note: the spec is empty, which means the defaults (%s), as "
            "UD=%d,0,0 does\n",
            cmd, canonical, H5FZ_FILTER_ID);
  /* fill= is the dataset part's (set_local reads the dataset's fill value),
   * not the user cd_values': printed in the spec but not carried (a
   * tester read it as carried) */
  if (spec.has_fill)
    fprintf(stderr,
            "h5fz %s: note: fill= is not carried by these cd_values: the filter takes the dataset's "
            "own fill value (H5Pset_fill_value, h5py fillvalue=, or h5fz from-raw --spec \"... fill=V\")\n",
            cmd);
  if (spec.big_endian) /* the same: set_local takes the order from the dataset's type */
    fprintf(stderr,
            "h5fz %s: note: order= is not carried by these cd_values: the filter takes the byte order "
            "from the dataset's type (H5T_IEEE_F*BE, h5py dtype='>f4')\n",
            cmd);
  free(text);

  if (ud_only) {
    print_ud(stdout, cd, n);
    putchar('\n');
  } else if (json) {
    printf("{\"spec\": ");
    h5fz_cli_json_string(stdout, canonical);
    printf(", \"filter_id\": %d, \"cd_values\": [", H5FZ_FILTER_ID);
    print_words(stdout, cd, n, ", ");
    printf("], \"fortran_cd_values\": [");
    for (size_t i = 0; i < n; i++) {
      printf("%s", i ? ", " : "");
      /* JSON wants a number, not the -2^31 expression */
      if (cd[i] == 0x80000000u)
        printf("-2147483648");
      else
        print_fortran_word(stdout, cd[i]);
    }
    printf("], \"ud\": \"");
    print_ud(stdout, cd, n);
    printf("\"}\n");
  } else {
    printf("spec:     %s\n", canonical);
    printf("h5repack: -f ");
    print_ud(stdout, cd, n);
    printf("\nC:        const unsigned cd_values[%zu] = {", n);
    print_words(stdout, cd, n, ", ");
    printf("};\n          H5Pset_filter(dcpl, %d, H5Z_FLAG_MANDATORY, %zu, cd_values);\n", H5FZ_FILTER_ID, n);
    printf("h5py:     compression=%d, compression_opts=(", H5FZ_FILTER_ID);
    print_words(stdout, cd, n, ", ");
    /* A one-element Python tuple needs its trailing comma. */
    printf("%s)\n", n == 1 ? "," : "");
    printf("Fortran:  INTEGER :: cd_values(%zu) = [ &\n            ", n);
    print_fortran_words(stdout, cd, n, "            ");
    /* flags 0 is H5Z_FLAG_MANDATORY: HDF5 1.10's Fortran module has only
     * H5Z_FLAG_OPTIONAL_F */
    printf("]\n          CALL h5pset_filter_f(dcpl, %d, 0, INT(%zu, SIZE_T), cd_values, hdferr)"
           "   ! 0: mandatory\n",
           H5FZ_FILTER_ID, n);
  }
  return H5FZ_CLI_OK;
}
