#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tracer/inspect/proc.h"

ssize_t proc_read(pid_t pid, const char *name, char *buf, size_t size)
{
	char path[64];
	ssize_t n;
	int fd, err;

	if (size < 2)
		return -EINVAL;
	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	err = errno;
	close(fd);
	if (n < 0)
		return -err;
	if (n == 0)
		return -ENODATA;
	buf[n] = '\0';
	return n;
}

bool proc_status_field(const char *text, const char *key, int base, unsigned long long *out)
{
	const char *p = strstr(text, key);
	char *end;
	unsigned long long v;

	if (!p)
		return false;
	p += strlen(key);
	while (*p == '\t' || *p == ' ')
		p++;
	if (!isxdigit((unsigned char)*p))
		return false;
	errno = 0;
	v = strtoull(p, &end, base);
	if (end == p || errno)
		return false;
	*out = v;
	return true;
}
