/*
 * cli_input.c - an input path checked before HDF5 opens it, and opened
 * read-only with one line of error (cli_input.h).
 */
#include "cli_input.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "h5fz_cli.h"

const char *h5fz_cli_not_a_file(const char *path)
{
  struct stat st;
  if (stat(path, &st) != 0 || S_ISREG(st.st_mode)) return NULL;
  return S_ISDIR(st.st_mode) ? "a directory" : S_ISFIFO(st.st_mode) ? "a FIFO" : "a device or socket";
}

int h5fz_cli_check_input(const char *cmd, const char *path)
{
  struct stat st;
  if (stat(path, &st) != 0) {
    h5fz_cli_error(cmd, "cannot open %s: %s", path, strerror(errno));
    return -1;
  }
  const char *kind = h5fz_cli_not_a_file(path);
  if (kind) {
    h5fz_cli_error(cmd, "%s is not a regular file (%s)", path, kind);
    return -1;
  }
  /* a file the user may not read: HDF5's open would fail too, and the
   * message then guessed "not HDF5, or damaged" (a regular file: open()
   * does not block) */
  int fd = open(path, O_RDONLY);
  if (fd < 0) {
    h5fz_cli_error(cmd, "cannot open %s: %s", path, strerror(errno));
    return -1;
  }
  close(fd);
  return 0;
}

/* >0 when path starts with an HDF5 signature, 0 when not, <0 on error. */
static htri_t has_hdf5_signature(const char *path)
{
#if H5_VERSION_GE(1, 12, 0)
  return H5Fis_accessible(path, H5P_DEFAULT);
#else
  return H5Fis_hdf5(path);
#endif
}

hid_t h5fz_cli_open_input(const char *cmd, const char *path)
{
  char why[400];
  if (h5fz_cli_check_input(cmd, path) < 0) return -1;
  hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file >= 0) return file;
  h5fz_cli_hdf5_why(why, sizeof why); /* the open's reasons, before the signature test adds its own */
  if (has_hdf5_signature(path) == 0)
    h5fz_cli_error(cmd, "%s is not an HDF5 file (no HDF5 signature)", path);
  else
    h5fz_cli_error(cmd, "cannot open %s as an HDF5 file (damaged?): %s", path, why);
  return -1;
}
