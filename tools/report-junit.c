/* JUnit XML for CI test views: one testcase per rule that the run met
 * (denied, alerted, allowed or warned), a <failure> for every rule that
 * denied something; alerts and warnings pass, listed in <system-out>. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tools/report.h"

/* XML 1.0 text: markup characters as entities; control characters, which
 * XML 1.0 cannot carry at all, as the text "\xHH". */
static void junit_esc(FILE *out, const char *s, bool attr)
{
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;

		switch (c) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		case '\'': fputs("&apos;", out); break;
		case '\n': fputs(attr ? "&#10;" : "\n", out); break;
		case '\t': fputs(attr ? "&#9;" : "\t", out); break;
		case '\r': fputs("&#13;", out); break;
		default:
			if (c < 0x20)
				fprintf(out, "\\x%02X", c);
			else
				fputc(c, out);
		}
	}
}

static void junit_finding_text(const struct report *r, const struct report_finding *f, FILE *out)
{
	const struct report_alert *a = &r->alerts[f->first];

	fprintf(out, "%s %s ", report_verb(a), a->kind_name);
	junit_esc(out, a->object, false);
	if (f->count > 1)
		fprintf(out, " (%zu times)", f->count);
	fprintf(out, "\n  process: pid %ld ", a->pid);
	junit_esc(out, a->cmdline && *a->cmdline ? a->cmdline : a->exe ? a->exe : "?", false);
	fputc('\n', out);
	if (a->why) {
		fputs("  why: ", out);
		junit_esc(out, a->why, false);
		fputc('\n', out);
	}
	if (a->syscall) {
		fputs("  syscall: ", out);
		junit_esc(out, a->syscall, false);
		if (a->err) {
			fputs(" failed with ", out);
			junit_esc(out, a->err, false);
		}
		fputc('\n', out);
	}
	if (a->suggest) {
		fputs("  suggest: ", out);
		junit_esc(out, a->suggest, false);
		fputc('\n', out);
	}
	for (size_t i = 0; i < a->n_frames; i++) {
		char fr[1024];

		report_frame_text(&a->frames[i], i, fr, sizeof(fr));
		fputs(i ? "    " : "  backtrace:\n    ", out);
		junit_esc(out, fr, false);
		fputc('\n', out);
	}
	fprintf(out, "  first at: ");
	junit_esc(out, a->time ? a->time : "?", false);
	fprintf(out, " (log line %zu)\n", a->line);
}

static void junit_testcase(const struct report *r, const struct report_rule *ru, FILE *out)
{
	bool any_other = false;

	fputs("    <testcase classname=\"agenttrace.", out);
	junit_esc(out, ru->kind_name, true);
	fputs("\" name=\"", out);
	junit_esc(out, ru->id, true);
	fputs("\" time=\"0\"", out);
	if (!ru->deny && ru->first_alert == REPORT_NONE) {
		fputs("/>\n", out);
		return;
	}
	fputs(">\n", out);
	if (ru->deny) {
		const struct report_alert *first = NULL;

		for (size_t i = 0; i < r->n_findings && !first; i++) {
			const struct report_alert *a = &r->alerts[r->findings[i].first];

			if (a->action && strcmp(a->action, "deny") == 0 && strcmp(a->rule, ru->id) == 0)
				first = a;
		}
		fprintf(out, "      <failure type=\"deny\" message=\"%zu denied: ", ru->deny);
		if (first) {
			junit_esc(out, first->kind_name, true);
			fputc(' ', out);
			junit_esc(out, first->object, true);
		}
		if (ru->why) {
			fputs(" (", out);
			junit_esc(out, ru->why, true);
			fputc(')', out);
		}
		fputs("\">", out);
		for (size_t i = 0; i < r->n_findings; i++) {
			const struct report_alert *a = &r->alerts[r->findings[i].first];

			if (a->action && strcmp(a->action, "deny") == 0 && strcmp(a->rule, ru->id) == 0)
				junit_finding_text(r, &r->findings[i], out);
		}
		fputs("</failure>\n", out);
	}
	for (size_t i = 0; i < r->n_findings; i++) {
		const struct report_alert *a = &r->alerts[r->findings[i].first];

		if (strcmp(a->rule, ru->id) != 0 || (a->action && strcmp(a->action, "deny") == 0))
			continue;
		if (!any_other)
			fputs("      <system-out>", out);
		any_other = true;
		junit_finding_text(r, &r->findings[i], out);
	}
	if (any_other)
		fputs("</system-out>\n", out);
	fputs("    </testcase>\n", out);
}

static void junit_property(FILE *out, const char *name, const char *value)
{
	if (!value)
		return;
	fprintf(out, "      <property name=\"%s\" value=\"", name);
	junit_esc(out, value, true);
	fputs("\"/>\n", out);
}

/* The summary's egress in the suite's output: an allowed destination is
 * no test result, a denied one already fails its rule's testcase. */
static bool junit_egress(const struct report *r, FILE *out)
{
	if (!r->has_egress || (!r->n_egress && !r->egress_other_allowed && !r->egress_other_denied))
		return false;
	fputs("egress (destination: allowed, denied):\n", out);
	for (size_t i = 0; i < r->n_egress; i++) {
		char dest[1024];

		report_dest_text(&r->egress[i], dest, sizeof(dest));
		junit_esc(out, dest, false);
		fprintf(out, ": %lld, %lld\n", r->egress[i].allowed, r->egress[i].denied);
	}
	if (r->egress_other_allowed || r->egress_other_denied)
		fprintf(out, "other destinations, not told apart: %lld, %lld\n",
			r->egress_other_allowed, r->egress_other_denied);
	return true;
}

/* The summary's dependencies in the suite's output: a change is for a
 * reviewer to judge, no test result. */
static void junit_deps(const struct report *r, FILE *out)
{
	if (!r->n_depfiles)
		return;
	fprintf(out, "dependencies: %lld added, %lld removed, %lld changed\n", r->deps_added,
		r->deps_removed, r->deps_changed);
	for (size_t i = 0; i < r->n_depfiles; i++) {
		const struct report_depfile *x = &r->depfiles[i];

		junit_esc(out, x->path, false);
		fputs(" (", out);
		junit_esc(out, x->status, false);
		fputs(x->parsed ? ")\n" : ", not parsed)\n", out);
		for (size_t j = 0; j < x->n_pkgs; j++) {
			const struct report_dep *d = &x->pkgs[j];

			fprintf(out, "  %s ", report_dep_change(d));
			junit_esc(out, d->name, false);
			fputc(' ', out);
			junit_esc(out, d->from ? d->from : "", false);
			fputs(d->from && d->to ? " -> " : "", out);
			junit_esc(out, d->to ? d->to : "", false);
			fputc('\n', out);
		}
		if (x->cut)
			fprintf(out, "  (%lld more not listed)\n", x->cut);
	}
}

/* The installed packages and install scripts in the suite's output. */
static void junit_installed(const struct report *r, FILE *out)
{
	for (size_t i = 0; i < r->n_installs; i++) {
		const struct report_install *x = &r->installs[i];

		fputs(i ? "" : "installed:\n", out);
		fputs(x->flagged ? "! " : "  ", out);
		junit_esc(out, x->ecosystem, false);
		fputc(' ', out);
		junit_esc(out, x->name, false);
		fputc(' ', out);
		junit_esc(out, x->version, false);
		fputs(" (", out);
		junit_esc(out, x->source, false);
		if (x->url) {
			fputs(": ", out);
			junit_esc(out, x->url, false);
		}
		fputs(")\n", out);
	}
	for (size_t i = 0; i < r->n_scripts; i++) {
		fputs(i ? "" : "install scripts run:\n", out);
		fputs("  ", out);
		junit_esc(out, r->scripts[i].package ? r->scripts[i].package : "(source build)", false);
		fputs(": ", out);
		junit_esc(out, r->scripts[i].command, false);
		fputc('\n', out);
	}
}

/* The suite's one output: egress, then dependencies. */
static void junit_output(const struct report *r, FILE *out)
{
	bool egress = r->has_egress && (r->n_egress || r->egress_other_allowed ||
					r->egress_other_denied);

	if (!egress && !r->n_depfiles && !r->n_installs && !r->n_scripts)
		return;
	fputs("    <system-out>", out);
	junit_egress(r, out);
	junit_deps(r, out);
	junit_installed(r, out);
	fputs("</system-out>\n", out);
}

int report_junit(const struct report *r, FILE *out)
{
	size_t tests = r->n_rules ? r->n_rules : 1, failures = 0;
	double secs = r->has_summary && r->duration_ms >= 0 ? (double)r->duration_ms / 1000.0 : 0.0;
	char stamp[32] = "", num[32];

	for (size_t i = 0; i < r->n_rules; i++)
		if (r->rules[i].deny)
			failures++;
	if (r->t_first >= 0) {
		time_t t = (time_t)(r->t_first / 1000);
		struct tm tm;

		gmtime_r(&t, &tm);
		strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
	}
	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", out);
	fprintf(out, "<testsuites name=\"agenttrace\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" "
		"time=\"%.3f\">\n", tests, failures, secs);
	fputs("  <testsuite name=\"agenttrace: ", out);
	junit_esc(out, r->log_name, true);
	fprintf(out, "\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"0\" time=\"%.3f\"",
		tests, failures, secs);
	if (*stamp)
		fprintf(out, " timestamp=\"%s\"", stamp);
	fputs(">\n    <properties>\n", out);
	junit_property(out, "log", r->log_name);
	junit_property(out, "session", r->session);
	junit_property(out, "policy", r->policy);
	junit_property(out, "mode", r->mode);
	junit_property(out, "command", r->command);
	if (r->has_summary) {
		snprintf(num, sizeof(num), "%ld", r->exit_code);
		junit_property(out, "exit_code", num);
	}
	snprintf(num, sizeof(num), "%zu", r->malformed);
	junit_property(out, "malformed_lines", num);
	fputs("    </properties>\n", out);
	for (size_t i = 0; i < r->n_rules; i++)
		junit_testcase(r, &r->rules[i], out);
	if (!r->n_rules)
		fputs("    <testcase classname=\"agenttrace.session\" name=\"no denials\" time=\"0\"/>\n",
		      out);
	junit_output(r, out);
	fputs("  </testsuite>\n</testsuites>\n", out);
	return ferror(out) ? -1 : 0;
}
