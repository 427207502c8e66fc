/* A record of a log as the engine's events: what the supervisor decided
 * on, to decide it again (agenttrace-policy replay and learn). */
#ifndef AGENTTRACE_TOOLS_EVENT_H
#define AGENTTRACE_TOOLS_EVENT_H

#include <stdbool.h>
#include <stddef.h>

#include "rules/rules.h"
#include "tools/logread.h"

#define LOG_EVENT_ARGV_MAX 4096

/* One call's events; the pointers borrow from the record and from here. */
struct log_event {
	struct rules_event ev[RULES_CALL_EVENTS];
	size_t n;
	/* Per event: refused only by an explicit rule, as the supervisor
	 * decided it (a symlink's target, tracer/syscall/call.h). */
	bool explicit_deny_only[RULES_CALL_EVENTS];
	const char *argv[LOG_EVENT_ARGV_MAX + 1];
	char unix_path[4096];
	/* The names unlinked files had (path, path2), as their reads are
	 * judged (lib/syscall-open.h). */
	char unlinked[2][4096];
	/* The calling process's program: the events' lineage (one program;
	 * a log tells none above it). */
	struct rules_event caller;
	const char *caller_argv[LOG_EVENT_ARGV_MAX + 1];
};

/* REC as engine events in E, its kind in *KIND: an "exec" record (the
 * program a process became), an "open"/"write"/"connect" record of a
 * --record log, an alert of kind exec, write, read or net.  False when it
 * is no replayable decision ("syscall" and "limit" alerts, the summary),
 * or lacks what the engine needs. */
bool log_event_of(const struct logrec *rec, struct log_event *e, int *kind);

/* True when R, a deny rule of P that judges content, is set aside for
 * REC as the supervisor sets it aside (tracer/confine/content.c): REC is
 * a replacement it made itself after the bytes passed R's check (its
 * "content" names that check), and would let those same bytes through;
 * or a chmod, which changes no byte.  The event is then decided by the
 * rest of P. */
bool log_event_content_passed(const struct logrec *rec, enum rules_action action,
			      const struct rules_rule *r);

/* E's events decided under P as the supervisor decides them
 * (rules_decide_call()): a replacement it made itself after the bytes
 * passed a content check (REC's "content") is, where P judges that file
 * by the same check, decided by the rest of P, as the supervisor would
 * decide those same bytes (tracer/confine/content.h). */
void log_event_decide(const struct rules_policy *p, const struct logrec *rec,
		      const struct log_event *e, struct rules_call_verdict *cv);

#endif
