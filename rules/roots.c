/* The directories on the way to what a write rule admits (rules.h,
 * rules_write_root_ancestor). */
#include <string.h>

#include "rules/match-internal.h"
#include "rules/rules.h"

/* True when directory PATH (N bytes, absolute, normalized) lies on the way
 * to a path glob GLOB matches: its components match GLOB's first ones,
 * and GLOB has more.  A "**" on the way matches anything below. */
static bool roots_on_the_way(const char *glob, const char *path, size_t n)
{
	const char *g = glob + 1, *p = path + 1, *pend = path + n;

	if (n == 1)
		return glob[1] != '\0'; /* "/" is on the way to all but itself */
	for (;;) {
		const char *gc = strchr(g, '/'), *pc = memchr(p, '/', (size_t)(pend - p));
		size_t gl = gc ? (size_t)(gc - g) : strlen(g);
		size_t pl = pc ? (size_t)(pc - p) : (size_t)(pend - p);

		if (gl == 2 && g[0] == '*' && g[1] == '*')
			return true;
		if (!match_glob_n(g, gl, p, pl, 0))
			return false;
		if (!pc)
			return gc != NULL; /* PATH ends here: GLOB must go on */
		if (!gc)
			return false;     /* GLOB ends first: PATH is beneath it */
		g = gc + 1;
		p = pc + 1;
	}
}

bool rules_write_root_ancestor(const struct rules_policy *p, const char *path)
{
	static const enum rules_action actions[] = { RULES_ACTION_ALLOW, RULES_ACTION_ALERT };
	size_t n;

	if (!p || !path || path[0] != '/')
		return false;
	n = strlen(path);
	while (n > 1 && path[n - 1] == '/')
		n--;
	for (size_t a = 0; a < sizeof(actions) / sizeof(actions[0]); a++) {
		const struct rules_span *sp = &p->span[RULES_KIND_WRITE][actions[a]];

		for (uint32_t i = 0; i < sp->count; i++) {
			const struct rules_rule *r = rules_rule_at(p, sp->first + i);
			const char *text = rules_string(p, r->pat.text);
			size_t lit = r->pat.prefix_len < n ? r->pat.prefix_len : n;

			/* The literal prefix settles most rules at once. */
			if (text[0] == '/' && memcmp(text, path, lit) == 0 &&
			    roots_on_the_way(text, path, n))
				return true;
		}
	}
	return false;
}
