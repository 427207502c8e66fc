/* deny > alert > allow > the kind's fallback, over the compiled block.
 *
 * The event is prepared once (path normalized, base name and host found)
 * so that the rules only compare.  The normalization buffer lives on this
 * call's stack: no allocation, no global state, safe in the preload shim
 * between fork and exec. */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "rules/match-internal.h"
#include "rules/rules.h"

/* SRC (LEN bytes) as the subject's path: normalized into BUF when it
 * needs it, NULL when it does not fit; FILE: its components' summary too. */
static void subject_path(struct match_subject *m, const char *src, bool file, char *buf)
{
	size_t n = strlen(src);
	bool needs;
	uint64_t comps = 0;

	/* A file's path (most decisions) is scanned once for both. */
	if (file)
		comps = match_path_scan(src, n, &needs);
	else
		needs = match_path_needs_normalize(src, n);
	if (needs) {
		n = match_path_normalize(src, n, buf, MATCH_PATH_MAX);
		src = n == (size_t)-1 ? NULL : buf;
		if (src && file)
			comps = match_path_comps(src, n);
	}
	if (src) {
		const char *slash = memrchr(src, '/', n);

		m->path = src;
		m->path_len = n;
		m->comps = comps;
		m->base = slash ? slash + 1 : src;
		m->base_len = n - (size_t)(m->base - src);
	}
}

void match_subject_init(struct match_subject *m, const struct rules_event *ev, char *buf)
{
	const char *src = NULL;

	memset(m, 0, sizeof(*m));
	m->ev = ev;
	switch (ev->kind) {
	case RULES_KIND_WRITE:
	case RULES_KIND_READ:
		src = ev->path;
		break;
	case RULES_KIND_EXEC:
		src = ev->exe;
		break;
	case RULES_KIND_NET:
		if (ev->family == AF_UNIX && ev->unix_path && ev->unix_path[0] != '@')
			src = ev->unix_path;
		break;
	default:
		break;
	}
	if (src)
		subject_path(m, src, ev->kind == RULES_KIND_WRITE || ev->kind == RULES_KIND_READ, buf);
	if (ev->kind == RULES_KIND_NET && ev->host) {
		m->host = ev->host;
		m->host_len = strlen(ev->host);
		if (m->host_len > 1 && m->host[m->host_len - 1] == '.')
			m->host_len--;
	}
}

/* ---- exec identity (rules.h, struct rules_event) ---- */

/* The program, its package's name, argv[0]'s name, the script, the
 * script's package name. */
#define DECIDE_EXEC_IDS 5

struct exec_ids {
	struct match_subject id[DECIDE_EXEC_IDS];
	bool allow[DECIDE_EXEC_IDS]; /* allow rules see this one too */
	size_t n;
};

/* One more identity: SRC's path and arguments with another name. */
static void exec_id_named(struct exec_ids *x, const struct match_subject *src, const char *name,
			  bool allow)
{
	size_t n = name ? strlen(name) : 0;

	if (!n || !src->path || (n == src->base_len && memcmp(name, src->base, n) == 0))
		return;
	for (size_t i = 0; i < x->n; i++)
		if (x->id[i].path == src->path && x->id[i].arg0 == src->arg0 &&
		    x->id[i].base_len == n && memcmp(x->id[i].base, name, n) == 0)
			return; /* the same identity already */
	x->id[x->n] = *src;
	x->id[x->n].base = name;
	x->id[x->n].base_len = n;
	x->allow[x->n] = allow;
	x->n++;
}

static const char *exec_base(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

static void exec_ids_init(struct exec_ids *x, const struct rules_event *ev, char *buf, char *sbuf)
{
	struct match_subject script;

	x->n = 1;
	match_subject_init(&x->id[0], ev, buf);
	x->allow[0] = true;
	exec_id_named(x, &x->id[0], ev->exe_name, true);
	if (ev->argv && ev->argc > 0 && ev->argv[0])
		exec_id_named(x, &x->id[0], exec_base(ev->argv[0]), false);
	if (!ev->script || !*ev->script)
		return;
	script = x->id[0];
	script.path = NULL;
	subject_path(&script, ev->script, false, sbuf);
	if (!script.path)
		return;
	script.arg0 = ev->script_arg;
	x->id[x->n] = script;
	x->allow[x->n] = false;
	x->n++;
	exec_id_named(x, &script, ev->script_name, false);
}

bool match_pattern(const struct rules_policy *p, enum rules_kind k,
		   const struct rules_pattern *pat, const struct match_subject *m)
{
	switch (k) {
	case RULES_KIND_WRITE:
	case RULES_KIND_READ:
		return m->path && match_path_pattern(p, pat, m->path, m->path_len, m->comps);
	case RULES_KIND_EXEC:
		return match_argv(p, pat, m);
	case RULES_KIND_NET:
		return match_net(p, pat, m);
	default:
		return false;
	}
}

/* Whether a program of EV's lineage, by any name a deny rule sees, is one
 * of R's "under" patterns.  Its own frame: two path buffers that no rule
 * without "under" pays for. */
__attribute__((noinline)) static bool match_under(const struct rules_policy *p,
						  const struct rules_rule *r,
						  const struct rules_event *ev)
{
	const struct rules_pattern *under =
		(const struct rules_pattern *)((const char *)p + p->patterns_off) + r->under_first;
	char buf[MATCH_PATH_MAX], sbuf[MATCH_PATH_MAX];
	size_t n = ev->n_lineage < RULES_LINEAGE_MAX ? ev->n_lineage : RULES_LINEAGE_MAX;

	/* What ran above the programs kept is not known: fail closed. */
	if (ev->lineage_cut)
		return true;
	for (size_t l = 0; ev->lineage && l < n; l++) {
		struct exec_ids x;

		if (ev->lineage[l].kind != RULES_KIND_EXEC || !ev->lineage[l].exe)
			continue;
		exec_ids_init(&x, &ev->lineage[l], buf, sbuf);
		for (size_t k = 0; k < x.n; k++)
			for (uint32_t i = 0; i < r->under_count; i++)
				if (match_argv(p, &under[i], &x.id[k]))
					return true;
	}
	return false;
}

bool match_rule(const struct rules_policy *p, enum rules_kind k, const struct rules_rule *r,
		const struct match_subject *m)
{
	const struct rules_pattern *unless;

	/* The file kinds are most of the traffic: call their matcher
	 * directly rather than through the kind switch. */
	if (k == RULES_KIND_WRITE || k == RULES_KIND_READ) {
		if (!m->path || !match_path_pattern(p, &r->pat, m->path, m->path_len, m->comps))
			return false;
	} else if (!match_pattern(p, k, &r->pat, m)) {
		return false;
	}
	if (r->under_count && !match_under(p, r, m->ev))
		return false;
	if (r->unless_count == 0)
		return true;
	unless = (const struct rules_pattern *)((const char *)p + p->patterns_off) + r->unless_first;
	for (uint32_t i = 0; i < r->unless_count; i++)
		if (match_pattern(p, k, &unless[i], m))
			return false;
	return true;
}

/* An exec: each rule against every identity it may see, in policy
 * order (the first rule that any identity matches decides).  Its own
 * frame: the script's path needs a second buffer, which the file
 * decisions (most of the traffic, also in the preload shim) never pay. */
__attribute__((noinline)) static void decide_exec(const struct rules_policy *p,
						  const struct rules_event *ev,
						  struct rules_verdict *out)
{
	static const enum rules_action order[] = {
		RULES_ACTION_DENY, RULES_ACTION_ALERT, RULES_ACTION_ALLOW,
	};
	char buf[MATCH_PATH_MAX], sbuf[MATCH_PATH_MAX];
	struct exec_ids x;
	const struct rules_rule *r;

	exec_ids_init(&x, ev, buf, sbuf);
	for (size_t o = 0; o < sizeof(order) / sizeof(order[0]); o++) {
		const struct rules_span *sp = &p->span[RULES_KIND_EXEC][order[o]];

		for (uint32_t i = 0; i < sp->count; i++) {
			r = rules_rule_at(p, sp->first + i);
			for (size_t k = 0; k < x.n; k++) {
				if (order[o] == RULES_ACTION_ALLOW && !x.allow[k])
					continue;
				if (match_rule(p, RULES_KIND_EXEC, r, &x.id[k])) {
					out->action = order[o];
					out->rule = r;
					return;
				}
			}
		}
	}
	r = rules_rule_at(p, p->fallback[RULES_KIND_EXEC]);
	out->action = (enum rules_action)r->action;
	out->rule = r;
}

/* BESIDE_CONTENT: the deny rules that judge content are set aside
 * (rules.h, rules_decide_call_beside_content). */
static int decide_one(const struct rules_policy *p, const struct rules_event *ev,
		      bool beside_content, struct rules_verdict *out)
{
	static const enum rules_action order[] = {
		RULES_ACTION_DENY, RULES_ACTION_ALERT, RULES_ACTION_ALLOW,
	};
	char buf[MATCH_PATH_MAX];
	struct match_subject m;
	enum rules_kind k;
	const struct rules_rule *r;
	bool file;

	if (!p || !ev || !out || (unsigned)ev->kind >= RULES_KIND_COUNT)
		return -EINVAL;
	k = ev->kind;
	if (k == RULES_KIND_EXEC) {
		decide_exec(p, ev, out);
		return 0;
	}
	match_subject_init(&m, ev, buf);
	file = k == RULES_KIND_WRITE || k == RULES_KIND_READ;
	for (size_t o = 0; o < sizeof(order) / sizeof(order[0]); o++) {
		const struct rules_span *sp = &p->span[k][order[o]];

		for (uint32_t i = 0; i < sp->count; i++) {
			r = rules_rule_at(p, sp->first + i);
			if ((file && !match_path_may(&r->pat, m.comps)) ||
			    (beside_content && r->content))
				continue;
			if (match_rule(p, k, r, &m)) {
				out->action = order[o];
				out->rule = r;
				return 0;
			}
		}
	}
	r = rules_fallback(p, ev);
	out->action = (enum rules_action)r->action;
	out->rule = r;
	return 0;
}

const struct rules_rule *rules_fallback(const struct rules_policy *p, const struct rules_event *ev)
{
	if (ev->kind == RULES_KIND_NET) {
		if (ev->bind && rules_net_bind_loopback(ev))
			return rules_rule_at(p, p->fallback_net[RULES_NET_FB_BIND_LOOPBACK]);
		if (ev->bind)
			return rules_rule_at(p, p->fallback_net[RULES_NET_FB_INBOUND]);
		if (rules_net_local(ev))
			return rules_rule_at(p, p->fallback_net[RULES_NET_FB_LOCAL]);
	}
	return rules_rule_at(p, p->fallback[ev->kind]);
}

bool rules_is_fallback(const struct rules_policy *p, const struct rules_rule *r)
{
	if (!r)
		return false;
	for (int k = 0; k < RULES_KIND_COUNT; k++)
		if (r == rules_rule_at(p, p->fallback[k]))
			return true;
	for (int i = 0; i < RULES_NET_FALLBACKS; i++)
		if (r == rules_rule_at(p, p->fallback_net[i]))
			return true;
	return false;
}

int rules_decide(const struct rules_policy *p, const struct rules_event *ev,
		 struct rules_verdict *out)
{
	return decide_one(p, ev, false, out);
}

bool rules_write_admits(const struct rules_policy *p, const char *path)
{
	static const enum rules_action admit[] = { RULES_ACTION_ALLOW, RULES_ACTION_ALERT };
	struct rules_event ev = { .kind = RULES_KIND_WRITE, .path = path };
	char buf[MATCH_PATH_MAX];
	struct match_subject m;

	if (!p || !path)
		return true;
	if (rules_rule_at(p, p->fallback[RULES_KIND_WRITE])->action != RULES_ACTION_DENY)
		return true;
	match_subject_init(&m, &ev, buf);
	if (!m.path)
		return true; /* too long to tell: as if admitted */
	for (size_t a = 0; a < sizeof(admit) / sizeof(admit[0]); a++) {
		const struct rules_span *sp = &p->span[RULES_KIND_WRITE][admit[a]];

		for (uint32_t i = 0; i < sp->count; i++)
			if (match_rule(p, RULES_KIND_WRITE, rules_rule_at(p, sp->first + i), &m))
				return true;
	}
	return false;
}


static void decide_call(const struct rules_policy *p, const struct rules_event *ev, size_t n,
			const bool *explicit_deny_only, bool beside_content,
			struct rules_call_verdict *out)
{
	memset(out, 0, sizeof(*out));
	out->action = RULES_ACTION_ALLOW;
	if (n > RULES_CALL_EVENTS)
		n = RULES_CALL_EVENTS;
	for (size_t i = 0; i < n; i++) {
		struct rules_verdict v;

		if (decide_one(p, &ev[i], beside_content, &v) < 0) {
			v.action = RULES_ACTION_DENY;
			v.rule = NULL;
		} else if (explicit_deny_only && explicit_deny_only[i] &&
			   v.rule == rules_fallback(p, &ev[i])) {
			v.action = RULES_ACTION_ALLOW;
		}
		if (i == 0 || v.action > out->action) {
			out->action = v.action;
			out->rule = v.rule;
			out->event = i;
		}
	}
	out->effective = rules_effective(p, out->action);
}

size_t rules_add_name_reads(struct rules_event *ev, size_t n, unsigned reads, const char *path,
			    const char *path2)
{
	const char *const named[2] = { (reads & RULES_READS_PATH) ? path : NULL,
				       (reads & RULES_READS_PATH2) ? path2 : NULL };

	for (size_t i = 0; i < 2 && n < RULES_CALL_EVENTS; i++) {
		if (!named[i])
			continue;
		memset(&ev[n], 0, sizeof(ev[n]));
		ev[n].kind = RULES_KIND_READ;
		ev[n++].path = named[i];
	}
	return n;
}

void rules_decide_call(const struct rules_policy *p, const struct rules_event *ev, size_t n,
		       const bool *explicit_deny_only, struct rules_call_verdict *out)
{
	decide_call(p, ev, n, explicit_deny_only, false, out);
}

void rules_decide_call_beside_content(const struct rules_policy *p, const struct rules_event *ev,
				      size_t n, const bool *explicit_deny_only,
				      struct rules_call_verdict *out)
{
	decide_call(p, ev, n, explicit_deny_only, true, out);
}

enum rules_action rules_effective(const struct rules_policy *p, enum rules_action a)
{
	if (a == RULES_ACTION_DENY && p && p->mode == RULES_MODE_AUDIT)
		return RULES_ACTION_ALERT;
	return a;
}

bool rules_env_dropped(const struct rules_policy *p, const char *name, size_t name_len)
{
	const rules_str *strs;

	if (!p || !name)
		return false;
	strs = (const rules_str *)((const char *)p + p->strs_off);
	for (uint32_t i = 0; i < p->env_drop_count; i++) {
		const char *g = rules_string(p, strs[p->env_drop_first + i]);

		if (match_glob_n(g, strlen(g), name, name_len, 0))
			return true;
	}
	return false;
}

/* Switches rather than tables of pointers: no relocated data in a
 * library that the preload shim carries into every process. */
const char *rules_kind_name(enum rules_kind k)
{
	switch (k) {
	case RULES_KIND_EXEC:
		return "exec";
	case RULES_KIND_WRITE:
		return "write";
	case RULES_KIND_READ:
		return "read";
	case RULES_KIND_NET:
		return "net";
	default:
		return "unknown";
	}
}

const char *rules_script_name(enum rules_script s)
{
	switch (s) {
	case RULES_SCRIPT_DOWNLOAD_AND_RUN:
		return "download-and-run";
	default:
		return NULL;
	}
}

const char *rules_action_name(enum rules_action a)
{
	switch (a) {
	case RULES_ACTION_ALLOW:
		return "allow";
	case RULES_ACTION_ALERT:
		return "alert";
	case RULES_ACTION_DENY:
		return "deny";
	default:
		return "unknown";
	}
}
