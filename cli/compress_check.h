/*
 * compress_check.h - the check after `h5fz compress` copied a file
 * (cmd_compress.c): every element of every compressed dataset against the
 * spec's bound, read back through the plugin. Private to cli/.
 */
#ifndef H5FZ_COMPRESS_CHECK_H
#define H5FZ_COMPRESS_CHECK_H

#include <hdf5.h>

#include "compress_copy.h"
#include "h5fz.h"

/* Compare dataset it->path of in (the original) and out (the closed and
 * reopened copy), slab by slab, element by element, as doubles (exact for
 * float32 and float64):
 *  - NaN stays NaN, +-Inf stays the same Inf, a value equal to the
 *    dataset's fill value comes back as exactly that value;
 *  - finite values: ABS |x - x'| <= bound; REL |x - x'| <= bound x (max -
 *    min) of the dataset's finite values other than the fill value (the
 *    filter keeps the tighter per-chunk range); PW_REL |x - x'| <= bound
 *    |x| with the sign kept and zeros exact; LOSSLESS bit-exact;
 *  - every stored chunk of the copy went through h5fz (filter mask).
 * Fills it->checked, bound, max_err, chunks, unfiltered_chunks, ok, and
 * problem (the first broken rule, with the element's index). Returns 0,
 * or -1 when a dataset could not be read (it->problem says why). */
int h5fz_compress_check(hid_t in, hid_t out, const h5fz_spec *spec, h5fz_compress_item *it);

#endif /* H5FZ_COMPRESS_CHECK_H */
