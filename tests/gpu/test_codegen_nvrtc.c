/*
 * test_codegen_nvrtc.c - generated kernels compile with NVRTC for every
 * architecture the planner's registry knows, for each chain and type, so
 * codegen cannot rot on machines without a GPU. Needs libnvrtc only;
 * skips (77) when it is absent. Architectures this NVRTC cannot target are
 * listed and skipped (the planner refuses them the same way). The default
 * chain is compiled for every arch; the other chains (which differ only in
 * the generated glue) for the first arch, to keep CI fast. An argument
 * keeps only the compiles whose line contains it (e.g. `warp-fused`).
 * Last, the ratio chain on the described H200 exactly as the executor
 * generates it (h5fz_kernel_config_default): the hopper class's entropy_*
 * geometry for the encode, the class's own for the decode.
 * Run as: test_codegen_nvrtc [ONLY] [DEVICES_DIR]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../planner/h5fz_planner.h"
#include "h5fz.h"
#include "h5fz_codegen.h"
#include "h5fz_device_query.h"
#include "h5fz_cuda.h"
#include "h5fz_jit.h"
#include "h5fz_kernel_source.h"

static const char *const chains[] = {"",
                                     "delta negabinary bitshuffle rze",
                                     "zigzag bitshuffle rze",
                                     "delta zigzag rze",
                                     "delta zigzag raw",
                                     "delta zigzag bitpack",
                                     "lorenzo zigzag bitshuffle rze",
                                     "lorenzo_nd zigzag bitshuffle rze",
                                     "lorenzo_nd negabinary rze",
                                     "lorenzo_nd zigzag bitpack",
                                     "ratio",
                                     "lorenzo_nd zigzag huff",
                                     "lorenzo_nd raw"};

static int nvrtc_supports(const h5fz_device_desc *d, int arch)
{
  for (int i = 0; i < d->n_nvrtc_archs; i++)
    if (d->nvrtc_archs[i] == arch) return 1;
  return 0;
}

/* argv[1], when given: only the compiles whose line contains it */
static const char *only;

/* Compile src for arch, print one line (what, then the image size) and
 * count it; 1 when it compiled (or was left out by `only`). */
static int compile_one(const char *src, const char *arch, const char *what, int *passed, int *failed)
{
  if (only && !strstr(what, only)) return 1;
  void *img = NULL;
  size_t size = 0;
  char *log = NULL;
  int rc = h5fz_jit_compile(src, arch, &img, &size, &log);
  printf("%s %s %zu bytes\n", rc ? "FAIL" : "ok  ", what, size);
  if (rc) printf("%s\n%s\n", h5fz_last_error(), log ? log : "");
  rc ? (*failed)++ : (*passed)++;
  free(img);
  free(log);
  return !rc;
}

/* The ratio chain planned on the described H200 (devices/h200.txt) with the
 * registry's hopper class: the one-slot encode takes the class's
 * entropy_threads_per_block / entropy_regs_per_thread, the decode kernels
 * the class's geometry (1024 threads for 64 KiB sub-chunks, 64 registers);
 * both appear in the generated source, which compiles for sm_90. */
static void executor_geometry(const char *devices, const h5fz_device_desc *host, const h5fz_registry *reg, int *passed,
                              int *failed)
{
  char path[1024], err[256];
  h5fz_device_desc dev;
  snprintf(path, sizeof path, "%s/h200.txt", devices);
  if (h5fz_device_load(path, &dev, err, sizeof err)) {
    printf("FAIL %s: %s\n", path, err);
    (*failed)++;
    return;
  }
  h5fz_spec s;
  h5fz_plan plan;
  h5fz_plan_options opts;
  h5fz_plan_options_default(&opts);
  if (h5fz_spec_parse("abs=1e-3 ratio dtype=f32", &s) ||
      h5fz_plan_make(&dev, reg, s.ops, s.n_ops, &opts, &plan) != H5FZ_OK || strcmp(plan.klass, "hopper")) {
    printf("FAIL the ratio chain on the H200: not planned to hopper (%s)\n", h5fz_last_error());
    (*failed)++;
    return;
  }
  h5fz_kernel_config kc = h5fz_kernel_config_default(&s, &plan, &dev);
  const h5fz_tuning *t = &plan.tuning;
  int want_threads = t->entropy_threads_per_block ? t->entropy_threads_per_block : h5fz_plan_block_threads(&plan, s.subchunk_bytes);
  int want_regs = t->entropy_regs_per_thread ? t->entropy_regs_per_thread : t->regs_per_thread;
  int want_dec = h5fz_plan_block_threads(&plan, s.subchunk_bytes);
  printf("%s the ratio chain on the H200: encode %d threads %d registers (want %d, %d), decode %d threads %d "
         "registers (want %d, %d)\n",
         kc.threads == want_threads && kc.regs == want_regs && kc.dec_threads == want_dec &&
                 kc.dec_regs == t->regs_per_thread && want_dec != want_threads
             ? "ok  "
             : "FAIL",
         kc.threads, kc.regs, want_threads, want_regs, kc.dec_threads, kc.dec_regs, want_dec, t->regs_per_thread);
  if (kc.threads != want_threads || kc.regs != want_regs || kc.dec_threads != want_dec ||
      kc.dec_regs != t->regs_per_thread || want_dec == want_threads)
    (*failed)++;
  char *src = NULL;
  size_t smem = 0;
  if (h5fz_kernel_source(&plan, &kc, &src, &smem)) {
    printf("FAIL the ratio chain's executor source: %s\n", h5fz_last_error());
    (*failed)++;
    return;
  }
  char enc_line[64], dec_line[64];
  snprintf(enc_line, sizeof enc_line, "#define THREADS %du\n", kc.threads);
  snprintf(dec_line, sizeof dec_line, "#define DEC_THREADS %du\n", kc.dec_threads);
  if (!strstr(src, enc_line) || !strstr(src, dec_line) ||
      !strstr(src, "__launch_bounds__(DEC_THREADS, DEC_MIN_BLOCKS)\nh5fz_decode(")) {
    printf("FAIL the ratio chain's executor source lacks '%.30s', '%.30s' or the decode's own bounds\n", enc_line,
           dec_line);
    (*failed)++;
  }
  if (nvrtc_supports(host, 90)) compile_one(src, "sm_90", "executor form: abs=1e-3 ratio dtype=f32 (hopper)", passed, failed);
  free(src);
}

int main(int argc, char **argv)
{
  only = argc > 1 ? argv[1] : NULL;
  const char *why;
  if (!h5fz_nvrtc_get(&why)) {
    printf("SKIP: %s\n", why);
    return 77;
  }
  h5fz_device_desc host;
  char err[256];
  h5fz_device_none(&host, "test");
  if (h5fz_nvrtc_query(&host, err, sizeof err) || !host.nvrtc_known) {
    printf("SKIP: NVRTC query failed: %s\n", err);
    return 77;
  }
  h5fz_registry reg;
  if (h5fz_registry_load_default(NULL, &reg, err, sizeof err)) {
    printf("FAIL: registry: %s\n", err);
    return 1;
  }
  /* every arch the registry names: cubin archs, and the PTX classes' min arch */
  char archs[64][24];
  int n_archs = 0;
  for (int c = 0; c < reg.n_classes; c++) {
    const h5fz_kernel_class *k = &reg.classes[c];
    if (k->target == H5FZ_TARGET_CUBIN)
      for (int a = 0; a < k->n_archs && n_archs < 64; a++) {
        if (!nvrtc_supports(&host, k->archs[a])) {
          printf("skip sm_%d (class %s): this NVRTC %d.%d cannot target it\n", k->archs[a], k->name, host.nvrtc_major,
                 host.nvrtc_minor);
          continue;
        }
        snprintf(archs[n_archs++], 24, "sm_%d", k->archs[a]);
      }
    if (k->target == H5FZ_TARGET_PTX && n_archs < 64) {
      int a = k->min_arch;
      while (a < 200 && !nvrtc_supports(&host, a)) a++;
      if (a < 200) snprintf(archs[n_archs++], 24, "compute_%d", a);
    }
  }
  int passed = 0, failed = 0;
  /* flags 1: the padded-planes form (hopper, blackwell), for the chains with bitshuffle */
  for (unsigned flags = 0; flags < 2u; flags++)
    for (size_t c = 0; c < sizeof chains / sizeof *chains; c++)
      for (int f64 = 0; f64 < 2; f64++) {
        char text[256];
        if (flags && c != 0 && !strstr(chains[c], "bitshuffle")) continue; /* chain 0: the default, with it */
        snprintf(text, sizeof text, "abs=1e-3 %s dtype=%s", chains[c], f64 ? "f64" : "f32");
        h5fz_spec s;
        char *src = NULL;
        size_t smem = 0;
        if (h5fz_spec_parse(text, &s) || h5fz_codegen(&s, 512, flags, &src, &smem)) {
          printf("FAIL %s: %s\n", text, h5fz_last_error());
          failed++;
          continue;
        }
        /* the default chain and lorenzo_nd (which adds chunk-level kernels) for every arch */
        int every_arch = !flags && (c == 0 || !strcmp(chains[c], "lorenzo_nd zigzag bitshuffle rze"));
        for (int a = 0; a < (every_arch ? n_archs : 1); a++) {
          char what[2048];
          snprintf(what, sizeof what, "%-40s %-12s%s", text, archs[a], flags ? " padded" : "");
          compile_one(src, archs[a], what, &passed, &failed);
        }
        free(src);
      }
  /* each GPU class's own configuration, as the executor compiles it: its
   * threads per block, register cap (as blocks per 64K-register SM) and
   * features, for each cubin arch it builds for (hopper: 256 threads,
   * padded planes, sm_90), for the default chain on both types and the
   * fast chain on float32 (the chains with warp-fused kernels) */
  static const char *const class_specs[] = {"abs=1e-3 dtype=f32", "abs=1e-3 dtype=f64",
                                            "abs=1e-3 dtype=f32 lorenzo_nd zigzag bitshuffle rze",
                                            "abs=1e-3 dtype=f64 lorenzo_nd zigzag bitshuffle rze",
                                            "abs=1e-3 delta zigzag bitpack dtype=f32"};
  for (int c = 0; c < reg.n_classes; c++) {
    const h5fz_kernel_class *k = &reg.classes[c];
    if (k->target != H5FZ_TARGET_CUBIN) continue;
    const h5fz_tuning *t = &k->tuning;
    unsigned flags = t->features & H5FZ_FEAT_PADDED_PLANES ? H5FZ_CODEGEN_PADDED_PLANES : 0u;
    if (t->features & H5FZ_FEAT_WARP_FUSED) flags |= H5FZ_CODEGEN_WARP_FUSED;
    if (t->regs_per_thread > 0) flags |= H5FZ_CODEGEN_MIN_BLOCKS(65536 / (t->threads_per_block * t->regs_per_thread));
    /* the default chain, lorenzo_nd's (warp-fused kernels for its 1-D predictor) and the fast chain's */
    for (int cs = 0; cs < 5; cs++) {
      h5fz_spec s;
      char *src = NULL;
      size_t smem = 0;
      if (h5fz_spec_parse(class_specs[cs], &s) || h5fz_codegen(&s, t->threads_per_block, flags, &src, &smem)) {
        printf("FAIL class %s: %s\n", k->name, h5fz_last_error());
        failed++;
        continue;
      }
      if (smem + 272u > (size_t)t->smem_per_block) {
        printf("FAIL class %s: the kernel needs %zu + 272 bytes of shared memory, the registry says %d\n", k->name,
               smem, t->smem_per_block);
        failed++;
      }
      for (int a = 0; a < k->n_archs; a++) {
        if (!nvrtc_supports(&host, k->archs[a])) continue;
        char arch[24];
        snprintf(arch, sizeof arch, "sm_%d", k->archs[a]);
        char what[2048];
        int wf = (flags & H5FZ_CODEGEN_WARP_FUSED) ? h5fz_codegen_warp_fused_chain(&s) : 0;
        const char *wf_name =
            wf == H5FZ_WF_CHAIN_FAST ? H5FZ_KERNEL_ENCODE_WFP "(" : H5FZ_KERNEL_ENCODE_WF "(";
        if (wf && !strstr(src, wf_name)) {
          printf("FAIL class %s: no warp-fused kernels in the source of %s\n", k->name, class_specs[cs]);
          failed++;
        }
        snprintf(what, sizeof what, "class %-10s %s %-52s %d threads%s%s", k->name, arch, class_specs[cs],
                 t->threads_per_block, flags & H5FZ_CODEGEN_PADDED_PLANES ? ", padded" : "", wf ? ", warp-fused" : "");
        compile_one(src, arch, what, &passed, &failed);
      }
      free(src);
    }
  }
  if (argc > 2) executor_geometry(argv[2], &host, &reg, &passed, &failed);
  if (!passed) failed++;
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
