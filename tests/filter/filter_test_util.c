#include "filter_test_util.h"
#include "h5fz_plugin_settings.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ft_failures = 0;
static const char *ft_name = "filter test";

void ft_fail(const char *file, int line, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "FAIL %s:%d: ", file, line);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  ft_failures++;
}

int ft_begin(const char *test_name)
{
  ft_name = test_name;
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  htri_t avail = H5Zfilter_avail(H5FZ_FILTER_ID);
  if (avail <= 0) {
    char stack[2048];
    ft_error_stack(stack, sizeof stack);
    fprintf(stderr, "FAIL: h5fz filter %d not available (HDF5_PLUGIN_PATH=%s): %s\n", H5FZ_FILTER_ID,
            getenv("HDF5_PLUGIN_PATH") ? getenv("HDF5_PLUGIN_PATH") : "(unset)", stack);
    ft_failures++;
    return -1;
  }
  return 0;
}

int ft_finish(void)
{
  if (ft_failures)
    fprintf(stderr, "%s: %d check(s) failed\n", ft_name, ft_failures);
  else
    printf("%s: all checks passed\n", ft_name);
  return ft_failures ? 1 : 0;
}

typedef struct {
  char *out;
  size_t len;
  size_t used;
} stack_text;

static herr_t walk_entry(unsigned n, const H5E_error2_t *err, void *data)
{
  stack_text *st = data;
  if (st->used + 1 >= st->len) return 0;
  int w = snprintf(st->out + st->used, st->len - st->used, "%s%s: %s", n ? " | " : "",
                   err->func_name ? err->func_name : "?", err->desc ? err->desc : "");
  if (w > 0) st->used += (size_t)w < st->len - st->used ? (size_t)w : st->len - st->used - 1;
  return 0;
}

int ft_error_stack(char *out, size_t len)
{
  stack_text st = {out, len, 0};
  out[0] = '\0';
  hid_t stack = H5Eget_current_stack();
  if (stack < 0) return 0;
  ssize_t count = H5Eget_num(stack);
  H5Ewalk2(stack, H5E_WALK_DOWNWARD, walk_entry, &st);
  H5Eclose_stack(stack);
  return (int)count;
}

const char *ft_ours(const char *stack)
{
  const char *p = strstr(stack, "h5fz:");
  return p ? p : stack;
}

int ft_contains(const char *haystack, const char *needle)
{
  size_t n = strlen(needle);
  for (const char *p = haystack; *p; p++) {
    size_t i = 0;
    while (i < n && p[i] && tolower((unsigned char)p[i]) == tolower((unsigned char)needle[i])) i++;
    if (i == n) return 1;
  }
  return n == 0;
}

size_t ft_cd_from_text(const char *text, unsigned *cd)
{
  h5fz_spec spec;
  size_t n = 0;
  if (h5fz_spec_parse(text, &spec) != H5FZ_OK || h5fz_spec_to_cd_values(&spec, 0, cd, H5FZ_CD_MAX, &n) != H5FZ_OK) {
    fprintf(stderr, "test bug: cannot turn \"%s\" into cd_values: %s\n", text, h5fz_last_error());
    exit(1);
  }
  return n;
}

hid_t ft_create_file(const char *tag)
{
  char name[256];
  snprintf(name, sizeof name, "%s.h5", tag);
  hid_t f = H5Fcreate(name, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (f < 0) {
    fprintf(stderr, "cannot create %s\n", name);
    exit(1);
  }
  return f;
}

hid_t ft_dcpl(int rank, const hsize_t *chunk, unsigned flags, size_t n, const unsigned *cd, int fletcher)
{
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  if (dcpl < 0 || H5Pset_chunk(dcpl, rank, chunk) < 0) exit(1);
  if (fletcher < 0 && H5Pset_fletcher32(dcpl) < 0) exit(1);
  if (H5Pset_filter(dcpl, H5FZ_FILTER_ID, flags, n, cd) < 0) {
    fprintf(stderr, "H5Pset_filter(h5fz) failed\n");
    exit(1);
  }
  if (fletcher > 0 && H5Pset_fletcher32(dcpl) < 0) exit(1);
  return dcpl;
}

long ft_dataset_cd(hid_t dset, unsigned *cd, size_t cap, unsigned *flags)
{
  hid_t dcpl = H5Dget_create_plist(dset);
  if (dcpl < 0) return -1;
  unsigned fl = 0;
  size_t n = cap;
  herr_t r = H5Pget_filter_by_id2(dcpl, H5FZ_FILTER_ID, &fl, &n, cd, 0, NULL, NULL);
  H5Pclose(dcpl);
  if (r < 0) return -1;
  if (flags) *flags = fl;
  return (long)n;
}

int ft_plugin_setenv(const char *name, const char *value)
{
  if (value)
    setenv(name, value, 1);
  else
    unsetenv(name);
  (void)H5Zfilter_avail(H5FZ_FILTER_ID); /* HDF5 loads the plugin if it has not yet */
  h5fz_plugin_settings_msg m = {.version = H5FZ_PLUGIN_SETTINGS_VERSION, .reload = 1, .gpu_ordinal = -1};
  int told = h5fz_plugin_copies_tell(&m, NULL);
  FT_CHECK(told > 0, "%s=%s: no loaded h5fz plugin took the reload", name, value ? value : "(unset)");
  return told;
}
