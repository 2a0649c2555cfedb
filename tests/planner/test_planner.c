/*
 * test_planner.c - the planner on described devices (H200, H100, A100,
 * V100, T4, RTX 4090, B200, none) and its parts: registry, descriptions,
 * calibration, route, digest, formats, and the real NVRTC/driver of this
 * host. Run as: test_planner DEVICES_DIR TEST_NAME
 */
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "h5fz_device_query.h"
#include "h5fz_fail.h"
#include "h5fz_planner.h"
#include "test_util.h"

static const char *g_dir;
/* quant, delta, zigzag, bitshuffle, rze: the default PFPL-style chain */
static const uint8_t k_ops[] = {1, 10, 11, 13, 30};
#define N_OPS (sizeof k_ops / sizeof k_ops[0])

static void load_device(const char *name, h5fz_device_desc *dev)
{
  char path[1024], err[512];
  int r;
  snprintf(path, sizeof path, "%s/%s.txt", g_dir, name);
  r = h5fz_device_load(path, dev, err, sizeof err);
  CHECK(r == H5FZ_OK, "load %s: %s", path, err);
}

static h5fz_registry g_reg;

static void load_registry(void)
{
  char err[512];
  int r = h5fz_registry_parse(h5fz_registry_default_text(), "embedded", &g_reg, err, sizeof err);
  CHECK(r == H5FZ_OK, "embedded registry: %s", err);
}

static int plan_for(const h5fz_device_desc *dev, const uint8_t *ops, size_t n_ops, h5fz_plan *p)
{
  return h5fz_plan_make(dev, &g_reg, ops, n_ops, NULL, p);
}

/* The reason the plan gives for refusing `klass`, or "" if not refused. */
static const char *refusal(const h5fz_plan *p, const char *klass)
{
  int i;
  for (i = 0; i < p->n_refused; i++)
    if (strcmp(p->refused[i].klass, klass) == 0) return p->refused[i].reason;
  return "";
}

/* A device plans to `klass`/`arch` with the given peak HBM GB/s. */
static void expect_plan(const char *dev_name, const char *klass, const char *arch, double hbm_GBps, h5fz_plan *p)
{
  h5fz_device_desc dev;
  load_device(dev_name, &dev);
  CHECK(plan_for(&dev, k_ops, N_OPS, p) == H5FZ_OK, "plan %s", dev_name);
  CHECK_STR(p->klass, klass);
  CHECK_STR(p->arch_name, arch);
  CHECK_NEAR(p->roofline.hbm_GBps, hbm_GBps, 0.03);
  CHECK(strlen(p->digest_hex) == 16, "digest '%s'", p->digest_hex);
}

/* Every GPU plan: route small chunks to the CPU, large ones to the GPU,
 * and the crossover is where the model's two times meet. */
static void expect_gpu_route(const h5fz_plan *p)
{
  double e2e_at, e2e_below;
  CHECK(p->crossover_bytes > 4096 && p->crossover_bytes < (64u << 20), "crossover %llu",
        (unsigned long long)p->crossover_bytes);
  CHECK(h5fz_plan_route_for_chunk(p, 4096) == H5FZ_EXEC_CPU, "4 KiB -> cpu");
  CHECK(h5fz_plan_route_for_chunk(p, 64u << 20) == H5FZ_EXEC_GPU, "64 MiB -> gpu");
  CHECK(h5fz_plan_route_for_chunk(p, p->crossover_bytes) == H5FZ_EXEC_GPU &&
            h5fz_plan_route_for_chunk(p, p->crossover_bytes - 1) == H5FZ_EXEC_CPU,
        "route flips at the crossover");
  h5fz_plan_predict(p, p->crossover_bytes, NULL, &e2e_at);
  h5fz_plan_predict(p, p->crossover_bytes - 1, NULL, &e2e_below);
  CHECK(e2e_at > p->options.cpu_GBps && e2e_below <= p->options.cpu_GBps,
        "e2e %.4f/%.4f GB/s around the crossover vs cpu %.2f", e2e_at, e2e_below, p->options.cpu_GBps);
  CHECK(p->roofline.predicted_e2e_GBps[0] < p->roofline.predicted_e2e_GBps[2], "e2e grows with the chunk");
  CHECK(p->roofline.predicted_e2e_GBps[2] < p->roofline.pcie_GBps, "e2e below the PCIe link");
}

static void test_h200(void)
{
  h5fz_plan p;
  expect_plan("h200", "hopper", "sm_90", 4800.0, &p);
  CHECK(p.target == H5FZ_TARGET_CUBIN, "cubin");
  CHECK(p.n_refused == 1, "1 refusal, got %d", p.n_refused);
  CHECK_STR(refusal(&p, "blackwell"), "needs sm_100 or sm_120, device is sm_90");
  CHECK_NEAR(p.roofline.pcie_GBps, 63.0, 0.01); /* gen 5 x16 */
  /* 0.8 * 4800 / (1 + 1/4) */
  CHECK_NEAR(p.roofline.predicted_kernel_GBps, 3072.0, 0.01);
  CHECK(p.tuning.threads_per_block == 256 && p.tuning.subchunk_bytes == 16384 && p.tuning.loads_per_thread == 16,
        "tuning measured on the H200 (docs/planner.md)");
  CHECK(p.tuning.features == (H5FZ_FEAT_SHFL | H5FZ_FEAT_PADDED_PLANES | H5FZ_FEAT_WARP_FUSED),
        "the generated kernels use warp shuffles and ballots and the padded bitshuffle planes");
  CHECK(p.tuning.smem_per_block == 52080, "shared memory with the padded planes: %d", p.tuning.smem_per_block);
  /* registers: 65536 / (256 x 64) = 4 blocks per SM; shared memory: 233472 / (52080 + 1024) = 4 */
  CHECK(p.roofline.blocks_per_sm == 4, "blocks/SM %d", p.roofline.blocks_per_sm);
  expect_gpu_route(&p);
}

static void test_h100(void)
{
  h5fz_plan p;
  expect_plan("h100", "hopper", "sm_90", 3350.0, &p);
  CHECK_STR(refusal(&p, "blackwell"), "needs sm_100 or sm_120, device is sm_90");
  expect_gpu_route(&p);
}

static void test_a100(void)
{
  h5fz_plan p;
  expect_plan("a100", "ampere", "sm_80", 2039.0, &p);
  CHECK(p.n_refused == 2, "2 refusals, got %d", p.n_refused);
  CHECK_STR(refusal(&p, "hopper"), "needs sm_90, device is sm_80");
  CHECK_NEAR(p.roofline.pcie_GBps, 31.5, 0.01); /* gen 4 x16 */
  expect_gpu_route(&p);
}

static void test_v100(void)
{
  h5fz_plan p;
  h5fz_device_desc dev;
  static const int cuda13[] = {75, 80, 86, 87, 88, 89, 90, 100, 103, 110, 120, 121};
  size_t i;
  expect_plan("v100", "portable", "compute_70", 900.0, &p);
  CHECK(p.target == H5FZ_TARGET_PTX, "ptx");
  CHECK(p.n_refused == 3, "3 refusals, got %d", p.n_refused);
  CHECK_STR(refusal(&p, "hopper"), "needs sm_90, device is sm_70");
  CHECK_STR(refusal(&p, "ampere"), "needs sm_80, sm_86 or sm_89, device is sm_70");
  CHECK_NEAR(p.roofline.pcie_GBps, 15.75, 0.01); /* gen 3 x16 */
  expect_gpu_route(&p);
  /* CUDA 13's NVRTC dropped Volta: nothing left but the CPU */
  load_device("v100", &dev);
  dev.nvrtc_major = 13;
  dev.nvrtc_minor = 0;
  dev.n_nvrtc_archs = (int)(sizeof cuda13 / sizeof cuda13[0]);
  for (i = 0; i < sizeof cuda13 / sizeof cuda13[0]; i++) dev.nvrtc_archs[i] = cuda13[i];
  dev.driver_version = 13000;
  CHECK(plan_for(&dev, k_ops, N_OPS, &p) == H5FZ_OK, "plan");
  CHECK_STR(p.klass, "cpu");
  CHECK_STR(refusal(&p, "portable"), "NVRTC 13.0 has no virtual arch in compute_70..compute_70 (its "
                                     "lowest is compute_75)");
  /* an old driver cannot JIT PTX written by a newer NVRTC */
  load_device("v100", &dev);
  dev.driver_version = 12020;
  CHECK(plan_for(&dev, k_ops, N_OPS, &p) == H5FZ_OK, "plan");
  CHECK_STR(p.klass, "cpu");
  CHECK_STR(refusal(&p, "portable"), "driver 12.2 cannot JIT PTX from NVRTC 12.8 (needs driver >= 12.8)");
}

static void test_t4(void)
{
  h5fz_plan p;
  expect_plan("t4", "portable", "compute_75", 320.0, &p);
  CHECK_STR(refusal(&p, "ampere"), "needs sm_80, sm_86 or sm_89, device is sm_75");
  /* 1024 threads per SM: two 512-thread blocks */
  CHECK(p.roofline.blocks_per_sm == 1 || p.roofline.blocks_per_sm == 2, "blocks/SM %d", p.roofline.blocks_per_sm);
  expect_gpu_route(&p);
}

static void test_rtx4090(void)
{
  h5fz_plan p;
  expect_plan("rtx4090", "ampere", "sm_89", 1008.0, &p);
  CHECK_STR(refusal(&p, "hopper"), "needs sm_90, device is sm_89");
  CHECK(p.roofline.blocks_per_sm == 2, "1536 threads/SM -> 2 blocks, got %d", p.roofline.blocks_per_sm);
  expect_gpu_route(&p);
}

static void test_b200(void)
{
  h5fz_plan p, h;
  h5fz_device_desc dev;
  static const int cuda124[] = {50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 89, 90};
  size_t i;
  expect_plan("b200", "blackwell", "sm_100", 8000.0, &p);
  CHECK(p.n_refused == 0, "no refusal, got %d", p.n_refused);
  expect_gpu_route(&p);
  /* with CUDA 12.4's NVRTC (no sm_100) the driver JITs compute_90 PTX */
  load_device("b200", &dev);
  dev.nvrtc_major = 12;
  dev.nvrtc_minor = 4;
  dev.n_nvrtc_archs = (int)(sizeof cuda124 / sizeof cuda124[0]);
  for (i = 0; i < sizeof cuda124 / sizeof cuda124[0]; i++) dev.nvrtc_archs[i] = cuda124[i];
  CHECK(plan_for(&dev, k_ops, N_OPS, &h) == H5FZ_OK, "plan");
  CHECK_STR(h.klass, "portable");
  CHECK_STR(h.arch_name, "compute_90");
  CHECK_STR(refusal(&h, "blackwell"), "NVRTC 12.4 cannot target sm_100 (supports sm_50..sm_90)");
  CHECK_STR(refusal(&h, "hopper"), "needs sm_90, device is sm_100");
  CHECK(strcmp(h.digest_hex, p.digest_hex) != 0, "digest follows the class");
}

static void test_none(void)
{
  h5fz_plan p;
  h5fz_device_desc dev;
  const char *gpu[] = {"blackwell", "hopper", "ampere", "portable"};
  size_t i;
  load_device("none", &dev);
  CHECK(!dev.present, "absent");
  CHECK(plan_for(&dev, k_ops, N_OPS, &p) == H5FZ_OK, "plan");
  CHECK_STR(p.klass, "cpu");
  CHECK(p.target == H5FZ_TARGET_CPU && p.arch_name[0] == '\0', "cpu target");
  CHECK(p.n_refused == 4, "4 refusals, got %d", p.n_refused);
  for (i = 0; i < 4; i++) CHECK_STR(refusal(&p, gpu[i]), "no GPU: no NVIDIA GPU on this host (described)");
  CHECK(p.crossover_bytes == UINT64_MAX, "never the GPU");
  CHECK(h5fz_plan_route_for_chunk(&p, 1ull << 40) == H5FZ_EXEC_CPU, "cpu");
  CHECK(p.roofline.hbm_GBps == 0.0 && p.roofline.pcie_GBps == 0.0, "no bw");
  /* the "none" device built in code says the same */
  h5fz_device_none(&dev, "libcuda.so.1 not found: no NVIDIA driver");
  CHECK(plan_for(&dev, k_ops, N_OPS, &p) == H5FZ_OK, "plan");
  CHECK_STR(refusal(&p, "hopper"), "no GPU: libcuda.so.1 not found: no NVIDIA driver");
}

/* A spec with an op the GPU classes lack (99: none has it) goes to the CPU. */
static void test_ops(void)
{
  static const uint8_t lorenzo[] = {1, 99, 11, 13, 30};
  h5fz_device_desc dev;
  h5fz_plan p;
  load_device("h200", &dev);
  CHECK(plan_for(&dev, lorenzo, 5, &p) == H5FZ_OK, "plan");
  CHECK_STR(p.klass, "cpu");
  CHECK_STR(refusal(&p, "hopper"), "op 99 not supported by the class");
  CHECK_STR(refusal(&p, "portable"), "op 99 not supported by the class");
  CHECK_STR(refusal(&p, "blackwell"), "needs sm_100 or sm_120, device is sm_90");
}

static void test_driver(void)
{
  h5fz_device_desc dev;
  h5fz_plan p;
  load_device("h100", &dev);
  dev.driver_version = 11040;
  CHECK(plan_for(&dev, k_ops, N_OPS, &p) == H5FZ_OK, "plan");
  CHECK_STR(refusal(&p, "hopper"), "driver 11.4 too old: the class needs 11.8");
  /* cubins of NVRTC 12.8 load on any 12.x driver (minor version compat) */
  dev.driver_version = 12020;
  CHECK(plan_for(&dev, k_ops, N_OPS, &p) == H5FZ_OK, "plan");
  CHECK_STR(p.klass, "hopper");
  dev.nvrtc_major = 13;
  CHECK(plan_for(&dev, k_ops, N_OPS, &p) == H5FZ_OK, "plan");
  CHECK_STR(refusal(&p, "hopper"), "driver 12.2 cannot load cubins from NVRTC 13.8");
}

static const char *k_big_registry = "start = big\n"
                                    "[big]\ntarget = cubin\narchs = sm_80\nthreads_per_block = 1024\n"
                                    "subchunk_bytes = 65536\nloads_per_thread = 4\nload_bytes = 16\n"
                                    "regs_per_thread = 32\nsmem_per_block = 200000\nops = all\n"
                                    "fallback = fat\n"
                                    "[fat]\ntarget = cubin\narchs = 80\nthreads_per_block = 1024\n"
                                    "subchunk_bytes = 16384\nloads_per_thread = 4\nload_bytes = 4\n"
                                    "regs_per_thread = 128\nsmem_per_block = 16384\nops = all\nfallback = tma\n"
                                    "[tma]\ntarget = ptx\nmin_arch = 70\nthreads_per_block = 256\n"
                                    "subchunk_bytes = 4096\nloads_per_thread = 1\nload_bytes = 16\n"
                                    "regs_per_thread = 32\nsmem_per_block = 8192\nfeatures = tma\n"
                                    "ops = all\nfallback = host\n"
                                    "[host]\ntarget = cpu\nsubchunk_bytes = 4096\nops = all\n";

static void test_resources(void)
{
  h5fz_registry reg;
  h5fz_device_desc dev;
  h5fz_plan p;
  char err[256];
  CHECK(h5fz_registry_parse(k_big_registry, "big", &reg, err, sizeof err) == H5FZ_OK, "parse: %s", err);
  load_device("a100", &dev);
  CHECK(h5fz_plan_make(&dev, &reg, k_ops, N_OPS, NULL, &p) == H5FZ_OK, "plan");
  CHECK_STR(p.klass, "host");
  CHECK_STR(refusal(&p, "big"), "needs 200000 B shared memory per block, device allows 166912");
  CHECK_STR(refusal(&p, "fat"), "needs 131072 registers per block, device has 65536");
  CHECK_STR(refusal(&p, "tma"), "feature tma needs arch 90, target arch is 80");
}

static void expect_registry_error(const char *text, const char *want)
{
  h5fz_registry reg;
  char err[256] = "";
  int r = h5fz_registry_parse(text, "r", &reg, err, sizeof err);
  CHECK(r == H5FZ_ERR_PARSE, "parse error expected for '%s'", want);
  CHECK_HAS(err, want);
  /* h5fz's one error style: the same reason is the thread's last error,
   * also when no buffer is passed */
  CHECK_STR(h5fz_last_error(), err);
  h5fz_clear_error();
  CHECK(h5fz_registry_parse(text, "r", &reg, NULL, 0) == H5FZ_ERR_PARSE, "parse error without a buffer");
  CHECK_HAS(h5fz_last_error(), want);
}

static void test_registry(void)
{
  const h5fz_kernel_class *c;
  CHECK(g_reg.n_classes == 5, "5 classes, got %d", g_reg.n_classes);
  CHECK_STR(g_reg.start, "blackwell");
  c = h5fz_registry_find(&g_reg, "cpu");
  CHECK(c != NULL && c->target == H5FZ_TARGET_CPU && c->all_ops, "cpu class");
  c = h5fz_registry_find(&g_reg, "blackwell");
  CHECK(c != NULL && c->n_archs == 2 && c->archs[0] == 100 && c->archs[1] == 120 && c->min_driver == 12080,
        "blackwell archs");
  expect_registry_error("start = a\n[a]\ntarget = cpu\ncolour = red\n", "r:4: unknown key 'colour'");
  expect_registry_error("start = a\n[a]\ntarget = cpu\nfallback = b\n", "falls back to unknown class 'b'");
  expect_registry_error("start = a\n[a]\ntarget = ptx\nmin_arch = 70\nthreads_per_block = 32\n"
                        "subchunk_bytes = 512\nloads_per_thread = 4\nload_bytes = 4\n"
                        "regs_per_thread = 32\nsmem_per_block = 512\nops = all\n",
                        "does not end in a cpu class");
  expect_registry_error("start = a\n[a]\ntarget = ptx\nmin_arch = 70\nthreads_per_block = 32\n"
                        "subchunk_bytes = 1024\nloads_per_thread = 4\nload_bytes = 4\n"
                        "regs_per_thread = 32\nsmem_per_block = 1024\nops = all\nfallback = a\n",
                        "subchunk_bytes must equal");
  /* the one-slot encode's geometry (entropy_*): a warp multiple, a real register cap, in range; a class
   * without them parses */
#define GOOD_CLASS                                                                                                     \
  "start = a\n[a]\ntarget = ptx\nmin_arch = 70\nthreads_per_block = 32\nsubchunk_bytes = 512\n"                       \
  "loads_per_thread = 4\nload_bytes = 4\nregs_per_thread = 32\nsmem_per_block = 512\nops = all\nfallback = c\n"     \
  "[c]\ntarget = cpu\n"
  {
    h5fz_registry reg;
    char err[256] = "";
    CHECK(h5fz_registry_parse(GOOD_CLASS, "r", &reg, err, sizeof err) == H5FZ_OK, "the good class: %s", err);
  }
  expect_registry_error("start = a\n[a]\ntarget = ptx\nmin_arch = 70\nthreads_per_block = 32\nsubchunk_bytes = 512\n"
                        "loads_per_thread = 4\nload_bytes = 4\nregs_per_thread = 32\nsmem_per_block = 512\nops = all\n"
                        "entropy_threads_per_block = 100\nfallback = c\n[c]\ntarget = cpu\n",
                        "entropy_threads_per_block must be a multiple of 32");
  expect_registry_error("start = a\n[a]\ntarget = ptx\nmin_arch = 70\nthreads_per_block = 32\nsubchunk_bytes = 512\n"
                        "loads_per_thread = 4\nload_bytes = 4\nregs_per_thread = 32\nsmem_per_block = 512\nops = all\n"
                        "entropy_regs_per_thread = 8\nfallback = c\n[c]\ntarget = cpu\n",
                        "entropy_regs_per_thread must be >= 16");
  expect_registry_error("start = a\n[a]\ntarget = cpu\nentropy_threads_per_block = 2048\n", "entropy_threads_per_block");
  expect_registry_error("start = a\n[a]\ntarget = ptx\nmin_arch = 70\nthreads_per_block = 32\nsubchunk_bytes = 512\n"
                        "loads_per_thread = 4\nload_bytes = 4\nregs_per_thread = 32\nsmem_per_block = 512\nops = all\n"
                        "entropy_decode_parts = 3\nfallback = c\n[c]\ntarget = cpu\n",
                        "entropy_decode_parts must be 0, 1, 2, 4 or 8");
  expect_registry_error("start = a\n[a]\ntarget = cpu\nentropy_decode_parts = 16\n", "entropy_decode_parts");
#undef GOOD_CLASS
  expect_registry_error("start = a\n[a]\ntarget = gpu\n", "bad value for 'target'");
  expect_registry_error("[a]\ntarget = cpu\n", "'start' missing");
}

static void expect_device_error(const char *text, const char *want)
{
  h5fz_device_desc dev;
  char err[256] = "";
  int r = h5fz_device_parse(text, "d", &dev, err, sizeof err);
  CHECK(r == H5FZ_ERR_PARSE, "parse error expected for '%s'", want);
  CHECK_HAS(err, want);
  CHECK_STR(h5fz_last_error(), err);
  h5fz_clear_error();
  CHECK(h5fz_device_parse(text, "d", &dev, NULL, 0) == H5FZ_ERR_PARSE, "parse error without a buffer");
  CHECK_HAS(h5fz_last_error(), want);
}

static void test_device_file(void)
{
  h5fz_device_desc dev;
  char err[256];
  h5fz_plan p;
  int r;
  expect_device_error("present = 1\nname = x\nbus = 3\n", "d:3: unknown key 'bus'");
  expect_device_error("present = 1\nname = x\n", "missing key 'compute_capability'");
  expect_device_error("present = 2\n", "bad value for 'present'");
  expect_device_error("name = x\n", "missing key 'present'");
  r = h5fz_device_load("/nonexistent/dev.txt", &dev, err, sizeof err);
  CHECK(r == H5FZ_ERR_IO, "io error");
  CHECK_HAS(err, "/nonexistent/dev.txt: cannot open");
  CHECK_HAS(h5fz_last_error(), "/nonexistent/dev.txt: cannot open");
  CHECK_STR(h5fz_status_name(r), "cannot read file");
  /* without PCIe figures, gen 4 x16 is assumed and said */
  r = h5fz_device_parse("present = 1\nname = x\ncompute_capability = 8.6\nsm_count = 84\n"
                        "max_threads_per_block = 1024\nsmem_per_block_optin = 101376\n"
                        "regs_per_block = 65536\nmemory_clock_khz = 9751000\n"
                        "memory_bus_bits = 384\n",
                        "d", &dev, err, sizeof err);
  CHECK(r == H5FZ_OK, "parse: %s", err);
  CHECK(dev.pcie_source == H5FZ_PCIE_ASSUMED && dev.pcie_gen == 4, "assumed");
  CHECK_HAS(dev.note, "gen 4 x16 assumed");
  CHECK(!dev.nvrtc_known, "nvrtc not described");
  CHECK(plan_for(&dev, k_ops, N_OPS, &p) == H5FZ_OK, "plan");
  CHECK_STR(p.klass, "cpu");
  CHECK_HAS(refusal(&p, "ampere"), "NVRTC unavailable: NVRTC not described");
}

static void test_calibration(void)
{
  char dir[] = "/tmp/h5fz_planner_cal_XXXXXX", path[256], err[256], note[320];
  h5fz_device_desc dev;
  h5fz_plan plain, cal;
  h5fz_plan_options o;
  FILE *f;
  CHECK(mkdtemp(dir) != NULL, "mkdtemp");
  snprintf(path, sizeof path, "%s/calibration.txt", dir);
  f = fopen(path, "w");
  CHECK(f != NULL, "write %s", path);
  if (f == NULL) return;
  fprintf(f, "# measured\n"
             "NVIDIA H200 | hopper | kernel_GBps=1500 overhead_us=200\n"
             "* | * | cpu_GBps=2.5\n"
             "NVIDIA H100 80GB HBM3 | hopper | kernel_GBps=1\n");
  fclose(f);
  load_device("h200", &dev);
  CHECK(plan_for(&dev, k_ops, N_OPS, &plain) == H5FZ_OK, "plain");
  CHECK(!plain.calibrated, "not calibrated");
  /* the default path is <cache dir>/calibration.txt */
  setenv("H5FZ_CACHE_DIR", dir, 1);
  h5fz_plan_options_default(&o);
  o.calibration_path = NULL;
  CHECK(h5fz_calibration_lookup(NULL, "NVIDIA H200", "hopper", &(h5fz_calibration){0}, err, sizeof err) == H5FZ_OK,
        "lookup: %s", err);
  o.calibration_path = path;
  CHECK(h5fz_plan_make(&dev, &g_reg, k_ops, N_OPS, &o, &cal) == H5FZ_OK, "calibrated plan: %s", cal.calibration_note);
  CHECK(cal.calibrated, "calibrated");
  CHECK_NEAR(cal.roofline.predicted_kernel_GBps, 1500.0, 1e-9);
  CHECK_NEAR(cal.options.overhead_us, 200.0, 1e-9);
  CHECK_NEAR(cal.options.cpu_GBps, 2.5, 1e-9);
  snprintf(note, sizeof note, "calibrated from %s:3", path); /* last match */
  CHECK_HAS(cal.calibration_note, note);
  CHECK(cal.crossover_bytes > plain.crossover_bytes, "slower GPU, later crossover");
  CHECK_STR(cal.digest_hex, plain.digest_hex); /* same code, same digest */
  expect_gpu_route(&cal);
  /* a malformed file is an error with its line */
  f = fopen(path, "w");
  if (f != NULL) {
    fprintf(f, "NVIDIA H200 | hopper | kernel_GBps=fast\n");
    fclose(f);
  }
  CHECK(h5fz_plan_make(&dev, &g_reg, k_ops, N_OPS, &o, &cal) == H5FZ_ERR_PARSE, "bad calibration");
  CHECK_HAS(cal.calibration_note, "calibration.txt:1: bad field");
  unlink(path);
  rmdir(dir);
  /* no file: roofline, no error */
  CHECK(h5fz_plan_make(&dev, &g_reg, k_ops, N_OPS, &o, &cal) == H5FZ_OK, "missing file");
  CHECK(!cal.calibrated, "not calibrated");
}

static void test_cache_dir(void)
{
  char buf[512];
  /* the caller's folder (the library's H5FZ_CACHE_DIR) wins; the planner reads no H5FZ_ variable */
  setenv("XDG_CACHE_HOME", "/x/xdg", 1);
  CHECK(h5fz_planner_cache_dir("/x/cache", buf, sizeof buf) == 0, "dir");
  CHECK_STR(buf, "/x/cache");
  setenv("H5FZ_CACHE_DIR", "/x/ignored", 1);
  CHECK(h5fz_planner_cache_dir(NULL, buf, sizeof buf) == 0, "dir");
  CHECK_STR(buf, "/x/xdg/h5fz");
  CHECK(h5fz_planner_cache_dir("", buf, sizeof buf) == 0, "dir");
  CHECK_STR(buf, "/x/xdg/h5fz");
  unsetenv("H5FZ_CACHE_DIR");
  unsetenv("XDG_CACHE_HOME");
  setenv("HOME", "/x/home", 1);
  CHECK(h5fz_planner_cache_dir(NULL, buf, sizeof buf) == 0, "dir");
  CHECK_STR(buf, "/x/home/.cache/h5fz");
}

static void test_format(void)
{
  h5fz_device_desc dev;
  h5fz_plan p, q;
  char text[8192], json[8192], canon[1024], tiny[8];
  int n, depth = 0, i;
  load_device("h200", &dev);
  CHECK(plan_for(&dev, k_ops, N_OPS, &p) == H5FZ_OK, "plan");
  CHECK(plan_for(&dev, k_ops, N_OPS, &q) == H5FZ_OK, "plan");
  CHECK(p.digest == q.digest, "digest is stable");
  n = h5fz_plan_format_text(&p, 4u << 20, text, sizeof text);
  CHECK(n > 0 && (size_t)n < sizeof text, "text length %d", n);
  CHECK_HAS(text, "chosen     hopper (cubin sm_90)");
  CHECK_HAS(text, "refused    blackwell  needs sm_100 or sm_120, device is sm_90");
  CHECK_HAS(text, "4800.0 GB/s peak");
  CHECK_HAS(text, "chunk      4194304 B -> gpu");
  CHECK_HAS(text, p.digest_hex);
  CHECK(h5fz_plan_format_text(&p, 4u << 20, tiny, sizeof tiny) == n, "snprintf semantics");
  CHECK(strlen(tiny) == sizeof tiny - 1, "cut and terminated");
  n = h5fz_plan_format_json(&p, 0, json, sizeof json);
  CHECK(n > 0 && (size_t)n < sizeof json, "json length %d", n);
  CHECK_HAS(json, "\"class\": \"hopper\"");
  CHECK_HAS(json, "\"arch\": \"sm_90\"");
  CHECK_HAS(json, "\"reason\": \"needs sm_100 or sm_120, device is sm_90\"");
  CHECK_HAS(json, "\"hbm_GBps\": 4800.000");
  for (i = 0; json[i]; i++) {
    depth += json[i] == '{' || json[i] == '[';
    depth -= json[i] == '}' || json[i] == ']';
    CHECK(depth >= 0, "json nesting at %d", i);
  }
  CHECK(depth == 0, "json balanced");
  n = h5fz_plan_canonical_text(&p, canon, sizeof canon);
  CHECK(n > 0, "canonical");
  CHECK_HAS(canon, "class=hopper\ntarget=cubin\narch=sm_90\n");
  CHECK_HAS(canon, "features=shfl,padded_planes,warp_fused\n");
}

static void test_embedded_default(void)
{
  h5fz_registry reg;
  char err[256], path[1024];
  /* the override is the caller's (the library hands H5FZ_REGISTRY's value from its settings) */
  setenv("H5FZ_REGISTRY", "/nonexistent.txt", 1); /* not read here */
  CHECK(h5fz_registry_load_default(NULL, &reg, err, sizeof err) == H5FZ_OK, "default: %s", err);
  CHECK_STR(reg.source, "embedded");
  CHECK(h5fz_registry_load_default("", &reg, err, sizeof err) == H5FZ_OK, "empty override: %s", err);
  CHECK_STR(reg.source, "embedded");
  unsetenv("H5FZ_REGISTRY");
  snprintf(path, sizeof path, "%s/../registry/kernel_classes.txt", g_dir);
  CHECK(h5fz_registry_load_default(path, &reg, err, sizeof err) == H5FZ_OK, "override: %s", err);
  CHECK_STR(reg.source, path);
  CHECK(h5fz_registry_load_default("/nonexistent.txt", &reg, err, sizeof err) == H5FZ_ERR_IO,
        "missing override is an error");
}

/* The real NVRTC of this host (CUDA 13 here; 77 = skipped without it). */
static int test_nvrtc_real(void)
{
  h5fz_device_desc dev;
  char why[256];
  int i, has90 = 0;
  h5fz_device_none(&dev, NULL);
  if (h5fz_nvrtc_query(&dev, why, sizeof why) != H5FZ_OK) {
    printf("SKIP: %s\n", why);
    return 77;
  }
  printf("NVRTC %d.%d:", dev.nvrtc_major, dev.nvrtc_minor);
  for (i = 0; i < dev.n_nvrtc_archs; i++) {
    printf(" %d", dev.nvrtc_archs[i]);
    has90 |= dev.nvrtc_archs[i] == 90;
    if (i > 0) CHECK(dev.nvrtc_archs[i] > dev.nvrtc_archs[i - 1], "ascending");
  }
  printf("\n");
  CHECK(dev.nvrtc_known && dev.nvrtc_major >= 11, "version");
  CHECK(has90, "NVRTC supports sm_90");
  return 0;
}

/* The real driver: no GPU here (clear reason, cpu plan) or a GPU on CI. */
static void test_detect_real(void)
{
  h5fz_device_desc dev;
  h5fz_plan p;
  char why[256] = "?";
  int r = h5fz_device_detect(0, &dev, why, sizeof why);
  if (r == H5FZ_OK) {
    printf("detected %s sm_%d%d\n", dev.name, dev.cc_major, dev.cc_minor);
    CHECK(dev.present && dev.sm_count > 0 && dev.mem_bus_bits > 0, "gpu");
  } else {
    printf("no GPU: %s\n", why);
    CHECK(r == H5FZ_ERR_DEVICE, "rc %d", r);
    CHECK(!dev.present && why[0] != '\0', "reason");
    CHECK_STR(dev.absent_reason, why);
    CHECK(plan_for(&dev, k_ops, N_OPS, &p) == H5FZ_OK, "plan");
    CHECK_STR(p.klass, "cpu");
    if (strstr(why, "libcuda.so.1") != NULL) CHECK_STR(why, "libcuda.so.1 not found: no NVIDIA driver");
  }
}

typedef struct {
  const char *name;
  void (*fn)(void);
} test_case;

static const test_case k_tests[] = {
    {"h200", test_h200},
    {"h100", test_h100},
    {"a100", test_a100},
    {"v100", test_v100},
    {"t4", test_t4},
    {"rtx4090", test_rtx4090},
    {"b200", test_b200},
    {"none", test_none},
    {"ops", test_ops},
    {"driver", test_driver},
    {"resources", test_resources},
    {"registry", test_registry},
    {"device_file", test_device_file},
    {"calibration", test_calibration},
    {"cache_dir", test_cache_dir},
    {"format", test_format},
    {"embedded", test_embedded_default},
    {"detect", test_detect_real},
};

int main(int argc, char **argv)
{
  size_t i;
  int ran = 0;
  if (argc != 3) {
    fprintf(stderr, "usage: %s DEVICES_DIR TEST|all|nvrtc\n", argv[0]);
    return 2;
  }
  g_dir = argv[1];
  load_registry();
  if (strcmp(argv[2], "nvrtc") == 0) {
    int r = test_nvrtc_real();
    return g_failures ? 1 : r;
  }
  for (i = 0; i < sizeof k_tests / sizeof k_tests[0]; i++) {
    if (strcmp(argv[2], "all") != 0 && strcmp(argv[2], k_tests[i].name) != 0) continue;
    k_tests[i].fn();
    ran++;
  }
  if (ran == 0) {
    fprintf(stderr, "unknown test %s\n", argv[2]);
    return 2;
  }
  printf("%s: %d test(s), %d failure(s)\n", argv[2], ran, g_failures);
  return g_failures ? 1 : 0;
}
