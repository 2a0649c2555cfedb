/*
 * cmd_plan.c - `h5fz plan`: ask the planner for a plan and print it.
 * Uses only the public planner API (planner/h5fz_planner.h), and the
 * codec's (h5fz.h) to check that --ops is a valid chain and for the CPU
 * executor's thread count (h5fz_host_threads).
 */
#include <errno.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_status.h"
#include "cmd_plan.h"
#include "h5fz.h"
#include "h5fz_device_query.h"
#include "h5fz_planner.h"
#include "h5fz_settings.h" /* H5FZ_REGISTRY and the cache folder, read once in fusion/h5fz_settings.c */

#define PLAN_MAX_OPS 16

typedef struct {
  int json;
  int gpu;
  const char *device;
  const char *registry;
  const char *calibration;
  uint64_t chunk;
  uint8_t ops[PLAN_MAX_OPS];
  size_t n_ops;
  uint32_t subchunk_bytes; /* --spec's sub-chunk (0: none given): the chain's threads per block */
} plan_args;

static void usage(FILE *f)
{
  fprintf(f, "usage: h5fz plan [--json] [--device FILE | --gpu N] "
             "[--registry FILE]\n"
             "                 [--ops LIST | --spec TEXT] [--chunk BYTES] [--calibration "
             "FILE]\n"
             "Print the hardware plan: device, chosen kernel class, refused "
             "classes and\n"
             "why, predicted GB/s and the chunk size above which chunks go to "
             "the GPU.\n"
             "  --json            print one JSON object\n"
             "  --device FILE     plan for a described device "
             "(planner/devices/*.txt)\n"
             "  --gpu N           detect GPU number N (default 0)\n"
             "  --registry FILE   kernel classes from FILE (default: embedded)\n"
             "  --ops LIST        op ids of the spec (default 1,10,11,13,30)\n"
             "  --spec TEXT       the chain of spec text instead, e.g. \"abs=1e-3 ratio\"\n"
             "  --chunk BYTES     route and prediction for one chunk size "
             "(K, M, G = KiB, MiB, GiB)\n"
             "  --calibration F   measured figures (default "
             "<cache dir>/calibration.txt)\n");
}

/* "4194304", "4M", "16KiB" -> bytes. 0 on success. */
static int parse_bytes(const char *s, uint64_t *out)
{
  char *end;
  unsigned long long v;
  uint64_t mul = 1;
  if (s[0] < '0' || s[0] > '9') return -1;
  errno = 0;
  v = strtoull(s, &end, 10);
  if (errno != 0) return -1;
  if (*end == 'K' || *end == 'k')
    mul = 1024;
  else if (*end == 'M' || *end == 'm')
    mul = 1024 * 1024;
  else if (*end == 'G' || *end == 'g')
    mul = 1024ull * 1024 * 1024;
  if (mul != 1) {
    end++;
    if (strcmp(end, "iB") == 0 || strcmp(end, "B") == 0) end += strlen(end);
  }
  if (*end != '\0' || v == 0 || v > UINT64_MAX / mul) return -1;
  *out = v * mul;
  return 0;
}

/* A comma-separated list of op ids (blanks around an id allowed); an empty
 * item ("1,,30", a trailing comma) is refused, not skipped. */
static int parse_ops(const char *s, plan_args *a)
{
  a->n_ops = 0;
  for (;;) {
    char *end;
    while (*s == ' ') s++;
    if (*s < '0' || *s > '9') return -1; /* an empty item, or not a number */
    long v = strtol(s, &end, 10);
    while (*end == ' ') end++;
    if (v < 1 || v > 255 || a->n_ops == PLAN_MAX_OPS || (*end != ',' && *end != '\0')) return -1;
    a->ops[a->n_ops++] = (uint8_t)v;
    if (*end == '\0') return 0;
    s = end + 1;
  }
}

/* 0 ok, 2 usage error, 3 --help */
static int parse_args(int argc, char **argv, plan_args *a)
{
  static const uint8_t def_ops[] = {1, 10, 11, 13, 30};
  int i;
  memset(a, 0, sizeof *a);
  memcpy(a->ops, def_ops, sizeof def_ops);
  a->n_ops = sizeof def_ops;
  for (i = 1; i < argc; i++) {
    const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(o, "--help") == 0 || strcmp(o, "-h") == 0) return 3;
    if (strcmp(o, "--json") == 0) {
      a->json = 1;
      continue;
    }
    if (v == NULL) {
      fprintf(stderr, "h5fz plan: unknown option or missing value: %s\n", o);
      return 2;
    }
    i++;
    if (strcmp(o, "--device") == 0)
      a->device = v;
    else if (strcmp(o, "--registry") == 0)
      a->registry = v;
    else if (strcmp(o, "--calibration") == 0)
      a->calibration = v;
    else if (strcmp(o, "--gpu") == 0) {
      char *end;
      long g = strtol(v, &end, 10);
      if (*end != '\0' || end == v || g < 0 || g > 1024) {
        fprintf(stderr, "h5fz plan: bad --gpu '%s' (0, 1, ...)\n", v);
        return 2;
      }
      a->gpu = (int)g;
    } else if (strcmp(o, "--chunk") == 0) {
      if (parse_bytes(v, &a->chunk) != 0) {
        fprintf(stderr, "h5fz plan: bad --chunk '%s' (bytes, K/M/G suffix)\n", v);
        return 2;
      }
    } else if (strcmp(o, "--spec") == 0) {
      /* the chain of spec text, e.g. "abs=1e-3 ratio" (docs/spec.md) */
      h5fz_spec s;
      if (h5fz_spec_parse(v, &s) != H5FZ_OK) {
        fprintf(stderr, "h5fz plan: bad --spec '%s': %s\n", v, h5fz_last_error());
        return 2;
      }
      a->n_ops = s.n_ops;
      memcpy(a->ops, s.ops, s.n_ops);
      a->subchunk_bytes = s.subchunk_bytes;
    } else if (strcmp(o, "--ops") == 0) {
      if (parse_ops(v, a) != 0) {
        fprintf(stderr, "h5fz plan: bad --ops '%s' (ids 1-255, commas)\n", v);
        return 2;
      }
      /* a chain the codec would refuse gets no plan (`h5fz ops` lists the ids) */
      h5fz_spec s;
      h5fz_spec_default(&s);
      memset(s.ops, 0, sizeof s.ops);
      s.n_ops = (uint32_t)a->n_ops;
      if (a->n_ops <= H5FZ_MAX_OPS) memcpy(s.ops, a->ops, a->n_ops);
      if (a->n_ops > H5FZ_MAX_OPS || h5fz_spec_validate(&s) != H5FZ_OK) {
        fprintf(stderr, "h5fz plan: --ops '%s' is not a valid chain: %s\n", v,
                a->n_ops > H5FZ_MAX_OPS ? "more than 10 ops" : h5fz_last_error());
        return 2;
      }
    } else {
      fprintf(stderr, "h5fz plan: unknown option %s\n", o);
      return 2;
    }
  }
  return 0;
}

static int get_device(const plan_args *a, h5fz_device_desc *dev)
{
  char why[H5FZ_PLAN_PATH_MAX + H5FZ_PLAN_REASON_MAX];
  int r;
  if (a->device == NULL) {
    /* no GPU is a valid answer: the plan then explains it */
    (void)h5fz_device_detect(a->gpu, dev, why, sizeof why);
    return H5FZ_CLI_OK;
  }
  if ((r = h5fz_device_load(a->device, dev, NULL, 0)) != H5FZ_OK)
    return h5fz_cli_library_error("plan", r, "device description"); /* a bad input file: 2, as the other commands */
  if (!dev->nvrtc_known) (void)h5fz_nvrtc_query(dev, NULL, 0);
  return H5FZ_CLI_OK;
}

static int print_plan(const h5fz_plan *plan, const plan_args *a)
{
  char small[1];
  int n = a->json ? h5fz_plan_format_json(plan, a->chunk, small, sizeof small)
                  : h5fz_plan_format_text(plan, a->chunk, small, sizeof small);
  char *buf;
  if (n < 0 || (buf = malloc((size_t)n + 1)) == NULL) {
    fprintf(stderr, "h5fz plan: out of memory\n");
    return h5fz_cli_exit_status(H5FZ_ERR_NOMEM);
  }
  if (a->json)
    h5fz_plan_format_json(plan, a->chunk, buf, (size_t)n + 1);
  else
    h5fz_plan_format_text(plan, a->chunk, buf, (size_t)n + 1);
  char why[300];
  unsigned threads = h5fz_host_threads(why, sizeof why);
  if (a->json) {
    /* the planner's object, and the CPU executor's thread count in it */
    size_t end = strlen(buf);
    while (end && buf[end - 1] != '}') end--;
    if (end) buf[end - 1] = '\0';
    /* why is h5fz's own words, numbers and variable names: nothing to escape */
    printf("%s, \"host_threads\": %u, \"host_threads_from\": \"%s\"", buf, threads, why);
    if (a->subchunk_bytes)
      printf(", \"chain_subchunk_bytes\": %u, \"chain_threads_per_block\": %d", a->subchunk_bytes,
             h5fz_plan_block_threads(plan, a->subchunk_bytes));
    printf("}\n");
  } else {
    printf("%sthreads    %u on the host (%s)\n", buf, threads, why);
    /* --spec: the chain's own sub-chunk, and the block size the GPU kernels then take */
    if (a->subchunk_bytes && plan->target != H5FZ_TARGET_CPU)
      printf("chain      sub-chunks of %u bytes: %d threads a block (the class's %d for %d bytes, scaled so that "
             "each thread keeps as many words)\n",
             a->subchunk_bytes, h5fz_plan_block_threads(plan, a->subchunk_bytes), plan->tuning.threads_per_block,
             plan->tuning.subchunk_bytes);
  }
  free(buf);
  return 0;
}

int h5fz_cmd_plan(int argc, char **argv)
{
  char reg_path[H5FZ_SETTINGS_VALUE_MAX];
  plan_args a;
  h5fz_device_desc dev;
  h5fz_registry *reg = NULL;
  h5fz_plan *plan = NULL;
  h5fz_plan_options opts;
  char dir[H5FZ_PLAN_PATH_MAX], cal[H5FZ_PLAN_PATH_MAX + 32];
  int rc = parse_args(argc, argv, &a), r;
  if (rc == 3) {
    usage(stdout);
    return 0;
  }
  if (rc != 0) { /* the reason is printed; the whole help would bury it */
    fprintf(stderr, "h5fz plan: see `h5fz plan --help`\n");
    return 2;
  }
  if ((rc = get_device(&a, &dev)) != H5FZ_CLI_OK) return rc;
  reg = malloc(sizeof *reg);
  plan = malloc(sizeof *plan);
  if (reg == NULL || plan == NULL) {
    fprintf(stderr, "h5fz plan: out of memory\n");
    rc = h5fz_cli_exit_status(H5FZ_ERR_NOMEM);
    goto done;
  }
  r = a.registry ? h5fz_registry_load_file(a.registry, reg, NULL, 0)
                 : h5fz_registry_load_default(h5fz_settings_value("H5FZ_REGISTRY", reg_path, sizeof reg_path), reg,
                                              NULL, 0);
  if (r != H5FZ_OK) {
    rc = h5fz_cli_library_error("plan", r, "registry"); /* a bad input file: 2, as the other commands */
    goto done;
  }
  h5fz_plan_options_default(&opts);
  if (a.calibration) {
    /* a file named on the command line must be there: a mistyped path
     * would otherwise plan from the roofline without a word (the default
     * file in the cache folder may be absent: nothing measured yet) */
    struct stat st;
    FILE *f = fopen(a.calibration, "rb");
    const char *bad = !f ? strerror(errno) : (fstat(fileno(f), &st) || !S_ISREG(st.st_mode)) ? "not a regular file" : NULL;
    if (f) fclose(f);
    if (bad) {
      fprintf(stderr, "h5fz plan: calibration: %s: cannot open: %s\n", a.calibration, bad);
      rc = H5FZ_CLI_USAGE;
      goto done;
    }
    opts.calibration_path = a.calibration;
  } else if (h5fz_settings_cache_dir(dir, sizeof dir) == H5FZ_OK) {
    snprintf(cal, sizeof cal, "%s/calibration.txt", dir);
    opts.calibration_path = cal;
  }
  r = h5fz_plan_make(&dev, reg, a.ops, a.n_ops, &opts, plan);
  if (r == H5FZ_ERR_UNSUPPORTED) {
    /* not a library failure but the planner's answer: no class of the
     * registry's chain runs these ops (a check that failed: 1) */
    fprintf(stderr, "h5fz plan: planning failed: %s\n", h5fz_last_error());
    rc = H5FZ_CLI_FAIL;
    goto done;
  }
  if (r != H5FZ_OK) {
    rc = h5fz_cli_library_error("plan", r, "calibration"); /* a bad calibration file: 2 */
    goto done;
  }
  rc = print_plan(plan, &a);
  if (rc == 0 && a.device == NULL) {
    /* this machine's plan: the executor settings (H5FZ_DEVICE, a GPU it
     * asks for) as a write would take them, so that a mistyped one shows
     * here and not first as H5Dcreate's refusal (a fresh user's finding:
     * H5FZ_DEVICE=bogus planned without a word) */
    h5fz_spec probe;
    h5fz_spec_default(&probe);
    probe.dtype = H5FZ_DTYPE_F32;
    r = h5fz_device_check(&probe, (size_t)1 << 20);
    if (r != H5FZ_OK) rc = h5fz_cli_library_error("plan", r, "device setting");
  }
done:
  free(reg);
  free(plan);
  return rc;
}
