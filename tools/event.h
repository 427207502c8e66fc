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
	const char *argv[LOG_EVENT_ARGV_MAX + 1];
	char unix_path[4096];
};

/* REC as engine events in E, its kind in *KIND: an "exec" record (the
 * program a process became), an "open"/"write"/"connect" record of a
 * --record log, an alert of kind exec, write, read or net.  False when it
 * is no replayable decision ("syscall" and "limit" alerts, the summary),
 * or lacks what the engine needs. */
bool log_event_of(const struct logrec *rec, struct log_event *e, int *kind);

#endif
