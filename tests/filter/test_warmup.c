/*
 * The GPU warm-up that set_local and the first decode start
 * (fusion/gpu/h5fz_gpu_warmup.h), on any machine: H5FZ_WARMUP_DELAY_MS (set
 * by CTest) makes the warm-up thread hold the context for a while, as a
 * slow CUDA context creation would.
 *  - While it runs, chunks under H5FZ_DEVICE=auto are written and read by
 *    the CPU executor without a word on stderr (nothing failed), the same
 *    bytes as H5FZ_DEVICE=cpu writes, every value within the bound.
 *  - A process that creates the dataset (set_local starts the warm-up) and
 *    returns from main at once exits with status 0 (the exit handler waits
 *    for the thread; the plugin stays loaded until then), as does one that
 *    reads a chunk (the first decode starts it) and exits, and a child
 *    forked while the warm-up runs writes, reads and exits.
 *  - A process that returns from main while its warm-up makes the CUDA
 *    context (past the delay) exits with status 0 at once, not after a
 *    deadline: on a GPU the exit waits for the warm-up before the CUDA
 *    driver's own exit handler tears the driver down (a warm-up inside the
 *    driver then crashed the process or hung it for 5 s).
 */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "filter_test_util.h"

#define N 65536 /* values per chunk (256 KiB of float32), 4 chunks */
#define BOUND 1e-3

static float values[4 * N];

static void fill_values(void)
{
  for (int i = 0; i < 4 * N; i++) values[i] = (float)(sin(i * 0.001) * 100.0 + cos(i * 0.37));
}

/* A dataset "d" of 4 chunks with the h5fz filter in file tag. */
static hid_t create_dataset(hid_t f)
{
  unsigned cd[H5FZ_CD_MAX];
  size_t n = ft_cd_from_text("abs=1e-3", cd);
  hsize_t dims[1] = {4 * N}, chunk[1] = {N};
  hid_t space = H5Screate_simple(1, dims, NULL);
  hid_t dcpl = ft_dcpl(1, chunk, H5Z_FLAG_MANDATORY, n, cd, 0);
  hid_t d = H5Dcreate2(f, "d", H5T_NATIVE_FLOAT, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  H5Pclose(dcpl);
  H5Sclose(space);
  return d;
}

/* The warm-up's delay that CTest sets (H5FZ_WARMUP_DELAY_MS), in seconds. */
static double warmup_delay_s(void)
{
  const char *ms = getenv("H5FZ_WARMUP_DELAY_MS");
  return ms ? atof(ms) / 1e3 : 0.0;
}

/* Child modes: return from main right after set_local, or after one read. */
static int child(const char *mode)
{
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  if (!strcmp(mode, "exit-after-create")) {
    hid_t f = H5Fcreate("warmup_exit.h5", H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    return create_dataset(f) < 0 ? 3 : 0; /* nothing closed: exit at once */
  }
  if (!strcmp(mode, "exit-during-init")) {
    hid_t f = H5Fcreate("warmup_exit_init.h5", H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (create_dataset(f) < 0) return 3;
    /* just past the warm-up's delay: cuInit and the primary context (about 0.2 s on an H200) in flight */
    double delay = warmup_delay_s();
    usleep((useconds_t)((delay + 0.1) * 1e6));
    return 0;
  }
  hid_t f = H5Fopen("warmup_auto.h5", H5F_ACC_RDONLY, H5P_DEFAULT);
  hid_t d = f < 0 ? -1 : H5Dopen2(f, "d", H5P_DEFAULT);
  static float back[N];
  hid_t mem = H5Screate_simple(1, (hsize_t[]){N}, NULL), file = d < 0 ? -1 : H5Dget_space(d);
  hsize_t start[1] = {0}, count[1] = {N};
  if (file < 0 || H5Sselect_hyperslab(file, H5S_SELECT_SET, start, NULL, count, NULL) < 0 ||
      H5Dread(d, H5T_NATIVE_FLOAT, mem, file, H5P_DEFAULT, back) < 0)
    return 3;
  return 0; /* the first decode started the warm-up; exit at once */
}

static double now_s(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

/* Run this program as mode in a fresh process; its exit status (-1: a
 * signal); *secs its wall time. */
static int run_child(const char *self, const char *mode, double *secs)
{
  double t0 = now_s();
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    execl(self, self, mode, (char *)NULL);
    _exit(127);
  }
  int st = 0;
  if (pid < 0 || waitpid(pid, &st, 0) < 0) return -2;
  *secs = now_s() - t0;
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Write the 4 chunks under the current H5FZ_DEVICE into tag; read them
 * back and check every value; the stored chunks into chunks (4 x cap). */
static void write_and_check(const char *tag, unsigned char *chunks, size_t cap, size_t *sizes)
{
  hid_t f = ft_create_file(tag);
  hid_t d = create_dataset(f); /* set_local: the warm-up starts */
  FT_CHECK(d >= 0, "%s: H5Dcreate failed", tag);
  if (d < 0) return;
  FT_CHECK(H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, values) >= 0, "%s: H5Dwrite failed", tag);
  H5Dclose(d);
  H5Fclose(f);
  char name[64];
  snprintf(name, sizeof name, "%s.h5", tag);
  f = H5Fopen(name, H5F_ACC_RDONLY, H5P_DEFAULT);
  d = H5Dopen2(f, "d", H5P_DEFAULT);
  static float back[4 * N];
  FT_CHECK(H5Dread(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, back) >= 0, "%s: H5Dread failed", tag);
  int bad = 0;
  for (int i = 0; i < 4 * N; i++) bad += !(fabs((double)back[i] - (double)values[i]) <= BOUND);
  FT_CHECK(bad == 0, "%s: %d values off by more than the bound", tag, bad);
  for (int c = 0; c < 4; c++) {
    hsize_t off[1] = {(hsize_t)c * N}, bytes = 0;
    uint32_t filters = 0;
    H5Dget_chunk_storage_size(d, off, &bytes);
    sizes[c] = (size_t)bytes;
    FT_CHECK(bytes > 0 && bytes <= cap, "%s: chunk %d has %llu bytes", tag, c, (unsigned long long)bytes);
    if (bytes > 0 && bytes <= cap)
      FT_CHECK(H5Dread_chunk(d, H5P_DEFAULT, off, &filters, chunks + (size_t)c * cap) >= 0, "%s: chunk %d unread", tag,
               c);
  }
  H5Dclose(d);
  H5Fclose(f);
}

int main(int argc, char **argv)
{
  if (argc > 1) return child(argv[1]);
  if (ft_begin("filter_warmup") < 0) return ft_finish();
  fill_values();
  size_t cap = N * 4 + 4096, auto_sizes[4], cpu_sizes[4];
  unsigned char *auto_chunks = calloc(4, cap), *cpu_chunks = calloc(4, cap);
  /* stderr to a file: the CPU path under auto while warming says nothing */
  fflush(stderr);
  FILE *err = tmpfile();
  int saved = dup(2);
  dup2(fileno(err), 2);
  ft_plugin_setenv("H5FZ_DEVICE", NULL); /* auto, whatever the plugin read at its load */
  write_and_check("warmup_auto", auto_chunks, cap, auto_sizes);
  fflush(stderr);
  dup2(saved, 2);
  long said = ftell(err);
  FT_CHECK(said == 0, "auto while warming printed %ld bytes on stderr", said);
  if (said > 0) {
    char text[512] = "";
    rewind(err);
    size_t k = fread(text, 1, sizeof text - 1, err);
    text[k] = 0;
    printf("stderr: %s\n", text);
  }
  fclose(err);
  /* the plugin reads H5FZ_DEVICE once per process: told to take it again */
  ft_plugin_setenv("H5FZ_DEVICE", "cpu");
  write_and_check("warmup_cpu", cpu_chunks, cap, cpu_sizes);
  ft_plugin_setenv("H5FZ_DEVICE", NULL);
  for (int c = 0; c < 4; c++)
    FT_CHECK(auto_sizes[c] == cpu_sizes[c] && !memcmp(auto_chunks + c * cap, cpu_chunks + c * cap, auto_sizes[c]),
             "chunk %d: auto while warming stored other bytes than the CPU executor", c);
  printf("4 chunks under auto while warming: same bytes as H5FZ_DEVICE=cpu, every value within %g\n", BOUND);
  /* the exit waits for the warm-up thread: the child lives at least the
   * warm-up's delay (a lower bound, which a loaded machine only lengthens) */
  double delay = warmup_delay_s(), t1 = 0, t2 = 0;
  int st = run_child(argv[0], "exit-after-create", &t1);
  FT_CHECK(st == 0, "a process that exits right after H5Dcreate (warm-up in flight) ended with %d", st);
  FT_CHECK(t1 >= 0.9 * delay, "the exit after H5Dcreate took %.3f s: it did not wait for the warm-up (%.3f s)", t1,
           delay);
  st = run_child(argv[0], "exit-after-read", &t2);
  FT_CHECK(st == 0, "a process that exits right after its first read (warm-up in flight) ended with %d", st);
  FT_CHECK(t2 >= 0.9 * delay, "the exit after the first read took %.3f s: it did not wait for the warm-up (%.3f s)", t2,
           delay);
  double t3 = 0;
  st = run_child(argv[0], "exit-during-init", &t3);
  FT_CHECK(st == 0, "a process that exits while its warm-up makes the context ended with %d", st);
  FT_CHECK(t3 < delay + 4.0, "the exit during the context's creation took %.3f s: it waited for a deadline", t3);
  /* fork() (no exec) while this process's warm-up runs: the child does
   * not inherit the thread, nor a lock it held; it writes and reads a
   * dataset and exits, without waiting for a thread it does not have */
  ft_plugin_setenv("H5FZ_GPU_ORDINAL", "1"); /* a context not made yet: its warm-up starts now */
  hid_t f = ft_create_file("warmup_fork_parent");
  hid_t d = create_dataset(f); /* a warm-up in flight in this process */
  usleep(100000);              /* its thread holds the context (for the delay's 400 ms) */
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    static unsigned char chunks[4 * (N * 4 + 4096)];
    size_t sizes[4];
    write_and_check("warmup_fork_child", chunks, N * 4 + 4096, sizes);
    /* H5FZ_DEVICE=gpu takes the context's lock, which the parent's
     * warm-up thread held at the fork: the child must get an answer (no
     * GPU 1 here: H5Dcreate refused), not wait for ever */
    ft_plugin_setenv("H5FZ_DEVICE", "gpu"); /* the child's copy of the plugin's snapshot, taken again */
    hid_t cf = ft_create_file("warmup_fork_child_gpu");
    hid_t cd = create_dataset(cf);
    if (cd >= 0) H5Dclose(cd);
    H5Fclose(cf);
    exit(ft_failures ? 1 : 0); /* exit(), not _exit(): the exit handlers run */
  }
  int fst = 0, waited = 0;
  while (pid > 0 && waitpid(pid, &fst, WNOHANG) == 0 && waited++ < 600) usleep(100000);
  if (pid > 0 && waited > 600) {
    kill(pid, SIGKILL);
    waitpid(pid, &fst, 0);
  }
  FT_CHECK(pid > 0 && waited <= 600 && WIFEXITED(fst) && WEXITSTATUS(fst) == 0,
           "a child forked during a warm-up did not write, read and exit cleanly within 60 s (status %d)", fst);
  if (d >= 0) H5Dclose(d);
  H5Fclose(f);
  ft_plugin_setenv("H5FZ_GPU_ORDINAL", NULL);
  if (pid > 0 && waited <= 600 && WIFEXITED(fst) && WEXITSTATUS(fst) == 0)
    printf("fork during a warm-up: the child wrote, read, met H5FZ_DEVICE=gpu and exited with status 0\n");
  printf("exit with a warm-up in flight: status 0 after set_local (%.3f s), after the first decode (%.3f s) and "
         "during the context's creation (%.3f s), the warm-up's delay %.3f s\n",
         t1, t2, t3, delay);
  free(auto_chunks);
  free(cpu_chunks);
  return ft_finish();
}
