/* --fail-on-alert[=LIST] (agenttrace(1), EXIT STATUS): which of the
 * session's alert records turn a command's exit status 0 into
 * AT_EXIT_FAIL_ON.  Without a LIST, every denial; with one, the union of
 * its comma-separated selectors:
 *
 *   deny         every denial (action "deny")
 *   alert        every alert (action "alert": let through, reported)
 *   RULE-GLOB    every denial or alert whose rule id matches the glob
 *                (match_glob: "exec.install.*", "write.git-*")
 *
 * An alert of a package install (exec.install.*) is what a green
 * `pip install` job raises on every run; failing on it is the user's
 * choice, not the default. */
#ifndef AGENTTRACE_FAIL_ON_H
#define AGENTTRACE_FAIL_ON_H

#include <stdbool.h>
#include <stddef.h>

#include "rules/rules.h"

struct fail_on {
	bool any;           /* some --fail-on-alert was given */
	bool deny;          /* every denial */
	bool alert;         /* every alert */
	char **globs;       /* rule-id globs, malloc'ed */
	size_t n_globs;
};

/* Adds the selectors of LIST (NULL: "deny") to F.  0, or -EINVAL with the
 * offending selector copied into BAD (BAD_SIZE bytes). */
int fail_on_add(struct fail_on *f, const char *list, char *bad, size_t bad_size);

/* True when a record of ACTION (deny or alert) under rule id RULE (NULL:
 * none) is one F fails the run on. */
bool fail_on_matches(const struct fail_on *f, enum rules_action action, const char *rule);

void fail_on_free(struct fail_on *f);

#endif
