/* How a session's processes name their own /proc entries to the policy
 * (rules_proc_self() in rules.h).  Both backends call it; the preload
 * shim, which only knows itself, passes no in_session callback. */
#include <stdbool.h>
#include <string.h>
#include <sys/types.h>

#include "rules/rules.h"

pid_t rules_proc_self(char *path, size_t size, pid_t pid, bool (*in_session)(pid_t, void *),
		     void *arg)
{
	const char *p, *e;
	long n = 0;
	size_t dl, tail;

	if (strncmp(path, "/proc/", 6) != 0)
		return 0;
	p = path + 6;
	e = p;
	while (*e >= '0' && *e <= '9') {
		if (n < 100000000)
			n = n * 10 + (*e - '0');
		e++;
	}
	dl = (size_t)(e - p);
	if (dl == 0 || (*e != '/' && *e != '\0'))
		return 0;
	tail = strlen(e);
	if (6 + 4 + tail >= size)
		return 0;
	if (in_session ? !in_session((pid_t)n, arg) : (pid_t)n != pid)
		return 0;
	memmove(path + 6 + 4, e, tail + 1);
	memcpy(path + 6, "self", 4);
	return (pid_t)n;
}
