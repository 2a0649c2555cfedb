/*
 * test_parallel_for.c - h5fz_parallel_for and its worker pool
 * (fusion/cpu/h5fz_parallel.c): every index runs exactly once, in repeated
 * calls (the pool's workers reused), with calls from several application
 * threads at once (one gets the pool, the others threads of their own),
 * with a call nested inside a task (it runs on a worker: no deadlock),
 * with the first failing status and its message handed back, and in a
 * child of fork() (which has none of the parent's workers).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "h5fz_internal.h"
#include "h5fz_parallel.h"

#define N_MAX 4096

typedef struct {
  atomic_int hits[N_MAX];
  int fail_at; /* -1: none */
  int nest;    /* 1: each task runs a parallel for of its own */
} job;

static int count_one(void *ctx, uint64_t i)
{
  job *j = ctx;
  if ((int)i == j->fail_at) return h5fz_fail(H5FZ_ERR_CORRUPT, "task %d failed on purpose", (int)i);
  atomic_fetch_add(&j->hits[i], 1);
  return H5FZ_OK;
}

static int nested_one(void *ctx, uint64_t i)
{
  job *inner = calloc(1, sizeof *inner);
  inner->fail_at = -1;
  int rc = h5fz_parallel_for(64, count_one, inner);
  for (int k = 0; k < 64 && !rc; k++)
    if (atomic_load(&inner->hits[k]) != 1) rc = h5fz_fail(H5FZ_ERR_CORRUPT, "nested index %d ran wrongly", k);
  free(inner);
  if (!rc) atomic_fetch_add(&((job *)ctx)->hits[i], 1);
  return rc;
}

/* 0 when parallel for over n ran every index once. */
static int check_once(uint64_t n, int nest)
{
  job *j = calloc(1, sizeof *j);
  j->fail_at = -1;
  j->nest = nest;
  int rc = h5fz_parallel_for(n, nest ? nested_one : count_one, j), bad = rc != H5FZ_OK;
  for (uint64_t i = 0; i < n && !bad; i++)
    if (atomic_load(&j->hits[i]) != 1) {
      fprintf(stderr, "n %llu: index %llu ran %d times\n", (unsigned long long)n, (unsigned long long)i,
              atomic_load(&j->hits[i]));
      bad = 1;
    }
  free(j);
  return bad;
}

static void *app_thread(void *arg)
{
  int *bad = arg;
  for (int r = 0; r < 200 && !*bad; r++) *bad |= check_once((uint64_t)(1 + (r * 37) % N_MAX), 0);
  return NULL;
}

int main(void)
{
  int fails = 0;
  for (int r = 0; r < 500; r++) fails += check_once((uint64_t)(r % 97), 0); /* includes n = 0 and 1 */
  fails += check_once(N_MAX, 0);
  fails += check_once(16, 1);

  pthread_t th[4];
  int bad[4] = {0};
  for (int t = 0; t < 4; t++) pthread_create(&th[t], NULL, app_thread, &bad[t]);
  for (int t = 0; t < 4; t++) {
    pthread_join(th[t], NULL);
    fails += bad[t];
  }

  job *j = calloc(1, sizeof *j);
  j->fail_at = 33;
  int rc = h5fz_parallel_for(100, count_one, j);
  if (rc != H5FZ_ERR_CORRUPT || !strstr(h5fz_last_error(), "task 33 failed on purpose")) {
    fprintf(stderr, "failing task: status %d, message '%s'\n", rc, h5fz_last_error());
    fails++;
  }
  free(j);

  pid_t pid = fork();
  if (pid == 0) _exit(check_once(1000, 0) | check_once(1000, 0));
  int st = 0;
  if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st)) {
    fprintf(stderr, "parallel for in a forked child failed\n");
    fails++;
  }
  fails += check_once(1000, 0); /* the parent's pool still works */
  if (fails) {
    fprintf(stderr, "%d failures\n", fails);
    return 1;
  }
  printf("parallel for: every index once (repeated, 4 threads at once, nested, failing task, fork)\n");
  return 0;
}
