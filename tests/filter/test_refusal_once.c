/*
 * test_refusal_once.c - set_local's refusal line (filter/h5fz_filter_class.c,
 * say_refusal_once): with HDF5's automatic error printing off, a refused
 * H5Dcreate says its reason on stderr once per distinct reason, asks HDF5
 * whether the stack is printed (H5Eget_auto2) exactly once per refusal,
 * and still leaves the reason on the error stack (pushed after that call,
 * which clears the stack). With printing on, nothing goes to stderr.
 *
 * The filter class is linked in (as the library mode links it) and bound
 * to a table of this program's libhdf5 whose H5Eget_auto2 counts its
 * calls; no plugin is on the plugin path (so ft_begin, which loads it, is
 * not called).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "filter_test_util.h"
#include "h5fz_filter_class.h"

static int auto_calls;
static herr_t counting_get_auto(hid_t estack, H5E_auto2_t *func, void **data)
{
  auto_calls++;
  return H5Eget_auto2(estack, func, data);
}

/* The table of the linked libhdf5, as api/h5fz_register.c builds it, with
 * H5Eget_auto2 counted; bound under an identity of this test's own. */
static int bind_counting_class(void)
{
  h5fz_hdf5_api a;
#define H5FZ_LINKED(name) a.name = &name;
  H5FZ_HDF5_SYMBOLS(H5FZ_LINKED)
#undef H5FZ_LINKED
  a.H5Eget_auto2 = counting_get_auto;
  int slot = h5fz_filter_bind(&a, &auto_calls);
  if (slot < 0 || H5Zregister(h5fz_filter_class(slot)) < 0) return -1;
  return 0;
}

/* H5Dcreate with deflate before h5fz (set_local refuses it); 1 when it
 * failed, and *on_stack set when an "h5fz:" entry is on the error stack. */
static herr_t find_ours(unsigned n, const H5E_error2_t *e, void *data)
{
  (void)n;
  if (e->desc && strncmp(e->desc, "h5fz:", 5) == 0) *(int *)data = 1;
  return 0;
}
static int refused_create(hid_t file, const char *name, int *on_stack)
{
  hsize_t dims[1] = {64}, chunk[1] = {16};
  hid_t space = H5Screate_simple(1, dims, NULL);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(dcpl, 1, chunk);
  H5Pset_deflate(dcpl, 1);
  H5Pset_filter(dcpl, H5FZ_FILTER_ID, H5Z_FLAG_MANDATORY, 0, NULL);
  hid_t d = H5Dcreate2(file, name, H5T_IEEE_F32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  *on_stack = 0;
  if (d < 0) H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, find_ours, on_stack);
  if (d >= 0) H5Dclose(d);
  H5Pclose(dcpl);
  H5Sclose(space);
  return d < 0;
}

/* The lines stderr got while fn ran (stderr sent to a temporary file). */
static int count_stderr_lines(const char *needle, void (*fn)(void *), void *arg)
{
  fflush(stderr);
  int saved = dup(2);
  FILE *tmp = tmpfile();
  if (saved < 0 || !tmp) return -1;
  dup2(fileno(tmp), 2);
  fn(arg);
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  rewind(tmp);
  char line[2048];
  int n = 0;
  while (fgets(line, sizeof line, tmp))
    if (strstr(line, needle)) n++;
  fclose(tmp);
  return n;
}

typedef struct {
  hid_t file;
  const char *names[2];
  int refused, on_stack;
} creates;

static void two_refused_creates(void *arg)
{
  creates *c = arg;
  for (int i = 0; i < 2; i++) {
    int on_stack = 0;
    c->refused += refused_create(c->file, c->names[i], &on_stack);
    c->on_stack += on_stack;
  }
}

int main(void)
{
  unsetenv("H5FZ_QUIET");
  if (H5open() < 0 || bind_counting_class() < 0) {
    FT_CHECK(0, "cannot register the counting filter class");
    return ft_finish();
  }
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_fapl_core(fapl, 1 << 16, 0);
  hid_t file = H5Fcreate("refusal_once.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  FT_CHECK(file >= 0, "H5Fcreate");

  /* printing off, as netCDF has it: the reason on stderr, once */
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  creates off = {file, {"off_a", "off_b"}, 0, 0};
  auto_calls = 0;
  int lines = count_stderr_lines("comes before h5fz", two_refused_creates, &off);
  FT_CHECK(off.refused == 2, "printing off: %d of 2 creates refused", off.refused);
  FT_CHECK(off.on_stack == 2, "printing off: the reason is on %d of 2 error stacks", off.on_stack);
  FT_CHECK(lines == 1, "printing off: the reason said %d times on stderr, want once", lines);
  FT_CHECK(auto_calls == 2, "printing off: H5Eget_auto2 called %d times for 2 refusals, want 2", auto_calls);
  printf("printing off: 2 refusals, %d stderr line(s), %d H5Eget_auto2 call(s)\n", lines, auto_calls);

  /* printing on (HDF5's default printer): the stack says it, stderr line not */
  H5Eset_auto2(H5E_DEFAULT, (H5E_auto2_t)H5Eprint2, stderr);
  creates on = {file, {"on_a", "on_b"}, 0, 0};
  auto_calls = 0;
  int stack_lines = count_stderr_lines("h5fz: filter 'deflate'", two_refused_creates, &on);
  FT_CHECK(on.refused == 2, "printing on: %d of 2 creates refused", on.refused);
  FT_CHECK(auto_calls == 2, "printing on: H5Eget_auto2 called %d times for 2 refusals, want 2", auto_calls);
  /* HDF5's printer writes the entry's text (after "major"/"minor" lines) */
  FT_CHECK(stack_lines >= 2, "printing on: the stack was printed %d times, want 2", stack_lines);
  printf("printing on: 2 refusals, %d printed stack entr(ies), %d H5Eget_auto2 call(s)\n", stack_lines, auto_calls);

  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  H5Fclose(file);
  H5Pclose(fapl);
  return ft_finish();
}
