/*
 * cli_space.h - what a dataset's dataspace says to the CLI: its shape in
 * words, and whether `h5fz compress` leaves the dataset unfiltered because
 * of it. Private to cli/. One rule, read by compress (which leaves such a
 * dataset unchanged) and by verify --require-filter (which then does not
 * ask for the filter), so the two cannot disagree (docs/cli.md).
 */
#ifndef H5FZ_CLI_SPACE_H
#define H5FZ_CLI_SPACE_H

#include <stddef.h>

#include <hdf5.h>

/* The shape of space into buf (len bytes, always NUL-terminated when
 * len > 0): "12x291x360" for a simple dataspace (slowest first; "0" for an
 * empty one), "scalar" for H5S_SCALAR, "null" for H5S_NULL (no elements,
 * no extent), "?" when HDF5 cannot say. Returns buf. */
const char *h5fz_cli_space_shape(hid_t space, char *buf, size_t len);

/* 1 when a dataset of space can grow (some maximum extent is unlimited or
 * above the current one), else 0 (also for scalar, null or invalid). */
int h5fz_cli_space_can_grow(hid_t space);

/* Why `h5fz compress` leaves a float dataset of this dataspace unfiltered,
 * as a fixed phrase ("scalar", "null dataspace (no elements)", "fewer
 * than 2 elements"), or NULL when the shape lets it be compressed: a
 * simple dataspace of 2 or more elements, or of any size when it can grow
 * (rows appended later get the filter). A scalar or null dataspace cannot
 * be chunked, so no filter can ever apply; one fixed element is not worth
 * a chunk. */
const char *h5fz_cli_space_unfiltered_reason(hid_t space);

#endif /* H5FZ_CLI_SPACE_H */
