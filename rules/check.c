/* Validation of a compiled block before anything reads it.
 *
 * The preload shim maps a block that the supervisor handed over; a bad
 * block must be refused here rather than make rules_decide() read out of
 * bounds.  After rules_policy_check() returns 0, every offset, index and
 * string that rules_decide(), rules_env_dropped() and the name helpers
 * follow lies inside the block and every string ends inside it.  Offsets
 * are checked in 64-bit arithmetic so that no sum can wrap. */
#include <errno.h>
#include <stdalign.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#include "rules/match-internal.h"
#include "rules/rules.h"

struct check_ctx {
	const char *blk;
	size_t size;
	const struct rules_policy *p;
};

/* An array of n elements of esize bytes at off, aligned for its type. */
static bool check_array(const struct check_ctx *c, uint64_t off, uint64_t n, uint64_t esize,
			size_t align)
{
	if (n == 0)
		return true;
	if (off % align != 0 || off < sizeof(struct rules_policy))
		return false;
	return off <= c->size && n <= (c->size - off) / esize;
}

/* 0 ("none") or a NUL-terminated string inside the block. */
static bool check_str(const struct check_ctx *c, rules_str s, bool required)
{
	if (s == 0)
		return !required;
	if (s >= c->size)
		return false;
	return memchr(c->blk + s, '\0', c->size - s) != NULL;
}

static bool check_str_index(const struct check_ctx *c, uint64_t first, uint64_t n)
{
	const rules_str *strs = (const rules_str *)(c->blk + c->p->strs_off);

	if (first > c->p->strs_count || n > c->p->strs_count - first)
		return false;
	for (uint64_t i = 0; i < n; i++)
		if (!check_str(c, strs[first + i], true))
			return false;
	return true;
}

static bool check_pattern(const struct check_ctx *c, enum rules_kind k,
			  const struct rules_pattern *pat)
{
	switch (k) {
	case RULES_KIND_WRITE:
	case RULES_KIND_READ: {
		const char *text;

		if (!check_str(c, pat->text, true))
			return false;
		text = c->blk + pat->text;
		/* The prefix reject is only sound over literal bytes, and
		 * the components' reject over the pattern's own literal
		 * components (fewer bits only reject less). */
		return pat->prefix_len <= strlen(text) &&
		       !match_glob_has_magic(text, pat->prefix_len) &&
		       !(pat->need & ~match_path_need(text));
	}
	case RULES_KIND_EXEC:
		return pat->argv_count > 0 && pat->script < RULES_SCRIPT_COUNT &&
		       check_str_index(c, pat->argv_first, pat->argv_count);
	case RULES_KIND_NET:
		if (pat->port_lo > pat->port_hi || pat->bind > 1)
			return false;
		switch (pat->net_type) {
		case RULES_NET_ANY:
		case RULES_NET_SESSION:
			return true;
		case RULES_NET_IP:
			return (pat->family == AF_INET && pat->prefix <= 32) ||
			       (pat->family == AF_INET6 && pat->prefix <= 128);
		case RULES_NET_HOST:
		case RULES_NET_UNIX_PATH:
		case RULES_NET_UNIX_ABSTRACT:
			return check_str(c, pat->text, true);
		default:
			return false;
		}
	default:
		return false;
	}
}

static bool check_rule(const struct check_ctx *c, const struct rules_rule *r)
{
	const struct rules_policy *p = c->p;
	const struct rules_pattern *pats = (const struct rules_pattern *)(c->blk + p->patterns_off);

	if (r->kind >= RULES_KIND_COUNT || r->action >= RULES_ACTION_COUNT)
		return false;
	if (!check_str(c, r->id, false) || !check_str(c, r->why, false) ||
	    !check_str(c, r->source, false) || !check_str(c, r->origin, false))
		return false;
	if (r->unless_first > p->patterns_count ||
	    r->unless_count > p->patterns_count - r->unless_first || r->unless_own > r->unless_count)
		return false;
	for (uint32_t i = 0; i < r->unless_count; i++)
		if (!check_pattern(c, r->kind, &pats[r->unless_first + i]))
			return false;
	if (r->under_first > p->patterns_count ||
	    r->under_count > p->patterns_count - r->under_first)
		return false;
	for (uint32_t i = 0; i < r->under_count; i++)
		if (!check_pattern(c, RULES_KIND_EXEC, &pats[r->under_first + i]))
			return false;
	return true;
}

int rules_policy_check(const void *blk, size_t size)
{
	const struct rules_policy *p = blk;
	struct check_ctx c;

	if (!blk || size < sizeof(*p) || (uintptr_t)blk % alignof(struct rules_policy) != 0)
		return -EINVAL;
	if (p->magic != RULES_MAGIC || p->version != RULES_VERSION)
		return -EINVAL;
	/* A mapping may be rounded up to pages; the block says how much of
	 * it is policy. */
	if (p->size < sizeof(*p) || p->size > size)
		return -EINVAL;
	c.blk = blk;
	c.size = p->size;
	c.p = p;
	if (p->mode > RULES_MODE_AUDIT || p->record > 1)
		return -EINVAL;
	if (!check_str(&c, p->name, false) || !check_str(&c, p->layers, false))
		return -EINVAL;
	if (!check_array(&c, p->rules_off, p->rules_count, sizeof(struct rules_rule),
			 alignof(struct rules_rule)) ||
	    !check_array(&c, p->patterns_off, p->patterns_count, sizeof(struct rules_pattern),
			 alignof(struct rules_pattern)) ||
	    !check_array(&c, p->strs_off, p->strs_count, sizeof(rules_str), alignof(rules_str)))
		return -EINVAL;
	for (uint32_t i = 0; i < p->rules_count; i++) {
		const struct rules_rule *r = rules_rule_at(p, i);

		if (!check_rule(&c, r))
			return -EINVAL;
	}
	/* Spans: inside the table, holding only their kind and action (the
	 * verdict reports the span's action), with patterns that can be
	 * matched.  The fallback rules are never matched, only reported: their
	 * patterns are not looked at. */
	for (unsigned k = 0; k < RULES_KIND_COUNT; k++) {
		const struct rules_rule *fb;

		for (unsigned a = 0; a < RULES_ACTION_COUNT; a++) {
			const struct rules_span *sp = &p->span[k][a];

			if (sp->first > p->rules_count || sp->count > p->rules_count - sp->first)
				return -EINVAL;
			for (uint32_t i = 0; i < sp->count; i++) {
				const struct rules_rule *r = rules_rule_at(p, sp->first + i);
				if (r->kind != k || r->action != a ||
				    !check_pattern(&c, k, &r->pat))
					return -EINVAL;
			}
		}
		if (p->fallback[k] >= p->rules_count)
			return -EINVAL;
		fb = rules_rule_at(p, p->fallback[k]);
		if (fb->kind != k)
			return -EINVAL;
	}
	for (unsigned i = 0; i < RULES_NET_FALLBACKS; i++)
		if (p->fallback_net[i] >= p->rules_count ||
		    rules_rule_at(p, p->fallback_net[i])->kind != RULES_KIND_NET)
			return -EINVAL;
	if (!check_str_index(&c, p->env_drop_first, p->env_drop_count))
		return -EINVAL;
	return 0;
}
