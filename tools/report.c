/* agenttrace-report LOG [--format F] [-o FILE]: options, the model built
 * from the log, and the dispatch to one format (report-FORMAT.c). */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/exitcode.h"
#include "lib/log.h"
#include "lib/xalloc.h"
#include "tools/logread.h"
#include "tools/report.h"

/* Beyond this many, an alert that repeats a finding already seen is only
 * counted: a loop hitting one denial a million times says it once. */
#define REPORT_KEEP_ALERTS 10000
#define REPORT_BAD_SHOWN 3

/* ---- a string/integer -> index table (open addressing) ---- */

struct report_map {
	char **keys;
	size_t *vals;
	size_t cap, n;
};

static uint64_t report_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

static size_t *report_map_slot(struct report_map *m, const char *key, bool insert)
{
	size_t i;

	if (insert && (m->n + 1) * 2 > m->cap) {
		struct report_map g = { 0 };

		g.cap = m->cap ? m->cap * 2 : 64;
		g.keys = xcalloc(g.cap, sizeof(*g.keys));
		g.vals = xcalloc(g.cap, sizeof(*g.vals));
		for (size_t j = 0; j < m->cap; j++)
			if (m->keys[j]) {
				i = report_hash(m->keys[j]) & (g.cap - 1);
				while (g.keys[i])
					i = (i + 1) & (g.cap - 1);
				g.keys[i] = m->keys[j];
				g.vals[i] = m->vals[j];
			}
		g.n = m->n;
		free(m->keys);
		free(m->vals);
		*m = g;
	}
	if (!m->cap)
		return NULL;
	i = report_hash(key) & (m->cap - 1);
	while (m->keys[i]) {
		if (strcmp(m->keys[i], key) == 0)
			return &m->vals[i];
		i = (i + 1) & (m->cap - 1);
	}
	if (!insert)
		return NULL;
	m->keys[i] = xstrdup(key);
	m->vals[i] = REPORT_NONE;
	m->n++;
	return &m->vals[i];
}

static void report_map_free(struct report_map *m)
{
	for (size_t i = 0; i < m->cap; i++)
		free(m->keys[i]);
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

/* ---- strings ---- */

static char *report_dup(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

static bool report_shell_plain(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
			    "_./:=@%+,-", *s))
			return false;
	return true;
}

/* argv as a shell would read it back; element 0 replaced by first when
 * given.  Capped: a command line in a report is for reading. */
static char *report_cmdline(const json_t *argv, const char *first)
{
	size_t n = json_array_size(argv), cap = 256, len = 0;
	char *out = xmalloc(cap);

	out[0] = '\0';
	for (size_t i = 0; i < n || (i == 0 && first); i++) {
		const char *a = i == 0 && first ? first : logread_argv_at(argv, i);

		if (!a)
			a = "";
		if (len > 4000) {
			len += (size_t)snprintf(out + len, cap - len, " ...");
			break;
		}
		for (;;) {
			size_t need = len + strlen(a) * 4 + 8;

			if (need < cap)
				break;
			cap *= 2;
			out = xrealloc(out, cap);
		}
		if (i)
			out[len++] = ' ';
		if (report_shell_plain(a)) {
			len += (size_t)sprintf(out + len, "%s", a);
		} else {
			out[len++] = '\'';
			for (const char *p = a; *p; p++) {
				if (*p == '\'') {
					memcpy(out + len, "'\\''", 4);
					len += 4;
				} else {
					out[len++] = *p;
				}
			}
			out[len++] = '\'';
			out[len] = '\0';
		}
	}
	return out;
}

const char *report_kind_name(enum report_kind k)
{
	static const char *const names[REPORT_KIND_COUNT] = {
		"exec", "write", "read", "net", "syscall", "limit", "other",
	};

	return k < REPORT_KIND_COUNT ? names[k] : "other";
}

static enum report_kind report_kind_of(const char *s)
{
	for (int k = 0; s && k < REPORT_KIND_OTHER; k++)
		if (strcmp(s, report_kind_name((enum report_kind)k)) == 0)
			return (enum report_kind)k;
	return REPORT_KIND_OTHER;
}

/* The object of a record, without its kind: a path, an address, a
 * command line. */
static char *report_object(const struct logrec *rec)
{
	enum report_kind k = report_kind_of(rec->kind);

	if (strcmp(rec->event, "warning") == 0)
		return xstrdup(rec->rule ? rec->rule : "warning");
	switch (k) {
	case REPORT_KIND_EXEC:
		if (rec->target_argv && json_array_size(rec->target_argv))
			return report_cmdline(rec->target_argv, rec->target);
		if (rec->target)
			return xstrdup(rec->target);
		break;
	case REPORT_KIND_WRITE:
	case REPORT_KIND_READ:
		if (rec->path && rec->path2)
			return xasprintf("%s -> %s", rec->path, rec->path2);
		if (rec->path)
			return xstrdup(rec->path);
		break;
	case REPORT_KIND_NET:
		if (rec->family && strcmp(rec->family, "unix") == 0)
			return xasprintf("unix:%s", rec->addr ? rec->addr : "(unnamed)");
		if (rec->host && rec->addr && rec->port >= 0)
			return xasprintf(strchr(rec->addr, ':') ? "%s:%ld ([%s])" : "%s:%ld (%s)",
					 rec->host, rec->port, rec->addr);
		if (rec->addr && rec->port >= 0)
			return xasprintf(strchr(rec->addr, ':') ? "[%s]:%ld" : "%s:%ld", rec->addr,
					 rec->port);
		if (rec->addr)
			return xstrdup(rec->addr);
		if (rec->host)
			return xstrdup(rec->host);
		break;
	default:
		break;
	}
	if (rec->syscall)
		return xstrdup(rec->syscall);
	return xstrdup(rec->rule ? rec->rule : "?");
}

/* ---- processes ---- */

struct report_build {
	struct report *r;
	struct report_map pids;     /* "pid" -> latest proc */
	struct report_map findings; /* "action\x1frule\x1fobject" -> finding */
	struct report_map rules;    /* id -> rule */
	struct report_map evidence; /* copy -> evidence */
	size_t cap_procs, cap_alerts, cap_findings, cap_rules;
	size_t bad_shown;
};

static void report_proc_set_program(struct report_proc *p, const struct logrec *rec)
{
	if (!rec->exe && !rec->argv)
		return;
	free(p->exe);
	free(p->cmdline);
	p->exe = report_dup(rec->exe);
	p->cmdline = report_cmdline(rec->argv, NULL);
}

static size_t report_proc_for(struct report_build *b, const struct logrec *rec)
{
	struct report *r = b->r;
	char key[32];
	size_t *slot, idx;
	struct report_proc *p;
	bool reuse;

	snprintf(key, sizeof(key), "%ld", rec->pid);
	slot = report_map_slot(&b->pids, key, true);
	/* A pid seen again after its exit record belongs to a new process. */
	reuse = *slot != REPORT_NONE && r->procs[*slot].exited && strcmp(rec->event, "exit") != 0;
	if (*slot != REPORT_NONE && !reuse) {
		p = &r->procs[*slot];
		if (!p->exe && rec->exe)
			report_proc_set_program(p, rec);
		return *slot;
	}
	if (r->n_procs == b->cap_procs) {
		b->cap_procs = b->cap_procs ? b->cap_procs * 2 : 64;
		r->procs = xrealloc(r->procs, b->cap_procs * sizeof(*r->procs));
	}
	idx = r->n_procs++;
	*slot = idx;
	p = &r->procs[idx];
	memset(p, 0, sizeof(*p));
	p->pid = rec->pid;
	p->ppid = rec->ppid;
	p->parent = REPORT_NONE;
	p->start_ms = p->end_ms = -1;
	p->exit_code = -1;
	p->first_line = rec->line;
	report_proc_set_program(p, rec);
	return idx;
}

static void report_proc_event(struct report_build *b, size_t idx, const struct logrec *rec)
{
	struct report_proc *p = &b->r->procs[idx];

	if (rec->time_ms >= 0) {
		if (p->start_ms < 0 || rec->time_ms < p->start_ms)
			p->start_ms = rec->time_ms;
		if (!p->exited && rec->time_ms > p->end_ms)
			p->end_ms = rec->time_ms;
	}
	if (strcmp(rec->event, "exec") == 0) {
		struct report_exec *e;

		p->execs = xrealloc(p->execs, (p->n_execs + 1) * sizeof(*p->execs));
		e = &p->execs[p->n_execs++];
		e->exe = report_dup(rec->exe);
		e->cmdline = report_cmdline(rec->argv, NULL);
		e->t_ms = rec->time_ms;
		report_proc_set_program(p, rec);
	} else if (strcmp(rec->event, "exit") == 0 && !p->exited) {
		p->exited = true;
		p->exit_code = rec->exit_code;
		p->signal = rec->signal;
		if (rec->time_ms >= 0)
			p->end_ms = rec->time_ms;
	}
}

/* Parents known only at the end (an alert-only log names a child before
 * its parent); never a cycle, which pid reuse could make. */
static void report_link_procs(struct report_build *b)
{
	struct report *r = b->r;

	for (size_t i = 0; i < r->n_procs; i++) {
		struct report_proc *p = &r->procs[i];
		char key[32];
		size_t *slot, cand, up, steps;

		if (p->parent != REPORT_NONE || p->ppid <= 0)
			continue;
		snprintf(key, sizeof(key), "%ld", p->ppid);
		slot = report_map_slot(&b->pids, key, false);
		if (!slot || *slot == i)
			continue;
		cand = *slot;
		for (up = cand, steps = 0; up != REPORT_NONE && steps <= r->n_procs; steps++) {
			if (up == i)
				break;
			up = r->procs[up].parent;
		}
		if (up == i)
			continue;
		p->parent = cand;
	}
	for (size_t i = 0; i < r->n_procs; i++) {
		size_t par = r->procs[i].parent;
		struct report_proc *pp;

		if (par == REPORT_NONE)
			continue;
		pp = &r->procs[par];
		pp->children = xrealloc(pp->children, (pp->n_children + 1) * sizeof(size_t));
		pp->children[pp->n_children++] = i;
	}
}

size_t report_tree_order(const struct report *r, size_t *order, unsigned *depth)
{
	size_t n = 0, top = 0;
	size_t *stack = xmalloc((r->n_procs + 1) * sizeof(*stack));
	unsigned *sdepth = xmalloc((r->n_procs + 1) * sizeof(*sdepth));

	for (size_t root = 0; root < r->n_procs; root++) {
		if (r->procs[root].parent != REPORT_NONE)
			continue;
		stack[top] = root;
		sdepth[top++] = 0;
		while (top) {
			size_t i = stack[--top];
			unsigned d = sdepth[top];
			const struct report_proc *p = &r->procs[i];

			order[n] = i;
			depth[n++] = d;
			/* Children pushed last-first so that they come out in
			 * log order. */
			for (size_t c = p->n_children; c-- > 0;) {
				stack[top] = p->children[c];
				sdepth[top++] = d + 1;
			}
		}
	}
	free(stack);
	free(sdepth);
	return n;
}

/* ---- alerts, findings, rules ---- */

static void report_frames(struct report_alert *a, const json_t *bt)
{
	size_t n = json_array_size(bt);

	if (!n)
		return;
	a->frames = xcalloc(n, sizeof(*a->frames));
	for (size_t i = 0; i < n; i++) {
		const json_t *f = json_array_get(bt, i), *pc, *off;
		struct report_frame *fr;

		if (!json_is_object(f))
			continue;
		fr = &a->frames[a->n_frames++];
		pc = json_object_get(f, "pc");
		if (json_is_integer(pc))
			fr->pc = xasprintf("0x%llx", (unsigned long long)json_integer_value(pc));
		else
			fr->pc = xstrdup(json_is_string(pc) ? json_string_value(pc) : "?");
		fr->sym = report_dup(json_string_value(json_object_get(f, "sym")));
		off = json_object_get(f, "offset");
		fr->offset = json_is_integer(off) ? (long long)json_integer_value(off) : -1;
		fr->object = report_dup(json_string_value(json_object_get(f, "object")));
	}
}

static size_t report_rule_for(struct report_build *b, const char *id, const struct logrec *rec)
{
	struct report *r = b->r;
	size_t *slot = report_map_slot(&b->rules, id, true);
	struct report_rule *ru;

	if (*slot != REPORT_NONE) {
		ru = &r->rules[*slot];
		if (!ru->why && rec->why && *rec->why)
			ru->why = xstrdup(rec->why);
		return *slot;
	}
	if (r->n_rules == b->cap_rules) {
		b->cap_rules = b->cap_rules ? b->cap_rules * 2 : 32;
		r->rules = xrealloc(r->rules, b->cap_rules * sizeof(*r->rules));
	}
	*slot = r->n_rules;
	ru = &r->rules[r->n_rules++];
	memset(ru, 0, sizeof(*ru));
	ru->id = xstrdup(id);
	ru->why = rec->why && *rec->why ? xstrdup(rec->why) : NULL;
	ru->kind = strcmp(rec->event, "warning") == 0 ? REPORT_KIND_OTHER : report_kind_of(rec->kind);
	ru->kind_name = xstrdup(strcmp(rec->event, "warning") == 0 ? "warning" :
				rec->kind ? rec->kind : "other");
	ru->first_alert = REPORT_NONE;
	return *slot;
}

static void report_alert_add(struct report_build *b, const struct logrec *rec, size_t proc)
{
	struct report *r = b->r;
	bool warning = strcmp(rec->event, "warning") == 0;
	bool deny = !warning && rec->action && strcmp(rec->action, "deny") == 0;
	enum report_kind k = report_kind_of(rec->kind);
	const char *rule = rec->rule ? rec->rule : "?";
	char *object = report_object(rec), *key;
	size_t *fslot, ri;
	struct report_alert *a;
	struct report_finding *f;

	if (warning)
		r->n_warnings++;
	else
		r->counts[k][deny ? 0 : 1]++;
	if (proc != REPORT_NONE) {
		if (deny)
			r->procs[proc].n_deny++;
		else if (!warning)
			r->procs[proc].n_alert++;
	}
	ri = report_rule_for(b, rule, rec);
	if (deny)
		r->rules[ri].deny++;
	else if (!warning)
		r->rules[ri].alert++;

	key = xasprintf("%s\x1f%s\x1f%s\x1f%s", warning ? "warning" : rec->action ? rec->action : "",
			rule, rec->kind ? rec->kind : "", object);
	fslot = report_map_slot(&b->findings, key, true);
	free(key);
	if (*fslot != REPORT_NONE) {
		f = &r->findings[*fslot];
		if (r->alerts[f->first].pid != rec->pid)
			f->n_pids++;
		f->count++;
		if (r->n_alerts >= REPORT_KEEP_ALERTS) {
			free(object);
			return;
		}
	}
	if (r->n_alerts == b->cap_alerts) {
		b->cap_alerts = b->cap_alerts ? b->cap_alerts * 2 : 64;
		r->alerts = xrealloc(r->alerts, b->cap_alerts * sizeof(*r->alerts));
	}
	a = &r->alerts[r->n_alerts];
	memset(a, 0, sizeof(*a));
	a->line = rec->line;
	a->seq = rec->seq;
	a->time = report_dup(rec->time);
	a->t_ms = rec->time_ms;
	a->event = xstrdup(rec->event);
	a->action = warning ? NULL : xstrdup(rec->action ? rec->action : "alert");
	a->mode = report_dup(rec->mode);
	a->kind = warning ? REPORT_KIND_OTHER : k;
	a->kind_name = xstrdup(warning ? "warning" : rec->kind ? rec->kind : "other");
	a->syscall = report_dup(rec->syscall);
	a->object = object;
	a->path = report_dup(rec->path);
	a->path2 = report_dup(rec->path2);
	a->target = report_dup(rec->target);
	a->host = report_dup(rec->host);
	a->port = rec->port;
	a->rule = xstrdup(rule);
	a->why = rec->why && *rec->why ? xstrdup(rec->why) : NULL;
	a->suggest = report_dup(rec->suggest);
	a->err = report_dup(rec->err);
	a->script = report_dup(rec->script);
	a->context = report_dup(rec->context);
	a->pid = rec->pid;
	a->exe = report_dup(rec->exe);
	a->cmdline = report_cmdline(rec->argv, NULL);
	a->proc = proc;
	report_frames(a, rec->backtrace);
	if (r->rules[ri].first_alert == REPORT_NONE)
		r->rules[ri].first_alert = r->n_alerts;
	if (*fslot == REPORT_NONE) {
		if (r->n_findings == b->cap_findings) {
			b->cap_findings = b->cap_findings ? b->cap_findings * 2 : 32;
			r->findings = xrealloc(r->findings, b->cap_findings * sizeof(*r->findings));
		}
		*fslot = r->n_findings;
		f = &r->findings[r->n_findings++];
		f->first = r->n_alerts;
		f->count = 1;
		f->n_pids = 1;
	}
	r->n_alerts++;
}

static long long report_int(const json_t *o, const char *key, long long dflt)
{
	const json_t *v = json_object_get(o, key);

	return json_is_integer(v) ? (long long)json_integer_value(v) : dflt;
}

static void report_egress_free(struct report *r)
{
	for (size_t i = 0; i < r->n_egress; i++) {
		free(r->egress[i].family);
		free(r->egress[i].addr);
		free(r->egress[i].host);
	}
	free(r->egress);
	r->egress = NULL;
	r->n_egress = 0;
}

/* "egress" and "egress_other": entries that are not objects with an
 * address are skipped. */
static void report_summary_egress(struct report *r, const json_t *o)
{
	const json_t *e = json_object_get(o, "egress"), *other = json_object_get(o, "egress_other");
	size_t n = json_array_size(e);

	report_egress_free(r);
	r->has_egress = json_is_array(e);
	r->egress = n ? xcalloc(n, sizeof(*r->egress)) : NULL;
	for (size_t i = 0; i < n; i++) {
		const json_t *d = json_array_get(e, i);
		const char *addr = json_string_value(json_object_get(d, "addr"));
		struct report_dest *x;

		if (!json_is_object(d) || !addr)
			continue;
		x = &r->egress[r->n_egress++];
		x->family = report_dup(json_string_value(json_object_get(d, "family")));
		x->addr = xstrdup(addr);
		x->host = report_dup(json_string_value(json_object_get(d, "host")));
		x->port = (long)report_int(d, "port", -1);
		x->allowed = report_int(d, "allowed", 0);
		x->denied = report_int(d, "denied", 0);
	}
	r->egress_other_allowed = report_int(other, "allowed", 0);
	r->egress_other_denied = report_int(other, "denied", 0);
}

/* The copies REC names: its script's (when one hashes to it) and its
 * program's.  At most REPORT_KEEP_ALERTS copies are listed. */
static void report_evidence_add(struct report *r, struct report_map *seen, const struct logrec *rec)
{
	for (size_t i = 0; i < json_array_size(rec->evidence) && r->n_evidence < REPORT_KEEP_ALERTS; i++) {
		const char *copy = json_string_value(json_array_get(rec->evidence, i)), *base;
		struct report_evidence *e;
		size_t *slot;
		bool script;

		if (!copy)
			continue;
		slot = report_map_slot(seen, copy, true);
		if (*slot != REPORT_NONE)
			continue;
		*slot = r->n_evidence;
		base = logread_base(copy);
		script = rec->script_path && rec->script_sha256 && strcmp(base, rec->script_sha256) == 0;
		r->evidence = xrealloc(r->evidence, (r->n_evidence + 1) * sizeof(*r->evidence));
		e = &r->evidence[r->n_evidence++];
		e->copy = xstrdup(copy);
		e->what = xstrdup(script ? "script" : "program");
		e->path = report_dup(script ? rec->script_path : rec->target ? rec->target : rec->exe);
		e->line = rec->line;
	}
}

static void report_summary(struct report *r, const struct logrec *rec)
{
	const json_t *o = rec->json, *v;

	r->has_summary = true;
	r->exit_code = rec->exit_code;
	r->signal = rec->signal;
	v = json_object_get(o, "duration_ms");
	r->duration_ms = json_is_integer(v) ? (long long)json_integer_value(v) : -1;
	v = json_object_get(o, "processes");
	r->processes = json_is_integer(v) ? (long long)json_integer_value(v) : -1;
	v = json_object_get(o, "lost");
	r->lost = json_is_integer(v) ? (long long)json_integer_value(v) : 0;
	r->left_running = (long long)json_array_size(json_object_get(o, "left_running"));
	free(r->policy);
	r->policy = report_dup(json_string_value(json_object_get(o, "policy")));
	free(r->mode);
	r->mode = report_dup(rec->mode);
	free(r->backend);
	r->backend = report_dup(rec->backend);
	free(r->context);
	r->context = report_dup(rec->context);
	free(r->command);
	r->command = report_cmdline(rec->argv, NULL);
	free(r->cwd);
	r->cwd = report_dup(rec->cwd);
	report_summary_egress(r, o);
	report_deps_read(r, o);
}

static void report_bad_line(const char *name, size_t line, const char *why, void *arg)
{
	struct report_build *b = arg;

	if (!b->r->first_bad)
		b->r->first_bad = xasprintf("line %zu: %s", line, why);
	if (b->bad_shown++ < REPORT_BAD_SHOWN && log_level() > 0)
		warn_msg("%s:%zu: %s (skipped)", name, line, why);
}

static enum report_event report_event_of(const char *e)
{
	static const char *const names[] = { "exec", "exit", "open", "write", "connect", "alert",
					     "warning" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(e, names[i]) == 0)
			return (enum report_event)i;
	return REPORT_EV_OTHER;
}

int report_build(struct report *r, const char *log, char *err, size_t err_size)
{
	struct report_build b = { .r = r };
	struct logread lr;
	const struct logrec *rec;
	int rc;

	memset(r, 0, sizeof(*r));
	r->log_name = xstrdup(log);
	r->t_first = r->t_last = -1;
	r->exit_code = -1;
	rc = logread_open(&lr, log);
	if (rc < 0) {
		snprintf(err, err_size, "cannot read %s: %s", log, strerror(-rc));
		return rc;
	}
	logread_set_bad(&lr, report_bad_line, &b);
	while ((rc = logread_next(&lr, &rec)) > 0) {
		enum report_event ev = report_event_of(rec->event);
		size_t proc = REPORT_NONE;

		r->n_events[ev]++;
		if (rec->time_ms >= 0) {
			if (r->t_first < 0 || rec->time_ms < r->t_first)
				r->t_first = rec->time_ms;
			if (rec->time_ms > r->t_last)
				r->t_last = rec->time_ms;
		}
		if (!r->session && rec->session)
			r->session = xstrdup(rec->session);
		if (!r->first_cwd && rec->cwd)
			r->first_cwd = xstrdup(rec->cwd);
		if (strcmp(rec->event, "summary") == 0) {
			report_summary(r, rec);
			continue;
		}
		if (rec->evidence)
			report_evidence_add(r, &b.evidence, rec);
		if (rec->pid > 0) {
			proc = report_proc_for(&b, rec);
			report_proc_event(&b, proc, rec);
		}
		if (ev == REPORT_EV_ALERT || ev == REPORT_EV_WARNING) {
			report_alert_add(&b, rec, proc);
		} else if (rec->rule && rec->action && strcmp(rec->action, "allow") == 0) {
			size_t ri = report_rule_for(&b, rec->rule, rec);

			r->rules[ri].allow++;
		}
	}
	r->lines = lr.line;
	r->records = lr.records;
	r->malformed = lr.malformed;
	logread_close(&lr);
	if (rc < 0) {
		snprintf(err, err_size, "cannot read %s: %s", log, strerror(-rc));
		report_map_free(&b.pids);
		report_map_free(&b.findings);
		report_map_free(&b.rules);
	report_map_free(&b.evidence);
		return rc;
	}
	report_link_procs(&b);
	report_map_free(&b.pids);
	report_map_free(&b.findings);
	report_map_free(&b.rules);
	report_map_free(&b.evidence);
	return 0;
}

void report_free(struct report *r)
{
	for (size_t i = 0; i < r->n_procs; i++) {
		struct report_proc *p = &r->procs[i];

		for (size_t j = 0; j < p->n_execs; j++) {
			free(p->execs[j].exe);
			free(p->execs[j].cmdline);
		}
		free(p->execs);
		free(p->children);
		free(p->exe);
		free(p->cmdline);
	}
	for (size_t i = 0; i < r->n_alerts; i++) {
		struct report_alert *a = &r->alerts[i];

		for (size_t j = 0; j < a->n_frames; j++) {
			free(a->frames[j].pc);
			free(a->frames[j].sym);
			free(a->frames[j].object);
		}
		free(a->frames);
		free(a->time);
		free(a->event);
		free(a->action);
		free(a->mode);
		free(a->kind_name);
		free(a->syscall);
		free(a->object);
		free(a->path);
		free(a->path2);
		free(a->target);
		free(a->host);
		free(a->rule);
		free(a->why);
		free(a->suggest);
		free(a->err);
		free(a->script);
		free(a->context);
		free(a->exe);
		free(a->cmdline);
	}
	for (size_t i = 0; i < r->n_rules; i++) {
		free(r->rules[i].id);
		free(r->rules[i].why);
		free(r->rules[i].kind_name);
	}
	free(r->procs);
	free(r->alerts);
	free(r->findings);
	free(r->rules);
	free(r->log_name);
	free(r->first_bad);
	free(r->session);
	free(r->policy);
	free(r->mode);
	free(r->backend);
	free(r->context);
	free(r->command);
	free(r->cwd);
	free(r->first_cwd);
	report_egress_free(r);
	report_deps_free(r);
	for (size_t i = 0; i < r->n_evidence; i++) {
		free(r->evidence[i].copy);
		free(r->evidence[i].path);
		free(r->evidence[i].what);
	}
	free(r->evidence);
	free(r->out_dir);
	free(r->workspace);
	free(r->workflow);
	free(r->log_abs);
	memset(r, 0, sizeof(*r));
}

/* ---- helpers of the formats ---- */

const char *report_verb(const struct report_alert *a)
{
	if (!a->action)
		return "warning";
	if (strcmp(a->action, "deny") == 0)
		return "denied";
	return "alert";
}

const char *report_malformed_text(const struct report *r, char *buf, size_t size)
{
	if (!r->malformed)
		return NULL;
	snprintf(buf, size, "%zu malformed line%s skipped", r->malformed,
		 r->malformed == 1 ? "" : "s");
	return buf;
}

int64_t report_rel_ms(const struct report *r, int64_t t)
{
	if (t < 0 || r->t_first < 0)
		return -1;
	return t - r->t_first;
}

const char *report_trunc(const char *s, size_t max, char *buf, size_t size)
{
	size_t n = strlen(s);

	if (n <= max || size < 8)
		return s;
	if (max > size - 4)
		max = size - 4;
	/* Back up over UTF-8 continuation bytes. */
	while (max > 0 && ((unsigned char)s[max] & 0xC0) == 0x80)
		max--;
	memcpy(buf, s, max);
	memcpy(buf + max, "...", 4);
	return buf;
}

void report_dest_text(const struct report_dest *d, char *buf, size_t size)
{
	bool v6 = strchr(d->addr, ':') != NULL;

	if (d->port < 0)
		snprintf(buf, size, "%s%s", d->family && strcmp(d->family, "unix") == 0 ? "unix:" : "",
			 d->addr);
	else if (d->host)
		snprintf(buf, size, v6 ? "%s:%ld ([%s])" : "%s:%ld (%s)", d->host, d->port, d->addr);
	else
		snprintf(buf, size, v6 ? "[%s]:%ld" : "%s:%ld", d->addr, d->port);
}

void report_frame_text(const struct report_frame *f, size_t i, char *buf, size_t size)
{
	size_t n = (size_t)snprintf(buf, size, "#%zu %s", i, f->pc ? f->pc : "?");

	if (n < size && f->sym) {
		if (f->offset >= 0)
			n += (size_t)snprintf(buf + n, size - n, " %s+0x%llx", f->sym,
					      (unsigned long long)f->offset);
		else
			n += (size_t)snprintf(buf + n, size - n, " %s", f->sym);
	}
	if (n < size && f->object)
		snprintf(buf + n, size - n, " (%s)", f->object);
}

/* ---- main ---- */

/* The workflow file of GITHUB_WORKFLOW_REF ("OWNER/REPO/PATH@REF"), or
 * NULL when it is unset or not of that form. */
static char *report_workflow_file(const char *ref)
{
	const char *p, *at;

	if (!ref || !(p = strchr(ref, '/')) || !(p = strchr(p + 1, '/')))
		return NULL;
	p++;
	at = strrchr(p, '@');
	if (!at || at == p || *p == '/' || strstr(p, "..") || memchr(p, '\\', (size_t)(at - p)))
		return NULL;
	return xstrndup(p, (size_t)(at - p));
}

/* Where the SARIF report places results: the workspace is ROOT (the
 * --root option), else $GITHUB_WORKSPACE, else the run's directory from
 * the log; absolute, symbolic links resolved when it exists. */
static void report_place(struct report *r, const char *root, const char *log)
{
	const char *ws = root, *env = getenv("GITHUB_WORKSPACE");
	char *real;

	if (!ws && env && env[0] == '/')
		ws = env;
	if (!ws)
		ws = r->cwd ? r->cwd : r->first_cwd;
	if (ws && *ws) {
		real = realpath(ws, NULL);
		if (real)
			r->workspace = real;
		else if (ws[0] == '/')
			r->workspace = xstrdup(ws);
	}
	r->workflow = report_workflow_file(getenv("GITHUB_WORKFLOW_REF"));
	if (strcmp(log, "-") != 0)
		r->log_abs = realpath(log, NULL);
}

static const struct {
	const char *name;
	int (*fn)(const struct report *r, FILE *out);
} report_formats[] = {
	{ "text", report_text },
	{ "markdown", report_markdown },
	{ "md", report_markdown },
	{ "html", report_html },
	{ "sarif", report_sarif },
	{ "junit", report_junit },
};

static void report_usage(FILE *f)
{
	fprintf(f,
		"usage: agenttrace-report LOG [--format FORMAT] [-o FILE]\n"
		"\n"
		"A summary of one agenttrace run from its JSON Lines log (\"-\": standard input):\n"
		"the process tree, counts per kind and rule, each denial with its rule, why,\n"
		"suggestion and backtrace.\n"
		"\n"
		"options:\n"
		"  -f, --format FORMAT  text (default), markdown, html, sarif, junit\n"
		"  -o, --output FILE    write the report to FILE instead of standard output\n"
		"      --root DIR       the repository's checkout, where SARIF locations are\n"
		"                       relative to (default: $GITHUB_WORKSPACE, else the\n"
		"                       run's directory from the log)\n"
		"  -q, --quiet          no warnings about malformed lines on standard error\n"
		"  -h, --help           show this help\n"
		"  -V, --version        show the version\n"
		"\n"
		"exit status: 0 report written; 125 bad usage, unreadable log or write error.\n"
		"Malformed lines are skipped and counted, not fatal.\n");
}

static void report_bad_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void report_bad_usage(const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "agenttrace-report: %s\n", msg);
	fprintf(stderr, "Try 'agenttrace-report --help' for more information.\n");
	exit(AT_EXIT_FAILURE);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "root", required_argument, NULL, 'r' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int (*fn)(const struct report *r, FILE *out) = report_text;
	const char *output = NULL, *root = NULL, *log;
	char err[512], buf[64];
	struct report r;
	FILE *out = stdout;
	int c, rc;

	log_set_program("agenttrace-report");
	while ((c = getopt_long(argc, argv, "f:o:qhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			fn = NULL;
			for (size_t i = 0; i < sizeof(report_formats) / sizeof(report_formats[0]); i++)
				if (strcmp(optarg, report_formats[i].name) == 0)
					fn = report_formats[i].fn;
			if (!fn)
				report_bad_usage("unknown format \"%s\" (text, markdown, html, sarif, junit)",
						 optarg);
			break;
		case 'o':
			output = optarg;
			break;
		case 'r':
			root = optarg;
			break;
		case 'q':
			log_set_level(0);
			break;
		case 'h':
			report_usage(stdout);
			return AT_EXIT_OK;
		case 'V':
			printf("agenttrace-report %s\n", PACKAGE_VERSION);
			return AT_EXIT_OK;
		default:
			report_bad_usage("unknown option");
		}
	}
	if (optind >= argc)
		report_bad_usage("a LOG is needed");
	if (optind + 1 < argc)
		report_bad_usage("one LOG only (got \"%s\" too)", argv[optind + 1]);
	log = argv[optind];

	if (report_build(&r, log, err, sizeof(err)) < 0) {
		report_free(&r);
		die("%s", err);
	}
	report_place(&r, root, log);
	if (output) {
		/* Where the HTML report's links to evidence start from. */
		char *dir = xstrdup(output), *slash = strrchr(dir, '/');

		if (slash)
			*slash = 0;
		r.out_dir = realpath(slash ? (*dir ? dir : "/") : ".", NULL);
		free(dir);
	}
	if (report_malformed_text(&r, buf, sizeof(buf)) && log_level() > 0)
		warn_msg("%s: %s", log, buf);
	if (output) {
		out = fopen(output, "we");
		if (!out) {
			report_free(&r);
			die_errno("cannot write %s", output);
		}
	}
	rc = fn(&r, out);
	if (fflush(out) != 0 || ferror(out))
		rc = -1;
	if (output && fclose(out) != 0)
		rc = -1;
	if (rc < 0) {
		report_free(&r);
		die_errno("cannot write the report to %s", output ? output : "standard output");
	}
	report_free(&r);
	return AT_EXIT_OK;
}
