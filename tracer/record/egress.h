/* The session's egress table: every destination a connect or send was
 * judged for (allowed ones too, without --record), with a count of the
 * calls that went through and of those refused, for the summary record
 * (doc/RECORDS.md, "egress") and the CI step summary.
 *
 * Bounded: at most EGRESS_MAX destinations are told apart; a call to a
 * destination beyond them is only counted (egress_other), so that a scan
 * of a whole network costs the supervisor no more memory than a build
 * that talks to three registries. */
#ifndef AGENTTRACE_EGRESS_H
#define AGENTTRACE_EGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rules/rules.h"

#define EGRESS_MAX 256

/* One destination: family, address and port, and the name it was known
 * by (two names of one address are two destinations). */
struct egress_dest {
	const char *family;     /* "inet", "inet6", "unix" */
	char *addr;             /* address text, or the UNIX socket path */
	int port;               /* -1: a UNIX socket */
	char *host;             /* NULL: no name known */
	uint64_t allowed;       /* calls that went through (alerts too) */
	uint64_t denied;        /* calls refused */
};

struct egress {
	struct egress_dest *v;
	size_t n;
	/* Calls to destinations beyond the table's EGRESS_MAX. */
	uint64_t other_allowed, other_denied;
};

/* Count the net events among EVENTS (a call's, N of them) as allowed or
 * DENIED.  E may be NULL (nothing is counted). */
void egress_note(struct egress *e, const struct rules_event *events, size_t n, bool denied);

/* The destinations in the order the summary shows them: those with
 * denials first, then by the number of calls, ties in the order first
 * seen.  Sorts E in place. */
void egress_sort(struct egress *e);

void egress_free(struct egress *e);

#endif
