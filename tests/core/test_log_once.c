/*
 * test_log_once.c - h5fz_log_once says each kind of warning once per
 * process (fusion/h5fz_error.h): a second warning of a kind is silent, a
 * warning of another kind is still said, and one silenced by quiet
 * overrides (a handle's quiet) does not use up its kind.
 *
 * stderr goes to a file for the calls, which is then read back.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "h5fz_error.h"
#include "h5fz_settings.h"

#include "core_check.h"

/* What the calls of fn wrote to stderr, into buf (cap bytes). */
static void capture(void (*fn)(void), char *buf, size_t cap)
{
  char path[] = "/tmp/h5fz-log-once-XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0, "mkstemp");
  fflush(stderr);
  int saved = dup(2);
  dup2(fd, 2);
  fn();
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  lseek(fd, 0, SEEK_SET);
  ssize_t n = read(fd, buf, cap - 1); /* the calls write a few short lines */
  buf[n > 0 ? n : 0] = '\0';
  close(fd);
  unlink(path);
}

static void two_kinds(void)
{
  h5fz_log_once(H5FZ_LOG_GPU_ENCODE, "h5fz: first encode warning");
  h5fz_log_once(H5FZ_LOG_GPU_ENCODE, "h5fz: second encode warning");
  h5fz_log_once(H5FZ_LOG_GPU_BATCH, "h5fz: first batch warning");
}

static void quiet_then_not(void)
{
  h5fz_overrides quiet;
  h5fz_overrides_init(&quiet);
  quiet.quiet = 1;
  const h5fz_overrides *previous = h5fz_overrides_enter(&quiet);
  h5fz_log_once(H5FZ_LOG_GPU_DECODE, "h5fz: decode warning under a quiet handle");
  h5fz_overrides_leave(previous);
  h5fz_log_once(H5FZ_LOG_GPU_DECODE, "h5fz: decode warning without one");
}

int main(void)
{
  unsetenv("H5FZ_QUIET");
  char out[4096];
  capture(two_kinds, out, sizeof out);
  CHECK(strstr(out, "first encode warning") != NULL, "the first warning of a kind is said; stderr: %s", out);
  CHECK(strstr(out, "second encode warning") == NULL, "the second of the same kind is silent; stderr: %s", out);
  CHECK(strstr(out, "first batch warning") != NULL, "a warning of another kind is still said; stderr: %s", out);
  capture(quiet_then_not, out, sizeof out);
  CHECK(strstr(out, "under a quiet handle") == NULL, "quiet overrides silence it; stderr: %s", out);
  CHECK(strstr(out, "without one") != NULL, "a silenced warning does not use up its kind; stderr: %s", out);
  if (failures) {
    fprintf(stderr, "test_log_once: %d of %ld checks FAILED\n", failures, checks);
    return 1;
  }
  printf("test_log_once: %ld checks passed\n", checks);
  return 0;
}
