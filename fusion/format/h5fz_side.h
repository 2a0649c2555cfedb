/*
 * h5fz_side.h - the container's outlier side section (docs/format.md;
 * h5fz_side.c).
 */
#ifndef H5FZ_SIDE_H
#define H5FZ_SIDE_H

#include <stddef.h>
#include <stdint.h>

/* Outlier side section (docs/format.md): encode count outliers (global
 * positions strictly increasing, raw value bits of esize bytes) into a
 * malloc'd buffer. */
int h5fz_side_encode(const uint32_t *pos, const void *vals, uint32_t count, uint32_t esize, uint8_t **out,
                     size_t *out_len);
/* Decode a side section of len bytes into pos/vals (capacity count each);
 * checks that positions are strictly increasing and < n_elements.
 * *used receives the bytes consumed. */
int h5fz_side_decode(const uint8_t *in, size_t len, uint32_t count, uint32_t esize, uint64_t n_elements, uint32_t *pos,
                     void *vals, size_t *used);

#endif /* H5FZ_SIDE_H */
