/* The start and the end of a session (start.c). */
#ifndef AGENTTRACE_START_H
#define AGENTTRACE_START_H

#include "tracer/options.h"
#include "tracer/session.h"

/* Load the policy, open the log, settle ceilings and context.  Returns -1
 * to go on, or an exit status (after a message) when the run cannot start
 * or is complete (--explain). */
int session_start(struct session *s, struct options *opt);

/* The summary record: the session's counters and what its modules know at
 * the end (what survived, Landlock, private /tmp, what the shim missed). */
void session_summary(struct session *s, int exit_code, int signal, const pid_t *left,
		     size_t n_left);

/* Everything session_start() set up, undone; the run dir and a private
 * TMPDIR removed. */
void session_end(struct session *s);

#endif
