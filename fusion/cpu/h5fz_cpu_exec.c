/*
 * h5fz_cpu_exec.c - the CPU executor: one chunk, sub-chunks spread over
 * threads. Encode: a contiguous range of sub-chunks per thread, so each
 * thread's outliers are already in index order and concatenate without
 * sorting. Decode: sub-chunks claimed one at a time (h5fz_claim.h), as
 * they write disjoint parts of the chunk and list nothing.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "h5fz_chunk_read.h"
#include "h5fz_claim.h"
#include "h5fz_cpu_chain.h"
#include "h5fz_cpu_exec.h"
#include "h5fz_parallel.h"

typedef struct {
  const h5fz_chunk_plan *p;
  const uint8_t *in;
  uint8_t *out; /* the slot area (lorenzo_nd words: quantizer words) */
  uint32_t *entries;
  uint32_t s_begin, s_end;
  uint32_t *opos; /* encode: this range's outliers, global positions */
  uint8_t *ovals;
  uint32_t ocount, ocap;
  int rc;
  char err[256];
} cpu_task;

static void task_fail(cpu_task *t, int rc)
{
  t->rc = rc;
  strncpy(t->err, h5fz_last_error(), sizeof t->err - 1);
}

static int grow_outliers(cpu_task *t, uint32_t more, uint32_t esize)
{
  if (t->ocount + more <= t->ocap) return 0;
  uint32_t cap = t->ocap ? t->ocap : 1024u;
  while (cap < t->ocount + more) cap *= 2u;
  uint32_t *pos = realloc(t->opos, (size_t)cap * 4u);
  if (pos) t->opos = pos;
  uint8_t *vals = realloc(t->ovals, (size_t)cap * esize);
  if (vals) t->ovals = vals;
  if (!pos || !vals) return h5fz_fail(H5FZ_ERR_NOMEM, "cannot grow the outlier list to %u", cap);
  t->ocap = cap;
  return 0;
}

/* One sub-chunk of a task's range; returns 0 or the status that stops it. */
typedef int (*subchunk_step)(cpu_task *t, uint32_t s, h5fz_cpu_work *w);

static int encode_step(cpu_task *t, uint32_t s, h5fz_cpu_work *w)
{
  const h5fz_chunk_plan *p = t->p;
  uint32_t full = p->subchunk_elems * p->esize, m = h5fz_sub_elems(p, s), n_out = 0;
  if (grow_outliers(t, m, p->esize)) return H5FZ_ERR_NOMEM;
  uint32_t *pos = t->opos + t->ocount;
  t->entries[s] = h5fz_cpu_encode_subchunk(p, s, t->in + (size_t)s * full, m, w, t->out + (size_t)s * full, pos,
                                           t->ovals + (size_t)t->ocount * p->esize, &n_out);
  for (uint32_t i = 0; i < n_out; i++) pos[i] += s * p->subchunk_elems;
  t->ocount += n_out;
  return H5FZ_OK;
}

/* lorenzo_nd: the quantizer words of sub-chunk s into t->out, its escapes
 * into the task's list (the encode steps that follow list none). */
static int lnd_quant_step(cpu_task *t, uint32_t s, h5fz_cpu_work *w)
{
  const h5fz_chunk_plan *p = t->p;
  uint32_t m = h5fz_sub_elems(p, s);
  (void)w;
  if (grow_outliers(t, m, p->esize)) return H5FZ_ERR_NOMEM;
  uint32_t *pos = t->opos + t->ocount;
  uint32_t n_out = h5fz_cpu_lnd_quant_words(p, s, t->in, t->out, pos, t->ovals + (size_t)t->ocount * p->esize);
  for (uint32_t i = 0; i < n_out; i++) pos[i] += s * p->subchunk_elems;
  t->ocount += n_out;
  return H5FZ_OK;
}

/* A task's range with one set of work buffers, stopping at the first error. */
static void run_range(cpu_task *t, subchunk_step step)
{
  h5fz_cpu_work w;
  if (h5fz_cpu_work_alloc(&w, t->p->subchunk_elems * t->p->esize)) {
    task_fail(t, H5FZ_ERR_NOMEM);
    return;
  }
  for (uint32_t s = t->s_begin; s < t->s_end; s++) {
    int rc = step(t, s, &w);
    if (rc) {
      task_fail(t, rc);
      break;
    }
  }
  h5fz_cpu_work_free(&w);
}

static void *encode_range(void *arg)
{
  run_range(arg, encode_step);
  return NULL;
}

static void *lnd_quant_range(void *arg)
{
  run_range(arg, lnd_quant_step);
  return NULL;
}

/* Run fn over the sub-chunks split into contiguous ranges, one per thread.
 * tasks[] (nthreads entries) must be zeroed except the shared fields. */
static int run_tasks(cpu_task *tasks, unsigned nthreads, uint32_t n_sub, void *(*fn)(void *))
{
  pthread_t tid[H5FZ_MAX_HOST_THREADS];
  unsigned started = 0;
  for (unsigned i = 0; i < nthreads; i++) {
    tasks[i].s_begin = (uint32_t)((uint64_t)n_sub * i / nthreads);
    tasks[i].s_end = (uint32_t)((uint64_t)n_sub * (i + 1) / nthreads);
  }
  for (unsigned i = 1; i < nthreads; i++) {
    if (pthread_create(&tid[i], NULL, fn, &tasks[i])) break;
    started = i;
  }
  /* ranges whose thread could not start run here, in order */
  fn(&tasks[0]);
  for (unsigned i = started + 1; i < nthreads; i++) fn(&tasks[i]);
  for (unsigned i = 1; i <= started; i++) pthread_join(tid[i], NULL);
  for (unsigned i = 0; i < nthreads; i++)
    if (tasks[i].rc) return h5fz_fail(tasks[i].rc, "%s", tasks[i].err);
  return H5FZ_OK;
}

/* lorenzo_nd: the chunk's quantizer words into q and its escapes into the
 * tasks' lists (the same ranges as the encode that follows), the predictor
 * chosen from the words; *lp = p with the predictor and the words. */
static int lnd_prepare(const h5fz_chunk_plan *p, h5fz_header *h, const uint8_t *in, cpu_task *tasks, unsigned nthreads,
                       uint8_t *q, h5fz_chunk_plan *lp)
{
  for (unsigned i = 0; i < nthreads; i++) {
    tasks[i].p = p;
    tasks[i].in = in;
    tasks[i].out = q;
  }
  int rc = run_tasks(tasks, nthreads, p->n_subchunks, lnd_quant_range);
  if (rc) return rc;
  *lp = *p;
  lp->lnd.dim = h5fz_cpu_lnd_choose(p, q);
  lp->lnd_q = q;
  h->predictor = (uint8_t)lp->lnd.dim;
  return H5FZ_OK;
}

int h5fz_cpu_encode_chunk(const h5fz_chunk_plan *p, h5fz_header *h, const uint8_t *in, size_t in_bytes, void **out,
                          size_t *out_bytes)
{
  uint32_t full = p->subchunk_elems * p->esize, n_sub = p->n_subchunks;
  unsigned nthreads = h5fz_cpu_threads(n_sub);
  uint8_t *slots = malloc((size_t)n_sub * full + 1u);
  uint32_t *entries = malloc((size_t)n_sub * 4u + 4u);
  cpu_task *tasks = calloc(nthreads, sizeof *tasks);
  uint8_t *lnd_q = NULL;
  h5fz_chunk_plan lp;
  int rc = H5FZ_OK;
  if (!slots || !entries || !tasks) {
    rc = h5fz_fail(H5FZ_ERR_NOMEM, "cannot allocate %zu bytes of encode buffers", (size_t)n_sub * full);
    goto done;
  }
  if (h5fz_plan_has_lnd(p)) {
    lnd_q = malloc((size_t)n_sub * full + 1u);
    if (!lnd_q) {
      rc = h5fz_fail(H5FZ_ERR_NOMEM, "cannot allocate %zu bytes of quantizer words", (size_t)n_sub * full);
      goto done;
    }
    if ((rc = lnd_prepare(p, h, in, tasks, nthreads, lnd_q, &lp))) goto done;
    p = &lp;
  }
  for (unsigned i = 0; i < nthreads; i++) {
    tasks[i].p = p;
    tasks[i].in = in;
    tasks[i].out = slots;
    tasks[i].entries = entries;
  }
  rc = run_tasks(tasks, nthreads, n_sub, encode_range);
  if (rc) goto done;
  /* concatenate the ranges' outlier lists: already in index order */
  uint32_t total = 0;
  for (unsigned i = 0; i < nthreads; i++) total += tasks[i].ocount;
  uint32_t *pos = tasks[0].opos;
  uint8_t *vals = tasks[0].ovals;
  if (nthreads > 1 && total) {
    pos = malloc((size_t)total * 4u);
    vals = malloc((size_t)total * p->esize);
    if (!pos || !vals) {
      free(pos == tasks[0].opos ? NULL : pos);
      free(vals == tasks[0].ovals ? NULL : vals);
      rc = h5fz_fail(H5FZ_ERR_NOMEM, "cannot gather %u outliers", total);
      goto done;
    }
    uint32_t k = 0;
    for (unsigned i = 0; i < nthreads; i++) {
      if (!tasks[i].ocount) continue; /* its buffers may be NULL */
      memcpy(pos + k, tasks[i].opos, (size_t)tasks[i].ocount * 4u);
      memcpy(vals + (size_t)k * p->esize, tasks[i].ovals, (size_t)tasks[i].ocount * p->esize);
      k += tasks[i].ocount;
    }
  }
  h->n_outliers = total;
  h5fz_payload payload = {slots, full, entries};
  rc = h5fz_container_write(h, &payload, pos, vals, in, in_bytes, out, out_bytes);
  if (nthreads > 1 && total) {
    free(pos);
    free(vals);
  }
done:
  if (tasks)
    for (unsigned i = 0; i < nthreads; i++) {
      free(tasks[i].opos);
      free(tasks[i].ovals);
    }
  free(tasks);
  free(slots);
  free(entries);
  free(lnd_q);
  return rc;
}

/* The decode of a chunk, shared by the threads that claim its sub-chunks. */
typedef struct {
  const h5fz_chunk_plan *p;
  const uint32_t *entries;
  const uint8_t *payload;
  const uint64_t *offsets;
  uint8_t *values;
  uint64_t *lnd_aux;   /* lorenzo_nd: 2 words per sub-chunk */
  const uint32_t *pos; /* the outliers, placed by the items (without lorenzo_nd) */
  const uint8_t *vals;
  uint32_t n_outliers;
} decode_job;

static void work_release(void *state)
{
  h5fz_cpu_work_free(state);
  free(state);
}

/* Sub-chunk s of the job; *state: this thread's work buffers, made at its first. */
static int decode_item(void *ctx, uint32_t s, void **state)
{
  const decode_job *d = ctx;
  const h5fz_chunk_plan *p = d->p;
  uint32_t full = p->subchunk_elems * p->esize;
  if (!*state) {
    h5fz_cpu_work *w = malloc(sizeof *w);
    if (!w) return h5fz_fail(H5FZ_ERR_NOMEM, "cannot allocate sub-chunk work buffers");
    if (h5fz_cpu_work_alloc(w, full)) {
      free(w);
      return H5FZ_ERR_NOMEM;
    }
    *state = w;
  }
  uint32_t m = h5fz_sub_elems(p, s);
  if (h5fz_cpu_decode_subchunk(p, s, d->entries[s], d->payload + d->offsets[s], m, *state, d->values + (size_t)s * full,
                               d->lnd_aux ? d->lnd_aux + 2u * (size_t)s : NULL))
    return H5FZ_ERR_CORRUPT;
  if (d->n_outliers && !d->lnd_aux) { /* this sub-chunk's outliers (lorenzo_nd: after its chunk-wide finish) */
    uint64_t first = (uint64_t)s * p->subchunk_elems;
    uint32_t lo = h5fz_outlier_lower_bound(d->pos, d->n_outliers, first);
    uint32_t hi = h5fz_outlier_lower_bound(d->pos, d->n_outliers, first + m);
    h5fz_chunk_place_outliers(d->values, p->esize, d->pos, d->vals, lo, hi);
  }
  return H5FZ_OK;
}

int h5fz_cpu_decode_chunk(const h5fz_chunk_plan *p, const uint32_t *entries, const uint8_t *payload,
                          const uint64_t *offsets, uint8_t *values, const uint32_t *pos, const uint8_t *vals,
                          uint32_t n_outliers)
{
  decode_job d = {p, entries, payload, offsets, values, NULL, pos, vals, n_outliers};
  if (h5fz_plan_has_lnd(p) && !(d.lnd_aux = malloc(((size_t)p->n_subchunks + 1u) * 16u)))
    return h5fz_fail(H5FZ_ERR_NOMEM, "cannot allocate decode tasks");
  /* sub-chunks claimed one at a time (h5fz_claim.h: a thread the scheduler
   * leaves waiting holds up no part of the chunk) */
  int rc = h5fz_claim_for(h5fz_cpu_threads(p->n_subchunks), p->n_subchunks, decode_item, work_release, &d);
  if (!rc && d.lnd_aux) {
    h5fz_cpu_lnd_finish(p, values, d.lnd_aux);
    h5fz_chunk_place_outliers(values, p->esize, pos, vals, 0, n_outliers);
  }
  free(d.lnd_aux);
  return rc;
}

int h5fz_cpu_decode_container(const void *in, size_t in_bytes, h5fz_dtype dtype, size_t chunk_bytes, void **out,
                              size_t *out_bytes)
{
  h5fz_clear_error();
  if (!in || !out || !out_bytes) return h5fz_fail(H5FZ_ERR_ARG, "h5fz_chunk_decode: NULL argument");
  h5fz_chunk_read r;
  int rc = h5fz_chunk_read_begin(in, in_bytes, dtype, chunk_bytes, NULL, &r);
  if (rc) return rc;
  if (!r.complete && r.h.n_subchunks && (rc = h5fz_cpu_decode_read(&r))) return rc;
  return h5fz_chunk_read_end(&r, NULL, out, out_bytes);
}

int h5fz_cpu_decode_read(h5fz_chunk_read *r)
{
  int rc =
      h5fz_cpu_decode_chunk(&r->p, r->entries, r->payload, r->offsets, r->values, r->pos, r->vals, r->h.n_outliers);
  if (rc) {
    h5fz_chunk_read_free(r);
    return rc;
  }
  r->outliers_placed = 1;
  return H5FZ_OK;
}
