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
          "                    them, when the chain is the default one or the fast one\n"
          "                    (delta zigzag bitpack) on float32 with 16 KiB\n"
          "                    sub-chunks (for any bound: a module serves every\n"
          "                    mode; the executor launches them for abs= and rel=)\n"
          "\n"
          "Example: h5fz codegen \"abs=1e-3\"   (grammar: docs/spec.md; ops: h5fz ops)\n",
          DEFAULT_THREADS);
}

int h5fz_cmd_codegen(int argc, char **argv)
{
  static const char *const cmd = "codegen";
  h5fz_dtype dtype = H5FZ_DTYPE_UNKNOWN;
  int threads = DEFAULT_THREADS, padded = 0, warp_fused = 0, st;
  unsigned flags = 0;
  size_t smem = 0;
  char *text, *src = NULL, canonical[512];
  const char *dtype_text = NULL, *threads_text = NULL;
  h5fz_spec spec;

  const h5fz_cli_word_option opts[] = {{"--dtype", 1, NULL, &dtype_text},
                                       {"--threads", 1, NULL, &threads_text},
                                       {"--padded-planes", 0, &padded, NULL},
                                       {"--warp-fused", 0, &warp_fused, NULL},
                                       {NULL, 0, NULL, NULL}};
  if (!(text = h5fz_cli_spec_words(cmd, argc, argv, opts, &st))) {
    if (st == H5FZ_CLI_OK) codegen_help(stdout);
    return st;
  }
  if (dtype_text && (dtype = h5fz_cli_parse_dtype(dtype_text)) == H5FZ_DTYPE_UNKNOWN) {
    h5fz_cli_error(cmd, "bad --dtype '%s' (f32 or f64)", dtype_text);
    free(text);
    return H5FZ_CLI_USAGE;
  }
  if (threads_text) {
    char *end = NULL;
    long t = strtol(threads_text, &end, 10);
    if (!*threads_text || *end || t < 32 || t > 1024 || t % 32) {
      h5fz_cli_error(cmd, "bad --threads '%s' (a multiple of 32 in [32, 1024])", threads_text);
      free(text);
      return H5FZ_CLI_USAGE;
    }
    threads = (int)t;
  }
  if (padded) flags |= H5FZ_CODEGEN_PADDED_PLANES;
  if (warp_fused) flags |= H5FZ_CODEGEN_WARP_FUSED;

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
  size_t smem_encode = h5fz_codegen_encode_smem(spec.ops, spec.n_ops, spec.subchunk_bytes, smem);
  printf("/* h5fz codegen: %s; %d threads per block; dynamic shared memory %zu bytes "
         "per block (encode kernel: %zu) */\n",
         canonical, threads, smem, smem_encode);
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
               "Then the named chains a spec may use after the bound (e.g. \"abs=1e-3 ratio\")\n"
               "with the ops they stand for, and the default chain (a bound alone).\n"
               "\n"
               "options:\n"
               "  --json    print a JSON array of {id, name, kind, summary} (the op table only)\n");
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
    printf("%-4s %-14s %-10s %s\n", "id", "name", "kind", "summary");
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
      printf("%-4u %-14s %-10s %s\n", id, name, kind, summary ? summary : "");
    }
  }
  if (json) {
    printf("\n]\n");
    return H5FZ_CLI_OK;
  }
  /* the named chains and the default from the library's tables (fusion/format/h5fz_optable.c) */
  char chain[160];
  const char *summary_of;
  printf("\nnamed chains (spec text after the bound, e.g. \"abs=1e-3 ratio\"):\n");
  for (size_t i = 0; h5fz_named_chain_at(i, &name, &summary_of, chain, sizeof chain) == H5FZ_OK; i++)
    printf("  %-8s %s\n  %-8s (%s)\n", name, chain, "", summary_of);
  if (h5fz_default_chain_text(chain, sizeof chain) == H5FZ_OK)
    printf("default chain (a bound alone, e.g. \"abs=1e-3\"): %s\n", chain);
  return H5FZ_CLI_OK;
}
