/* Globs over plain byte strings: base names, host names, argv elements,
 * env names, and the single components of match-path.c.
 *
 * The matcher is the iterative "remember the last star" algorithm: on a
 * mismatch only the most recent '*' is retried one byte further.  That is
 * enough for '*' (a later star can absorb anything an earlier one could),
 * and it bounds the work by O(len(glob) * len(s)) instead of the
 * exponential blow-up of naive recursion ("*a*a*a*b" against "aaaa...").
 * Bytes are bytes: no UTF-8 decoding, so non-UTF-8 names compare exactly. */
#include <stdint.h>
#include <string.h>

#include "rules/match-internal.h"
#include "rules/rules.h"

static unsigned char glob_fold(unsigned char c, unsigned flags)
{
	if ((flags & MATCH_CASEFOLD) && c >= 'A' && c <= 'Z')
		return (unsigned char)(c - 'A' + 'a');
	return c;
}

/* The bracket expression starting after '[' at g (end at gend) against c.
 * Returns 1 or 0 and sets *next past the ']'; -1 when there is no closing
 * ']' (then the '[' is an ordinary byte, as in fnmatch). */
static int glob_class(const char *g, const char *gend, unsigned char c, unsigned flags,
		      const char **next)
{
	bool negate = false, hit = false, first = true;
	unsigned char fc = glob_fold(c, flags);

	if (g < gend && (*g == '!' || *g == '^')) {
		negate = true;
		g++;
	}
	while (g < gend) {
		unsigned char lo = (unsigned char)*g, hi;

		/* A ']' right after '[' or '[!' is a member, not the end. */
		if (lo == ']' && !first) {
			*next = g + 1;
			return hit != negate;
		}
		first = false;
		if (lo == '\\' && g + 1 < gend)
			lo = (unsigned char)*++g;
		g++;
		hi = lo;
		if (g + 1 < gend && *g == '-' && g[1] != ']') {
			g++;
			hi = (unsigned char)*g;
			if (hi == '\\' && g + 1 < gend)
				hi = (unsigned char)*++g;
			g++;
		}
		if (c >= lo && c <= hi)
			hit = true;
		else if (flags & MATCH_CASEFOLD) {
			/* [a-z] takes 'A' and [A-Z] takes 'a'. */
			unsigned char up = (fc >= 'a' && fc <= 'z') ? (unsigned char)(fc - 'a' + 'A') : fc;
			if ((fc >= lo && fc <= hi) || (up >= lo && up <= hi))
				hit = true;
		}
	}
	return -1;
}

bool match_glob_n(const char *glob, size_t glen, const char *s, size_t slen, unsigned flags)
{
	size_t gi = 0, si = 0;
	size_t star_g = SIZE_MAX, star_s = 0;

	while (si < slen) {
		if (gi < glen) {
			unsigned char gc = (unsigned char)glob[gi];
			unsigned char sc = (unsigned char)s[si];

			if (gc == '*') {
				while (gi < glen && glob[gi] == '*')
					gi++;
				if (gi == glen)
					return true;
				star_g = gi;
				star_s = si;
				continue;
			}
			if (gc == '?') {
				gi++;
				si++;
				continue;
			}
			if (gc == '[') {
				const char *next;
				int r = glob_class(glob + gi + 1, glob + glen, sc, flags, &next);
				if (r == 1) {
					gi = (size_t)(next - glob);
					si++;
					continue;
				}
				if (r == 0)
					goto retry;
				/* unterminated: a literal '[' */
			}
			{
				size_t step = 1;
				/* A lone trailing backslash stands for itself. */
				if (gc == '\\' && gi + 1 < glen) {
					gc = (unsigned char)glob[gi + 1];
					step = 2;
				}
				if (glob_fold(gc, flags) == glob_fold(sc, flags)) {
					gi += step;
					si++;
					continue;
				}
			}
		}
retry:
		if (star_g == SIZE_MAX)
			return false;
		gi = star_g;
		si = ++star_s;
	}
	while (gi < glen && glob[gi] == '*')
		gi++;
	return gi == glen;
}

bool match_glob(const char *glob, const char *s)
{
	if (!glob || !s)
		return false;
	return match_glob_n(glob, strlen(glob), s, strlen(s), 0);
}

bool match_alternatives_n(const char *pattern, size_t plen, const char *s, size_t slen)
{
	size_t start = 0, i = 0;

	for (;;) {
		if (i == plen || pattern[i] == '|') {
			if (match_glob_n(pattern + start, i - start, s, slen, 0))
				return true;
			if (i == plen)
				return false;
			start = ++i;
			continue;
		}
		/* "\|" is a literal bar: keep it (and its backslash) in the
		 * alternative, where match_glob_n reads the escape. */
		if (pattern[i] == '\\' && i + 1 < plen)
			i++;
		i++;
	}
}

bool match_alternatives(const char *pattern, const char *s)
{
	if (!pattern || !s)
		return false;
	return match_alternatives_n(pattern, strlen(pattern), s, strlen(s));
}

bool match_glob_has_magic(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] == '*' || s[i] == '?' || s[i] == '[' || s[i] == '\\')
			return true;
	return false;
}
