/* test_util.h - tiny check macros for the planner tests. */
#ifndef H5FZ_TEST_PLANNER_UTIL_H
#define H5FZ_TEST_PLANNER_UTIL_H

#include <math.h>
#include <stdio.h>
#include <string.h>

static int g_failures;

#define CHECK(cond, ...)                                                                                               \
  do {                                                                                                                 \
    if (!(cond)) {                                                                                                     \
      fprintf(stderr, "%s:%d: FAIL: ", __FILE__, __LINE__);                                                            \
      fprintf(stderr, __VA_ARGS__);                                                                                    \
      fputc('\n', stderr);                                                                                             \
      g_failures++;                                                                                                    \
    }                                                                                                                  \
  } while (0)

/* |v - want| <= tol * want */
#define CHECK_NEAR(v, want, tol)                                                                                       \
  CHECK(fabs((double)(v) - (double)(want)) <= (tol)*fabs((double)(want)), "%s = %.3f, want %.3f +- %.0f%%", #v,        \
        (double)(v), (double)(want), 100.0 * (tol))

#define CHECK_STR(a, b) CHECK(strcmp((a), (b)) == 0, "%s = '%s', want '%s'", #a, (a), (b))

#define CHECK_HAS(hay, needle) CHECK(strstr((hay), (needle)) != NULL, "%s = '%s' lacks '%s'", #hay, (hay), (needle))

#endif
