/*
 * h5fz_error.h - h5fz's one error style, for the layers built on the codec
 * (the HDF5 filter, the dataset API, the CLI) as well as fusion/ itself: a
 * function returns an h5fz_status (h5fz.h) and leaves the reason in the
 * calling thread's message, which h5fz_last_error() gives back.
 *
 * Public for those layers (it is what h5fz_error.c implements); users of
 * the codec only read errors, through h5fz.h.
 */
#ifndef H5FZ_ERROR_H
#define H5FZ_ERROR_H

#include "h5fz.h"
#include "h5fz_fail.h" /* h5fz_fail, h5fz_clear_error: errors/ */

#ifdef __cplusplus
extern "C" {
#endif

/* What a warning of h5fz_log_once is about: each kind is said once per
 * process, so the first fallback of one kind does not silence another. */
typedef enum {
  H5FZ_LOG_DEVICE_SETTING, /* H5FZ_DEVICE names no device: the CPU executor takes the chunks */
  H5FZ_LOG_GPU_UNUSABLE,   /* a GPU was asked for and is not usable: the CPU executor instead */
  H5FZ_LOG_GPU_ENCODE,     /* a chunk's GPU encode failed: the CPU executor encodes it */
  H5FZ_LOG_GPU_DECODE,     /* a chunk's GPU decode failed: the CPU executor decodes it */
  H5FZ_LOG_GPU_BATCH,      /* a GPU batch failed: the CPU executor takes the remaining chunks */
  H5FZ_LOG_REL_ABOVE_ONE,  /* the filter's set_local: a REL bound above 1 is kept as given */
  H5FZ_LOG_KINDS           /* how many kinds there are */
} h5fz_log_kind;

/* Print a warning (printf-style, one line; the newline is added) to stderr
 * the first time a warning of this kind comes in the process (later ones
 * of the same kind are silent), so a fallback is visible without flooding.
 * Silent when quiet (h5fz_settings_quiet: the handle's quiet, else
 * H5FZ_QUIET); a silenced warning does not use up its kind. Thread-safe. */
void h5fz_log_once(h5fz_log_kind kind, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#ifdef __cplusplus
}
#endif
#endif /* H5FZ_ERROR_H */
