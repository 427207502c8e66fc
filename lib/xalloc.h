/* Allocators for the programs: out of memory ends the run with 125 and a
 * message, so callers need no NULL check.  Never used in rules/ match code
 * or the preload shim. */
#ifndef AGENTTRACE_XALLOC_H
#define AGENTTRACE_XALLOC_H

#include <stddef.h>

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
/* P, or the run ends as out of memory: for what a library allocated. */
void *xnonnull(void *p);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
