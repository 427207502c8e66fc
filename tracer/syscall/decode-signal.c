/* Signals and pidfds stay in the session: kill, tkill, tgkill,
 * rt_sigqueueinfo, rt_tgsigqueueinfo, pidfd_send_signal, pidfd_open and
 * pidfd_getfd reach only the session's own tasks (call_ctx.in_session),
 * never the supervisor, its helpers or anything else on the machine; so
 * do prlimit64 with new limits and process_vm_readv, which would set the
 * supervisor's CPU or file-size limit (killing it before its records and
 * end-of-session work) or read what its memory holds.
 *
 * A target named by number is looked up in the session's task table,
 * which holds a task from its creator's fork/clone event (before the
 * creator learns its id) until the supervisor reaps it: a number in the
 * table cannot have been reused by another process.  A target named by a
 * pidfd (a pidfd of the session's or one passed in from outside, or a
 * /proc/PID directory descriptor, which pidfd_send_signal(2) takes too)
 * is the process the kernel's fdinfo names.
 *
 * Signal 0 delivers nothing and only tells whether a process exists,
 * which /proc tells too: it goes anywhere.  A target that does not exist
 * is answered ESRCH without running the call (call.h kernel_errno), with
 * no race against a new process taking the number and no record for what
 * is only a stale pid. */
#include "config.h"

#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "tracer/syscall/arch.h"
#include "tracer/syscall/decode.h"
#include "tracer/syscall/mem.h"

#ifndef PIDFD_SIGNAL_PROCESS_GROUP
#define PIDFD_SIGNAL_PROCESS_GROUP (1UL << 2)
#endif

static bool signal_in_session(const struct call_ctx *ctx, pid_t target)
{
	return ctx && ctx->in_session && ctx->in_session(target, ctx->arg);
}

static bool signal_exists(pid_t target)
{
	char path[32];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d", (int)target);
	/* /proc/TID is there for threads too, though not listed. */
	return stat(path, &st) == 0 || errno != ENOENT;
}

/* The process a descriptor of task PID refers to: a pidfd (fdinfo's
 * "Pid:", -1 once the process is gone) or a /proc/PID directory.
 * -ENOENT when FD is neither (the kernel refuses the call itself). */
static int signal_pidfd_target(pid_t pid, int fd, pid_t *out)
{
	char path[64], text[1024], *p, *end;
	ssize_t n;
	long v;
	int f;

	snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)pid, fd);
	n = readlink(path, text, sizeof(text) - 1);
	if (n < 0)
		return errno == ENOENT ? -ENOENT : -errno;
	text[n] = '\0';
	if (strncmp(text, "/proc/", 6) == 0) {
		v = strtol(text + 6, &end, 10);
		if (end != text + 6 && *end == '\0' && v > 0) {
			*out = (pid_t)v;
			return 0;
		}
		return -ENOENT;
	}
	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", (int)pid, fd);
	f = open(path, O_RDONLY | O_CLOEXEC);
	if (f < 0)
		return -ENOENT;
	n = read(f, text, sizeof(text) - 1);
	close(f);
	if (n <= 0)
		return -ENOENT;
	text[n] = '\0';
	p = strstr(text, "\nPid:");
	if (!p)
		return -ENOENT;
	v = strtol(p + 5, &end, 10);
	if (end == p + 5)
		return -ENOENT;
	*out = (pid_t)v;
	return 0;
}

/* Refuse C: TARGET is outside the session. */
static void signal_refuse(struct call *c, const struct syscall_bypass *b, pid_t target, int sig)
{
	decode_set_bypass(c, b, EPERM);
	if (!b->reach)
		snprintf(c->why_buf, sizeof(c->why_buf),
			 "signal %d to pid %d, outside the session: %s", sig, (int)target, b->why);
	else
		snprintf(c->why_buf, sizeof(c->why_buf), "%s pid %d, outside the session: %s",
			 b->reach, (int)target, b->why);
	c->bypass_why = c->why_buf;
}

/* One task named by number in argument ARG (0-based; -1: by a pidfd, not
 * rewritable).  0 or -errno. */
static int signal_one(pid_t pid, const struct call_ctx *ctx, struct call *c, pid_t target,
		      int arg, int sig, const struct syscall_bypass *b)
{
	if (target <= 0 || signal_in_session(ctx, target))
		return 0; /* the kernel's EINVAL or ESRCH, or our own */
	if (b == &syscall_bypass_signal_outside && sig == 0)
		return 0;
	if (!signal_exists(target)) {
		if (arg >= 0)
			c->kernel_errno = ESRCH;
		return 0;
	}
	signal_refuse(c, b, target, sig);
	return 0;
}

int decode_signal(pid_t pid, const struct call_ctx *ctx, const struct syscall_entry *e,
		  struct call *c)
{
	const struct syscall_bypass *sig_b = &syscall_bypass_signal_outside;
	const struct syscall_bypass *fd_b = &syscall_bypass_pidfd_outside;
	int a0 = (int)c->args[0], a1 = (int)c->args[1], a2 = (int)c->args[2];
	pid_t target = 0;
	int rc;

	switch (e->signal) {
	case SYSCALL_SIGNAL_KILL:
		if (a0 > 0)
			return signal_one(pid, ctx, c, a0, 0, a1, sig_b);
		if (a1 == 0 || a0 == INT_MIN)
			return 0; /* a probe; INT_MIN: the kernel's ESRCH */
		c->signal_sig = a1;
		if (a0 == -1) {
			c->signal_scope = CALL_SIGNAL_ALL;
		} else {
			c->signal_scope = CALL_SIGNAL_GROUP;
			c->signal_pgrp = a0 == 0 ? 0 : -a0;
			c->signal_group_of = pid;
		}
		return 0;
	case SYSCALL_SIGNAL_TKILL:
		return signal_one(pid, ctx, c, a0, 0, a1, sig_b);
	case SYSCALL_SIGNAL_TGKILL:
		/* The thread decides: the kernel refuses a tgid that is not
		 * the thread's own (ESRCH). */
		return signal_one(pid, ctx, c, a1, 1, a2, sig_b);
	case SYSCALL_SIGNAL_SIGQUEUE:
		return signal_one(pid, ctx, c, a0, 0, a1, sig_b);
	case SYSCALL_SIGNAL_PIDFD_SEND:
		rc = signal_pidfd_target(pid, a0, &target);
		if (rc == -ESRCH)
			return rc;
		if (rc < 0 || target <= 0 || a1 == 0)
			return 0;
		if (c->args[3] & PIDFD_SIGNAL_PROCESS_GROUP) {
			c->signal_scope = CALL_SIGNAL_GROUP;
			c->signal_sig = a1;
			c->signal_group_of = target;
			return 0;
		}
		return signal_one(pid, ctx, c, target, -1, a1, sig_b);
	case SYSCALL_SIGNAL_PIDFD_OPEN:
		return signal_one(pid, ctx, c, a0, 0, -1, fd_b);
	case SYSCALL_SIGNAL_PIDFD_GETFD:
		rc = signal_pidfd_target(pid, a0, &target);
		if (rc == -ESRCH)
			return rc;
		if (rc < 0 || target <= 0)
			return 0;
		return signal_one(pid, ctx, c, target, -1, -1, fd_b);
	case SYSCALL_SIGNAL_PRLIMIT:
		/* Reading another's limits is what /proc/PID/limits shows. */
		if (c->args[2] == 0)
			return 0;
		return signal_one(pid, ctx, c, a0, 0, -1, &syscall_bypass_prlimit_outside);
	case SYSCALL_SIGNAL_VM_READ:
		return signal_one(pid, ctx, c, a0, 0, -1, &syscall_bypass_vm_read_outside);
	default:
		return 0;
	}
}

/* Whether process group PGRP has a member that is not a session task. */
static bool owner_group_outside(const struct call_ctx *ctx, pid_t pgrp)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	bool outside = false;

	if (!d)
		return true;
	while (!outside && (de = readdir(d))) {
		char path[64], text[512], *rp, *end;
		long v = strtol(de->d_name, &end, 10);
		int g, fd;
		ssize_t n;

		if (*end || v <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/stat", v);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		n = read(fd, text, sizeof(text) - 1);
		close(fd);
		if (n <= 0)
			continue;
		text[n] = '\0';
		/* The name may hold anything, ')' too: the fields follow the last. */
		rp = strrchr(text, ')');
		if (rp && sscanf(rp + 1, " %*c %*d %d", &g) == 1 && g == pgrp)
			outside = !signal_in_session(ctx, (pid_t)v);
	}
	closedir(d);
	return outside;
}

int decode_owner_outside(pid_t pid, const struct call_ctx *ctx, struct call *c)
{
	struct {
		int type;
		pid_t pid;
	} ex = { 1, 0 }; /* F_OWNER_PID */
	int who = 0, rc = 0;
	bool group;

	if (c->nr == __NR_fcntl && (int)c->args[1] == F_SETOWN) {
		who = (int)c->args[2];
		group = who < 0;
		if (group)
			who = who == INT_MIN ? 0 : -who;
	} else if (c->nr == __NR_fcntl) {
		rc = mem_read(pid, c->args[2], &ex, sizeof(ex));
		who = ex.pid;
		group = ex.type == 2; /* F_OWNER_PGRP */
	} else {
		/* FIOSETOWN, SIOCSPGRP: an int, as F_SETOWN's */
		rc = mem_read(pid, c->args[2], &who, sizeof(who));
		group = who < 0;
		if (group)
			who = who == INT_MIN ? 0 : -who;
	}
	if (rc == -ESRCH)
		return rc;
	/* Unreadable: the kernel's EFAULT.  0: no owner any more. */
	if (rc < 0 || who <= 0)
		return 0;
	if (group ? !owner_group_outside(ctx, who) :
	    signal_in_session(ctx, who) || !signal_exists(who))
		return 0;
	decode_set_bypass(c, &syscall_bypass_signal_outside, EPERM);
	snprintf(c->why_buf, sizeof(c->why_buf),
		 "%s names %s %d, outside the session, to signal on I/O: %s",
		 c->nr == __NR_fcntl ? "fcntl" : "ioctl", group ? "process group" : "pid", who,
		 "signals reach only the session's own processes");
	c->bypass_why = c->why_buf;
	return 1;
}
