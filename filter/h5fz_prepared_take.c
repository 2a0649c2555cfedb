/*
 * h5fz_prepared_take.c - answering filter calls from a collective write's
 * prepared containers (h5fz_prepared_take.h, h5fz_prepared.h).
 *
 * The table is the installing thread's own: HDF5 runs filters on the
 * thread that called H5Dwrite, so while the collective API's H5Dwrite runs
 * on this thread, every encode call here is one of that write's chunks,
 * and another thread's writes (another file, through the filter) never see
 * the table, so its data can never be taken for a tag. Were an HDF5 to run
 * filters on threads of its own, the table would simply not be found: the
 * chunks would be compressed as they come (tags and all), the API's count
 * of chunks handed over would come up short, and it writes them again the
 * direct way (api/h5fz_dataset_mpi.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h5fz_prepared_take.h"

static _Thread_local h5fz_prepared_chunks *g_table;

int h5fz_prepared_install(h5fz_prepared_chunks *p)
{
  if (p && p->version != H5FZ_PREPARED_VERSION) return -1;
  g_table = p;
  return 0;
}

/* The chunk index the tag at the start of buf names, or UINT64_MAX. */
static uint64_t tagged_index(const h5fz_prepared_chunks *p, const void *buf, size_t bytes)
{
  uint64_t tag;
  if (p->tag_bytes == 4 && bytes >= 4) {
    uint32_t t;
    memcpy(&t, buf, 4);
    tag = (uint32_t)(t - (uint32_t)p->nonce);
  } else if (p->tag_bytes == 8 && bytes >= 8) {
    memcpy(&tag, buf, 8);
    tag -= p->nonce;
  } else {
    return UINT64_MAX;
  }
  return tag < p->n ? tag : UINT64_MAX;
}

static int refuse(h5fz_prepared_chunks *p, char *msg, size_t msg_len, const char *why, size_t bytes)
{
  p->n_refused++;
  snprintf(msg, msg_len,
           "h5fz: the collective dataset write was handed a chunk it did not prepare (%s, %zu bytes); "
           "nothing of it is stored",
           why, bytes);
  if (!p->refusal[0]) snprintf(p->refusal, sizeof p->refusal, "%s", msg);
  return -1;
}

static int answer_from(h5fz_prepared_chunks *p, int reverse, const void *in, size_t in_bytes, void **out,
                       size_t *out_bytes, char *msg, size_t msg_len)
{
  if (reverse) {
    /* HDF5 reads a chunk that exists before it writes the selected
     * elements (the tag) into it; the prepared container replaces every
     * value, so nothing but the tag is ever read from this buffer: it is
     * left as malloc gives it, as touching it would cost a write of the
     * whole chunk (what HDF5's fill of an unallocated chunk costs), and
     * the encode call reads only the tag. */
    void *z = malloc(p->chunk_bytes ? p->chunk_bytes : 1);
    if (!z) return refuse(p, msg, msg_len, "no memory for the chunk", in_bytes);
    *out = z;
    *out_bytes = p->chunk_bytes;
    return 1;
  }
  if (in_bytes != p->chunk_bytes) return refuse(p, msg, msg_len, "not a whole chunk", in_bytes);
  uint64_t i = tagged_index(p, in, in_bytes);
  if (i == UINT64_MAX) return refuse(p, msg, msg_len, "no valid tag", in_bytes);
  if (p->taken[i]) return refuse(p, msg, msg_len, "asked for twice", in_bytes);
  uint8_t *copy = malloc(p->bytes[i] ? p->bytes[i] : 1);
  if (!copy) return refuse(p, msg, msg_len, "no memory for the container", in_bytes);
  memcpy(copy, p->container[i], p->bytes[i]);
  p->taken[i] = 1;
  p->n_taken++;
  *out = copy;
  *out_bytes = p->bytes[i];
  return 1;
}

int h5fz_prepared_answer(int reverse, const void *in, size_t in_bytes, void **out, size_t *out_bytes, char *msg,
                         size_t msg_len)
{
  return g_table ? answer_from(g_table, reverse, in, in_bytes, out, out_bytes, msg, msg_len) : 0;
}
