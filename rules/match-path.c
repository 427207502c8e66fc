/* Path globs: "*" "?" "[...]" within one component, "**" as a whole
 * component for any number of components (zero included).
 *
 * Defined behaviour for paths that are not in normal form (the tracer
 * resolves paths, but the tools and the preload shim may hand us raw
 * ones): the path is normalized lexically first, "//" as "/", "." dropped,
 * ".." pops one component ("/.." stays "/"), a trailing '/' dropped.
 * So "/etc//shadow" and "/home/u/../../etc/shadow" both meet the rules
 * written for "/etc/shadow", and an allow of everything under ${ROOT}
 * cannot be widened by "${ROOT}/../x".  Symlinks are not looked at (that
 * is the resolver's job).  A path that needs normalizing and is longer
 * than PATH_MAX matches no pattern.  In patterns, runs of '/' count as one separator too (so
 * "${HOME}/x" with HOME=/ works); "." and ".." pattern components are
 * plain names and therefore never match a normalized path.
 *
 * An absolute pattern only matches an absolute path and a relative one
 * only a relative path.
 *
 * Matching walks components with the same "last star" retry as
 * match-glob.c, one level up: on a mismatch only the most recent "**" is
 * made to absorb one more component.  Each "**" restarts the retry point
 * further right, so the work is O(components * pattern) however many
 * "**" there are, with a 4095-byte path included. */
#include <stdint.h>
#include <string.h>

#include "rules/match-internal.h"
#include "rules/rules.h"

static bool path_is_dots(const char *s, size_t n)
{
	return (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.');
}

bool match_path_needs_normalize(const char *path, size_t len)
{
	size_t i = 0;

	if (len > 1 && path[len - 1] == '/')
		return true;
	while (i < len) {
		size_t start;

		if (path[i] == '/') {
			if (i + 1 < len && path[i + 1] == '/')
				return true;
			i++;
			continue;
		}
		start = i;
		while (i < len && path[i] != '/')
			i++;
		if (path_is_dots(path + start, i - start))
			return true;
	}
	return false;
}

size_t match_path_normalize(const char *path, size_t len, char *out, size_t size)
{
	bool absolute = len > 0 && path[0] == '/';
	size_t o = 0, root = 0, i = 0;

	if (size < 2)
		return (size_t)-1;
	if (absolute) {
		out[o++] = '/';
		root = 1;
	}
	while (i < len) {
		size_t start, n;

		while (i < len && path[i] == '/')
			i++;
		if (i == len)
			break;
		start = i;
		while (i < len && path[i] != '/')
			i++;
		n = i - start;
		if (n == 1 && path[start] == '.')
			continue;
		if (n == 2 && path[start] == '.' && path[start + 1] == '.') {
			size_t k = o;

			while (k > root && out[k - 1] != '/')
				k--;
			if (o > root && !path_is_dots(out + k, o - k)) {
				o = k;
				if (o > root)
					o--; /* the separator before the popped name */
				continue;
			}
			if (absolute)
				continue; /* the parent of "/" is "/" */
			/* A relative path keeps its leading "..". */
		}
		if (o + (o > root) + n + 1 > size)
			return (size_t)-1;
		if (o > root)
			out[o++] = '/';
		memcpy(out + o, path + start, n);
		o += n;
	}
	out[o] = '\0';
	return o;
}

/* End of the pattern component starting at i: the next '/' that is not
 * escaped. */
static size_t path_glob_comp_end(const char *g, size_t i, size_t n)
{
	while (i < n && g[i] != '/') {
		if (g[i] == '\\' && i + 1 < n)
			i++;
		i++;
	}
	return i;
}

static bool path_is_magic(unsigned char c)
{
	return c == '*' || c == '?' || c == '[' || c == '\\';
}

/* Bytes that end a literal run in a glob: the separator and the glob and
 * escape characters (immutable, so no state shared between callers). */
static const bool path_stop[256] = {
	['/'] = true, ['*'] = true, ['?'] = true, ['['] = true, ['\\'] = true,
};

static unsigned path_comp_bit(unsigned char c0, size_t len)
{
	return ((unsigned)c0 * 7u + (unsigned)len) & 63u;
}

uint64_t match_path_comps(const char *path, size_t len)
{
	uint64_t bits = 0;
	size_t i = 0;

	while (i < len) {
		size_t start;

		if (path[i] == '/') {
			i++;
			continue;
		}
		start = i;
		while (i < len && path[i] != '/')
			i++;
		bits |= (uint64_t)1 << path_comp_bit((unsigned char)path[start], i - start);
	}
	return bits;
}

uint64_t match_path_need(const char *glob)
{
	uint64_t bits = 0;
	size_t n = strlen(glob), i = 0;

	while (i < n) {
		size_t start, e;
		bool literal = true;

		if (glob[i] == '/') {
			i++;
			continue;
		}
		start = i;
		e = path_glob_comp_end(glob, i, n);
		for (size_t k = start; k < e; k++)
			if (path_is_magic((unsigned char)glob[k]))
				literal = false;
		if (literal)
			bits |= (uint64_t)1 << path_comp_bit((unsigned char)glob[start], e - start);
		i = e;
	}
	return bits;
}

uint64_t match_path_scan(const char *path, size_t len, bool *needs_normalize)
{
	uint64_t bits = 0;
	bool needs = len > 1 && path[len - 1] == '/';
	size_t i = 0;

	while (i < len) {
		const char *slash;
		size_t start;

		if (path[i] == '/') {
			if (i + 1 < len && path[i + 1] == '/')
				needs = true;
			i++;
			continue;
		}
		start = i;
		slash = memchr(path + i, '/', len - i);
		i = slash ? (size_t)(slash - path) : len;
		if (path_is_dots(path + start, i - start))
			needs = true;
		bits |= (uint64_t)1 << path_comp_bit((unsigned char)path[start], i - start);
	}
	*needs_normalize = needs;
	return bits;
}

/* The component walk from gi in the glob and si in the path, both at a
 * component boundary; comps is match_path_comps() of the path or
 * MATCH_COMPS_ALL. */
static bool path_walk(const char *g, size_t gn, const char *s, size_t sn, size_t gi, size_t si,
		      uint64_t comps)
{
	size_t star_g = SIZE_MAX, star_s = 0;

	for (;;) {
		size_t ge, se;
		unsigned char c0;

		while (gi < gn && g[gi] == '/')
			gi++;
		while (si < sn && s[si] == '/')
			si++;
		if (gi == gn) {
			if (si == sn)
				return true;
			goto retry;
		}
		if (g[gi] == '*' && gi + 1 < gn && g[gi + 1] == '*' &&
		    (gi + 2 == gn || g[gi + 2] == '/')) {
			gi += 2;
			while (gi < gn && g[gi] == '/')
				gi++;
			if (gi == gn)
				return true; /* a trailing "**" takes whatever is left */
			if (comps != MATCH_COMPS_ALL) {
				size_t e = gi;

				while (e < gn && !path_stop[(unsigned char)g[e]])
					e++;
				if ((e == gn || g[e] == '/') &&
				    !(comps & ((uint64_t)1 << path_comp_bit((unsigned char)g[gi], e - gi))))
					return false; /* this literal is no component of the path */
			}
			star_g = gi;
			star_s = si;
			continue;
		}
		if (si == sn)
			return false; /* a "**" further left cannot give back components */
		/* Most components differ in their first byte: settle those
		 * without the glob. */
		c0 = (unsigned char)g[gi];
		if (!path_is_magic(c0) && c0 != (unsigned char)s[si])
			goto retry;
		ge = path_glob_comp_end(g, gi, gn);
		se = si;
		while (se < sn && s[se] != '/')
			se++;
		if (match_glob_n(g + gi, ge - gi, s + si, se - si, 0)) {
			gi = ge;
			si = se;
			continue;
		}
retry:
		if (star_g == SIZE_MAX)
			return false;
		/* The last "**" absorbs one more component; skip at once the
		 * components that cannot start the rest (first byte). */
		c0 = (unsigned char)g[star_g];
		do {
			while (star_s < sn && s[star_s] != '/')
				star_s++;
			while (star_s < sn && s[star_s] == '/')
				star_s++;
			if (star_s == sn)
				return false;
		} while (!path_is_magic(c0) && c0 != (unsigned char)s[star_s]);
		gi = star_g;
		si = star_s;
	}
}

bool match_path_norm(const char *g, size_t gn, const char *s, size_t sn)
{
	if ((gn > 0 && g[0] == '/') != (sn > 0 && s[0] == '/'))
		return false;
	return path_walk(g, gn, s, sn, 0, 0, MATCH_COMPS_ALL);
}

bool match_path(const char *glob, const char *path)
{
	char buf[MATCH_PATH_MAX];
	size_t n;

	if (!glob || !path)
		return false;
	n = strlen(path);
	if (match_path_needs_normalize(path, n)) {
		n = match_path_normalize(path, n, buf, sizeof(buf));
		if (n == (size_t)-1)
			return false;
		path = buf;
	}
	return match_path_norm(glob, strlen(glob), path, n);
}

/* Length of the common prefix of a and b within n bytes, a word at a time
 * (this is the reject of most rules, so it is worth it). */
static size_t path_common(const char *a, const char *b, size_t n)
{
	size_t i = 0;

	while (i + 8 <= n) {
		uint64_t x, y;

		memcpy(&x, a + i, 8);
		memcpy(&y, b + i, 8);
		if (x != y) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
			return i + (size_t)__builtin_ctzll(x ^ y) / 8;
#else
			return i + (size_t)__builtin_clzll(x ^ y) / 8;
#endif
		}
		i += 8;
	}
	while (i < n && a[i] == b[i])
		i++;
	return i;
}

bool match_path_pattern(const struct rules_policy *p, const struct rules_pattern *pat,
			const char *path, size_t plen, uint64_t comps)
{
	const char *text;
	size_t pl = pat->prefix_len;

	if (!match_path_may(pat, comps))
		return false;
	text = rules_string(p, pat->text);
	if (pl > 0) {
		size_t i = path_common(text, path, pl < plen ? pl : plen);

		if (i == pl) {
			/* Equal bytes up to the prefix's last '/': the components
			 * before it are equal, start the walk there. */
			const char *slash = text[pl - 1] == '/' ? text + pl - 1 : memrchr(text, '/', pl);

			if (slash) {
				size_t k = (size_t)(slash - text);
				return path_walk(text, k + strlen(text + k), path, plen, k, k, comps);
			}
		} else if (!(text[i] == '/' && (i == plen || (i > 0 && text[i - 1] == '/')))) {
			/* The literal prefix disagrees with the path.  That
			 * decides, except where the pattern's separators differ
			 * from the normalized path's: a doubled '/' in the
			 * pattern, or the path ending where the pattern has '/'
			 * (a trailing "**" component matches the directory
			 * itself). */
			return false;
		}
	}
	if ((text[0] == '/') != (plen > 0 && path[0] == '/'))
		return false;
	return path_walk(text, strlen(text), path, plen, 0, 0, comps);
}
