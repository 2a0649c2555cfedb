/*
 * h5fz_options.c - configuration as a value (h5fz_dataset.h, "options"):
 * the h5fz_options object and its setters, and the table of the copies
 * attached to dataset handles. A handle is a number HDF5 gives out again
 * after H5Dclose, so each copy also records the dataset it was attached to
 * (file number and object address) and is used only while the handle
 * still names that dataset.
 */
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "h5fz_dataset.h"
#include "h5fz_error.h"
#include "h5fz_options.h"

struct h5fz_options {
  h5fz_overrides o;
};

h5fz_options *h5fz_options_create(void)
{
  h5fz_options *opts = malloc(sizeof *opts);
  if (opts) h5fz_overrides_init(&opts->o);
  return opts;
}

void h5fz_options_free(h5fz_options *opts) { free(opts); }

const h5fz_overrides *h5fz_options_overrides(const h5fz_options *opts) { return &opts->o; }

int h5fz_options_set_device(h5fz_options *opts, const char *device)
{
  if (!opts) return h5fz_fail(H5FZ_ERR_ARG, "h5fz_options_set_device: NULL options");
  if (!device)
    opts->o.device = H5FZ_UNSET;
  else if (!strcasecmp(device, "auto"))
    opts->o.device = H5FZ_SETTING_DEVICE_AUTO;
  else if (!strcasecmp(device, "cpu"))
    opts->o.device = H5FZ_SETTING_DEVICE_CPU;
  else if (!strcasecmp(device, "gpu"))
    opts->o.device = H5FZ_SETTING_DEVICE_GPU;
  else
    return h5fz_fail(H5FZ_ERR_ARG, "h5fz_options_set_device: \"%s\": want auto, gpu or cpu (any case)", device);
  return H5FZ_OK;
}

/* value into the int field at offset of opts when it is -1 (unset) or in [lo, hi]. */
static int set_int(const char *fn, h5fz_options *opts, size_t offset, int value, int lo, int hi)
{
  if (!opts) return h5fz_fail(H5FZ_ERR_ARG, "%s: NULL options", fn);
  if (value != -1 && (value < lo || value > hi))
    return h5fz_fail(H5FZ_ERR_ARG, "%s: %d is out of range: want %d..%d, or -1 for the environment's", fn, value, lo,
                     hi);
  int set = value == -1 ? H5FZ_UNSET : value;
  memcpy((char *)&opts->o + offset, &set, sizeof set);
  return H5FZ_OK;
}

#define SET_INT(opts, field, value, lo, hi) set_int(__func__, opts, offsetof(h5fz_overrides, field), value, lo, hi)

int h5fz_options_set_gpu_ordinal(h5fz_options *opts, int ordinal)
{
  return SET_INT(opts, gpu_ordinal, ordinal, 0, H5FZ_GPU_ORDINAL_MAX);
}
int h5fz_options_set_threads(h5fz_options *opts, int threads) { return SET_INT(opts, host_threads, threads, 0, H5FZ_HOST_THREADS_MAX); }
int h5fz_options_set_strict(h5fz_options *opts, int strict) { return SET_INT(opts, device_strict, strict, 0, 1); }
int h5fz_options_set_quiet(h5fz_options *opts, int quiet) { return SET_INT(opts, quiet, quiet, 0, 1); }

int h5fz_options_set_cache_dir(h5fz_options *opts, const char *dir)
{
  if (!opts) return h5fz_fail(H5FZ_ERR_ARG, "h5fz_options_set_cache_dir: NULL options");
  if (dir && strlen(dir) >= sizeof opts->o.cache_dir)
    return h5fz_fail(H5FZ_ERR_ARG, "h5fz_options_set_cache_dir: the path has %zu bytes, at most %zu fit", strlen(dir),
                     sizeof opts->o.cache_dir - 1);
  snprintf(opts->o.cache_dir, sizeof opts->o.cache_dir, "%s", dir ? dir : "");
  return H5FZ_OK;
}

/* ---- the handles' copies ------------------------------------------------------------ */

/* Which dataset a handle names now: its file's number and its object's
 * address (HDF5 1.10) or token (1.12 on). */
typedef struct {
  unsigned long fileno;
  unsigned char key[16];
} dataset_identity;

static int identify(hid_t dset, dataset_identity *id)
{
  herr_t rc = -1;
  memset(id, 0, sizeof *id);
  if (H5Iget_type(dset) != H5I_DATASET) return -1;
#if H5_VERSION_GE(1, 12, 0)
  H5O_info2_t info;
  H5E_BEGIN_TRY { rc = H5Oget_info3(dset, &info, H5O_INFO_BASIC); }
  H5E_END_TRY;
  if (rc >= 0) memcpy(id->key, &info.token, sizeof info.token < 16 ? sizeof info.token : 16);
#else
  H5O_info_t info;
  H5E_BEGIN_TRY { rc = H5Oget_info2(dset, &info, H5O_INFO_BASIC); }
  H5E_END_TRY;
  if (rc >= 0) memcpy(id->key, &info.addr, sizeof info.addr);
#endif
  if (rc < 0) return -1;
  id->fileno = info.fileno;
  return 0;
}

typedef struct {
  hid_t dset;
  dataset_identity id;
  h5fz_overrides o;
} attached;

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static attached *table;
static size_t table_n, table_cap;

/* The entry of dset, or NULL. Caller holds table_lock. */
static attached *find_locked(hid_t dset)
{
  for (size_t i = 0; i < table_n; i++)
    if (table[i].dset == dset) return &table[i];
  return NULL;
}

int h5fz_dataset_set_options(hid_t dset, const h5fz_options *opts)
{
  h5fz_clear_error();
  dataset_identity id;
  if (identify(dset, &id) < 0) return h5fz_fail(H5FZ_ERR_ARG, "h5fz_dataset_set_options: not an open dataset");
  int rc = H5FZ_OK;
  pthread_mutex_lock(&table_lock);
  attached *a = find_locked(dset);
  if (!opts) {
    if (a) *a = table[--table_n];
  } else {
    if (!a && table_n == table_cap) {
      size_t cap = table_cap ? 2 * table_cap : 8;
      attached *grown = realloc(table, cap * sizeof *grown);
      if (grown) {
        table = grown;
        table_cap = cap;
      }
    }
    if (!a && table_n < table_cap) a = &table[table_n++];
    if (a) {
      a->dset = dset;
      a->id = id;
      a->o = opts->o;
    } else {
      rc = h5fz_fail(H5FZ_ERR_NOMEM, "h5fz_dataset_set_options: cannot grow the table of attached options");
    }
  }
  pthread_mutex_unlock(&table_lock);
  return rc;
}

const h5fz_overrides *h5fz_dataset_overrides(hid_t dset, h5fz_overrides *out)
{
  dataset_identity id;
  if (identify(dset, &id) < 0) return NULL;
  const h5fz_overrides *found = NULL;
  pthread_mutex_lock(&table_lock);
  attached *a = find_locked(dset);
  if (a && a->id.fileno == id.fileno && !memcmp(a->id.key, id.key, sizeof id.key)) {
    *out = a->o;
    found = out;
  } else if (a) {
    *a = table[--table_n]; /* the handle names another dataset now: the old copy goes */
  }
  pthread_mutex_unlock(&table_lock);
  return found;
}
