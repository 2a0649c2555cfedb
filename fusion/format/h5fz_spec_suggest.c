/*
 * h5fz_spec_suggest.c - the known word nearest a mistyped one in spec text
 * (h5fz_spec_suggest.h). The candidates are read from the tables that
 * define them (the op table, the named chains, the mode table), so a new
 * op or mode is suggested without an edit here.
 */
#include "h5fz_spec_suggest.h"

#include <ctype.h>
#include <string.h>

#include "h5fz_internal.h"
#include "h5fz_modes.h"

#define MAX_WORD 32u /* longer words are never near a known one */

/* Edit distance of a[0..n) and b[0..m) (case ignored) with insertions,
 * deletions, substitutions and swaps of neighbours (the optimal string
 * alignment distance), or a value above limit as soon as it must be. */
static unsigned distance(const char *a, size_t n, const char *b, size_t m, unsigned limit)
{
  if (n > MAX_WORD || m > MAX_WORD || (n > m ? n - m : m - n) > limit) return limit + 1u;
  unsigned d[MAX_WORD + 1u][MAX_WORD + 1u];
  for (size_t i = 0; i <= n; i++) d[i][0] = (unsigned)i;
  for (size_t j = 0; j <= m; j++) d[0][j] = (unsigned)j;
  for (size_t i = 1; i <= n; i++) {
    unsigned row_best = limit + 1u;
    for (size_t j = 1; j <= m; j++) {
      int ca = tolower((unsigned char)a[i - 1]), cb = tolower((unsigned char)b[j - 1]);
      unsigned best = d[i - 1][j - 1] + (ca != cb);
      if (d[i - 1][j] + 1u < best) best = d[i - 1][j] + 1u;
      if (d[i][j - 1] + 1u < best) best = d[i][j - 1] + 1u;
      if (i > 1 && j > 1 && ca == tolower((unsigned char)b[j - 2]) && tolower((unsigned char)a[i - 2]) == cb &&
          d[i - 2][j - 2] + 1u < best)
        best = d[i - 2][j - 2] + 1u;
      d[i][j] = best;
      if (best < row_best) row_best = best;
    }
    if (row_best > limit) return limit + 1u; /* every later row is at least as far */
  }
  return d[n][m];
}

/* Is word[0..len) (case ignored) the start of c? */
static int starts(const char *word, size_t len, const char *c)
{
  if (strlen(c) < len) return 0;
  for (size_t i = 0; i < len; i++)
    if (tolower((unsigned char)word[i]) != tolower((unsigned char)c[i])) return 0;
  return 1;
}

/* The nearer of *best (at *best_d) and candidate c. A word of 3 or more
 * characters that starts a candidate is taken as that candidate cut short
 * (distance 0: "rat" is ratio, not raw; "lorenzo_int" lorenzo_interp, not
 * lorenzo_nd); of several, the shortest. */
static void consider(const char *word, size_t len, unsigned limit, const char *c, const char **best, unsigned *best_d)
{
  if (!c) return;
  if (len >= 3 && starts(word, len, c)) {
    if (*best_d > 0 || !*best || strlen(c) < strlen(*best)) {
      *best = c;
      *best_d = 0;
    }
    return;
  }
  unsigned dist = distance(word, len, c, strlen(c), limit);
  if (dist <= limit && dist < *best_d) {
    *best = c;
    *best_d = dist;
  }
}

static const char *const setting_keys[] = {"subchunk", "missing", "dtype", "dims", "fill", "order"};

const char *h5fz_spec_setting_key(unsigned long i)
{
  return i < sizeof setting_keys / sizeof setting_keys[0] ? setting_keys[i] : NULL;
}

const char *h5fz_spec_nearest(const char *word, unsigned long len, int settings)
{
  if (!word || len == 0) return NULL;
  const unsigned limit = len <= 4u ? 1u : 2u;
  const char *best = NULL;
  unsigned best_d = limit + 1u;
  size_t n_modes = 0;
  const h5fz_mode_row *modes = h5fz_mode_table(&n_modes);
  for (size_t i = 0; i < n_modes; i++)
    if ((modes[i].bound_rule != H5FZ_BOUND_NONE) == (settings != 0))
      consider(word, len, limit, modes[i].name, &best, &best_d);
  if (settings) {
    for (unsigned long i = 0; h5fz_spec_setting_key(i); i++)
      consider(word, len, limit, h5fz_spec_setting_key(i), &best, &best_d);
    return best;
  }
  const char *name = NULL;
  for (size_t i = 0; h5fz_op_at(i, NULL, &name, NULL, NULL) == H5FZ_OK; i++)
    consider(word, len, limit, name, &best, &best_d);
  const h5fz_chain_preset *p;
  for (size_t i = 0; (p = h5fz_chain_preset_at(i)) != NULL; i++) consider(word, len, limit, p->name, &best, &best_d);
  return best;
}
