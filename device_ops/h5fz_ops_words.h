/*
 * h5fz_ops_words.h - the word-level ops of one word width: included by
 * h5fz_ops.h once for 32-bit and once for 64-bit words, with the template
 * parameters H5FZ_T_FLOAT, _WORD, _SWORD, _BITS, _MAXBIN and H5FZ_TN set,
 * which it clears after them. No include guard: it is meant to be
 * included twice.
 */
/* every word op's op_X.h, in its order: generated from the files by
 * device_ops/op_list.cmake, so that a new op adds no line here */
#include "h5fz_ops_list.h"
#undef H5FZ_T_FLOAT
#undef H5FZ_T_WORD
#undef H5FZ_T_SWORD
#undef H5FZ_T_BITS
#undef H5FZ_T_MAXBIN
#undef H5FZ_TN
#undef H5FZ_T_ZERO_CODE
