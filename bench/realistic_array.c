/*
 * realistic_array.c - the realistic benchmark array (realistic_array.h).
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "realistic_array.h"

typedef struct {
  float *v;
  size_t n;
} field;

static int is_f32_field(const char *name)
{
  size_t n = strlen(name);
  return n > 4 && !strcmp(name + n - 4, ".f32") && strstr(name, "_float32_") != NULL;
}

/* A fill or missing-data marker: finite, but far outside any real field here. */
static int is_special(float x) { return !isfinite(x) || fabsf(x) >= 1e9f; }

/* Scale the field to [0, 1] over its finite non-fill values, in place; the
 * specials stay as they are. A constant field becomes all 0. */
static size_t scale_field(float *v, size_t n)
{
  double lo = INFINITY, hi = -INFINITY;
  size_t specials = 0;
  for (size_t i = 0; i < n; i++) {
    if (is_special(v[i])) {
      specials++;
      continue;
    }
    if (v[i] < lo) lo = v[i];
    if (v[i] > hi) hi = v[i];
  }
  double span = hi > lo ? hi - lo : 1.0;
  for (size_t i = 0; i < n; i++)
    if (!is_special(v[i])) {
      float s = (float)((v[i] - lo) / span);
      v[i] = s < 0.0f ? 0.0f : s > 1.0f ? 1.0f : s; /* rounding must not leave [0, 1] */
    }
  return specials;
}

static int cmp_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int h5fz_realistic_make(const char *dir, size_t min_bytes, h5fz_realistic *out, char *why, size_t why_len)
{
  memset(out, 0, sizeof *out);
  DIR *d = opendir(dir);
  if (!d) {
    snprintf(why, why_len, "cannot open %s", dir);
    return -1;
  }
  char *names[64];
  int n_names = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL && n_names < 64)
    if (is_f32_field(e->d_name)) names[n_names++] = strdup(e->d_name);
  closedir(d);
  qsort(names, (size_t)n_names, sizeof *names, cmp_name);
  field fields[64];
  size_t set_values = 0, set_specials = 0;
  int rc = 0, n_read = 0;
  for (int i = 0; i < n_names && !rc; i++, n_read++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    FILE *f = fopen(path, "rb");
    long size = -1;
    fields[i].v = NULL;
    if (f && fseek(f, 0, SEEK_END) == 0) size = ftell(f);
    if (size > 0 && size % 4 == 0 && fseek(f, 0, SEEK_SET) == 0 && (fields[i].v = malloc((size_t)size)) &&
        fread(fields[i].v, 1, (size_t)size, f) == (size_t)size) {
      fields[i].n = (size_t)size / 4;
      set_specials += scale_field(fields[i].v, fields[i].n);
      set_values += fields[i].n;
    } else {
      snprintf(why, why_len, "cannot read %s", path);
      rc = -1;
    }
    if (f) fclose(f);
  }
  if (!rc && !set_values) {
    snprintf(why, why_len, "no float32 field (<what>_float32_<shape>.f32) in %s", dir);
    rc = -1;
  }
  if (!rc) {
    size_t repeats = (min_bytes + set_values * 4 - 1) / (set_values * 4);
    if (repeats < 1) repeats = 1;
    out->values = malloc(repeats * set_values * 4);
    if (!out->values) {
      snprintf(why, why_len, "cannot hold %zu bytes", repeats * set_values * 4);
      rc = -1;
    } else {
      size_t at = 0;
      for (size_t r = 0; r < repeats; r++)
        for (int i = 0; i < n_read; i++) {
          memcpy(out->values + at, fields[i].v, fields[i].n * 4);
          at += fields[i].n;
        }
      out->n = at;
      out->n_fields = n_names;
      out->repeats = (int)repeats;
      out->n_special = set_specials * repeats;
    }
  }
  for (int i = 0; i < n_read; i++) free(fields[i].v);
  for (int i = 0; i < n_names; i++) free(names[i]);
  return rc;
}

void h5fz_realistic_check(const float *orig, const float *dec, size_t n, double eb, h5fz_realistic_check_result *r)
{
  memset(r, 0, sizeof *r);
  for (size_t i = 0; i < n; i++) {
    float x = orig[i], y = dec[i];
    if (isnan(x)) {
      if (!isnan(y)) r->nan_lost++, r->violations++;
    } else if (isinf(x)) {
      if (x != y) r->violations++;
    } else {
      double err = fabs((double)x - (double)y);
      if (!(err <= eb)) r->violations++; /* NaN err (y NaN) counts too */
      if (!(err <= r->max_error)) r->max_error = isnan(err) ? INFINITY : err;
    }
  }
  r->checked = n;
}

void h5fz_realistic_free(h5fz_realistic *a)
{
  free(a->values);
  a->values = NULL;
  a->n = 0;
}
