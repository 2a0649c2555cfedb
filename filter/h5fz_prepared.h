/*
 * h5fz_prepared.h - containers that the collective dataset API made on the
 * GPU before it calls HDF5's collective filtered H5Dwrite, for the filter
 * to hand to HDF5 in place of compressing (docs/mpi.md, "How the
 * collective write stores its chunks").
 *
 * Why: under MPI-IO every chunk allocation must be made by every rank the
 * same way, and H5Dwrite_chunk allocates and writes in one call, so a
 * direct-chunk write costs every rank a write of every chunk. HDF5's
 * collective filtered write instead gathers the compressed sizes, lets
 * every rank allocate every chunk and each rank write only its own. The
 * API selects one element per chunk it owns (the chunk's origin) and
 * writes a tag there; HDF5 gives the filter each of those chunks, and the
 * filter returns the container the tag names.
 *
 * The plugin (filter/h5fz_prepared_take.c) and the API
 * (api/h5fz_mpi_prepared.c) are separate copies of the code in one
 * process (the plugin is loaded by HDF5, with its symbols private), so
 * this struct and the entry point below are their whole contract: keep it
 * append-only and raise H5FZ_PREPARED_VERSION on any change. No HDF5 here.
 */
#ifndef H5FZ_PREPARED_H
#define H5FZ_PREPARED_H

#include <stdint.h>

#define H5FZ_PREPARED_VERSION 1u

/* The plugin's exported entry point (dlsym name) and its type. */
#define H5FZ_PREPARED_SYMBOL "h5fz_plugin_prepared"

typedef struct {
  uint32_t version;                /* H5FZ_PREPARED_VERSION */
  uint32_t tag_bytes;              /* 4 (float32) or 8 (float64): the element at each chunk's origin holds its tag */
  uint64_t n;                      /* chunks of this rank's write */
  uint64_t chunk_bytes;            /* what HDF5 hands the filter for each of them: the whole chunk */
  uint64_t nonce;                  /* chunk i's tag is i + nonce, in tag_bytes bytes of native order */
  const uint8_t *const *container; /* [n] the containers, as they go to the file */
  const uint64_t *bytes;           /* [n] their sizes */
  uint8_t *taken;                  /* [n] 0 on entry; the filter sets 1 when it hands chunk i over */
  uint64_t n_taken;                /* the filter counts the chunks it handed over */
  uint64_t n_refused;              /* and the calls it refused (no valid tag, wrong size, twice) */
  char refusal[256];               /* the first refusal's message ("" when none), for the API's error */
} h5fz_prepared_chunks;

/* The entry point: p != NULL makes the plugin answer the calling thread's
 * encode calls (HDF5 runs filters on the thread that calls H5Dwrite) from p
 * (and decode calls of HDF5's read-before-modify with an uninitialized
 * chunk buffer, as every value is replaced and only the tag is read),
 * until it is called with NULL.
 * *bound_hdf5: in, the load address of the caller's libhdf5 (NULL allowed);
 * out, that address when the plugin is bound to it (one plugin file serves
 * several libhdf5 copies), else the first libhdf5 it is bound to (NULL:
 * none), so the caller can tell whether its HDF5 calls this copy. (A
 * plugin before the several-copies change ignored the input and gave its
 * one libhdf5: the same test holds.)
 * 0, or -1 for a version this plugin does not know. */
typedef int (*h5fz_prepared_fn)(h5fz_prepared_chunks *p, const void **bound_hdf5);

#endif /* H5FZ_PREPARED_H */
