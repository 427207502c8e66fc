#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
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

int proc_stat(pid_t pid, struct proc_stat *st)
{
	char text[1024], *close;
	int ppid, pgrp, sid, tty;
	ssize_t n = proc_read(pid, "stat", text, sizeof(text));

	if (n < 0)
		return (int)n;
	close = strrchr(text, ')');
	if (!close || sscanf(close + 1, " %c %d %d %d %d", &st->state, &ppid, &pgrp, &sid, &tty) != 5)
		return -EINVAL;
	st->ppid = ppid;
	st->pgrp = pgrp;
	st->sid = sid;
	/* tty_nr: the minor's low byte in bits 0-7, its rest in 20-31, the
	 * major in 8-19 (proc_pid_stat(5)). */
	st->tty = tty ? makedev(((unsigned)tty >> 8) & 0xfff,
				((unsigned)tty & 0xff) | (((unsigned)tty >> 12) & 0xfff00))
		      : 0;
	return 0;
}
