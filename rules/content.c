/* Rules that judge content (rules.h): their names, and the directories on
 * the way to what they name. */
#include <string.h>

#include "rules/match-internal.h"
#include "rules/rules.h"

const char *rules_content_name(enum rules_content c)
{
	switch (c) {
	case RULES_CONTENT_GIT_CONFIG:
		return "git-config";
	default:
		return NULL;
	}
}

/* The components of GLOB from START on, as one path that they match,
 * appended to OUT (N bytes used of MATCH_PATH_MAX): "**" as no component
 * (a last one as "x": the tail names something beneath what comes
 * before it, never that directory itself, which a rule may except), "*"
 * as nothing (an empty component as "x"), "?" as "x", "\c" as c.  False
 * when it does not fit or holds a character class. */
static bool content_tail(const char *start, char *out, size_t *n)
{
	const char *g = start;

	while (*g) {
		const char *end = strchr(g, '/');
		size_t len = end ? (size_t)(end - g) : strlen(g);
		size_t before = *n;
		bool ss = len == 2 && g[0] == '*' && g[1] == '*';

		if (ss && !end) {
			if (*n + 2 >= MATCH_PATH_MAX)
				return false;
			out[(*n)++] = '/';
			out[(*n)++] = 'x';
		} else if (!ss) {
			if (*n + 1 >= MATCH_PATH_MAX)
				return false;
			out[(*n)++] = '/';
			before = *n;
			for (size_t i = 0; i < len; i++) {
				char c = g[i];

				if (c == '[')
					return false;
				if (c == '*')
					continue;
				if (c == '?')
					c = 'x';
				else if (c == '\\' && i + 1 < len)
					c = g[++i];
				if (*n + 1 >= MATCH_PATH_MAX)
					return false;
				out[(*n)++] = c;
			}
			if (*n == before) {
				if (*n + 1 >= MATCH_PATH_MAX)
					return false;
				out[(*n)++] = 'x';
			}
		}
		g = end ? end + 1 : g + len;
	}
	out[*n] = '\0';
	return true;
}

/* Whether rule R (a path rule) matches a path beneath PATH (N bytes) made
 * of its pattern's last components.  Only tails that leave PATH below
 * the pattern's first "**" and the component after it count: any
 * directory under ${ROOT} can hold a .git, but renaming it moves no
 * judged file that is not already judged where it lands. */
enum content_how {
	CONTENT_ON_THE_WAY,  /* tails after the first "**" and its next component */
	CONTENT_NAMED,       /* ... whose component before is PATH's own name */
	CONTENT_REACH,       /* every tail after the first "**" */
};

static bool content_beneath(const struct rules_policy *p, enum rules_kind kind,
			    const struct rules_rule *r, const char *path, size_t n,
			    enum content_how how)
{
	bool named = how == CONTENT_NAMED;
	const char *base = memrchr(path, '/', n);
	size_t base_len;
	const char *text = rules_string(p, r->pat.text);
	const char *comp[256];
	size_t n_comp = 0, first = 0, first_ss = (size_t)-1;

	if (text[0] != '/')
		return false;
	for (const char *g = text + 1; *g;) {
		const char *end = strchr(g, '/');
		size_t len = end ? (size_t)(end - g) : strlen(g);

		if (n_comp == sizeof(comp) / sizeof(comp[0]))
			return false;
		comp[n_comp] = g;
		if (first_ss == (size_t)-1 && len == 2 && g[0] == '*' && g[1] == '*')
			first_ss = n_comp;
		n_comp++;
		if (!end)
			break;
		g = end + 1;
	}
	/* The candidate PATH must cover at least the first component after
	 * the first "**" (without one: at least one component). */
	first = first_ss == (size_t)-1 ? 1 : first_ss + (how == CONTENT_REACH ? 1 : 2);
	base = base ? base + 1 : path;
	base_len = n - (size_t)(base - path);
	for (size_t j = n_comp; j-- > first;) {
		/* NAMED: the component before the tail is PATH's own name. */
		if (named) {
			const char *c0 = comp[j - 1];
			const char *e0 = strchr(c0, '/');
			size_t l0 = e0 ? (size_t)(e0 - c0) : strlen(c0);

			if (l0 != base_len || memcmp(c0, base, l0) != 0 ||
			    match_glob_has_magic(c0, l0))
				continue;
		}
		char cand[MATCH_PATH_MAX], buf[MATCH_PATH_MAX];
		struct rules_event ev = { .kind = kind };
		struct match_subject m;
		size_t cn = n;

		if (n >= sizeof(cand))
			return false;
		memcpy(cand, path, n);
		if (!content_tail(comp[j], cand, &cn))
			continue;
		ev.path = cand;
		match_subject_init(&m, &ev, buf);
		if (match_rule(p, kind, r, &m))
			return true;
	}
	return false;
}

/* The bytes of directory PATH (absolute) a tail is joined to: without
 * trailing slashes, none for "/" (the tail starts with its own '/'). */
static size_t content_dir_len(const char *path)
{
	size_t n = strlen(path);

	while (n > 1 && path[n - 1] == '/')
		n--;
	return n == 1 ? 0 : n;
}

static const struct rules_rule *content_find(const struct rules_policy *p, const char *path,
					     enum content_how how, bool any_deny)
{
	const struct rules_span *sp;
	size_t n;

	if (!p || !path || path[0] != '/')
		return NULL;
	n = content_dir_len(path);
	sp = &p->span[RULES_KIND_WRITE][RULES_ACTION_DENY];
	for (uint32_t i = 0; i < sp->count; i++) {
		const struct rules_rule *r = rules_rule_at(p, sp->first + i);

		if ((any_deny || r->content) &&
		    content_beneath(p, RULES_KIND_WRITE, r, path, n, how))
			return r;
	}
	return NULL;
}

const struct rules_rule *rules_content_on_the_way(const struct rules_policy *p, const char *path,
						  bool named)
{
	return content_find(p, path, named ? CONTENT_NAMED : CONTENT_ON_THE_WAY, false);
}

const struct rules_rule *rules_content_reach(const struct rules_policy *p, const char *path)
{
	return content_find(p, path, CONTENT_REACH, false);
}

const struct rules_rule *rules_deny_reach(const struct rules_policy *p, const char *path)
{
	return content_find(p, path, CONTENT_REACH, true);
}

const struct rules_rule *rules_deny_on_the_way(const struct rules_policy *p, const char *path)
{
	return content_find(p, path, CONTENT_NAMED, true);
}

const struct rules_rule *rules_deny_names(const struct rules_policy *p, const char *path,
					  bool content)
{
	const struct rules_span *sp = &p->span[RULES_KIND_WRITE][RULES_ACTION_DENY];
	const struct rules_pattern *pats =
		(const struct rules_pattern *)((const char *)p + p->patterns_off);

	for (uint32_t i = 0; i < sp->count; i++) {
		const struct rules_rule *r = rules_rule_at(p, sp->first + i);
		bool own_exception = false;

		if ((content && !r->content) || !match_path(rules_string(p, r->pat.text), path))
			continue;
		for (uint32_t u = 0; u < r->unless_own && !own_exception; u++)
			own_exception = match_path(rules_string(p, pats[r->unless_first + u].text), path);
		if (!own_exception)
			return r;
	}
	return NULL;
}

/* Whether read rule R could name something beneath PATH (N bytes): its
 * literal start (the directories before its first glob) lies at or
 * beneath PATH, or a tail after its first "**" does (content_beneath()). */
static bool content_read_beneath(const struct rules_policy *p, const struct rules_rule *r,
				 const char *path, size_t n)
{
	const char *text = rules_string(p, r->pat.text);
	size_t start = r->pat.prefix_len;

	while (start > 0 && text[start] != '/')
		start--;
	if (start >= n && strncmp(text, path, n) == 0 && (text[n] == '/' || n == 0))
		return true;
	return content_beneath(p, RULES_KIND_READ, r, path, n, CONTENT_REACH);
}

const struct rules_rule *rules_read_alert_reach(const struct rules_policy *p, const char *path)
{
	const struct rules_span *sp = &p->span[RULES_KIND_READ][RULES_ACTION_ALERT];
	size_t n;

	if (!path || path[0] != '/')
		return NULL;
	n = content_dir_len(path);
	for (uint32_t i = 0; i < sp->count; i++) {
		const struct rules_rule *r = rules_rule_at(p, sp->first + i);

		if (content_read_beneath(p, r, path, n))
			return r;
	}
	return NULL;
}

const struct rules_rule *rules_read_hidden(const struct rules_policy *p, const char *from,
					   const char *to)
{
	const struct rules_span *sp = &p->span[RULES_KIND_READ][RULES_ACTION_DENY];
	size_t nf = strlen(from), nt = strlen(to);

	if (from[0] != '/' || to[0] != '/')
		return NULL;
	for (uint32_t i = 0; i < sp->count; i++) {
		const struct rules_rule *r = rules_rule_at(p, sp->first + i);

		if (content_read_beneath(p, r, from, nf) && !content_read_beneath(p, r, to, nt))
			return r;
	}
	return NULL;
}
