/*
 * cli_status.h - the one place where the CLI turns a library failure
 * (an h5fz_status of the codec, the planner or the dataset API, with the
 * thread's message) into what the process reports: one line on stderr
 * and an exit status (H5FZ_CLI_*, below; docs/cli.md "Exit codes").
 * Private to cli/; needs no HDF5 (`h5fz plan` is built without it too).
 */
#ifndef H5FZ_CLI_STATUS_H
#define H5FZ_CLI_STATUS_H

/* The process's exit statuses, the CLI's interface (docs/cli.md). */
#define H5FZ_CLI_OK 0    /* success */
#define H5FZ_CLI_FAIL 1  /* a check failed (the report says which) */
#define H5FZ_CLI_USAGE 2 /* bad arguments or input, an I/O error (reason on stderr) */

/* The exit status for a library status: H5FZ_CLI_OK for H5FZ_OK, else
 * H5FZ_CLI_USAGE (2: bad arguments, bad input, an unreadable file, a
 * resource missing). H5FZ_CLI_FAIL (1) is never a library failure: it is
 * a check of the CLI's own that found a problem (a bound broken, a chunk
 * unreadable, no kernel class for the chain). */
int h5fz_cli_exit_status(int status);

/* Print "h5fz <cmd>: <context>: <reason>" on stderr (one line), the reason
 * being h5fz_last_error() or, when that is empty, h5fz_status_name(status);
 * context is printf-style. Returns h5fz_cli_exit_status(status), for
 * `return h5fz_cli_library_error(...)`. */
int h5fz_cli_library_error(const char *cmd, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The text of the last error a command said (h5fz_cli_error,
 * h5fz_cli_library_error; "" before any), for a report in JSON on stdout:
 * a static buffer, valid until the next error. h5fz_cli_note_error sets it. */
const char *h5fz_cli_last_error(void);
void h5fz_cli_note_error(const char *text);

#endif /* H5FZ_CLI_STATUS_H */
