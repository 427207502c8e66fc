/* Record timestamps: RFC 3339 in UTC with milliseconds, such as
 * "2026-11-30T09:37:02.123Z".  Computed here rather than by gmtime_r(3),
 * which makes glibc load the time zone file (/etc/localtime: an open, a
 * read and several page faults) at its first call, for a UTC answer. */
#ifndef AGENTTRACE_UTC_H
#define AGENTTRACE_UTC_H

#include <stddef.h>
#include <time.h>

/* TS as above into BUF (SIZE bytes; 25 hold it until year 9999). */
void utc_rfc3339(const struct timespec *ts, char *buf, size_t size);

#endif
