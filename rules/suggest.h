/* The fix a record suggests (agenttrace(1), RECORDS): for an event the
 * policy denied (or alerted), the policy layer that admits it and the
 * command-line option that does the same, each applied as given.
 *
 * The layer is a complete policy file, {"agenttrace":1,"extends":BASE,
 * ...}, with one allow rule per denied event of the call:
 *
 *  - refused by the section's fallback (not under a write root, not on
 *    the exec allow-list, not an allowed destination): the rule
 *    rules_generalise() writes (a cache directory's subtree, a program
 *    with any arguments, a destination); no deny rule matched, and the
 *    deny rules still win over the new allow wherever they match;
 *  - refused by deny rules: the exact object (path, program and its very
 *    arguments, address and port), with "overrides" naming every deny
 *    rule that matches it, so that this one event, and nothing else, is
 *    exempted from them (agenttrace-policy(5), LAYERING);
 *  - let through with an alert by alert rules (a package install): the
 *    exact object with "overrides" naming them, which silences that very
 *    alert (the command line cannot: no option);
 *  - refused by one of agenttrace's own rules (the log, the policy, the
 *    binary), or by no rule at all: nothing can admit it, no suggestion.
 *
 * An exec allow rule with "overrides" is an exception, not an allow-list
 * entry (agenttrace-policy(5)): the layer of a default run's exec denial
 * does not turn default into an allow-list.
 *
 * The option (--allow-write, --allow-read, --allow-net, --allow-exec,
 * single-quoted so that the shell leaves ${ROOT} alone) exempts what it
 * names from every deny rule of its kind, so it is given only where that
 * admits no more than the event: the exact path of a write or read, the
 * destination of a connect, and a program no exec deny rule could name
 * with other arguments; none for an exec a deny rule refused (an option
 * cannot name arguments). */
#ifndef AGENTTRACE_RULES_SUGGEST_H
#define AGENTTRACE_RULES_SUGGEST_H

#include <stddef.h>

#include "rules/generalise.h"
#include "rules/rules.h"

struct rules_suggestion {
	char *layer;   /* the policy file text, compact JSON; NULL: none */
	char *option;  /* "--allow-write '${ROOT}/.git/config'"; NULL: none */
};

/* The suggestion for the N events EV of one call under policy P, the
 * anchors A of the run and BASE, the policy the layer extends (a shipped
 * name or an absolute file path).  ACTION is the verdict's, before the
 * mode (deny: admit the events refused; alert: silence the alerts).  0
 * (OUT filled, its fields possibly NULL) or -ENOMEM. */
int rules_suggest(const struct rules_policy *p, const struct rules_anchors *a, const char *base,
		  const struct rules_event *ev, size_t n, const bool *explicit_deny_only,
		  enum rules_action action, struct rules_suggestion *out);

void rules_suggestion_free(struct rules_suggestion *s);

/* S as one shell word: single-quoted, a quote as '\''.  Malloc'ed. */
char *rules_shell_quote(const char *s);

#endif
