/*
 * registry.c - the registry of kernel classes: parse the text form
 * (docs/planner.md, planner/registry/kernel_classes.txt), check it, find a
 * class by name.
 */
#include <stdlib.h>
#include <string.h>

#include "planner_internal.h"

/* Generated at build time from planner/registry/kernel_classes.txt. */
extern const char h5fz_planner_registry_text[];

const char *h5fz_registry_default_text(void) { return h5fz_planner_registry_text; }

/* Feature names and the lowest arch that has them. */
static const struct {
  const char *name;
  unsigned flag;
  int min_arch;
} k_features[] = {
    {"shfl", H5FZ_FEAT_SHFL, 30},
    {"ldg128", H5FZ_FEAT_LDG128, 30},
    {"cp_async", H5FZ_FEAT_CP_ASYNC, 80},
    {"tma", H5FZ_FEAT_TMA, 90},
    {"cluster", H5FZ_FEAT_CLUSTER, 90},
    {"padded_planes", H5FZ_FEAT_PADDED_PLANES, 30},
    {"warp_fused", H5FZ_FEAT_WARP_FUSED, 80},
};
#define N_FEATURES (sizeof k_features / sizeof k_features[0])

const char *pl_feature_name(unsigned flag, int *min_arch)
{
  size_t i;
  for (i = 0; i < N_FEATURES; i++)
    if (k_features[i].flag == flag) {
      if (min_arch) *min_arch = k_features[i].min_arch;
      return k_features[i].name;
    }
  return NULL;
}

static int parse_features(const char *v, unsigned *out)
{
  char tmp[1024], *tok, *save = NULL;
  *out = 0;
  pl_copy(tmp, sizeof tmp, v);
  for (tok = strtok_r(tmp, " ,\t", &save); tok; tok = strtok_r(NULL, " ,\t", &save)) {
    size_t i;
    for (i = 0; i < N_FEATURES; i++)
      if (strcmp(tok, k_features[i].name) == 0) break;
    if (strcmp(tok, "none") == 0) continue;
    if (i == N_FEATURES) return -1;
    *out |= k_features[i].flag;
  }
  return 0;
}

static int parse_archs(const char *v, h5fz_kernel_class *c)
{
  char tmp[1024], *tok, *save = NULL;
  pl_copy(tmp, sizeof tmp, v);
  c->n_archs = 0;
  for (tok = strtok_r(tmp, " ,\t", &save); tok; tok = strtok_r(NULL, " ,\t", &save)) {
    if (c->n_archs == H5FZ_PLAN_MAX_ARCHS) return -1;
    if (pl_parse_arch(tok, &c->archs[c->n_archs]) != 0) return -1;
    c->n_archs++;
  }
  return c->n_archs > 0 ? 0 : -1;
}

static int parse_ops(const char *v, h5fz_kernel_class *c)
{
  char tmp[1024], *tok, *save = NULL;
  if (strcmp(v, "all") == 0) {
    c->all_ops = 1;
    return 0;
  }
  pl_copy(tmp, sizeof tmp, v);
  c->n_ops = 0;
  for (tok = strtok_r(tmp, " ,\t", &save); tok; tok = strtok_r(NULL, " ,\t", &save)) {
    long long id;
    if (c->n_ops == H5FZ_PLAN_MAX_OPS) return -1;
    if (pl_parse_int(tok, 1, 255, &id) != 0) return -1;
    c->ops[c->n_ops++] = (uint8_t)id;
  }
  return c->n_ops > 0 ? 0 : -1;
}

static int parse_target(const char *v, h5fz_target *t)
{
  if (strcmp(v, "cubin") == 0)
    *t = H5FZ_TARGET_CUBIN;
  else if (strcmp(v, "ptx") == 0)
    *t = H5FZ_TARGET_PTX;
  else if (strcmp(v, "cpu") == 0)
    *t = H5FZ_TARGET_CPU;
  else
    return -1;
  return 0;
}

static int parse_int_into(const char *v, long long lo, long long hi, int *out)
{
  long long x;
  if (pl_parse_int(v, lo, hi, &x) != 0) return -1;
  *out = (int)x;
  return 0;
}

/* One "key = value" line inside a [class] section. 1 = unknown key. */
static int set_class_key(h5fz_kernel_class *c, const pl_kv *kv, int *have_target)
{
  const char *k = kv->key, *v = kv->value;
  h5fz_tuning *t = &c->tuning;
  int a, b;
  if (strcmp(k, "target") == 0) {
    *have_target = 1;
    return parse_target(v, &c->target);
  }
  if (strcmp(k, "archs") == 0) return parse_archs(v, c);
  if (strcmp(k, "min_arch") == 0) return pl_parse_arch(v, &c->min_arch);
  if (strcmp(k, "min_driver") == 0) {
    if (pl_parse_version(v, &a, &b) != 0) return -1;
    c->min_driver = a * 1000 + b * 10;
    return 0;
  }
  if (strcmp(k, "threads_per_block") == 0) return parse_int_into(v, 0, 1024, &t->threads_per_block);
  if (strcmp(k, "subchunk_bytes") == 0) return parse_int_into(v, 512, 65536, &t->subchunk_bytes);
  if (strcmp(k, "loads_per_thread") == 0) return parse_int_into(v, 0, 1024, &t->loads_per_thread);
  if (strcmp(k, "load_bytes") == 0) return parse_int_into(v, 0, 16, &t->load_bytes);
  if (strcmp(k, "regs_per_thread") == 0) return parse_int_into(v, 0, 255, &t->regs_per_thread);
  if (strcmp(k, "smem_per_block") == 0) return parse_int_into(v, 0, 1 << 24, &t->smem_per_block);
  if (strcmp(k, "features") == 0) return parse_features(v, &t->features);
  if (strcmp(k, "entropy_threads_per_block") == 0) return parse_int_into(v, 0, 1024, &t->entropy_threads_per_block);
  if (strcmp(k, "entropy_regs_per_thread") == 0) return parse_int_into(v, 0, 255, &t->entropy_regs_per_thread);
  if (strcmp(k, "entropy_decode_parts") == 0) return parse_int_into(v, 0, 8, &t->entropy_decode_parts);
  if (strcmp(k, "ops") == 0) return parse_ops(v, c);
  if (strcmp(k, "fallback") == 0) {
    if (strlen(v) >= sizeof c->fallback) return -1;
    pl_copy(c->fallback, sizeof c->fallback, strcmp(v, "none") ? v : "");
    return 0;
  }
  return 1;
}

/* Consistency of one class; returns a reason or NULL. */
static const char *check_class(const h5fz_kernel_class *c)
{
  const h5fz_tuning *t = &c->tuning;
  if (c->target == H5FZ_TARGET_CPU) return NULL;
  if (c->target == H5FZ_TARGET_CUBIN && c->n_archs == 0) return "a cubin class needs 'archs'";
  if (c->target == H5FZ_TARGET_PTX && c->min_arch == 0) return "a ptx class needs 'min_arch'";
  if (t->threads_per_block < 32 || t->threads_per_block % 32 != 0)
    return "threads_per_block must be a multiple of 32 in 32..1024";
  if (t->load_bytes != 4 && t->load_bytes != 8 && t->load_bytes != 16) return "load_bytes must be 4, 8 or 16";
  if (t->loads_per_thread < 1) return "loads_per_thread must be >= 1";
  if ((long)t->subchunk_bytes != (long)t->threads_per_block * t->loads_per_thread * t->load_bytes)
    return "subchunk_bytes must equal threads_per_block * loads_per_thread "
           "* load_bytes";
  if (t->regs_per_thread < 16) return "regs_per_thread must be >= 16";
  if (t->entropy_threads_per_block % 32 != 0) return "entropy_threads_per_block must be a multiple of 32 (0: the class's)";
  if (t->entropy_regs_per_thread != 0 && t->entropy_regs_per_thread < 16)
    return "entropy_regs_per_thread must be >= 16 (0: the class's)";
  if (t->entropy_decode_parts & (t->entropy_decode_parts - 1))
    return "entropy_decode_parts must be 0, 1, 2, 4 or 8";
  if (t->smem_per_block < t->subchunk_bytes) return "smem_per_block must hold at least one sub-chunk";
  return NULL;
}

/* Parse all lines into out->classes; section checks only. */
static int parse_lines(const char *text, const char *origin, h5fz_registry *out, char *err, size_t err_len)
{
  pl_lines it;
  pl_kv kv;
  int r, have_target = 0, start_line = 0;
  h5fz_kernel_class *c = NULL;
  pl_lines_init(&it, text);
  while ((r = pl_next_line(&it, &kv)) != 0) {
    size_t n = strlen(kv.value);
    if (r < 0) goto bad_line;
    if (!kv.has_eq) {
      if (n < 3 || kv.value[0] != '[' || kv.value[n - 1] != ']') goto bad_line;
      if (c != NULL && !have_target) goto no_target;
      if (out->n_classes == H5FZ_PLAN_MAX_CLASSES) {
        return pl_fail(H5FZ_ERR_PARSE, err, err_len, "%s:%d: more than %d classes", origin, kv.line,
                       H5FZ_PLAN_MAX_CLASSES);
      }
      kv.value[n - 1] = '\0';
      if (n - 2 >= H5FZ_PLAN_NAME_MAX || h5fz_registry_find(out, kv.value + 1) != NULL) {
        return pl_fail(H5FZ_ERR_PARSE, err, err_len, "%s:%d: class name '%s' too long or repeated", origin, kv.line,
                       kv.value + 1);
      }
      c = &out->classes[out->n_classes++];
      memset(c, 0, sizeof *c);
      pl_copy(c->name, sizeof c->name, kv.value + 1);
      have_target = 0;
      start_line = kv.line;
      continue;
    }
    if (c == NULL) {
      if (strcmp(kv.key, "start") != 0 || kv.value[0] == '\0') goto bad_key;
      pl_copy(out->start, sizeof out->start, kv.value);
      continue;
    }
    r = set_class_key(c, &kv, &have_target);
    if (r == 1) goto bad_key;
    if (r != 0) {
      return pl_fail(H5FZ_ERR_PARSE, err, err_len, "%s:%d: bad value for '%s': '%s'", origin, kv.line, kv.key,
                     kv.value);
    }
  }
  if (c != NULL && !have_target) goto no_target;
  return H5FZ_OK;
bad_line:
  return pl_fail(H5FZ_ERR_PARSE, err, err_len, "%s:%d: expected '[class]' or 'key = value'", origin, kv.line);
bad_key:
  return pl_fail(H5FZ_ERR_PARSE, err, err_len, "%s:%d: unknown key '%s'%s", origin, kv.line, kv.key,
                 c == NULL ? " (only 'start' before the first [class])" : "");
no_target:
  return pl_fail(H5FZ_ERR_PARSE, err, err_len, "%s:%d: class '%s' has no 'target'", origin, start_line, c->name);
}

/* The chain from start must name existing classes, not loop, end at cpu. */
static int check_chain(const h5fz_registry *reg, const char *origin, char *err, size_t err_len)
{
  const h5fz_kernel_class *c;
  int i, steps = 0;
  for (i = 0; i < reg->n_classes; i++) {
    const char *why = check_class(&reg->classes[i]);
    if (why != NULL) {
      return pl_fail(H5FZ_ERR_PARSE, err, err_len, "%s: class '%s': %s", origin, reg->classes[i].name, why);
    }
    if (reg->classes[i].fallback[0] != '\0' && h5fz_registry_find(reg, reg->classes[i].fallback) == NULL) {
      return pl_fail(H5FZ_ERR_PARSE, err, err_len, "%s: class '%s' falls back to unknown class '%s'", origin,
                     reg->classes[i].name, reg->classes[i].fallback);
    }
  }
  if (reg->start[0] == '\0' || (c = h5fz_registry_find(reg, reg->start)) == NULL) {
    return pl_fail(H5FZ_ERR_PARSE, err, err_len, "%s: 'start' missing or names no class", origin);
  }
  while (c->target != H5FZ_TARGET_CPU) {
    if (c->fallback[0] == '\0' || ++steps > reg->n_classes) {
      return pl_fail(H5FZ_ERR_PARSE, err, err_len, "%s: the chain from '%s' %s", origin, reg->start,
                     c->fallback[0] ? "loops" : "does not end in a cpu class");
    }
    c = h5fz_registry_find(reg, c->fallback);
  }
  return H5FZ_OK;
}

int h5fz_registry_parse(const char *text, const char *origin, h5fz_registry *out, char *err, size_t err_len)
{
  int r;
  if (text == NULL || out == NULL) {
    return pl_fail(H5FZ_ERR_ARG, err, err_len, "NULL argument");
  }
  if (origin == NULL) origin = "<text>";
  memset(out, 0, sizeof *out);
  r = parse_lines(text, origin, out, err, err_len);
  if (r == H5FZ_OK) r = check_chain(out, origin, err, err_len);
  if (r == H5FZ_OK) pl_copy(out->source, sizeof out->source, origin);
  return r;
}

/* h5fz_registry_parse in pl_parse_fn's shape. */
static int parse_registry(const char *text, const char *origin, void *out, char *err, size_t err_len)
{
  return h5fz_registry_parse(text, origin, out, err, err_len);
}

int h5fz_registry_load_file(const char *path, h5fz_registry *out, char *err, size_t err_len)
{
  return pl_parse_file(path, parse_registry, out, err, err_len);
}

int h5fz_registry_load_default(const char *override, h5fz_registry *out, char *err, size_t err_len)
{
  if (override != NULL && override[0] != '\0') return h5fz_registry_load_file(override, out, err, err_len);
  return h5fz_registry_parse(h5fz_planner_registry_text, "embedded", out, err, err_len);
}

const h5fz_kernel_class *h5fz_registry_find(const h5fz_registry *reg, const char *name)
{
  int i;
  if (reg == NULL || name == NULL) return NULL;
  for (i = 0; i < reg->n_classes; i++)
    if (strcmp(reg->classes[i].name, name) == 0) return &reg->classes[i];
  return NULL;
}
