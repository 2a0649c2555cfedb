/*
 * replay_main.c - main() for the fuzz targets without libFuzzer: runs every
 * file named on the command line, or found (not recursively) in a folder
 * named there, through LLVMFuzzerTestOneInput once, in name order. Used by
 * the CTest replay of tests/fuzz/corpus and tests/fuzz/regressions (gcc, no
 * clang needed). A finding aborts (FUZZ_CHECK) or crashes; exit status 0 means
 * every input passed. Prints the number of inputs run.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_common.h"

static int run_file(const char *path)
{
  FILE *f = fopen(path, "rb");
  if (!f) {
    perror(path);
    return -1;
  }
  if (fseek(f, 0, SEEK_END)) {
    fclose(f);
    return -1;
  }
  long n = ftell(f);
  rewind(f);
  if (n < 0) {
    fclose(f);
    return -1;
  }
  /* exactly n bytes, so a sanitizer sees a read past the input */
  unsigned char *buf = malloc(n ? (size_t)n : 1u);
  if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
    fprintf(stderr, "%s: cannot read\n", path);
    free(buf);
    fclose(f);
    return -1;
  }
  fclose(f);
  fprintf(stderr, "replay %s (%ld bytes)\n", path, n);
  LLVMFuzzerTestOneInput(buf, (size_t)n);
  free(buf);
  return 0;
}

static int cmp_names(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int run_dir(const char *dir, int *count)
{
  DIR *d = opendir(dir);
  if (!d) {
    perror(dir);
    return -1;
  }
  char **names = NULL;
  size_t n = 0, cap = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.') continue; /* ., .., .gitkeep */
    if (n == cap) {
      cap = cap ? 2 * cap : 64;
      char **nn = realloc(names, cap * sizeof *names);
      if (!nn) {
        closedir(d);
        return -1;
      }
      names = nn;
    }
    size_t len = strlen(dir) + strlen(e->d_name) + 2;
    names[n] = malloc(len);
    if (!names[n]) {
      closedir(d);
      return -1;
    }
    snprintf(names[n++], len, "%s/%s", dir, e->d_name);
  }
  closedir(d);
  if (n) qsort(names, n, sizeof *names, cmp_names);
  int rc = 0;
  for (size_t i = 0; i < n; i++) {
    struct stat st;
    if (!stat(names[i], &st) && S_ISREG(st.st_mode)) {
      if (run_file(names[i]))
        rc = -1;
      else
        (*count)++;
    }
    free(names[i]);
  }
  free(names);
  return rc;
}

int main(int argc, char **argv)
{
  LLVMFuzzerInitialize(&argc, &argv);
  int count = 0, rc = 0;
  for (int i = 1; i < argc; i++) {
    struct stat st;
    if (stat(argv[i], &st)) {
      perror(argv[i]);
      rc = 1;
      continue;
    }
    if (S_ISDIR(st.st_mode)) {
      if (run_dir(argv[i], &count)) rc = 1;
    } else if (run_file(argv[i])) {
      rc = 1;
    } else {
      count++;
    }
  }
  printf("%s: %d inputs replayed%s\n", argv[0], count, rc ? ", some could not be read" : ", no finding");
  return rc;
}
