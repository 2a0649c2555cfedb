/*
 * test_embedded_kernels.c - the kernels embedded at build time
 * (fusion/h5fz_embed_kernels.c) are found for the devices the planner
 * describes, exactly for their source and never for another, and are the
 * modules NVRTC compiles from that source. Needs no GPU; skips (77) when
 * this build embeds nothing (no NVRTC, or H5FZ_EMBED_KERNELS=OFF).
 *
 * For each device description of planner/devices/ with a GPU, and each
 * chain of fusion/gpu/embedded_chains.txt, float32 and float64: plan it as the
 * executor does (this host's NVRTC, driver not refusing), generate the
 * source as the executor does, and require a hit. Then: a changed source,
 * another plan digest, another arch and H5FZ_JIT_EMBEDDED=0 all miss; every
 * entry inflates to its size and is a cubin (ELF) or PTX as its arch says;
 * and a few entries equal a fresh NVRTC compile of their source.
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
#include "h5fz_jit_digest.h"
#include "h5fz_jit_embedded.h"
#include "h5fz_kernel_source.h"
#include "h5fz_settings.h"

static int failures;

#define CHECK(cond, ...)                                                                                               \
  do {                                                                                                                 \
    if (!(cond)) {                                                                                                     \
      printf("FAIL: " __VA_ARGS__);                                                                                    \
      printf("\n");                                                                                                    \
      failures++;                                                                                                      \
    }                                                                                                                  \
  } while (0)

static const char *const devices[] = {"h200", "h100", "a100", "b200", "rtx4090", "t4"};

/* 1 when a device of compute capability cc (90 for 9.0) is one the build
 * embedded for: archs is "all" or a list such as "90,80". */
static int arch_embedded(const char *archs, int cc)
{
  if (!strcmp(archs, "all")) return 1;
  for (const char *p = archs; *p;) {
    char *end;
    long a = strtol(p, &end, 10);
    if (end == p) return 0;
    if (a == cc) return 1;
    p = *end == ',' ? end + 1 : end;
  }
  return 0;
}

int main(int argc, char **argv)
{
  if (argc != 4) {
    fprintf(stderr, "usage: test_embedded_kernels SOURCE_DIR CHAINS_FILE ARCHS\n");
    return 2;
  }
  const char *archs = argv[3];
  size_t n_table = 0;
  int tmaj = 0, tmin = 0;
  const h5fz_embedded_module *table = h5fz_embedded_modules(&n_table, &tmaj, &tmin);
  if (!n_table) {
    if (strcmp(archs, "none")) {
      printf("FAIL: the build embedded for %s, but the table is empty\n", archs);
      return 1;
    }
    printf("SKIP: this build embeds no kernels (no NVRTC at build time, H5FZ_EMBED_KERNELS=OFF, or "
           "H5FZ_EMBED_ARCHS=native on a machine without a GPU)\n");
    return 77;
  }
  if (!strcmp(archs, "none")) {
    printf("FAIL: the build says it embedded nothing, but the table has %zu modules\n", n_table);
    return 1;
  }
  printf("%zu embedded modules, NVRTC %d.%d\n", n_table, tmaj, tmin);
  /* every entry inflates, and is what its arch says */
  for (size_t i = 0; i < n_table; i++) {
    CHECK(strlen(table[i].key) == 2 * H5FZ_SHA256_BYTES, "entry %zu key '%s'", i, table[i].key);
    for (size_t j = 0; j < i; j++) CHECK(strcmp(table[i].key, table[j].key), "entries %zu and %zu share a key", j, i);
  }
  /* this host's NVRTC, as the executor's planner sees it (NVRTC may be absent at run time) */
  h5fz_device_desc host;
  char err[512];
  h5fz_device_none(&host, "test");
  int have_nvrtc = h5fz_nvrtc_query(&host, err, sizeof err) == 0 && host.nvrtc_known;
  if (!have_nvrtc) {
    printf("SKIP: no NVRTC here to plan with: %s\n", err);
    return 77;
  }
  FILE *cf = fopen(argv[2], "r");
  if (!cf) {
    printf("FAIL: cannot read %s\n", argv[2]);
    return 1;
  }
  char chains[64][200];
  int n_chains = 0;
  char line[256];
  while (n_chains < 64 && fgets(line, sizeof line, cf)) {
    line[strcspn(line, "\r\n")] = '\0';
    if (!line[0] || line[0] == '#') continue;
    snprintf(chains[n_chains++], 200, "%.199s", strcmp(line, "default") ? line : "");
  }
  fclose(cf);
  h5fz_registry reg;
  if (h5fz_registry_parse(h5fz_registry_default_text(), "embedded", &reg, err, sizeof err)) {
    printf("FAIL: registry: %s\n", err);
    return 1;
  }
  int hits = 0, compared = 0, first_device = 1;
  for (size_t d = 0; d < sizeof devices / sizeof *devices; d++) {
    char path[4200];
    h5fz_device_desc dev;
    snprintf(path, sizeof path, "%s/planner/devices/%s.txt", argv[1], devices[d]);
    if (h5fz_device_load(path, &dev, err, sizeof err)) {
      printf("FAIL: %s\n", err);
      failures++;
      continue;
    }
    if (!arch_embedded(archs, dev.cc_major * 10 + dev.cc_minor)) {
      printf("  %s (sm_%d%d): not an architecture this build embedded for (%s), left out\n", devices[d],
             dev.cc_major, dev.cc_minor, archs);
      continue;
    }
    dev.nvrtc_known = 1;
    dev.nvrtc_major = host.nvrtc_major;
    dev.nvrtc_minor = host.nvrtc_minor;
    dev.n_nvrtc_archs = host.n_nvrtc_archs;
    memcpy(dev.nvrtc_archs, host.nvrtc_archs, sizeof dev.nvrtc_archs);
    dev.driver_version = 0; /* the described driver may predate this NVRTC; the load decides */
    int dev_hits = 0;
    for (int c = 0; c < n_chains; c++)
      for (int f64 = 0; f64 < 2; f64++) {
        char text[300];
        h5fz_spec s;
        snprintf(text, sizeof text, "abs=1e-3 %.200s dtype=%s", chains[c], f64 ? "f64" : "f32");
        if (h5fz_spec_parse(text, &s)) {
          printf("FAIL: %s: %s\n", text, h5fz_last_error());
          failures++;
          continue;
        }
        h5fz_plan plan;
        h5fz_plan_options opts;
        h5fz_plan_options_default(&opts);
        if (h5fz_plan_make(&dev, &reg, s.ops, s.n_ops, &opts, &plan) || plan.target == H5FZ_TARGET_CPU) {
          printf("  %s: no GPU plan on this NVRTC (%s), nothing to look up\n", devices[d], text);
          continue;
        }
        h5fz_kernel_config kc = h5fz_kernel_config_default(&s, &plan, &dev);
        char *src = NULL;
        size_t smem = 0, size = 0;
        if (h5fz_kernel_source(&plan, &kc, &src, &smem)) {
          printf("FAIL: codegen %s: %s\n", text, h5fz_last_error());
          failures++;
          continue;
        }
        void *img = h5fz_embedded_find(src, plan.arch_name, plan.digest, &size);
        CHECK(img != NULL, "%s %s %s: not embedded", devices[d], plan.arch_name, text);
        if (img) {
          hits++;
          dev_hits++;
          int cubin = !strncmp(plan.arch_name, "sm_", 3);
          CHECK(cubin ? size > 4 && !memcmp(img, "\177ELF", 4) : strstr((char *)img, ".version") != NULL,
                "%s %s: the image is not a %s", plan.arch_name, text, cubin ? "cubin" : "PTX module");
          /* the same source for another arch, another digest, or changed by one byte: misses */
          void *miss = h5fz_embedded_find(src, "sm_52", plan.digest, &size);
          CHECK(!miss, "%s: found for sm_52", text);
          free(miss);
          miss = h5fz_embedded_find(src, plan.arch_name, plan.digest ^ 1u, &size);
          CHECK(!miss, "%s: found for another plan digest", text);
          free(miss);
          size_t n = strlen(src);
          char *other = malloc(n + 16);
          memcpy(other, src, n);
          memcpy(other + n, "\n// x\n", 7);
          miss = h5fz_embedded_find(other, plan.arch_name, plan.digest, &size);
          CHECK(!miss, "%s: found for a changed source", text);
          free(miss);
          free(other);
          /* the embedded module is NVRTC's module of this source: compare a few */
          if (first_device && (c == 0 || c == n_chains - 1)) {
            void *fresh = NULL;
            size_t fresh_n = 0, emb_n = 0;
            void *emb = h5fz_embedded_find(src, plan.arch_name, plan.digest, &emb_n);
            if (h5fz_jit_compile(src, plan.arch_name, &fresh, &fresh_n, NULL) == 0) {
              CHECK(emb && fresh_n == emb_n && !memcmp(fresh, emb, emb_n),
                    "%s %s: the embedded module (%zu bytes) differs from NVRTC's (%zu)", plan.arch_name, text, emb_n,
                    fresh_n);
              compared++;
            }
            free(fresh);
            free(emb);
          }
          free(img);
        }
        if (c == 0 && !f64) {
          /* read once per process: the reload makes this process's next look-up see it */
          setenv("H5FZ_JIT_EMBEDDED", "0", 1);
          h5fz_settings_reload();
          void *off = h5fz_embedded_find(src, plan.arch_name, plan.digest, &size);
          CHECK(!off, "H5FZ_JIT_EMBEDDED=0 still finds %s", text);
          free(off);
          unsetenv("H5FZ_JIT_EMBEDDED");
          h5fz_settings_reload();
        }
        free(src);
      }
    printf("%-8s %d of %d chain/type modules embedded\n", devices[d], dev_hits, 2 * n_chains);
    first_device = 0;
  }
  CHECK(hits > 0, "no lookup hit at all");
  CHECK(compared > 0, "no embedded module compared with a fresh compile");
  printf("%d hits, %d compared with NVRTC, %d failures\n", hits, compared, failures);
  return failures ? 1 : 0;
}
