/* What a rule id means to someone reading a report: a short and a full
 * description, help (what it protects, how to allow it), a severity and
 * tags.  One place for every report format, built from two sources:
 *
 *  - a policy rule's own "why" (the text the policy gave it, carried by
 *    every record of the rule), with what its id says about its area
 *    (write.home.* is persistence, read.* credential access, ...);
 *  - a table of the ids the supervisor itself uses (syscall.*,
 *    landlock.*, race.*, limit.*, user.root, write.agenttrace-*, the
 *    sections' fallbacks), which no policy describes.
 *
 * Nothing here is specific to one run, so the same id is described the
 * same way in every report. */
#ifndef AGENTTRACE_TOOLS_RULEDOC_H
#define AGENTTRACE_TOOLS_RULEDOC_H

#define RULEDOC_TAGS_MAX 4

struct ruledoc {
	char *short_text;      /* one line: the why, or the table's title */
	char *full_text;       /* a paragraph: what the rule protects and how it decides */
	char *help_text;       /* plain text: what it protects, how to allow it */
	char *help_markdown;   /* the same in GitHub-flavoured Markdown */
	const char *severity;  /* "0.0".."10.0", GitHub's security-severity */
	const char *precision; /* "very-high", "high", "medium", "low" */
	const char *tags[RULEDOC_TAGS_MAX + 1]; /* NULL-terminated, "security" first */
};

/* Describe rule ID of KIND ("exec", "write", "read", "net", "syscall",
 * "limit", "warning"), with the WHY its records carry (may be NULL) and
 * the ACTION it took ("deny", "alert"; NULL for a warning).  Always
 * succeeds; free with ruledoc_free(). */
void ruledoc_describe(const char *id, const char *kind, const char *why, const char *action,
		      struct ruledoc *d);
void ruledoc_free(struct ruledoc *d);

#endif
