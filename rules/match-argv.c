/* exec patterns: element 0 is the program, the rest match argv[1..].
 *
 * The program is the subject's identity (rules/decide.c): a path and a
 * name, and the argument that names it (m->arg0: 0, or the script an
 * interpreter runs).  Each '|' alternative of element 0 is a path glob
 * against the full executable when it contains '/', else a plain glob
 * against its base name, so "python|/opt/py/bin/python3" mixes both.
 *
 * Elements 1..: "*" exactly one argument, "**" any number (zero
 * included, several allowed anywhere), anything else match_alternatives.
 * The whole argv must be consumed.  A pattern with a "script" shape
 * matches only when match_script() says the shell's command string has
 * it, after the argv matched (the parse is the dear part).  "**" uses the same single retry
 * point as the globs (each "**" can absorb anything, so only the latest
 * one ever needs to give more), which keeps the work at
 * O(elements * arguments). */
#include <stdint.h>
#include <string.h>

#include "rules/match-internal.h"
#include "rules/rules.h"

static const char *argv_elem(const struct rules_policy *p, uint32_t i)
{
	const rules_str *strs = (const rules_str *)((const char *)p + p->strs_off);
	return rules_string(p, strs[i]);
}

static bool argv_is_magic(unsigned char c)
{
	return c == '*' || c == '?' || c == '[' || c == '\\';
}

/* Bytes that need a look while splitting element 0 into alternatives
 * (immutable table: no state shared between callers). */
static const bool argv_stop[256] = {
	['\0'] = true, ['|'] = true, ['\\'] = true, ['/'] = true,
};

/* Element 0 against the program, in one pass over the alternatives.  It
 * runs for every exec rule, so a base-name alternative whose first byte
 * is literal and differs is settled without the glob. */
static bool argv_program(const char *pattern, const struct match_subject *m)
{
	const char *alt = pattern;

	if (!m->path)
		return false;
	for (;;) {
		const char *q = alt;
		bool slash = false, hit;

		for (;;) {
			while (!argv_stop[(unsigned char)*q])
				q++;
			if (*q == '/')
				slash = true;
			else if (*q == '\\' && q[1])
				q++;
			else
				break; /* '|' or the end */
			q++;
		}
		if (slash)
			hit = match_path_norm(alt, (size_t)(q - alt), m->path, m->path_len);
		else if (q > alt && !argv_is_magic((unsigned char)*alt) &&
			 (m->base_len == 0 || *alt != *m->base))
			hit = false;
		else
			hit = match_glob_n(alt, (size_t)(q - alt), m->base, m->base_len, 0);
		if (hit)
			return true;
		if (!*q)
			return false;
		alt = q + 1;
	}
}

static bool argv_is(const char *e, const char *what)
{
	return strcmp(e, what) == 0;
}

bool match_argv(const struct rules_policy *p, const struct rules_pattern *pat,
		const struct match_subject *m)
{
	const struct rules_event *ev = m->ev;
	uint32_t pi = 1, pn = pat->argv_count;
	size_t ai = m->arg0 + 1, an = ev->argc;
	uint32_t star_p = UINT32_MAX;
	size_t star_a = 0;

	if (pn == 0 || !argv_program(argv_elem(p, pat->argv_first), m))
		return false;
	if (an < ai || !ev->argv)
		an = ai; /* no arguments at all: argv[1..] is empty */
	for (;;) {
		const char *e, *a;

		if (pi == pn) {
			if (ai == an)
				return pat->script == RULES_SCRIPT_NONE || match_script(p, pat, m);
			goto retry;
		}
		e = argv_elem(p, pat->argv_first + pi);
		if (argv_is(e, "**")) {
			star_p = ++pi;
			star_a = ai;
			continue;
		}
		if (ai == an)
			return false; /* see match_path_norm: giving back cannot help */
		a = ev->argv[ai] ? ev->argv[ai] : "";
		if (argv_is(e, "*") || match_alternatives_n(e, strlen(e), a, strlen(a))) {
			pi++;
			ai++;
			continue;
		}
retry:
		if (star_p == UINT32_MAX || star_a == an)
			return false;
		pi = star_p;
		ai = ++star_a;
	}
}
