/* The summary record, the session's last (agenttrace(1), RECORDS), and its
 * human lines and step summary.  Built from the facts the session's end
 * gathers (start.c), not from the other modules' state. */
#include <inttypes.h>
#include <limits.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lib/log.h"
#include "tracer/confine/alerted.h"
#include "tracer/confine/ownpath.h"
#include "tracer/confine/survive.h"
#include "tracer/record/record.h"
#include "tracer/record/writer.h"

/* "masks": null when not wanted, else what was planned and what holds. */
static json_t *summary_masks(const struct summary_facts *f)
{
	json_t *m;

	if (!f->masks_wanted)
		return json_null();
	m = json_object();
	json_object_set_new(m, "namespace", f->masks_ns ? json_string(f->masks_ns) : json_null());
	json_object_set_new(m, "read", json_integer(f->masks_read));
	json_object_set_new(m, "write", json_integer(f->masks_write));
	json_object_set_new(m, "in_force", json_integer(f->masks_in_force));
	json_object_set_new(m, "why", f->masks_why ? record_jstr(f->masks_why) : json_null());
	return m;
}

/* The writes of family FAM counted apart (survive.h): {NAME: paths}. */
static json_t *summary_counted(const struct survive *sv, enum survive_family fam)
{
	json_t *a = json_object();

	for (size_t i = 0; i < survive_n_counted(sv, fam); i++)
		json_object_set_new(a, survive_counted_name(sv, fam, i),
				    json_integer((json_int_t)survive_counted_paths(sv, fam, i)));
	return a;
}

static void summary_counted_line(const struct survive *sv, enum survive_family fam,
				 const char *what)
{
	char line[1024];
	size_t len = 0;

	for (size_t i = 0; i < survive_n_counted(sv, fam) && len < sizeof(line); i++)
		len += (size_t)snprintf(line + len, sizeof(line) - len, "%s %s %" PRIu64,
					i ? "," : "", survive_counted_name(sv, fam, i),
					survive_counted_paths(sv, fam, i));
	if (len)
		out_msg("%s%s", what, line);
}

/* What survives the session, and how it ran.  O NULL: the human lines
 * on stderr. */
static void summary_hardening(struct session *s, const struct summary_facts *f, json_t *o)
{
	char *const *list = f->changed_outside;
	size_t n = f->n_changed_outside;
	bool as_root = f->as_root;

	if (!o) {
		if (n) {
			char line[4096];
			size_t len = 0;

			for (size_t i = 0; i < n && i < 10 && len < sizeof(line); i++)
				len += (size_t)snprintf(line + len, sizeof(line) - len, " %s", list[i]);
			if (n > 10 && len < sizeof(line))
				snprintf(line + len, sizeof(line) - len, " (and %zu more, see the log)",
					 n - 10);
			out_msg("changed outside the project and temp dirs:%s", line);
		}
		summary_counted_line(f->state, SURVIVE_AGENT_STATE,
				     "the agents' own state, paths written:");
		summary_counted_line(f->state, SURVIVE_CACHE, "the caches, paths written:");
		/* The program's own message (bubblewrap's: "the kernel does
		 * not allow non-privileged user namespaces") points at the
		 * kernel; the cause is the supervisor, and the way out is to
		 * turn that sandbox off. */
		if (s->own_sandbox_refused)
			out_msg("a sandbox of the program's own (%s) cannot run inside agenttrace: new "
				"namespaces and seccomp listeners are refused (%" PRIu64 " call%s); run the "
				"program with its sandbox off and agenttrace is the sandbox (agenttrace(1), "
				"AGENTS)", s->own_sandbox_by, s->own_sandbox_refused,
				s->own_sandbox_refused == 1 ? "" : "s");
		if (as_root && !s->preload_only)
			out_msg("the command ran as root (no --user)");
		if (f->masks_note)
			out_msg("%s", f->masks_note);
	} else {
		json_t *a = json_array();

		for (size_t i = 0; i < n; i++)
			json_array_append_new(a, record_jstr(list[i]));
		json_object_set_new(o, "changed_outside", a);
		json_object_set_new(o, "changed_outside_collapsed",
				    json_boolean(f->changed_outside_collapsed));
		json_object_set_new(o, "agent_state", summary_counted(f->state, SURVIVE_AGENT_STATE));
		json_object_set_new(o, "cache_writes", summary_counted(f->state, SURVIVE_CACHE));
		json_object_set_new(o, "as_root", json_boolean(as_root));
		json_object_set_new(o, "landlock", f->landlock_abi ? json_integer(f->landlock_abi) :
						   json_null());
		json_object_set_new(o, "private_tmp", f->private_tmp ? record_jstr(f->private_tmp) :
						      json_null());
		json_object_set_new(o, "masks", summary_masks(f));
	}
}

/* "alerted_files": what became of each file a write alert named
 * (alerted.h).  O NULL: a human line for those that changed. */
static void summary_alerted(const struct session *s, const struct summary_facts *f, json_t *o)
{
	json_t *a;

	if (!o) {
		char line[2048];
		size_t len = 0;

		for (size_t i = 0; i < f->n_alerted && len < sizeof(line); i++) {
			const struct alerted_change *c = &f->alerted[i];

			if (strcmp(c->status, "unchanged") == 0)
				continue;
			if (c->measured)
				len += (size_t)snprintf(line + len, sizeof(line) - len,
							"%s %s (%s, +%" PRIu64 " -%" PRIu64 " lines)",
							len ? "," : "", c->path, c->status,
							c->lines_added, c->lines_removed);
			else
				len += (size_t)snprintf(line + len, sizeof(line) - len, "%s %s (%s)",
							len ? "," : "", c->path, c->status);
		}
		if (len)
			out_msg("alerted files the session changed:%s", line);
		if (s->cache_code)
			out_msg("files made code in the caches, which later runs may execute: %" PRIu64
				" (see the write.cache-code alerts)", s->cache_code);
		return;
	}
	a = json_array();
	for (size_t i = 0; i < f->n_alerted; i++) {
		const struct alerted_change *c = &f->alerted[i];
		json_t *x = json_object();

		json_object_set_new(x, "path", record_jstr(c->path));
		json_object_set_new(x, "rule_id", record_jstr(c->rule));
		json_object_set_new(x, "status", json_string(c->status));
		json_object_set_new(x, "lines_added", c->measured ?
				    json_integer((json_int_t)c->lines_added) : json_null());
		json_object_set_new(x, "lines_removed", c->measured ?
				    json_integer((json_int_t)c->lines_removed) : json_null());
		json_object_set_new(x, "bytes_before", json_integer((json_int_t)c->bytes_before));
		json_object_set_new(x, "bytes_after", json_integer((json_int_t)c->bytes_after));
		json_array_append_new(a, x);
	}
	json_object_set_new(o, "alerted_files", a);
	/* Beside them: what was made code in the caches (cachecode.h). */
	json_object_set_new(o, "cache_code", json_integer((json_int_t)s->cache_code));
	json_object_set_new(o, "alerted_files_other", json_integer((json_int_t)f->alerted_other));
}

/* "egress": every destination judged, "egress_other": the calls to
 * destinations beyond the table's bound (egress.h). */
static void summary_egress(const struct egress *e, json_t *o)
{
	json_t *a = json_array();

	for (size_t i = 0; e && i < e->n; i++) {
		const struct egress_dest *d = &e->v[i];
		json_t *x = json_object();

		json_object_set_new(x, "family", json_string(d->family));
		json_object_set_new(x, "addr", record_jstr(d->addr));
		if (d->port >= 0) {
			json_object_set_new(x, "port", json_integer(d->port));
			json_object_set_new(x, "host", record_jstr(d->host));
		}
		json_object_set_new(x, "allowed", json_integer((json_int_t)d->allowed));
		json_object_set_new(x, "denied", json_integer((json_int_t)d->denied));
		json_array_append_new(a, x);
	}
	json_object_set_new(o, "egress", a);
	json_object_set_new(o, "egress_other",
			    json_pack("{s:I,s:I}", "allowed", (json_int_t)(e ? e->other_allowed : 0),
				      "denied", (json_int_t)(e ? e->other_denied : 0)));
}

/* At most this many packages are listed in the record, over the files;
 * the counts are always whole. */
#define SUMMARY_DEPS_LISTED 500

/* "dependencies": the dependency files the session created, removed or
 * changed, and per file the packages added, removed and changed.  O
 * NULL: the human lines. */
static void summary_deps(const struct depsnap_changes *c, json_t *o)
{
	size_t budget = SUMMARY_DEPS_LISTED;
	json_t *files, *d;

	if (!o) {
		for (size_t i = 0; c && i < c->n; i++) {
			const struct depsnap_change *x = &c->v[i];

			if (!x->parsed)
				out_msg("dependency file %s %s (not parsed)", x->rel, x->status);
			else
				out_msg("dependency file %s %s: %zu added, %zu removed, %zu changed",
					x->rel, x->status, x->diff.added, x->diff.removed,
					x->diff.changed);
		}
		return;
	}
	files = json_array();
	for (size_t i = 0; c && i < c->n; i++) {
		const struct depsnap_change *x = &c->v[i];
		json_t *pk = json_array();
		size_t listed = 0;

		for (; x->parsed && listed < x->diff.n && listed < budget; listed++) {
			const struct depchange *p = &x->diff.v[listed];

			json_array_append_new(pk, json_pack("{s:o,s:o,s:o}", "name",
							    record_jstr(p->name), "from",
							    record_jstr(p->from), "to",
							    record_jstr(p->to)));
		}
		budget -= listed;
		json_array_append_new(files, json_pack("{s:o,s:s,s:s,s:b,s:I,s:I,s:I,s:o,s:I}",
						       "path", record_jstr(x->rel),
						       "format", depfile_format_name(x->format),
						       "status", x->status, "parsed", x->parsed,
						       "added", (json_int_t)x->diff.added,
						       "removed", (json_int_t)x->diff.removed,
						       "changed", (json_int_t)x->diff.changed,
						       "packages", pk,
						       "packages_cut",
						       (json_int_t)(x->diff.n - listed)));
	}
	d = json_pack("{s:o,s:o,s:I,s:I,s:I,s:b}", "root", record_jstr(c ? c->root : NULL),
		      "files", files,
		      "added", (json_int_t)(c ? c->added : 0),
		      "removed", (json_int_t)(c ? c->removed : 0),
		      "changed", (json_int_t)(c ? c->changed : 0),
		      "truncated", c && c->truncated);
	json_object_set_new(o, "dependencies", d);
}

/* "installed": the packages the session installed, where from, flagged
 * when not from a registry nor from a path in the project, and the
 * install scripts run.  O NULL: the human lines. */
static void summary_installed(const struct install_list *l, const struct installs *in, json_t *o)
{
	json_t *pk, *sc;

	if (!o) {
		for (size_t i = 0; l && i < l->n; i++)
			if (l->v[i].flagged)
				out_msg("installed %s %s %s from %s (%s)", l->v[i].ecosystem,
					l->v[i].name, l->v[i].version ? l->v[i].version : "",
					l->v[i].url ? l->v[i].url : "?", l->v[i].source);
		for (size_t i = 0; in && i < in->n_scripts; i++)
			out_msg("install script of %s %s ran: %s", in->scripts[i].ecosystem,
				in->scripts[i].package ? in->scripts[i].package : "(a source build)",
				in->scripts[i].command);
		return;
	}
	pk = json_array();
	for (size_t i = 0; l && i < l->n; i++) {
		const struct install *x = &l->v[i];
		json_t *p = json_pack("{s:s,s:o,s:o,s:s,s:o,s:o,s:b}", "ecosystem", x->ecosystem,
				      "name", record_jstr(x->name), "version", record_jstr(x->version),
				      "source", x->source, "url", record_jstr(x->url),
				      "location", record_jstr(x->location), "flagged", x->flagged);

		if (!strcmp(x->ecosystem, "npm"))
			json_object_set_new(p, "install_script", json_boolean(x->install_script));
		json_array_append_new(pk, p);
	}
	sc = json_array();
	for (size_t i = 0; in && i < in->n_scripts; i++)
		json_array_append_new(sc, json_pack("{s:o,s:o,s:o,s:o}",
						    "ecosystem", record_jstr(in->scripts[i].ecosystem),
						    "package", record_jstr(in->scripts[i].package),
						    "command", record_jstr(in->scripts[i].command),
						    "cwd", record_jstr(in->scripts[i].cwd)));
	json_object_set_new(o, "installed",
			    json_pack("{s:o,s:o,s:I,s:b}", "packages", pk, "scripts", sc,
				      "flagged", (json_int_t)(l ? l->flagged : 0), "truncated",
				      (l && l->truncated) || (in && in->truncated)));
}

/* The CI job's step summary (GITHUB_STEP_SUMMARY), when there is one. */
static void summary_notify(struct session *s, int exit_code, const struct egress *egress)
{
	struct notify_counts c = { 0 };
	char link[PATH_MAX];
	int rc;

	if (!s->notify.step_summary && !s->notify.output)
		return;
	c.command = s->opt->command && s->opt->command[0] ? s->opt->command[0] : "";
	c.policy = rules_string(s->policy, s->policy->layers);
	c.mode = s->policy->mode == RULES_MODE_AUDIT ? "audit" : "enforce";
	c.exit_code = exit_code;
	c.denials = s->denials;
	c.alerts = s->alerts;
	c.log = s->opt->log;
	c.egress = egress;
	for (int k = 0; k < SESSION_KIND_COUNT && c.n_kinds < 8; k++) {
		c.kinds[c.n_kinds] = session_kind_name(k);
		c.deny[c.n_kinds] = s->counts[k][RULES_ACTION_DENY];
		c.alert[c.n_kinds] = s->counts[k][RULES_ACTION_ALERT];
		c.n_kinds++;
	}
	rc = notify_summary(&s->notify, s->policy, &c, link, sizeof(link));
	if (rc < 0)
		ownpath_error("cannot append to GITHUB_STEP_SUMMARY", s->notify.step_summary, rc,
			      link);
	rc = notify_outputs(&s->notify, s->policy, &c, link, sizeof(link));
	if (rc < 0)
		ownpath_error("cannot append to GITHUB_OUTPUT", s->notify.output, rc, link);
}

void record_summary(struct session *s, const struct summary_facts *f)
{
	int exit_code = f->exit_code, signal = f->signal;
	const pid_t *left = f->left;
	size_t n_left = f->n_left;
	const char *const *argv = (const char *const *)s->opt->command;
	size_t argc = 0;
	json_t *o, *counts, *l;

	while (argv && argv[argc])
		argc++;
	summary_notify(s, exit_code, f->egress);
	if (s->opt->verbosity > 0) {
		char more[64] = "";

		if (n_left)
			snprintf(more, sizeof(more), "; %zu left running, killed", n_left);
		out_msg("%" PRIu64 " denied, %" PRIu64 " alert%s%s; exit %d",
			s->denials, s->alerts, s->alerts == 1 ? "" : "s", more, exit_code);
		summary_hardening(s, f, NULL);
		summary_alerted(s, f, NULL);
		summary_deps(f->deps, NULL);
		summary_installed(f->installed, f->installs, NULL);
		if (f->preload_note) {
			out_msg("%s", f->preload_note);
			for (size_t i = 0; i < f->n_unseen; i++)
				out_msg("unseen (static, the shim cannot load): %s",
					f->unseen[i]);
		}
	}
	if (s->log_fd < 0)
		return;

	if (s->main_info) {
		argv = (const char *const *)s->main_info->argv;
		argc = s->main_info->argc;
	}
	o = record_head(s, "summary", s->main_pid, getpid(),
			s->main_info ? s->main_info->exe : argv && argv[0] ? argv[0] : NULL,
			argv, argc, true);
	json_object_set_new(o, "cwd", record_jstr(s->cwd));
	json_object_set_new(o, "exit_code", json_integer(exit_code));
	json_object_set_new(o, "signal", signal ? json_integer(signal) : json_null());
	json_object_set_new(o, "denials", json_integer((json_int_t)s->denials));
	json_object_set_new(o, "alerts", json_integer((json_int_t)s->alerts));
	counts = json_object();
	for (int k = 0; k < SESSION_KIND_COUNT; k++)
		json_object_set_new(counts, session_kind_name(k),
				    json_pack("{s:I,s:I}",
					      "deny", (json_int_t)s->counts[k][RULES_ACTION_DENY],
					      "alert", (json_int_t)s->counts[k][RULES_ACTION_ALERT]));
	json_object_set_new(o, "counts", counts);
	json_object_set_new(o, "processes", json_integer((json_int_t)s->processes_seen));
	json_object_set_new(o, "stops", json_integer((json_int_t)s->stops));
	l = json_array();
	for (size_t i = 0; i < n_left; i++)
		json_array_append_new(l, json_integer(left[i]));
	json_object_set_new(o, "left_running", l);
	summary_egress(f->egress, o);
	summary_hardening(s, f, o);
	summary_alerted(s, f, o);
	summary_deps(f->deps, o);
	summary_installed(f->installed, f->installs, o);
	json_object_set_new(o, "duration_ms", json_integer((json_int_t)session_elapsed_ms(s)));
	json_object_set_new(o, "lost", json_integer((json_int_t)s->lost));
	json_object_set_new(o, "backend", json_string(f->preload_note ? "preload" : "ptrace"));
	if (!f->preload_note)
		json_object_set_new(o, "engine", json_string(f->engine));
	if (f->preload_note) {
		json_t *u = json_array();

		for (size_t i = 0; i < f->n_unseen; i++)
			json_array_append_new(u, record_jstr(f->unseen[i]));
		json_object_set_new(o, "bypassable", json_true());
		json_object_set_new(o, "unseen", u);
		json_object_set_new(o, "note", json_string(f->preload_note));
	}
	json_object_set_new(o, "mode", json_string(s->policy->mode == RULES_MODE_AUDIT ?
						   "audit" : "enforce"));
	json_object_set_new(o, "policy", record_jstr(rules_string(s->policy, s->policy->layers)));
	json_object_set_new(o, "evidence_kept", f->evidence ?
			    json_pack("{s:o,s:I,s:I,s:I,s:I}", "dir", record_jstr(f->evidence->dir),
				      "files", (json_int_t)f->evidence->files,
				      "bytes", (json_int_t)f->evidence->bytes,
				      "skipped", (json_int_t)f->evidence->skipped,
				      "untracked_writes", (json_int_t)f->evidence->untracked) :
			    json_null());
	json_object_set_new(o, "project_policy", f->project_policy ?
			    json_pack("{s:o,s:b}", "path", record_jstr(f->project_policy), "trusted",
				      f->project_policy_trusted) : json_null());
	json_object_set_new(o, "context", s->context ? record_jstr(s->context) : json_null());
	record_dump(s, o);
	json_decref(o);
}
