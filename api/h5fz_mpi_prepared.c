/*
 * h5fz_mpi_prepared.c - a rank's chunks into the file through HDF5's
 * collective filtered H5Dwrite, the plugin handing HDF5 the containers
 * made before (h5fz_mpi_prepared.h, filter/h5fz_prepared.h).
 *
 * HDF5 then does what a write of N ranks needs and H5Dwrite_chunk cannot:
 * it gathers every chunk's compressed size, every rank allocates every
 * chunk the same way (the file's metadata stays identical), and each rank
 * writes only its own chunks' bytes, in one collective MPI-IO write.
 */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "h5fz_batch.h"
#include "h5fz_error.h"
#include "h5fz_hdf5_reason.h"
#include "h5fz_mpi_parts.h"
#include "h5fz_mpi_prepared.h"
#include "h5fz_plugin_settings.h"
#include "h5fz_prepared.h"

/* ---- the plugin copy HDF5 calls ----------------------------------------------------- */

/* The load address of the libhdf5 this library calls (its H5open's). */
static const void *own_hdf5(void)
{
  void *sym = dlsym(RTLD_DEFAULT, "H5open");
  Dl_info info;
  return sym && dladdr(sym, &info) ? info.dli_fbase : NULL;
}

typedef struct {
  const void *want; /* our libhdf5 */
  h5fz_prepared_fn found;
} entry_search;

/* A plugin copy's h5fz_plugin_prepared: ours when it is bound to our
 * libhdf5 (a plugin bound to several answers for ours); 1 ends the walk. */
static int bound_to_ours(void *sym, void *ctx)
{
  entry_search *e = ctx;
  h5fz_prepared_fn fn;
  memcpy(&fn, &sym, sizeof fn);
  const void *bound = e->want;
  if (fn(NULL, &bound) != 0 || bound != e->want) return 0;
  e->found = fn;
  return 1;
}

/* The entry point of a loaded h5fz plugin bound to our libhdf5, or NULL
 * (the one walk over the plugin copies, filter/h5fz_plugin_settings.h). */
static h5fz_prepared_fn find_entry(void)
{
  entry_search e = {.want = own_hdf5()};
  if (e.want) h5fz_plugin_copies_each(H5FZ_PREPARED_SYMBOL, bound_to_ours, &e);
  return e.found;
}

static h5fz_prepared_fn g_entry;

static h5fz_prepared_fn entry(void)
{
  /* HDF5 loads the plugin at the dataset's first use, so a miss is looked
   * up again next time; a hit stays (HDF5 keeps its plugins loaded) */
  if (!g_entry) g_entry = find_entry();
  return g_entry;
}

int h5fz_mpi_prepared_usable(void) { return entry() != NULL; }

/* ---- the write ---------------------------------------------------------------------- */

/* A value no earlier write of this process used, for the tags. */
static uint64_t next_nonce(void)
{
  static uint64_t count;
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  uint64_t x = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^ ((uint64_t)getpid() << 40) ^ (++count << 20);
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  return x ^ (x >> 33);
}

typedef struct {
  const uint8_t **container;
  uint64_t *bytes; /* the prepared-chunk ABI takes the sizes as their own array */
  uint8_t *taken, *tags;
  hsize_t *coords;
  hid_t fspace, mspace, ftype, dxpl;
} prepared_write;

static void release(prepared_write *w)
{
  free(w->container);
  free(w->bytes);
  free(w->taken);
  free(w->tags);
  free(w->coords);
  if (w->fspace >= 0) H5Sclose(w->fspace);
  if (w->mspace >= 0) H5Sclose(w->mspace);
  if (w->ftype >= 0) H5Tclose(w->ftype);
  if (w->dxpl >= 0) H5Pclose(w->dxpl);
}

/* The selection: chunk i's origin is the i-th point, tagged i + nonce in
 * the file's own element type (so HDF5 converts nothing). */
static int build(prepared_write *w, const h5fz_dataset_info *di, h5fz_mpi_chunks *mine, h5fz_prepared_chunks *p)
{
  uint64_t n = mine->n;
  uint32_t rank = di->g.rank;
  size_t esize = h5fz_dtype_size(di->dtype);
  w->container = malloc((n + 1) * sizeof *w->container);
  w->bytes = malloc((n + 1) * sizeof *w->bytes);
  w->taken = calloc(n + 1, 1);
  w->tags = malloc((n + 1) * esize);
  w->coords = malloc((n + 1) * rank * sizeof *w->coords);
  if (!w->container || !w->bytes || !w->taken || !w->tags || !w->coords)
    return h5fz_fail(H5FZ_ERR_NOMEM, "tables of %llu prepared chunks", (unsigned long long)n);
  p->version = H5FZ_PREPARED_VERSION;
  p->tag_bytes = (uint32_t)esize;
  p->n = n;
  p->chunk_bytes = esize;
  for (uint32_t d = 0; d < rank; d++) p->chunk_bytes *= di->g.chunk[d];
  p->nonce = next_nonce();
  for (uint64_t i = 0; i < n; i++) {
    const h5fz_mpi_chunk *e = &mine->chunk[i];
    uint8_t *c = mine->payload + e->offset;
    /* the bytes the filter writes for the same values in a big-endian dataset */
    if (di->big_endian && h5fz_container_set_byte_order(c, e->bytes, 1))
      return h5fz_fail(H5FZ_ERR_CORRUPT, "chunk %llu: not a container", (unsigned long long)e->index);
    w->container[i] = c;
    w->bytes[i] = e->bytes;
    if (esize == 4) {
      uint32_t t = (uint32_t)(i + p->nonce);
      memcpy(w->tags + 4 * i, &t, 4);
    } else {
      uint64_t t = i + p->nonce;
      memcpy(w->tags + 8 * i, &t, 8);
    }
    h5fz_dataset_chunk_offset(&di->g, e->index, w->coords + (size_t)i * rank);
  }
  p->container = w->container;
  p->bytes = w->bytes;
  p->taken = w->taken;
  return H5FZ_OK;
}

int h5fz_mpi_write_prepared(MPI_Comm comm, hid_t dset, const h5fz_dataset_info *di, h5fz_mpi_chunks *mine)
{
  prepared_write w = {.fspace = -1, .mspace = -1, .ftype = -1, .dxpl = -1};
  h5fz_prepared_chunks p;
  memset(&p, 0, sizeof p);
  h5fz_prepared_fn fn = entry();
  int rc =
      fn ? build(&w, di, mine, &p) : h5fz_fail(H5FZ_ERR_UNSUPPORTED, "no loaded h5fz plugin takes prepared containers");
  hsize_t mdim = mine->n ? mine->n : 1;
  if (!rc) {
    w.fspace = H5Dget_space(dset);
    w.mspace = H5Screate_simple(1, &mdim, NULL);
    w.ftype = H5Dget_type(dset);
    w.dxpl = H5Pcreate(H5P_DATASET_XFER);
    herr_t sel = mine->n ? H5Sselect_elements(w.fspace, H5S_SELECT_SET, mine->n, w.coords)
                         : (w.fspace < 0 || w.mspace < 0 ? -1 : (H5Sselect_none(w.fspace), H5Sselect_none(w.mspace)));
    if (w.fspace < 0 || w.mspace < 0 || w.ftype < 0 || w.dxpl < 0 || sel < 0 ||
        H5Pset_dxpl_mpio(w.dxpl, H5FD_MPIO_COLLECTIVE) < 0)
      rc = h5fz_fail(H5FZ_ERR_HDF5, "cannot build the selection of %llu chunks", (unsigned long long)mine->n);
  }
  if (!rc && fn(&p, NULL) != 0)
    rc = h5fz_fail(H5FZ_ERR_UNSUPPORTED, "the loaded h5fz plugin does not know this prepared-chunk version");
  /* H5Dwrite is collective: every rank calls it (an empty part too), or none */
  if ((rc = h5fz_mpi_agree(comm, rc))) {
    if (fn) fn(NULL, NULL);
    release(&w);
    return rc;
  }
  herr_t wr = H5Dwrite(dset, w.ftype, w.mspace, w.fspace, w.dxpl, w.tags);
  fn(NULL, NULL);
  if (wr < 0) {
    char why[400];
    h5fz_hdf5_innermost_reason(why, sizeof why);
    /* the plugin's own refusal says more than HDF5's "filter returned failure" */
    rc = h5fz_fail(H5FZ_ERR_HDF5, "the collective H5Dwrite of %llu chunks failed: %s", (unsigned long long)mine->n,
                   p.refusal[0] ? p.refusal
                   : why[0]     ? why
                                : "HDF5 gave no reason");
  } else if (p.n_taken != mine->n || p.n_refused)
    rc = h5fz_fail(H5FZ_ERR_UNSUPPORTED,
                   "the plugin handed HDF5 %llu of this rank's %llu prepared chunks (%llu calls refused)",
                   (unsigned long long)p.n_taken, (unsigned long long)mine->n, (unsigned long long)p.n_refused);
  release(&w);
  return rc;
}
