/* The policy layer and the option that admit a denied event (suggest.h). */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rules/match-internal.h"
#include "rules/suggest.h"

#define SUGGEST_CMDLINE "<command line>"

/* R matches EV, its "unless" and "under" patterns considered (as rules_decide()). */
static bool suggest_matches(const struct rules_policy *p, const struct rules_rule *r,
			    const struct rules_event *ev)
{
	char buf[MATCH_PATH_MAX];
	struct match_subject m;

	match_subject_init(&m, ev, buf);
	return match_rule(p, (enum rules_kind)r->kind, r, &m);
}

static bool suggest_from_cmdline(const struct rules_policy *p, const struct rules_rule *r)
{
	return strcmp(rules_string(p, r->origin), SUGGEST_CMDLINE) == 0;
}

/* True when some exec deny rule of the policy could name program EXE with
 * some arguments: its program element matches EXE's path or base name (a
 * rule whose shape is not an argv list may, for all this knows).  Then
 * --allow-exec EXE, which exempts EXE from every exec deny rule whatever
 * its arguments, would admit more than the event. */
static bool suggest_exec_deny_may_name(const struct rules_policy *p, const char *exe)
{
	const struct rules_span *sp = &p->span[RULES_KIND_EXEC][RULES_ACTION_DENY];
	const rules_str *strs = (const rules_str *)((const char *)p + p->strs_off);
	const char *slash = strrchr(exe, '/'), *base = slash ? slash + 1 : exe;
	size_t exe_len = strlen(exe), base_len = strlen(base);

	for (uint32_t i = 0; i < sp->count; i++) {
		const struct rules_rule *r = rules_rule_at(p, sp->first + i);
		const char *alt, *q;

		if (suggest_from_cmdline(p, r))
			continue;
		if (!r->pat.argv_count)
			return true;
		for (alt = rules_string(p, strs[r->pat.argv_first]);; alt = q + 1) {
			bool path = false;

			for (q = alt; *q && *q != '|'; q++) {
				if (*q == '/')
					path = true;
				else if (*q == '\\' && q[1])
					q++;
			}
			if (path ? match_path_norm(alt, (size_t)(q - alt), exe, exe_len)
				 : match_glob_n(alt, (size_t)(q - alt), base, base_len, 0))
				return true;
			if (!*q)
				break;
		}
	}
	return false;
}

char *rules_shell_quote(const char *s)
{
	size_t n = 3;
	char *out, *w;

	for (const char *c = s; *c; c++)
		n += *c == '\'' ? 4 : 1;
	w = out = malloc(n);
	if (!out)
		return NULL;
	*w++ = '\'';
	for (const char *c = s; *c; c++) {
		if (*c == '\'') {
			memcpy(w, "'\\''", 4);
			w += 4;
		} else {
			*w++ = *c;
		}
	}
	*w++ = '\'';
	*w = '\0';
	return out;
}

static const char *suggest_option_name(enum rules_kind k)
{
	switch (k) {
	case RULES_KIND_WRITE: return "--allow-write";
	case RULES_KIND_READ: return "--allow-read";
	case RULES_KIND_NET: return "--allow-net";
	default: return "--allow-exec";
	}
}

/* An argument naming a path in a temp dir: the dir and a "*" below it, since the
 * name there is new at every run (pip's /tmp/pip-install-XXXX/...), and an
 * exemption naming it would admit nothing the next time. NULL otherwise. */
static char *suggest_temp_arg(const struct rules_anchors *a, const char *arg)
{
	static const char *const temps[] = { "/tmp", "/var/tmp", "/dev/shm" };
	const char *tmpdir = a ? a->dir[RULES_ANCHOR_TMPDIR] : NULL;
	char *out = NULL;

	if (tmpdir && rules_path_under(arg, tmpdir) && strcmp(arg, tmpdir) != 0)
		return asprintf(&out, "%s/*", rules_anchor_var(RULES_ANCHOR_TMPDIR)) < 0 ? NULL : out;
	for (size_t i = 0; i < sizeof(temps) / sizeof(temps[0]); i++)
		if (rules_path_under(arg, temps[i]) && strcmp(arg, temps[i]) != 0)
			return asprintf(&out, "%s/*", temps[i]) < 0 ? NULL : out;
	return NULL;
}

/* The exact argv of an exec as an argv pattern: each argument literal,
 * but for paths in the temp dirs. */
static json_t *suggest_exact_argv(const struct rules_anchors *a, const struct rules_event *ev)
{
	json_t *argv = json_array();
	char *lit = rules_exec_literal(a, ev->exe);

	if (!argv || !lit || json_array_append_new(argv, json_string(lit)) < 0)
		goto fail;
	free(lit);
	for (size_t i = 1; i < ev->argc; i++) {
		const char *arg = ev->argv[i] ? ev->argv[i] : "";

		lit = arg[0] == '/' ? suggest_temp_arg(a, arg) : NULL;
		if (!lit)
			lit = rules_literal("", arg, true, true);
		if (!lit || json_array_append_new(argv, json_string(lit)) < 0)
			goto fail;
		free(lit);
	}
	return argv;
fail:
	free(lit);
	json_decref(argv);
	return NULL;
}

static const char *suggest_pattern_key(enum rules_kind k)
{
	return k == RULES_KIND_EXEC ? "argv" : k == RULES_KIND_NET ? "addr" : "path";
}

/* One option more for OPT (a malloc'ed text, NULL at first). */
static int suggest_add_option(char **opt, enum rules_kind k, const char *pattern)
{
	char *q = rules_shell_quote(pattern), *next = NULL;
	int ret = -ENOMEM;

	if (q && asprintf(&next, "%s%s%s %s", *opt ? *opt : "", *opt ? " " : "",
			  suggest_option_name(k), q) >= 0) {
		free(*opt);
		*opt = next;
		ret = 0;
	}
	free(q);
	return ret;
}

/* Event EV's rule into RULES and its option into *OPT (*NO_OPT when none
 * is equivalent).  1: added; 0: nothing can admit EV; -ENOMEM. */
static int suggest_event(const struct rules_policy *p, const struct rules_anchors *a,
			 const struct rules_event *ev, const struct rules_rule *rule, json_t *rules,
			 char **opt, bool *no_opt)
{
	const struct rules_rule *fallback = rules_fallback(p, ev);
	enum rules_kind k = ev->kind;
	json_t *ids = NULL, *o = NULL;
	char *pat = NULL, *exact = NULL;
	int ret = -ENOMEM;

	if (rule == fallback) {
		/* Nothing denies it but the fallback: an allow, which every
		 * deny still beats. */
		pat = rules_generalise(a, k, ev);
		if (!pat)
			return 0;
		if (json_array_append_new(rules, json_string(pat)) < 0)
			goto out;
		if (k == RULES_KIND_EXEC && suggest_exec_deny_may_name(p, ev->exe)) {
			*no_opt = true;
		} else if (k == RULES_KIND_WRITE || k == RULES_KIND_READ) {
			/* A cache's subtree on the command line would be
			 * exempted from every write deny: the path only. */
			exact = rules_exact(a, k, ev);
			if (!exact || suggest_add_option(opt, k, exact) < 0)
				goto out;
		} else if (suggest_add_option(opt, k, pat) < 0) {
			goto out;
		}
		ret = 1;
		goto out;
	}

	/* Denied by rules (or let through with an alert by alert rules):
	 * this object, exempted from each of them.  The command line cannot
	 * silence an alert. */
	ids = json_array();
	if (!ids)
		goto out;
	if (rule->action == RULES_ACTION_ALERT)
		*no_opt = true;
	for (uint32_t i = 0; i < p->span[k][rule->action].count; i++) {
		const struct rules_rule *r = rules_rule_at(p, p->span[k][rule->action].first + i);
		const char *id = rules_string(p, r->id);
		bool seen = false;
		size_t j;
		json_t *el;

		if (!suggest_matches(p, r, ev))
			continue;
		if (suggest_from_cmdline(p, r)) {
			ret = 0; /* agenttrace's own protections are never exempted */
			goto out;
		}
		json_array_foreach(ids, j, el)
			seen |= strcmp(json_string_value(el), id) == 0;
		if (!seen && json_array_append_new(ids, json_string(id)) < 0)
			goto out;
	}
	if (!json_array_size(ids)) {
		ret = 0;
		goto out;
	}
	o = json_object();
	if (!o)
		goto out;
	if (k == RULES_KIND_EXEC) {
		json_t *argv = suggest_exact_argv(a, ev);

		if (!argv || json_object_set_new(o, "argv", argv) < 0)
			goto out;
		*no_opt = true; /* --allow-exec cannot name arguments */
	} else {
		pat = rules_exact(a, k, ev);
		if (!pat) {
			ret = 0;
			goto out;
		}
		if (json_object_set_new(o, suggest_pattern_key(k), json_string(pat)) < 0 ||
		    suggest_add_option(opt, k, pat) < 0)
			goto out;
	}
	if (json_object_set(o, "overrides", ids) < 0 || json_array_append(rules, o) < 0)
		goto out;
	ret = 1;
out:
	json_decref(o);
	json_decref(ids);
	free(pat);
	free(exact);
	return ret;
}

int rules_suggest(const struct rules_policy *p, const struct rules_anchors *a, const char *base,
		  const struct rules_event *ev, size_t n, const bool *explicit_deny_only,
		  enum rules_action action, struct rules_suggestion *out)
{
	/* One call's events may be of two kinds (a rename writes two names
	 * and reads the file it moves): each rule goes to its own kind's
	 * section, or the layer would not admit the event. */
	json_t *layer = NULL, *rules[RULES_KIND_COUNT] = { NULL };
	char *opt = NULL;
	bool no_opt = false, any = false;
	int ret = -ENOMEM;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < n && i < RULES_CALL_EVENTS; i++) {
		struct rules_verdict v;
		int r;

		if ((unsigned)ev[i].kind >= RULES_KIND_COUNT || rules_decide(p, &ev[i], &v) < 0)
			continue;
		if (action == RULES_ACTION_DENY &&
		    (v.action != RULES_ACTION_DENY ||
		     (explicit_deny_only && explicit_deny_only[i] &&
		      v.rule == rules_fallback(p, &ev[i]))))
			continue; /* this one was not refused */
		if (action == RULES_ACTION_ALERT && v.action != RULES_ACTION_ALERT)
			continue;
		if (!rules[ev[i].kind] && !(rules[ev[i].kind] = json_array()))
			goto out;
		r = suggest_event(p, a, &ev[i], v.rule, rules[ev[i].kind], &opt, &no_opt);
		if (r < 0)
			goto out;
		if (r == 0) {
			ret = 0; /* one event nothing admits: the call stays refused */
			goto out;
		}
		any = true;
	}
	ret = 0;
	if (!any)
		goto out;
	ret = -ENOMEM;
	layer = json_object();
	if (!layer || json_object_set_new(layer, "agenttrace", json_integer(1)) < 0 ||
	    json_object_set_new(layer, "extends", json_string(base ? base : "default")) < 0)
		goto out;
	for (int k = 0; k < RULES_KIND_COUNT; k++)
		if (rules[k] && json_object_set_new(layer, rules_kind_name((enum rules_kind)k),
						    json_pack("{s:O}", "allow", rules[k])) < 0)
			goto out;
	out->layer = json_dumps(layer, JSON_COMPACT | JSON_PRESERVE_ORDER);
	if (!out->layer)
		goto out;
	ret = 0;
	if (!no_opt) {
		out->option = opt;
		opt = NULL;
	}
out:
	json_decref(layer);
	for (int k = 0; k < RULES_KIND_COUNT; k++)
		json_decref(rules[k]);
	free(opt);
	return ret;
}

void rules_suggestion_free(struct rules_suggestion *s)
{
	free(s->layer);
	free(s->option);
	s->layer = s->option = NULL;
}
