/* Where alerts go besides the log (doc/CI.md): GitHub Actions workflow
 * annotations and the job's step summary when GITHUB_ACTIONS=true, and
 * syslog with --syslog (journald collects it). */
#ifndef AGENTTRACE_NOTIFY_H
#define AGENTTRACE_NOTIFY_H

#include <stdbool.h>
#include <stdint.h>

struct notify {
	bool github;          /* GITHUB_ACTIONS=true: annotations on stderr */
	char *step_summary;   /* $GITHUB_STEP_SUMMARY, NULL when unset */
	bool syslog;          /* --syslog */
	unsigned annotations; /* written so far: GitHub shows the first few */
};

/* Reads the environment once; opens syslog when asked. */
void notify_init(struct notify *n, bool use_syslog);

/* One alert.  DENY: a denial (error annotation, LOG_WARNING) rather than
 * an alert (warning annotation, LOG_NOTICE).  TEXT is the human line
 * without the "agenttrace: " prefix; TITLE the rule id.  Both are
 * escaped here (lib/textesc.h, and the runner's own escaping). */
void notify_alert(struct notify *n, bool deny, const char *title, const char *text);

/* The end of the session: appends a Markdown summary to the step
 * summary file.  Returns 0, or -errno when the file could not be written
 * (the caller warns: a summary the user asked for is never dropped
 * silently). */
struct notify_counts {
	const char *command;
	const char *policy;
	const char *mode;
	int exit_code;
	uint64_t denials, alerts;
	/* per kind name: deny, alert */
	const char *kinds[8];
	uint64_t deny[8], alert[8];
	int n_kinds;
	const char *log;       /* the --log path, or NULL */
};
int notify_summary(struct notify *n, const struct notify_counts *c);

void notify_close(struct notify *n);

#endif
