/*
 * h5fz_spec_suggest.h - the known word nearest a mistyped one in spec text
 * (h5fz_spec_suggest.c), for the parser's "did you mean" (raito -> ratio,
 * huffcxt -> huffctx, abss= -> abs=). Private to fusion/.
 */
#ifndef H5FZ_SPEC_SUGGEST_H
#define H5FZ_SPEC_SUGGEST_H

/* The known word nearest to word (the first len characters; case is
 * ignored): with settings 0 among the op names, the named chains and the
 * modes without a bound (lossless), with settings 1 among the setting keys
 * (the modes with a bound, subchunk, missing, dtype, dims, fill, order).
 * A word of 3 or more characters that starts known ones is one cut short:
 * the shortest of those. Otherwise near means at most one edit (an
 * insertion, a deletion, a substitution or two neighbours swapped) for
 * words of up to 4 characters, at most two for longer ones; ties go to the
 * first in table order. Returns a static
 * string, or NULL when no known word is that near. */
const char *h5fz_spec_nearest(const char *word, unsigned long len, int settings);

/* The setting keys spec text takes besides the modes' (subchunk, missing,
 * dtype, dims, fill, order): the candidates above and the "known:" list of
 * the parser's message; h5fz_spec_setting_key(i) is NULL past the last. */
const char *h5fz_spec_setting_key(unsigned long i);

#endif /* H5FZ_SPEC_SUGGEST_H */
