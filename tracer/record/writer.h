/* The record writer's pieces that the summary (summary.c) shares with
 * record_emit() (record.c): one head, one string encoding, one write. */
#ifndef AGENTTRACE_RECORD_WRITER_H
#define AGENTTRACE_RECORD_WRITER_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "tracer/session.h"

/* A JSON string of S (NULL: null), invalid UTF-8 bytes as "\xHH". */
json_t *record_jstr(const char *s);

/* "v", "time", "session", "seq", "event" and the process fields. */
json_t *record_head(struct session *s, const char *event, pid_t pid, pid_t ppid,
		    const char *exe, const char *const *argv, size_t argc, bool no_cwd);

/* O as one line of the log, in one write(). */
void record_dump(struct session *s, json_t *o);

#endif
