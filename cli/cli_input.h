/*
 * cli_input.h - the files the commands are given, checked before HDF5
 * sees them (cli_input.c): a missing file, a folder or a FIFO get one
 * clean line naming the path and what it is, where HDF5's error stack
 * ("unable to open file: name = ..., errno = 2, ..., tent_flags = 0; ...")
 * said it at length or a FIFO blocked. Private to cli/.
 */
#ifndef H5FZ_CLI_INPUT_H
#define H5FZ_CLI_INPUT_H

#include <hdf5.h>

/* What a path that exists but is not a regular file is: "a directory",
 * "a FIFO", "a device or socket"; NULL for a regular file or a path that
 * does not exist (stat follows symbolic links). */
const char *h5fz_cli_not_a_file(const char *path);

/* 0 when path is a regular file (after symbolic links) this process may
 * read; else prints "h5fz <cmd>: cannot open PATH: <strerror>" (missing,
 * no permission on the way, a file it may not read: "Permission denied")
 * or "h5fz <cmd>: PATH is not a regular file (a directory)" on stderr and
 * returns -1. */
int h5fz_cli_check_input(const char *cmd, const char *path);

/* H5Fopen(path, read-only) after h5fz_cli_check_input, for inspect and
 * verify. Returns the file, or -1 with one line on stderr: the check's,
 * "PATH is not an HDF5 file (no HDF5 signature)", or "cannot open PATH
 * as an HDF5 file (damaged?): <HDF5's innermost reasons>". The caller has
 * silenced HDF5's own printing (h5fz_cli_quiet_hdf5) and closes the file. */
hid_t h5fz_cli_open_input(const char *cmd, const char *path);

#endif /* H5FZ_CLI_INPUT_H */
