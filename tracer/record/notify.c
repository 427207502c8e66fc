#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "lib/textesc.h"
#include "lib/xalloc.h"
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
	const char *sum = getenv("GITHUB_STEP_SUMMARY");

	memset(n, 0, sizeof(*n));
	n->github = notify_env_true("GITHUB_ACTIONS");
	if (n->github && sum && *sum)
		n->step_summary = xstrdup(sum);
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

void notify_alert(struct notify *n, bool deny, const char *title, const char *text)
{
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
		n->annotations++;
		if (m) {
			fputs(deny ? "::error title=" : "::warning title=", m);
			notify_gh_escape(m, "agenttrace ", true);
			notify_gh_escape(m, title ? title : "", true);
			fputs("::", m);
			notify_gh_escape(m, text, false);
			fputc('\n', m);
			if (fclose(m) == 0)
				fwrite(line, 1, len, stderr);
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

int notify_summary(struct notify *n, const struct notify_counts *c)
{
	FILE *f;
	int fd, rc = 0;

	if (!n->step_summary)
		return 0;
	fd = open(n->step_summary, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
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
	if (c->n_kinds > 0) {
		fputs("| kind | denied | alerted |\n|---|---:|---:|\n", f);
		for (int i = 0; i < c->n_kinds; i++)
			fprintf(f, "| %s | %" PRIu64 " | %" PRIu64 " |\n", c->kinds[i], c->deny[i],
				c->alert[i]);
		fputc('\n', f);
	}
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
	memset(n, 0, sizeof(*n));
}
