/*
 * test_claim.c - h5fz_claim_for (fusion/cpu/h5fz_claim.c): every item runs
 * exactly once, in many calls in a row (workers waking late into later
 * generations), with each participant's state made once and released once,
 * with the lowest failing item's status and message handed back (every
 * item still run), with calls from several application threads at once
 * (one gets the pool, the others run alone), with a call nested inside an
 * item, with one thread, and in a child of fork().
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "h5fz_claim.h"
#include "h5fz_internal.h"

#define N_MAX 4096

typedef struct {
  atomic_int hits[N_MAX];
  int fail_lo, fail_hi; /* items in [fail_lo, fail_hi] fail; fail_lo > fail_hi: none */
  int nest;             /* 1: each item runs a call of its own */
} job;

static atomic_int states_made, states_released;

static void release_state(void *state)
{
  free(state);
  atomic_fetch_add(&states_released, 1);
}

static int use_state(void **state)
{
  if (!*state) {
    *state = malloc(64);
    atomic_fetch_add(&states_made, 1);
  }
  ((unsigned char *)*state)[0]++; /* it is this participant's alone */
  return H5FZ_OK;
}

static int count_one(void *ctx, uint32_t i, void **state)
{
  job *j = ctx;
  use_state(state);
  atomic_fetch_add(&j->hits[i], 1);
  if ((int)i >= j->fail_lo && (int)i <= j->fail_hi) return h5fz_fail(H5FZ_ERR_CORRUPT, "item %u failed on purpose", i);
  return H5FZ_OK;
}

static int nested_one(void *ctx, uint32_t i, void **state)
{
  job *inner = calloc(1, sizeof *inner);
  inner->fail_lo = 1, inner->fail_hi = 0;
  use_state(state);
  int rc = h5fz_claim_for(4, 64, count_one, release_state, inner);
  for (int k = 0; k < 64 && !rc; k++)
    if (atomic_load(&inner->hits[k]) != 1) rc = h5fz_fail(H5FZ_ERR_CORRUPT, "nested item %d ran wrongly", k);
  free(inner);
  if (!rc) atomic_fetch_add(&((job *)ctx)->hits[i], 1);
  return rc;
}

/* 0 when a call over n items on `threads` ran each once and balanced its states. */
static int check_once(unsigned threads, uint32_t n, int nest)
{
  job *j = calloc(1, sizeof *j);
  j->fail_lo = 1, j->fail_hi = 0;
  int rc = h5fz_claim_for(threads, n, nest ? nested_one : count_one, release_state, j), bad = rc != H5FZ_OK;
  for (uint32_t i = 0; i < n && !bad; i++)
    if (atomic_load(&j->hits[i]) != 1) {
      fprintf(stderr, "threads %u n %u: item %u ran %d times\n", threads, n, i, atomic_load(&j->hits[i]));
      bad = 1;
    }
  if (rc) fprintf(stderr, "threads %u n %u: status %d (%s)\n", threads, n, rc, h5fz_last_error());
  free(j);
  return bad;
}

static void *app_thread(void *arg)
{
  int *bad = arg;
  for (int r = 0; r < 200; r++) *bad |= check_once(3, (uint32_t)(1 + (r * 37) % 700), 0);
  return NULL;
}

int main(void)
{
  int failures = 0;
  /* many calls in a row, of many sizes, on the pool */
  for (int r = 0; r < 3000; r++) failures += check_once(1u + (unsigned)(r % 5), (uint32_t)(r * 131 % N_MAX), 0);
  /* the lowest failing item's status and message; every item ran */
  for (int r = 0; r < 50; r++) {
    job *j = calloc(1, sizeof *j);
    j->fail_lo = 100 + r, j->fail_hi = 900;
    int rc = h5fz_claim_for(4, 1000, count_one, release_state, j);
    char want[64];
    snprintf(want, sizeof want, "item %d failed on purpose", 100 + r);
    if (rc != H5FZ_ERR_CORRUPT || !strstr(h5fz_last_error(), want)) {
      fprintf(stderr, "failure: status %d, message \"%s\", expected \"%s\"\n", rc, h5fz_last_error(), want);
      failures++;
    }
    for (int i = 0; i < 1000; i++)
      if (atomic_load(&j->hits[i]) != 1) {
        fprintf(stderr, "failing call: item %d ran %d times\n", i, atomic_load(&j->hits[i]));
        failures++;
        break;
      }
    free(j);
  }
  /* nested calls (inside an item the call runs alone) */
  failures += check_once(4, 200, 1);
  /* several application threads at once */
  pthread_t t[4];
  int bad[4] = {0};
  for (int i = 0; i < 4; i++) pthread_create(&t[i], NULL, app_thread, &bad[i]);
  for (int i = 0; i < 4; i++) {
    pthread_join(t[i], NULL);
    failures += bad[i];
  }
  /* every state made was released (the workers release theirs before
   * their next wait; give a late one a moment) */
  for (int w = 0; w < 200 && atomic_load(&states_made) != atomic_load(&states_released); w++) usleep(10000);
  if (atomic_load(&states_made) != atomic_load(&states_released)) {
    fprintf(stderr, "states: %d made, %d released\n", atomic_load(&states_made), atomic_load(&states_released));
    failures++;
  }
  /* a child of fork() has none of the parent's workers */
  pid_t pid = fork();
  if (pid == 0) _exit(check_once(4, 3000, 0) || check_once(4, 17, 0));
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status)) {
    fprintf(stderr, "fork child failed (status %d)\n", status);
    failures++;
  }
  printf("test_claim: %d failures\n", failures);
  return failures ? 1 : 0;
}
