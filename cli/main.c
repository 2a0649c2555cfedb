/*
 * main.c - the h5fz command-line tool: a dispatcher over subcommands.
 */
#include <stdio.h>
#include <string.h>

#include "h5fz.h"
#include "h5fz_cli.h"

#ifdef H5FZ_CLI_HAVE_PLAN
#include "cmd_plan.h"
#endif

typedef struct {
  const char *name;
  int (*run)(int argc, char **argv);
  const char *args;
  const char *summary;
} command;

#ifndef H5FZ_CLI_HAVE_PLAN
static int not_built(int argc, char **argv)
{
  int help = argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"));
  h5fz_cli_error(argv[0], "not available in this build (reserved)");
  return help ? H5FZ_CLI_OK : H5FZ_CLI_USAGE;
}
#endif

#ifdef H5FZ_CLI_HAVE_PLAN
#define PLAN_ENTRY h5fz_cmd_plan
#else
#define PLAN_ENTRY not_built
#endif

static const command commands[] = {
    {"cd-values", h5fz_cmd_cd_values, "SPEC", "print a spec as h5repack UD=, C and h5py cd_values"},
    {"from-raw", h5fz_cmd_from_raw, "RAW OUT.h5 ...", "convert a raw .f32/.f64 field into a chunked HDF5 dataset"},
    {"compress", h5fz_cmd_compress, "IN.h5 OUT.h5 SPEC",
     "copy a file, compressing its float datasets, and check every element"},
    {"verify", h5fz_cmd_verify, "ORIG.h5 COMP.h5 ...", "check a compressed file against its original"},
    {"inspect", h5fz_cmd_inspect, "FILE.h5 [DATASET]", "show the filter and the chunks of compressed datasets"},
    {"plan", PLAN_ENTRY, "...", "show the hardware plan (device classes, route)"},
    {"codegen", h5fz_cmd_codegen, "SPEC", "print the CUDA source generated for a spec"},
    {"ops", h5fz_cmd_ops, "", "list the ops a spec chain is made of"},
};

static void usage(FILE *out)
{
  fprintf(out, "usage: h5fz <command> [options]    (h5fz <command> --help for details)\n\n"
               "commands:\n");
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    fprintf(out, "  %-10s %-20s %s\n", commands[i].name, commands[i].args, commands[i].summary);
  fprintf(out, "  %-10s %-20s %s\n", "version", "", "print the library version");
  fprintf(out, "\nfilter id %d; documentation: docs/cli.md\n", H5FZ_FILTER_ID);
}

int main(int argc, char **argv)
{
  const char *name;
  if (argc < 2) {
    usage(stderr);
    return H5FZ_CLI_USAGE;
  }
  name = argv[1];
  if (!strcmp(name, "--help") || !strcmp(name, "-h") || !strcmp(name, "help")) {
    usage(stdout);
    return H5FZ_CLI_OK;
  }
  if (!strcmp(name, "version") || !strcmp(name, "--version")) {
    if (argc == 3 && (!strcmp(argv[2], "--help") || !strcmp(argv[2], "-h"))) {
      printf("usage: h5fz version\n\nPrint the version of h5fz and the HDF5 filter id it was built with.\n");
      return H5FZ_CLI_OK;
    }
    if (argc > 2) {
      fprintf(stderr, "h5fz version: unexpected argument '%s' (version takes none)\n", argv[2]);
      return H5FZ_CLI_USAGE;
    }
    printf("h5fz %s (filter id %d)\n", h5fz_version(), H5FZ_FILTER_ID);
    return H5FZ_CLI_OK;
  }
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    if (!strcmp(name, commands[i].name)) return commands[i].run(argc - 1, argv + 1);
  fprintf(stderr, "h5fz: unknown command '%s'\n\n", name);
  usage(stderr);
  return H5FZ_CLI_USAGE;
}
