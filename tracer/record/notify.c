#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "lib/textesc.h"
#include "lib/xalloc.h"
#include "tracer/confine/ownpath.h"
#include "tracer/record/notify.h"

/* GitHub shows at most 10 error and 10 warning annotations per step; the
 * rest are counted in the step summary.  Writing more only adds noise. */
#define NOTIFY_MAX_ANNOTATIONS 50

static bool notify_env_true(const char *name)
{
	const char *v = getenv(name);

	return v && strcmp(v, "true") == 0;
}

void notify_init(struct notify *n, bool use_syslog)
{
	const char *sum = getenv("GITHUB_STEP_SUMMARY"), *out = getenv("GITHUB_OUTPUT");
	const char *ws = getenv("GITHUB_WORKSPACE");

	memset(n, 0, sizeof(*n));
	n->github = notify_env_true("GITHUB_ACTIONS");
	if (n->github && sum && *sum)
		n->step_summary = xstrdup(sum);
	if (n->github && out && *out)
		n->output = xstrdup(out);
	/* Resolved: the records' paths are. */
	if (n->github && ws && ws[0] == '/')
		n->workspace = realpath(ws, NULL);
	n->syslog = use_syslog;
	if (n->syslog)
		openlog("agenttrace", LOG_PID, LOG_USER);
}

/* Workflow command data ("::error title=PROPERTY::MESSAGE"): the text
 * escaped for a human first (lib/textesc.h: no control byte, so no CR or
 * LF that would end the command and start another line), then by the
 * runner's own rules: '%' as %25 (the runner decodes %25, %0D, %0A in
 * data, and %3A, %2C in properties too), and in a property ':' and ','
 * (a property ends at ',' and the properties at "::").  A "::" inside the
 * message is data: the command ends at its line's end. */
static void notify_gh_escape(FILE *f, const char *s, bool property)
{
	size_t len = strlen(s);
	char *safe = xmalloc(len * 4 + 1);

	textesc(s, len, 0, safe, len * 4 + 1);
	for (const char *p = safe; *p; p++) {
		switch (*p) {
		case '%': fputs("%25", f); break;
		case '\r': fputs("%0D", f); break;
		case '\n': fputs("%0A", f); break;
		case ':': fputs(property ? "%3A" : ":", f); break;
		case ',': fputs(property ? "%2C" : ",", f); break;
		default: fputc(*p, f);
		}
	}
	free(safe);
}

/* FILE relative to the workspace when it lies inside it, else NULL. */
static const char *notify_in_workspace(const struct notify *n, const char *file)
{
	size_t len;

	if (!n->workspace || !file)
		return NULL;
	len = strlen(n->workspace);
	if (len == 1 && file[0] == '/' && file[1])
		return file + 1;
	if (strncmp(file, n->workspace, len) != 0 || file[len] != '/' || !file[len + 1])
		return NULL;
	return file + len + 1;
}

/* The denial's row of the step summary's list: counted by rule and
 * object, at most NOTIFY_DENIALS_KEPT told apart (the rest are in the
 * session's total only). */
static void notify_note_denial(struct notify *n, const char *rule, const char *object)
{
	struct notify_denial *d;

	rule = rule ? rule : "?";
	object = object ? object : "";
	for (size_t i = 0; i < n->n_denied; i++) {
		d = &n->denied[i];
		if (strcmp(d->rule, rule) == 0 && strcmp(d->object, object) == 0) {
			d->count++;
			return;
		}
	}
	if (n->n_denied == NOTIFY_DENIALS_KEPT)
		return;
	if (!n->denied)
		n->denied = xcalloc(NOTIFY_DENIALS_KEPT, sizeof(*n->denied));
	d = &n->denied[n->n_denied++];
	d->rule = xstrdup(rule);
	d->object = xstrdup(object);
	d->count = 1;
}

bool notify_alert(struct notify *n, const struct notify_alert *a)
{
	bool deny = a->deny, annotated = false;
	const char *title = a->rule, *text = a->line;

	if (deny && n->step_summary)
		notify_note_denial(n, a->rule, a->object);
	if (n->github && n->annotations < NOTIFY_MAX_ANNOTATIONS) {
		/* On stderr: stdout belongs to the command, and the runner reads
		 * workflow commands from both. */
		char *line = NULL;
		size_t len = 0;
		FILE *m = open_memstream(&line, &len);

		/* One write(2): stderr is unbuffered and shared with the
		 * command, whose output would otherwise land inside the line
		 * (seen under --backend preload, where the command writes
		 * while the supervisor does). */
		const char *rel = notify_in_workspace(n, a->file);

		n->annotations++;
		if (m) {
			fputs(deny ? "::error " : "::warning ", m);
			/* file= points the annotation at the file in the
			 * checkout, which GitHub then shows it on. */
			if (rel) {
				fputs("file=", m);
				notify_gh_escape(m, rel, true);
				fputc(',', m);
			}
			fputs("title=", m);
			notify_gh_escape(m, "agenttrace ", true);
			notify_gh_escape(m, title ? title : "", true);
			fputs("::", m);
			notify_gh_escape(m, text, false);
			fputc('\n', m);
			if (fclose(m) == 0)
				annotated = fwrite(line, 1, len, stderr) == len;
		}
		free(line);
	}
	if (n->syslog) {
		size_t len = strlen(text);
		char *safe = xmalloc(len * 4 + 1);

		textesc(text, len, 0, safe, len * 4 + 1);
		syslog(deny ? LOG_WARNING : LOG_NOTICE, "%s", safe);
		free(safe);
	}
	return annotated;
}

/* A Markdown table cell of untrusted text: as code, every character
 * Markdown or HTML reads escaped (lib/textesc.h), so that no '|' splits
 * the row, no newline ends it and no name adds markup. */
static void notify_md_code(FILE *f, const char *s)
{
	fputs("<code>", f);
	textesc_markdown(f, s ? s : "");
	fputs("</code>", f);
}

/* The most frequent denials, NOTIFY_DENIALS_SHOWN of them, and how many
 * more there were. */
static void notify_summary_denials(struct notify *n, const struct notify_counts *c, FILE *f)
{
	size_t shown = n->n_denied < NOTIFY_DENIALS_SHOWN ? n->n_denied : NOTIFY_DENIALS_SHOWN;
	uint64_t listed = 0;

	if (!shown)
		return;
	/* A selection of the largest counts, ties in the order first seen. */
	for (size_t i = 0; i < shown; i++) {
		size_t best = i;

		for (size_t j = i + 1; j < n->n_denied; j++)
			if (n->denied[j].count > n->denied[best].count)
				best = j;
		if (best != i) {
			struct notify_denial d = n->denied[best];

			memmove(&n->denied[i + 1], &n->denied[i], (best - i) * sizeof(d));
			n->denied[i] = d;
		}
	}
	fputs("#### Denials\n\n| rule | object | count |\n|---|---|---:|\n", f);
	for (size_t i = 0; i < shown; i++) {
		fputs("| ", f);
		notify_md_code(f, n->denied[i].rule);
		fputs(" | ", f);
		notify_md_code(f, n->denied[i].object);
		fprintf(f, " | %" PRIu64 " |\n", n->denied[i].count);
		listed += n->denied[i].count;
	}
	if (c->denials > listed)
		fprintf(f, "\nand %" PRIu64 " more denial%s, not listed.\n", c->denials - listed,
			c->denials - listed == 1 ? "" : "s");
	fputc('\n', f);
}

static void notify_summary_egress(const struct egress *e, FILE *f)
{
	char dest[512];

	if (!e || (!e->n && !e->other_allowed && !e->other_denied))
		return;
	fputs("#### Egress\n\n| destination | allowed | denied |\n|---|---:|---:|\n", f);
	for (size_t i = 0; i < e->n; i++) {
		const struct egress_dest *d = &e->v[i];
		bool v6 = strchr(d->addr, ':') != NULL;

		if (d->port < 0)
			snprintf(dest, sizeof(dest), "unix:%s", d->addr);
		else if (d->host)
			snprintf(dest, sizeof(dest), v6 ? "%s:%d ([%s])" : "%s:%d (%s)", d->host,
				 d->port, d->addr);
		else
			snprintf(dest, sizeof(dest), v6 ? "[%s]:%d" : "%s:%d", d->addr, d->port);
		fputs("| ", f);
		notify_md_code(f, dest);
		fprintf(f, d->denied ? " | %" PRIu64 " | **%" PRIu64 "** |\n" :
			" | %" PRIu64 " | %" PRIu64 " |\n", d->allowed, d->denied);
	}
	if (e->other_allowed || e->other_denied)
		fprintf(f, "| other destinations, not told apart | %" PRIu64 " | %" PRIu64 " |\n",
			e->other_allowed, e->other_denied);
	fputc('\n', f);
}

/* PATH for appending, no link a session could have made followed; a
 * regular file only, opened without waiting: a FIFO the session left there
 * would hold the supervisor at the session's end (-EINVAL). */
static int notify_open(const struct rules_policy *p, const char *path, char *link,
		       size_t link_size)
{
	int fd = ownpath_open(p, path, O_WRONLY | O_APPEND | O_CREAT | O_NONBLOCK | O_NOCTTY, 0644,
			      link, link_size);
	struct stat st;

	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	return fd;
}

int notify_outputs(struct notify *n, const struct rules_policy *p,
		   const struct notify_counts *c, char *link, size_t link_size)
{
	FILE *f;
	int fd, rc = 0;

	if (!n->output)
		return 0;
	fd = notify_open(p, n->output, link, link_size);
	if (fd < 0)
		return fd;
	f = fdopen(fd, "a");
	if (!f) {
		rc = -errno;
		close(fd);
		return rc;
	}
	/* NAME=VALUE lines: names of our own, numbers as values, nothing
	 * of the command's that could add a line. */
	fprintf(f, "denials=%" PRIu64 "\nalerts=%" PRIu64 "\n", c->denials, c->alerts);
	for (int i = 0; i < c->n_kinds; i++)
		fprintf(f, "denials_%s=%" PRIu64 "\nalerts_%s=%" PRIu64 "\n", c->kinds[i], c->deny[i],
			c->kinds[i], c->alert[i]);
	if (fflush(f) != 0 || ferror(f))
		rc = -(errno ? errno : EIO);
	if (fclose(f) != 0 && rc == 0)
		rc = -errno;
	return rc;
}

int notify_summary(struct notify *n, const struct rules_policy *p,
		   const struct notify_counts *c, char *link, size_t link_size)
{
	FILE *f;
	int fd, rc = 0;

	if (!n->step_summary)
		return 0;
	fd = notify_open(p, n->step_summary, link, link_size);
	if (fd < 0)
		return fd;
	f = fdopen(fd, "a");
	if (!f) {
		rc = -errno;
		close(fd);
		return rc;
	}
	fprintf(f, "### agenttrace: %" PRIu64 " denied, %" PRIu64 " alert%s\n\n",
		c->denials, c->alerts, c->alerts == 1 ? "" : "s");
	fputs("| command | policy | mode | exit |\n|---|---|---|---|\n| ", f);
	notify_md_code(f, c->command);
	fputs(" | ", f);
	notify_md_code(f, c->policy);
	fputs(" | ", f);
	textesc_markdown(f, c->mode);
	fprintf(f, " | %d |\n\n", c->exit_code);
	if (c->denials + c->alerts > 0) {
		fputs("| kind | denied | alerted |\n|---|---:|---:|\n", f);
		for (int i = 0; i < c->n_kinds; i++)
			if (c->deny[i] || c->alert[i])
				fprintf(f, "| %s | %" PRIu64 " | %" PRIu64 " |\n", c->kinds[i],
					c->deny[i], c->alert[i]);
		fputc('\n', f);
	}
	notify_summary_denials(n, c, f);
	notify_summary_egress(c->egress, f);
	if (c->log) {
		fputs("Every record is in ", f);
		notify_md_code(f, c->log);
		fputs("; `agenttrace-report LOG --format markdown` shows each denial.\n\n", f);
	}
	if (fflush(f) != 0 || ferror(f))
		rc = -(errno ? errno : EIO);
	if (fclose(f) != 0 && rc == 0)
		rc = -errno;
	return rc;
}

void notify_close(struct notify *n)
{
	if (n->syslog)
		closelog();
	free(n->step_summary);
	free(n->output);
	free(n->workspace);
	for (size_t i = 0; i < n->n_denied; i++) {
		free(n->denied[i].rule);
		free(n->denied[i].object);
	}
	free(n->denied);
	memset(n, 0, sizeof(*n));
}
