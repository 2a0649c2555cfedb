/*
 * cmd_codegen.c - `h5fz codegen SPEC`: the CUDA source that the GPU route
 * JIT-compiles for a spec (fusion/gpu/h5fz_codegen.h), and `h5fz ops`: the op
 * table that spec chains are made of.
 */
#include <stdlib.h>
#include <string.h>

#include "h5fz.h"
#include "cli_status.h"
#include "h5fz_cli.h"
#include "h5fz_codegen.h"

#define DEFAULT_THREADS 256 /* the hopper class's tuning (planner/registry/kernel_classes.txt) */

static void codegen_help(FILE *out)
{
  fprintf(out,
          "usage: h5fz codegen [--dtype f32|f64] [--threads N] [--padded-planes] [--warp-fused] SPEC...\n"
          "\n"
          "Print the CUDA source generated for a spec: the fused encode kernel\n"
          "(" H5FZ_KERNEL_ENCODE ") and decode kernel (" H5FZ_KERNEL_DECODE "), which call the ops of\n"
          "device_ops/ in chain order, one thread block per sub-chunk. This is what\n"
          "the GPU route compiles with NVRTC; no GPU or CUDA toolkit is needed here.\n"
          "The spec words are joined with blanks (quoting is optional); options may\n"
          "come anywhere, and \"--\" ends them.\n"
          "\n"
          "options:\n"
          "  --dtype f32|f64   element type, when the spec has no dtype= (default f32)\n"
          "  --threads N       threads per block, a multiple of 32 in [32, 1024]\n"
          "                    (default %d)\n"
          "  --padded-planes   bitshuffle through padded shared-memory planes, as the\n"
          "                    kernel classes with the padded_planes feature (hopper)\n"
          "                    compile it; `h5fz plan` shows a device's class\n"
          "  --warp-fused      also the warp-fused kernels (" H5FZ_KERNEL_ENCODE_WF ",\n"
          "                    " H5FZ_KERNEL_DECODE_WF ") of full sub-chunks, as the kernel\n"
          "                    classes with the warp_fused feature (hopper) compile\n"
          "                    them, when the chain is the default one on float32 with\n"
          "                    16 KiB sub-chunks (for any bound: a module serves every\n"
          "                    mode; the executor launches them for abs= and rel=)\n"
          "\n"
          "Example: h5fz codegen \"abs=1e-3\"   (grammar: docs/spec.md; ops: h5fz ops)\n",
          DEFAULT_THREADS);
}

static h5fz_dtype dtype_from_name(const char *s)
{
  if (!strcmp(s, "f32") || !strcmp(s, "float32")) return H5FZ_DTYPE_F32;
  if (!strcmp(s, "f64") || !strcmp(s, "float64")) return H5FZ_DTYPE_F64;
  return H5FZ_DTYPE_UNKNOWN;
}

/* The value of option name at argv[*i]: "--name=V" or "--name V".
 * Returns NULL when a is not that option; sets *missing when it is but has
 * no value. */
static const char *option_value(const char *name, int argc, char **argv, int *i, int *missing)
{
  const char *a = argv[*i];
  size_t n = strlen(name);
  *missing = 0;
  if (strncmp(a, name, n) != 0) return NULL;
  if (a[n] == '=') return a + n + 1;
  if (a[n] != '\0') return NULL;
  if (*i + 1 >= argc) {
    *missing = 1;
    return NULL;
  }
  return argv[++*i];
}

int h5fz_cmd_codegen(int argc, char **argv)
{
  static const char *const cmd = "codegen";
  h5fz_dtype dtype = H5FZ_DTYPE_UNKNOWN;
  int threads = DEFAULT_THREADS, only_words = 0, n_words = 0, st;
  unsigned flags = 0;
  size_t len = 1, smem = 0;
  char *text, *src = NULL, canonical[512];
  char **words;
  h5fz_spec spec;

  words = malloc((size_t)argc * sizeof *words);
  if (!words) {
    h5fz_cli_error(cmd, "out of memory");
    return H5FZ_CLI_USAGE;
  }
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v;
    int missing = 0;
    if (only_words) {
      words[n_words++] = argv[i];
    } else if (!strcmp(a, "--")) {
      only_words = 1;
    } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      free(words);
      codegen_help(stdout);
      return H5FZ_CLI_OK;
    } else if ((v = option_value("--dtype", argc, argv, &i, &missing)) || missing) {
      if (missing || (dtype = dtype_from_name(v)) == H5FZ_DTYPE_UNKNOWN) {
        h5fz_cli_error(cmd, "bad --dtype '%s' (f32 or f64)", missing ? "" : v);
        free(words);
        return H5FZ_CLI_USAGE;
      }
    } else if (!strcmp(a, "--padded-planes")) {
      flags |= H5FZ_CODEGEN_PADDED_PLANES;
    } else if (!strcmp(a, "--warp-fused")) {
      flags |= H5FZ_CODEGEN_WARP_FUSED;
    } else if ((v = option_value("--threads", argc, argv, &i, &missing)) || missing) {
      char *end = NULL;
      long t = missing ? 0 : strtol(v, &end, 10);
      if (missing || !*v || *end || t < 32 || t > 1024 || t % 32) {
        h5fz_cli_error(cmd, "bad --threads '%s' (a multiple of 32 in [32, 1024])", missing ? "" : v);
        free(words);
        return H5FZ_CLI_USAGE;
      }
      threads = (int)t;
    } else if (!strncmp(a, "--", 2)) {
      h5fz_cli_error(cmd, "unknown option '%s' (options: --dtype, --threads, --padded-planes, --warp-fused, --help)",
                     a);
      free(words);
      h5fz_cli_usage_hint(cmd);
      return H5FZ_CLI_USAGE;
    } else {
      words[n_words++] = argv[i];
    }
  }
  if (n_words == 0) {
    h5fz_cli_error(cmd, "missing SPEC (e.g. \"abs=1e-3\")");
    free(words);
    h5fz_cli_usage_hint(cmd);
    return H5FZ_CLI_USAGE;
  }
  for (int i = 0; i < n_words; i++) len += strlen(words[i]) + 1;
  text = malloc(len);
  if (!text) {
    free(words);
    h5fz_cli_error(cmd, "out of memory");
    return H5FZ_CLI_USAGE;
  }
  text[0] = '\0';
  for (int i = 0; i < n_words; i++) {
    if (i) strcat(text, " ");
    strcat(text, words[i]);
  }
  free(words);

  st = h5fz_spec_parse(text, &spec);
  if (st == H5FZ_OK) st = h5fz_spec_validate(&spec);
  if (st != H5FZ_OK) {
    int rc = h5fz_cli_library_error(cmd, st, "invalid spec \"%s\"", text);
    free(text);
    return rc;
  }
  if (dtype != H5FZ_DTYPE_UNKNOWN && spec.dtype != H5FZ_DTYPE_UNKNOWN && dtype != spec.dtype) {
    h5fz_cli_error(cmd, "--dtype contradicts the spec's dtype= in \"%s\"", text);
    free(text);
    return H5FZ_CLI_USAGE;
  }
  free(text);
  if (spec.dtype == H5FZ_DTYPE_UNKNOWN) spec.dtype = dtype != H5FZ_DTYPE_UNKNOWN ? dtype : H5FZ_DTYPE_F32;
  st = h5fz_codegen(&spec, threads, flags, &src, &smem);
  if (st != H5FZ_OK) return h5fz_cli_library_error(cmd, st, "cannot generate the kernel");
  if (h5fz_spec_format(&spec, canonical, sizeof canonical) != H5FZ_OK) canonical[0] = '\0';
  printf("/* h5fz codegen: %s; %d threads per block; dynamic shared memory %zu bytes "
         "per block */\n",
         canonical, threads, smem);
  fputs(src, stdout);
  if (src[0] && src[strlen(src) - 1] != '\n') putchar('\n');
  free(src);
  return H5FZ_CLI_OK;
}

static void ops_help(FILE *out)
{
  fprintf(out, "usage: h5fz ops [--json]\n"
               "\n"
               "List the ops a spec chain is made of: id (as stored in cd_values and in\n"
               "every chunk header), name (as written in a spec), kind and what it does.\n"
               "A chain is one map, then transforms, then one coder (docs/spec.md).\n"
               "\n"
               "options:\n"
               "  --json    print a JSON array of {id, name, kind, summary}\n");
}

int h5fz_cmd_ops(int argc, char **argv)
{
  static const char *const cmd = "ops";
  int json = 0;
  unsigned id;
  const char *name, *kind, *summary;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      ops_help(stdout);
      return H5FZ_CLI_OK;
    } else if (!strcmp(argv[i], "--json")) {
      json = 1;
    } else {
      h5fz_cli_error(cmd, "unexpected argument '%s'", argv[i]);
      h5fz_cli_usage_hint(cmd);
      return H5FZ_CLI_USAGE;
    }
  }
  if (json)
    printf("[");
  else
    printf("%-4s %-12s %-10s %s\n", "id", "name", "kind", "summary");
  for (size_t i = 0; h5fz_op_at(i, &id, &name, &kind, &summary) == H5FZ_OK; i++) {
    if (json) {
      printf("%s\n  {\"id\": %u, \"name\": ", i ? "," : "", id);
      h5fz_cli_json_string(stdout, name);
      printf(", \"kind\": ");
      h5fz_cli_json_string(stdout, kind);
      printf(", \"summary\": ");
      h5fz_cli_json_string(stdout, summary ? summary : "");
      printf("}");
    } else {
      printf("%-4u %-12s %-10s %s\n", id, name, kind, summary ? summary : "");
    }
  }
  if (json)
    printf("\n]\n");
  else
    printf("\ndefault chain (a bound alone, e.g. \"abs=1e-3\"): quant delta zigzag bitshuffle "
           "rze\n");
  return H5FZ_CLI_OK;
}
