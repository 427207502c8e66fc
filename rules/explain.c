/* The effective policy as JSON (agenttrace --explain, agenttrace-policy
 * explain): what was loaded after layering and variables, in a stable key
 * order so that tests can compare it byte for byte. */
#include <stdlib.h>
#include <string.h>

#include "rules/load-internal.h"

static const char *explain_str(const struct rules_policy *p, uint32_t i)
{
	const rules_str *strs = (const rules_str *)((const char *)p + p->strs_off);

	return rules_string(p, strs[i]);
}

static json_t *explain_string_or_null(const struct rules_policy *p, rules_str s)
{
	return s ? json_string(rules_string(p, s)) : json_null();
}

/* The pattern as the engine holds it: an argv list for exec, the
 * expanded source text otherwise. */
static json_t *explain_pattern(const struct rules_policy *p, const struct rules_pattern *pat,
			       enum rules_kind kind, rules_str source)
{
	json_t *a;

	if (kind != RULES_KIND_EXEC)
		return json_string(rules_string(p, source ? source : pat->text));
	a = json_array();
	for (uint32_t i = 0; a && i < pat->argv_count; i++)
		json_array_append_new(a, json_string(explain_str(p, pat->argv_first + i)));
	return a;
}

static json_t *explain_rule(const struct rules_policy *p, const struct rules_rule *r)
{
	const struct rules_pattern *pats =
		(const struct rules_pattern *)((const char *)p + p->patterns_off);
	json_t *o = json_object();

	if (!o)
		return NULL;
	json_object_set_new(o, "id", json_string(rules_string(p, r->id)));
	json_object_set_new(o, "pattern", explain_pattern(p, &r->pat, r->kind, r->source));
	if (r->kind == RULES_KIND_EXEC && r->pat.script != RULES_SCRIPT_NONE)
		json_object_set_new(o, "script",
				    json_string(rules_script_name((enum rules_script)r->pat.script)));
	if (r->content != RULES_CONTENT_NONE)
		json_object_set_new(o, "content",
				    json_string(rules_content_name((enum rules_content)r->content)));
	if (r->why)
		json_object_set_new(o, "why", json_string(rules_string(p, r->why)));
	if (r->unless_count) {
		json_t *u = json_array();

		/* An exec exception is a program glob: show only that. */
		for (uint32_t i = 0; u && i < r->unless_count; i++) {
			const struct rules_pattern *up = &pats[r->unless_first + i];

			if (r->kind == RULES_KIND_EXEC)
				json_array_append_new(u, json_string(up->argv_count
					? explain_str(p, up->argv_first) : ""));
			else if (up->net_type == RULES_NET_UNIX_PATH && r->kind == RULES_KIND_NET)
				json_array_append_new(u, json_pack("s+", "unix:", rules_string(p, up->text)));
			else if (up->net_type == RULES_NET_UNIX_ABSTRACT && r->kind == RULES_KIND_NET)
				json_array_append_new(u, json_pack("s+", "unix:@", rules_string(p, up->text)));
			else if (up->bind && r->kind == RULES_KIND_NET)
				json_array_append_new(u, json_pack("s+", "bind:", rules_string(p, up->text)));
			else
				json_array_append_new(u, json_string(rules_string(p, up->text)));
		}
		json_object_set_new(o, "unless", u);
	}
	if (r->under_count) {
		json_t *u = json_array();

		for (uint32_t i = 0; u && i < r->under_count; i++)
			json_array_append_new(u, explain_pattern(p, &pats[r->under_first + i],
								 RULES_KIND_EXEC, 0));
		json_object_set_new(o, "under", u);
	}
	json_object_set_new(o, "origin", json_string(rules_string(p, r->origin)));
	return o;
}

static json_t *explain_limit(uint64_t v)
{
	return v ? json_integer((json_int_t)v) : json_null();
}

char *rules_explain(const struct rules_policy *p)
{
	static const enum rules_action order[] = {
		RULES_ACTION_DENY, RULES_ACTION_ALERT, RULES_ACTION_ALLOW,
	};
	json_t *root = json_object(), *fb = json_object(), *env = json_object(),
	       *drop = json_array(), *limits = json_object(), *dropped = json_array();
	uint32_t dropped_first = p->env_drop_first + p->env_drop_count;
	char *text = NULL, *out = NULL;
	size_t len;

	if (!root || !fb || !env || !drop || !limits || !dropped)
		goto out;
	json_object_set_new(root, "name", json_string(rules_string(p, p->name)));
	json_object_set_new(root, "layers", json_string(rules_string(p, p->layers)));
	json_object_set_new(root, "mode",
			    json_string(p->mode == RULES_MODE_AUDIT ? "audit" : "enforce"));
	json_object_set_new(root, "record", json_boolean(p->record));
	for (int k = 0; k < RULES_KIND_COUNT; k++) {
		json_t *sec = json_object();
		const struct rules_rule *f = rules_rule_at(p, p->fallback[k]);
		json_t *fo = json_object();

		for (size_t a = 0; sec && a < sizeof(order) / sizeof(order[0]); a++) {
			const struct rules_span *sp = &p->span[k][order[a]];
			json_t *list = json_array();

			for (uint32_t i = 0; list && i < sp->count; i++)
				json_array_append_new(list, explain_rule(p, rules_rule_at(p, sp->first + i)));
			json_object_set_new(sec, rules_action_name(order[a]), list);
		}
		json_object_set_new(root, rules_kind_name(k), sec);
		if (fo) {
			json_object_set_new(fo, "id", json_string(rules_string(p, f->id)));
			json_object_set_new(fo, "action", json_string(rules_action_name(f->action)));
			json_object_set_new(fo, "why", explain_string_or_null(p, f->why));
		}
		json_object_set_new(fb, rules_kind_name(k), fo);
	}
	/* The net section's others, by what the event is (rules_fallback()). */
	for (int i = 0; fb && i < RULES_NET_FALLBACKS; i++) {
		static const char *const names[RULES_NET_FALLBACKS] = {
			[RULES_NET_FB_LOCAL] = "net-local",
			[RULES_NET_FB_INBOUND] = "net-inbound",
			[RULES_NET_FB_BIND_LOOPBACK] = "net-bind-loopback",
		};
		const struct rules_rule *f = rules_rule_at(p, p->fallback_net[i]);
		json_t *fo = json_object();

		if (!fo)
			continue;
		json_object_set_new(fo, "id", json_string(rules_string(p, f->id)));
		json_object_set_new(fo, "action", json_string(rules_action_name(f->action)));
		json_object_set_new(fo, "why", explain_string_or_null(p, f->why));
		json_object_set_new(fb, names[i], fo);
	}
	json_object_set_new(root, "fallbacks", fb);
	fb = NULL;
	for (uint32_t i = 0; i < p->env_drop_count; i++)
		json_array_append_new(drop, json_string(explain_str(p, p->env_drop_first + i)));
	json_object_set_new(env, "drop", drop);
	drop = NULL;
	json_object_set_new(root, "env", env);
	env = NULL;
	if (p->limits.max_procs_percent)
		json_object_set_new(limits, "max_procs",
				    json_sprintf("%u%%", (unsigned)p->limits.max_procs_percent));
	else
		json_object_set_new(limits, "max_procs", explain_limit(p->limits.max_procs));
	json_object_set_new(limits, "timeout", explain_limit(p->limits.timeout_sec));
	if (p->limits.max_memory_percent)
		json_object_set_new(limits, "max_memory",
				    json_sprintf("%u%%", (unsigned)p->limits.max_memory_percent));
	else
		json_object_set_new(limits, "max_memory", explain_limit(p->limits.max_memory));
	json_object_set_new(limits, "max_cpu", explain_limit(p->limits.max_cpu_sec));
	json_object_set_new(root, "limits", limits);
	limits = NULL;
	for (uint32_t i = dropped_first; i + COMPILE_DROPPED_FIELDS <= p->strs_count;
	     i += COMPILE_DROPPED_FIELDS) {
		json_t *d = json_object();

		if (!d)
			goto out;
		json_object_set_new(d, "id", json_string(explain_str(p, i)));
		json_object_set_new(d, "pattern", json_string(explain_str(p, i + 1)));
		json_object_set_new(d, "origin", json_string(explain_str(p, i + 2)));
		json_object_set_new(d, "unset", json_string(explain_str(p, i + 3)));
		json_array_append_new(dropped, d);
	}
	json_object_set_new(root, "dropped", dropped);
	dropped = NULL;
	text = json_dumps(root, JSON_INDENT(2));
	if (!text)
		goto out;
	len = strlen(text);
	out = malloc(len + 2);
	if (out) {
		memcpy(out, text, len);
		out[len] = '\n';
		out[len + 1] = '\0';
	}
out:
	free(text);
	json_decref(root);
	json_decref(fb);
	json_decref(env);
	json_decref(drop);
	json_decref(limits);
	json_decref(dropped);
	return out;
}
