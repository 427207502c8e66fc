/* Test-only builder of compiled policy blocks (see blockbuild.h).
 * Layout: header | rules[] | patterns[] | strs[] | string bytes. */
#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "rules/match-internal.h"
#include "tests/unit/blockbuild.h"

struct bb {
	char *blk;
	size_t size;
	size_t cap;
	uint32_t n_strs;       /* next free slot in strs[] */
	uint32_t n_patterns;   /* next free slot in patterns[] */
};

static void bb_fail(const char *what, const char *pattern)
{
	fprintf(stderr, "blockbuild: %s: \"%s\"\n", what, pattern ? pattern : "(null)");
	abort();
}

static struct rules_policy *bb_hdr(struct bb *b)
{
	return (struct rules_policy *)b->blk;
}

static rules_str bb_str(struct bb *b, const char *s, size_t n)
{
	size_t off = b->size;

	if (b->size + n + 1 > b->cap) {
		while (b->size + n + 1 > b->cap)
			b->cap *= 2;
		b->blk = realloc(b->blk, b->cap);
		if (!b->blk)
			abort();
	}
	memcpy(b->blk + off, s, n);
	b->blk[off + n] = '\0';
	b->size += n + 1;
	return (rules_str)off;
}

static rules_str bb_cstr(struct bb *b, const char *s)
{
	return s ? bb_str(b, s, strlen(s)) : 0;
}

static rules_str *bb_strs(struct bb *b)
{
	return (rules_str *)(b->blk + bb_hdr(b)->strs_off);
}

static uint16_t bb_port(const char *s, const char *pattern)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (end == s || v < 0 || v > 65535)
		bb_fail("bad port", pattern);
	return (uint16_t)v;
}

/* ":443" or ":1000-2000" into lo/hi. */
static void bb_ports(const char *s, struct rules_pattern *pat, const char *pattern)
{
	const char *dash = strchr(s, '-');

	pat->port_lo = bb_port(s, pattern);
	pat->port_hi = dash ? bb_port(dash + 1, pattern) : pat->port_lo;
}

static void bb_net(struct bb *b, const char *pattern, struct rules_pattern *pat)
{
	char addr[256];
	const char *port = NULL, *slash;
	size_t n;

	pat->port_lo = 0;
	pat->port_hi = 65535;
	if (strcmp(pattern, "session") == 0) {
		pat->net_type = RULES_NET_SESSION;
		return;
	}
	if (strncmp(pattern, "bind:", 5) == 0) {
		bb_net(b, pattern + 5, pat);
		pat->bind = 1;
		return;
	}
	if (strncmp(pattern, "unix:@", 6) == 0) {
		pat->net_type = RULES_NET_UNIX_ABSTRACT;
		pat->text = bb_cstr(b, pattern + 6);
		return;
	}
	if (strncmp(pattern, "unix:", 5) == 0) {
		pat->net_type = RULES_NET_UNIX_PATH;
		pat->text = bb_cstr(b, pattern + 5);
		return;
	}
	if (pattern[0] == '[') {
		const char *close = strchr(pattern, ']');
		if (!close)
			bb_fail("unclosed [", pattern);
		n = (size_t)(close - pattern - 1);
		memcpy(addr, pattern + 1, n);
		addr[n] = '\0';
		/* "[v6]/64:443": the prefix follows the bracket */
		if (close[1] == '/') {
			size_t len = strlen(addr);
			const char *colon = strchr(close + 1, ':');
			size_t pn = colon ? (size_t)(colon - close - 1) : strlen(close + 1);
			memcpy(addr + len, close + 1, pn);
			addr[len + pn] = '\0';
			port = colon ? colon + 1 : NULL;
		} else if (close[1] == ':')
			port = close + 2;
	} else if (strchr(pattern, ':') != strrchr(pattern, ':')) {
		snprintf(addr, sizeof(addr), "%s", pattern); /* bare IPv6, no port */
	} else {
		const char *colon = strchr(pattern, ':');
		n = colon ? (size_t)(colon - pattern) : strlen(pattern);
		if (n >= sizeof(addr))
			bb_fail("too long", pattern);
		memcpy(addr, pattern, n);
		addr[n] = '\0';
		port = colon ? colon + 1 : NULL;
	}
	if (port)
		bb_ports(port, pat, pattern);
	if (strcmp(addr, "*") == 0) {
		pat->net_type = RULES_NET_ANY;
		return;
	}
	slash = strchr(addr, '/');
	{
		char host[256];
		int bits = -1;

		snprintf(host, sizeof(host), "%.*s", (int)(slash ? (size_t)(slash - addr) : strlen(addr)), addr);
		if (slash)
			bits = atoi(slash + 1);
		if (inet_pton(AF_INET, host, pat->addr) == 1) {
			pat->net_type = RULES_NET_IP;
			pat->family = AF_INET;
			pat->prefix = (uint8_t)(bits < 0 ? 32 : bits);
			return;
		}
		if (inet_pton(AF_INET6, host, pat->addr) == 1) {
			pat->net_type = RULES_NET_IP;
			pat->family = AF_INET6;
			pat->prefix = (uint8_t)(bits < 0 ? 128 : bits);
			return;
		}
		if (slash)
			bb_fail("bad CIDR", pattern);
		pat->net_type = RULES_NET_HOST;
		pat->text = bb_cstr(b, host);
	}
}

/* Fill *pat (at offset pat_off: the block may move while strings are
 * appended, so it is addressed by offset). */
static void bb_pattern(struct bb *b, enum rules_kind kind, size_t pat_off, const char *pattern)
{
	struct rules_pattern tmp;

	memset(&tmp, 0, sizeof(tmp));
	switch (kind) {
	case RULES_KIND_WRITE:
	case RULES_KIND_READ:
		tmp.text = bb_cstr(b, pattern);
		tmp.prefix_len = (uint32_t)strcspn(pattern, "*?[\\");
		tmp.need = match_path_need(pattern);
		break;
	case RULES_KIND_EXEC: {
		const char *s = pattern;

		tmp.argv_first = b->n_strs;
		for (;;) {
			const char *sp = strchr(s, ' ');
			size_t n = sp ? (size_t)(sp - s) : strlen(s);
			rules_str str = bb_str(b, s, n);

			bb_strs(b)[b->n_strs++] = str;
			tmp.argv_count++;
			if (!sp)
				break;
			s = sp + 1;
		}
		break;
	}
	case RULES_KIND_NET:
		bb_net(b, pattern, &tmp);
		break;
	default:
		bb_fail("bad kind", pattern);
	}
	memcpy(b->blk + pat_off, &tmp, sizeof(tmp));
}

static size_t bb_elems(const char *pattern)
{
	size_t n = 1;
	for (const char *s = pattern; *s; s++)
		n += *s == ' ';
	return n;
}

struct rules_policy *bb_build(const struct bb_policy *def, size_t *size_out)
{
	static const char *const fallback_id[RULES_KIND_COUNT] = {
		"exec.not-allowed", "write.fallback", "read.fallback", "net.fallback",
	};
	struct bb b;
	size_t n_rules = def->n_rules + RULES_KIND_COUNT + RULES_NET_FALLBACKS, n_patterns = 0,
	       n_strs = def->n_env_drop;
	size_t off;
	uint32_t ri = 0;
	bool exec_allow = false;

	for (size_t i = 0; i < def->n_rules; i++) {
		const struct bb_rule *r = &def->rules[i];

		if (r->kind == RULES_KIND_EXEC) {
			n_strs += bb_elems(r->pattern);
			exec_allow |= r->action == RULES_ACTION_ALLOW;
		}
		for (size_t u = 0; u < BB_MAX_UNLESS && r->unless[u]; u++) {
			n_patterns++;
			if (r->kind == RULES_KIND_EXEC)
				n_strs += bb_elems(r->unless[u]);
		}
	}

	memset(&b, 0, sizeof(b));
	off = sizeof(struct rules_policy);
	b.cap = 4096;
	{
		size_t rules_off = (off + 7) & ~(size_t)7;
		size_t pat_off = rules_off + n_rules * sizeof(struct rules_rule);
		size_t strs_off = pat_off + n_patterns * sizeof(struct rules_pattern);

		b.size = strs_off + n_strs * sizeof(rules_str);
		while (b.cap < b.size + 1)
			b.cap *= 2;
		b.blk = calloc(1, b.cap);
		if (!b.blk)
			abort();
		bb_hdr(&b)->rules_off = (uint32_t)rules_off;
		bb_hdr(&b)->rules_count = (uint32_t)n_rules;
		bb_hdr(&b)->patterns_off = (uint32_t)pat_off;
		bb_hdr(&b)->patterns_count = (uint32_t)n_patterns;
		bb_hdr(&b)->strs_off = (uint32_t)strs_off;
		bb_hdr(&b)->strs_count = (uint32_t)n_strs;
	}
	bb_hdr(&b)->magic = RULES_MAGIC;
	bb_hdr(&b)->version = RULES_VERSION;
	bb_hdr(&b)->mode = (uint8_t)def->mode;
	{
		rules_str name = bb_cstr(&b, def->name ? def->name : "test");
		bb_hdr(&b)->name = name;
		bb_hdr(&b)->layers = name;
	}

	/* Rules grouped by kind and action, in the order given. */
	for (unsigned k = 0; k < RULES_KIND_COUNT; k++) {
		for (unsigned a = 0; a < RULES_ACTION_COUNT; a++) {
			bb_hdr(&b)->span[k][a].first = ri;
			for (size_t i = 0; i < def->n_rules; i++) {
				const struct bb_rule *r = &def->rules[i];
				size_t roff = bb_hdr(&b)->rules_off + ri * sizeof(struct rules_rule);
				struct rules_rule tmp;
				char id[64];

				if (r->kind != k || r->action != a)
					continue;
				memset(&tmp, 0, sizeof(tmp));
				tmp.kind = (uint8_t)k;
				tmp.action = (uint8_t)a;
				snprintf(id, sizeof(id), "%s.%zu", rules_kind_name(k), i);
				tmp.id = bb_cstr(&b, r->id ? r->id : id);
				tmp.source = bb_cstr(&b, r->pattern);
				tmp.origin = bb_cstr(&b, "<test>");
				tmp.unless_first = b.n_patterns;
				memcpy(b.blk + roff, &tmp, sizeof(tmp));
				bb_pattern(&b, k, roff + offsetof(struct rules_rule, pat), r->pattern);
				for (size_t u = 0; u < BB_MAX_UNLESS && r->unless[u]; u++) {
					size_t poff = bb_hdr(&b)->patterns_off +
						      b.n_patterns * sizeof(struct rules_pattern);
					b.n_patterns++;
					bb_pattern(&b, k, poff, r->unless[u]);
					((struct rules_rule *)(b.blk + roff))->unless_count++;
				}
				ri++;
				bb_hdr(&b)->span[k][a].count++;
			}
		}
	}
	for (unsigned k = 0; k < RULES_KIND_COUNT; k++) {
		struct rules_rule *r;
		rules_str id = bb_cstr(&b, fallback_id[k]);
		rules_str why = bb_cstr(&b, "no rule matched");

		r = (struct rules_rule *)(b.blk + bb_hdr(&b)->rules_off) + ri;
		memset(r, 0, sizeof(*r));
		r->kind = (uint8_t)k;
		r->id = id;
		r->why = why;
		switch (k) {
		case RULES_KIND_EXEC:
			r->action = exec_allow ? RULES_ACTION_DENY : RULES_ACTION_ALLOW;
			break;
		case RULES_KIND_READ:
			r->action = RULES_ACTION_ALLOW;
			break;
		default:
			r->action = RULES_ACTION_DENY;
			break;
		}
		bb_hdr(&b)->fallback[k] = ri++;
	}
	for (unsigned i = 0; i < RULES_NET_FALLBACKS; i++) {
		static const char *const net_id[RULES_NET_FALLBACKS] = {
			"net.local-outside", "net.inbound", "net.bind-loopback",
		};
		rules_str id = bb_cstr(&b, net_id[i]);
		struct rules_rule *r = (struct rules_rule *)(b.blk + bb_hdr(&b)->rules_off) + ri;

		memset(r, 0, sizeof(*r));
		r->kind = RULES_KIND_NET;
		r->id = id;
		r->action = i == RULES_NET_FB_BIND_LOOPBACK ? RULES_ACTION_ALLOW : RULES_ACTION_DENY;
		bb_hdr(&b)->fallback_net[i] = ri++;
	}
	bb_hdr(&b)->env_drop_first = b.n_strs;
	bb_hdr(&b)->env_drop_count = (uint32_t)def->n_env_drop;
	for (size_t i = 0; i < def->n_env_drop; i++) {
		rules_str s = bb_cstr(&b, def->env_drop[i]);
		bb_strs(&b)[b.n_strs++] = s;
	}
	bb_hdr(&b)->size = (uint32_t)b.size;
	if (size_out)
		*size_out = b.size;
	return (struct rules_policy *)b.blk;
}

struct rules_policy *bb_one(enum rules_kind kind, const char *pattern)
{
	struct bb_rule r = { .kind = kind, .action = RULES_ACTION_ALLOW, .pattern = pattern, .id = "one" };
	struct bb_policy def = { .rules = &r, .n_rules = 1 };

	return bb_build(&def, NULL);
}
