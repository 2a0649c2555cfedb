/*
 * cli_tempfile.h - a temporary output file that an interrupted process
 * does not leave behind: `h5fz compress` writes OUT.h5fz-tmp-XXXXXX and
 * renames it when the copy checks out; Ctrl-C (SIGINT), SIGTERM or SIGHUP
 * in between used to leave the half-written file. Private to cli/.
 */
#ifndef H5FZ_CLI_TEMPFILE_H
#define H5FZ_CLI_TEMPFILE_H

/* Remove path if the process gets SIGINT, SIGTERM or SIGHUP before
 * h5fz_cli_temp_release: the handler unlinks it, restores the signal's
 * default action and raises it again, so the process still ends the way
 * the signal says; a signal inherited as ignored (nohup) stays ignored.
 * One file at a time (a later call replaces the path);
 * path is copied (at most 4095 bytes; a longer one is not guarded).
 * Returns 0, or -1 when the handlers cannot be installed (the file is
 * then not guarded; nothing else changes). */
int h5fz_cli_temp_guard(const char *path);

/* Stop guarding (after the file was renamed or removed): the handlers
 * stay, with no file to remove. */
void h5fz_cli_temp_release(void);

#endif /* H5FZ_CLI_TEMPFILE_H */
