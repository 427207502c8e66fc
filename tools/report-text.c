/* The plain text report: for a terminal and for golden-file tests (no
 * colour, no width detection: the same log gives the same bytes).  Every
 * value from the log is the command's choice and goes out escaped
 * (lib/textesc.h): no control byte, no line of its own. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/textesc.h"
#include "lib/xalloc.h"
#include "tools/report.h"

#define TEXT_CMD_MAX 100
#define TEXT_SCRIPT_LINES 5

/* A value of the log, escaped. */
static void text_put(FILE *out, const char *s)
{
	textesc_fputs(out, s, 0);
}

/* "LABEL VALUE\n" with the value escaped. */
static void text_field(FILE *out, const char *label, const char *value)
{
	fputs(label, out);
	text_put(out, value);
	fputc('\n', out);
}

static void text_proc_label(FILE *out, const struct report_proc *p)
{
	char buf[TEXT_CMD_MAX + 8];
	const char *cmd = p->cmdline && *p->cmdline ? p->cmdline : p->exe ? p->exe : "?";

	fprintf(out, "%ld ", p->pid);
	text_put(out, report_trunc(cmd, TEXT_CMD_MAX, buf, sizeof(buf)));
	if (p->exited) {
		if (p->signal)
			fprintf(out, "  killed by signal %ld", p->signal);
		else
			fprintf(out, "  exit %ld", p->exit_code);
	}
	if (p->n_deny && p->n_alert)
		fprintf(out, "  [%zu denied, %zu alert%s]", p->n_deny, p->n_alert,
			p->n_alert == 1 ? "" : "s");
	else if (p->n_deny)
		fprintf(out, "  [%zu denied]", p->n_deny);
	else if (p->n_alert)
		fprintf(out, "  [%zu alert%s]", p->n_alert, p->n_alert == 1 ? "" : "s");
	fputc('\n', out);
}

static void text_tree(const struct report *r, FILE *out)
{
	size_t *order = xmalloc((r->n_procs + 1) * sizeof(*order));
	unsigned *depth = xmalloc((r->n_procs + 1) * sizeof(*depth));
	bool *more = xcalloc(r->n_procs + 2, sizeof(*more));
	size_t n = report_tree_order(r, order, depth);

	fprintf(out, "Process tree:\n");
	if (!n)
		fprintf(out, "  (no process in the log)\n");
	for (size_t i = 0; i < n; i++) {
		const struct report_proc *p = &r->procs[order[i]];
		unsigned d = depth[i];

		if (d > 0) {
			const struct report_proc *par = &r->procs[p->parent];

			more[d] = par->children[par->n_children - 1] != order[i];
		}
		fputs("  ", out);
		for (unsigned l = 1; l < d; l++)
			fputs(more[l] ? "|   " : "    ", out);
		if (d > 0)
			fputs(more[d] ? "|-- " : "`-- ", out);
		text_proc_label(out, p);
	}
	free(order);
	free(depth);
	free(more);
}

static void text_counts(const struct report *r, FILE *out)
{
	size_t td = 0, ta = 0;

	fprintf(out, "Counts:\n");
	fprintf(out, "  %-10s %6s %6s\n", "kind", "deny", "alert");
	for (int k = 0; k < REPORT_KIND_COUNT; k++) {
		if (!r->counts[k][0] && !r->counts[k][1])
			continue;
		fprintf(out, "  %-10s %6zu %6zu\n", report_kind_name((enum report_kind)k),
			r->counts[k][0], r->counts[k][1]);
		td += r->counts[k][0];
		ta += r->counts[k][1];
	}
	fprintf(out, "  %-10s %6zu %6zu\n", "total", td, ta);
}

static void text_rules(const struct report *r, FILE *out)
{
	bool any = false;

	for (size_t i = 0; i < r->n_rules; i++) {
		const struct report_rule *ru = &r->rules[i];

		if (!ru->deny && !ru->alert)
			continue;
		if (!any)
			fprintf(out, "\nRules:\n");
		any = true;
		size_t w = strlen(ru->id);

		fputs("  ", out);
		text_put(out, ru->id);
		fprintf(out, "%*s deny %zu, alert %zu\n", w < 40 ? (int)(40 - w) : 0, "", ru->deny,
			ru->alert);
	}
}

/* The summary's egress: each destination with its calls allowed and
 * denied, the calls beyond the table's bound counted at the end. */
static void text_egress(const struct report *r, FILE *out)
{
	if (!r->has_egress)
		return;
	fprintf(out, "\nEgress:\n");
	if (!r->n_egress && !r->egress_other_allowed && !r->egress_other_denied) {
		fprintf(out, "  (no connect or send to an address)\n");
		return;
	}
	fprintf(out, "  %-50s %7s %7s\n", "destination", "allowed", "denied");
	for (size_t i = 0; i < r->n_egress; i++) {
		const struct report_dest *d = &r->egress[i];
		char dest[1024];
		size_t w;

		report_dest_text(d, dest, sizeof(dest));
		w = strlen(dest);
		fputs("  ", out);
		text_put(out, dest);
		fprintf(out, "%*s %7lld %7lld\n", w < 50 ? (int)(50 - w) : 0, "", d->allowed,
			d->denied);
	}
	if (r->egress_other_allowed || r->egress_other_denied)
		fprintf(out, "  %-50s %7lld %7lld\n", "(other destinations, not told apart)",
			r->egress_other_allowed, r->egress_other_denied);
}

/* The summary's dependencies: per file, the packages added, removed and
 * changed.  Nothing when no dependency file changed. */
static void text_deps(const struct report *r, FILE *out)
{
	if (!r->n_depfiles)
		return;
	fprintf(out, "\nDependencies: %lld added, %lld removed, %lld changed\n", r->deps_added,
		r->deps_removed, r->deps_changed);
	for (size_t i = 0; i < r->n_depfiles; i++) {
		const struct report_depfile *x = &r->depfiles[i];

		fputs("  ", out);
		text_put(out, x->path);
		fputs(" (", out);
		text_put(out, x->status);
		fputs(x->parsed ? ")\n" : ", not parsed)\n", out);
		for (size_t j = 0; j < x->n_pkgs; j++) {
			const struct report_dep *d = &x->pkgs[j];

			fprintf(out, "    %-8s ", report_dep_change(d));
			text_put(out, d->name);
			fputc(' ', out);
			text_put(out, d->from ? d->from : "");
			fputs(d->from && d->to ? " -> " : "", out);
			text_put(out, d->to ? d->to : "");
			fputc('\n', out);
		}
		if (x->cut)
			fprintf(out, "    (%lld more not listed)\n", x->cut);
	}
	if (r->deps_truncated)
		fprintf(out, "  (the look at the project stopped at a bound: not every file was seen)\n");
}

/* The summary's installed packages and install scripts. */
static void text_installed(const struct report *r, FILE *out)
{
	if (!r->n_installs && !r->n_scripts)
		return;
	if (r->n_installs)
		fprintf(out, "\nInstalled: %zu package%s, %lld flagged\n", r->n_installs,
			r->n_installs == 1 ? "" : "s", r->installs_flagged);
	for (size_t i = 0; i < r->n_installs; i++) {
		const struct report_install *x = &r->installs[i];

		fprintf(out, "  %s ", x->flagged ? "!" : " ");
		text_put(out, x->ecosystem);
		fputc(' ', out);
		text_put(out, x->name);
		fputc(' ', out);
		text_put(out, x->version);
		fputs(" (", out);
		text_put(out, x->source);
		if (x->url) {
			fputs(": ", out);
			text_put(out, x->url);
		}
		fputs(x->install_script ? ", has install scripts)\n" : ")\n", out);
	}
	if (r->n_scripts)
		fprintf(out, "\nInstall scripts run:\n");
	for (size_t i = 0; i < r->n_scripts; i++) {
		const struct report_script *x = &r->scripts[i];

		fputs("  ", out);
		text_put(out, x->ecosystem);
		fputc(' ', out);
		text_put(out, x->package ? x->package : "(source build)");
		fputs(": ", out);
		text_put(out, x->command);
		fputc('\n', out);
	}
}

static void text_script(const char *script, FILE *out)
{
	const char *p = script;

	fprintf(out, "     script:\n");
	for (int n = 0; *p && n < TEXT_SCRIPT_LINES; n++) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);

		fputs("       | ", out);
		textesc_fput(out, p, len > 200 ? 200 : len, TEXTESC_KEEP_TAB);
		fputc('\n', out);
		if (!nl)
			return;
		p = nl + 1;
	}
	if (*p)
		fprintf(out, "       | ...\n");
}

static void text_finding(const struct report *r, size_t n, const struct report_finding *f,
			 FILE *out)
{
	const struct report_alert *a = &r->alerts[f->first];
	char buf[TEXT_CMD_MAX + 8];

	fprintf(out, "  %zu. %s ", n, report_verb(a));
	text_put(out, a->kind_name);
	fputc(' ', out);
	text_put(out, a->object);
	if (f->count > 1)
		fprintf(out, "  (%zu times)", f->count);
	fputc('\n', out);
	text_field(out, "     rule:      ", a->rule);
	if (a->why)
		text_field(out, "     why:       ", a->why);
	fprintf(out, "     process:   pid %ld ", a->pid);
	text_field(out, "", report_trunc(a->cmdline && *a->cmdline ? a->cmdline :
					 a->exe ? a->exe : "?", TEXT_CMD_MAX, buf, sizeof(buf)));
	if (a->syscall) {
		fputs("     syscall:   ", out);
		text_put(out, a->syscall);
		if (a->err) {
			fputs(", failed with ", out);
			text_put(out, a->err);
		}
		fputc('\n', out);
	}
	if (a->mode && strcmp(a->mode, "audit") == 0)
		fprintf(out, "     mode:      audit (let through)\n");
	if (a->context)
		text_field(out, "     context:   ", a->context);
	if (a->suggest)
		text_field(out, "     suggest:   ", a->suggest);
	if (a->script)
		text_script(a->script, out);
	if (a->n_frames) {
		fprintf(out, "     backtrace:\n");
		for (size_t i = 0; i < a->n_frames; i++) {
			char fr[1024];

			report_frame_text(&a->frames[i], i, fr, sizeof(fr));
			text_field(out, "       ", fr);
		}
	}
	fputs("     first at:  ", out);
	text_put(out, a->time ? a->time : "?");
	fprintf(out, " (log line %zu)\n", a->line);
}

int report_text(const struct report *r, FILE *out)
{
	size_t deny = 0, alert = 0, n = 0;
	char buf[64];

	for (int k = 0; k < REPORT_KIND_COUNT; k++) {
		deny += r->counts[k][0];
		alert += r->counts[k][1];
	}
	text_field(out, "agenttrace report: ", r->log_name);
	if (r->session)
		text_field(out, "session:  ", r->session);
	if (r->has_summary) {
		fputs("policy:   ", out);
		text_put(out, r->policy ? r->policy : "?");
		fputs(" (", out);
		text_put(out, r->mode ? r->mode : "?");
		fputs(")\n", out);
		if (r->command && *r->command)
			text_field(out, "command:  ", r->command);
		if (r->signal)
			fprintf(out, "result:   killed by signal %ld", r->signal);
		else
			fprintf(out, "result:   exit %ld", r->exit_code);
		if (r->duration_ms >= 0)
			fprintf(out, " after %lld ms", r->duration_ms);
		if (r->processes >= 0)
			fprintf(out, ", %lld process%s", r->processes, r->processes == 1 ? "" : "es");
		fputc('\n', out);
		if (r->lost)
			fprintf(out, "lost:     %lld records could not be written\n", r->lost);
	} else {
		fprintf(out, "result:   unknown (the log has no summary record: the run did not end)\n");
	}
	fprintf(out, "%zu denied, %zu alert%s", deny, alert, alert == 1 ? "" : "s");
	if (r->n_warnings)
		fprintf(out, ", %zu warning%s", r->n_warnings, r->n_warnings == 1 ? "" : "s");
	fprintf(out, "\n\n");

	text_tree(r, out);
	fputc('\n', out);
	text_counts(r, out);
	text_rules(r, out);
	text_egress(r, out);
	text_deps(r, out);
	text_installed(r, out);

	if (deny + alert) {
		fprintf(out, "\nDenials and alerts:\n");
		for (size_t i = 0; i < r->n_findings; i++)
			if (r->alerts[r->findings[i].first].action)
				text_finding(r, ++n, &r->findings[i], out);
	}
	if (r->n_warnings) {
		fprintf(out, "\nWarnings:\n");
		for (size_t i = 0; i < r->n_findings; i++) {
			const struct report_alert *a = &r->alerts[r->findings[i].first];

			if (!a->action) {
				fputs("  ", out);
				text_put(out, a->rule);
				fputs(": ", out);
				text_put(out, a->why ? a->why : "");
				fprintf(out, " (pid %ld)\n", a->pid);
			}
		}
	}
	if (report_malformed_text(r, buf, sizeof(buf))) {
		fprintf(out, "\n%s (first: ", buf);
		text_put(out, r->first_bad ? r->first_bad : "?");
		fputs(")\n", out);
	}
	return ferror(out) ? -1 : 0;
}
