/*
 * h5fz_status.h - the status codes of every h5fz library layer (the
 * planner, the codec, the HDF5 filter, the dataset API) and the calling
 * thread's message that goes with a failure.
 *
 * A function that can fail returns an h5fz_status (0 = H5FZ_OK, negative
 * = error) and leaves a one-line reason for h5fz_last_error(). This header
 * is the bottom of the tree (errors/, docs/design.md "Layers"): it
 * includes nothing of h5fz, so the planner, which sits below fusion/, can
 * report in the same style without an upward include. Installed beside
 * h5fz.h, which includes it.
 */
#ifndef H5FZ_STATUS_H
#define H5FZ_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

/* ---- status codes ------------------------------------------------------ */
typedef enum {
  H5FZ_OK = 0,
  H5FZ_ERR_ARG = -1,       /* invalid argument (NULL, size out of range) */
  H5FZ_ERR_NOMEM = -2,     /* allocation failed */
  H5FZ_ERR_SPEC = -3,      /* invalid spec text or cd_values */
  H5FZ_ERR_TRUNCATED = -4, /* chunk shorter than its header says */
  H5FZ_ERR_CORRUPT = -5,   /* chunk fails a consistency check */
  H5FZ_ERR_CHECKSUM = -6,  /* chunk checksum mismatch */
  H5FZ_ERR_VERSION = -7,   /* chunk written by a newer format version */
  H5FZ_ERR_UNSUPPORTED =
      -8,               /* op, type or mode not supported here (planner: no kernel class of the chain is available) */
  H5FZ_ERR_DEVICE = -9, /* GPU or driver error (never loses data); planner: no usable GPU, driver or NVRTC */
  H5FZ_ERR_HDF5 = -10,  /* an HDF5 call failed (dataset API; HDF5's error stack says which) */
  H5FZ_ERR_PARSE = -11, /* malformed text file: device description, kernel registry, calibration */
  H5FZ_ERR_IO = -12     /* a file cannot be opened or read */
} h5fz_status;

/* Short fixed name of a status code ("corrupt chunk", ...). Never NULL. */
const char *h5fz_status_name(int status);

/* Detailed message of the last failure on this thread (thread-local buffer,
 * valid until the next h5fz call on the same thread). Empty if none. */
const char *h5fz_last_error(void);

#ifdef __cplusplus
}
#endif
#endif /* H5FZ_STATUS_H */
