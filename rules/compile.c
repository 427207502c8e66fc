/* Validated layers (+ command-line extras) -> one compiled block:
 * variables expanded, patterns parsed and checked, lists merged in layer
 * order, ids generated and checked for duplicates, rules sorted by kind
 * then action (stable), fallbacks added.  Also runs the policy tests. */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "rules/linkscan.h"
#include "rules/load-internal.h"
#include "rules/match-internal.h"

#define KP_SIZE 256
#define MSG_SIZE 400
/* The block addresses itself with 32-bit offsets. */
#define BLOCK_MAX (1u << 30)

struct cpat {
	char *src;  /* the expanded pattern as written (net: with "unix:" etc.) */
	char *text;
	char **argv;
	size_t argc;
	uint8_t script; /* exec: enum rules_script */
	uint8_t net_type, family, prefix;
	bool bind;      /* net: "bind:..." */
	uint16_t port_lo, port_hi;
	uint8_t addr[16];
};

struct crule {
	uint8_t kind, action;
	uint8_t content; /* write deny: enum rules_content */
	bool from_extra; /* a command-line rule (struct rules_extra) */
	bool twin;       /* comp_twins() made it (rules_rule.twin) */
	char *id, *why, *source, *origin;
	struct cpat pat;
	struct cpat *unless;
	size_t n_unless;
	/* The first N_UNLESS_OWN are the rule's own; the rest, exemptions a
	 * later layer's "overrides" or a command-line allow added. */
	size_t n_unless_own;
	struct cpat *under;        /* exec patterns ("under") */
	size_t n_under;
	size_t layer_no;           /* index in ctx->layers; SIZE_MAX: the command line */
	/* An allow rule's "overrides" (the layer's JSON) and where it is. */
	const json_t *overrides;
	const struct load_layer *layer;
	char *kp;
};

struct cdrop {
	char *id, *pattern, *origin;
	const char *var;
};

/* One id as the policy gave or generated it, before expansion. */
struct cid {
	char *id;
	char *keypath;
	const struct load_layer *layer; /* NULL: command line */
	size_t seq;
};

struct comp {
	struct load_ctx *ctx;
	struct crule *rules;
	size_t n_rules, cap_rules;
	struct cdrop *drops;
	size_t n_drops, cap_drops;
	struct cid *ids;
	size_t n_ids, cap_ids;
	const char **env;
	size_t n_env, cap_env;
	size_t gen[RULES_KIND_COUNT][RULES_ACTION_COUNT];
	uint8_t mode, record;
	unsigned linkscan_budget; /* rules/linkscan.h */
	const char *name;
	struct rules_limits limits;
	size_t errors;
	bool oom;
	/* "overrides" of layers up to this index take effect (SIZE_MAX: all):
	 * a layer's tests run without the exemptions of later layers. */
	size_t overrides_upto;
	/* comp_realpath()'s directories resolved so far (round robin). */
	struct comp_dir {
		char *of;      /* NULL: free */
		char *real;    /* NULL: it does not resolve */
	} dirs[8];
	unsigned next_dir;
};

static const char *const kind_names[RULES_KIND_COUNT] = { "exec", "write", "read", "net" };
static const char *const action_names[RULES_ACTION_COUNT] = { "allow", "alert", "deny" };

/* Grow *v (of *cap elements of size sz) to hold n + 1. */
static bool grow(void *v, size_t *cap, size_t n, size_t sz)
{
	void **pv = v;
	size_t ncap;
	void *nv;

	if (n < *cap)
		return true;
	ncap = *cap ? *cap * 2 : 16;
	nv = realloc(*pv, ncap * sz);
	if (!nv)
		return false;
	*pv = nv;
	*cap = ncap;
	return true;
}

static void comp_error(struct comp *c, const struct load_layer *layer, const char *kp,
		       const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void comp_error(struct comp *c, const struct load_layer *layer, const char *kp,
		       const char *fmt, ...)
{
	char text[MSG_SIZE + 200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	c->errors++;
	if (layer) {
		error_at(c->ctx, layer, kp, false, "%s", text);
	} else {
		struct rules_error e;

		error_set(&e, "<command line>", 0, 0, "", "%s", text);
		error_push(&c->ctx->errs, &e);
	}
}

static void cpat_free(struct cpat *p)
{
	free(p->src);
	free(p->text);
	for (size_t i = 0; i < p->argc; i++)
		free(p->argv[i]);
	free(p->argv);
	memset(p, 0, sizeof(*p));
}

/* A deep copy without src (exceptions need none).  On failure dst is
 * still safe to cpat_free(). */
static int cpat_copy(struct cpat *d, const struct cpat *s)
{
	*d = *s;
	d->src = NULL;
	d->script = RULES_SCRIPT_NONE; /* an exception is a program glob */
	d->argv = NULL;
	d->argc = 0;
	d->text = s->text ? strdup(s->text) : NULL;
	if (s->text && !d->text)
		return -1;
	if (!s->argc)
		return 0;
	d->argv = calloc(s->argc, sizeof(char *));
	if (!d->argv)
		return -1;
	for (size_t a = 0; a < s->argc; a++) {
		d->argv[a] = strdup(s->argv[a]);
		if (!d->argv[a])
			return -1;
		d->argc = a + 1;
	}
	return 0;
}

static void crule_free(struct crule *r)
{
	free(r->id);
	free(r->why);
	free(r->source);
	free(r->origin);
	free(r->kp);
	cpat_free(&r->pat);
	for (size_t i = 0; i < r->n_unless; i++)
		cpat_free(&r->unless[i]);
	free(r->unless);
	for (size_t i = 0; i < r->n_under; i++)
		cpat_free(&r->under[i]);
	free(r->under);
}

static void comp_free(struct comp *c)
{
	for (size_t i = 0; i < c->n_rules; i++)
		crule_free(&c->rules[i]);
	free(c->rules);
	for (size_t i = 0; i < c->n_drops; i++) {
		free(c->drops[i].id);
		free(c->drops[i].pattern);
		free(c->drops[i].origin);
	}
	free(c->drops);
	for (size_t i = 0; i < c->n_ids; i++) {
		free(c->ids[i].id);
		free(c->ids[i].keypath);
	}
	free(c->ids);
	free(c->env);
	for (size_t i = 0; i < sizeof(c->dirs) / sizeof(c->dirs[0]); i++) {
		free(c->dirs[i].of);
		free(c->dirs[i].real);
	}
}

/* ---- pattern syntax ---- */

/* Bracket classes closed, escapes escaping something; in a path, a class
 * cannot span '/' and "**" must be a whole component. */
static const char *glob_problem(const char *s, bool path)
{
	const char *comp = s;

	for (size_t i = 0; s[i]; i++) {
		if (s[i] == '\\') {
			if (!s[i + 1])
				return "a trailing '\\' escapes nothing";
			i++;
			continue;
		}
		if (s[i] == '[') {
			size_t j = i + 1;

			if (s[j] == '!' || s[j] == '^')
				j++;
			if (s[j] == ']')
				j++;
			while (s[j] && s[j] != ']' && !(path && s[j] == '/')) {
				if (s[j] == '\\' && s[j + 1])
					j++;
				j++;
			}
			if (s[j] != ']')
				return "unbalanced '[' (write \"\\[\" for a literal '[')";
			i = j;
		}
	}
	if (!path)
		return NULL;
	while (*comp) {
		size_t n = strcspn(comp, "/");
		const char *stars = memmem(comp, n, "**", 2);

		if (stars && n != 2)
			return "'**' must be a whole path component";
		comp += n;
		if (*comp)
			comp++;
	}
	return NULL;
}

/* A write/read path glob: absolute after expansion, normalized. */
static int compile_path(char *s, char *msg)
{
	char orig[200];
	const char *why;

	if (s[0] != '/') {
		error_fmt(msg, MSG_SIZE, "path pattern \"%s\" must be absolute after expansion", s);
		return -1;
	}
	error_kp_str(orig, sizeof(orig), 0, s);
	if (vars_normalize(s) < 0) {
		error_fmt(msg, MSG_SIZE, "\"..\" after a glob component in \"%s\"", orig);
		return -1;
	}
	why = glob_problem(s, true);
	if (why) {
		error_fmt(msg, MSG_SIZE, "%s in \"%s\"", why, s);
		return -1;
	}
	return 0;
}

static size_t literal_prefix(const char *s)
{
	return strcspn(s, "*?[\\");
}

static int parse_port(const char *s, uint16_t *out)
{
	unsigned long v = 0;

	if (!*s || strlen(s) > 5)
		return -1;
	for (; *s; s++) {
		if (!isdigit((unsigned char)*s))
			return -1;
		v = v * 10 + (unsigned long)(*s - '0');
	}
	if (v < 1 || v > 65535)
		return -1;
	*out = (uint16_t)v;
	return 0;
}

/* "PORT" or "LO-HI" */
static int parse_ports(const char *s, struct cpat *p, char *msg)
{
	char lo[16], *dash;

	if (strlen(s) >= 12) {
		error_fmt(msg, MSG_SIZE, "bad port \"%s\" (1-65535 or LOW-HIGH)", s);
		return -1;
	}
	error_kp_str(lo, sizeof(lo), 0, s);
	dash = strchr(lo, '-');
	if (dash)
		*dash = '\0';
	if (parse_port(lo, &p->port_lo) < 0 ||
	    parse_port(dash ? dash + 1 : lo, &p->port_hi) < 0) {
		error_fmt(msg, MSG_SIZE, "port out of range or not a number in \"%s\" (1-65535)", s);
		return -1;
	}
	if (p->port_lo > p->port_hi) {
		error_fmt(msg, MSG_SIZE, "port range \"%s\": low end above high end", s);
		return -1;
	}
	return 0;
}

/* "ADDR" or "ADDR/LEN"; host bits beyond the prefix are cleared. */
static int parse_cidr(const char *s, int family, struct cpat *p, char *msg)
{
	char buf[INET6_ADDRSTRLEN + 8], *slash;
	unsigned max = family == AF_INET ? 32 : 128;
	unsigned len = max;

	if (strlen(s) >= sizeof(buf)) {
		error_fmt(msg, MSG_SIZE, "bad %s address \"%s\"",
			 family == AF_INET ? "IPv4" : "IPv6", s);
		return -1;
	}
	error_kp_str(buf, sizeof(buf), 0, s);
	slash = strchr(buf, '/');
	if (slash) {
		const char *d = slash + 1;

		*slash = '\0';
		len = 0;
		if (!*d || strlen(d) > 3) {
			error_fmt(msg, MSG_SIZE, "bad CIDR prefix in \"%s\" (0-%u)", s, max);
			return -1;
		}
		for (; *d; d++) {
			if (!isdigit((unsigned char)*d)) {
				error_fmt(msg, MSG_SIZE, "bad CIDR prefix in \"%s\" (0-%u)", s, max);
				return -1;
			}
			len = len * 10 + (unsigned)(*d - '0');
		}
		if (len > max) {
			error_fmt(msg, MSG_SIZE, "bad CIDR prefix in \"%s\" (0-%u)", s, max);
			return -1;
		}
	}
	memset(p->addr, 0, sizeof(p->addr));
	if (inet_pton(family, buf, p->addr) != 1) {
		error_fmt(msg, MSG_SIZE, "bad %s address \"%s\"",
			 family == AF_INET ? "IPv4" : "IPv6", buf);
		return -1;
	}
	for (unsigned bit = len; bit < max; bit++)
		p->addr[bit / 8] &= (uint8_t) ~(0x80u >> (bit % 8));
	p->net_type = RULES_NET_IP;
	p->family = (uint8_t)family;
	p->prefix = (uint8_t)len;
	return 0;
}

/* Letters, digits, '-' and '.', optional leading "*.", no empty label;
 * lower-cased in place. */
static int check_host(char *h, char *msg)
{
	char *p = h;

	if (!strncmp(p, "*.", 2))
		p += 2;
	if (!*p || *p == '.' || p[strlen(p) - 1] == '.' || strstr(p, "..") || strlen(h) > 253)
		goto bad;
	for (char *q = p; *q; q++) {
		if (!isalnum((unsigned char)*q) && *q != '-' && *q != '.')
			goto bad;
		*q = (char)tolower((unsigned char)*q);
	}
	return 0;
bad:
	error_fmt(msg, MSG_SIZE,
		 "invalid host name \"%s\" (letters, digits, '-', '.', and an optional leading \"*.\")",
		 h);
	return -1;
}

static int compile_net_dest(const char *s, struct cpat *p, char *msg)
{
	const char *colon;
	char *addr = NULL;
	size_t colons = 0;
	int rc = -1;

	memset(p, 0, sizeof(*p));
	p->port_lo = 0;
	p->port_hi = 65535;
	if (!strcmp(s, "*") || !strncmp(s, "*:", 2)) {
		p->net_type = RULES_NET_ANY;
		if (s[1] && parse_ports(s + 2, p, msg) < 0)
			return -1;
		return (p->text = strdup(s)) ? 0 : -1;
	}
	if (!strncmp(s, "unix:", 5)) {
		const char *g = s + 5, *why = NULL;
		char *t;

		if (!*g) {
			error_fmt(msg, MSG_SIZE, "\"unix:\" needs a path glob or \"@name\"");
			return -1;
		}
		if (g[0] == '@') {
			if (!g[1]) {
				error_fmt(msg, MSG_SIZE, "\"unix:@\" needs an abstract name glob");
				return -1;
			}
			why = glob_problem(g + 1, false);
			if (why) {
				error_fmt(msg, MSG_SIZE, "%s in \"%s\"", why, s);
				return -1;
			}
			p->net_type = RULES_NET_UNIX_ABSTRACT;
			return (p->text = strdup(g + 1)) ? 0 : -1;
		}
		if (g[0] != '/' && g[0] != '*') {
			error_fmt(msg, MSG_SIZE,
				 "unix socket pattern \"%s\" must be an absolute path or start with '*'",
				 s);
			return -1;
		}
		t = strdup(g);
		if (!t)
			return -1;
		if (vars_normalize(t) < 0 || (why = glob_problem(t, true)) != NULL) {
			error_fmt(msg, MSG_SIZE, "%s in \"%s\"",
				 why ? why : "\"..\" after a glob component", s);
			free(t);
			return -1;
		}
		p->net_type = RULES_NET_UNIX_PATH;
		p->text = t;
		return 0;
	}
	p->text = strdup(s);
	if (!p->text)
		return -1;
	if (s[0] == '[') {
		const char *close = strchr(s, ']');

		if (!close) {
			error_fmt(msg, MSG_SIZE, "missing ']' in \"%s\"", s);
			return -1;
		}
		addr = strndup(s + 1, (size_t)(close - s - 1));
		if (!addr)
			return -1;
		if (parse_cidr(addr, AF_INET6, p, msg) < 0)
			goto out;
		if (close[1] == ':')
			rc = parse_ports(close + 2, p, msg);
		else if (close[1])
			error_fmt(msg, MSG_SIZE, "expected \":PORT\" after ']' in \"%s\"", s);
		else
			rc = 0;
		goto out;
	}
	for (const char *q = s; *q; q++)
		colons += *q == ':';
	if (colons >= 2)
		return parse_cidr(s, AF_INET6, p, msg);
	colon = strrchr(s, ':');
	addr = colon ? strndup(s, (size_t)(colon - s)) : strdup(s);
	if (!addr)
		return -1;
	if (colon && parse_ports(colon + 1, p, msg) < 0)
		goto out;
	if (!addr[0]) {
		error_fmt(msg, MSG_SIZE, "missing address or host before ':' in \"%s\"", s);
		goto out;
	}
	if (strspn(addr, "0123456789./") == strlen(addr)) {
		rc = parse_cidr(addr, AF_INET, p, msg);
		goto out;
	}
	if (check_host(addr, msg) < 0)
		goto out;
	free(p->text);
	p->text = addr;
	addr = NULL;
	p->net_type = RULES_NET_HOST;
	rc = 0;
out:
	free(addr);
	return rc;
}

/* A net pattern: a destination, "session", or "bind:" and the address
 * forms a socket can be bound to ("*", "*:PORT", an address or block
 * with an optional port). */
static int compile_net(const char *s, struct cpat *p, char *msg)
{
	if (!strcmp(s, "session")) {
		memset(p, 0, sizeof(*p));
		p->net_type = RULES_NET_SESSION;
		p->port_hi = 65535;
		return (p->text = strdup(s)) ? 0 : -1;
	}
	if (strncmp(s, "bind:", 5) != 0)
		return compile_net_dest(s, p, msg);
	if (!s[5]) {
		error_fmt(msg, MSG_SIZE, "\"bind:\" needs an address (\"bind:0.0.0.0:8000\", "
			  "\"bind:*:8000\", \"bind:[::]\")");
		return -1;
	}
	if (compile_net_dest(s + 5, p, msg) < 0)
		return -1;
	if (p->net_type != RULES_NET_ANY && p->net_type != RULES_NET_IP) {
		error_fmt(msg, MSG_SIZE, "\"%s\": a bind pattern names an address and port, not a "
			  "host name, a UNIX socket or \"session\"", s);
		cpat_free(p);
		return -1;
	}
	p->bind = true;
	return 0;
}

/* One argv element: alternatives split on unescaped '|', none empty;
 * the program element's alternatives that name a path are path globs. */
static int compile_argv_element(char **elem, bool program, char *msg)
{
	char *s = *elem;
	char *out = NULL;
	size_t out_len = 0, out_cap;
	const char *alt = s;
	int rc = -1;

	if (!program && !s[0])
		return 0; /* matches an empty argument */
	/* Normalizing only shortens an alternative: the input's length
	 * bounds the output (grown below all the same). */
	out_cap = strlen(s) + 1;
	out = malloc(out_cap);
	if (!out)
		return -1;
	for (;;) {
		size_t n = 0, one_len;
		char *one;
		const char *why;

		while (alt[n] && alt[n] != '|') {
			if (alt[n] == '\\' && alt[n + 1])
				n++;
			n++;
		}
		if (!n) {
			error_fmt(msg, MSG_SIZE, "empty alternative in \"%s\"", s);
			goto out;
		}
		one = strndup(alt, n);
		if (!one)
			goto out;
		if (program && strchr(one, '/')) {
			if (vars_normalize(one) < 0) {
				error_fmt(msg, MSG_SIZE, "\"..\" after a glob component in \"%s\"", s);
				free(one);
				goto out;
			}
			why = glob_problem(one, true);
		} else {
			why = glob_problem(one, false);
		}
		if (why) {
			error_fmt(msg, MSG_SIZE, "%s in \"%s\"", why, s);
			free(one);
			goto out;
		}
		one_len = strlen(one);
		if (out_len + one_len + 2 > out_cap) {
			char *nb = realloc(out, out_len + one_len + 2);

			if (!nb) {
				free(one);
				goto out;
			}
			out = nb;
			out_cap = out_len + one_len + 2;
		}
		if (alt != s)
			out[out_len++] = '|';
		memcpy(out + out_len, one, one_len);
		out_len += one_len;
		free(one);
		alt += n;
		if (!*alt)
			break;
		alt++;
	}
	out[out_len] = '\0';
	free(*elem);
	*elem = out;
	out = NULL;
	rc = 0;
out:
	free(out);
	return rc;
}

/* ---- rules ---- */

struct rule_in {
	enum rules_kind kind;
	enum rules_action action;
	const struct load_layer *layer; /* NULL: command line */
	char kp[KP_SIZE];               /* the rule's key path */
	const char *id, *why;
	/* the pattern: a string, or an argv list */
	const char *str;
	const json_t *argv;
	char pat_kp[KP_SIZE];
	bool implicit_args;              /* exec string rule: any arguments */
	uint8_t script;                  /* exec: enum rules_script of "script" */
	uint8_t content;                 /* write deny: enum rules_content of "content" */
	const json_t *unless;
	const json_t *under;             /* deny, alert: program globs or argv patterns */
	const json_t *overrides;         /* allow rules: ids to exempt the pattern from */
	size_t layer_no;                 /* SIZE_MAX: command line */
	char *origin;
};

static unsigned kind_flags(enum rules_kind kind)
{
	switch (kind) {
	case RULES_KIND_EXEC: return VARS_ESCAPE_GLOB | VARS_ESCAPE_ALT;
	case RULES_KIND_NET: return VARS_ESCAPE_GLOB | VARS_RESOLVERS;
	default: return VARS_ESCAPE_GLOB;
	}
}

/* Expand and compile one string pattern of KIND into a list of patterns
 * (several for ${RESOLVERS}, none when dropped).  For exec, S is a
 * program glob and the pattern is [S, "**"] when implicit_args. */
static int compile_string(struct comp *c, enum rules_kind kind, const char *s,
			  bool implicit_args, struct cpat **out, size_t *n_out,
			  const char **dropped, char *msg)
{
	struct vars_result res;
	struct cpat *v = NULL;
	size_t n = 0;

	*out = NULL;
	*n_out = 0;
	/* As written, before expansion: "/.git/config" is what a shell's
	 * unquoted here-document leaves of "${ROOT}/.git/config" (the
	 * shell expanded ${ROOT}, unset there, to nothing). */
	if (kind != RULES_KIND_NET && s[0] == '/' && s[1] == '.' && s[2] && s[2] != '/' &&
	    !(s[2] == '.' && (s[3] == '/' || !s[3]))) {
		error_fmt(msg, MSG_SIZE,
			  "\"%s\": a name starting with '.' right under '/' is what a shell leaves of "
			  "\"${ROOT}%s\" or \"${HOME}%s\" when it expands the variable itself (a "
			  "here-document with an unquoted delimiter: write <<'EOF')", s, s, s);
		return -1;
	}
	if (vars_expand(c->ctx->vars, s, kind_flags(kind), &res, msg, MSG_SIZE) < 0)
		return -1;
	*dropped = res.dropped;
	if (res.n) {
		v = calloc(res.n, sizeof(*v));
		if (!v)
			goto oom;
	}
	for (size_t i = 0; i < res.n; i++) {
		struct cpat *p = &v[n];

		switch (kind) {
		case RULES_KIND_WRITE:
		case RULES_KIND_READ:
			if (compile_path(res.v[i], msg) < 0)
				goto fail;
			p->text = res.v[i];
			res.v[i] = NULL;
			p->port_hi = 65535;
			break;
		case RULES_KIND_NET:
			if (compile_net(res.v[i], p, msg) < 0) {
				if (!msg[0])
					goto oom;
				cpat_free(p);
				goto fail;
			}
			p->src = res.v[i];
			res.v[i] = NULL;
			break;
		case RULES_KIND_EXEC:
			p->argv = calloc(2, sizeof(char *));
			if (!p->argv)
				goto oom;
			p->argv[0] = res.v[i];
			res.v[i] = NULL;
			p->argc = 1;
			if (compile_argv_element(&p->argv[0], true, msg) < 0) {
				if (!msg[0])
					goto oom;
				cpat_free(p);
				goto fail;
			}
			if (implicit_args) {
				p->argv[1] = strdup("**");
				if (!p->argv[1])
					goto oom;
				p->argc = 2;
			}
			p->port_hi = 65535;
			break;
		default:
			break;
		}
		n++;
	}
	vars_result_free(&res);
	*out = v;
	*n_out = n;
	return 0;
oom:
	error_fmt(msg, MSG_SIZE, "out of memory");
fail:
	for (size_t i = 0; i < n; i++)
		cpat_free(&v[i]);
	free(v);
	vars_result_free(&res);
	return -1;
}

/* An argv list pattern: each element expanded (no ${RESOLVERS}), so one
 * result or a drop. */
static int compile_argv(struct comp *c, const struct rule_in *in, struct cpat *p,
			const char **dropped, char *msg, char *kp_out)
{
	size_t n = json_array_size(in->argv);

	memset(p, 0, sizeof(*p));
	p->port_hi = 65535;
	*dropped = NULL;
	p->argv = calloc(n + 1, sizeof(char *));
	if (!p->argv)
		goto oom;
	for (size_t i = 0; i < n; i++) {
		struct vars_result res;

		error_kp_index(kp_out, KP_SIZE, error_kp_str(kp_out, KP_SIZE, 0, in->pat_kp), i);
		msg[0] = '\0';
		if (vars_expand(c->ctx->vars, json_string_value(json_array_get(in->argv, i)),
				VARS_ESCAPE_GLOB | VARS_ESCAPE_ALT, &res, msg, MSG_SIZE) < 0)
			goto fail;
		if (!res.n) {
			*dropped = res.dropped;
			vars_result_free(&res);
			cpat_free(p);
			return 0;
		}
		p->argv[i] = res.v[0];
		res.v[0] = NULL;
		p->argc = i + 1;
		vars_result_free(&res);
		if (compile_argv_element(&p->argv[i], i == 0, msg) < 0) {
			if (!msg[0])
				goto oom;
			goto fail;
		}
	}
	return 0;
oom:
	error_fmt(msg, MSG_SIZE, "out of memory");
fail:
	cpat_free(p);
	return -1;
}

/* The compact JSON jansson would print, written directly when every
 * byte is printable ASCII (only '"' and '\\' then need escaping); other
 * bytes go through jansson, whose escaping and UTF-8 checks decide. */
static char *argv_source_ascii(const struct cpat *p)
{
	size_t len = 3;
	char *s, *o;

	for (size_t i = 0; i < p->argc; i++) {
		for (const char *q = p->argv[i]; *q; q++) {
			if (*q < 0x20 || *q > 0x7e)
				return NULL;
			len += 1 + (*q == '"' || *q == '\\');
		}
		len += 3;
	}
	o = s = malloc(len);
	if (!s)
		return NULL;
	*o++ = '[';
	for (size_t i = 0; i < p->argc; i++) {
		if (i)
			*o++ = ',';
		*o++ = '"';
		for (const char *q = p->argv[i]; *q; q++) {
			if (*q == '"' || *q == '\\')
				*o++ = '\\';
			*o++ = *q;
		}
		*o++ = '"';
	}
	*o++ = ']';
	*o = '\0';
	return s;
}

static char *argv_source(const struct cpat *p)
{
	json_t *a;
	char *s = argv_source_ascii(p);

	if (s)
		return s;
	a = json_array();
	if (!a)
		return NULL;
	for (size_t i = 0; i < p->argc; i++)
		json_array_append_new(a, json_string(p->argv[i]));
	s = json_dumps(a, JSON_COMPACT);
	json_decref(a);
	return s;
}

static void comp_drop(struct comp *c, const struct rule_in *in, const char *id,
		      const char *pattern, const char *var)
{
	struct cdrop *d;

	if (!grow(&c->drops, &c->cap_drops, c->n_drops, sizeof(*c->drops))) {
		c->oom = true;
		return;
	}
	d = &c->drops[c->n_drops];
	d->id = strdup(id);
	d->pattern = strdup(pattern);
	d->origin = strdup(in->origin);
	d->var = var;
	if (!d->id || !d->pattern || !d->origin) {
		free(d->id);
		free(d->pattern);
		free(d->origin);
		c->oom = true;
		return;
	}
	c->n_drops++;
}

static void comp_add_id(struct comp *c, const struct rule_in *in, const char *id, bool given)
{
	struct cid *e;

	if (!grow(&c->ids, &c->cap_ids, c->n_ids, sizeof(*c->ids))) {
		c->oom = true;
		return;
	}
	e = &c->ids[c->n_ids];
	e->id = strdup(id);
	if (given) {
		char kp[KP_SIZE];

		error_kp_str(kp, sizeof(kp), error_kp_str(kp, sizeof(kp), 0, in->kp), ".id");
		e->keypath = strdup(kp);
	} else {
		e->keypath = strdup(in->kp);
	}
	if (!e->id || !e->keypath) {
		free(e->id);
		free(e->keypath);
		c->oom = true;
		return;
	}
	e->layer = in->layer;
	e->seq = c->n_ids++;
}

/* IN's "under": each a program glob with any arguments, or an argv
 * pattern, compiled as an exec rule's pattern is.  One that names an
 * unset variable is left out; when that leaves none, *DROPPED names the
 * variable and the rule is dropped as a rule whose pattern names it (an
 * empty list would let it match under any program). */
static int comp_under(struct comp *c, const struct rule_in *in, struct cpat **out, size_t *n_out,
		      const char **dropped, char *msg, char *err_kp)
{
	const json_t *u;
	size_t ui;

	*out = NULL;
	*n_out = 0;
	*dropped = NULL;
	json_array_foreach(in->under, ui, u) {
		struct rule_in sub = { .kind = RULES_KIND_EXEC, .action = in->action,
				       .layer = in->layer, .argv = json_is_array(u) ? u : NULL };
		struct cpat *more = NULL, *nv;
		size_t n_more = 0;
		const char *udropped = NULL;

		error_kp_index(err_kp, KP_SIZE,
			       error_kp_str(err_kp, KP_SIZE,
					    error_kp_str(err_kp, KP_SIZE, 0, in->kp), ".under"),
			       ui);
		if (sub.argv) {
			memcpy(sub.pat_kp, err_kp, KP_SIZE);
			more = calloc(1, sizeof(*more));
			if (!more) {
				c->oom = true;
				return -1;
			}
			if (compile_argv(c, &sub, more, &udropped, msg, err_kp) < 0) {
				free(more);
				return -1;
			}
			n_more = udropped ? 0 : 1;
		} else if (compile_string(c, RULES_KIND_EXEC, json_string_value(u), true, &more,
					  &n_more, &udropped, msg) < 0) {
			return -1;
		}
		if (udropped)
			*dropped = udropped;
		nv = n_more ? realloc(*out, (*n_out + n_more) * sizeof(**out)) : *out;
		if (n_more && !nv) {
			for (size_t k = 0; k < n_more; k++)
				cpat_free(&more[k]);
			free(more);
			c->oom = true;
			return -1;
		}
		*out = nv;
		if (n_more)
			memcpy(*out + *n_out, more, n_more * sizeof(*more));
		*n_out += n_more;
		free(more);
	}
	if (*n_out)
		*dropped = NULL;
	return 0;
}

/* The resolved name of directory DIR (N bytes), asked of C's few last
 * answers first; NULL when it does not resolve. */
static const char *comp_realdir(struct comp *c, const char *dir, size_t n)
{
	const size_t max = sizeof(c->dirs) / sizeof(c->dirs[0]);
	struct comp_dir *d;
	char buf[PATH_MAX];

	for (size_t i = 0; i < max; i++)
		if (c->dirs[i].of && strlen(c->dirs[i].of) == n && memcmp(c->dirs[i].of, dir, n) == 0)
			return c->dirs[i].real;
	if (n >= sizeof(buf))
		return NULL;
	d = &c->dirs[c->next_dir++ % max];
	free(d->of);
	free(d->real);
	memcpy(buf, dir, n);
	buf[n] = '\0';
	d->of = strdup(buf);
	d->real = d->of ? realpath(buf, NULL) : NULL;
	return d->real;
}

/* realpath(3) of PATH (absolute, normalized) into REAL (PATH_MAX): its
 * directory resolved once for all the rules beneath it (realpath() reads
 * every component as a link: about 500 of a start's system calls went to
 * the default policy's heads), then its last name looked at. */
static bool comp_realpath(struct comp *c, const char *path, char *real)
{
	const char *slash = strrchr(path, '/'), *dir;
	struct stat st;
	int n;

	if (!slash || slash == path || !slash[1] || strcmp(slash, "/.") == 0 ||
	    strcmp(slash, "/..") == 0)
		return realpath(path, real) != NULL;
	dir = comp_realdir(c, path, (size_t)(slash - path));
	if (!dir)
		return false;
	n = snprintf(real, PATH_MAX, "%s%s", strcmp(dir, "/") ? dir : "", slash);
	if (n < 0 || n >= PATH_MAX || lstat(real, &st) < 0)
		return false;
	return S_ISLNK(st.st_mode) ? realpath(path, real) != NULL : true;
}

/* Where path pattern S (absolute, normalized) leads: its literal head,
 * the object itself for a wholly literal pattern, else the directory
 * before its first glob, resolved as the events' paths are (symlinks
 * followed: a ~/.ssh that is a link into a dotfiles tree).  The head's
 * length in S into *HEAD_LEN and what it resolves to into REAL
 * (PATH_MAX); false when it resolves to itself or does not exist. */
static bool path_resolved_head(struct comp *c, const char *s, size_t *head_len, char *real)
{
	size_t lit = literal_prefix(s), dir;
	char head[PATH_MAX];

	if (!s[lit] && comp_realpath(c, s, real)) {
		*head_len = lit;
		return strcmp(real, s) != 0;
	}
	dir = lit;
	while (dir > 0 && s[dir - 1] != '/')
		dir--;
	if (dir <= 1 || dir - 1 >= sizeof(head))
		return false;
	memcpy(head, s, dir - 1);
	head[dir - 1] = '\0';
	*head_len = dir - 1;
	return comp_realpath(c, head, real) && strcmp(real, head) != 0;
}

/* PATH as a glob that matches only itself, then SUFFIX; NULL when memory
 * ran out. */
static char *glob_literal(const char *path, const char *suffix)
{
	size_t n = strlen(path), sl = strlen(suffix), k = 0;
	char *out = malloc(2 * n + sl + 1);

	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (strchr("\\*?[]", path[i]))
			out[k++] = '\\';
		out[k++] = path[i];
	}
	memcpy(out + k, suffix, sl + 1);
	return out;
}

/* S with its first HEAD_LEN bytes replaced by REAL (a path, matched as
 * it is: "[v2]" in a directory's name is no glob), as a new string; NULL
 * when S does not start with that head as whole components, or memory
 * ran out. */
static char *path_rehead(const char *s, const char *head, size_t head_len, const char *real)
{
	if (strncmp(s, head, head_len) != 0 || (s[head_len] && s[head_len] != '/'))
		return NULL;
	return glob_literal(strcmp(real, "/") ? real : "", s + head_len);
}

/* Appends pattern TEXT (taken) to the N patterns at *V; false when it
 * is NULL or memory ran out. */
static bool twin_push(struct cpat **v, size_t *n, char *text)
{
	struct cpat *nv;

	if (!text || !(nv = realloc(*v, (*n + 1) * sizeof(**v)))) {
		free(text);
		return false;
	}
	*v = nv;
	memset(&nv[*n], 0, sizeof(nv[*n]));
	nv[*n].text = text;
	nv[(*n)++].port_hi = 65535;
	return true;
}

/* The exceptions among the first U0 of the N_UNLESS at *UNLESS that lie
 * beneath HEAD (HEAD_LEN bytes of it), also beneath REAL, where it
 * leads.  False when memory ran out. */
static bool twin_unless(struct cpat **unless, size_t *n_unless, size_t u0, const char *head,
			size_t head_len, const char *real)
{
	for (size_t k = 0; k < u0; k++) {
		char *ut = (*unless)[k].text ? path_rehead((*unless)[k].text, head, head_len, real) : NULL;

		if (ut && !twin_push(unless, n_unless, ut))
			return false;
	}
	return true;
}

struct twin_scan {
	struct cpat **pats, **unless;
	size_t *n_pats, *n_unless, u0;
};

/* linkscan_found: NAME, which the rule denies, leads to REAL. */
static bool twin_found(void *arg, const char *name, const char *real, bool whole)
{
	struct twin_scan *t = arg;

	return twin_push(t->pats, t->n_pats, glob_literal(real, whole ? "/**" : "")) &&
	       (!whole || twin_unless(t->unless, t->n_unless, t->u0, name, strlen(name), real));
}

/* A deny rule, or a read alert rule, whose protected names are symbolic
 * links when the policy is loaded also names where they lead, and so do
 * its exceptions beneath them: the paths judged are where links lead.
 * Two kinds of link: the pattern's literal head (a ~/.ssh linked into
 * a dotfiles tree: its id_* there denied, its id_*.pub there admitted),
 * and names below its first glob that the pattern matches (a
 * ~/.aws/credentials kept elsewhere: rules/linkscan.h).  Only rules that
 * narrow what goes: an allow rule or a write alert rule (an allow with a
 * record) would widen to wherever a link made at its name points, and so
 * would an exception resolved on its own (a "public" linked to "..").
 * Appends to the N_PATS patterns at *PATS and the N_UNLESS exceptions at
 * *UNLESS; false when memory ran out. */
static bool comp_twins(struct comp *c, const struct rule_in *in, struct cpat **pats,
		       size_t *n_pats, struct cpat **unless, size_t *n_unless)
{
	const struct rules_vars *vars = c->ctx->vars;
	const char *within[] = { vars->home, vars->root };
	const char *skip[] = { vars->root, vars->home, vars->tmpdir, vars->cwd };
	const struct linkscan_trees trees = { within, sizeof(within) / sizeof(within[0]), skip,
					      sizeof(skip) / sizeof(skip[0]) };
	const char **excluded;
	struct twin_scan scan = { pats, unless, n_pats, n_unless, 0 };
	size_t n0 = *n_pats, u0 = *n_unless, n1, u1;
	bool ok = true;

	if ((in->kind != RULES_KIND_READ && in->kind != RULES_KIND_WRITE) ||
	    !(in->action == RULES_ACTION_DENY ||
	      (in->action == RULES_ACTION_ALERT && in->kind == RULES_KIND_READ)))
		return true;
	for (size_t i = 0; i < n0; i++) {
		char real[PATH_MAX];
		size_t head_len;

		if (!(*pats)[i].text || !path_resolved_head(c, (*pats)[i].text, &head_len, real))
			continue;
		if (!twin_push(pats, n_pats, path_rehead((*pats)[i].text, (*pats)[i].text, head_len, real)) ||
		    !twin_unless(unless, n_unless, u0, (*pats)[i].text, head_len, real))
			return false;
	}
	/* The exceptions so far, the head's twins' included, set linked
	 * names aside (a linked ~/.ssh's id_*.pub). */
	n1 = *n_pats;
	u1 = scan.u0 = *n_unless;
	if (!(excluded = calloc(u1 + 1, sizeof(*excluded))))
		return false;
	for (size_t k = 0; k < u1; k++)
		excluded[k] = (*unless)[k].text;
	for (size_t i = 0; ok && i < n1; i++)
		ok = !(*pats)[i].text || linkscan((*pats)[i].text, excluded, u1, &trees, i >= n0,
						   &c->linkscan_budget, twin_found, &scan);
	free(excluded);
	return ok;
}

static void comp_rule(struct comp *c, struct rule_in *in)
{
	size_t index = ++c->gen[in->kind][in->action];
	char gen_id[64], msg[MSG_SIZE], err_kp[KP_SIZE];
	const char *id = in->id;
	const char *dropped = NULL;
	struct cpat *pats = NULL, *unless = NULL, *under = NULL;
	size_t n_pats = 0, n_unless = 0, n_under = 0, n_own;
	const json_t *u;
	size_t ui;

	if (!id) {
		size_t n = error_kp_str(gen_id, sizeof(gen_id), 0, kind_names[in->kind]);

		n = error_kp_put(gen_id, sizeof(gen_id), n, ".", 1);
		n = error_kp_str(gen_id, sizeof(gen_id), n, action_names[in->action]);
		n = error_kp_put(gen_id, sizeof(gen_id), n, ".", 1);
		error_kp_num(gen_id, sizeof(gen_id), n, index);
		id = gen_id;
	}
	comp_add_id(c, in, id, in->id != NULL);
	msg[0] = '\0';
	error_kp_str(err_kp, sizeof(err_kp), 0, in->pat_kp);
	if (in->argv) {
		pats = calloc(1, sizeof(*pats));
		if (!pats) {
			c->oom = true;
			return;
		}
		if (compile_argv(c, in, pats, &dropped, msg, err_kp) < 0)
			goto bad;
		n_pats = dropped ? 0 : 1;
	} else if (compile_string(c, in->kind, in->str, in->implicit_args, &pats, &n_pats,
				  &dropped, msg) < 0) {
		goto bad;
	}
	if (dropped) {
		char *text = in->argv ? json_dumps(in->argv, JSON_COMPACT) : NULL;

		comp_drop(c, in, id, text ? text : in->str, dropped);
		free(text);
		goto out;
	}
	json_array_foreach(in->unless, ui, u) {
		struct cpat *more;
		size_t n_more;
		const char *udropped;
		struct cpat *nv;

		error_kp_index(err_kp, sizeof(err_kp),
			       error_kp_str(err_kp, sizeof(err_kp),
					    error_kp_str(err_kp, sizeof(err_kp), 0, in->kp), ".unless"),
			       ui);
		if (compile_string(c, in->kind, json_string_value(u), in->kind == RULES_KIND_EXEC,
				   &more, &n_more, &udropped, msg) < 0)
			goto bad;
		/* An exception naming an unset variable cannot apply. */
		nv = n_more ? realloc(unless, (n_unless + n_more) * sizeof(*unless)) : unless;
		if (n_more && !nv) {
			for (size_t k = 0; k < n_more; k++)
				cpat_free(&more[k]);
			free(more);
			c->oom = true;
			goto out;
		}
		unless = nv;
		memcpy(unless + n_unless, more, n_more * sizeof(*more));
		n_unless += n_more;
		free(more);
	}
	if (in->under) {
		const char *udropped;

		if (comp_under(c, in, &under, &n_under, &udropped, msg, err_kp) < 0)
			goto bad;
		if (udropped) {
			char *text = json_dumps(in->under, JSON_COMPACT);

			comp_drop(c, in, id, text ? text : "under", udropped);
			free(text);
			goto out;
		}
	}
	n_own = n_pats;
	if (!comp_twins(c, in, &pats, &n_pats, &unless, &n_unless)) {
		c->oom = true;
		goto out;
	}
	for (size_t i = 0; i < n_pats; i++) {
		struct crule *r;

		if (!grow(&c->rules, &c->cap_rules, c->n_rules, sizeof(*c->rules))) {
			c->oom = true;
			goto out;
		}
		r = &c->rules[c->n_rules];
		memset(r, 0, sizeof(*r));
		r->kind = (uint8_t)in->kind;
		r->action = (uint8_t)in->action;
		r->id = strdup(id);
		r->why = in->why ? strdup(in->why) : NULL;
		r->origin = strdup(in->origin);
		r->source = in->argv ? argv_source(&pats[i])
			: strdup(in->kind == RULES_KIND_EXEC ? pats[i].argv[0]
				 : pats[i].src ? pats[i].src : pats[i].text);
		r->pat = pats[i];
		r->pat.script = in->script;
		r->content = in->content;
		r->twin = i >= n_own;
		memset(&pats[i], 0, sizeof(pats[i]));
		c->n_rules++;
		if (!r->id || (in->why && !r->why) || !r->origin || !r->source) {
			c->oom = true;
			goto out;
		}
		/* Each expanded rule gets its own copy of the exceptions. */
		if (n_unless) {
			r->unless = calloc(n_unless, sizeof(*r->unless));
			if (!r->unless) {
				c->oom = true;
				goto out;
			}
			for (size_t k = 0; k < n_unless; k++) {
				r->n_unless = k + 1;
				if (cpat_copy(&r->unless[k], &unless[k]) < 0) {
					c->oom = true;
					goto out;
				}
			}
			r->n_unless_own = n_unless;
		}
		if (n_under) {
			r->under = calloc(n_under, sizeof(*r->under));
			if (!r->under) {
				c->oom = true;
				goto out;
			}
			for (size_t k = 0; k < n_under; k++) {
				r->n_under = k + 1;
				if (cpat_copy(&r->under[k], &under[k]) < 0) {
					c->oom = true;
					goto out;
				}
			}
		}
		r->from_extra = in->layer == NULL;
		r->layer_no = in->layer_no;
		r->layer = in->layer;
		r->overrides = in->overrides;
		if (in->overrides && !(r->kp = strdup(in->kp))) {
			c->oom = true;
			goto out;
		}
	}
	goto out;
bad:
	if (!msg[0])
		c->oom = true;
	else
		comp_error(c, in->layer, err_kp, "%s", msg);
out:
	for (size_t i = 0; i < n_pats; i++)
		cpat_free(&pats[i]);
	free(pats);
	for (size_t i = 0; i < n_unless; i++)
		cpat_free(&unless[i]);
	free(unless);
	for (size_t i = 0; i < n_under; i++)
		cpat_free(&under[i]);
	free(under);
}

/* "FILE:LINE:COL"; lines and columns are positive. */
static char *layer_origin(const struct load_layer *layer, const char *kp)
{
	size_t dlen = strlen(layer->display), n;
	int line, col;
	char *s;

	jsonpos_find(&layer->pos, kp, false, &line, &col);
	s = malloc(dlen + 2 * 24 + 1);
	if (!s)
		return NULL;
	memcpy(s, layer->display, dlen);
	n = dlen;
	s[n++] = ':';
	n = error_kp_num(s, dlen + 2 * 24 + 1, n, (size_t)line);
	s[n++] = ':';
	error_kp_num(s, dlen + 2 * 24 + 1, n, (size_t)col);
	return s;
}

static bool string_list(const json_t *v, bool need_one)
{
	size_t i;
	json_t *el;

	if (!json_is_array(v) || (need_one && !json_array_size(v)))
		return false;
	json_array_foreach(v, i, el)
		if (!json_is_string(el))
			return false;
	return true;
}

/* "under" on a deny or alert rule: program globs and argv lists. */
static bool under_list(const json_t *v, enum rules_action a)
{
	size_t i;
	json_t *el;

	if (a == RULES_ACTION_ALLOW || !json_is_array(v) || !json_array_size(v))
		return false;
	json_array_foreach(v, i, el)
		if (json_is_array(el) ? !string_list(el, true) || !json_string_length(json_array_get(el, 0))
				      : !json_string_length(el))
			return false;
	return true;
}

/* Layers with schema errors are still compiled, to report every pattern
 * error at once; rules whose shape is wrong were reported by the schema
 * and are skipped here. */
static bool rule_shape_ok(enum rules_kind k, enum rules_action a, const json_t *rule)
{
	const json_t *v;

	if (json_is_string(rule))
		return json_string_length(rule) > 0;
	if (!json_is_object(rule))
		return false;
	v = json_object_get(rule, k == RULES_KIND_EXEC ? "argv" : k == RULES_KIND_NET ? "addr" : "path");
	if (k == RULES_KIND_EXEC ? !string_list(v, true) || !json_string_length(json_array_get(v, 0))
				 : !json_is_string(v) || !json_string_length(v))
		return false;
	if ((v = json_object_get(rule, "id")) && !json_is_string(v))
		return false;
	if ((v = json_object_get(rule, "why")) && !json_is_string(v))
		return false;
	if ((v = json_object_get(rule, "unless")) && !string_list(v, false))
		return false;
	if ((v = json_object_get(rule, "under")) && !under_list(v, a))
		return false;
	if ((v = json_object_get(rule, "script")) &&
	    (k != RULES_KIND_EXEC || schema_script(json_string_value(v)) == RULES_SCRIPT_NONE))
		return false;
	if ((v = json_object_get(rule, "content")) &&
	    (k != RULES_KIND_WRITE || a != RULES_ACTION_DENY ||
	     schema_content(json_string_value(v)) == RULES_CONTENT_NONE))
		return false;
	return true;
}

static void comp_layer_rules(struct comp *c, const struct load_layer *layer, size_t layer_no)
{
	for (int k = 0; k < RULES_KIND_COUNT; k++) {
		json_t *sec = json_object_get(layer->root, kind_names[k]);

		for (int a = 0; a < RULES_ACTION_COUNT && sec; a++) {
			json_t *list = json_object_get(sec, action_names[a]);
			json_t *rule;
			size_t i, kp_len;

			json_array_foreach(list, i, rule) {
				struct rule_in in = { .kind = k, .action = a, .layer = layer,
						      .layer_no = layer_no };

				if (!rule_shape_ok(k, a, rule)) {
					c->gen[k][a]++;
					continue;
				}
				kp_len = error_kp_str(in.kp, sizeof(in.kp), 0, kind_names[k]);
				kp_len = error_kp_put(in.kp, sizeof(in.kp), kp_len, ".", 1);
				kp_len = error_kp_str(in.kp, sizeof(in.kp), kp_len, action_names[a]);
				kp_len = error_kp_index(in.kp, sizeof(in.kp), kp_len, i);
				in.origin = layer_origin(layer, in.kp);
				if (!in.origin) {
					c->oom = true;
					return;
				}
				if (json_is_string(rule)) {
					in.str = json_string_value(rule);
					in.implicit_args = true;
					memcpy(in.pat_kp, in.kp, kp_len + 1);
				} else {
					const char *pkey = k == RULES_KIND_EXEC ? "argv"
						: k == RULES_KIND_NET ? "addr" : "path";
					json_t *pv = json_object_get(rule, pkey);

					in.id = json_string_value(json_object_get(rule, "id"));
					in.why = json_string_value(json_object_get(rule, "why"));
					in.unless = json_object_get(rule, "unless");
					in.under = json_object_get(rule, "under");
					in.script = (uint8_t)schema_script(
						json_string_value(json_object_get(rule, "script")));
					in.content = (uint8_t)schema_content(
						json_string_value(json_object_get(rule, "content")));
					in.overrides = json_object_get(rule, "overrides");
					if (!json_is_array(in.overrides))
						in.overrides = NULL;
					memcpy(in.pat_kp, in.kp, kp_len + 1);
					error_kp_str(in.pat_kp, sizeof(in.pat_kp),
						     error_kp_put(in.pat_kp, sizeof(in.pat_kp), kp_len,
								  ".", 1), pkey);
					if (k == RULES_KIND_EXEC)
						in.argv = pv;
					else
						in.str = json_string_value(pv);
				}
				comp_rule(c, &in);
				free(in.origin);
			}
		}
	}
}

static void comp_layer_settings(struct comp *c, const struct load_layer *layer)
{
	const json_t *root = layer->root, *v, *el;
	size_t i;

	v = json_object_get(root, "mode");
	if (json_is_string(v))
		c->mode = strcmp(json_string_value(v), "audit") ? RULES_MODE_ENFORCE : RULES_MODE_AUDIT;
	if (json_is_true(json_object_get(root, "record")))
		c->record = 1;
	v = json_object_get(root, "name");
	c->name = json_is_string(v) ? json_string_value(v) : layer->label;
	v = json_object_get(json_object_get(root, "env"), "drop");
	json_array_foreach(v, i, el) {
		const char *why;

		if (!json_is_string(el))
			continue;
		why = glob_problem(json_string_value(el), false);

		if (why) {
			char kp[KP_SIZE];

			error_fmt(kp, sizeof(kp), "env.drop[%zu]", i);
			comp_error(c, layer, kp, "%s in \"%s\"", why, json_string_value(el));
			continue;
		}
		if (!grow(&c->env, &c->cap_env, c->n_env, sizeof(*c->env))) {
			c->oom = true;
			return;
		}
		c->env[c->n_env++] = json_string_value(el);
	}
	v = json_object_get(root, "limits");
	if (v) {
		json_t *m;

		/* A number or a share, as max_memory below. */
		if ((m = json_object_get(v, "max_procs"))) {
			uint64_t n;
			uint32_t percent;

			if (json_is_string(m) &&
			    rules_parse_procs(json_string_value(m), &n, &percent) == 0) {
				c->limits.max_procs = n;
				c->limits.max_procs_percent = percent;
			} else if (json_is_integer(m)) {
				c->limits.max_procs = (uint64_t)json_integer_value(m);
				c->limits.max_procs_percent = 0;
			}
		}
		if ((m = json_object_get(v, "timeout")))
			c->limits.timeout_sec = (uint64_t)json_integer_value(m);
		if ((m = json_object_get(v, "max_cpu")))
			c->limits.max_cpu_sec = (uint64_t)json_integer_value(m);
		/* A size or a share: whichever this layer sets replaces both. */
		if ((m = json_object_get(v, "max_memory"))) {
			uint64_t size;
			uint32_t percent;

			if (json_is_string(m) &&
			    rules_parse_memory(json_string_value(m), &size, &percent) == 0) {
				c->limits.max_memory = size;
				c->limits.max_memory_percent = percent;
			} else if (json_is_integer(m)) {
				c->limits.max_memory = (uint64_t)json_integer_value(m);
				c->limits.max_memory_percent = 0;
			}
		}
	}
}

static void comp_extras(struct comp *c, const struct rules_extra *extras, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct rules_extra *x = &extras[i];
		struct rule_in in = {
			.kind = x->kind, .action = x->action, .id = x->id, .why = x->why,
			.str = x->pattern, .implicit_args = true, .origin = (char *)"<command line>",
			.layer_no = SIZE_MAX,
		};
		size_t before = c->errors;

		if ((unsigned)x->kind >= RULES_KIND_COUNT || (unsigned)x->action >= RULES_ACTION_COUNT ||
		    !x->pattern || !x->pattern[0]) {
			comp_error(c, NULL, "", "rule %zu: bad kind, action or empty pattern", i);
			continue;
		}
		comp_rule(c, &in);
		/* comp_rule located nothing for the command line: say which. */
		if (c->errors > before && c->ctx->errs.n) {
			struct rules_error *e = &c->ctx->errs.v[c->ctx->errs.n - 1];
			char text[sizeof(e->text)];

			error_fmt(text, sizeof(text), "%s rule \"%s\": %s", kind_names[x->kind],
				 x->pattern, e->text);
			memcpy(e->text, text, sizeof(text));
		}
	}
}

/* Adds a copy of PAT to the "unless" list of D.  false: out of memory. */
static bool comp_exempt(struct crule *d, const struct cpat *pat)
{
	struct cpat *nv = realloc(d->unless, (d->n_unless + 1) * sizeof(*nv));

	if (!nv)
		return false;
	d->unless = nv;
	return cpat_copy(&d->unless[d->n_unless++], pat) == 0;
}

/* Why an "overrides" id names no rule it can exempt from, for R (an allow
 * rule of layer R->layer_no); NULL when it does (or named a rule dropped
 * for an unset variable: nothing to exempt). */
static const char *comp_override_problem(const struct comp *c, const struct crule *r,
					 const char *id, bool *found)
{
	const char *why = "names no rule (agenttrace --explain lists the ids)";

	*found = false;
	for (size_t i = 0; i < c->n_rules; i++) {
		const struct crule *d = &c->rules[i];

		if (strcmp(d->id, id) != 0)
			continue;
		if (d->kind != r->kind)
			why = "names a rule of another section";
		else if (d->action == RULES_ACTION_ALLOW)
			why = "names an allow rule (overrides exempts from deny and alert rules)";
		else if (d->from_extra || d->layer_no >= r->layer_no)
			why = "names a rule of this or a later layer (a layer exempts from the "
			      "layers it builds on)";
		else
			*found = true;
	}
	if (*found)
		return NULL;
	for (size_t i = 0; i < c->n_drops; i++)
		if (strcmp(c->drops[i].id, id) == 0)
			return NULL;
	return why;
}

/* agenttrace-policy(5), LAYERING: an allow rule's "overrides" names deny
 * and alert rules of earlier layers that its pattern is exempted from
 * (added to their "unless"), so that a project's layer can admit
 * ${ROOT}/.git/config although default denies it, and admit nothing
 * else.  Every name must be such a rule: a typo exempts nothing and is an
 * error. */
static void comp_apply_overrides(struct comp *c)
{
	for (size_t i = 0; i < c->n_rules; i++) {
		struct crule *r = &c->rules[i];
		/* A pattern expanded into several rules reports its errors once. */
		bool report = !(i && c->rules[i - 1].overrides == r->overrides);
		const json_t *el;
		size_t k;

		if (!r->overrides || r->action != RULES_ACTION_ALLOW ||
		    r->layer_no > c->overrides_upto)
			continue;
		json_array_foreach(r->overrides, k, el) {
			const char *id = json_string_value(el), *why;
			bool found;

			if (!id)
				continue;
			why = comp_override_problem(c, r, id, &found);
			if (why && report) {
				char kp[KP_SIZE];

				error_kp_index(kp, sizeof(kp),
					       error_kp_str(kp, sizeof(kp),
							    error_kp_str(kp, sizeof(kp), 0, r->kp),
							    ".overrides"), k);
				comp_error(c, r->layer, kp, "\"%s\" %s", id, why);
			}
			for (size_t j = 0; found && j < c->n_rules; j++) {
				struct crule *d = &c->rules[j];

				if (j == i || strcmp(d->id, id) != 0 || d->kind != r->kind ||
				    d->action == RULES_ACTION_ALLOW || d->from_extra ||
				    d->layer_no >= r->layer_no)
					continue;
				if (!comp_exempt(d, &r->pat)) {
					c->oom = true;
					return;
				}
			}
		}
	}
}

/* `--allow-write '${ROOT}/.git/config'` must admit what the default
 * policy denies (agenttrace-policy(5), LAYERING).  A command-line allow is the user's explicit exception, so what it matches
 * is exempted from the policy's deny rules of the same kind (added to
 * their "unless").  Command-line denies (the supervisor protecting its
 * own files) are never exempted, and alerts stay. */
static void comp_exempt_extras(struct comp *c)
{
	for (size_t i = 0; i < c->n_rules; i++) {
		const struct crule *x = &c->rules[i];

		if (!x->from_extra || x->action != RULES_ACTION_ALLOW)
			continue;
		for (size_t j = 0; j < c->n_rules; j++) {
			struct crule *d = &c->rules[j];

			if (d->from_extra || d->action != RULES_ACTION_DENY || d->kind != x->kind)
				continue;
			if (!comp_exempt(d, &x->pat)) {
				c->oom = true;
				return;
			}
		}
	}
}

/* agenttrace-policy(5): the exec section is an allow-list when the POLICY has exec
 * allow rules.  --allow-exec adds exceptions, and so does an allow rule
 * with "overrides" (it exempts one program from named rules); neither
 * may turn a policy without an allow-list (default) into one that
 * refuses every program. */
static bool comp_policy_has_exec_allow(const struct comp *c)
{
	for (size_t i = 0; i < c->n_rules; i++)
		if (c->rules[i].kind == RULES_KIND_EXEC && c->rules[i].action == RULES_ACTION_ALLOW &&
		    !c->rules[i].from_extra && !c->rules[i].overrides)
			return true;
	return false;
}

static int cid_cmp(const void *a, const void *b)
{
	const struct cid *x = a, *y = b;
	int r = strcmp(x->id, y->id);

	if (r)
		return r;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void comp_check_ids(struct comp *c)
{
	if (c->n_ids > 1)
		qsort(c->ids, c->n_ids, sizeof(*c->ids), cid_cmp);
	for (size_t i = 1; i < c->n_ids; i++) {
		struct cid *first = &c->ids[i - 1], *dup = &c->ids[i];
		char where[600];

		if (strcmp(first->id, dup->id))
			continue;
		/* Report each later duplicate against the first one. */
		while (first > c->ids && !strcmp((first - 1)->id, dup->id))
			first--;
		if (first->layer) {
			int line, col;

			jsonpos_find(&first->layer->pos, first->keypath, false, &line, &col);
			error_fmt(where, sizeof(where), "%s:%d:%d", first->layer->display, line, col);
		} else {
			error_fmt(where, sizeof(where), "<command line>");
		}
		comp_error(c, dup->layer, dup->keypath, "duplicate id \"%s\" (first used at %s)",
			   dup->id, where);
	}
}

/* ---- the block ---- */

struct pool {
	char *b;
	size_t n, cap;
	uint32_t base;
	bool oom;
};

static rules_str pool_add(struct pool *p, const char *s)
{
	size_t len;
	rules_str off;

	if (!s)
		return 0;
	len = strlen(s) + 1;
	if (p->n + len > p->cap) {
		size_t ncap = p->cap ? p->cap : 4096;
		char *nb;

		while (ncap < p->n + len)
			ncap *= 2;
		nb = realloc(p->b, ncap);
		if (!nb) {
			p->oom = true;
			return 0;
		}
		p->b = nb;
		p->cap = ncap;
	}
	if ((size_t)p->base + p->n + len > BLOCK_MAX) {
		p->oom = true;
		return 0;
	}
	memcpy(p->b + p->n, s, len);
	off = (rules_str)(p->base + p->n);
	p->n += len;
	return off;
}

static size_t align8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

struct builder {
	struct pool pool;
	rules_str *strs;
	size_t n_strs;
	struct rules_pattern *pats;
	size_t n_pats;
};

static void build_pattern(struct builder *b, const struct cpat *s, struct rules_pattern *d)
{
	memset(d, 0, sizeof(*d));
	d->text = pool_add(&b->pool, s->text);
	d->prefix_len = s->text ? (uint32_t)literal_prefix(s->text) : 0;
	d->need = s->text ? match_path_need(s->text) : 0;
	if (s->argc) {
		d->argv_first = (uint32_t)b->n_strs;
		d->argv_count = (uint32_t)s->argc;
		for (size_t i = 0; i < s->argc; i++)
			b->strs[b->n_strs++] = pool_add(&b->pool, s->argv[i]);
	}
	d->script = s->script;
	d->net_type = s->net_type;
	d->family = s->family;
	d->prefix = s->prefix;
	d->bind = s->bind;
	d->port_lo = s->port_lo;
	d->port_hi = s->port_hi;
	memcpy(d->addr, s->addr, sizeof(d->addr));
}

/* True when a net deny or alert rule names "session" in its pattern, or
 * any net rule in its "unless" (struct rules_policy endpoint_first): an
 * allow rule whose pattern is "session" is the one use whose verdict a
 * backend may settle after deciding without it. */
static bool comp_endpoint_first(const struct comp *c)
{
	for (size_t i = 0; i < c->n_rules; i++) {
		const struct crule *r = &c->rules[i];

		if (r->kind != RULES_KIND_NET)
			continue;
		if (r->action != RULES_ACTION_ALLOW && r->pat.net_type == RULES_NET_SESSION)
			return true;
		for (size_t u = 0; u < r->n_unless; u++)
			if (r->unless[u].net_type == RULES_NET_SESSION)
				return true;
	}
	return false;
}

static int comp_block(struct comp *c, const char *layers, struct rules_policy **out)
{
	size_t n_rules = c->n_rules + RULES_KIND_COUNT + RULES_NET_FALLBACKS, n_pats = 0, n_strs = 0;
	size_t rules_off, pats_off, strs_off, fixed;
	struct rules_rule *rules = NULL;
	struct builder b = { 0 };
	struct rules_policy hdr;
	size_t r = 0;
	char *blk;
	int rc = -1;

	for (size_t i = 0; i < c->n_rules; i++) {
		n_pats += c->rules[i].n_unless + c->rules[i].n_under;
		n_strs += c->rules[i].pat.argc;
		for (size_t k = 0; k < c->rules[i].n_unless; k++)
			n_strs += c->rules[i].unless[k].argc;
		for (size_t k = 0; k < c->rules[i].n_under; k++)
			n_strs += c->rules[i].under[k].argc;
	}
	n_strs += c->n_env + COMPILE_DROPPED_FIELDS * c->n_drops;
	rules_off = align8(sizeof(struct rules_policy));
	pats_off = align8(rules_off + n_rules * sizeof(struct rules_rule));
	strs_off = align8(pats_off + n_pats * sizeof(struct rules_pattern));
	fixed = align8(strs_off + n_strs * sizeof(rules_str));
	if (fixed >= BLOCK_MAX)
		return -1;
	b.pool.base = (uint32_t)fixed;
	rules = calloc(n_rules, sizeof(*rules));
	b.pats = calloc(n_pats + 1, sizeof(*b.pats));
	b.strs = calloc(n_strs + 1, sizeof(*b.strs));
	if (!rules || !b.pats || !b.strs)
		goto out;

	memset(&hdr, 0, sizeof(hdr));
	hdr.magic = RULES_MAGIC;
	hdr.version = RULES_VERSION;
	hdr.mode = c->mode;
	hdr.record = c->record;
	hdr.name = pool_add(&b.pool, c->name);
	hdr.layers = pool_add(&b.pool, layers);
	hdr.rules_off = (uint32_t)rules_off;
	hdr.rules_count = (uint32_t)n_rules;
	/* Stable sort by kind, then action: the spans of rules.h. */
	for (int k = 0; k < RULES_KIND_COUNT; k++) {
		for (int a = 0; a < RULES_ACTION_COUNT; a++) {
			hdr.span[k][a].first = (uint32_t)r;
			for (size_t i = 0; i < c->n_rules; i++) {
				const struct crule *s = &c->rules[i];
				struct rules_rule *d = &rules[r];

				if (s->kind != k || s->action != a)
					continue;
				d->id = pool_add(&b.pool, s->id);
				d->why = pool_add(&b.pool, s->why);
				d->source = pool_add(&b.pool, s->source);
				d->origin = pool_add(&b.pool, s->origin);
				d->kind = s->kind;
				d->action = s->action;
				d->content = s->content;
				d->twin = s->twin;
				build_pattern(&b, &s->pat, &d->pat);
				d->unless_first = (uint32_t)b.n_pats;
				d->unless_count = (uint32_t)s->n_unless;
				d->unless_own = (uint32_t)s->n_unless_own;
				for (size_t u = 0; u < s->n_unless; u++)
					build_pattern(&b, &s->unless[u], &b.pats[b.n_pats++]);
				d->under_first = (uint32_t)b.n_pats;
				d->under_count = (uint32_t)s->n_under;
				for (size_t u = 0; u < s->n_under; u++)
					build_pattern(&b, &s->under[u], &b.pats[b.n_pats++]);
				r++;
			}
			hdr.span[k][a].count = (uint32_t)r - hdr.span[k][a].first;
		}
	}
	for (int k = 0; k < RULES_KIND_COUNT; k++) {
		struct rules_rule *d = &rules[r];
		static const struct { const char *id, *why; uint8_t action; } fb[] = {
			[RULES_KIND_EXEC] = { "exec.fallback", NULL, RULES_ACTION_ALLOW },
			[RULES_KIND_WRITE] = { "write.fallback", "not under an allowed write root",
					       RULES_ACTION_DENY },
			[RULES_KIND_READ] = { "read.fallback", NULL, RULES_ACTION_ALLOW },
			[RULES_KIND_NET] = { "net.fallback", "destination not in the egress allow-list",
					     RULES_ACTION_DENY },
		};

		d->kind = (uint8_t)k;
		d->action = fb[k].action;
		d->id = pool_add(&b.pool, fb[k].id);
		d->why = pool_add(&b.pool, fb[k].why);
		if (k == RULES_KIND_EXEC && comp_policy_has_exec_allow(c)) {
			d->action = RULES_ACTION_DENY;
			d->id = pool_add(&b.pool, "exec.not-allowed");
			d->why = pool_add(&b.pool, "program not in the exec allow-list");
		}
		d->pat.port_hi = 65535;
		hdr.fallback[k] = (uint32_t)r++;
	}
	for (int i = 0; i < RULES_NET_FALLBACKS; i++) {
		static const struct { const char *id, *why; uint8_t action; } fb[] = {
			[RULES_NET_FB_LOCAL] = { "net.local-outside",
				"a local endpoint that no process of this session made: what a server "
				"started outside the session is sent runs outside supervision",
				RULES_ACTION_DENY },
			[RULES_NET_FB_INBOUND] = { "net.inbound",
				"a socket bound to an address other than loopback takes connections "
				"from other machines (a bind shell)", RULES_ACTION_DENY },
			[RULES_NET_FB_BIND_LOOPBACK] = { "net.bind-loopback", NULL,
							 RULES_ACTION_ALLOW },
		};
		struct rules_rule *d = &rules[r];

		d->kind = RULES_KIND_NET;
		d->action = fb[i].action;
		d->id = pool_add(&b.pool, fb[i].id);
		d->why = pool_add(&b.pool, fb[i].why);
		d->pat.port_hi = 65535;
		hdr.fallback_net[i] = (uint32_t)r++;
	}
	hdr.endpoint_first = comp_endpoint_first(c);
	for (size_t i = 0; i < c->n_rules; i++)
		if (c->rules[i].n_under)
			hdr.under_kinds |= (uint8_t)(1u << c->rules[i].kind);
	hdr.env_drop_first = (uint32_t)b.n_strs;
	hdr.env_drop_count = (uint32_t)c->n_env;
	for (size_t i = 0; i < c->n_env; i++)
		b.strs[b.n_strs++] = pool_add(&b.pool, c->env[i]);
	for (size_t i = 0; i < c->n_drops; i++) {
		b.strs[b.n_strs++] = pool_add(&b.pool, c->drops[i].id);
		b.strs[b.n_strs++] = pool_add(&b.pool, c->drops[i].pattern);
		b.strs[b.n_strs++] = pool_add(&b.pool, c->drops[i].origin);
		b.strs[b.n_strs++] = pool_add(&b.pool, c->drops[i].var);
	}
	hdr.limits = c->limits;
	hdr.patterns_off = (uint32_t)pats_off;
	hdr.patterns_count = (uint32_t)n_pats;
	hdr.strs_off = (uint32_t)strs_off;
	hdr.strs_count = (uint32_t)n_strs;
	if (b.pool.oom)
		goto out;
	hdr.size = (uint32_t)(fixed + b.pool.n);
	blk = calloc(1, hdr.size);
	if (!blk)
		goto out;
	memcpy(blk, &hdr, sizeof(hdr));
	memcpy(blk + rules_off, rules, n_rules * sizeof(*rules));
	memcpy(blk + pats_off, b.pats, n_pats * sizeof(*b.pats));
	memcpy(blk + strs_off, b.strs, n_strs * sizeof(*b.strs));
	if (b.pool.n)
		memcpy(blk + fixed, b.pool.b, b.pool.n);
	*out = (struct rules_policy *)blk;
	rc = 0;
out:
	free(rules);
	free(b.pats);
	free(b.strs);
	free(b.pool.b);
	return rc;
}

static int compile_policy_upto(struct load_ctx *ctx, const struct rules_extra *extras,
			       size_t n_extras, size_t overrides_upto, struct rules_policy **out)
{
	struct comp c = { .ctx = ctx, .mode = RULES_MODE_ENFORCE, .overrides_upto = overrides_upto,
			  .linkscan_budget = LINKSCAN_MAX_LOAD };
	char *layers = NULL;
	size_t layers_len = 1;
	int rc = -1;

	*out = NULL;
	for (size_t i = 0; i < ctx->n_layers; i++)
		layers_len += strlen(ctx->layers[i]->label) + 1;
	layers = malloc(layers_len);
	if (!layers)
		goto oom;
	layers_len = 0;
	for (size_t i = 0; i < ctx->n_layers; i++) {
		size_t n = strlen(ctx->layers[i]->label);

		if (i)
			layers[layers_len++] = '+';
		memcpy(layers + layers_len, ctx->layers[i]->label, n);
		layers_len += n;
	}
	layers[layers_len] = '\0';
	for (size_t i = 0; i < ctx->n_layers; i++) {
		comp_layer_settings(&c, ctx->layers[i]);
		comp_layer_rules(&c, ctx->layers[i], i);
		if (c.oom)
			break;
	}
	if (!c.oom)
		comp_apply_overrides(&c);
	if (!c.oom)
		comp_extras(&c, extras, n_extras);
	if (!c.oom && !c.errors)
		comp_exempt_extras(&c);
	if (!c.oom)
		comp_check_ids(&c);
	if (c.oom)
		goto oom;
	if (c.errors)
		goto out;
	if (comp_block(&c, layers, out) < 0)
		goto oom;
	rc = 0;
	goto out;
oom: {
		struct rules_error e;

		error_set(&e, ctx->n_layers ? ctx->layers[0]->display : "<policy>", 0, 0, "",
			  "out of memory, or the policy is too large to compile");
		error_push(&ctx->errs, &e);
	}
out:
	free(layers);
	comp_free(&c);
	return rc;
}

int compile_policy(struct load_ctx *ctx, const struct rules_extra *extras, size_t n_extras,
		   struct rules_policy **out)
{
	return compile_policy_upto(ctx, extras, n_extras, SIZE_MAX, out);
}

/* ---- tests ---- */

struct test_event {
	struct rules_event ev;
	/* A test's "under": the program its event's process runs. */
	struct rules_event under;
	size_t n_under;
	char under_exe[PATH_MAX];
	char path[PATH_MAX];
	char exe[PATH_MAX];
	char host[256];
	char unix_path[PATH_MAX];
};

static int test_connect(const char *s, struct test_event *t, char *msg)
{
	const char *colon;
	char addr[INET6_ADDRSTRLEN + 2];

	if (!strncmp(s, "unix:", 5)) {
		if (!s[5] || strlen(s + 5) >= sizeof(t->unix_path)) {
			error_fmt(msg, MSG_SIZE, "\"unix:\" needs a path or \"@name\"");
			return -1;
		}
		t->ev.family = AF_UNIX;
		snprintf(t->unix_path, sizeof(t->unix_path), "%s", s + 5);
		t->ev.unix_path = t->unix_path;
		return 0;
	}
	colon = strrchr(s, ':');
	if (!colon || parse_port(colon + 1, &t->ev.port) < 0)
		goto bad;
	if (s[0] == '[') {
		if (colon < s + 2 || colon[-1] != ']' || (size_t)(colon - s - 2) >= sizeof(addr))
			goto bad;
		memcpy(addr, s + 1, (size_t)(colon - s - 2));
		addr[colon - s - 2] = '\0';
		if (inet_pton(AF_INET6, addr, t->ev.addr) != 1)
			goto bad;
		t->ev.family = AF_INET6;
		return 0;
	}
	if ((size_t)(colon - s) >= sizeof(t->host) || colon == s)
		goto bad;
	memcpy(t->host, s, (size_t)(colon - s));
	t->host[colon - s] = '\0';
	if (strchr(t->host, ':'))
		goto bad;
	if (inet_pton(AF_INET, t->host, t->ev.addr) == 1) {
		t->ev.family = AF_INET;
		return 0;
	}
	for (char *p = t->host; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	t->ev.family = 0;
	t->ev.host = t->host;
	return 0;
bad:
	error_fmt(msg, MSG_SIZE, "expected \"HOST:PORT\", \"ADDR:PORT\", \"[IPv6]:PORT\" or "
		 "\"unix:PATH\", got \"%s\"", s);
	return -1;
}

/* The command-line rules of a block, when the tests run on a block that
 * has them: a test event that none of their patterns matches is decided
 * exactly as by the block without them (they add rules at the end of
 * their spans, and the allows add their own pattern to the "unless" of
 * the policy's denies), so one compile serves both. */
struct test_probe {
	uint32_t *rules; /* indexes of the rules whose origin is the command line */
	size_t n;
	bool hit;        /* some test event matched one: decide again without */
};

static bool test_probe_hit(const struct rules_policy *p, const struct test_probe *probe,
			   const struct rules_event *ev)
{
	char buf[MATCH_PATH_MAX];
	struct match_subject m;

	if (!probe->n)
		return false;
	match_subject_init(&m, ev, buf);
	for (size_t i = 0; i < probe->n; i++) {
		const struct rules_rule *r = rules_rule_at(p, probe->rules[i]);

		if (r->kind == ev->kind && match_pattern(p, ev->kind, &r->pat, &m))
			return true;
	}
	return false;
}

/* What the tests of one layer are decided on (agenttrace-policy(5),
 * LAYERING): that layer and the layers it builds on.  A later layer
 * tightens (an exec allow-list, more denies and alerts) or exempts
 * (overrides); neither is the earlier layer's to test: default tests that
 * make runs, a learned allow-list on top of it may not list make. */
struct test_scope {
	bool full;                 /* the last layer: the block as it is */
	size_t layer;              /* else rules of layers up to this one */
	const uint8_t *rule_layer; /* per rule of the block: its layer; 255: the command line */
	bool exec_allow_list;      /* those layers make exec an allow-list */
};


/* rules_decide() over the rules of SCOPE's layers (all of them when it
 * has no RULE_LAYER), twins set aside (rules_rule.twin): the action, and
 * the deciding rule's id in *ID. */
static enum rules_action test_decide_scoped(const struct rules_policy *p,
					    const struct test_scope *scope,
					    const struct rules_event *ev, const char **id)
{
	static const enum rules_action order[] = {
		RULES_ACTION_DENY, RULES_ACTION_ALERT, RULES_ACTION_ALLOW,
	};
	char buf[MATCH_PATH_MAX];
	struct match_subject m;
	const struct rules_rule *fb;

	match_subject_init(&m, ev, buf);
	for (size_t o = 0; o < sizeof(order) / sizeof(order[0]); o++) {
		const struct rules_span *sp = &p->span[ev->kind][order[o]];

		for (uint32_t i = 0; i < sp->count; i++) {
			const struct rules_rule *r = rules_rule_at(p, sp->first + i);

			if ((scope->rule_layer && scope->rule_layer[sp->first + i] > scope->layer) ||
			    r->twin || !match_rule(p, (enum rules_kind)r->kind, r, &m))
				continue;
			*id = rules_string(p, r->id);
			return order[o];
		}
	}
	fb = rules_fallback(p, ev);
	if (ev->kind == RULES_KIND_EXEC) {
		*id = scope->exec_allow_list ? "exec.not-allowed" : "exec.fallback";
		return scope->exec_allow_list ? RULES_ACTION_DENY : RULES_ACTION_ALLOW;
	}
	*id = rules_string(p, fb->id);
	return (enum rules_action)fb->action;
}

/* Decide one expanded test event; returns 1 when it failed. */
static int test_decide(struct load_ctx *ctx, const struct load_layer *layer, const char *kp,
		       const struct rules_policy *p, const struct test_scope *scope,
		       struct test_probe *probe, struct test_event *t, const char *expect)
{
	struct rules_verdict v;
	const char *got, *id;

	t->ev.lineage = t->n_under ? &t->under : NULL;
	t->ev.n_lineage = t->n_under;
	if ((unsigned)t->ev.kind >= RULES_KIND_COUNT || rules_decide(p, &t->ev, &v) < 0) {
		error_at(ctx, layer, kp, false, "the engine could not decide this test");
		return 1;
	}
	if (probe && test_probe_hit(p, probe, &t->ev))
		probe->hit = true;
	if (scope->full && !(v.rule && v.rule->twin)) {
		got = rules_action_name(v.action);
		id = v.rule ? rules_string(p, v.rule->id) : "?";
	} else {
		got = rules_action_name(test_decide_scoped(p, scope, &t->ev, &id));
	}
	if (!strcmp(got, expect))
		return 0;
	error_at(ctx, layer, kp, false, "expected %s, got %s (rule %s)", expect, got, id);
	return 1;
}

/* T is scratch space shared by the tests of one run: not zeroed whole,
 * since its buffers are read only once written, and clearing (or even
 * allocating) 12 KiB per test was a good part of a load. */
static size_t test_run(struct load_ctx *ctx, const struct load_layer *layer, const char *kp,
		       const json_t *test, const struct rules_policy *p, const struct test_scope *scope,
		       struct test_probe *probe, struct test_event *t)
{
	const char *expect = json_string_value(json_object_get(test, "expect"));
	struct vars_result res = { 0 };
	char msg[MSG_SIZE], ekp[KP_SIZE];
	size_t kp_len = error_kp_str(ekp, sizeof(ekp), 0, kp);
	const json_t *v, *under = json_object_get(test, "under");
	const char **under_argv = NULL;
	size_t failed = 0;

	memset(&t->ev, 0, sizeof(t->ev));
	msg[0] = '\0';
	t->n_under = 0;
	if (json_array_size(under)) {
		/* As "exec" names a program, without variables. */
		size_t n = json_array_size(under);
		const char *prog = json_string_value(json_array_get(under, 0));

		under_argv = calloc(n + 1, sizeof(*under_argv));
		if (!under_argv) {
			error_fmt(msg, MSG_SIZE, "out of memory");
			goto bad;
		}
		for (size_t i = 0; i < n; i++)
			under_argv[i] = json_string_value(json_array_get(under, i));
		snprintf(t->under_exe, sizeof(t->under_exe), "%s%s",
			 prog && strchr(prog, '/') ? "" : "/usr/bin/", prog ? prog : "");
		vars_normalize(t->under_exe);
		memset(&t->under, 0, sizeof(t->under));
		t->under.kind = RULES_KIND_EXEC;
		t->under.exe = t->under_exe;
		t->under.argv = under_argv;
		t->under.argc = n;
		t->n_under = 1;
	}
	if ((v = json_object_get(test, "exec"))) {
		size_t n = json_array_size(v);
		char **argv = calloc(n + 1, sizeof(char *));
		bool dropped = false;

		if (!argv) {
			error_fmt(msg, MSG_SIZE, "out of memory");
			goto bad;
		}
		for (size_t i = 0; i < n && !msg[0] && !dropped; i++) {
			error_kp_index(ekp, sizeof(ekp), error_kp_str(ekp, sizeof(ekp), kp_len, ".exec"),
				       i);
			if (vars_expand(ctx->vars, json_string_value(json_array_get(v, i)), 0, &res,
					msg, MSG_SIZE) < 0)
				break;
			if (!res.n)
				dropped = true;
			else
				argv[i] = strdup(res.v[0]);
			vars_result_free(&res);
		}
		if (!msg[0] && !dropped && argv[0]) {
			/* A test names a program as a user would; the engine
			 * gets a resolved path, here /usr/bin/NAME. */
			if (strchr(argv[0], '/'))
				snprintf(t->exe, sizeof(t->exe), "%s", argv[0]);
			else
				snprintf(t->exe, sizeof(t->exe), "/usr/bin/%s", argv[0]);
			vars_normalize(t->exe);
			t->ev.kind = RULES_KIND_EXEC;
			t->ev.exe = t->exe;
			t->ev.argv = (const char *const *)argv;
			t->ev.argc = n;
			failed += (size_t)test_decide(ctx, layer, kp, p, scope, probe, t, expect);
		}
		for (size_t i = 0; i < n; i++)
			free(argv[i]);
		free(argv);
		if (msg[0])
			goto bad;
		goto out;
	}
	if ((v = json_object_get(test, "connect")) || (v = json_object_get(test, "bind"))) {
		bool bind = json_object_get(test, "bind") == v;

		error_kp_str(ekp, sizeof(ekp), kp_len, bind ? ".bind" : ".connect");
		if (vars_expand(ctx->vars, json_string_value(v), VARS_RESOLVERS, &res, msg,
				MSG_SIZE) < 0)
			goto bad;
		for (size_t i = 0; i < res.n; i++) {
			memset(&t->ev, 0, sizeof(t->ev));
			t->ev.kind = RULES_KIND_NET;
			if (test_connect(res.v[i], t, msg) < 0)
				goto bad;
			if (bind && (t->ev.family == AF_UNIX || t->ev.family == 0)) {
				error_fmt(msg, MSG_SIZE, "a bind test names an address and port "
					  "(\"0.0.0.0:8000\", \"[::1]:8000\"), got \"%s\"", res.v[i]);
				goto bad;
			}
			t->ev.bind = bind;
			/* A local destination is a server's: this session's with
			 * "session": true, else one started outside it. */
			if (rules_net_local(&t->ev))
				t->ev.endpoint = json_is_true(json_object_get(test, "session")) ?
							 RULES_ENDPOINT_SESSION : RULES_ENDPOINT_OUTSIDE;
			failed += (size_t)test_decide(ctx, layer, kp, p, scope, probe, t, expect);
		}
		goto out;
	}
	v = json_object_get(test, "write");
	t->ev.kind = v ? RULES_KIND_WRITE : RULES_KIND_READ;
	if (!v)
		v = json_object_get(test, "read");
	error_kp_str(ekp, sizeof(ekp), kp_len, t->ev.kind == RULES_KIND_WRITE ? ".write" : ".read");
	if (vars_expand(ctx->vars, json_string_value(v), 0, &res, msg, MSG_SIZE) < 0)
		goto bad;
	if (res.n) {
		if (res.v[0][0] != '/' || strlen(res.v[0]) >= sizeof(t->path)) {
			error_fmt(msg, MSG_SIZE, "test path \"%s\" must be absolute", res.v[0]);
			goto bad;
		}
		snprintf(t->path, sizeof(t->path), "%s", res.v[0]);
		vars_normalize(t->path);
		t->ev.path = t->path;
		failed += (size_t)test_decide(ctx, layer, kp, p, scope, probe, t, expect);
	}
	goto out;
bad:
	error_at(ctx, layer, ekp, false, "%s", msg);
	failed++;
out:
	vars_result_free(&res);
	free(under_argv);
	t->n_under = 0;
	return failed;
}

/* True when a rule of LAYER has "overrides". */
static bool layer_has_overrides(const struct load_layer *layer)
{
	for (int k = 0; k < RULES_KIND_COUNT; k++) {
		const json_t *list = json_object_get(json_object_get(layer->root, kind_names[k]),
						     "allow");
		const json_t *rule;
		size_t i;

		json_array_foreach(list, i, rule)
			if (json_is_object(rule) && json_object_get(rule, "overrides"))
				return true;
	}
	return false;
}

/* True when LAYER has an exec allow rule that makes an allow-list (one
 * without "overrides": comp_policy_has_exec_allow()). */
static bool layer_has_exec_allow(const struct load_layer *layer)
{
	const json_t *list = json_object_get(json_object_get(layer->root, "exec"), "allow");
	const json_t *rule;
	size_t i;

	json_array_foreach(list, i, rule)
		if (json_is_string(rule) || (json_is_object(rule) && !json_object_get(rule, "overrides")))
			return true;
	return false;
}

/* The layer of each rule of P, from its origin ("FILE:LINE:COL"); 255
 * for the command line's.  Malloc'ed; NULL when out of memory. */
static uint8_t *test_rule_layers(const struct load_ctx *ctx, const struct rules_policy *p)
{
	uint8_t *v = malloc(p->rules_count + 1);

	if (!v)
		return NULL;
	for (uint32_t i = 0; i < p->rules_count; i++) {
		const char *origin = rules_string(p, rules_rule_at(p, i)->origin);
		size_t best = 0;

		v[i] = 255;
		for (size_t l = 0; l < ctx->n_layers && l < 255; l++) {
			const char *d = ctx->layers[l]->display;
			size_t n = strlen(d);

			if (n > best && strncmp(origin, d, n) == 0 && origin[n] == ':') {
				best = n;
				v[i] = (uint8_t)l;
			}
		}
	}
	return v;
}

size_t compile_run_tests(struct load_ctx *ctx, const struct rules_policy *p, bool *extra_hit)
{
	struct test_probe probe = { 0 }, *pr = NULL;
	struct test_event *t = NULL;
	size_t failed = 0, last_overrides = 0;
	bool any_overrides = false, exec_allow_list = false;
	struct rules_policy *own = NULL;
	uint8_t *p_layers = NULL, *own_layers = NULL;

	/* A later layer's "overrides" exempt paths from the rules an earlier
	 * layer tests (default's "${ROOT}/.git/config" is denied): such a
	 * layer's tests run on a block compiled without them. */
	for (size_t l = 0; l < ctx->n_layers; l++)
		if (layer_has_overrides(ctx->layers[l])) {
			last_overrides = l;
			any_overrides = true;
		}

	if (extra_hit) {
		*extra_hit = false;
		probe.rules = malloc((p->rules_count + 1) * sizeof(*probe.rules));
		if (!probe.rules) {
			*extra_hit = true; /* cannot tell: decide without them */
			return 0;
		}
		for (uint32_t i = 0; i < p->rules_count; i++)
			if (!strcmp(rules_string(p, rules_rule_at(p, i)->origin), "<command line>"))
				probe.rules[probe.n++] = i;
		pr = &probe;
	}

	for (size_t l = 0; l < ctx->n_layers; l++) {
		const struct load_layer *layer = ctx->layers[l];
		const json_t *tests = json_object_get(layer->root, "tests");
		struct test_scope scope = { .full = l + 1 == ctx->n_layers, .layer = l };
		const struct rules_policy *bp = p;
		json_t *test;
		size_t i;

		exec_allow_list |= layer_has_exec_allow(layer);
		scope.exec_allow_list = exec_allow_list;
		if (!json_array_size(tests))
			continue;
		if (!scope.full && any_overrides && l < last_overrides) {
			free(own);
			free(own_layers);
			own = NULL;
			own_layers = NULL;
			if (compile_policy_upto(ctx, NULL, 0, l, &own) < 0 ||
			    !(own_layers = test_rule_layers(ctx, own))) {
				failed++;
				goto out;
			}
			bp = own;
			scope.rule_layer = own_layers;
		} else if (!scope.full) {
			if (!p_layers && !(p_layers = test_rule_layers(ctx, p))) {
				failed++;
				goto out;
			}
			scope.rule_layer = p_layers;
		}
		json_array_foreach(tests, i, test) {
			char kp[KP_SIZE];

			error_kp_index(kp, sizeof(kp), error_kp_str(kp, sizeof(kp), 0, "tests"), i);
			if (!t && !(t = malloc(sizeof(*t)))) {
				error_at(ctx, layer, kp, false, "out of memory");
				failed++;
				continue;
			}
			failed += test_run(ctx, layer, kp, test, bp, &scope, bp == p ? pr : NULL, t);
			if (probe.hit)
				goto out;
		}
	}
out:
	if (extra_hit)
		*extra_hit = probe.hit;
	free(own);
	free(own_layers);
	free(p_layers);
	free(t);
	free(probe.rules);
	return failed;
}
