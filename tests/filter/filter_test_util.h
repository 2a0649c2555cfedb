/*
 * filter_test_util.h - shared helpers of the h5fz filter tests.
 *
 * Tests talk to the filter only through HDF5 (the plugin is loaded from
 * HDF5_PLUGIN_PATH, set by CTest); they use the codec library directly just
 * to build cd_values from text and to inspect stored chunks.
 */
#ifndef H5FZ_FILTER_TEST_UTIL_H
#define H5FZ_FILTER_TEST_UTIL_H

#include <stddef.h>

#include <hdf5.h>

#include "h5fz.h"

#if !H5_VERSION_GE(1, 10, 5)
#error "the filter tests need H5Dread_chunk/H5Dwrite_chunk (HDF5 >= 1.10.5)"
#endif

/* Count of failed checks so far; main returns ft_finish(). */
extern int ft_failures;

/* Record a failed check (file:line and a printf message) unless cond. */
#define FT_CHECK(cond, ...)                                                                                            \
  do {                                                                                                                 \
    if (!(cond)) ft_fail(__FILE__, __LINE__, __VA_ARGS__);                                                             \
  } while (0)

void ft_fail(const char *file, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Silence HDF5's automatic error printing (tests read the stack instead)
 * and check that the plugin loads. Returns 0, or -1 after reporting. */
int ft_begin(const char *test_name);

/* Print a summary; returns the process exit status (0 if no check failed). */
int ft_finish(void);

/* Copy the current HDF5 error stack, every entry's "func: desc" joined by
 * " | ", into out (len bytes). Call right after the failing HDF5 call,
 * before any other HDF5 call clears the stack. Returns the number of
 * entries. */
int ft_error_stack(char *out, size_t len);

/* The first "h5fz:" entry of a stack text from ft_error_stack (the part
 * worth printing), or the whole text if there is none. */
const char *ft_ours(const char *stack);

/* Case-insensitive substring test. */
int ft_contains(const char *haystack, const char *needle);

/* The user cd_values words for a text spec (h5fz_spec_parse +
 * h5fz_spec_to_cd_values without dataset part). cd holds H5FZ_CD_MAX words.
 * Returns the word count; aborts the test (exit 1) on a bad text, since
 * that is a bug in the test. */
size_t ft_cd_from_text(const char *text, unsigned *cd);

/* A fresh file in the working directory; name is "<tag>.h5". */
hid_t ft_create_file(const char *tag);

/* A DCPL with chunk dims (rank, chunk) and the h5fz filter (flags, cd[0..n)),
 * optionally with Fletcher32 before (fletcher = -1) or after (+1) it. */
hid_t ft_dcpl(int rank, const hsize_t *chunk, unsigned flags, size_t n, const unsigned *cd, int fletcher);

/* The h5fz cd_values stored in a dataset's DCPL (after set_local).
 * Returns the word count (may exceed cap: then only cap are copied), -1 on
 * error; *flags receives the filter flags when flags is not NULL. */
long ft_dataset_cd(hid_t dset, unsigned *cd, size_t cap, unsigned *flags);

/* Set (value NULL: unset) a variable of h5fz's settings in this process's
 * environment and make the loaded plugin take the environment again
 * (its h5fz_plugin_settings entry point, filter/h5fz_plugin_settings.h):
 * the plugin's copy of the codec reads the H5FZ_* variables once per
 * process, and a test that switches one between HDF5 calls must tell it.
 * Returns how many loaded plugin copies took it (a failure is checked). */
int ft_plugin_setenv(const char *name, const char *value);

#endif /* H5FZ_FILTER_TEST_UTIL_H */
