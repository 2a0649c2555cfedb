/*
 * heat3d.c - a small 3-D heat diffusion simulation that saves its field
 * through h5fz in two ways and checks that they agree.
 *
 * The temperature T on a 64 x 96 x 128 grid (z, y, x; float32) starts at 20
 * with two hot Gaussian blobs and diffuses by explicit finite differences
 * (7-point Laplacian, forward Euler with r = alpha dt / dx^2 = 0.1, stable
 * below 1/6; the walls are held at 20). Every SAVE_EVERY steps the field is
 * written twice:
 *
 *   /filter/T_NNNN  plain H5Dwrite into a chunked dataset whose pipeline is
 *                   the h5fz filter (H5Pset_filter with the cd_values of the
 *                   spec; HDF5 loads the filter from HDF5_PLUGIN_PATH)
 *   /api/T_NNNN     h5fz_dataset_create + h5fz_dataset_write from host
 *                   memory (api/h5fz_dataset.h: many chunks per batch)
 *
 * and checked: both datasets, reopened (so that nothing comes from HDF5's
 * chunk cache) and read back with plain H5Dread (through the plugin) and
 * with h5fz_dataset_read, are within the bound of the field and
 * decode to the same bits; every stored chunk of the two datasets is byte
 * for byte the same (H5Dget_chunk_storage_size + H5Dread_chunk). The chunks
 * (20 x 32 x 64) leave edge chunks along z, which both ways pad alike.
 *
 * Run (after the build):
 *   HDF5_PLUGIN_PATH=build/plugin build/bin/heat3d [OUT.h5] [SPEC]
 * OUT.h5 (default heat3d.h5) is replaced; SPEC (default "abs=1e-3") is an
 * abs=, pw_rel= or lossless spec (docs/spec.md). Prints one line per saved
 * step (ratio and max error of both datasets) and a final "heat3d: OK" line;
 * exit status 1 when a check fails, 2 on an error.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hdf5.h>

#include "h5fz.h"
#include "h5fz_dataset.h"

#ifndef H5FZ_FILTER_ID
#define H5FZ_FILTER_ID 32770
#endif

#define NZ 64
#define NY 96
#define NX 128
#define STEPS 100
#define SAVE_EVERY 25
#define R 0.1f /* alpha dt / dx^2 */
#define WALL 20.0f

static const hsize_t dims[3] = {NZ, NY, NX};
static const hsize_t chunk[3] = {20, 32, 64};
static const size_t n_elems = (size_t)NZ * NY * NX;

static size_t at(int z, int y, int x) { return ((size_t)z * NY + (size_t)y) * NX + (size_t)x; }

/* 20 everywhere, plus a large hot blob and a smaller, hotter one. */
static void initial_field(float *t)
{
  for (int z = 0; z < NZ; z++)
    for (int y = 0; y < NY; y++)
      for (int x = 0; x < NX; x++) {
        double d1 = (z - 24.0) * (z - 24.0) + (y - 40.0) * (y - 40.0) + (x - 44.0) * (x - 44.0);
        double d2 = (z - 42.0) * (z - 42.0) + (y - 62.0) * (y - 62.0) + (x - 90.0) * (x - 90.0);
        int wall = z == 0 || y == 0 || x == 0 || z == NZ - 1 || y == NY - 1 || x == NX - 1;
        t[at(z, y, x)] =
            wall ? WALL : (float)(WALL + 60.0 * exp(-d1 / (2 * 10.0 * 10.0)) + 80.0 * exp(-d2 / (2 * 6.0 * 6.0)));
      }
}

/* One explicit step: next = t + R * laplacian(t) inside, walls unchanged. */
static void diffuse(const float *t, float *next)
{
  memcpy(next, t, n_elems * sizeof *t);
  for (int z = 1; z < NZ - 1; z++)
    for (int y = 1; y < NY - 1; y++)
      for (int x = 1; x < NX - 1; x++) {
        size_t i = at(z, y, x);
        float lap =
            t[i - 1] + t[i + 1] + t[i - NX] + t[i + NX] + t[i - (size_t)NX * NY] + t[i + (size_t)NX * NY] - 6.0f * t[i];
        next[i] = t[i] + R * lap;
      }
}

/* ---- checks ---------------------------------------------------------------- */

/* Elements of back outside the spec's bound around orig; *max_err gets the
 * largest error (absolute for abs=, relative to |x| for pw_rel=, the number
 * of differing values for lossless). */
static size_t out_of_bound(const float *orig, const float *back, const h5fz_spec *spec, double *max_err)
{
  size_t bad = 0;
  *max_err = 0;
  for (size_t i = 0; i < n_elems; i++) {
    double x = orig[i], y = back[i], e = fabs(x - y);
    int ok;
    if (spec->mode == H5FZ_MODE_LOSSLESS) {
      ok = memcmp(&orig[i], &back[i], sizeof(float)) == 0;
      e = ok ? 0 : 1;
      if (!ok) *max_err += 1;
    } else {
      if (spec->mode == H5FZ_MODE_PW_REL) e = x != 0 ? e / fabs(x) : (y == 0 ? 0 : INFINITY);
      ok = e <= spec->bound; /* NaN fails */
      if (!(e <= *max_err)) *max_err = e;
    }
    if (!ok) {
      if (bad < 3) fprintf(stderr, "heat3d:   element %zu: %.9g read back as %.9g\n", i, x, y);
      bad++;
    }
  }
  return bad;
}

/* Compare every stored chunk of datasets a and b: same size, same filter
 * mask, same bytes. Returns the number of chunks that differ, -1 on error;
 * *n_chunks gets the chunks compared. */
static long compare_chunks(hid_t a, hid_t b, size_t *n_chunks)
{
  long differ = 0;
  *n_chunks = 0;
  for (hsize_t z = 0; z < dims[0]; z += chunk[0])
    for (hsize_t y = 0; y < dims[1]; y += chunk[1])
      for (hsize_t x = 0; x < dims[2]; x += chunk[2]) {
        hsize_t off[3] = {z, y, x}, size_a = 0, size_b = 0;
        uint32_t mask_a = 0, mask_b = 0;
        void *buf_a, *buf_b;
        if (H5Dget_chunk_storage_size(a, off, &size_a) < 0 || H5Dget_chunk_storage_size(b, off, &size_b) < 0) return -1;
        (*n_chunks)++;
        if (size_a != size_b || size_a == 0) {
          if (differ < 3)
            fprintf(stderr, "heat3d:   chunk [%llu,%llu,%llu]: %llu bytes vs %llu\n", (unsigned long long)z,
                    (unsigned long long)y, (unsigned long long)x, (unsigned long long)size_a,
                    (unsigned long long)size_b);
          differ++;
          continue;
        }
        buf_a = malloc(size_a);
        buf_b = malloc(size_b);
        if (!buf_a || !buf_b || H5Dread_chunk(a, H5P_DEFAULT, off, &mask_a, buf_a) < 0 ||
            H5Dread_chunk(b, H5P_DEFAULT, off, &mask_b, buf_b) < 0) {
          free(buf_a);
          free(buf_b);
          return -1;
        }
        if (mask_a != mask_b || memcmp(buf_a, buf_b, size_a) != 0) {
          if (differ < 3)
            fprintf(stderr, "heat3d:   chunk [%llu,%llu,%llu]: the stored bytes differ\n", (unsigned long long)z,
                    (unsigned long long)y, (unsigned long long)x);
          differ++;
        }
        free(buf_a);
        free(buf_b);
      }
  return differ;
}

/* ---- writing ---------------------------------------------------------------- */

/* (a) The filter through plain HDF5 calls, as any C program would. */
static hid_t write_with_filter(hid_t group, const char *name, const float *t, const unsigned *cd, size_t n_cd)
{
  hid_t space = H5Screate_simple(3, dims, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE), d = -1;
  if (space >= 0 && dcpl >= 0 && H5Pset_chunk(dcpl, 3, chunk) >= 0 &&
      H5Pset_filter(dcpl, H5FZ_FILTER_ID, H5Z_FLAG_MANDATORY, n_cd, cd) >= 0)
    d = H5Dcreate2(group, name, H5T_NATIVE_FLOAT, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  if (d >= 0 && H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, t) < 0) {
    H5Dclose(d);
    d = -1;
  }
  if (dcpl >= 0) H5Pclose(dcpl);
  if (space >= 0) H5Sclose(space);
  return d;
}

/* (b) The dataset API: the whole array in one call. */
static hid_t write_with_api(hid_t group, const char *name, const float *t, const char *spec_text,
                            h5fz_dataset_report *report)
{
  hid_t d = -1;
  int st = h5fz_dataset_create(group, name, H5T_NATIVE_FLOAT, 3, dims, chunk, spec_text, &d);
  if (st == H5FZ_OK) st = h5fz_dataset_write(d, t, H5FZ_MEM_HOST, report);
  if (st != H5FZ_OK) {
    fprintf(stderr, "heat3d: %s: %s (%s)\n", name, h5fz_last_error(), h5fz_status_name(st));
    if (d >= 0) H5Dclose(d);
    return -1;
  }
  return d;
}

static double ratio_of(hid_t d)
{
  hsize_t stored = H5Dget_storage_size(d);
  return stored ? (double)(n_elems * sizeof(float)) / (double)stored : 0.0;
}

/* Read d both ways into by_hdf5 and by_api, check both against t and
 * against each other. Returns the number of failed checks, -1 on error. */
static int read_and_check(hid_t d, const char *what, const float *t, const h5fz_spec *spec, float *by_hdf5,
                          float *by_api, double *max_err)
{
  int failed = 0;
  double e1 = 0, e2 = 0;
  if (H5Dread(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, by_hdf5) < 0) {
    fprintf(stderr, "heat3d: %s: H5Dread failed (is HDF5_PLUGIN_PATH set?)\n", what);
    return -1;
  }
  if (out_of_bound(t, by_hdf5, spec, &e1)) {
    fprintf(stderr, "heat3d: %s read by H5Dread: bound broken\n", what);
    failed++;
  }
  {
    int st = h5fz_dataset_read(d, by_api, H5FZ_MEM_HOST, NULL);
    if (st != H5FZ_OK) {
      fprintf(stderr, "heat3d: %s: h5fz_dataset_read: %s (%s)\n", what, h5fz_last_error(), h5fz_status_name(st));
      return -1;
    }
  }
  if (out_of_bound(t, by_api, spec, &e2)) {
    fprintf(stderr, "heat3d: %s read by h5fz_dataset_read: bound broken\n", what);
    failed++;
  }
  if (memcmp(by_hdf5, by_api, n_elems * sizeof(float)) != 0) {
    fprintf(stderr, "heat3d: %s: H5Dread and h5fz_dataset_read decode different values\n", what);
    failed++;
  }
  *max_err = e1 > e2 ? e1 : e2;
  return failed;
}

int main(int argc, char **argv)
{
  const char *out = argc > 1 ? argv[1] : "heat3d.h5";
  const char *spec_text = argc > 2 ? argv[2] : "abs=1e-3";
  unsigned cd[H5FZ_CD_MAX];
  size_t n_cd = 0, n_chunks = 0;
  h5fz_spec spec;
  float *t = NULL, *next = NULL, *back1 = NULL, *back2 = NULL;
  hid_t file = -1, g_filter = -1, g_api = -1;
  int failures = 0, rc = 2;
  double worst = 0;

  if (argc > 3 || (argc > 1 && argv[1][0] == '-')) {
    fprintf(stderr, "usage: heat3d [OUT.h5] [SPEC]   (default heat3d.h5 \"abs=1e-3\")\n");
    return 2;
  }
  /* The spec as cd_values, exactly what `h5fz cd-values SPEC` prints. */
  if (h5fz_spec_parse(spec_text, &spec) != H5FZ_OK ||
      h5fz_spec_to_cd_values(&spec, 0, cd, H5FZ_CD_MAX, &n_cd) != H5FZ_OK) {
    fprintf(stderr, "heat3d: bad spec \"%s\": %s\n", spec_text, h5fz_last_error());
    return 2;
  }
  if (spec.mode == H5FZ_MODE_REL) {
    fprintf(stderr, "heat3d: give an abs=, pw_rel= or lossless spec (a rel= bound depends on "
                    "each chunk's range, which this example does not check)\n");
    return 2;
  }
  if (H5Zfilter_avail(H5FZ_FILTER_ID) <= 0) {
    fprintf(stderr,
            "heat3d: the h5fz filter (id %d) is not available: set HDF5_PLUGIN_PATH to "
            "the folder of libh5fz.so (build/plugin)\n",
            H5FZ_FILTER_ID);
    return 2;
  }
  t = malloc(n_elems * sizeof *t);
  next = malloc(n_elems * sizeof *next);
  back1 = malloc(n_elems * sizeof *back1);
  back2 = malloc(n_elems * sizeof *back2);
  file = H5Fcreate(out, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (file >= 0) g_filter = H5Gcreate2(file, "filter", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  if (file >= 0) g_api = H5Gcreate2(file, "api", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  if (!t || !next || !back1 || !back2 || g_filter < 0 || g_api < 0) {
    fprintf(stderr, "heat3d: cannot create %s (or out of memory)\n", out);
    goto done;
  }
  printf("heat3d: %dx%dx%d float32, chunk %llux%llux%llu, %d steps, r = %g, spec %s -> %s\n", NZ, NY, NX,
         (unsigned long long)chunk[0], (unsigned long long)chunk[1], (unsigned long long)chunk[2], STEPS, (double)R,
         spec_text, out);

  initial_field(t);
  for (int step = 0; step <= STEPS; step++) {
    if (step % SAVE_EVERY == 0) {
      char name[32];
      h5fz_dataset_report report;
      hid_t da, db = -1;
      double err_a = 0, err_b = 0;
      long differ;
      int fa, fb;
      snprintf(name, sizeof name, "T_%04d", step);
      da = write_with_filter(g_filter, name, t, cd, n_cd);
      if (da < 0)
        fprintf(stderr, "heat3d: /filter/%s: writing through the filter failed\n", name);
      else
        db = write_with_api(g_api, name, t, spec_text, &report);
      if (da < 0 || db < 0) {
        if (da >= 0) H5Dclose(da);
        goto done;
      }
      if (step == 0)
        printf("heat3d: dataset API on %s (kernel class %s)\n", report.on_gpu ? "the GPU" : "the CPU",
               report.kernel_class);
      /* Reopen both before reading: the dataset H5Dwrite just wrote keeps
       * chunks in HDF5's chunk cache *uncompressed*, and H5Dread on that
       * handle would return them from there, never running the decoder. */
      H5Dclose(da);
      H5Dclose(db);
      da = H5Dopen2(g_filter, name, H5P_DEFAULT);
      db = H5Dopen2(g_api, name, H5P_DEFAULT);
      if (da < 0 || db < 0) {
        if (da >= 0) H5Dclose(da);
        if (db >= 0) H5Dclose(db);
        goto done;
      }
      fa = read_and_check(da, "/filter", t, &spec, back1, back2, &err_a);
      fb = read_and_check(db, "/api", t, &spec, back1, back2, &err_b);
      differ = compare_chunks(da, db, &n_chunks);
      if (fa < 0 || fb < 0 || differ < 0) {
        fprintf(stderr, "heat3d: step %d: reading back failed\n", step);
        H5Dclose(da);
        H5Dclose(db);
        goto done;
      }
      failures += fa + fb + (differ > 0);
      if (err_a > worst) worst = err_a;
      if (err_b > worst) worst = err_b;
      printf("step %4d  filter: ratio %7.3f max err %.3g   api: ratio %7.3f max err %.3g   "
             "identical chunks %zu/%zu\n",
             step, ratio_of(da), err_a, ratio_of(db), err_b, n_chunks - (size_t)differ, n_chunks);
      H5Dclose(da);
      H5Dclose(db);
    }
    if (step < STEPS) {
      float *swap;
      diffuse(t, next);
      swap = t;
      t = next;
      next = swap;
    }
  }
  if (failures) {
    printf("heat3d: FAIL (%d failed checks)\n", failures);
    rc = 1;
  } else {
    printf("heat3d: OK: %d steps saved twice, every value within %s (max err %.3g), the stored "
           "chunks of both ways identical\n",
           STEPS / SAVE_EVERY + 1, spec_text, worst);
    rc = 0;
  }
done:
  if (g_api >= 0) H5Gclose(g_api);
  if (g_filter >= 0) H5Gclose(g_filter);
  if (file >= 0) H5Fclose(file);
  free(t);
  free(next);
  free(back1);
  free(back2);
  return rc;
}
