/* The HTML report: one self-contained page (inline CSS and JS, no
 * network, no external fonts) with the summary, a timeline drawn in SVG,
 * the process tree as nested <details>, and every finding.  Every value
 * from the log is escaped: a log is evidence from an untrusted run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/textesc.h"
#include "lib/xalloc.h"
#include "tools/logread.h"
#include "tools/report.h"

#define HTML_TL_ROWS 200       /* processes drawn in the timeline */
#define HTML_TL_MARKS 5000     /* alert markers drawn */
#define HTML_TL_WIDTH 1000.0   /* px of the time axis */
#define HTML_TL_LABEL 220      /* px of the labels left of it */
#define HTML_TL_ROW 18         /* px per row */
#define HTML_CMD_MAX 120

static void html_esc_raw(FILE *out, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		case '\'': fputs("&#39;", out); break;
		default: fputc(*s, out);
		}
	}
}

/* A value of the log: escaped for a human (lib/textesc.h: control bytes
 * as \xHH, so one line), then for HTML. */
static void html_esc(FILE *out, const char *s)
{
	size_t n = s ? strlen(s) : 0;
	char *safe = xmalloc(4 * n + 1);

	textesc(s ? s : "", n, 0, safe, 4 * n + 1);
	html_esc_raw(out, safe);
	free(safe);
}

/* Text of several lines for a <pre>: each line escaped, tabs kept, and
 * none beginning with "::" (a workflow command, were the page printed in
 * a CI log). */
static void html_pre(FILE *out, const char *s)
{
	for (const char *p = s; p && *p;) {
		const char *nl = strchrnul(p, '\n');
		size_t n = (size_t)(nl - p);
		char *safe = xmalloc(4 * n + 1);

		textesc(p, n, TEXTESC_LINE | TEXTESC_KEEP_TAB, safe, 4 * n + 1);
		html_esc_raw(out, safe);
		free(safe);
		if (*nl)
			fputc('\n', out);
		p = *nl ? nl + 1 : nl;
	}
}

static const char html_style[] =
	"<style>\n"
	":root{--bg:#fff;--fg:#1f2328;--muted:#656d76;--line:#d0d7de;--deny:#cf222e;"
	"--alert:#bf8700;--ok:#1a7f37;--bar:#8fb8de;--card:#f6f8fa}\n"
	"@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--muted:#8d96a0;"
	"--line:#30363d;--card:#161b22;--bar:#2f5f8a}}\n"
	"body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;background:var(--bg);"
	"color:var(--fg);margin:0;padding:24px 32px}\n"
	"h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 10px;"
	"border-bottom:1px solid var(--line);padding-bottom:4px}\n"
	"code,pre,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px}\n"
	".sub{color:var(--muted);margin:0 0 16px}\n"
	".cards{display:flex;flex-wrap:wrap;gap:10px}\n"
	".card{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:8px 14px;min-width:90px}\n"
	".card b{display:block;font-size:20px}.card span{color:var(--muted);font-size:12px}\n"
	".card.deny b{color:var(--deny)}.card.alert b{color:var(--alert)}\n"
	"table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:5px 8px;"
	"border-bottom:1px solid var(--line);vertical-align:top}th{font-weight:600}\n"
	"td.n{text-align:right;font-variant-numeric:tabular-nums}\n"
	".tag{display:inline-block;border-radius:10px;padding:0 8px;font-size:12px;color:#fff}\n"
	".tag.deny{background:var(--deny)}.tag.alert{background:var(--alert)}\n"
	"details.proc{margin-left:18px}details.proc>summary{cursor:pointer;padding:1px 0}\n"
	"div.proc{margin-left:18px;padding:1px 0 1px 16px}\n"
	"#tree>details.proc,#tree>div.proc{margin-left:0}\n"
	".pid{color:var(--muted)}.exit{color:var(--muted);font-size:12px}\n"
	".finding td pre{white-space:pre-wrap;margin:4px 0;background:var(--card);padding:6px;border-radius:6px}\n"
	"#timeline svg{max-width:100%;height:auto;border:1px solid var(--line);border-radius:6px;background:var(--card)}\n"
	"#timeline .bar{fill:var(--bar)}#timeline .deny{fill:var(--deny)}#timeline .alert{fill:var(--alert)}\n"
	"#egress tr.deny td{color:var(--deny)}\n"
	"#timeline text{fill:var(--fg);font:11px ui-monospace,Menlo,Consolas,monospace}\n"
	"#timeline .axis{stroke:var(--line)}#timeline .tick{fill:var(--muted)}\n"
	".tools{margin:6px 0}.tools button{font:inherit;margin-right:6px}\n"
	"input#filter{font:inherit;padding:3px 6px;width:280px}\n"
	"#rules{margin-top:18px}\n"
	".muted{color:var(--muted)}\n"
	"</style>\n";

static const char html_script[] =
	"<script>\n"
	"(function(){\n"
	"  document.documentElement.setAttribute('data-report-ready','1');\n"
	"  function all(sel){return Array.prototype.slice.call(document.querySelectorAll(sel));}\n"
	"  var ex=document.getElementById('expand'),co=document.getElementById('collapse');\n"
	"  if(ex)ex.onclick=function(){all('#tree details').forEach(function(d){d.open=true;});};\n"
	"  if(co)co.onclick=function(){all('#tree details').forEach(function(d){d.open=false;});};\n"
	"  var f=document.getElementById('filter');\n"
	"  if(f)f.oninput=function(){var q=f.value.toLowerCase();\n"
	"    all('#findings tr.finding').forEach(function(tr){\n"
	"      tr.style.display=tr.textContent.toLowerCase().indexOf(q)>=0?'':'none';});};\n"
	"})();\n"
	"</script>\n";

static void html_card(FILE *out, const char *cls, const char *value, const char *label)
{
	fprintf(out, "<div class=\"card %s\"><b>", cls);
	html_esc(out, value);
	fprintf(out, "</b><span>%s</span></div>\n", label);
}

static void html_summary(const struct report *r, FILE *out, size_t deny, size_t alert)
{
	char v[64];

	fprintf(out, "<header>\n<h1>agenttrace report</h1>\n<p class=\"sub\">");
	html_esc(out, r->log_name);
	if (r->session) {
		fprintf(out, " &middot; session <span class=\"mono\">");
		html_esc(out, r->session);
		fprintf(out, "</span>");
	}
	if (r->has_summary && r->command && *r->command) {
		char cb[HTML_CMD_MAX + 8];

		fprintf(out, "<br>command: <code>");
		html_esc(out, report_trunc(r->command, HTML_CMD_MAX, cb, sizeof(cb)));
		fprintf(out, "</code>");
	}
	fprintf(out, "</p>\n<div class=\"cards\" id=\"summary\">\n");
	snprintf(v, sizeof(v), "%zu", deny);
	html_card(out, "deny", v, "denied");
	snprintf(v, sizeof(v), "%zu", alert);
	html_card(out, "alert", v, "alerts");
	if (r->has_summary) {
		if (r->signal)
			snprintf(v, sizeof(v), "signal %ld", r->signal);
		else
			snprintf(v, sizeof(v), "%ld", r->exit_code);
		html_card(out, "", v, "exit");
		if (r->duration_ms >= 0) {
			snprintf(v, sizeof(v), "%lld ms", r->duration_ms);
			html_card(out, "", v, "duration");
		}
		html_card(out, "", r->policy ? r->policy : "?", r->mode && !strcmp(r->mode, "audit") ?
			  "policy (audit)" : "policy (enforce)");
	} else {
		html_card(out, "", "running?", "no summary record");
	}
	snprintf(v, sizeof(v), "%zu", r->n_procs);
	html_card(out, "", v, "processes");
	fprintf(out, "</div>\n</header>\n");
}

static void html_timeline(const struct report *r, FILE *out)
{
	size_t *order = xmalloc((r->n_procs + 1) * sizeof(*order));
	unsigned *depth = xmalloc((r->n_procs + 1) * sizeof(*depth));
	size_t *row = xmalloc((r->n_procs + 1) * sizeof(*row));
	size_t n = report_tree_order(r, order, depth), rows = n < HTML_TL_ROWS ? n : HTML_TL_ROWS;
	double span = r->t_first >= 0 && r->t_last > r->t_first ? (double)(r->t_last - r->t_first) : 1.0;
	double scale = HTML_TL_WIDTH / span;
	int height = (int)rows * HTML_TL_ROW + 34, width = HTML_TL_LABEL + (int)HTML_TL_WIDTH + 20;
	size_t marks = 0;

	for (size_t i = 0; i < r->n_procs; i++)
		row[i] = REPORT_NONE;
	for (size_t i = 0; i < rows; i++)
		row[order[i]] = i;
	fprintf(out, "<section id=\"timeline\">\n<h2>Timeline</h2>\n");
	if (r->t_first < 0 || !n) {
		fprintf(out, "<p class=\"muted\">No timed records.</p>\n</section>\n");
		goto out;
	}
	fprintf(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"timeline-svg\" role=\"img\" "
		"aria-label=\"processes over time, with denials and alerts\" width=\"%d\" height=\"%d\" "
		"viewBox=\"0 0 %d %d\">\n", width, height, width, height);
	for (int t = 0; t <= 4; t++) {
		double x = HTML_TL_LABEL + HTML_TL_WIDTH * t / 4.0;

		fprintf(out, "<line class=\"axis\" x1=\"%.1f\" y1=\"4\" x2=\"%.1f\" y2=\"%d\"/>"
			"<text class=\"tick\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%.0f ms</text>\n",
			x, x, height - 18, x, height - 5, span * t / 4.0);
	}
	for (size_t i = 0; i < rows; i++) {
		const struct report_proc *p = &r->procs[order[i]];
		int64_t s = p->start_ms >= 0 ? p->start_ms : r->t_first;
		int64_t e = p->end_ms >= s ? p->end_ms : s;
		double x = HTML_TL_LABEL + (double)(s - r->t_first) * scale;
		double w = (double)(e - s) * scale;
		int y = (int)i * HTML_TL_ROW + 6;
		char label[64];

		snprintf(label, sizeof(label), "%*s%ld %s", (int)(depth[i] > 6 ? 6 : depth[i]), "",
			 p->pid, logread_base(p->exe));
		fprintf(out, "<g class=\"row\"><text x=\"4\" y=\"%d\" xml:space=\"preserve\">", y + 11);
		html_esc(out, label);
		fprintf(out, "</text><rect class=\"bar\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"12\" "
			"rx=\"3\"><title>", x, y + 1, w < 2 ? 2 : w);
		html_esc(out, p->cmdline ? p->cmdline : "");
		fprintf(out, "</title></rect></g>\n");
	}
	for (size_t i = 0; i < r->n_alerts && marks < HTML_TL_MARKS; i++) {
		const struct report_alert *a = &r->alerts[i];
		size_t rw = a->proc != REPORT_NONE ? row[a->proc] : REPORT_NONE;

		if (!a->action || rw == REPORT_NONE || a->t_ms < 0)
			continue;
		marks++;
		fprintf(out, "<circle class=\"%s\" cx=\"%.1f\" cy=\"%zu\" r=\"5\"><title>",
			strcmp(a->action, "deny") == 0 ? "deny" : "alert",
			HTML_TL_LABEL + (double)(a->t_ms - r->t_first) * scale, rw * HTML_TL_ROW + 13);
		fprintf(out, "%s %s ", report_verb(a), a->kind_name);
		html_esc(out, a->object);
		fprintf(out, " (");
		html_esc(out, a->rule);
		fprintf(out, ")</title></circle>\n");
	}
	fprintf(out, "</svg>\n");
	if (n > rows)
		fprintf(out, "<p class=\"muted\">The first %zu of %zu processes are drawn.</p>\n", rows, n);
	fprintf(out, "</section>\n");
out:
	free(order);
	free(depth);
	free(row);
}

static void html_proc_summary(const struct report_proc *p, FILE *out)
{
	char cb[HTML_CMD_MAX + 8];
	const char *cmd = p->cmdline && *p->cmdline ? p->cmdline : p->exe ? p->exe : "?";

	fprintf(out, "<span class=\"pid\">%ld</span> <code>", p->pid);
	html_esc(out, report_trunc(cmd, HTML_CMD_MAX, cb, sizeof(cb)));
	fprintf(out, "</code>");
	if (p->exited) {
		if (p->signal)
			fprintf(out, " <span class=\"exit\">killed by signal %ld</span>", p->signal);
		else
			fprintf(out, " <span class=\"exit\">exit %ld</span>", p->exit_code);
	}
	if (p->n_deny)
		fprintf(out, " <span class=\"tag deny\">%zu denied</span>", p->n_deny);
	if (p->n_alert)
		fprintf(out, " <span class=\"tag alert\">%zu alert%s</span>", p->n_alert,
			p->n_alert == 1 ? "" : "s");
}

static void html_tree(const struct report *r, FILE *out)
{
	size_t *order = xmalloc((r->n_procs + 1) * sizeof(*order));
	unsigned *depth = xmalloc((r->n_procs + 1) * sizeof(*depth));
	size_t n = report_tree_order(r, order, depth);
	unsigned open = 0; /* <details> elements open */

	fprintf(out, "<section id=\"tree\">\n<h2>Process tree</h2>\n"
		"<div class=\"tools\"><button id=\"expand\" type=\"button\">expand all</button>"
		"<button id=\"collapse\" type=\"button\">collapse all</button></div>\n");
	if (!n)
		fprintf(out, "<p class=\"muted\">No process in the log.</p>\n");
	for (size_t i = 0; i < n; i++) {
		const struct report_proc *p = &r->procs[order[i]];

		while (open > depth[i]) {
			fprintf(out, "</details>\n");
			open--;
		}
		if (p->n_children) {
			fprintf(out, "<details class=\"proc\" open data-pid=\"%ld\"><summary>", p->pid);
			html_proc_summary(p, out);
			fprintf(out, "</summary>\n");
			open++;
		} else {
			fprintf(out, "<div class=\"proc\" data-pid=\"%ld\">", p->pid);
			html_proc_summary(p, out);
			fprintf(out, "</div>\n");
		}
	}
	while (open--)
		fprintf(out, "</details>\n");
	fprintf(out, "</section>\n");
	free(order);
	free(depth);
}

static void html_finding(const struct report *r, const struct report_finding *f, FILE *out)
{
	const struct report_alert *a = &r->alerts[f->first];
	bool deny = strcmp(a->action, "deny") == 0;

	fprintf(out, "<tr class=\"finding %s\"><td><span class=\"tag %s\">%s</span></td><td>%s</td>"
		"<td><details><summary><code>", deny ? "deny" : "alert", deny ? "deny" : "alert",
		deny ? "deny" : "alert", a->kind_name);
	html_esc(out, a->object);
	fprintf(out, "</code></summary>\n");
	if (a->why) {
		fprintf(out, "<div><b>why:</b> ");
		html_esc(out, a->why);
		fprintf(out, "</div>\n");
	}
	fprintf(out, "<div><b>process:</b> pid %ld <code>", a->pid);
	html_esc(out, a->cmdline && *a->cmdline ? a->cmdline : a->exe ? a->exe : "?");
	fprintf(out, "</code></div>\n");
	if (a->syscall) {
		fprintf(out, "<div><b>syscall:</b> <code>");
		html_esc(out, a->syscall);
		fprintf(out, "</code>");
		if (a->err) {
			fprintf(out, " failed with <code>");
			html_esc(out, a->err);
			fprintf(out, "</code>");
		}
		fprintf(out, "</div>\n");
	}
	if (a->suggest) {
		fprintf(out, "<div><b>suggest:</b> <code class=\"suggest\">");
		html_esc(out, a->suggest);
		fprintf(out, "</code></div>\n");
	}
	fprintf(out, "<div><b>first at:</b> ");
	html_esc(out, a->time ? a->time : "?");
	fprintf(out, " (log line %zu)</div>\n", a->line);
	if (a->script) {
		fprintf(out, "<div><b>script:</b><pre>");
		html_pre(out, a->script);
		fprintf(out, "</pre></div>\n");
	}
	if (a->n_frames) {
		fprintf(out, "<div><b>backtrace:</b><pre class=\"backtrace\">");
		for (size_t i = 0; i < a->n_frames; i++) {
			char fr[1024];

			report_frame_text(&a->frames[i], i, fr, sizeof(fr));
			html_esc(out, fr);
			fputc('\n', out);
		}
		fprintf(out, "</pre></div>\n");
	}
	fprintf(out, "</details></td><td><code>");
	html_esc(out, a->rule);
	fprintf(out, "</code></td><td>");
	html_esc(out, a->why ? a->why : "");
	fprintf(out, "</td><td class=\"n\">%zu</td></tr>\n", f->count);
}

/* A copy's name is its SHA-256: 64 lowercase hex digits. */
static bool html_is_hash(const char *s)
{
	size_t n = 0;

	for (; s[n]; n++)
		if (!strchr("0123456789abcdef", s[n]))
			return false;
	return n == 64;
}

/* PATH as a URL path: every byte but the unreserved ones and '/'
 * percent-encoded, so that no name of the log ends the attribute or
 * makes another scheme of the link. */
static void html_url_path(FILE *out, const char *path)
{
	for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		    strchr("-._~/", *p))
			fputc(*p, out);
		else
			fprintf(out, "%%%02X", *p);
	}
}

/* The link to COPY: relative to the report's directory when it is known
 * (the report and the evidence directory travel together as an
 * artifact), else a file: URL. */
static void html_evidence_href(const struct report *r, FILE *out, const char *copy)
{
	const char *a = r->out_dir, *b = copy;
	size_t la, common = 0;

	if (!a || copy[0] != '/') {
		fputs("file://", out);
		html_url_path(out, copy);
		return;
	}
	la = strlen(a);
	if (strcmp(a, "/") == 0 || (strncmp(a, b, la) == 0 && b[la] == '/')) {
		html_url_path(out, b + (la == 1 ? 1 : la + 1));
		return;
	}
	/* Up from the report's directory to the deepest one both share. */
	for (size_t i = 0; a[i] && a[i] == b[i]; i++)
		if (a[i] == '/')
			common = i;
	for (const char *p = a + common; *p; p++)
		if (*p == '/')
			fputs("../", out);
	html_url_path(out, b + common + 1);
}

/* The copies kept with --evidence, each linked. */
static void html_evidence(const struct report *r, FILE *out)
{
	if (!r->n_evidence)
		return;
	fprintf(out, "<section id=\"evidence\">\n<h2>Evidence</h2>\n<table>\n<thead><tr>"
		"<th>what</th><th>path</th><th>copy</th></tr></thead>\n<tbody>\n");
	for (size_t i = 0; i < r->n_evidence; i++) {
		const struct report_evidence *e = &r->evidence[i];
		const char *base = strrchr(e->copy, '/') ? strrchr(e->copy, '/') + 1 : e->copy;

		fprintf(out, "<tr><td>");
		html_esc(out, e->what);
		fprintf(out, "</td><td><code>");
		html_esc(out, e->path ? e->path : "?");
		fprintf(out, "</code></td><td>");
		if (html_is_hash(base)) {
			fprintf(out, "<a href=\"");
			html_evidence_href(r, out, e->copy);
			fprintf(out, "\"><code>%.12s</code></a>", base);
		} else {
			html_esc(out, e->copy);
		}
		fprintf(out, "</td></tr>\n");
	}
	fprintf(out, "</tbody>\n</table>\n</section>\n");
}

/* The summary's egress: one row per destination. */
static void html_egress(const struct report *r, FILE *out)
{
	if (!r->has_egress)
		return;
	fprintf(out, "<section id=\"egress\">\n<h2>Egress</h2>\n");
	if (!r->n_egress && !r->egress_other_allowed && !r->egress_other_denied) {
		fprintf(out, "<p>No connect or send to an address.</p>\n</section>\n");
		return;
	}
	fprintf(out, "<table>\n<thead><tr><th>destination</th><th>allowed</th><th>denied</th>"
		"</tr></thead>\n<tbody>\n");
	for (size_t i = 0; i < r->n_egress; i++) {
		char dest[1024];

		report_dest_text(&r->egress[i], dest, sizeof(dest));
		fprintf(out, "<tr%s><td><code>", r->egress[i].denied ? " class=\"deny\"" : "");
		html_esc(out, dest);
		fprintf(out, "</code></td><td class=\"n\">%lld</td><td class=\"n\">%lld</td></tr>\n",
			r->egress[i].allowed, r->egress[i].denied);
	}
	if (r->egress_other_allowed || r->egress_other_denied)
		fprintf(out, "<tr><td>other destinations, not told apart</td><td class=\"n\">%lld</td>"
			"<td class=\"n\">%lld</td></tr>\n", r->egress_other_allowed,
			r->egress_other_denied);
	fprintf(out, "</tbody>\n</table>\n</section>\n");
}

/* The summary's dependencies: a table per file the session changed.
 * Nothing when no dependency file changed. */
static void html_deps(const struct report *r, FILE *out)
{
	if (!r->n_depfiles)
		return;
	fprintf(out, "<section id=\"dependencies\">\n<h2>Dependencies</h2>\n"
		"<p>%lld added, %lld removed, %lld changed in %zu file%s.</p>\n", r->deps_added,
		r->deps_removed, r->deps_changed, r->n_depfiles, r->n_depfiles == 1 ? "" : "s");
	for (size_t i = 0; i < r->n_depfiles; i++) {
		const struct report_depfile *x = &r->depfiles[i];

		fprintf(out, "<h3><code>");
		html_esc(out, x->path);
		fprintf(out, "</code> <span class=\"muted\">");
		html_esc(out, x->status);
		fprintf(out, "%s</span></h3>\n", x->parsed ? "" : ", not parsed");
		if (!x->n_pkgs)
			continue;
		fprintf(out, "<table>\n<thead><tr><th>package</th><th>change</th><th>from</th>"
			"<th>to</th></tr></thead>\n<tbody>\n");
		for (size_t j = 0; j < x->n_pkgs; j++) {
			const struct report_dep *d = &x->pkgs[j];

			fprintf(out, "<tr class=\"%s\"><td><code>", report_dep_change(d));
			html_esc(out, d->name);
			fprintf(out, "</code></td><td>%s</td><td><code>", report_dep_change(d));
			html_esc(out, d->from ? d->from : "");
			fprintf(out, "</code></td><td><code>");
			html_esc(out, d->to ? d->to : "");
			fprintf(out, "</code></td></tr>\n");
		}
		fprintf(out, "</tbody>\n</table>\n");
		if (x->cut)
			fprintf(out, "<p class=\"muted\">%lld more not listed.</p>\n", x->cut);
	}
	if (r->deps_truncated)
		fprintf(out, "<p class=\"muted\">The look at the project stopped at a bound: not "
			"every file was seen.</p>\n");
	fprintf(out, "</section>\n");
}

/* The summary's installed packages and install scripts. */
static void html_installed(const struct report *r, FILE *out)
{
	if (!r->n_installs && !r->n_scripts)
		return;
	fprintf(out, "<section id=\"installed\">\n<h2>Installed packages</h2>\n"
		"<p>%zu installed, %lld flagged (a URL, git or a path outside the project).</p>\n",
		r->n_installs, r->installs_flagged);
	if (r->n_installs)
		fprintf(out, "<table>\n<thead><tr><th>package</th><th>version</th><th>ecosystem</th>"
			"<th>source</th><th>from</th><th></th></tr></thead>\n<tbody>\n");
	for (size_t i = 0; i < r->n_installs; i++) {
		const struct report_install *x = &r->installs[i];

		fprintf(out, "<tr%s><td><code>", x->flagged ? " class=\"flagged\"" : "");
		html_esc(out, x->name);
		fprintf(out, "</code></td><td><code>");
		html_esc(out, x->version);
		fprintf(out, "</code></td><td>");
		html_esc(out, x->ecosystem);
		fprintf(out, "</td><td>");
		html_esc(out, x->source);
		fprintf(out, "</td><td><code>");
		html_esc(out, x->url ? x->url : "");
		fprintf(out, "</code></td><td>%s%s</td></tr>\n",
			x->flagged ? "<span class=\"tag alert\">flagged</span> " : "",
			x->install_script ? "install scripts" : "");
	}
	if (r->n_installs)
		fprintf(out, "</tbody>\n</table>\n");
	if (r->n_scripts)
		fprintf(out, "<h3>Install scripts run</h3>\n<table>\n<thead><tr><th>package</th>"
			"<th>command</th><th>directory</th></tr></thead>\n<tbody>\n");
	for (size_t i = 0; i < r->n_scripts; i++) {
		const struct report_script *x = &r->scripts[i];

		fprintf(out, "<tr><td>");
		html_esc(out, x->ecosystem);
		fprintf(out, " <code>");
		html_esc(out, x->package ? x->package : "(source build)");
		fprintf(out, "</code></td><td><code>");
		html_esc(out, x->command);
		fprintf(out, "</code></td><td><code>");
		html_esc(out, x->cwd ? x->cwd : "");
		fprintf(out, "</code></td></tr>\n");
	}
	if (r->n_scripts)
		fprintf(out, "</tbody>\n</table>\n");
	fprintf(out, "</section>\n");
}

int report_html(const struct report *r, FILE *out)
{
	size_t deny = 0, alert = 0;
	char buf[64];

	for (int k = 0; k < REPORT_KIND_COUNT; k++) {
		deny += r->counts[k][0];
		alert += r->counts[k][1];
	}
	fprintf(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
		"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
		"<meta name=\"generator\" content=\"agenttrace-report %s\">\n"
		"<title>agenttrace report: ", PACKAGE_VERSION);
	html_esc(out, r->log_name);
	fprintf(out, "</title>\n%s</head>\n<body>\n", html_style);
	html_summary(r, out, deny, alert);

	html_timeline(r, out);

	fprintf(out, "<section id=\"findings\">\n<h2>Denials and alerts</h2>\n");
	if (deny + alert) {
		fprintf(out, "<div class=\"tools\"><input id=\"filter\" type=\"search\" "
			"placeholder=\"filter by path, rule, program\" aria-label=\"filter\"></div>\n"
			"<table>\n<thead><tr><th>action</th><th>kind</th><th>object</th><th>rule</th>"
			"<th>why</th><th>count</th></tr></thead>\n<tbody>\n");
		for (size_t i = 0; i < r->n_findings; i++)
			if (r->alerts[r->findings[i].first].action)
				html_finding(r, &r->findings[i], out);
		fprintf(out, "</tbody>\n</table>\n");
	} else {
		fprintf(out, "<p>No denials and no alerts.</p>\n");
	}
	fprintf(out, "</section>\n");

	fprintf(out, "<section id=\"counts\">\n<h2>Counts</h2>\n<table>\n<thead><tr><th>kind</th>"
		"<th>deny</th><th>alert</th></tr></thead>\n<tbody>\n");
	for (int k = 0; k < REPORT_KIND_COUNT; k++)
		if (r->counts[k][0] || r->counts[k][1])
			fprintf(out, "<tr><td>%s</td><td class=\"n\">%zu</td><td class=\"n\">%zu</td></tr>\n",
				report_kind_name((enum report_kind)k), r->counts[k][0], r->counts[k][1]);
	fprintf(out, "<tr><th>total</th><td class=\"n\">%zu</td><td class=\"n\">%zu</td></tr>\n"
		"</tbody>\n</table>\n", deny, alert);
	fprintf(out, "<table id=\"rules\">\n<thead><tr><th>rule</th><th>kind</th><th>deny</th>"
		"<th>alert</th><th>allow</th></tr></thead>\n<tbody>\n");
	for (size_t i = 0; i < r->n_rules; i++) {
		const struct report_rule *ru = &r->rules[i];

		fprintf(out, "<tr><td><code>");
		html_esc(out, ru->id);
		fprintf(out, "</code></td><td>");
		html_esc(out, ru->kind_name);
		fprintf(out, "</td><td class=\"n\">%zu</td><td class=\"n\">%zu</td><td class=\"n\">%zu</td></tr>\n",
			ru->deny, ru->alert, ru->allow);
	}
	fprintf(out, "</tbody>\n</table>\n</section>\n");

	if (r->n_warnings) {
		fprintf(out, "<section id=\"warnings\">\n<h2>Warnings</h2>\n<ul>\n");
		for (size_t i = 0; i < r->n_findings; i++) {
			const struct report_alert *a = &r->alerts[r->findings[i].first];

			if (a->action)
				continue;
			fprintf(out, "<li><code>");
			html_esc(out, a->rule);
			fprintf(out, "</code>: ");
			html_esc(out, a->why ? a->why : "");
			fprintf(out, "</li>\n");
		}
		fprintf(out, "</ul>\n</section>\n");
	}

	html_egress(r, out);
	html_deps(r, out);
	html_installed(r, out);
	html_evidence(r, out);
	html_tree(r, out);

	fprintf(out, "<footer class=\"muted\"><p>%zu records", r->records);
	if (report_malformed_text(r, buf, sizeof(buf))) {
		fprintf(out, " &middot; <span id=\"malformed\">%s</span> (first: ", buf);
		html_esc(out, r->first_bad ? r->first_bad : "?");
		fprintf(out, ")");
	}
	fprintf(out, " &middot; agenttrace-report %s</p></footer>\n", PACKAGE_VERSION);
	fprintf(out, "%s</body>\n</html>\n", html_script);
	return ferror(out) ? -1 : 0;
}
