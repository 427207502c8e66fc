#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/log.h"
#include "lib/xalloc.h"

static void *check(void *p)
{
	if (!p)
		die("out of memory");
	return p;
}

void *xmalloc(size_t n) { return check(malloc(n ? n : 1)); }
void *xcalloc(size_t n, size_t size) { return check(calloc(n ? n : 1, size ? size : 1)); }
void *xrealloc(void *p, size_t n) { return check(realloc(p, n ? n : 1)); }
char *xstrdup(const char *s) { return check(strdup(s)); }
char *xstrndup(const char *s, size_t n) { return check(strndup(s, n)); }

void *xnonnull(void *p) { return check(p); }

char *xasprintf(const char *fmt, ...)
{
	char *out = NULL;
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = vasprintf(&out, fmt, ap);
	va_end(ap);
	if (rc < 0)
		die("out of memory");
	return out;
}
