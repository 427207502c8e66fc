/* Where alerts go besides the log (doc/CI.md): GitHub Actions workflow
 * annotations, the job's step summary and the step's outputs when
 * GITHUB_ACTIONS=true, and syslog with --syslog (journald collects it). */
#ifndef AGENTTRACE_NOTIFY_H
#define AGENTTRACE_NOTIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rules/rules.h"
#include "tracer/record/egress.h"

/* A distinct denial (rule and object) for the step summary's list. */
struct notify_denial {
	char *rule;
	char *object;
	uint64_t count;
};

/* The step summary lists denials by rule and object: at most this many
 * distinct ones are told apart (the others are counted in the total),
 * and the most frequent NOTIFY_DENIALS_SHOWN are shown. */
#define NOTIFY_DENIALS_KEPT 200
#define NOTIFY_DENIALS_SHOWN 10

struct notify {
	bool github;          /* GITHUB_ACTIONS=true: annotations on stderr */
	char *step_summary;   /* $GITHUB_STEP_SUMMARY, NULL when unset */
	char *output;         /* $GITHUB_OUTPUT, NULL when unset */
	char *workspace;      /* $GITHUB_WORKSPACE resolved, NULL when unset: file= */
	bool syslog;          /* --syslog */
	unsigned annotations; /* written so far: GitHub shows the first few */
	/* For the step summary: the denials so far. */
	struct notify_denial *denied;
	size_t n_denied;
};

/* Reads the environment once; opens syslog when asked. */
void notify_init(struct notify *n, bool use_syslog);

/* One alert or denial. */
struct notify_alert {
	bool deny;            /* a denial (error annotation, LOG_WARNING), else an alert */
	const char *rule;     /* the rule id: the annotation's title */
	const char *line;     /* the human line, without "agenttrace: ", escaped already */
	const char *object;   /* what it was about (a path, an address, a program), raw */
	const char *file;     /* the file it concerns, absolute; NULL: none (file= when
			       * it lies in the workspace) */
};

/* Writes A where it goes; the strings are escaped here for each place
 * (lib/textesc.h, and the runner's own escaping).  True when it became
 * an annotation on stderr: the caller then writes no human line of it
 * (one line a denial in the job's log). */
bool notify_alert(struct notify *n, const struct notify_alert *a);

/* The end of the session. */
struct notify_counts {
	const char *command;
	const char *policy;
	const char *mode;
	int exit_code;
	uint64_t denials, alerts;
	/* per kind name: deny, alert (every kind, zero ones too) */
	const char *kinds[8];
	uint64_t deny[8], alert[8];
	int n_kinds;
	const char *log;       /* the --log path, or NULL */
	const struct egress *egress; /* sorted (egress_sort()) */
};

/* Appends a Markdown summary to the step summary file: counts, the most
 * frequent denials, the egress table.  Returns 0, or -errno when the file
 * could not be written (the caller warns: a summary the user asked for is
 * never dropped silently).  The file is opened by its name with no link
 * a session could have made followed (tracer/confine/ownpath.h, P the
 * policy); -ELOOP puts such a link's name in LINK (LINK_SIZE bytes). */
int notify_summary(struct notify *n, const struct rules_policy *p,
		   const struct notify_counts *c, char *link, size_t link_size);

/* Appends the counts to the step's outputs ($GITHUB_OUTPUT): denials,
 * alerts, denials_KIND, alerts_KIND.  Returns 0 or -errno, as above. */
int notify_outputs(struct notify *n, const struct rules_policy *p,
		   const struct notify_counts *c, char *link, size_t link_size);

void notify_close(struct notify *n);

#endif
