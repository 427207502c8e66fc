/* The notify engine's listener (tracer/unotify/listener.h). */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lib/log.h"
#include "tracer/session.h"
#include "tracer/syscall/probe.h"
#include "tracer/stop.h"
#include "tracer/unotify/exposed.h"
#include "tracer/unotify/namewatch.h"
#include "tracer/unotify/listener.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434 /* the same number on every architecture */
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif

/* Linux 6.6; not in every build machine's headers. */
#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif

int unotify_prepare(struct session *s)
{
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	s->listener_sock = sv[0];
	return sv[1];
}

int unotify_child_send(int sock, int listener)
{
	int32_t fd = listener;
	ssize_t n;
	char ack;

	/* Only its number, by write(): sendmsg() with SCM_RIGHTS would be a
	 * call the new filter sends to the listener, which nobody answers
	 * yet.  agenttrace takes the descriptor itself (pidfd_getfd(2)) and
	 * says so before the child lets it go. */
	do
		n = write(sock, &fd, sizeof(fd));
	while (n < 0 && errno == EINTR);
	if (n == (ssize_t)sizeof(fd))
		do
			n = read(sock, &ack, 1);
		while (n < 0 && errno == EINTR);
	/* Whatever happened, the command must not keep the listener: with it
	 * a process could answer its own calls. */
	close(listener);
	close(sock);
	return n == 1 ? 0 : -EPIPE;
}

int unotify_take(struct session *s)
{
	uint64_t flags = SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP;
	int32_t number;
	sigset_t chld;
	ssize_t n;
	int pidfd, fd, err;

	do
		n = read(s->listener_sock, &number, sizeof(number));
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(number)) {
		close(s->listener_sock);
		s->listener_sock = -1;
		return n < 0 ? -errno : -ENOENT;
	}
	pidfd = (int)syscall(SYS_pidfd_open, s->main_pid, 0);
	fd = pidfd < 0 ? -1 : (int)syscall(SYS_pidfd_getfd, pidfd, number, 0);
	err = errno;
	if (pidfd >= 0)
		close(pidfd);
	/* The child closes its copy once told; EOF tells it too. */
	if (write(s->listener_sock, "k", 1) < 0)
		debug_msg("cannot tell the child the listener is taken: %s", strerror(errno));
	close(s->listener_sock);
	s->listener_sock = -1;
	if (fd < 0)
		return -err;
	s->listener_fd = fd;
	/* Asked only where the probe says the kernel has it, so that the
	 * test knob that says it has not makes it so. */
	s->notify_sync = probe_notify_sync() &&
			 ioctl(fd, SECCOMP_IOCTL_NOTIF_SET_FLAGS, flags, 0) == 0;
	if (!s->notify_sync && probe_notify_sync())
		debug_msg("no sync wake-up on the listener: %s", strerror(errno));
	/* SIGCHLD stays blocked (signals.c): its descriptor wakes the poll
	 * for the ptrace events beside the notifications. */
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	s->sigchld_fd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
	if (s->sigchld_fd < 0)
		return -errno;
	return 0;
}

int unotify_next(struct session *s, struct unotify_call *u)
{
	struct seccomp_notif req;

	memset(&req, 0, sizeof(req));
	if (ioctl(s->listener_fd, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0)
		return -errno;
	u->id = req.id;
	u->tid = (pid_t)req.pid;
	arch_stop_from_seccomp(&req.data, &u->st);
	return 0;
}

int unotify_answer(struct session *s, const struct unotify_call *u, const struct stop_answer *a)
{
	struct seccomp_notif_resp resp;

	stop_release_copy(s);
	memset(&resp, 0, sizeof(resp));
	resp.id = u->id;
	if (a->how == STOP_RUN) {
		resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
	} else if (a->ret < 0) {
		resp.error = (int32_t)a->ret;
	} else {
		resp.val = a->ret;
	}
	if (ioctl(s->listener_fd, SECCOMP_IOCTL_NOTIF_SEND, &resp) < 0)
		return -errno;
	return 0;
}

/* Holds task TID on the CPU this thread runs on, when its mask has that
 * CPU and another: HELD gets the mask to put back.  Whatever fails (the
 * task's mask leaves this CPU out, a set-uid caller the supervisor may
 * not move, a cpuset) leaves the task as it was. */
static bool unotify_hold(pid_t tid, cpu_set_t *held)
{
	cpu_set_t one;
	int cpu = sched_getcpu();

	if (cpu < 0 || sched_getaffinity(tid, sizeof(*held), held) < 0 ||
	    !CPU_ISSET(cpu, held) || CPU_COUNT(held) < 2)
		return false;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	return sched_setaffinity(tid, sizeof(one), &one) == 0;
}

int unotify_answer_fd(int listener, pid_t hold_tid, uint64_t id, int fd, int fd_flags)
{
	struct seccomp_notif_addfd add = {
		.id = id,
		.flags = hold_tid > 0 ? 0 : SECCOMP_ADDFD_FLAG_SEND,
		.srcfd = (uint32_t)fd,
		.newfd_flags = (uint32_t)(fd_flags & O_CLOEXEC),
	};
	struct seccomp_notif_resp resp = { .id = id };
	bool held = false;
	cpu_set_t mask;
	int r;

	if (hold_tid > 0)
		held = unotify_hold(hold_tid, &mask);
	r = ioctl(listener, SECCOMP_IOCTL_NOTIF_ADDFD, &add);
	if (r < 0)
		r = -errno;
	/* The caller took the descriptor and waits again for the answer:
	 * its mask is put back before it can run on. */
	if (held && sched_setaffinity(hold_tid, sizeof(mask), &mask) < 0 && errno != ESRCH)
		debug_msg("cannot give task %d its CPU mask back: %s", (int)hold_tid,
			  strerror(errno));
	if (r < 0 || add.flags & SECCOMP_ADDFD_FLAG_SEND)
		return r;
	resp.val = r;
	if (ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp) < 0)
		return -errno;
	return r;
}

void unotify_close(struct session *s)
{
	if (s->listener_fd >= 0)
		close(s->listener_fd);
	if (s->listener_sock >= 0)
		close(s->listener_sock);
	if (s->sigchld_fd >= 0)
		close(s->sigchld_fd);
	s->listener_fd = s->listener_sock = s->sigchld_fd = -1;
	exposed_free(s);
	namewatch_free(s);
}
