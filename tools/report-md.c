/* The Markdown report: GitHub-flavoured, for CI job summaries
 * ($GITHUB_STEP_SUMMARY) and merge-request comments.  Every value from
 * the log is untrusted text: it goes out escaped (lib/textesc.h: control
 * bytes as \xHH) and HTML-escaped inside <code> (or a fenced block whose
 * fence is longer than any backtick run in it), so that a file name
 * cannot inject markup, links, table columns or workflow commands. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/textesc.h"
#include "lib/xalloc.h"
#include "tools/report.h"

#define MD_CMD_MAX 100
#define MD_FINDINGS_MAX 200

/* Text inside HTML or Markdown (lib/textesc.h): control bytes as \xHH,
 * every character either language reads ('|' would split a table cell
 * even inside <code>) as a character reference. */
static void md_esc(FILE *out, const char *s)
{
	textesc_markdown(out, s);
}

static void md_code(FILE *out, const char *s)
{
	fputs("<code>", out);
	md_esc(out, s);
	fputs("</code>", out);
}

/* A fenced block of text: the fence outgrows any backtick run; each
 * line escaped (lib/textesc.h), tabs kept, and a line cannot begin with
 * "::" (a workflow command, when the report is printed in a CI log). */
static void md_fence(FILE *out, const char *text)
{
	size_t run = 0, longest = 0;

	for (const char *p = text; *p; p++) {
		run = *p == '`' ? run + 1 : 0;
		if (run > longest)
			longest = run;
	}
	longest = longest < 3 ? 3 : longest + 1;
	for (size_t i = 0; i < longest; i++)
		fputc('`', out);
	fputs("text\n", out);
	for (const char *p = text; *p;) {
		const char *nl = strchrnul(p, '\n');

		textesc_fput(out, p, (size_t)(nl - p), TEXTESC_LINE | TEXTESC_KEEP_TAB);
		fputc('\n', out);
		p = *nl ? nl + 1 : nl;
	}
	for (size_t i = 0; i < longest; i++)
		fputc('`', out);
	fputc('\n', out);
}

static void md_tree(const struct report *r, FILE *out)
{
	size_t *order = xmalloc((r->n_procs + 1) * sizeof(*order));
	unsigned *depth = xmalloc((r->n_procs + 1) * sizeof(*depth));
	bool *more = xcalloc(r->n_procs + 2, sizeof(*more));
	size_t n = report_tree_order(r, order, depth);
	size_t len = 0, cap = 4096;
	char *text = xmalloc(cap);

	text[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		const struct report_proc *p = &r->procs[order[i]];
		const char *cmd = p->cmdline && *p->cmdline ? p->cmdline : p->exe ? p->exe : "?";
		char buf[MD_CMD_MAX + 8], line[MD_CMD_MAX + 256], *prefix;
		unsigned d = depth[i];
		int m;

		if (d > 0) {
			const struct report_proc *par = &r->procs[p->parent];

			more[d] = par->children[par->n_children - 1] != order[i];
		}
		prefix = xcalloc((size_t)d * 4 + 1, 1);
		for (unsigned l = 1; l < d; l++)
			strcat(prefix, more[l] ? "|   " : "    ");
		if (d > 0)
			strcat(prefix, more[d] ? "|-- " : "`-- ");
		while (len + strlen(prefix) + 1 > cap) {
			cap *= 2;
			text = xrealloc(text, cap);
		}
		len += (size_t)sprintf(text + len, "%s", prefix);
		free(prefix);
		m = snprintf(line, sizeof(line), "%ld %s", p->pid,
			     report_trunc(cmd, MD_CMD_MAX, buf, sizeof(buf)));
		if (p->exited && (size_t)m < sizeof(line))
			m += p->signal ? snprintf(line + m, sizeof(line) - (size_t)m,
						  "  killed by signal %ld", p->signal) :
					 snprintf(line + m, sizeof(line) - (size_t)m, "  exit %ld",
						  p->exit_code);
		if ((p->n_deny || p->n_alert) && (size_t)m < sizeof(line))
			snprintf(line + m, sizeof(line) - (size_t)m, "  [%zu denied, %zu alert%s]",
				 p->n_deny, p->n_alert, p->n_alert == 1 ? "" : "s");
		while (len + strlen(line) + 2 > cap) {
			cap *= 2;
			text = xrealloc(text, cap);
		}
		len += (size_t)sprintf(text + len, "%s\n", line);
	}
	fprintf(out, "\n### Process tree\n\n");
	if (n) {
		/* Deep trees are long: folded unless small. */
		if (n > 20)
			fprintf(out, "<details><summary>%zu processes</summary>\n\n", n);
		md_fence(out, text);
		if (n > 20)
			fprintf(out, "\n</details>\n");
	} else {
		fprintf(out, "No process in the log.\n");
	}
	free(text);
	free(order);
	free(depth);
	free(more);
}

static void md_finding_details(const struct report *r, const struct report_finding *f,
			       FILE *out)
{
	const struct report_alert *a = &r->alerts[f->first];

	fprintf(out, "<details><summary>%s ", report_verb(a));
	md_esc(out, a->kind_name);
	fputc(' ', out);
	md_code(out, a->object);
	fprintf(out, " (");
	md_esc(out, a->rule);
	fprintf(out, ")</summary>\n\n");
	if (a->why) {
		fprintf(out, "- **why:** ");
		md_esc(out, a->why);
		fputc('\n', out);
	}
	fprintf(out, "- **process:** pid %ld ", a->pid);
	md_code(out, a->cmdline && *a->cmdline ? a->cmdline : a->exe ? a->exe : "?");
	fputc('\n', out);
	if (a->syscall) {
		fprintf(out, "- **syscall:** ");
		md_code(out, a->syscall);
		if (a->err) {
			fprintf(out, " failed with ");
			md_code(out, a->err);
		}
		fputc('\n', out);
	}
	if (a->suggest) {
		fprintf(out, "- **suggest:** ");
		md_code(out, a->suggest);
		fputc('\n', out);
	}
	fprintf(out, "- **first at:** ");
	md_esc(out, a->time ? a->time : "?");
	fprintf(out, " (log line %zu)", a->line);
	if (f->count > 1)
		fprintf(out, ", %zu times in all", f->count);
	fputc('\n', out);
	if (a->script) {
		fprintf(out, "\nscript:\n\n");
		md_fence(out, a->script);
	}
	if (a->n_frames) {
		size_t cap = a->n_frames * 1100 + 1, len = 0;
		char *bt = xmalloc(cap);

		bt[0] = '\0';
		for (size_t i = 0; i < a->n_frames; i++) {
			char fr[1024];

			report_frame_text(&a->frames[i], i, fr, sizeof(fr));
			len += (size_t)snprintf(bt + len, cap - len, "%s\n", fr);
		}
		fprintf(out, "\nbacktrace:\n\n");
		md_fence(out, bt);
		free(bt);
	}
	fprintf(out, "\n</details>\n\n");
}

/* The summary's egress as a table (GitHub shows the first rows of a
 * long one; the table is bounded by the summary's own bound). */
static void md_egress(const struct report *r, FILE *out)
{
	if (!r->has_egress)
		return;
	fprintf(out, "\n### Egress\n\n");
	if (!r->n_egress && !r->egress_other_allowed && !r->egress_other_denied) {
		fprintf(out, "No connect or send to an address.\n");
		return;
	}
	fprintf(out, "| destination | allowed | denied |\n|---|---:|---:|\n");
	for (size_t i = 0; i < r->n_egress; i++) {
		char dest[1024];

		report_dest_text(&r->egress[i], dest, sizeof(dest));
		fprintf(out, "| ");
		md_code(out, dest);
		fprintf(out, r->egress[i].denied ? " | %lld | **%lld** |\n" : " | %lld | %lld |\n",
			r->egress[i].allowed, r->egress[i].denied);
	}
	if (r->egress_other_allowed || r->egress_other_denied)
		fprintf(out, "| other destinations, not told apart | %lld | %lld |\n",
			r->egress_other_allowed, r->egress_other_denied);
}

/* The summary's dependencies: a table per file the session changed.
 * Nothing when no dependency file changed. */
static void md_deps(const struct report *r, FILE *out)
{
	if (!r->n_depfiles)
		return;
	fprintf(out, "\n### Dependencies\n\n%lld added, %lld removed, %lld changed in %zu file%s.\n",
		r->deps_added, r->deps_removed, r->deps_changed, r->n_depfiles,
		r->n_depfiles == 1 ? "" : "s");
	for (size_t i = 0; i < r->n_depfiles; i++) {
		const struct report_depfile *x = &r->depfiles[i];

		fprintf(out, "\n");
		md_code(out, x->path);
		fprintf(out, " (");
		md_esc(out, x->status);
		fprintf(out, ")%s\n\n", x->parsed ? ":" : ": not parsed, the packages are not known");
		if (!x->n_pkgs)
			continue;
		fprintf(out, "| package | change | from | to |\n|---|---|---|---|\n");
		for (size_t j = 0; j < x->n_pkgs; j++) {
			const struct report_dep *d = &x->pkgs[j];

			fprintf(out, "| ");
			md_code(out, d->name);
			fprintf(out, " | %s | ", report_dep_change(d));
			if (d->from)
				md_code(out, d->from);
			fprintf(out, " | ");
			if (d->to)
				md_code(out, d->to);
			fprintf(out, " |\n");
		}
		if (x->cut)
			fprintf(out, "\n%lld more not listed.\n", x->cut);
	}
	if (r->deps_truncated)
		fprintf(out, "\n> The look at the project stopped at a bound: not every file was seen.\n");
}

/* The summary's installed packages (flagged ones in bold) and install
 * scripts. */
static void md_installed(const struct report *r, FILE *out)
{
	if (r->n_installs) {
		fprintf(out, "\n### Installed packages\n\n%zu installed, %lld flagged (a URL, git or "
			"a path outside the project).\n\n", r->n_installs, r->installs_flagged);
		fprintf(out, "| package | version | ecosystem | source | from | |\n"
			"|---|---|---|---|---|---|\n");
	}
	for (size_t i = 0; i < r->n_installs; i++) {
		const struct report_install *x = &r->installs[i];

		fprintf(out, "| ");
		md_code(out, x->name);
		fprintf(out, " | ");
		md_code(out, x->version);
		fprintf(out, " | ");
		md_esc(out, x->ecosystem);
		fprintf(out, x->flagged ? " | **" : " | ");
		md_esc(out, x->source);
		fprintf(out, x->flagged ? "** | " : " | ");
		if (x->url)
			md_code(out, x->url);
		fprintf(out, " | %s%s |\n", x->flagged ? "flagged" : "",
			x->install_script ? (x->flagged ? ", install scripts" : "install scripts") : "");
	}
	if (r->n_scripts)
		fprintf(out, "\n### Install scripts run\n\n| package | command |\n|---|---|\n");
	for (size_t i = 0; i < r->n_scripts; i++) {
		const struct report_script *x = &r->scripts[i];

		fprintf(out, "| ");
		md_esc(out, x->ecosystem);
		fprintf(out, " ");
		if (x->package)
			md_code(out, x->package);
		else
			fprintf(out, "(source build)");
		fprintf(out, " | ");
		md_code(out, x->command);
		fprintf(out, " |\n");
	}
}

int report_markdown(const struct report *r, FILE *out)
{
	size_t deny = 0, alert = 0, shown = 0;
	char buf[64];

	for (int k = 0; k < REPORT_KIND_COUNT; k++) {
		deny += r->counts[k][0];
		alert += r->counts[k][1];
	}
	fprintf(out, "## agenttrace: %s%zu denied, %zu alert%s\n\n", deny ? "\u26d4 " : "", deny,
		alert, alert == 1 ? "" : "s");
	if (r->has_summary) {
		fprintf(out, "| | |\n|---|---|\n");
		if (r->command && *r->command) {
			char cb[MD_CMD_MAX + 8];

			fprintf(out, "| command | ");
			md_code(out, report_trunc(r->command, MD_CMD_MAX, cb, sizeof(cb)));
			fprintf(out, " |\n");
		}
		if (r->signal)
			fprintf(out, "| result | killed by signal %ld |\n", r->signal);
		else
			fprintf(out, "| result | exit %ld |\n", r->exit_code);
		fprintf(out, "| policy | ");
		md_code(out, r->policy ? r->policy : "?");
		fprintf(out, " (");
		md_esc(out, r->mode ? r->mode : "?");
		fprintf(out, ") |\n");
		if (r->duration_ms >= 0)
			fprintf(out, "| duration | %lld ms |\n", r->duration_ms);
		if (r->processes >= 0)
			fprintf(out, "| processes | %lld |\n", r->processes);
		if (r->context) {
			fprintf(out, "| context | ");
			md_esc(out, r->context);
			fprintf(out, " |\n");
		}
		if (r->lost)
			fprintf(out, "| lost records | %lld |\n", r->lost);
	} else {
		fprintf(out, "The log has no summary record: the run did not end.\n");
	}

	if (deny + alert) {
		fprintf(out, "\n### Counts\n\n| kind | deny | alert |\n|---|---:|---:|\n");
		for (int k = 0; k < REPORT_KIND_COUNT; k++)
			if (r->counts[k][0] || r->counts[k][1])
				fprintf(out, "| %s | %zu | %zu |\n", report_kind_name((enum report_kind)k),
					r->counts[k][0], r->counts[k][1]);
		fprintf(out, "| **total** | **%zu** | **%zu** |\n", deny, alert);

		fprintf(out, "\n### Denials and alerts\n\n"
			"| action | kind | object | rule | why | count |\n"
			"|---|---|---|---|---|---:|\n");
		for (size_t i = 0; i < r->n_findings && shown < MD_FINDINGS_MAX; i++) {
			const struct report_finding *f = &r->findings[i];
			const struct report_alert *a = &r->alerts[f->first];
			char ob[MD_CMD_MAX + 8];

			if (!a->action)
				continue;
			shown++;
			fprintf(out, "| %s | ", strcmp(a->action, "deny") == 0 ? "**deny**" : "alert");
			md_esc(out, a->kind_name);
			fprintf(out, " | ");
			md_code(out, report_trunc(a->object, MD_CMD_MAX, ob, sizeof(ob)));
			fprintf(out, " | ");
			md_code(out, a->rule);
			fprintf(out, " | ");
			md_esc(out, a->why ? a->why : "");
			fprintf(out, " | %zu |\n", f->count);
		}
		if (shown == MD_FINDINGS_MAX)
			fprintf(out, "\nOnly the first %d findings are listed.\n", MD_FINDINGS_MAX);
		fprintf(out, "\n");
		shown = 0;
		for (size_t i = 0; i < r->n_findings && shown < MD_FINDINGS_MAX; i++)
			if (r->alerts[r->findings[i].first].action) {
				shown++;
				md_finding_details(r, &r->findings[i], out);
			}
	} else {
		fprintf(out, "\nNo denials and no alerts.\n");
	}
	if (r->n_warnings) {
		fprintf(out, "\n### Warnings\n\n");
		for (size_t i = 0; i < r->n_findings; i++) {
			const struct report_alert *a = &r->alerts[r->findings[i].first];

			if (a->action)
				continue;
			fprintf(out, "- ");
			md_code(out, a->rule);
			fprintf(out, ": ");
			md_esc(out, a->why ? a->why : "");
			fputc('\n', out);
		}
	}
	md_egress(r, out);
	md_deps(r, out);
	md_installed(r, out);
	md_tree(r, out);
	if (report_malformed_text(r, buf, sizeof(buf))) {
		fprintf(out, "\n> %s (first: ", buf);
		md_esc(out, r->first_bad ? r->first_bad : "?");
		fprintf(out, ")\n");
	}
	return ferror(out) ? -1 : 0;
}
