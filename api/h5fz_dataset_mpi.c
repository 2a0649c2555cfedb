/*
 * h5fz_dataset_mpi.c - the collective dataset API (h5fz_dataset_mpi.h).
 *
 * A write: every rank describes the dataset and its part (a claim), the
 * claims are gathered and checked the same way on every rank
 * (h5fz_mpi_parts.c), each rank encodes the chunks of its part with
 * h5fz_array_encode (its part is an array of its own whose chunk grid is
 * the dataset's, shifted) piece by piece (h5fz_mpi_pieces.c: the next
 * piece on its own thread while this thread stores the last), and each
 * piece's chunks reach the file one of two ways:
 *
 *  - filtered (the default): one collective H5Dwrite that selects each
 *    chunk's origin, the plugin handing HDF5 the containers in place of
 *    compressing (h5fz_mpi_prepared.c): HDF5 gathers the sizes, every rank
 *    allocates every chunk, each writes only its own bytes;
 *  - direct (H5FZ_MPI_WRITE=direct, or a plugin that does not take
 *    prepared containers): the containers go to every rank
 *    (h5fz_mpi_exchange.c) and every rank stores every chunk with
 *    H5Dwrite_chunk in the same order. Any H5Dwrite_chunk may change the
 *    file's metadata (chunk index, free space) only when all ranks change
 *    it the same way: a rank writing only its own chunks hangs 1.14.5
 *    (bench/bench_mpi_direct_chunk.c, docs/mpi.md), so each rank writes the
 *    whole compressed dataset.
 *
 * Then the attribute tables are summed over the ranks and written by all.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "h5fz_dataset_attrs.h"
#include "h5fz_dataset_create.h"
#include "h5fz_dataset_info.h"
#include "h5fz_dataset_mpi.h"
#include "h5fz_device_query.h"
#include "h5fz_error.h"
#include "h5fz_settings.h"
#include "h5fz_mpi_exchange.h"
#include "h5fz_mpi_parts.h"
#include "h5fz_mpi_pieces.h"
#include "h5fz_mpi_prepared.h"
#include "h5fz_options.h"
#include "h5fz_plugin_settings.h"

static double now_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- the GPU of this rank ----------------------------------------------------------- */

static int g_gpu_selected;

/* GPUs the driver shows this process (CUDA_VISIBLE_DEVICES applied), 0
 * without a driver or with H5FZ_DEVICE=cpu. */
static int visible_gpus(void)
{
  h5fz_settings s;
  h5fz_settings_read(&s, H5FZ_SETTINGS_DEVICE);
  if (s.device == H5FZ_SETTING_DEVICE_CPU) return 0;
  return h5fz_gpu_visible_count();
}

/* Make ordinal the GPU of every copy of the codec in this process. The
 * settings are read once per process, each copy (this library's, and the
 * filter plugin's, which libhdf5 loads with its own) from a snapshot of
 * the environment at its first read, which may have been taken before
 * this call (a dataset created first, H5FZ_DEVICE read just above), so a
 * setenv alone no longer reaches them:
 *  - this library's copy: h5fz_settings_set_gpu_ordinal;
 *  - the plugin's: HDF5 loads it now (H5Zfilter_avail, as
 *    h5fz_dataset_describe does) and each loaded copy gets the ordinal
 *    through its entry point h5fz_plugin_settings
 *    (filter/h5fz_plugin_settings.h);
 *  - H5FZ_GPU_ORDINAL is still set, first: a plugin copy that another
 *    libhdf5 loads later takes it in its snapshot, an older plugin without
 *    the entry point reads it at each call, and child processes inherit
 *    it. (setenv is not thread-safe against another thread's getenv: this
 *    runs at the rank's start, and h5fz's own reads are done by now.) */
static void tell_gpu_ordinal(int chosen)
{
  char text[16];
  snprintf(text, sizeof text, "%d", chosen);
  setenv("H5FZ_GPU_ORDINAL", text, 1);
  /* 0..1023: chosen < the visible GPUs */
  (void)h5fz_settings_set_gpu_ordinal(chosen);
  /* no plugin to load: nothing to tell */
  H5E_BEGIN_TRY { (void)H5Zfilter_avail(H5FZ_FILTER_ID); }
  H5E_END_TRY;
  h5fz_plugin_settings_msg m = {.version = H5FZ_PLUGIN_SETTINGS_VERSION, .reload = 0, .gpu_ordinal = chosen};
  (void)h5fz_plugin_copies_tell(&m, NULL);
}

int h5fz_mpi_select_gpu(MPI_Comm comm, int *ordinal)
{
  h5fz_clear_error();
  MPI_Comm node;
  int local = 0;
  if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) != MPI_SUCCESS)
    return h5fz_fail(H5FZ_ERR_ARG, "h5fz_mpi_select_gpu: MPI_Comm_split_type failed");
  MPI_Comm_rank(node, &local);
  MPI_Comm_free(&node);
  g_gpu_selected = 1;
  int chosen = -1;
  h5fz_settings s;
  h5fz_settings_read(&s, H5FZ_SETTINGS_GPU);
  if (s.gpu_ordinal_set) {
    chosen = s.gpu_ordinal;
  } else {
    int n = visible_gpus();
    if (n > 0) {
      chosen = local % n;
      tell_gpu_ordinal(chosen);
    }
  }
  if (ordinal) *ordinal = chosen;
  return H5FZ_OK;
}

/* ---- the file's communicator -------------------------------------------------------- */

/* A duplicate of the communicator obj's file was opened with (the caller
 * frees it with MPI_Comm_free). */
static int file_comm(const char *fn, hid_t obj, MPI_Comm *comm)
{
  *comm = MPI_COMM_NULL;
  hid_t file = H5Iget_file_id(obj), fapl = file < 0 ? -1 : H5Fget_access_plist(file);
  int rc = H5FZ_OK;
  MPI_Info info = MPI_INFO_NULL;
  if (fapl < 0)
    rc = h5fz_fail(H5FZ_ERR_HDF5, "%s: not an open HDF5 object", fn);
  else if (H5Pget_driver(fapl) != H5FD_MPIO || H5Pget_fapl_mpio(fapl, comm, &info) < 0)
    rc = h5fz_fail(H5FZ_ERR_ARG,
                   "%s: the file is not open with the MPI-IO driver (H5Pset_fapl_mpio); "
                   "in a serial program use h5fz_dataset_create / _write / _read",
                   fn);
  if (info != MPI_INFO_NULL) MPI_Info_free(&info);
  if (fapl >= 0) H5Pclose(fapl);
  if (file >= 0) H5Fclose(file);
  if (!rc && !g_gpu_selected) rc = h5fz_mpi_select_gpu(*comm, NULL);
  return rc;
}

static int type_of(hid_t mem_type)
{
  if (H5Tequal(mem_type, H5T_NATIVE_FLOAT) > 0) return H5FZ_DTYPE_F32;
  if (H5Tequal(mem_type, H5T_NATIVE_DOUBLE) > 0) return H5FZ_DTYPE_F64;
  return H5FZ_DTYPE_UNKNOWN;
}

/* ---- claims ------------------------------------------------------------------------- */

/* This rank's claim for a write or read of the box start/count of dset. */
static void claim_part(hid_t dset, hid_t mem_type, const hsize_t *start, const hsize_t *count, const void *data,
                       h5fz_mem where, int whole_chunks, h5fz_dataset_info *di, h5fz_mpi_claim *c)
{
  memset(c, 0, sizeof *c);
  c->where = (int32_t)where;
  H5E_BEGIN_TRY { c->dtype = type_of(mem_type); }
  H5E_END_TRY;
  c->status = h5fz_dataset_describe(dset, di);
  if (c->status) {
    snprintf(c->message, sizeof c->message, "%s", h5fz_last_error());
    return;
  }
  c->rank = (int32_t)di->g.rank;
  unsigned cd[H5FZ_CD_MAX];
  size_t n_cd = 0;
  h5fz_spec_to_cd_values(&di->spec, 1, cd, H5FZ_CD_MAX, &n_cd);
  uint64_t h = h5fz_fnv1a(H5FZ_FNV_START, &c->rank, sizeof c->rank);
  h = h5fz_fnv1a(h, di->g.dims, sizeof di->g.dims);
  h = h5fz_fnv1a(h, di->g.chunk, sizeof di->g.chunk);
  h = h5fz_fnv1a(h, &di->dtype, sizeof di->dtype);
  c->dataset_digest = h5fz_fnv1a(h, cd, n_cd * sizeof cd[0]);
  memcpy(c->dims, di->g.dims, sizeof c->dims);
  memcpy(c->chunk, di->g.chunk, sizeof c->chunk);
  const char *why = NULL;
  uint64_t elems = 1;
  if (where != H5FZ_MEM_HOST && where != H5FZ_MEM_DEVICE)
    why = "where must be H5FZ_MEM_HOST or H5FZ_MEM_DEVICE";
  else if (!start || !count)
    why = "NULL start or count";
  if (!why) {
    for (uint32_t d = 0; d < di->g.rank; d++) {
      c->start[d] = start[d];
      c->count[d] = count[d];
      elems *= count[d];
    }
    if (elems && !data) why = "NULL data for a part that is not empty";
  }
  if (why) {
    c->status = H5FZ_ERR_ARG;
    snprintf(c->message, sizeof c->message, "%s", why);
    return;
  }
  if (!whole_chunks && where == H5FZ_MEM_DEVICE && elems)
    for (uint32_t d = 0; d < di->g.rank; d++)
      if (start[d] % di->g.chunk[d] ||
          ((start[d] + count[d]) % di->g.chunk[d] && start[d] + count[d] != di->g.dims[d])) {
        c->status = H5FZ_ERR_UNSUPPORTED;
        snprintf(c->message, sizeof c->message,
                 "a device array needs a part on the chunk grid (dim %u starts at %llu, ends at %llu, chunk %llu)", d,
                 (unsigned long long)start[d], (unsigned long long)(start[d] + count[d]),
                 (unsigned long long)di->g.chunk[d]);
        return;
      }
}

/* Gather and check the claims: the same verdict on every rank. */
static int agree_on_parts(const char *fn, MPI_Comm comm, const h5fz_mpi_claim *mine, int dataset_dtype,
                          int whole_chunks)
{
  h5fz_mpi_claim *all = NULL;
  int n = 0, rc = h5fz_mpi_claims_gather(comm, mine, &all, &n);
  if (!rc) rc = h5fz_mpi_check_claims(fn, all, n, dataset_dtype, whole_chunks);
  free(all);
  return rc; /* the same on every rank: the same checks of the same claims */
}

/* With H5FZ_MPI_PROFILE set (not 0) on any rank: rank 0 prints the
 * slowest rank's seconds of each phase of a call to stderr, for finding
 * the bottleneck (docs/mpi.md), and `bytes` with what they are (`what`).
 * Collective: the ranks agree first, as the variable may be set on some
 * ranks only. */
static void profile(MPI_Comm comm, const char *call, const double *secs, const char *const *names, int n, double bytes,
                    const char *what)
{
  h5fz_settings s;
  h5fz_settings_read(&s, H5FZ_SETTINGS_MPI);
  int on = s.mpi_profile;
  MPI_Allreduce(MPI_IN_PLACE, &on, 1, MPI_INT, MPI_MAX, comm);
  if (!on) return;
  double slowest[8] = {0};
  MPI_Allreduce(secs, slowest, n, MPI_DOUBLE, MPI_MAX, comm);
  int me = 0;
  MPI_Comm_rank(comm, &me);
  if (me) return;
  fprintf(stderr, "h5fz %s profile (slowest rank, s):", call);
  for (int i = 0; i < n; i++) fprintf(stderr, " %s %.4f", names[i], slowest[i]);
  fprintf(stderr, "; %.1f MB %s\n", bytes / 1e6, what);
}

/* ---- create ------------------------------------------------------------------------- */

/* What the filter's set_local asks of H5FZ_DEVICE for this dataset:
 * h5fz_device_check on one chunk of dtype x chunk dims. */
static int device_check(const h5fz_spec *user, int dtype, int rank, const hsize_t *chunk_dims)
{
  if (dtype != H5FZ_DTYPE_F32 && dtype != H5FZ_DTYPE_F64) return H5FZ_OK; /* refused before, with its reason */
  h5fz_spec spec = *user;
  spec.dtype = (h5fz_dtype)dtype;
  size_t chunk_bytes = h5fz_dtype_size(spec.dtype);
  for (int d = 0; d < rank; d++) chunk_bytes *= chunk_dims[d];
  return h5fz_device_check(&spec, chunk_bytes);
}

int h5fz_dataset_create_mpi(hid_t loc, const char *name, hid_t mem_type, int rank, const hsize_t *dims,
                            const hsize_t *chunk_dims, const char *spec_text, hid_t *dset)
{
  static const char fn[] = "h5fz_dataset_create_mpi";
  h5fz_clear_error();
  if (dset) *dset = H5I_INVALID_HID;
  MPI_Comm comm;
  int rc = file_comm(fn, loc, &comm);
  if (rc) return rc;
  h5fz_mpi_claim c;
  memset(&c, 0, sizeof c);
  H5E_BEGIN_TRY { c.dtype = type_of(mem_type); }
  H5E_END_TRY;
  h5fz_spec spec;
  char text[512] = "";
  if (!name || !dims || !chunk_dims || !dset || rank < 1 || rank > H5FZ_ARRAY_MAX_RANK) {
    c.status = H5FZ_ERR_ARG;
    snprintf(c.message, sizeof c.message, "NULL argument or rank outside 1..%d", H5FZ_ARRAY_MAX_RANK);
  } else if ((c.status = spec_text ? h5fz_spec_parse(spec_text, &spec) : h5fz_spec_default(&spec))) {
    snprintf(c.message, sizeof c.message, "%s", h5fz_last_error());
  } else {
    h5fz_spec_format(&spec, text, sizeof text);
    c.rank = rank;
    for (int d = 0; d < rank; d++) {
      c.dims[d] = dims[d];
      c.chunk[d] = chunk_dims[d] ? chunk_dims[d] : 1;
    }
    /* where: ranks passing different groups (with the same name) would
     * create different datasets, each waiting for the others */
    char where_text[512] = "";
    H5E_BEGIN_TRY { H5Iget_name(loc, where_text, sizeof where_text); }
    H5E_END_TRY;
    uint64_t h = h5fz_fnv1a(H5FZ_FNV_START, where_text, strlen(where_text));
    h = h5fz_fnv1a(h, name, strlen(name));
    h = h5fz_fnv1a(h, &c.rank, sizeof c.rank);
    h = h5fz_fnv1a(h, c.dims, sizeof c.dims);
    for (int d = 0; d < rank; d++) h = h5fz_fnv1a(h, &chunk_dims[d], sizeof chunk_dims[d]);
    c.dataset_digest = h5fz_fnv1a(h, text, strlen(text));
  }
  rc = agree_on_parts(fn, comm, &c, c.dtype, 0);
  /* the plugin found on every rank before the create's collective calls
   * (a rank without it would leave the others waiting in them) */
  if (!rc) rc = h5fz_mpi_agree(comm, h5fz_dataset_register_filter());
  /* and the filter's set_local check of H5FZ_DEVICE (a mistyped value, a
   * GPU asked for and missing) on every rank before them: a rank whose
   * H5Dcreate2 fails there leaves the others in the chunk allocation */
  if (!rc) rc = h5fz_mpi_agree(comm, device_check(&spec, c.dtype, rank, chunk_dims));
  if (!rc) {
    /* a handle without a chunk cache, so that the collective filtered write
     * stays safe after an H5Dread of it (chunk_cache_holds_a_chunk) */
    hid_t dapl = H5Pcreate(H5P_DATASET_ACCESS);
    int made = dapl >= 0 && H5Pset_chunk_cache(dapl, 0, 0, 1.0) >= 0;
    rc = h5fz_mpi_agree(comm, made ? h5fz_dataset_create_allocated(loc, name, mem_type, rank, dims, chunk_dims,
                                                                   spec_text, H5D_ALLOC_TIME_EARLY, dapl, dset)
                                   : h5fz_fail(H5FZ_ERR_HDF5, "cannot make a dataset access list"));
    if (dapl >= 0) H5Pclose(dapl);
  }
  if (rc && dset && *dset >= 0) {
    H5Dclose(*dset);
    *dset = H5I_INVALID_HID;
  }
  MPI_Comm_free(&comm);
  return rc;
}

/* ---- write -------------------------------------------------------------------------- */

/* Every rank stores every chunk of all, in the same order. */
static int store_chunks(hid_t dset, const h5fz_dataset_info *di, const h5fz_mpi_chunks *all)
{
  hsize_t off[H5FZ_ARRAY_MAX_RANK];
  for (uint64_t i = 0; i < all->n; i++) {
    const h5fz_mpi_chunk *c = &all->chunk[i];
    h5fz_dataset_chunk_offset(&di->g, c->index, off);
    int rc = h5fz_dataset_write_container(dset, di, off, c->index, all->payload + c->offset, c->bytes);
    if (rc) return rc;
  }
  return H5FZ_OK;
}

/* 1 when dset has a late allocation time. Its first write makes HDF5 1.14
 * allocate every chunk and filter a fill chunk inside the H5Dwrite, which
 * the prepared containers cannot answer, so that write must go the direct
 * way; and once a dataset has been written the direct way, a filtered
 * write must not follow while it is open: HDF5 (1.10.8, 1.14.5) keeps the
 * address of the last chunk H5Dwrite_chunk wrote cached, the collective
 * filtered write moves that chunk without updating it, and later reads of
 * it come from the old place (a tester found it). So such a dataset always
 * goes the direct way. The same on every rank (a creation property). */
static int late_allocation(hid_t dset)
{
  hid_t dcpl = H5Dget_create_plist(dset);
  H5D_alloc_time_t when = H5D_ALLOC_TIME_DEFAULT;
  if (dcpl < 0 || H5Pget_alloc_time(dcpl, &when) < 0) when = H5D_ALLOC_TIME_LATE;
  if (dcpl >= 0) H5Pclose(dcpl);
  return when == H5D_ALLOC_TIME_LATE;
}

/* Set when this process had to write the chunks again the direct way after
 * a filtered write (below): from then on its writes go the direct way, so
 * that no filtered write follows a direct one on a dataset (see above). */
static int g_filtered_off;

/* 1 when dset's raw-data chunk cache can hold one of its chunks (its
 * access list's nbytes at least a chunk's bytes, slots > 0). HDF5's
 * collective filtered write moves the chunks it writes but leaves the
 * cache's entries, decoded values and old addresses, as they were, so a
 * chunk an H5Dread cached before reads back stale afterwards, and the next
 * collective write starts from its old address (a tester: wrong values,
 * then "can't insert duplicate key" and a damaged file, on 1.10.8 and
 * 1.14.5). H5Dwrite_chunk evicts the entry of the chunk it writes, so such
 * a dataset goes the direct way. h5fz_dataset_create_mpi's handle has no
 * cache; a handle of H5Dopen2 with the default access list caches chunks
 * up to 1 MiB. */
static int chunk_cache_holds_a_chunk(hid_t dset, const h5fz_dataset_info *di)
{
  hid_t dapl = H5Dget_access_plist(dset);
  size_t slots = 0, nbytes = 0, chunk_bytes = h5fz_dtype_size(di->dtype); /* the file's element size too */
  double w0 = 0;
  int known = dapl >= 0 && H5Pget_chunk_cache(dapl, &slots, &nbytes, &w0) >= 0;
  for (uint32_t d = 0; d < di->g.rank; d++) chunk_bytes *= di->g.chunk[d];
  if (dapl >= 0) H5Pclose(dapl);
  return !known || (slots > 0 && nbytes >= chunk_bytes);
}

/* 1 on every rank when all store their chunks through the collective
 * filtered H5Dwrite (h5fz_mpi_prepared.c): more than one rank (or
 * H5FZ_MPI_WRITE=filtered), not H5FZ_MPI_WRITE=direct, a dataset whose
 * chunk cache holds no chunk (above), and every rank's HDF5 calls a plugin
 * that takes prepared containers; else 0 on every rank (each rank then
 * writes every chunk). One rank writes its chunks directly: "every chunk"
 * is then its own, and HDF5 1.14's collective filtered write fills each
 * chunk's buffer first (0.6 s a GiB on the H200 host; docs/mpi.md).
 * Collective. */
static int use_filtered_write(MPI_Comm comm, hid_t dset, const h5fz_dataset_info *di, const h5fz_settings *s)
{
  int size = 1;
  MPI_Comm_size(comm, &size);
  int wanted =
      s->mpi_write == H5FZ_SETTING_MPI_WRITE_FILTERED || (s->mpi_write == H5FZ_SETTING_MPI_WRITE_AUTO && size > 1);
  int usable = wanted && !g_filtered_off && !late_allocation(dset) && !chunk_cache_holds_a_chunk(dset, di) &&
               h5fz_mpi_prepared_usable();
  MPI_Allreduce(MPI_IN_PLACE, &usable, 1, MPI_INT, MPI_MIN, comm);
  return usable;
}

/* Said once per process, by rank 0 of comm, when the filtered write
 * stored chunks that were not the containers (an h5fz plugin HDF5 calls
 * did not take them): they are written again the direct way, so nothing
 * wrong stays in the file. */
static void say_rewritten_once(MPI_Comm comm, const char *why)
{
  static int said;
  int me = 0;
  MPI_Comm_rank(comm, &me);
  if (said || me || h5fz_settings_quiet()) return;
  said = 1;
  fprintf(stderr,
          "h5fz: the collective filtered write did not store the prepared chunks (%s); they were written "
          "again with H5Dwrite_chunk on every rank, as this process's later writes will be\n",
          why && *why ? why : "no reason given");
}

/* What a part write or read begins with (fn names it in errors): the
 * file's communicator, this rank's claim, and every rank's agreement on
 * the parts (collective). On failure nothing is held: *comm is freed. */
static int begin_part(const char *fn, hid_t dset, hid_t mem_type, const hsize_t *start, const hsize_t *count,
                      const void *data, h5fz_mem where, int writing, MPI_Comm *comm, h5fz_dataset_info *di,
                      h5fz_mpi_claim *c)
{
  h5fz_clear_error();
  int rc = file_comm(fn, dset, comm);
  if (rc) return rc;
  claim_part(dset, mem_type, start, count, data, where, writing, di, c);
  if ((rc = agree_on_parts(fn, *comm, c, di->dtype, writing))) MPI_Comm_free(comm);
  return rc;
}

/* The executor of this rank's pieces into rep: the one they all name
 * ("cpu", or a GPU class), "mixed" when a piece fell back to the CPU. */
static void name_executor(h5fz_dataset_report *rep, const h5fz_array_exec *ex, int *named)
{
  char digest[sizeof rep->plan_digest];
  h5fz_dataset_plan_digest_text(ex, digest, sizeof digest);
  if (!*named) {
    rep->on_gpu = ex->on_gpu;
    snprintf(rep->kernel_class, sizeof rep->kernel_class, "%s", ex->kernel_class);
    snprintf(rep->plan_digest, sizeof rep->plan_digest, "%s", digest);
    *named = 1;
  } else if (strcmp(rep->kernel_class, ex->kernel_class) || strcmp(rep->plan_digest, digest)) {
    rep->on_gpu = rep->on_gpu && ex->on_gpu;
    snprintf(rep->kernel_class, sizeof rep->kernel_class, "mixed");
    snprintf(rep->plan_digest, sizeof rep->plan_digest, "mixed");
  }
}

/* Where a write's time goes, slowest rank (H5FZ_MPI_PROFILE). */
enum { T_CHECK, T_ENCODE, T_WAIT, T_EXCHANGE, T_WRITE, T_ATTRS, T_PHASES };

/* Store piece p's chunks (collective: every rank, the same number of
 * times): through the collective filtered H5Dwrite while *filtered, else
 * every rank writes every chunk of the piece of every rank. A filtered
 * write that did not store the containers turns *filtered off and writes
 * them again the direct way. */
static int store_piece(MPI_Comm comm, hid_t dset, const h5fz_dataset_info *di, const h5fz_mpi_piece *p, int *filtered,
                       double *secs, double *moved)
{
  double t0 = now_s();
  if (*filtered) {
    int rc = h5fz_mpi_agree(comm, h5fz_mpi_write_prepared(comm, dset, di, (h5fz_mpi_chunks *)&p->chunks));
    if (rc == H5FZ_ERR_UNSUPPORTED) { /* stored chunks that are not the containers: write them again */
      say_rewritten_once(comm, h5fz_last_error());
      g_filtered_off = 1;
      *filtered = 0;
    } else {
      secs[T_WRITE] += now_s() - t0;
      *moved += (double)p->chunks.used;
      return rc;
    }
  }
  h5fz_mpi_chunks all = {0};
  int rc = h5fz_mpi_chunks_allgather(comm, &p->chunks, &all);
  double t1 = now_s();
  secs[T_EXCHANGE] += t1 - t0;
  if (!rc) rc = h5fz_mpi_agree(comm, store_chunks(dset, di, &all));
  secs[T_WRITE] += now_s() - t1;
  *moved += (double)all.used;
  h5fz_mpi_chunks_free(&all);
  return rc;
}

static int write_part(hid_t dset, hid_t mem_type, const hsize_t *start, const hsize_t *count, const void *data,
                      h5fz_mem where, h5fz_dataset_report *report, const h5fz_overrides *overrides)
{
  double t0 = now_s(), secs[T_PHASES] = {0}, moved = 0;
  MPI_Comm comm;
  h5fz_dataset_info di;
  h5fz_mpi_claim c;
  int rc = begin_part("h5fz_dataset_write_part", dset, mem_type, start, count, data, where, 1, &comm, &di, &c);
  if (rc) return rc;
  h5fz_attr_tables t;
  uint64_t lo[H5FZ_ARRAY_MAX_RANK] = {0}, hi[H5FZ_ARRAY_MAX_RANK] = {0}, elems = 1;
  for (uint32_t d = 0; d < di.g.rank; d++) {
    lo[d] = start[d];
    hi[d] = start[d] + count[d];
    elems *= count[d];
  }
  rc = h5fz_attr_tables_init(&t, &di);
  t.rep.input_bytes = elems * h5fz_dtype_size(di.dtype);
  h5fz_settings s;
  h5fz_settings_read(&s, H5FZ_SETTINGS_MPI);
  h5fz_mpi_pieces ps;
  h5fz_mpi_pieces_init(&ps, &di, lo, hi, data, where == H5FZ_MEM_DEVICE, s.mpi_piece_bytes, &t);
  ps.overrides = overrides; /* the handle's options on the encode's own thread too */
  /* every rank stores as many pieces (a rank with fewer stores empty ones),
   * as each store is a collective H5Dwrite */
  unsigned long long pieces = ps.n;
  MPI_Allreduce(MPI_IN_PLACE, &pieces, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, comm);
  if ((rc = h5fz_mpi_agree(comm, rc))) goto out_tables;
  int filtered = use_filtered_write(comm, dset, &di, &s), named = 0;
  if (!ps.n) name_executor(&t.rep, &(h5fz_array_exec){.kernel_class = "cpu"}, &named);
  secs[T_CHECK] = now_s() - t0;
  /* piece k is stored while piece k + 1 is encoded on its own thread */
  h5fz_mpi_piece piece[2];
  uint64_t k = 0;
  if (pieces) h5fz_mpi_piece_start(&ps, 0, 0, &piece[0]);
  for (; k < pieces; k++) {
    h5fz_mpi_piece *now = &piece[k % 2], *next = &piece[(k + 1) % 2];
    double waited = now_s();
    rc = h5fz_mpi_piece_finish(now);
    secs[T_WAIT] += k ? now_s() - waited : 0;
    secs[T_ENCODE] += now->seconds;
    if (k < ps.n) name_executor(&t.rep, &now->ex, &named);
    if (k + 1 < pieces) h5fz_mpi_piece_start(&ps, k + 1, 1, next);
    if (!(rc = h5fz_mpi_agree(comm, rc))) rc = store_piece(comm, dset, &di, now, &filtered, secs, &moved);
    h5fz_mpi_piece_free(now);
    if (rc) {
      if (k + 1 < pieces) { /* nothing more is stored: let the next encode end, keeping this failure's message */
        char why[512];
        snprintf(why, sizeof why, "%s", h5fz_last_error());
        h5fz_mpi_piece_finish(next);
        h5fz_mpi_piece_free(next);
        h5fz_fail(rc, "%s", why);
      }
      goto out_tables;
    }
  }
  double t_stored = now_s();
  h5fz_dataset_report mine = t.rep; /* this rank's own, before the sum over the ranks */
  if ((rc = h5fz_mpi_tables_allreduce(comm, &t))) goto out_tables;
  if ((rc = h5fz_mpi_agree(comm, h5fz_attr_tables_write(dset, &t)))) goto out_tables;
  secs[T_ATTRS] = now_s() - t_stored;
  mine.seconds = now_s() - t0;
  char what[160];
  snprintf(what, sizeof what, "%s, in %llu piece%s",
           filtered ? "of containers on rank 0, written by it alone" : "of containers on every rank", pieces,
           pieces == 1 ? "" : "s");
  profile(comm, filtered ? "write_part (collective filtered H5Dwrite)" : "write_part (H5Dwrite_chunk on every rank)",
          secs, (const char *[]){"check", "encode", "wait-for-encode", "exchange", "write", "attributes"}, T_PHASES,
          moved, what);
  if (report) *report = mine;
out_tables:
  h5fz_attr_tables_free(&t);
  MPI_Comm_free(&comm);
  return rc;
}

/* ---- read --------------------------------------------------------------------------- */

/* A part's chunk source: the shared reader (h5fz_dataset_info.h), the
 * decode's chunks numbered over the part's geometry pg from lo. */
typedef struct {
  h5fz_dataset_reader rd;
  const h5fz_array_geom *pg;
  const uint64_t *lo;
} part_read;

static int part_source(void *ctx, uint64_t index, void **container, size_t *bytes)
{
  part_read *r = ctx;
  hsize_t origin[H5FZ_ARRAY_MAX_RANK];
  uint64_t idx = h5fz_mpi_dataset_chunk(r->rd.di, r->pg, r->lo, index, origin);
  return h5fz_dataset_reader_get(&r->rd, origin, idx, index, container, bytes);
}

/* Copy the box at offset `at` (count[]) out of the row-major array src of
 * extent ext[] into dst (row-major, count[]). */
static void copy_box(const uint8_t *src, const uint64_t *ext, const uint64_t *at, const uint64_t *count, uint32_t rank,
                     size_t esize, uint8_t *dst)
{
  uint64_t rows = 1, idx[H5FZ_ARRAY_MAX_RANK] = {0};
  for (uint32_t d = 0; d + 1 < rank; d++) rows *= count[d];
  size_t row_bytes = count[rank - 1] * esize;
  for (uint64_t r = 0; r < rows; r++) {
    uint64_t lin = 0;
    for (uint32_t d = 0; d < rank; d++) lin = lin * ext[d] + at[d] + (d + 1 < rank ? idx[d] : 0);
    memcpy(dst + r * row_bytes, src + lin * esize, row_bytes);
    for (uint32_t d = rank - 1; d-- > 0;) { /* next row: odometer over dims 0..rank-2 */
      if (++idx[d] < count[d]) break;
      idx[d] = 0;
    }
  }
}

static int read_part(hid_t dset, hid_t mem_type, const hsize_t *start, const hsize_t *count, void *data, h5fz_mem where,
                     h5fz_dataset_report *report)
{
  static const char fn[] = "h5fz_dataset_read_part";
  double t0 = now_s();
  MPI_Comm comm;
  h5fz_dataset_info di;
  h5fz_mpi_claim c;
  int rc = begin_part(fn, dset, mem_type, start, count, data, where, 0, &comm, &di, &c);
  if (rc) return rc;
  /* the chunks the box touches, as an array of their own (the hull) */
  uint64_t lo[H5FZ_ARRAY_MAX_RANK] = {0}, hi[H5FZ_ARRAY_MAX_RANK] = {0}, at[H5FZ_ARRAY_MAX_RANK] = {0},
           box[H5FZ_ARRAY_MAX_RANK] = {0};
  uint64_t elems = 1, hull_elems = 1;
  for (uint32_t d = 0; d < di.g.rank; d++) {
    uint64_t k = di.g.chunk[d], end = start[d] + count[d];
    lo[d] = start[d] / k * k;
    hi[d] = (end + k - 1) / k * k;
    if (hi[d] > di.g.dims[d]) hi[d] = di.g.dims[d];
    at[d] = start[d] - lo[d];
    box[d] = count[d];
    elems *= count[d];
    hull_elems *= hi[d] - lo[d];
  }
  h5fz_array_geom pg = h5fz_mpi_part_geom(&di, lo, hi);
  part_read r = {.rd = {.dset = dset, .di = &di}, .pg = &pg, .lo = lo};
  h5fz_array_exec ex = {.kernel_class = "cpu"};
  size_t esize = h5fz_dtype_size(di.dtype);
  if (elems && hull_elems == elems) {
    rc = h5fz_array_decode(&pg, di.dtype, &di.spec, di.fill, part_source, &r, data, where == H5FZ_MEM_DEVICE, &ex);
  } else if (elems) { /* host memory (claim_part refused device arrays here) */
    uint8_t *hull = malloc(hull_elems * esize);
    rc = hull ? h5fz_array_decode(&pg, di.dtype, &di.spec, di.fill, part_source, &r, hull, 0, &ex)
              : h5fz_fail(H5FZ_ERR_NOMEM, "%s: %llu bytes for the chunks around the part", fn,
                          (unsigned long long)(hull_elems * esize));
    if (!rc) copy_box(hull, pg.dims, at, box, pg.rank, esize, data);
    free(hull);
  }
  if ((rc = h5fz_mpi_agree(comm, rc))) goto out;
  h5fz_dataset_report_read(&r.rd.rep, &di, elems, r.rd.rep.n_chunks, &ex, now_s() - t0);
  if (report) *report = r.rd.rep;
out:
  MPI_Comm_free(&comm);
  return rc;
}

/* ---- the handle's options in force for the call (h5fz_options.c) ------------------- */

int h5fz_dataset_write_part(hid_t dset, hid_t mem_type, const hsize_t *start, const hsize_t *count, const void *data,
                            h5fz_mem where, h5fz_dataset_report *report)
{
  h5fz_overrides o;
  const h5fz_overrides *mine = h5fz_dataset_overrides(dset, &o);
  const h5fz_overrides *previous = h5fz_overrides_enter(mine);
  int rc = write_part(dset, mem_type, start, count, data, where, report, mine);
  h5fz_overrides_leave(previous);
  return rc;
}

int h5fz_dataset_read_part(hid_t dset, hid_t mem_type, const hsize_t *start, const hsize_t *count, void *data,
                           h5fz_mem where, h5fz_dataset_report *report)
{
  h5fz_overrides o;
  const h5fz_overrides *previous = h5fz_overrides_enter(h5fz_dataset_overrides(dset, &o));
  int rc = read_part(dset, mem_type, start, count, data, where, report);
  h5fz_overrides_leave(previous);
  return rc;
}
