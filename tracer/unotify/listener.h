/* The notify engine: the seccomp filter's calls reach the supervisor as
 * user notifications (seccomp_unotify(2)) on a listener descriptor, and
 * are answered by SECCOMP_IOCTL_NOTIF_SEND: continue, or a return value
 * without running the call.  ptrace still follows the processes (forks,
 * execs, exits, signals: tracer/ptrace/loop.c); only the decisions move.
 *
 * The child installs the filter (its result is the listener), writes the
 * listener's number to agenttrace over a socket pair before the canary,
 * agenttrace takes it with pidfd_getfd(2) (Linux 5.6), and the child
 * closes its own copy: the command never holds it. */
#ifndef AGENTTRACE_UNOTIFY_LISTENER_H
#define AGENTTRACE_UNOTIFY_LISTENER_H

#include <stdint.h>
#include <sys/types.h>

#include "tracer/syscall/arch.h"

struct session;
struct stop_answer;

/* One notification: its id, the calling thread, the call. */
struct unotify_call {
	uint64_t id;
	pid_t tid;
	struct arch_stop st;
};

/* Before the fork: the socket pair the listener travels on.  Returns the
 * child's end (agenttrace closes it after the fork), or -errno. */
int unotify_prepare(struct session *s);

/* In the child, after filter_install(): hand LISTENER to agenttrace over
 * SOCK and close both.  0 or -errno. */
int unotify_child_send(int sock, int listener);

/* In agenttrace, once the child runs: the listener, with the sync wake-up
 * set where the kernel has it, and SIGCHLD as a descriptor to poll
 * beside it.  0, or -errno (-ENOENT: the child ended before sending it;
 * its own report says why). */
int unotify_take(struct session *s);

/* Receive the next notification (call only when the listener polls
 * readable).  0, -ENOENT when its caller is gone already, or -errno. */
int unotify_next(struct session *s, struct unotify_call *u);

/* Answer U with A.  0, or -ENOENT when the caller is gone (killed, or a
 * signal ended the wait), or -errno. */
int unotify_answer(struct session *s, const struct unotify_call *u, const struct stop_answer *a);

/* Answer notification ID with descriptor FD (the supervisor's), given to
 * the caller (SECCOMP_IOCTL_NOTIF_ADDFD) with O_CLOEXEC as FD_FLAGS has
 * it.  The hand-over wakes the caller without the sync wake-up: on a
 * machine with an idle CPU the caller is woken there, and the supervisor
 * again when the caller has taken the descriptor, two wake-ups across
 * CPUs that cost more than the rest of the call.  With HOLD_TID (the
 * caller, whose wait for the answer no signal but a fatal one ends:
 * WAIT_KILLABLE_RECV) the caller is held on this thread's CPU while it
 * takes the descriptor, the descriptor is added without the answer, its
 * CPU mask is put back, and the answer follows, so that the caller never
 * runs with the held mask.  Returns the caller's descriptor number,
 * -ENOENT when the caller is gone, or -errno. */
int unotify_answer_fd(int listener, pid_t hold_tid, uint64_t id, int fd, int fd_flags);

void unotify_close(struct session *s);

#endif
