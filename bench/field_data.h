/*
 * field_data.h - the real fields of a data folder (docs/benchmarks.md:
 * ../shared/data) and a check of a reconstruction against a bound, shared
 * by the benchmarks and the GPU tests (tests/gpu/gpu_test_util.h includes
 * it; bench/ includes nothing from tests/).
 */
#ifndef H5FZ_FIELD_DATA_H
#define H5FZ_FIELD_DATA_H

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  char name[256];
  int f64;
  size_t bytes;
  unsigned char *data;
  double range;     /* of the finite values, fill values (|x| >= 1e9) left out */
  double range_all; /* of all finite values (what REL sees when no fill is named) */
  char shape[64];   /* from the name, e.g. "12x291x360" */
} test_field;

/* Load every *.f32 / *.f64 of dir (sorted by name). Returns the count; *out
 * is malloc'd (free each data, then the array). */
static inline int load_fields(const char *dir, test_field **out)
{
  struct dirent **list;
  int n = scandir(dir, &list, NULL, alphasort), k = 0;
  if (n < 0) return 0;
  *out = calloc((size_t)n + 1, sizeof **out);
  for (int i = 0; i < n; i++) {
    const char *nm = list[i]->d_name, *dot = strrchr(nm, '.');
    if (dot && (!strcmp(dot, ".f32") || !strcmp(dot, ".f64"))) {
      char path[1024];
      snprintf(path, sizeof path, "%s/%s", dir, nm);
      FILE *f = fopen(path, "rb");
      if (f) {
        test_field *t = &(*out)[k];
        fseek(f, 0, SEEK_END);
        t->bytes = (size_t)ftell(f);
        fseek(f, 0, SEEK_SET);
        t->data = malloc(t->bytes);
        if (t->data && fread(t->data, 1, t->bytes, f) == t->bytes) {
          snprintf(t->name, sizeof t->name, "%s", nm);
          const char *us = strrchr(nm, '_');
          snprintf(t->shape, sizeof t->shape, "%.*s", us ? (int)(dot - us - 1) : 0, us ? us + 1 : "");
          t->f64 = !strcmp(dot, ".f64");
          double lo = INFINITY, hi = -INFINITY, alo = INFINITY, ahi = -INFINITY;
          size_t cnt = t->bytes / (t->f64 ? 8 : 4);
          for (size_t j = 0; j < cnt; j++) {
            double x = t->f64 ? ((double *)t->data)[j] : ((float *)t->data)[j];
            if (isfinite(x) && fabs(x) < 1e9) {
              if (x < lo) lo = x;
              if (x > hi) hi = x;
            }
            if (isfinite(x)) {
              if (x < alo) alo = x;
              if (x > ahi) ahi = x;
            }
          }
          t->range = hi > lo ? hi - lo : 1.0;
          t->range_all = ahi > alo ? ahi - alo : 1.0;
          k++;
        } else {
          free(t->data);
        }
        fclose(f);
      }
    }
    free(list[i]);
  }
  free(list);
  return k;
}

/* Elements of x' out of bound (finite), or whose bits differ (NaN, Inf, -0). */
static inline size_t count_violations(const void *orig, const void *back, size_t n, int f64, double eb)
{
  size_t bad = 0;
  for (size_t i = 0; i < n; i++) {
    double x = f64 ? ((const double *)orig)[i] : ((const float *)orig)[i];
    double y = f64 ? ((const double *)back)[i] : ((const float *)back)[i];
    size_t es = f64 ? 8 : 4;
    if (isfinite(x) && !(x == 0 && signbit(x)))
      bad += !(fabs(x - y) <= eb);
    else
      bad += memcmp((const char *)orig + i * es, (const char *)back + i * es, es) != 0;
  }
  return bad;
}

/* As count_violations; pw = 1 checks |x - x'| <= eb |x| (PW_REL) and the
 * sign; eb = 0 demands bit-exact values (lossless). */
static inline size_t count_violations_mode(const void *orig, const void *back, size_t n, int f64, int pw, double eb)
{
  if (!pw && eb > 0) return count_violations(orig, back, n, f64, eb);
  size_t bad = 0, es = f64 ? 8 : 4;
  for (size_t i = 0; i < n; i++) {
    double x = f64 ? ((const double *)orig)[i] : ((const float *)orig)[i];
    double y = f64 ? ((const double *)back)[i] : ((const float *)back)[i];
    if (pw && isfinite(x) && x != 0)
      bad += !(fabs(x - y) <= eb * fabs(x)) || signbit(x) != signbit(y);
    else
      bad += memcmp((const char *)orig + i * es, (const char *)back + i * es, es) != 0;
  }
  return bad;
}

#endif /* H5FZ_FIELD_DATA_H */
