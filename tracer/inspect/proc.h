/* Small files of /proc/PID read the cheap way: one open, one read(2), no
 * stdio (whose fstat, buffer and parsing cost more than a new task's
 * whole handling).  /proc builds these files in one go, so one read of a
 * large enough buffer sees the whole of it. */
#ifndef AGENTTRACE_PROC_H
#define AGENTTRACE_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* /proc/PID/NAME into BUF (SIZE bytes, at least 2), NUL-terminated; what
 * does not fit is cut.  Returns the length read (> 0), or -errno: -ENOENT
 * or -ESRCH when the task is gone, -ENODATA for an empty file. */
ssize_t proc_read(pid_t pid, const char *name, char *buf, size_t size);

/* The number after KEY (such as "\nTgid:", newline included so that a
 * key is not found inside another) and its blanks in TEXT, a status
 * file, read in BASE (10, or 16 for the signal masks).  False when the
 * key or the number is absent. */
bool proc_status_field(const char *text, const char *key, int base, unsigned long long *out);

/* The fields of /proc/PID/stat that the supervisor asks for, read past
 * the command name (which may hold any byte, ')' too). */
struct proc_stat {
	char state;   /* 'R', 'S', ..., 'Z' for a zombie */
	pid_t ppid;
	pid_t pgrp;
	pid_t sid;    /* its session */
	dev_t tty;    /* its controlling terminal; 0: none */
};

/* PID's stat into ST.  0, or -errno (-ENOENT, -ESRCH: gone; -EINVAL: not
 * the format). */
int proc_stat(pid_t pid, struct proc_stat *st);

#endif
