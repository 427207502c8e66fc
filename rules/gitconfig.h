/* What a git configuration text makes git run: the check behind a write
 * rule's "content": "git-config" (agenttrace-policy(5), "Content").
 *
 * A reader of git's configuration syntax (git-config(1), CONFIGURATION
 * FILE) that reads a text exactly as git reads it, or refuses it:
 * sections, "[section "subsection"]" and the old "[section.subsection]",
 * variables after a header on its line, values with quotes, the escapes
 * \" \\ \n \t \b, continuation lines, "#" and ";" comments, a UTF-8 byte
 * order mark, CRLF.  What git itself would reject, and whatever this
 * reader is not sure git reads the same way (a NUL byte, a variable
 * before any section, an empty section name, a name or value longer than
 * the bounds below), is UNREADABLE: a check that cannot read a text must
 * not let it through.
 *
 * gitconfig_keys is the one list of the variables that make git run a
 * program (or read configuration from elsewhere); the manual lists the
 * same, and check-gitconfig holds the two together.
 *
 * Allocation-free, no globals, no stdio: the text is read in place. */
#ifndef AGENTTRACE_GITCONFIG_H
#define AGENTTRACE_GITCONFIG_H

#include <stdbool.h>
#include <stddef.h>

/* Bytes of a configuration the check reads; a longer one is refused. */
#define GITCONFIG_MAX (1024 * 1024)
/* A variable's full name ("remote.origin.url") and a value, in bytes. */
#define GITCONFIG_NAME_MAX 1024
#define GITCONFIG_VALUE_MAX 16384

/* How a value of a listed variable makes git run something. */
enum gitconfig_when {
	GITCONFIG_ANY = 0,      /* any value, or none */
	GITCONFIG_ALIAS,        /* alias.*: a value starting with '!' (a shell command) or
				 * with what may be an option git reads as its own
				 * ("-c alias.y=!sh y"): '-', or a quote or backslash
				 * that may spell one */
	GITCONFIG_NOT_BOOL,     /* a value that is no boolean (pager.*: the pager's command) */
	GITCONFIG_NOT_UPDATE,   /* none of checkout, rebase, merge, none (submodule.*.update) */
	GITCONFIG_EXT,          /* a URL of the ext:: transport, which runs a command */
	GITCONFIG_EXT_BASE,     /* url.<base>.insteadOf: BASE, the URL written instead, is one */
};

struct gitconfig_key {
	const char *section;    /* lower case, the part before the first '.' */
	const char *name;       /* lower case, the part after the last '.'; "*": any */
	const char *doc;        /* as the manual names it: "credential.*.helper" */
	enum gitconfig_when when;
	const char *runs;       /* what git does with it, for the record's why */
};

/* The list; ends with a NULL section.  A variable matches an entry by
 * its section and its name, whatever its subsection: "credential.helper"
 * and "credential.https://host.helper" alike. */
extern const struct gitconfig_key gitconfig_keys[];

enum gitconfig_outcome {
	GITCONFIG_CLEAN = 0,    /* it adds or changes no listed variable */
	GITCONFIG_RUNS,         /* it does: NAME is the first, at LINE */
	GITCONFIG_UNREADABLE,   /* not a configuration this reader reads as git does */
};

struct gitconfig_verdict {
	enum gitconfig_outcome outcome;
	char name[GITCONFIG_NAME_MAX]; /* RUNS: the variable as git names it */
	unsigned line;                 /* RUNS, UNREADABLE: the line (1-based) */
	const char *what;              /* RUNS: its entry's runs; UNREADABLE: what is wrong */
};

/* Judge TEXT (LEN bytes), the new content of a configuration file whose
 * content is OLD (OLD_LEN bytes; NULL: the file does not exist yet).  A
 * listed variable passes when OLD already has that variable with that
 * very value (a pager the repository had keeps working); an OLD this
 * reader cannot read counts as empty. */
void gitconfig_judge(const char *text, size_t len, const char *old, size_t old_len,
		     struct gitconfig_verdict *v);

/* One variable of a text, as git reads it. */
struct gitconfig_entry {
	const char *name;       /* "section.subsection.name", sections and names in lower case */
	const char *value;      /* NULL: none (a bare "name", which git reads as true) */
	size_t value_len;
	unsigned line;
};

/* Calls FN for each variable of TEXT in order, until it returns non-zero
 * (which is returned).  0 at the end of the text; -1 when the text is
 * unreadable, with *LINE and *WHAT (either may be NULL) saying where and
 * why. */
int gitconfig_each(const char *text, size_t len,
		   int (*fn)(const struct gitconfig_entry *e, void *arg), void *arg,
		   unsigned *line, const char **what);

/* The entry of gitconfig_keys that E's variable and value make git run
 * something by; NULL: none. */
const struct gitconfig_key *gitconfig_runs(const struct gitconfig_entry *e);

#endif
