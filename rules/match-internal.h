/* Internals of librules-match.a shared between match-*.c, decide.c and
 * check.c.  Everything here follows the rules of rules.h: no allocation,
 * no locks, no mutable globals, no stdio (the library lives inside
 * untrusted processes through the preload shim). */
#ifndef AGENTTRACE_MATCH_INTERNAL_H
#define AGENTTRACE_MATCH_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rules/rules.h"

/* Fold ASCII letters only: tolower() depends on the traced program's
 * locale, and host names are ASCII (IDNA) anyway. */
#define MATCH_CASEFOLD 1u

/* The largest path a matcher normalizes (PATH_MAX including the NUL). */
#define MATCH_PATH_MAX 4096

/* Length-bounded glob over bytes: "*" any run (also '/'), "?" one byte,
 * "[...]" with "!"/"^" negation and ranges, "\x" the byte x. */
bool match_glob_n(const char *glob, size_t glen, const char *s, size_t slen, unsigned flags);

/* One argv element pattern of glen bytes: alternatives split on unescaped
 * '|', each a match_glob_n(). */
bool match_alternatives_n(const char *pattern, size_t plen, const char *s, size_t slen);

/* True when the pattern bytes hold a glob or escape character. */
bool match_glob_has_magic(const char *s, size_t n);

/* Lexical normalization of a path into out (size bytes): "//" collapsed,
 * "." dropped, ".." pops a component ("/.." is "/"), trailing '/'
 * dropped.  Returns the length, or (size_t)-1 when it does not fit.
 * The result needs no further normalization. */
size_t match_path_normalize(const char *path, size_t len, char *out, size_t size);
/* True when path (len bytes) is not already in normalized form. */
bool match_path_needs_normalize(const char *path, size_t len);
/* A 64-bit summary of the path's components (one bit per first byte and
 * length), computed once per decision: a literal component that follows
 * a "**" in a pattern and has no bit here cannot match anywhere, so most
 * deny rules of the "${ROOT}, any depth, .git/hooks" shape are rejected
 * without a walk.  MATCH_COMPS_ALL disables the filter. */
#define MATCH_COMPS_ALL (~(uint64_t)0)
uint64_t match_path_comps(const char *path, size_t len);
/* The same summary of a path glob's literal components (those without a
 * glob or escape character, "**" aside): the bits every path it matches
 * has.  Kept in the compiled pattern (rules.h, rules_pattern need). */
uint64_t match_path_need(const char *glob);
/* Whether a path whose summary is COMPS may match PAT: it has every one
 * of the pattern's literal components.  Asked before anything else of a
 * file rule, inline, since it rejects most rules of most decisions. */
static inline bool match_path_may(const struct rules_pattern *pat, uint64_t comps)
{
	return !(pat->need & ~comps);
}
/* Both of the above in one pass over the path (a decision on a file needs
 * both): the components' summary, and in *needs_normalize whether
 * match_path_needs_normalize() holds.  The summary is the path's as it
 * stands: when it needs normalizing, take the normalized path's. */
uint64_t match_path_scan(const char *path, size_t len, bool *needs_normalize);
/* match_path() over an already normalized path. */
bool match_path_norm(const char *glob, size_t glen, const char *path, size_t plen);
/* A write/read pattern against a normalized path, with the literal-prefix
 * reject first. */
bool match_path_pattern(const struct rules_policy *p, const struct rules_pattern *pat,
			const char *path, size_t plen, uint64_t comps);

/* The event, prepared once per decision so that no rule repeats the work. */
struct match_subject {
	const struct rules_event *ev;
	/* write/read: ev->path; exec: ev->exe; net: a named unix socket path.
	 * Normalized; NULL when the event has none (or it is too long to
	 * normalize), and then no path pattern matches. */
	const char *path;
	size_t path_len;
	uint64_t comps;       /* match_path_comps(path) */
	/* exec: the name of the program (the base name of path, or another
	 * name of one identity: rules.h, struct rules_event), and the argv
	 * element that names it: a pattern's elements 1.. match
	 * argv[arg0 + 1..]. */
	const char *base;
	size_t base_len;
	size_t arg0;
	/* net: ev->host without one trailing dot; NULL when unknown. */
	const char *host;
	size_t host_len;
};

/* Whether rule R of kind K matches M: its pattern, and none of its
 * "unless" patterns. */
bool match_rule(const struct rules_policy *p, enum rules_kind k, const struct rules_rule *r,
		const struct match_subject *m);

/* buf (MATCH_PATH_MAX bytes) holds the normalized path when one is needed;
 * it must outlive the subject. */
void match_subject_init(struct match_subject *m, const struct rules_event *ev, char *buf);

bool match_argv(const struct rules_policy *p, const struct rules_pattern *pat,
		const struct match_subject *m);
bool match_net(const struct rules_policy *p, const struct rules_pattern *pat,
	       const struct match_subject *m);
/* The "script" condition of an exec pattern whose argv matched
 * (match-script.c). */
bool match_script(const struct rules_policy *p, const struct rules_pattern *pat,
		  const struct match_subject *m);

/* One pattern of a rule of kind k (the rule's own or an "unless" one). */
bool match_pattern(const struct rules_policy *p, enum rules_kind k,
		   const struct rules_pattern *pat, const struct match_subject *m);

#endif
