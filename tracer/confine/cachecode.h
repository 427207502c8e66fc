/* Code put into a cache.  The default policy lets a build write its
 * caches (write.cache, write.cache.NAME: pip's, npm's, cargo's, go's,
 * maven's, ...), and later runs, outside any session, execute what some
 * caches hold: a browser a test runner downloaded, a hook repository
 * pre-commit cloned, a program `go run` built, a .pth a virtualenv's
 * site-packages gained.  agenttrace does not refuse those writes (the
 * builds need them) nor give the session a private copy of the caches
 * (what the session put there is then lost to the next build, which
 * defeats a cache); it raises an alert for each file made code there:
 * a regular file created with an exec bit, given one by chmod, renamed or
 * linked in with one, and any .pth file.  doc/THREAT-MODEL.md, "Caches
 * that later runs execute from". */
#ifndef AGENTTRACE_CACHECODE_H
#define AGENTTRACE_CACHECODE_H

#include <stdbool.h>
#include <stddef.h>

#include "tracer/syscall/call.h"

struct session;
struct tracee;

/* The rule-id prefix that marks a write root as a cache. */
#define CACHECODE_RULE_PREFIX "write.cache"

/* Whether RULE_ID (a write allow rule's) marks its root as a cache. */
bool cachecode_is_cache(const char *rule_id);

/* Alerts recorded per session; the others are counted. */
#define CACHECODE_RECORDS 32

/* Event I of C, a write allowed by rule RULE_ID, before the call runs:
 * when RULE_ID names a cache and the call makes code at the event's path,
 * an alert (write.cache-code) on behalf of T. */
void cachecode_check(struct session *s, struct tracee *t, const struct call *c, size_t i,
		     const char *rule_id);

#endif
